//===- Extract.cpp - kpack extract: one code object out of an archive -----===//
//
// kpack extract ARCHIVE KEY ARCH -o FILE   ("-o -" writes to stdout)
//
// Without that entry, the error is followed by notes on what the archive
// has: the targets of KEY, or the nearest key and the keys; its targets.
//
//===----------------------------------------------------------------------===//

#include "Commands.h"

#include "kpack/ArchiveReader.h"
#include "kpack/AtomicFile.h"

#include "llvm/ADT/STLExtras.h"
#include "llvm/ADT/StringExtras.h"
#include "llvm/Support/WithColor.h"
#include "llvm/Support/raw_ostream.h"

#include <set>

using namespace llvm;
using kpack::ArchiveReader;

static cl::SubCommand ExtractCmd("extract",
                                 "Extract one code object from a .kpack archive");
static cl::opt<std::string> ExtractArchive(cl::Positional, cl::Required,
                                           cl::desc("<archive.kpack>"),
                                           cl::sub(ExtractCmd));
static cl::opt<std::string> ExtractKey(cl::Positional, cl::Required,
                                       cl::desc("<key>"), cl::sub(ExtractCmd));
static cl::opt<std::string> ExtractArch(cl::Positional, cl::Required,
                                        cl::desc("<arch>"), cl::sub(ExtractCmd));
static cl::opt<std::string> ExtractOutput("o", cl::Required,
                                          cl::desc("Output file ('-' for stdout)"),
                                          cl::value_desc("file"),
                                          cl::sub(ExtractCmd));

/// What R has instead of (Key, Arch): the targets of Key if it is there,
/// else the nearest key and the keys (the first MaxKeys); then the targets.
static std::vector<std::string> whatIsThere(const ArchiveReader &R,
                                            StringRef Key) {
  constexpr size_t MaxKeys = 20;
  std::set<std::string> Keys, Arches;
  std::vector<std::string> ArchesOfKey;
  for (const ArchiveReader::Entry &E : R.entries()) {
    Keys.insert(E.Key);
    Arches.insert(E.Arch);
    if (E.Key == Key)
      ArchesOfKey.push_back(E.Arch);
  }
  std::vector<std::string> Notes;
  if (Keys.empty())
    return {"the archive has no entries"};
  if (!ArchesOfKey.empty()) {
    llvm::sort(ArchesOfKey);
    Notes.push_back("'" + Key.str() + "' is there for " +
                    join(ArchesOfKey, ", "));
  } else {
    const std::string *Nearest = nullptr;
    unsigned Best = std::max<size_t>(Key.size() / 3, 1) + 1;
    for (const std::string &K : Keys)
      if (unsigned D = Key.edit_distance(K, true, Best); D < Best) {
        Best = D;
        Nearest = &K;
      }
    if (Nearest)
      Notes.push_back("did you mean '" + *Nearest + "'?");
    std::vector<std::string> Some(Keys.begin(),
                                  std::next(Keys.begin(),
                                            std::min(Keys.size(), MaxKeys)));
    std::string Line = "its keys: " + join(Some, ", ");
    if (Keys.size() > MaxKeys)
      Line += ", and " + std::to_string(Keys.size() - MaxKeys) +
              " more ('kpack ls' lists them)";
    Notes.push_back(Line);
  }
  Notes.push_back("its targets: " + join(Arches, ", "));
  return Notes;
}

static Error extractEntry(std::vector<std::string> &Notes) {
  Expected<std::unique_ptr<ArchiveReader>> ReaderOr = openArchive(ExtractArchive);
  if (!ReaderOr)
    return ReaderOr.takeError();
  const ArchiveReader &R = **ReaderOr;
  const ArchiveReader::Entry *E = R.find(ExtractKey, ExtractArch);
  if (!E) {
    Notes = whatIsThere(R, ExtractKey);
    return createStringError(inconvertibleErrorCode(),
                             "'" + ExtractArchive + "' has no entry '" +
                                 ExtractKey + "' for " + ExtractArch);
  }
  std::vector<uint8_t> Bytes;
  if (kpack::Status Err = R.read(*E, Bytes))
    return createStringError(inconvertibleErrorCode(),
                             "'" + ExtractArchive + "': " + ExtractKey + " (" +
                                 ExtractArch + "): " + Err.message());
  if (ExtractOutput == "-") {
    outs().write(reinterpret_cast<const char *>(Bytes.data()), Bytes.size());
    outs().flush();
    return Error::success();
  }
  return toError(
      kpack::writeFileAtomically(ExtractOutput, Bytes.data(), Bytes.size()));
}

int runExtract() {
  std::vector<std::string> Notes;
  if (Error E = extractEntry(Notes)) {
    int Status = reportError("kpack extract", std::move(E));
    for (const std::string &N : Notes)
      WithColor::note(errs(), "kpack extract") << N << "\n";
    return Status;
  }
  return 0;
}
