// A minimal HIP declaration header for Windows targets (mingw and MSVC
// style): what clang's HIP code generation needs, nothing else (Debian's
// HIP 5.2 headers do not compile for Windows). Use with -nogpuinc -nogpulib.
#pragma once
#include <stddef.h>
#define __host__ __attribute__((host))
#define __device__ __attribute__((device))
#define __global__ __attribute__((global))
#define __shared__ __attribute__((shared))
#define __constant__ __attribute__((constant))
struct dim3 {
  unsigned x, y, z;
  __host__ __device__ dim3(unsigned x = 1, unsigned y = 1, unsigned z = 1)
      : x(x), y(y), z(z) {}
};
typedef struct ihipStream_t *hipStream_t;
typedef int hipError_t;
// Resolved through an import library of amdhip64.dll (amdhip64.def).
#define HIP_IMPORT extern "C"
HIP_IMPORT hipError_t hipLaunchKernel(const void *, dim3, dim3, void **, size_t,
                                      hipStream_t);
HIP_IMPORT unsigned __hipPushCallConfiguration(dim3, dim3, size_t = 0,
                                               hipStream_t = 0);
HIP_IMPORT hipError_t __hipPopCallConfiguration(dim3 *, dim3 *, size_t *,
                                                hipStream_t *);
