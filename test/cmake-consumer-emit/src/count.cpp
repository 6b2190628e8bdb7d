#include "hip_min.h"
int launch_scale();
__device__ int counter;
__global__ void count_kernel(int *p) { p[0] = ++counter; }
int launch_count() {
  count_kernel<<<1, 1>>>(nullptr);
  return launch_scale();
}
