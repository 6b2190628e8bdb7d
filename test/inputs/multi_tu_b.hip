// Multi-TU HIP program, TU 2 of 3 (see multi_tu_main.hip).
#include "hip_min.h"
#include <stdio.h>

#ifdef __CLANG_RDC__
extern __device__ int sharedCounter;
__device__ int addShared(int V);
#endif

__global__ void bKernelOne(int *Out) {
#ifdef __CLANG_RDC__
  Out[0] = addShared(sharedCounter);
#else
  Out[0] = 2;
#endif
}
__global__ void bKernelTwo(float *Out, float V) { Out[0] = V * 2.0f; }

int launchB() {
  void *Args[] = {nullptr, nullptr};
  int Failures = 0;
  const void *Kernels[] = {(const void *)bKernelOne, (const void *)bKernelTwo};
  for (const void *K : Kernels)
    Failures += hipLaunchKernel(K, dim3(1), dim3(1), Args, 0, 0) != 0;
  printf("launchB: %d failures\n", Failures);
  return Failures;
}
