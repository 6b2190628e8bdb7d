// bin/foo_app: a PIE with its own kernel, using libfoo.
#include "demo.h"
extern "C" int foo_a();
extern "C" int foo_b();
extern "C" int foo_c();
__global__ void appKernel(int *P) { P[0] = 4; }
int main() { return LAUNCH(appKernel) + foo_a() + foo_b() + foo_c(); }
