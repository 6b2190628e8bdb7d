//===- kpack/PackDatabases.h - Kernel databases into archives ---*- C++ -*-===//
//
// What `kpack pack-db` does before it writes (seed 000 §2b): the files of a
// database tree that the handlers recognise, each with its target ID, its
// structured TOC key and its entry metadata, checked (readable, one file per
// key and target) and ordered, so that the per-target archives written from
// the plan are the same bytes for the same tree. The archives themselves are
// written by the one emission library (kpack/Emission.h, ArchiveSet) in the
// driver: this library does not depend on it (docs/ARCHITECTURE.md).
//
// Keys and metadata are documented for the libraries that look kernels up in
// docs/kernel-databases.md.
//
//===----------------------------------------------------------------------===//
#ifndef KPACK_PACKDATABASES_H
#define KPACK_PACKDATABASES_H

#include "kpack/DatabaseHandlers.h"

#include "llvm/ADT/ArrayRef.h"
#include "llvm/ADT/StringRef.h"
#include "llvm/Support/Error.h"

#include <cstdint>
#include <string>
#include <vector>

namespace kpack {

/// Where Tensile's library index files (".dat": the solutions and the code
/// objects that hold them) go.
enum class IndexPlacement {
  Pack,  ///< into the archive, beside the code objects they index
  Beside ///< as files, OutputDir/<key>, next to the archives
};

/// One recognised file of the tree.
struct DatabaseEntry {
  std::string Path;    ///< <tree>/<RelPath>: what is read, named in errors
  std::string RelPath; ///< '/'-separated, relative to the tree
  uint64_t Size = 0;
  DatabaseFile File;   ///< handler, target ID, key, metadata
};

struct DatabasePlan {
  /// Files to pack, sorted by (target ID, key): each archive's ordinals
  /// follow this order.
  std::vector<DatabaseEntry> Packed;
  /// Index files kept beside the archives (IndexPlacement::Beside).
  std::vector<DatabaseEntry> Beside;
  /// Recognised files that no archive holds (host libraries a library
  /// dlopens, DatabaseFile::Key empty), sorted by path.
  std::vector<DatabaseEntry> NotPacked;
  /// Files no handler owns.
  uint64_t Unrecognised = 0;

  /// The target IDs of Packed and Beside, sorted.
  std::vector<std::string> targets() const;
};

/// Lists Tree (symlinks followed to the file they name) and builds the plan.
/// Errors name the file: one that cannot be read, one that is not a regular
/// file, two files with the same key for one target; and a tree in which the
/// handlers recognise nothing to pack.
llvm::Expected<DatabasePlan>
planDatabaseArchives(llvm::StringRef Tree,
                     llvm::ArrayRef<const DatabaseHandler *> Handlers,
                     IndexPlacement Indexes = IndexPlacement::Pack);

/// The entry metadata an archive records for E: the handler's (kind,
/// operation, ...) and "path", the file's path in the tree.
std::vector<std::pair<std::string, std::string>>
entryMetadata(const DatabaseEntry &E);

/// Writes the plan's Beside files to OutputDir/<key>, each atomically,
/// creating directories. Returns the paths written, in plan order; on
/// failure, the files written before are removed again.
llvm::Expected<std::vector<std::string>>
writeIndexesBeside(const DatabasePlan &Plan, llvm::StringRef OutputDir);

} // namespace kpack

#endif
