//===- kpack/ArtifactTree.h - TheRock artifact directories ------*- C++ -*-===//
//
// TheRock's artifacts (FORMAT.md §5): a directory with artifact_manifest.txt
// naming prefixes, each prefix a tree of installed files. What `kpack split`,
// `kpack recombine` and the wheel tools share: the manifest, the sorted tree
// listing, copies that keep symlinks, modes, timestamps and hard links, and
// output artifacts that appear whole or not at all.
//
//===----------------------------------------------------------------------===//
#ifndef KPACK_ARTIFACTTREE_H
#define KPACK_ARTIFACTTREE_H

#include "kpack/AtomicFile.h"

#include "llvm/ADT/ArrayRef.h"
#include "llvm/ADT/StringRef.h"
#include "llvm/Support/Error.h"

#include <cstdint>
#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <utility>
#include <vector>

namespace kpack {

constexpr llvm::StringLiteral ArtifactManifestName = "artifact_manifest.txt";

/// What readArtifactManifest does with a listed prefix that has no directory
/// in the artifact. TheRock lists prefixes whose component has no file
/// there (the directory is then never created); upstream's split skips them.
enum class MissingPrefix { Error, Skip };

/// The prefixes of ArtifactDir/artifact_manifest.txt in file order (blank
/// lines skipped). Errors: missing file, a control byte (0x00-0x1f, 0x7f)
/// in a prefix, absolute or ".."-escaping prefix, a "." or empty component,
/// a prefix with a symlink among its components (it would lead the tree
/// walkers out of the artifact), a prefix that is not a directory of the
/// artifact (unless Missing is Skip and nothing exists at that path: it is
/// then left out).
llvm::Expected<std::vector<std::string>>
readArtifactManifest(llvm::StringRef ArtifactDir,
                     MissingPrefix Missing = MissingPrefix::Error);

/// Writes ArtifactDir/artifact_manifest.txt, one prefix per line.
llvm::Error writeArtifactManifest(llvm::StringRef ArtifactDir,
                                  llvm::ArrayRef<std::string> Prefixes);

/// "<component>_<target>" split at the last '_' ("blas_lib_gfx90a:xnack+" ->
/// {"blas_lib", "gfx90a:xnack+"}); none without a '_'.
std::optional<std::pair<std::string, std::string>>
splitArtifactName(llvm::StringRef Name);

/// One non-directory entry of a tree (symlinks not followed).
struct TreeEntry {
  enum Kind { File, Symlink, Other } K = File;
  std::string RelPath; ///< '/'-separated, relative to the root
  uint64_t Size = 0;
  uint64_t Device = 0, Inode = 0;
  uint32_t LinkCount = 1;
};

/// Every non-directory entry below Root, sorted bytewise by RelPath.
/// Directories themselves are listed in Dirs if given (sorted), so that
/// empty directories survive a copy. Below Root no symlink is followed (a
/// symlink to a directory is an entry, not a subtree); Root itself is the
/// caller's choice (an artifact's prefixes are checked by
/// readArtifactManifest).
llvm::Expected<std::vector<TreeEntry>>
listTree(llvm::StringRef Root, std::vector<std::string> *Dirs = nullptr);

/// How a copied file's bytes reach the destination.
enum class CopyMode {
  Copy,          ///< new inode: copy_file_range (reflink where possible)
  HardLinkFirst, ///< hard link where the filesystem allows, else Copy
};

/// Copies trees entry by entry into a destination, preserving symlinks
/// (recreated, not followed), file modes and timestamps (and directory
/// modes), and hard links between copied entries (two entries sharing an
/// inode in the source share one in the destination).
class TreeCopier {
public:
  explicit TreeCopier(CopyMode Mode) : Mode(Mode) {}
  /// Copies the entry at From (described by E) to To, creating parent
  /// directories.
  llvm::Error copy(llvm::StringRef From, const TreeEntry &E,
                   llvm::StringRef To);
  /// Creates directory To (and missing parents) for directory From, e.g.
  /// an empty directory listed by listTree or the directory of a file
  /// written elsewhere; finish() gives it (and the parents made whose names
  /// match From's) From's mode and timestamps. The one call that may be
  /// made from several threads at once.
  llvm::Error makeDir(llvm::StringRef From, llvm::StringRef To);
  /// Applies source directory modes and timestamps to copied directories;
  /// call once after the last file or directory is made in them (a 0555
  /// source directory then ends as 0555, with its time).
  llvm::Error finish();

private:
  CopyMode Mode;
  std::mutex DirsMutex;
  std::map<std::pair<uint64_t, uint64_t>, std::string> Linked;
  std::vector<std::pair<std::string, std::string>> DirsToStamp;
};

/// Output directories built under temporary names in Parent and renamed
/// into place together by commit(); anything not committed is removed when
/// the object is destroyed or the process is interrupted (SIGINT, SIGTERM),
/// so a failed or interrupted run leaves no partial output.
class StagedOutputs {
public:
  static llvm::Expected<StagedOutputs> create(llvm::StringRef Parent);
  StagedOutputs(StagedOutputs &&);
  StagedOutputs &operator=(StagedOutputs &&);
  ~StagedOutputs();

  /// The staging directory of output Name (created on first use).
  llvm::Expected<std::string> dir(llvm::StringRef Name);
  /// Moves every staged output to Parent/<Name>, replacing an existing one.
  llvm::Error commit();

private:
  StagedOutputs() = default;
  std::string Parent, Root;
  std::vector<std::string> Names;
  bool Committed = false;
  std::unique_ptr<OutputDirectories> Dirs;
};

} // namespace kpack

#endif
