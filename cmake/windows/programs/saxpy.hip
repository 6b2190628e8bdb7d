// A fat HIP program for Windows: one kernel, one device variable; run on
// the stand-in amdhip64.dll under wine64 (cmake/windows/run-tests.sh).
#include "hip_win.h"
#include <stdio.h>
__device__ float Bias;
__global__ void saxpy(float A, const float *X, float *Y, int N) {
  int I = __builtin_amdgcn_workgroup_id_x() * 64 + __builtin_amdgcn_workitem_id_x();
  if (I < N)
    Y[I] = A * X[I] + Y[I] + Bias;
}
int main() {
  float X[4] = {1, 2, 3, 4}, Y[4] = {0};
  saxpy<<<dim3(1), dim3(64)>>>(2.0f, X, Y, 4);
  printf("saxpy launched\n");
  return 0;
}
