// Device code of the shim tests: one kernel and one variable, both of which
// the stand-in runtime resolves in the code object it receives.
#include "hip_min.h"
extern "C" __global__ void kpk_add(int *P) { P[0] += 1; }
extern "C" __device__ int kpk_var;
__device__ int kpk_var;
