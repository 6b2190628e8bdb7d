//===- kpack/DatabaseHandlers.h - Kernel-database file rules ----*- C++ -*-===//
//
// Kernel databases are files a ROCm library loads by name at run time
// (rocBLAS/hipBLASLt Tensile `.co`/`.hsaco`/`.dat`, MIOpen `.kdb`/`.model`,
// AOTriton kernels, ...), one set per target. `kpack split --split-databases`
// moves them to the artifact of their target and `kpack pack-db` packs them
// into per-target archives. Each handler recognises the paths upstream's
// handler of the same name recognises (rocm-systems shared/kpack
// database_handlers.py, FORMAT.md §5) and reports upstream's bundle key.
//
//===----------------------------------------------------------------------===//
#ifndef KPACK_DATABASEHANDLERS_H
#define KPACK_DATABASEHANDLERS_H

#include "llvm/ADT/ArrayRef.h"
#include "llvm/ADT/StringRef.h"
#include "llvm/Support/Error.h"

#include <optional>
#include <string>
#include <utility>
#include <vector>

namespace kpack {

class DatabaseHandler;

/// A file recognised as part of a kernel database.
struct DatabaseFile {
  const DatabaseHandler *Handler = nullptr;
  /// Upstream's bundle key, as the path spells it: "gfx90a-xnack+",
  /// "gfx1250-strict", AOTriton's "gfx11" or "gfx12_0".
  std::string Bundle;
  /// baseArch(Bundle): the suffix of the artifact `kpack split` moves the
  /// file to ("gfx90a", "gfx1250-strict"), as upstream's splitter does.
  std::string Artifact;
  /// The full, canonical target ID the path spells ("gfx90a:xnack+",
  /// "gfx9-4-generic"), or empty where the bundle key is no target ID
  /// (AOTriton's family directories): such files are not packed.
  std::string TargetId;
  /// Structured archive key for `kpack pack-db` (docs/kernel-databases.md):
  /// "<handler>/<target id>/<path below the database, target removed>".
  /// Empty for files that belong to a target but are not packed: host
  /// libraries a library dlopens (MIOpen's CK plugins, CK static archives).
  std::string Key;
  /// Library-specific TOC entry metadata ("kind", "operation", ...), written
  /// in this order (docs/kernel-databases.md).
  std::vector<std::pair<std::string, std::string>> Metadata;
};

class DatabaseHandler {
public:
  virtual ~DatabaseHandler();
  /// Upstream's name: "rocblas", "hipblaslt", "miopen", "aotriton", ...
  virtual llvm::StringRef name() const = 0;
  /// The database file at RelPath ('/'-separated, relative to its prefix),
  /// or none if this handler does not own it.
  virtual std::optional<DatabaseFile> match(llvm::StringRef RelPath) const = 0;
};

/// Every handler, in the order they are tried.
llvm::ArrayRef<const DatabaseHandler *> allDatabaseHandlers();
/// The handlers named (command-line order kept); an unknown name is an
/// error listing the known ones.
llvm::Expected<std::vector<const DatabaseHandler *>>
databaseHandlersNamed(llvm::ArrayRef<std::string> Names);
/// The first of Handlers that owns RelPath.
std::optional<DatabaseFile>
matchDatabaseFile(llvm::ArrayRef<const DatabaseHandler *> Handlers,
                  llvm::StringRef RelPath);

/// Upstream's base_arch(): the features dropped, whether written clang's way
/// or Tensile's ("gfx90a-xnack-", "gfx942:sramecc+:xnack-" -> "gfx90a",
/// "gfx942"); a strict processor stays itself ("gfx1250-strict-xnack+" ->
/// "gfx1250-strict"). Database files go to the artifact of this name and
/// --gpu-targets compares these names.
std::string baseArch(llvm::StringRef Arch);

/// The target ID a name spells where upstream's pattern first matches it
/// ("TensileLibrary_gfx90a:xnack+.co" -> "gfx90a:xnack+", "gfx11-generic",
/// "gfx1250-strict"), validated with the core's target-ID parser; none if
/// that is no target ID ("gfx9", "gfx11xx", "gfx1100-xnack+").
std::optional<std::string> targetIdInName(llvm::StringRef Name);

/// AOTriton's image directory in a path split at '/': the index of the
/// component after the first "aotriton.images" (not the last component),
/// when it names "amd-gfx..."; none otherwise. The aotriton handler and the
/// wheels' family bundles (BundleKeys.h) read the same directory.
std::optional<size_t> aotritonImageDirectory(llvm::ArrayRef<llvm::StringRef> Parts);

} // namespace kpack

#endif
