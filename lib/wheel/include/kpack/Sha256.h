//===- kpack/Sha256.h - SHA-256 of large inputs -----------------*- C++ -*-===//
//
// SHA-256 (FIPS 180-4) for RECORD hashes, computed by OpenSSL's EVP
// interface (libcrypto), which uses the CPU's SHA instructions where there
// are any. llvm::SHA256 (LLVM 22) is not used: it keeps the message length
// in 32 bits and returns wrong digests from 512 MiB on, which the device
// libraries of real wheels exceed.
//
//===----------------------------------------------------------------------===//
#ifndef KPACK_SHA256_H
#define KPACK_SHA256_H

#include "llvm/ADT/ArrayRef.h"

#include <array>
#include <cstdint>
#include <memory>

namespace kpack {

class Sha256 {
public:
  Sha256();
  Sha256(Sha256 &&) noexcept;
  Sha256 &operator=(Sha256 &&) noexcept;
  ~Sha256();
  void update(llvm::ArrayRef<uint8_t> Data);
  /// The digest; the object must not be updated afterwards.
  std::array<uint8_t, 32> final();

private:
  struct Context;
  std::unique_ptr<Context> Ctx;
};

} // namespace kpack

#endif
