//===- Ls.cpp - kpack ls: list an archive ---------------------------------===//
//
// kpack ls ARCHIVE [--json]: the TOC header fields, the archive's summary
// (format version, entries against stored code objects, shared segments; see
// ArchiveSummary.h) and every entry with its original and stored
// (compressed) size.
//
//===----------------------------------------------------------------------===//

#include "ArchiveSummary.h"
#include "Commands.h"

#include "kpack/ArchiveReader.h"

#include "llvm/ADT/StringExtras.h"
#include "llvm/Support/Format.h"
#include "llvm/Support/JSON.h"
#include "llvm/Support/raw_ostream.h"

using namespace llvm;
using kpack::ArchiveReader;

static cl::SubCommand LsCmd("ls", "List the contents of a .kpack archive");
static cl::opt<std::string> LsArchive(cl::Positional, cl::Required,
                                      cl::desc("<archive.kpack>"),
                                      cl::sub(LsCmd));
static cl::opt<bool> LsJson("json", cl::desc("Print JSON"), cl::sub(LsCmd));

static Error listArchive() {
  Expected<std::unique_ptr<ArchiveReader>> ReaderOr = openArchive(LsArchive);
  if (!ReaderOr)
    return ReaderOr.takeError();
  const ArchiveReader &R = **ReaderOr;
  Expected<ArchiveSummary> SummaryOr = summarizeArchive(R, LsArchive);
  if (!SummaryOr)
    return SummaryOr.takeError();
  const ArchiveSummary &S = *SummaryOr;
  const std::vector<ArchiveReader::Entry> &Entries = R.entries();

  if (LsJson) {
    json::OStream J(outs(), 2);
    J.object([&] {
      J.attribute("archive", LsArchive);
      jsonArchiveSummary(J, S);
      J.attributeArray("entries", [&] {
        for (size_t I = 0; I < Entries.size(); ++I)
          J.object([&] {
            const ArchiveReader::Entry &E = Entries[I];
            J.attribute("key", E.Key);
            J.attribute("arch", E.Arch);
            J.attribute("ordinal", E.Ordinal);
            J.attribute("original_size", E.OriginalSize);
            J.attribute("compressed_size", S.StoredSizes[I]);
            std::vector<uint32_t> Segments;
            if (!R.entrySegments(E, Segments) && !Segments.empty())
              J.attributeArray("segments", [&] {
                for (uint32_t Seg : Segments)
                  J.value(int64_t(Seg));
              });
            if (!E.Metadata.empty())
              J.attributeObject("metadata", [&] {
                for (const auto &[Name, Value] : E.Metadata)
                  J.attribute(Name, Value);
              });
          });
      });
    });
    outs() << "\n";
    return Error::success();
  }

  outs() << "archive:     " << LsArchive << "\n";
  printArchiveSummary(outs(), S);
  size_t KeyWidth = 3, ArchWidth = 4;
  for (const ArchiveReader::Entry &E : Entries) {
    KeyWidth = std::max(KeyWidth, E.Key.size());
    ArchWidth = std::max(ArchWidth, E.Arch.size());
  }
  outs() << left_justify("KEY", KeyWidth) << "  " << left_justify("ARCH", ArchWidth)
         << "  " << right_justify("ORDINAL", 7) << "  " << right_justify("ORIGINAL", 12)
         << "  " << right_justify("STORED", 12) << "\n";
  for (size_t I = 0; I < Entries.size(); ++I)
    outs() << left_justify(Entries[I].Key, KeyWidth) << "  "
           << left_justify(Entries[I].Arch, ArchWidth) << "  "
           << format_decimal(Entries[I].Ordinal, 7) << "  "
           << format_decimal(Entries[I].OriginalSize, 12) << "  "
           << format_decimal(S.StoredSizes[I], 12) << "\n";
  outs() << "total: " << S.OriginalBytes << " bytes, stored " << S.StoredBytes
         << " bytes";
  if (S.Entries != S.StoredObjects)
    outs() << " (" << S.Entries - S.StoredObjects
           << " entries share a stored code object)";
  if (S.SharedStoredBytes)
    outs() << " + " << S.SharedStoredBytes << " bytes of shared segments";
  outs() << "\n";
  return Error::success();
}

int runLs() {
  if (Error E = listArchive())
    return reportError("kpack ls", std::move(E));
  return 0;
}
