#include "hip_min.h"
__global__ void kern_c(double *p) { p[0] = 3.0; }
void launch_c() { kern_c<<<1, 1>>>(nullptr); }
