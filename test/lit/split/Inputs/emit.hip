// libemit: linked by ld.kpack (compiler emission: host-only + archives).
#include "demo.h"
__global__ void emitKernel(int *P) { P[0] = 5; }
extern "C" int emit_fn() { return LAUNCH(emitKernel); }
