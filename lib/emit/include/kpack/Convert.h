//===- kpack/Convert.h - Legacy fat binary -> kpack conversion --*- C++ -*-===//
//
// `kpack convert` (and its kpack-convert alias) as a library call: a linked
// x86-64 fat host binary (executable or shared library) becomes a host-only
// binary whose wrappers are HIPK, plus .kpack archives holding its code
// objects. It is the emission library's phases (kpack/Emission.h) in order:
// FatHostBinary, ArchiveSet, FatHostBinary::rewrite; the ELF rewrite itself
// is lib/host's (kpack/HostRewrite.h, docs/convert.md). The rewritten binary is
// verified and every code object checked before anything is committed.
//
//===----------------------------------------------------------------------===//
#ifndef KPACK_CONVERT_H
#define KPACK_CONVERT_H

#include "kpack/HostRewrite.h"
#include "kpack/Emission.h"

#include "llvm/Support/Error.h"

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
  std::string Family;    ///< default: ArchiveLayout's (the target ID per target)
  CompressionSettings Compression;
  unsigned Threads = 0; ///< 0: all cores
  /// Called with short phase descriptions (for a terminal progress line).
  std::function<void(const std::string &)> Progress;
};

enum class ConvertOutcome {
  Converted,
  AlreadyConverted, ///< wrappers are HIPK already; nothing written
  NoDeviceCode,     ///< no .hip_fatbin / wrappers; nothing written
};

struct ConvertedArchive {
  std::string Path;
  uint64_t Entries = 0;
  uint64_t OriginalBytes = 0;
  uint64_t FileBytes = 0;
  uint64_t Deduplicated = 0; ///< entries stored as aliases of another
};

struct ConvertResult {
  ConvertOutcome Outcome = ConvertOutcome::Converted;
  uint64_t InputBytes = 0, OutputBytes = 0;
  unsigned Bundles = 0, Wrappers = 0, CodeObjects = 0;
  std::vector<ConvertedArchive> Archives;
};

/// Converts Opts.Input. Writes Opts.Output and the archives atomically, only
/// if the rewritten binary passes verification and every code object its
/// check; never modifies the input (Output may name the input or a hard
/// link of it). Errors name the input (or the code object) they are about.
llvm::Expected<ConvertResult> convertHostBinary(const ConvertOptions &Opts);

} // namespace kpack

#endif
