#include <hip/hip_runtime.h>

__global__ void increment(int *Data) { Data[threadIdx.x] += 1; }

int main() {
  int *Device = nullptr;
  if (hipMalloc(&Device, 64 * sizeof(int)) != hipSuccess)
    return 1;
  hipLaunchKernelGGL(increment, dim3(1), dim3(64), 0, 0, Device);
  return hipDeviceSynchronize() == hipSuccess ? 0 : 1;
}
