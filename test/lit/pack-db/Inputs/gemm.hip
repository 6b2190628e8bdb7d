// A stand-in for a Tensile kernel: device code only, compiled per target
// into the code objects of the synthetic databases.
#include "hip_min.h"
__global__ void Cijk_Ailk_Bljk_HHS_BH_MT64x64x32(float *C) { C[0] = 1.0f; }
