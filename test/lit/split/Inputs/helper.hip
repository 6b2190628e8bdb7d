// libexec/bar/deep/helper: a PIE three directories below its prefix.
#include "demo.h"
__global__ void helperKernel(int *P) { P[0] = 7; }
int main() { return LAUNCH(helperKernel); }
