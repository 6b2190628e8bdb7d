#include "hip_min.h"
__global__ void kernel_unused(int *p) { p[0] = 7; }
int launch_unused() { kernel_unused<<<1, 1>>>(nullptr); return 0; }
