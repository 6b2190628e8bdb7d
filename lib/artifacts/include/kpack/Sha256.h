//===- kpack/Sha256.h - SHA-256 of large inputs -----------------*- C++ -*-===//
//
// SHA-256 (FIPS 180-4) for RECORD hashes. llvm::SHA256 (LLVM 22) keeps the
// message length in 32 bits and returns wrong digests from 512 MiB on,
// which the device libraries of real wheels exceed; this one counts in 64
// bits.
//
//===----------------------------------------------------------------------===//
#ifndef KPACK_SHA256_H
#define KPACK_SHA256_H

#include "llvm/ADT/ArrayRef.h"

#include <array>
#include <cstdint>

namespace kpack {

class Sha256 {
public:
  Sha256();
  void update(llvm::ArrayRef<uint8_t> Data);
  /// The digest; the object must not be updated afterwards.
  std::array<uint8_t, 32> final();

private:
  void block(const uint8_t *P);

  std::array<uint32_t, 8> H;
  std::array<uint8_t, 64> Buffer;
  size_t Buffered = 0;
  uint64_t Length = 0; ///< bytes hashed so far
};

} // namespace kpack

#endif
