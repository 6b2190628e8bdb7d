#include "hip_min.h"

int vecopsLaunch();

__global__ void vecdemoFill(long *Out) {
  if (Out)
    Out[0] = 1;
}

int main() {
  vecdemoFill<<<1, 1>>>(nullptr);
  return vecopsLaunch();
}
