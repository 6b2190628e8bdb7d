//===- kpack/Convert.h - Legacy fat binary -> kpack conversion --*- C++ -*-===//
//
// Rewrites a linked x86-64 fat host binary (executable or shared library)
// into a host-only binary whose wrappers are HIPK, plus .kpack archives
// holding its code objects. The ELF rewrite is described in docs/convert.md:
// the .hip_fatbin range keeps the metadata at its start, the rest of it
// leaves the file, no segment is added and no other address changes. The
// result is verified before anything is written.
//
//===----------------------------------------------------------------------===//
#ifndef KPACK_CONVERT_H
#define KPACK_CONVERT_H

#include "kpack/ArchiveWriter.h"
#include "kpack/HostBinary.h"

#include "llvm/ADT/ArrayRef.h"
#include "llvm/Support/Error.h"
#include "llvm/Support/MemoryBufferRef.h"

#include <cstdint>
#include <functional>
#include <string>
#include <vector>

namespace kpack {

struct ConvertOptions {
  std::string Input;
  std::string Output;
  /// Exactly one of these: one multi-target archive, or a directory with one
  /// archive per target ID named "<name>_<target id>.kpack".
  std::string KpackOutput;
  std::string KpackDir;
  /// TOC kernel name (keys "<name>#N"); default: Output's file name.
  std::string KernelName;
  /// Embedded search paths; default: the archive(s) relative to Output's
  /// directory ("<name>_@GFXARCH@.kpack" pattern with KpackDir).
  std::vector<std::string> SearchPaths;
  std::string GroupName; ///< default: KernelName
  std::string Family;    ///< default: the target ID (per-target archives)
  ArchiveCompression Compression = ArchiveCompression::ZstdPerKernel;
  int Level = 3;
  unsigned Threads = 0; ///< 0: all cores
  /// Called with short phase descriptions (for a terminal progress line).
  std::function<void(const std::string &)> Progress;
};

enum class ConvertOutcome {
  Converted,
  AlreadyConverted, ///< wrappers are HIPK already; nothing written
  NoDeviceCode,     ///< no .hip_fatbin / wrappers; nothing written
};

/// Exit statuses of `kpack convert` / `kpack-convert` (docs/convert.md).
enum ConvertExitCode : int {
  ConvertExitOk = 0,
  ConvertExitError = 1,
  ConvertExitAlreadyConverted = 2,
  ConvertExitNoDeviceCode = 3,
};

struct ConvertedArchive {
  std::string Path;
  uint64_t Entries = 0;
  uint64_t OriginalBytes = 0;
  uint64_t FileBytes = 0;
};

struct ConvertResult {
  ConvertOutcome Outcome = ConvertOutcome::Converted;
  uint64_t InputBytes = 0, OutputBytes = 0;
  unsigned Bundles = 0, Wrappers = 0, CodeObjects = 0;
  std::vector<ConvertedArchive> Archives;
};

/// Converts Opts.Input. Writes Opts.Output and the archives atomically, only
/// if the rewritten binary passes verification; never modifies the input
/// (Output may name the input or a hard link of it).
llvm::Expected<ConvertResult> convertHostBinary(const ConvertOptions &Opts);

/// The ELF part alone: rewrites Image so that its .hip_fatbin range holds
/// Metadata and leaves the file, and every wrapper is HIPK with reserved1 =
/// the index of the bundle its pointer targeted. Verifies the result.
llvm::Expected<std::vector<uint8_t>>
rewriteHostBinary(llvm::MemoryBufferRef Image,
                  llvm::ArrayRef<uint8_t> Metadata);
/// The same with Image's analysis at hand (saves re-reading a large image).
llvm::Expected<std::vector<uint8_t>>
rewriteHostBinary(llvm::MemoryBufferRef Image, const HostBinary &Host,
                  llvm::ArrayRef<uint8_t> Metadata);

/// The checks convertHostBinary runs on its output before writing: the
/// result re-parses, every wrapper is HIPK with valid metadata in a PT_LOAD
/// and the expected index, program and section headers are sane, and every
/// allocated section other than .hip_fatbin keeps its address, size and
/// bytes (wrappers and their relocations aside).
llvm::Error verifyConvertedBinary(llvm::MemoryBufferRef Original,
                                  llvm::MemoryBufferRef Converted);
llvm::Error verifyConvertedBinary(llvm::MemoryBufferRef Original,
                                  const HostBinary &OriginalHost,
                                  llvm::MemoryBufferRef Converted);

} // namespace kpack

#endif
