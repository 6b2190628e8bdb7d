#include "hip_min.h"
__device__ float scale_b = 2.0f;
__global__ void kernel_b(float *p) { p[0] *= scale_b; }
int launch_b() { kernel_b<<<1, 1>>>(nullptr); return 0; }
