// Forced include (-include) for compiles of real projects against Debian's
// ROCm 5.2 HIP headers with clang 22 (bench/realproject/rocprim.sh).
// hip/amd_detail/amd_hip_fp16.h calls __llvm_amdgcn_rcp_f16 and
// __llvm_amdgcn_rcp_2f16, which its hip_fp16_math_fwd.h declares only when
// clang's HIP runtime wrapper is not in use; clang's own device-library
// declarations used to provide them and clang 22's no longer do. Declared here
// with the meaning they had: the hardware reciprocal of a half (v_rcp_f16).
// __AMDGCN_WAVEFRONT_SIZE is the other gap (test/inputs/real-hip/wavefront.h).
#ifndef KPACK_BENCH_HIP52_FP16_RCP_H
#define KPACK_BENCH_HIP52_FP16_RCP_H
#if defined(__HIP__) && defined(__cplusplus)
typedef _Float16 kpack_bench_2f16 __attribute__((ext_vector_type(2)));
extern "C" {
static inline __attribute__((device, const)) _Float16
__llvm_amdgcn_rcp_f16(_Float16 x) {
#if defined(__AMDGCN__)
  return __builtin_amdgcn_rcph(x);
#else
  return static_cast<_Float16>(1) / x;
#endif
}
static inline __attribute__((device)) kpack_bench_2f16
__llvm_amdgcn_rcp_2f16(kpack_bench_2f16 x) {
  return kpack_bench_2f16{__llvm_amdgcn_rcp_f16(x.x), __llvm_amdgcn_rcp_f16(x.y)};
}
}
#endif
#endif
