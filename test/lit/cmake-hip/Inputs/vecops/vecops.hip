#include "hip_min.h"

__device__ int vecopsCalls;

__global__ void vecopsScale(float *Out) {
  ++vecopsCalls;
  if (Out)
    Out[0] *= 2;
}

int vecopsLaunch() {
  vecopsScale<<<1, 1>>>(nullptr);
  return 0;
}
