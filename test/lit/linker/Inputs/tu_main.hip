#include "hip_min.h"
int launch_a();
int launch_b();
__global__ void kernel_main(long *p) { p[0] = 42; }
int main() {
  kernel_main<<<1, 1>>>(nullptr);
  return launch_a() + launch_b();
}
