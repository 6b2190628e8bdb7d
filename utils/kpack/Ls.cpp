//===- Ls.cpp - kpack ls: list an archive ---------------------------------===//
//
// kpack ls ARCHIVE... [--json]: the TOC header fields, the archive's summary
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
static cl::list<std::string> LsArchives(cl::Positional, cl::OneOrMore,
                                        cl::desc("<archive.kpack>..."),
                                        cl::sub(LsCmd));
static cl::opt<bool> LsJson("json", cl::desc("Print JSON"), cl::sub(LsCmd));

namespace {
/// One archive, read and summarized: all that can fail before printing.
struct Listing {
  std::string Path;
  std::unique_ptr<ArchiveReader> Reader;
  ArchiveSummary Summary;
};
} // namespace

static Expected<Listing> readListing(StringRef Path) {
  Expected<std::unique_ptr<ArchiveReader>> ReaderOr = openArchive(Path);
  if (!ReaderOr)
    return ReaderOr.takeError();
  Expected<ArchiveSummary> SummaryOr = summarizeArchive(**ReaderOr, Path);
  if (!SummaryOr)
    return SummaryOr.takeError();
  return Listing{Path.str(), std::move(*ReaderOr), std::move(*SummaryOr)};
}

/// Prints one archive: as text, or as a JSON object into J.
static void printListing(const Listing &L, json::OStream *J) {
  StringRef LsArchive = L.Path;
  const ArchiveReader &R = *L.Reader;
  const ArchiveSummary &S = L.Summary;
  const std::vector<ArchiveReader::Entry> &Entries = R.entries();

  if (J) {
    J->object([&] {
      J->attribute("archive", LsArchive);
      jsonArchiveSummary(*J, S);
      J->attributeArray("entries", [&] {
        for (size_t I = 0; I < Entries.size(); ++I)
          J->object([&] {
            const ArchiveReader::Entry &E = Entries[I];
            J->attribute("key", E.Key);
            J->attribute("arch", E.Arch);
            J->attribute("ordinal", E.Ordinal);
            J->attribute("original_size", E.OriginalSize);
            J->attribute("compressed_size", S.StoredSizes[I]);
            std::vector<uint32_t> Segments;
            if (!R.entrySegments(E, Segments) && !Segments.empty())
              J->attributeArray("segments", [&] {
                for (uint32_t Seg : Segments)
                  J->value(int64_t(Seg));
              });
            if (!E.Metadata.empty())
              J->attributeObject("metadata", [&] {
                for (const auto &[Name, Value] : E.Metadata)
                  J->attribute(Name, Value);
              });
          });
      });
    });
    return;
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
}

int runLs() {
  // Several archives: each listed in turn (text separated by a blank line;
  // JSON as an array of the one-archive objects, {"archive", "error"} for
  // one that cannot be read); any failure makes the exit status 1.
  int Status = 0;
  if (!LsJson || LsArchives.size() == 1) {
    for (size_t I = 0; I < LsArchives.size(); ++I) {
      Expected<Listing> L = readListing(LsArchives[I]);
      if (!L) {
        Status = reportError("kpack ls", L.takeError());
        continue;
      }
      if (I)
        outs() << "\n";
      if (!LsJson) {
        printListing(*L, nullptr);
        continue;
      }
      json::OStream J(outs(), 2);
      printListing(*L, &J);
      outs() << "\n";
    }
    return Status;
  }
  json::OStream J(outs(), 2);
  J.array([&] {
    for (const std::string &Path : LsArchives) {
      Expected<Listing> L = readListing(Path);
      if (L) {
        printListing(*L, &J);
        continue;
      }
      std::string Message = toString(L.takeError());
      Status = reportError("kpack ls", kpack::makeError(Message));
      J.object([&] {
        J.attribute("archive", Path);
        J.attribute("error", Message);
      });
    }
  });
  outs() << "\n";
  return Status;
}
