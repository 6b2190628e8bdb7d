// The package's HIP extension library, libpkg_ext.so: a kernel, a template
// kernel instantiated twice, a device variable; pkg_ext_run launches them
// and then libpkg_core's kernels.
#include "hip_min.h"

__device__ int extCounter;

__global__ void extAdd(int *Out, int Value) {
  if (Out)
    *Out += Value + extCounter;
}
template <typename T> __global__ void extFill(T *Out, T Value) {
  if (Out)
    *Out = Value;
}

extern "C" int pkg_core_run();

// Returns the number of kernels (here and in libpkg_core) that did not
// resolve for the current device.
extern "C" int pkg_ext_run() {
  void *Args[2] = {nullptr, nullptr};
  int Failures = 0;
  Failures += hipLaunchKernel((const void *)extAdd, dim3(1), dim3(64), Args, 0,
                              0) != 0;
  Failures += hipLaunchKernel((const void *)extFill<float>, dim3(1), dim3(1),
                              Args, 0, 0) != 0;
  Failures += hipLaunchKernel((const void *)extFill<int>, dim3(1), dim3(1),
                              Args, 0, 0) != 0;
  return Failures + pkg_core_run();
}
