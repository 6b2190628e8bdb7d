//===- kpack/Wrapper.h - The fat binary wrapper and section names -*- C++ -*-===//
//
// The one definition of docs/FORMAT.md §3.1: the 24-byte
// __CudaFatBinaryWrapper that clang's module constructor hands to
// __hipRegisterFatBinary, its magics, and the ELF sections involved.
//
//===----------------------------------------------------------------------===//
#ifndef KPACK_WRAPPER_H
#define KPACK_WRAPPER_H

#include <cstddef>
#include <cstdint>

namespace kpack {

/// `binary` points at an offload bundle (in .hip_fatbin).
constexpr uint32_t HipfMagic = 0x48495046; // "FPIH" in memory
/// `binary` points at kpack metadata; reserved1 is the code-object index.
constexpr uint32_t HipkMagic = 0x4B504948; // "HIPK" in memory
constexpr uint32_t WrapperVersion = 1;

/// __CudaFatBinaryWrapper as laid out in memory on x86-64.
struct FatbinWrapper {
  uint32_t Magic;
  uint32_t Version;
  const void *Binary;
  /// HIPK: the code-object index N of the TOC key "<kernel_name>#N";
  /// upstream writes it as a u32 in the low half.
  uint64_t Reserved1;
};
static_assert(sizeof(FatbinWrapper) == 24, "wrapper layout");
static_assert(offsetof(FatbinWrapper, Binary) == 8, "wrapper layout");
static_assert(offsetof(FatbinWrapper, Reserved1) == 16, "wrapper layout");

/// The field offsets, for code that patches wrappers in a file.
constexpr size_t WrapperSize = 24;
constexpr size_t WrapperMagicOffset = 0;
constexpr size_t WrapperVersionOffset = 4;
constexpr size_t WrapperBinaryOffset = 8;
constexpr size_t WrapperReserved1Offset = 16;

/// The code-object index a HIPK wrapper carries.
inline uint32_t hipkCodeObjectIndex(const FatbinWrapper &W) {
  return static_cast<uint32_t>(W.Reserved1);
}

/// Sections of a host binary (FORMAT.md §3).
constexpr const char HipFatbinSection[] = ".hip_fatbin";
constexpr const char FatbinWrapperSection[] = ".hipFatBinSegment";
/// Where the kpack tools put HIPK metadata.
constexpr const char KpackRefSection[] = ".rocm_kpack_ref";

} // namespace kpack

#endif
