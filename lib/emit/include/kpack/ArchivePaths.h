//===- kpack/ArchivePaths.h - Archive names and search paths ----*- C++ -*-===//
//
// Where a host binary's archives go and what search path its metadata
// records for them by default (FORMAT.md §3.2); shared by `kpack convert`
// and ld.kpack so that both lay out their outputs the same way.
//
//===----------------------------------------------------------------------===//
#ifndef KPACK_ARCHIVEPATHS_H
#define KPACK_ARCHIVEPATHS_H

#include "llvm/ADT/StringRef.h"

#include <string>

namespace kpack {

/// "<KernelName>_<TargetId>.kpack", upstream's per-target archive name;
/// TargetId "@GFXARCH@" gives the search-path pattern.
std::string perTargetArchiveName(llvm::StringRef KernelName,
                                 llvm::StringRef TargetId);

/// Dir/perTargetArchiveName(KernelName, TargetId).
std::string perTargetArchivePath(llvm::StringRef Dir,
                                 llvm::StringRef KernelName,
                                 llvm::StringRef TargetId);

/// Path made absolute against the working directory, "." and ".." removed
/// lexically (symbolic links are not resolved).
std::string absolutePath(llvm::StringRef Path);

/// The search path a binary written to BinaryPath records for the archive
/// file (or pattern) ArchivePath: relative to the binary's directory, so that
/// the two can move together.
std::string searchPathFromBinary(llvm::StringRef BinaryPath,
                                 llvm::StringRef ArchivePath);

} // namespace kpack

#endif
