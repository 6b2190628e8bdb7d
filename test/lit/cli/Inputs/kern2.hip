#include "hip_min.h"
__global__ void kern2(float *p) { p[1] = 2.0f; }
