// Multi-TU HIP program, TU 3 of 3 (see multi_tu_main.hip).
#include "hip_min.h"
#include <stdio.h>

__device__ int sharedCounter;
__device__ int addShared(int V) { return sharedCounter += V; }

__global__ void cKernel(int *Out) { Out[0] = addShared(3); }

int launchC() {
  void *Args[] = {nullptr};
  int Err = hipLaunchKernel((const void *)cKernel, dim3(4), dim3(8), Args, 0, 0);
  printf("cKernel: %d\n", Err);
  return Err != 0;
}
