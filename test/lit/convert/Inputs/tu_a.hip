// One translation unit of the multi-TU test program: a kernel and a
// device variable.
#include "hip_min.h"
__global__ void kern_a(int *p) { p[0] = 1; }
__device__ int dev_var_a;
void launch_a() { kern_a<<<1, 1>>>(nullptr); }
