#include "hip_min.h"
namespace {
__global__ void k(int *p) { p[0] = 7; }
} // namespace
int launch_a() { k<<<1, 1>>>(nullptr); return 0; }
