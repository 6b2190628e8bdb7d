// Shared by the demo artifact's sources: launches a kernel through
// hipLaunchKernel and reports the result, so that a runtime that cannot
// resolve the kernel makes the program fail.
#pragma once
#include "hip_min.h"
#include <stdio.h>

static inline int launchKernel(const void *Kernel, const char *Name) {
  void *Args[] = {nullptr};
  int Err = hipLaunchKernel(Kernel, dim3(1), dim3(1), Args, 0, 0);
  printf("%s: %d\n", Name, Err);
  return Err != 0;
}
#define LAUNCH(K) launchKernel((const void *)K, #K)
