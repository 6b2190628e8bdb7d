// bin/bar_tool: a non-PIE tool with its own kernel, using libbar and the
// compiler-emitted libemit.
#include "demo.h"
extern "C" int bar();
extern "C" int emit_fn();
__global__ void toolKernel(int *P) { P[0] = 6; }
int main() { return LAUNCH(toolKernel) + bar() + emit_fn(); }
