//===- ArchiveSummary.h - What kpack ls and inspect say about an archive ---===//
//
// The header lines of `kpack ls` and what `kpack inspect` prints for a .kpack
// file: format version, scheme, entries against stored code objects (the
// deduplication ratio), shared segments and total sizes. One computation and
// one wording for both commands.
//
//===----------------------------------------------------------------------===//
#ifndef KPACK_UTILS_KPACK_ARCHIVESUMMARY_H
#define KPACK_UTILS_KPACK_ARCHIVESUMMARY_H

#include "kpack/ArchiveReader.h"

#include "llvm/ADT/StringRef.h"
#include "llvm/Support/Error.h"
#include "llvm/Support/JSON.h"
#include "llvm/Support/raw_ostream.h"

#include <cstdint>
#include <vector>

struct ArchiveSummary {
  const kpack::ArchiveReader *Reader = nullptr;
  /// Per entry (in Reader->entries() order): its stored frame or blob size.
  std::vector<uint64_t> StoredSizes;
  uint64_t Entries = 0;
  uint64_t StoredObjects = 0; ///< distinct ordinals
  uint64_t OriginalBytes = 0; ///< of every entry
  uint64_t StoredBytes = 0;   ///< frames or blobs, each ordinal once
  uint64_t SharedSegments = 0; ///< shared segments
  uint64_t SharedBytes = 0;    ///< their original size
  uint64_t SharedStoredBytes = 0;

  /// Entries per stored code object (1.00 without deduplication).
  double dedupRatio() const {
    return StoredObjects ? double(Entries) / double(StoredObjects) : 1.0;
  }
};

/// Summarizes R, whose file is Path (for messages).
llvm::Expected<ArchiveSummary> summarizeArchive(const kpack::ArchiveReader &R,
                                                llvm::StringRef Path);

/// "group:", "family:", "arches:", "compression:", "entries:" and, for
/// shared segments, "shared:" lines.
void printArchiveSummary(llvm::raw_ostream &OS, const ArchiveSummary &S);
/// The same as attributes of the current JSON object.
void jsonArchiveSummary(llvm::json::OStream &J, const ArchiveSummary &S);

#endif
