#include "hip_min.h"

__global__ void fill(int *Data, int Value) { Data[1] = Value; }

void launchFill(int *Data, int Value) { fill<<<1, 1>>>(Data, Value); }
