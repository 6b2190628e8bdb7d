//===- PackDatabases.cpp - Kernel databases into archives -----------------===//

#include "kpack/PackDatabases.h"

#include "kpack/ArtifactTree.h"
#include "kpack/AtomicFile.h"
#include "kpack/LLVMError.h"

#include "llvm/ADT/STLExtras.h"
#include "llvm/Support/FileSystem.h"
#include "llvm/Support/MemoryBuffer.h"
#include "llvm/Support/Path.h"

#include <set>
#include <tuple>

using namespace llvm;
using namespace kpack;

std::vector<std::string> DatabasePlan::targets() const {
  std::set<std::string> T;
  for (const DatabaseEntry &E : Packed)
    T.insert(E.File.TargetId);
  for (const DatabaseEntry &E : Beside)
    T.insert(E.File.TargetId);
  return {T.begin(), T.end()};
}

/// The size of the regular file at Path (symlinks followed), checked to be
/// readable now rather than halfway through writing the archives.
static Expected<uint64_t> readableFileSize(const std::string &Path) {
  sys::fs::file_status St;
  if (std::error_code EC = sys::fs::status(Path, St))
    return makeError("cannot read '" + Path + "': " + EC.message());
  if (St.type() != sys::fs::file_type::regular_file)
    return makeError("cannot read '" + Path + "': not a regular file");
  Expected<sys::fs::file_t> F = sys::fs::openNativeFileForRead(Path);
  if (!F)
    return makeError("cannot read '" + Path +
                     "': " + toString(F.takeError()));
  sys::fs::closeFile(*F);
  return St.getSize();
}

static bool isIndex(const DatabaseFile &F) {
  return any_of(F.Metadata, [](const std::pair<std::string, std::string> &M) {
    return M.first == "kind" && M.second == "index";
  });
}

Expected<DatabasePlan>
kpack::planDatabaseArchives(StringRef Tree,
                            ArrayRef<const DatabaseHandler *> Handlers,
                            IndexPlacement Indexes) {
  Expected<std::vector<TreeEntry>> Listing = listTree(Tree);
  if (!Listing)
    return Listing.takeError();

  DatabasePlan Plan;
  for (const TreeEntry &T : *Listing) {
    std::optional<DatabaseFile> F = matchDatabaseFile(Handlers, T.RelPath);
    if (!F) {
      ++Plan.Unrecognised;
      continue;
    }
    DatabaseEntry E;
    E.Path = (Tree + "/" + T.RelPath).str();
    E.RelPath = T.RelPath;
    E.File = std::move(*F);
    if (E.File.Key.empty()) {
      Plan.NotPacked.push_back(std::move(E));
      continue;
    }
    Expected<uint64_t> Size = readableFileSize(E.Path);
    if (!Size)
      return Size.takeError();
    E.Size = *Size;
    if (Indexes == IndexPlacement::Beside && isIndex(E.File))
      Plan.Beside.push_back(std::move(E));
    else
      Plan.Packed.push_back(std::move(E));
  }
  if (Plan.Packed.empty() && Plan.Beside.empty()) {
    std::string Names;
    for (const DatabaseHandler *H : Handlers)
      Names += (Names.empty() ? "" : ", ") + H->name().str();
    return makeError("no database files of " + Names + " to pack in '" + Tree +
                     "'");
  }

  // Archives are per target ID and their ordinals follow this order; the
  // listing order (paths) would interleave targets, keys do not.
  auto ByTargetAndKey = [](const DatabaseEntry &A, const DatabaseEntry &B) {
    return std::tie(A.File.TargetId, A.File.Key, A.RelPath) <
           std::tie(B.File.TargetId, B.File.Key, B.RelPath);
  };
  for (std::vector<DatabaseEntry> *V : {&Plan.Packed, &Plan.Beside}) {
    llvm::sort(*V, ByTargetAndKey);
    for (size_t I = 1; I < V->size(); ++I) {
      const DatabaseEntry &A = (*V)[I - 1], &B = (*V)[I];
      if (A.File.TargetId == B.File.TargetId && A.File.Key == B.File.Key)
        return makeError("'" + A.Path + "' and '" + B.Path +
                         "' have the same key '" + A.File.Key + "'");
    }
  }
  return Plan;
}

std::vector<std::pair<std::string, std::string>>
kpack::entryMetadata(const DatabaseEntry &E) {
  std::vector<std::pair<std::string, std::string>> M = E.File.Metadata;
  M.emplace_back("path", E.RelPath);
  return M;
}

/// Writes E to To atomically, creating directories.
static Error writeIndexFile(const DatabaseEntry &E, const std::string &To) {
  if (std::error_code EC =
          sys::fs::create_directories(sys::path::parent_path(To)))
    return makeError("cannot create '" + sys::path::parent_path(To) +
                     "': " + EC.message());
  ErrorOr<std::unique_ptr<MemoryBuffer>> Bytes = MemoryBuffer::getFile(
      E.Path, /*IsText=*/false, /*RequiresNullTerminator=*/false);
  if (!Bytes)
    return makeError("cannot read '" + E.Path +
                     "': " + Bytes.getError().message());
  return toError(writeFileAtomically(To, (*Bytes)->getBufferStart(),
                                     (*Bytes)->getBufferSize()));
}

Expected<std::vector<std::string>>
kpack::writeIndexesBeside(const DatabasePlan &Plan, StringRef OutputDir) {
  std::vector<std::string> Written;
  for (const DatabaseEntry &E : Plan.Beside) {
    std::string To = (OutputDir + "/" + E.File.Key).str();
    if (Error Err = writeIndexFile(E, To)) {
      for (const std::string &W : Written)
        sys::fs::remove(W);
      return std::move(Err);
    }
    Written.push_back(std::move(To));
  }
  return Written;
}
