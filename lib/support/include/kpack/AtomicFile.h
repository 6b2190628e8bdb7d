//===- kpack/AtomicFile.h - All-or-nothing output files ---------*- C++ -*-===//
//
// Every tool writes its outputs through AtomicFile: bytes go to a temporary
// file beside the destination (an llvm::sys::fs::TempFile, so that SIGINT
// or SIGTERM removes it too), which replaces the destination only on
// commit(). A reader never sees a half-written file, and a failed,
// abandoned or interrupted write leaves the previous file (if any)
// untouched.
//
// OutputDirectories is the one undo of directories a run makes for its
// outputs: removed again when the run fails (or is interrupted), kept when
// it succeeds. Its handler is the process's one cleanup of SIGINT, SIGTERM
// and SIGHUP (LLVM's handler, if TempFile installed it, passes the signal
// on to it): it undoes a commitPathsTogether() in progress, removes
// AtomicFile's temporaries and the recorded directories, then ends the
// process by the signal. No other code installs a handler for them.
//
// commitPathsTogether() makes several staged outputs (files or directory
// trees, e.g. built in an OutputDirectories tree) visible as one;
// commitTogether() does the same for AtomicFiles.
//
//===----------------------------------------------------------------------===//
#ifndef KPACK_ATOMICFILE_H
#define KPACK_ATOMICFILE_H

#include "kpack/Error.h"

#include "llvm/Support/FileSystem.h"

#include <atomic>
#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

namespace kpack {

struct AtomicFileOptions {
  /// fsync the data (and the directory after the rename) on commit.
  bool Sync = false;
  /// If non-empty, the output gets this file's permission bits (e.g. the
  /// input host binary when rewriting it); otherwise 0666 & ~umask.
  std::string ModeFrom;
};

class AtomicFile {
public:
  AtomicFile() = default;
  AtomicFile(const AtomicFile &) = delete;
  AtomicFile &operator=(const AtomicFile &) = delete;
  /// Removes the temporary file if commit() did not happen.
  ~AtomicFile();

  /// Creates the temporary file for Path (in Path's directory).
  Status open(const std::string &Path, const AtomicFileOptions &Opts = {});

  /// Appends bytes (buffered).
  Status write(const void *Data, size_t Size);
  Status write(const std::vector<uint8_t> &Bytes) {
    return write(Bytes.data(), Bytes.size());
  }
  /// Overwrites already written bytes at Offset (e.g. a header patched once
  /// the layout is known). Offset + Size must not exceed offset().
  Status writeAt(uint64_t Offset, const void *Data, size_t Size);
  /// Appends Size bytes whose contents come later, through writeReserved()
  /// (e.g. from the threads that made them); At is where they start. Until
  /// then they read as zeros.
  Status reserve(uint64_t Size, uint64_t &At);
  /// Writes bytes into a range reserve() returned. Threads may call it at
  /// once for disjoint ranges (nothing else of this file may run then); an
  /// error is returned, not remembered: the caller must fail the output.
  Status writeReserved(uint64_t At, const void *Data, size_t Size) const;
  /// Reads back already written bytes (e.g. to compare new data with data
  /// written before). Offset + Size must not exceed offset().
  Status readAt(uint64_t Offset, void *Data, size_t Size);
  /// Number of bytes appended so far.
  uint64_t offset() const { return Offset; }

  /// Flushes, applies the mode, renames the temporary file over the
  /// destination. The object is closed afterwards.
  Status commit();
  /// The first half of commit(): flushes and applies the mode (and syncs);
  /// on failure the file is discarded.
  Status finishContents();
  /// Closes and removes the temporary file.
  void discard();

  const std::string &path() const { return Path; }
  /// The temporary file's name (empty when closed).
  std::string tempPath() const { return Temp ? Temp->TmpName : std::string(); }

private:
  friend Status commitTogether(const std::vector<AtomicFile *> &Files);

  Status flush();

  std::string Path;
  AtomicFileOptions Opts;
  std::optional<llvm::sys::fs::TempFile> Temp;
  int Fd = -1; ///< Temp's
  /// Atomic: writeReserved() checks it on other threads while reserve()
  /// extends it.
  std::atomic<uint64_t> Offset{0};
  std::vector<uint8_t> Buffer;
  Status Sticky; // first write error; reported again by commit()
};

/// Writes Bytes to Path atomically.
Status writeFileAtomically(const std::string &Path, const void *Data,
                           size_t Size, const AtomicFileOptions &Opts = {});

/// Commits Files together, in order: every file's contents are finished
/// before any is renamed, and if a rename fails the files committed before
/// it are taken back (the destinations they replaced restored), so that
/// either all destinations change or none does. Every file is closed
/// afterwards.
Status commitTogether(const std::vector<AtomicFile *> &Files);

/// A staged output (a file or a directory tree) and its destination, on
/// the same file system.
struct StagedPath {
  std::string Staged, Destination;
};

/// Renames every staged path over its destination, in order, as one: each
/// destination that exists is kept under a backup name beside its staged
/// path (a hard link when a file replaces a file, else moved aside) until
/// all renames are done. If a step fails, or SIGINT, SIGTERM or SIGHUP
/// arrives before all are done, the renames done are undone (each output
/// back to its staged path) and the replaced destinations restored, so that
/// either all destinations change or none does. On failure the staged paths
/// stay where they were, for their owner to remove. One commit at a time.
Status commitPathsTogether(const std::vector<StagedPath> &Paths);

/// Directories a run creates for its outputs, and trees it builds (staging
/// and scratch directories). Unless keep() is called, destruction removes
/// them again: each tree with everything in it, each created directory if
/// it is empty, deepest first; SIGINT, SIGTERM and SIGHUP do the same
/// before the process ends (after a commitPathsTogether() in progress is
/// undone and the temporary files of AtomicFile are gone). Not thread-safe:
/// one owner adds, from one thread.
class OutputDirectories {
public:
  OutputDirectories() = default;
  OutputDirectories(const OutputDirectories &) = delete;
  OutputDirectories &operator=(const OutputDirectories &) = delete;
  ~OutputDirectories();

  /// Creates Dir and its missing parents (mode 0777 & ~umask) and records
  /// the ones it made.
  Status create(const std::string &Dir);
  /// Creates a new unique directory Parent/<Stem>XXXXXX (Parent must exist)
  /// and records it as a tree, removed whole; its path goes to Path.
  Status createTree(const std::string &Parent, const std::string &Stem,
                    std::string &Path);
  /// Removes the tree at Path now (it was moved or is no longer needed).
  void removeTree(const std::string &Path);
  /// Forgets a tree or directory without removing it (renamed elsewhere).
  void forget(const std::string &Path);
  /// Success: everything recorded stays.
  void keep();
  /// Failure: removes everything recorded (what destruction does).
  void undo();

private:
  struct Made {
    std::string Path;
    bool Tree;
    int Slot; ///< in the signal handler's table, or -1
  };
  std::vector<Made> Dirs; // in creation order
  void record(const std::string &Path, bool Tree);
};

/// Removes Path and everything below it without following symlinks; makes
/// read-only directories writable first.
Status removeDirectoryTree(const std::string &Path);

} // namespace kpack

#endif
