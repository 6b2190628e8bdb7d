// libfoo, TU b (compiled with --offload-compress: a CCOB bundle).
#include "demo.h"
__global__ void fooKernelB(float *P) { P[0] = 2.0f; }
extern "C" int foo_b() { return LAUNCH(fooKernelB); }
