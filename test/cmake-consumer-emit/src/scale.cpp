#include "hip_min.h"
__device__ float scale_factor = 3.0f;
__global__ void scale_kernel(float *p) { p[0] *= scale_factor; }
int launch_scale() { scale_kernel<<<1, 1>>>(nullptr); return 0; }
