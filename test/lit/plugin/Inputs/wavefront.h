// clang 22 no longer predefines __AMDGCN_WAVEFRONT_SIZE, which the ROCm 5.2
// headers use.
#ifndef __AMDGCN_WAVEFRONT_SIZE
#if defined(__gfx1010__) || defined(__gfx1030__) || defined(__gfx1100__)
#define __AMDGCN_WAVEFRONT_SIZE 32
#else
#define __AMDGCN_WAVEFRONT_SIZE 64
#endif
#endif
