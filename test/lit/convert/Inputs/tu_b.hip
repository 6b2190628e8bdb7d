#include "hip_min.h"
__global__ void kern_b(float *p) { p[0] = 2.0f; }
void launch_b() { kern_b<<<1, 1>>>(nullptr); }
