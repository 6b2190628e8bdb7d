#include "hip_min.h"
__device__ int value;
__global__ void only_kernel(int *p) { p[0] = value; }
int main() {
  only_kernel<<<1, 1>>>(nullptr);
  return 0;
}
