// The package's second fat library, libpkg_core.so.1 (linked by the
// extension, compiled with --offload-compress): two kernels and a device
// variable.
#include "hip_min.h"

__device__ float coreBias;

__global__ void coreScale(float *Out, float Factor) {
  if (Out)
    Out[0] = Out[0] * Factor + coreBias;
}
__global__ void coreFill(int *Out, int Value) {
  if (Out)
    *Out = Value;
}

// Launches every kernel of this library; returns the number that did not
// resolve.
extern "C" int pkg_core_run() {
  void *Args[2] = {nullptr, nullptr};
  int Failures = 0;
  Failures += hipLaunchKernel((const void *)coreScale, dim3(1), dim3(64), Args,
                              0, 0) != 0;
  Failures += hipLaunchKernel((const void *)coreFill, dim3(2), dim3(32), Args,
                              0, 0) != 0;
  return Failures;
}
