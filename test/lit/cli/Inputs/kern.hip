#include "hip_min.h"
__global__ void kern(int *p) { p[0] = 42; }
__device__ int devvar;
