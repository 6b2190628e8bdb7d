// A small HIP program: the README's demo builds it fat and with kpack.
// It only needs the minimal HIP declarations of test/inputs/hip_min.h, so it
// compiles with Debian's clang-22 without a ROCm install.
#include "hip_min.h"

static __device__ int global_id() {
  return __builtin_amdgcn_workgroup_id_x() * 256 + __builtin_amdgcn_workitem_id_x();
}

__device__ float scale_factor;

__global__ void saxpy(float a, const float *x, float *y, int n) {
  int i = global_id();
  if (i < n)
    y[i] = a * scale_factor * x[i] + y[i];
}

__global__ void fill(float *p, float v, int n) {
  int i = global_id();
  if (i < n)
    p[i] = v;
}

int main() {
  // Launches go to the HIP runtime; under the stand-in runtime they only
  // check that the kernels were registered and resolved.
  float *x = nullptr, *y = nullptr;
  fill<<<dim3(4), dim3(256)>>>(x, 1.0f, 1024);
  saxpy<<<dim3(4), dim3(256)>>>(2.0f, x, y, 1024);
  return 0;
}
