//===- Ls.cpp - kpack ls: list an archive ---------------------------------===//
//
// kpack ls ARCHIVE [--json]: the TOC header fields and every entry with its
// original and stored (compressed) size.
//
//===----------------------------------------------------------------------===//

#include "Commands.h"

#include "kpack/ArchiveReader.h"

#include "llvm/ADT/StringExtras.h"
#include "llvm/Support/Format.h"
#include "llvm/Support/JSON.h"
#include "llvm/Support/raw_ostream.h"

#include <set>

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

  struct Row {
    const ArchiveReader::Entry *E;
    uint64_t Stored;
  };
  std::vector<Row> Rows;
  uint64_t TotalOriginal = 0, TotalStored = 0;
  // Entries that share an ordinal (deduplicated) share one stored blob,
  // counted once in the total.
  std::set<uint64_t> Ordinals;
  for (const ArchiveReader::Entry &E : R.entries()) {
    uint64_t Stored = 0;
    if (kpack::Status Err = R.compressedSize(E, Stored))
      return createStringError(inconvertibleErrorCode(),
                               "'" + LsArchive + "': " + E.Key + " (" +
                                   E.Arch + "): " + Err.message());
    Rows.push_back({&E, Stored});
    TotalOriginal += E.OriginalSize;
    if (Ordinals.insert(E.Ordinal).second)
      TotalStored += Stored;
  }
  const uint64_t Aliases = Rows.size() - Ordinals.size();

  if (LsJson) {
    json::OStream J(outs(), 2);
    J.object([&] {
      J.attribute("archive", LsArchive);
      J.attribute("group_name", R.groupName());
      J.attribute("gfx_arch_family", R.gfxArchFamily());
      J.attributeArray("gfx_arches", [&] {
        for (const std::string &A : R.gfxArches())
          J.value(A);
      });
      J.attribute("compression_scheme", ArchiveReader::schemeName(R.scheme()));
      J.attribute("file_size", R.fileSize());
      if (Aliases)
        J.attribute("deduplicated_entries", Aliases);
      J.attributeArray("entries", [&] {
        for (const Row &Rw : Rows)
          J.object([&] {
            J.attribute("key", Rw.E->Key);
            J.attribute("arch", Rw.E->Arch);
            J.attribute("ordinal", Rw.E->Ordinal);
            J.attribute("original_size", Rw.E->OriginalSize);
            J.attribute("compressed_size", Rw.Stored);
            if (!Rw.E->Metadata.empty())
              J.attributeObject("metadata", [&] {
                for (const auto &[Name, Value] : Rw.E->Metadata)
                  J.attribute(Name, Value);
              });
          });
      });
    });
    outs() << "\n";
    return Error::success();
  }

  outs() << "archive:     " << LsArchive << "\n"
         << "group:       " << R.groupName() << "\n"
         << "family:      " << R.gfxArchFamily() << "\n"
         << "arches:      " << join(R.gfxArches(), " ") << "\n"
         << "compression: " << ArchiveReader::schemeName(R.scheme()) << "\n"
         << "entries:     " << Rows.size() << "\n";
  size_t KeyWidth = 3, ArchWidth = 4;
  for (const Row &Rw : Rows) {
    KeyWidth = std::max(KeyWidth, Rw.E->Key.size());
    ArchWidth = std::max(ArchWidth, Rw.E->Arch.size());
  }
  outs() << left_justify("KEY", KeyWidth) << "  " << left_justify("ARCH", ArchWidth)
         << "  " << right_justify("ORDINAL", 7) << "  " << right_justify("ORIGINAL", 12)
         << "  " << right_justify("STORED", 12) << "\n";
  for (const Row &Rw : Rows)
    outs() << left_justify(Rw.E->Key, KeyWidth) << "  "
           << left_justify(Rw.E->Arch, ArchWidth) << "  "
           << format_decimal(Rw.E->Ordinal, 7) << "  "
           << format_decimal(Rw.E->OriginalSize, 12) << "  "
           << format_decimal(Rw.Stored, 12) << "\n";
  outs() << "total: " << TotalOriginal << " bytes, stored " << TotalStored
         << " bytes";
  if (Aliases)
    outs() << " (" << Aliases << " entries share a stored code object)";
  outs() << "\n";
  return Error::success();
}

int runLs() {
  if (Error E = listArchive())
    return reportError("kpack ls", std::move(E));
  return 0;
}
