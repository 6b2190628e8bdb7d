// A program written against Debian's real HIP headers (ROCm 5.2): a kernel
// using the device libraries (ocml), a template kernel and two kinds of
// device variables. It launches each kernel and prints whether the launch
// succeeded, but always exits 0: under the real runtime without a GPU every
// device call fails, and only registration and unregistration are exercised.
// It calls no other HIP API, so it also runs against the test stand-in
// behind libamdhip64.so.5 (which exports only what clang's host code calls).
#include <hip/hip_runtime.h>
#include <stdio.h>

__device__ float deviceBias;
__constant__ float constantScale[2];

__global__ void expKernel(float *Out, const float *In) {
  unsigned I = blockIdx.x * blockDim.x + threadIdx.x;
  Out[I] = expf(In[I]) * constantScale[0] + deviceBias;
}

template <typename T> __global__ void fillKernel(T *Out, T Value) {
  Out[threadIdx.x] = Value;
}

static const char *result(hipError_t Err) {
  return Err == hipSuccess ? "ok" : "failed";
}

int main() {
  float *Out = nullptr;
  const float *In = nullptr;
  void *ExpArgs[] = {&Out, &In};
  printf("expKernel: %s\n",
         result(hipLaunchKernel(reinterpret_cast<const void *>(expKernel),
                                dim3(1), dim3(64), ExpArgs, 0, nullptr)));
  hipLaunchKernelGGL(fillKernel<int>, dim3(1), dim3(64), 0, nullptr,
                     static_cast<int *>(nullptr), 7);
  return 0;
}
