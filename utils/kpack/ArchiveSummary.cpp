//===- ArchiveSummary.cpp - What kpack ls and inspect say about an archive -===//

#include "ArchiveSummary.h"

#include "llvm/ADT/StringExtras.h"
#include "llvm/Support/Format.h"

#include <set>

using namespace llvm;
using kpack::ArchiveReader;

Expected<ArchiveSummary> summarizeArchive(const ArchiveReader &R,
                                          StringRef Path) {
  ArchiveSummary S;
  S.Reader = &R;
  // Entries that share an ordinal (deduplicated) share one stored blob,
  // counted once in the total.
  std::set<uint64_t> Ordinals;
  for (const ArchiveReader::Entry &E : R.entries()) {
    uint64_t Stored = 0;
    if (kpack::Status Err = R.compressedSize(E, Stored))
      return createStringError(inconvertibleErrorCode(),
                               "'" + Path + "': " + E.Key + " (" + E.Arch +
                                   "): " + Err.message());
    S.StoredSizes.push_back(Stored);
    S.OriginalBytes += E.OriginalSize;
    if (Ordinals.insert(E.Ordinal).second)
      S.StoredBytes += Stored;
  }
  S.Entries = R.entries().size();
  S.StoredObjects = Ordinals.size();
  const ArchiveReader::SegmentIndex *Index = nullptr;
  if (kpack::Status Err = R.segmentIndex(Index))
    return createStringError(inconvertibleErrorCode(),
                             "'" + Path + "': " + Err.message());
  S.SharedSegments = Index->Segments.size();
  for (const ArchiveReader::Segment &Seg : Index->Segments) {
    S.SharedBytes += Seg.OriginalSize;
    S.SharedStoredBytes += Seg.Size;
  }
  return S;
}

void printArchiveSummary(raw_ostream &OS, const ArchiveSummary &S) {
  const ArchiveReader &R = *S.Reader;
  OS << "group:       " << R.groupName() << "\n"
     << "family:      " << R.gfxArchFamily() << "\n"
     << "arches:      " << join(R.gfxArches(), " ") << "\n"
     << "compression: " << ArchiveReader::schemeName(R.scheme())
     << " (format version " << R.formatVersion() << ")\n"
     << "entries:     " << S.Entries << " (" << S.StoredObjects
     << " stored code objects, dedup ratio "
     << format("%.2f", S.dedupRatio()) << ")\n";
  if (R.scheme() == ArchiveReader::Scheme::ZstdSharedSegments)
    OS << "shared:      " << S.SharedSegments << " segments, "
       << S.SharedBytes << " bytes, stored " << S.SharedStoredBytes
       << " bytes\n";
}

void jsonArchiveSummary(json::OStream &J, const ArchiveSummary &S) {
  const ArchiveReader &R = *S.Reader;
  J.attribute("group_name", R.groupName());
  J.attribute("gfx_arch_family", R.gfxArchFamily());
  J.attributeArray("gfx_arches", [&] {
    for (const std::string &A : R.gfxArches())
      J.value(A);
  });
  J.attribute("compression_scheme", ArchiveReader::schemeName(R.scheme()));
  J.attribute("format_version", int64_t(R.formatVersion()));
  J.attribute("file_size", R.fileSize());
  J.attribute("entry_count", S.Entries);
  J.attribute("stored_code_objects", S.StoredObjects);
  if (S.Entries != S.StoredObjects)
    J.attribute("deduplicated_entries", S.Entries - S.StoredObjects);
  J.attribute("dedup_ratio", S.dedupRatio());
  J.attribute("original_size", S.OriginalBytes);
  J.attribute("stored_size", S.StoredBytes);
  if (R.scheme() == ArchiveReader::Scheme::ZstdSharedSegments)
    J.attributeObject("shared_segments", [&] {
      J.attribute("count", S.SharedSegments);
      J.attribute("original_size", S.SharedBytes);
      J.attribute("stored_size", S.SharedStoredBytes);
    });
}
