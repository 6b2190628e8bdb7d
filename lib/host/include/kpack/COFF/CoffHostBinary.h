//===- kpack/COFF/CoffHostBinary.h - HIP device code in PE/COFF -*- C++ -*-===//
//
// The PE/COFF side of the host-binary layer (FORMAT.md §3.4, docs/windows.md).
// analyzeHostBinary() and rewriteHostBinary() dispatch here on the file's
// magic; the functions are public for the tests and the fuzzers.
//
// Images (EXE, DLL) name the sections with 8 characters: .hip_fat (bundles),
// .hipFatB (wrappers), .kpackrf (metadata); objects keep the long names
// through their string table. A wrapper's `binary` pointer is a VA at the
// preferred base, fixed up by an IMAGE_REL_BASED_DIR64 base relocation.
//
//===----------------------------------------------------------------------===//
#ifndef KPACK_COFF_COFFHOSTBINARY_H
#define KPACK_COFF_COFFHOSTBINARY_H

#include "kpack/HostBinary.h"

#include "llvm/ADT/ArrayRef.h"
#include "llvm/ADT/StringRef.h"
#include "llvm/Support/Error.h"
#include "llvm/Support/MemoryBufferRef.h"

#include <cstdint>
#include <vector>

namespace kpack {

constexpr char CoffFatbinSection[] = ".hip_fat";
constexpr char CoffWrapperSection[] = ".hipFatB";
constexpr char CoffKpackRefSection[] = ".kpackrf";

/// True for a PE image ("MZ") or an x86-64 COFF object (regular or bigobj).
bool isCoffFile(llvm::StringRef Bytes);

/// analyzeHostBinary for PE32+ x86-64 images and x86-64 COFF objects.
llvm::Expected<HostBinary>
analyzeCoffHostBinary(llvm::MemoryBufferRef Image,
                      const AnalyzeOptions &Opts = {});

/// The layout a PE image must have for the rewrite (and has after it):
/// headers within the file, a PE32+ x86-64 optional header, power-of-two
/// alignments, the section table before the first raw data, raw data inside
/// the file and not overlapping, sections in ascending and disjoint address
/// order, SizeOfImage covering them, base relocation blocks inside their
/// directory with entries inside the image. Errors name the first violation.
llvm::Error checkPeImage(llvm::MemoryBufferRef Image);

/// The PE rewrite (docs/windows.md): a new section .kpackrf holds Metadata,
/// every wrapper is HIPK (reserved1 = the index of the bundle its pointer
/// targeted) and points at it, .hip_fat keeps its address and size but
/// loses its file bytes (the loader zero-fills it), later file contents move
/// down, headers, SizeOfImage and the checksum follow. The result is
/// verified before it is returned.
llvm::Expected<std::vector<uint8_t>>
rewriteCoffHostBinary(llvm::MemoryBufferRef Image, const HostBinary &Host,
                      llvm::ArrayRef<uint8_t> Metadata);

/// The checks run on every rewritten image: it passes checkPeImage and
/// LLVM's COFF reader, every wrapper is HIPK with valid metadata and the
/// expected index, every old section keeps its name, address, size, flags
/// and bytes (wrappers and debug directory file offsets aside), .hip_fat has
/// no file bytes and no base relocation points into it, the data
/// directories, the symbol table and the bytes after the raw data are
/// unchanged, and a non-zero checksum is correct.
llvm::Error verifyConvertedCoffBinary(llvm::MemoryBufferRef Original,
                                      const HostBinary &OriginalHost,
                                      llvm::MemoryBufferRef Converted);

/// The PE image checksum of File (the 4 bytes at ChecksumOffset count as 0).
uint32_t computePeChecksum(llvm::ArrayRef<uint8_t> File,
                           uint64_t ChecksumOffset);

/// After bytes of a PE image were patched in place (ld.kpack's finalize of
/// an image linked from kpack-ready objects): a non-zero CheckSum field is
/// recomputed, a zero one stays zero (what linkers write unless asked).
llvm::Error refreshPeChecksum(llvm::MutableArrayRef<uint8_t> Image);

} // namespace kpack

#endif
