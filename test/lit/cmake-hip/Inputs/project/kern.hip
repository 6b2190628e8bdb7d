#include <hip/hip_runtime.h>

__device__ int kernCounter;

__global__ void kernCount(int *Out) { Out[threadIdx.x] = ++kernCounter; }

int launchKern() {
  hipLaunchKernelGGL(kernCount, dim3(1), dim3(1), 0, nullptr,
                     static_cast<int *>(nullptr));
  return 0;
}
