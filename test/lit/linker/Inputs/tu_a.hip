#include "hip_min.h"
__device__ int counter_a;
__global__ void kernel_a(int *p) { p[0] = counter_a + 1; }
int launch_a() { kernel_a<<<1, 1>>>(nullptr); return 0; }
