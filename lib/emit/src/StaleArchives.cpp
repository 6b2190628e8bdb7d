//===- StaleArchives.cpp - Archives a previous write left behind ----------===//
//
// A rewrite of a host binary with fewer target IDs would leave the previous
// write's <name>_<target>.kpack beside it, for an install step to pick up.
// Such an archive is removed only when it is proven the previous write's:
// every entry is keyed "<name>#N" and carries the link identity of the
// binary being replaced (docs/format-extensions.md, "Link identity").
//
//===----------------------------------------------------------------------===//

#include "kpack/Emission.h"

#include "kpack/ArchivePaths.h"
#include "kpack/ArchiveReader.h"
#include "kpack/LLVMError.h"
#include "kpack/TargetId.h"

#include "llvm/ADT/STLExtras.h"
#include "llvm/Support/FileSystem.h"
#include "llvm/Support/Path.h"

#include <set>

using namespace llvm;
using namespace kpack;

/// Whether every entry of the archive at Path is one of Name's, written by
/// the link LinkId.
static bool writtenBy(const std::string &Path, StringRef Name,
                      StringRef LinkId) {
  std::unique_ptr<ArchiveReader> Reader;
  if (ArchiveReader::open(Path, Reader))
    return false;
  if (Reader->entries().empty())
    return false;
  const std::string Prefix = (Name + "#").str();
  for (const ArchiveReader::Entry &E : Reader->entries())
    if (!StringRef(E.Key).starts_with(Prefix) ||
        E.metadataValue(LinkIdKey) != std::string_view(LinkId))
      return false;
  return true;
}

std::vector<std::string> kpack::staleArchives(StringRef BinaryPath,
                                              StringRef Dir, StringRef Name,
                                              ArrayRef<std::string> Keep) {
  std::vector<std::string> Stale;
  Expected<EmittedHostBinary> Old = EmittedHostBinary::open(BinaryPath);
  if (!Old) { // no previous binary, or not one this project wrote
    consumeError(Old.takeError());
    return Stale;
  }
  const std::string &LinkId = Old->metadata().LinkId;
  if (LinkId.empty() || Old->metadata().KernelName != Name)
    return Stale;
  std::set<std::string> Kept;
  for (const std::string &K : Keep)
    Kept.insert(absolutePath(K));
  const std::string Prefix = (Name + "_").str();
  const StringRef Suffix = ".kpack";
  std::error_code EC;
  for (sys::fs::directory_iterator I(Dir.empty() ? "." : Dir, EC), E;
       I != E && !EC; I.increment(EC)) {
    StringRef File = sys::path::filename(I->path());
    if (File.size() <= Prefix.size() + Suffix.size() ||
        !File.starts_with(Prefix) || !File.ends_with(Suffix))
      continue;
    StringRef Target =
        File.drop_front(Prefix.size()).drop_back(Suffix.size());
    if (!parseTargetId(Target.str()) || !sys::fs::is_regular_file(I->path()) ||
        Kept.count(absolutePath(I->path())))
      continue;
    if (writtenBy(I->path(), Name, LinkId))
      Stale.push_back(I->path());
  }
  llvm::sort(Stale);
  return Stale;
}

Error kpack::removeStaleArchives(ArrayRef<std::string> Stale) {
  for (const std::string &Path : Stale)
    if (std::error_code EC = sys::fs::remove(Path))
      return makeError("cannot remove the stale archive '" + Path +
                       "': " + EC.message());
  return Error::success();
}
