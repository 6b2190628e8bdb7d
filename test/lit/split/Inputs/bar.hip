// libbar (linked with -z pack-relative-relocs: RELR).
#include "demo.h"
__constant__ int barTable[2];
__global__ void barKernel(int *P) { P[0] = barTable[1]; }
extern "C" int bar() { return LAUNCH(barKernel); }
