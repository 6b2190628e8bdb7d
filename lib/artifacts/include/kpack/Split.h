//===- kpack/Split.h - TheRock artifact split (kpack split) -----*- C++ -*-===//
//
// The engine of `kpack split`, the drop-in for upstream's split_artifacts
// (FORMAT.md §5, docs/split.md): one target-specific artifact in, a generic
// artifact and one artifact per target ID out.
//
//   <out>/<component>_generic/     every file of every prefix, fat binaries
//                                  rewritten host-only (HIPK + metadata),
//                                  compiler-emitted binaries' metadata
//                                  rewritten in place, their archives and
//                                  the database files left out;
//   <out>/<component>_<target id>/ one archive holding that target's code
//                                  objects of every binary, at
//                                  <first sorted prefix>/.kpack/
//                                  <component>_<target id>.kpack;
//   <out>/<component>_<base arch>/ the database files of that base arch
//                                  (upstream's base_arch(): gfx90a for
//                                  gfx90a-xnack+), with the archive of the
//                                  bare target if there is one.
//
// The analysis and rewrite of binaries run in parallel; code objects are
// added to the archives afterwards in sorted (prefix, path) order, so the
// output is the same bytes for any thread count. Outputs are staged and
// appear together or not at all.
//
//===----------------------------------------------------------------------===//
#ifndef KPACK_SPLIT_H
#define KPACK_SPLIT_H

#include "kpack/Emission.h"

#include "llvm/ADT/ArrayRef.h"
#include "llvm/ADT/StringRef.h"
#include "llvm/Support/Error.h"

#include <cstdint>
#include <functional>
#include <string>
#include <vector>

namespace kpack {

class DatabaseHandler;

struct SplitOptions {
  std::string ArtifactDir; ///< holds artifact_manifest.txt
  /// "<name>_<component>" (upstream's --artifact-prefix): the output
  /// artifacts' names, the archives' names and their TOC group_name.
  std::string Component;
  std::string OutputDir; ///< created if missing
  /// --split-databases: files these handlers own go, unchanged, to the
  /// artifact of their base arch (DatabaseFile::Artifact).
  std::vector<const DatabaseHandler *> DatabaseHandlers;
  /// --gpu-targets: when not empty, only code objects and database files of
  /// these targets get a per-target artifact; those of other targets are
  /// left out of every output (another shard produces them). See
  /// gpuTargetSelected().
  std::vector<std::string> GpuTargets;
  CompressionSettings Compression;
  unsigned Threads = 0; ///< 0: all cores
  /// Verbose progress, one line per call (--verbose).
  std::function<void(const std::string &)> Log;
};

/// What a split wrote.
struct SplitSummary {
  std::vector<std::string> Prefixes;  ///< the generic artifact's manifest
  std::vector<std::string> Artifacts; ///< output artifact names, sorted
  unsigned FatBinaries = 0;     ///< rewritten host-only
  unsigned EmittedBinaries = 0; ///< adopted (metadata rewritten in place)
  unsigned CodeObjects = 0;     ///< archived
  unsigned FilteredCodeObjects = 0; ///< left out by --gpu-targets
  unsigned DatabaseFiles = 0;       ///< moved to per-target artifacts
  unsigned FilteredDatabaseFiles = 0;
  /// One line each, in (prefix, path) order: e.g. a compiler-emitted binary
  /// whose search paths reach archives outside the artifact, copied
  /// unchanged (docs/split.md).
  std::vector<std::string> Warnings;
  std::vector<WrittenArchive> Archives;
};

/// Splits Opts.ArtifactDir into Opts.OutputDir. Existing output artifacts of
/// the same names are replaced; on failure none is written or changed.
/// Errors name the input file they are about.
llvm::Expected<SplitSummary> splitArtifact(const SplitOptions &Opts);

/// Does --gpu-targets keep Arch, a code object's target ID or a database
/// file's bundle key? Empty GpuTargets keep everything. Upstream's rule:
/// baseArch() of both sides compared, so "gfx90a" and "gfx90a:xnack-" both
/// keep "gfx90a:xnack+" and "gfx90a-xnack-"; a generic processor is kept
/// only when listed itself ("gfx1100" does not keep "gfx11-generic"), and a
/// strict processor only when listed strict ("gfx1250" does not keep
/// "gfx1250-strict").
bool gpuTargetSelected(llvm::StringRef Arch,
                       llvm::ArrayRef<std::string> GpuTargets);

/// One artifact of a batch (--batch-artifact-parent-dir).
struct BatchArtifact {
  std::string Dir;       ///< the artifact directory
  std::string Component; ///< its name up to the last '_'
};
/// The target-specific artifacts below Parent, sorted by name: directories
/// with artifact_manifest.txt whose name splits at the last '_' into a
/// component and a target family other than "generic" (upstream's rule).
/// Skipped directories are reported through Log.
llvm::Expected<std::vector<BatchArtifact>>
listBatchArtifacts(llvm::StringRef Parent,
                   const std::function<void(const std::string &)> &Log = {});

} // namespace kpack

#endif
