#include "hip_win.h"
__global__ void shift(int *x, int b) { x[0] += b; }
__global__ void twice(int *x) { x[0] *= 2; }
extern "C" int run_b(int *x) {
  shift<<<1, 1>>>(x, 3);
  twice<<<1, 1>>>(x);
  return 2;
}
