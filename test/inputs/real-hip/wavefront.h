// Forced include (-include) for compiles against Debian's ROCm 5.2 HIP
// headers: they use __AMDGCN_WAVEFRONT_SIZE, which clang 22 no longer
// predefines. gfx10, gfx11 and gfx12 (generic processors included) run wave32
// by default; gfx9 and the host see 64.
#ifndef __AMDGCN_WAVEFRONT_SIZE
#if defined(__GFX10__) || defined(__GFX11__) || defined(__GFX12__)
#define __AMDGCN_WAVEFRONT_SIZE 32
#else
#define __AMDGCN_WAVEFRONT_SIZE 64
#endif
#endif
