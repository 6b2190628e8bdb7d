//===- kpack/HostRewrite.h - Fat host binary -> host-only image -*- C++ -*-===//
//
// The host-binary layer of the converter: rewrites a linked x86-64 fat host
// binary (executable or shared library) into a host-only image whose wrappers
// are HIPK; ELF in src/ELF/ElfRewrite.cpp, PE images in the COFF side
// (kpack/COFF/CoffHostBinary.h). The rewrite is described in docs/convert.md:
// the .hip_fatbin range keeps the metadata at its start, the rest of it
// leaves the file, no segment is added and no other address changes. The
// result is verified before it is returned. The orchestration (archives,
// outputs) is lib/emit's (kpack/Convert.h, kpack/Emission.h).
//
//===----------------------------------------------------------------------===//
#ifndef KPACK_HOSTREWRITE_H
#define KPACK_HOSTREWRITE_H

#include "kpack/HostBinary.h"

#include "llvm/ADT/ArrayRef.h"
#include "llvm/Support/Error.h"
#include "llvm/Support/MemoryBufferRef.h"

#include <cstdint>
#include <vector>

namespace kpack {

/// Rewrites Image so that its .hip_fatbin range holds Metadata and leaves the
/// file, and every wrapper is HIPK with reserved1 = the index of the bundle
/// its pointer targeted. Verifies the result. A PE image (Host.Format ==
/// HostFormat::Coff) goes to rewriteCoffHostBinary
/// (kpack/COFF/CoffHostBinary.h), and so does its verification.
llvm::Expected<std::vector<uint8_t>>
rewriteHostBinary(llvm::MemoryBufferRef Image,
                  llvm::ArrayRef<uint8_t> Metadata);
/// The same with Image's analysis at hand (saves re-reading a large image).
llvm::Expected<std::vector<uint8_t>>
rewriteHostBinary(llvm::MemoryBufferRef Image, const HostBinary &Host,
                  llvm::ArrayRef<uint8_t> Metadata);

/// The checks run on every rewritten image: the result re-parses, every
/// wrapper is HIPK with valid metadata in a PT_LOAD and the expected index,
/// program and section headers are sane, and every allocated section other
/// than .hip_fatbin keeps its address, size and bytes (wrappers and their
/// relocations aside).
llvm::Error verifyConvertedBinary(llvm::MemoryBufferRef Original,
                                  llvm::MemoryBufferRef Converted);
llvm::Error verifyConvertedBinary(llvm::MemoryBufferRef Original,
                                  const HostBinary &OriginalHost,
                                  llvm::MemoryBufferRef Converted);

} // namespace kpack

#endif
