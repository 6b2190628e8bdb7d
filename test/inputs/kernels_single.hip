// A single-TU HIP program: two plain kernels, a template kernel and the
// three kinds of device variables clang registers (__device__, __constant__,
// __managed__). main launches every kernel and reports hipLaunchKernel's
// result, so a runtime that cannot resolve a kernel makes it fail.
#include "hip_min.h"
#include <stdio.h>

__device__ int deviceCounter;
__constant__ float constantTable[4];
__managed__ int managedValue = 42;

__global__ void scaleKernel(float *Out, float Factor) {
  Out[0] = constantTable[0] * Factor + deviceCounter;
}
__global__ void countKernel(int *Out) { Out[0] = ++deviceCounter + managedValue; }
template <typename T> __global__ void fillKernel(T *Out, T Value) { *Out = Value; }

int main() {
  int Failures = 0;
  scaleKernel<<<dim3(2), dim3(64)>>>(nullptr, 2.0f);
  int Err;
  void *Args[] = {nullptr};
  Err = hipLaunchKernel((const void *)countKernel, dim3(1), dim3(32), Args, 0, 0);
  printf("countKernel: %d\n", Err);
  Failures += Err != 0;
  fillKernel<<<1, 1>>>((double *)nullptr, 1.0);
  fillKernel<<<1, 1>>>((int *)nullptr, 7);
  // The managed variable's host view was initialized by the runtime.
  printf("managedValue: %d\n", managedValue);
  return Failures;
}
