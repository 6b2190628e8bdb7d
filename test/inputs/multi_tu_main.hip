// Multi-TU HIP program, TU 1 of 3 (with multi_tu_b.hip, multi_tu_c.hip):
// every TU has its own kernels; main launches all of them. With -fgpu-rdc
// (__CLANG_RDC__) TU b also calls a device function and reads a device
// variable defined in TU c, which needs the device link.
#include "hip_min.h"
#include <stdio.h>

int launchB();
int launchC();

__global__ void mainKernel(int *Out) { Out[0] = 1; }

int main() {
  void *Args[] = {nullptr};
  int Err = hipLaunchKernel((const void *)mainKernel, dim3(1), dim3(1), Args, 0, 0);
  printf("mainKernel: %d\n", Err);
  int Failures = Err != 0;
  Failures += launchB();
  Failures += launchC();
  return Failures;
}
