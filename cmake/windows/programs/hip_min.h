// A minimal HIP declaration header for Windows programs compiled with
// clang-22 -x hip --target=x86_64-w64-mingw32 -nogpuinc -nogpulib (Debian's
// HIP 5.2 headers do not compile for Windows): the attributes and the launch
// entry points clang's host code calls, which amdhip64.dll (the stand-in)
// exports.
#pragma once
#include <stddef.h>
#define __global__ __attribute__((global))
#define __device__ __attribute__((device))
#define __host__ __attribute__((host))
#define __shared__ __attribute__((shared))
#define __constant__ __attribute__((constant))
typedef int hipError_t;
struct dim3 {
  unsigned x, y, z;
  __host__ __device__ dim3(unsigned a = 1, unsigned b = 1, unsigned c = 1)
      : x(a), y(b), z(c) {}
};
typedef struct ihipStream_t *hipStream_t;
extern "C" hipError_t hipLaunchKernel(const void *f, dim3 g, dim3 b,
                                      void **args, size_t shm, hipStream_t s);
extern "C" unsigned __hipPushCallConfiguration(dim3 g, dim3 b, size_t shm = 0,
                                               hipStream_t s = nullptr);
extern "C" hipError_t __hipPopCallConfiguration(dim3 *g, dim3 *b, size_t *shm,
                                                hipStream_t *s);
