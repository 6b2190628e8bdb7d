#include "hip_min.h"
int launch_count();
__global__ void main_kernel(long *p) { p[0] = 1; }
int main() {
  main_kernel<<<1, 1>>>(nullptr);
  return launch_count();
}
