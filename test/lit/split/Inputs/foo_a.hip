// libfoo, TU a: a kernel and a device variable.
#include "demo.h"
__device__ int fooCounter;
__global__ void fooKernelA(int *P) { P[0] = ++fooCounter; }
extern "C" int foo_a() { return LAUNCH(fooKernelA); }
