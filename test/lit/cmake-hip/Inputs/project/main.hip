#include <hip/hip_runtime.h>

int launchKern();

__global__ void appFill(long *Out) { Out[threadIdx.x] = 1; }

int main() {
  appFill<<<1, 1>>>(nullptr);
  return launchKern();
}
