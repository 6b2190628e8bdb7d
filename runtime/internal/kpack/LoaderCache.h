//===- kpack/LoaderCache.h - HIPK code-object loader ------------*- C++ -*-===//
//
// What kpack_load_code_object does for CLR (docs/FORMAT.md §1.4, §3.2, §3.3):
// for each requested target ID in order, each of its feature subsets (most
// specific first), each search path: the archive there (opened lazily, each
// canonical path once; a failure is kept while the path names the same file,
// or nothing) is asked for the code object if
// its gfx_arches lists the candidate; an archive without the key does not
// end the search.
//
//===----------------------------------------------------------------------===//
#ifndef KPACK_RUNTIME_LOADERCACHE_H
#define KPACK_RUNTIME_LOADERCACHE_H

#include "kpack/Error.h"
#include "kpack/Metadata.h"
#include "kpack/Resolution.h"
#include "kpack/SearchPaths.h"

#include <atomic>
#include <condition_variable>
#include <cstdint>
#include <cstdio>
#include <functional>
#include <map>
#include <memory>
#include <mutex>
#include <string>
#include <string_view>
#include <vector>

namespace kpack {

class ArchiveReader;

/// Counters for tests and diagnostics.
struct LoaderStats {
  uint64_t PathLookups = 0;  // filesystem probes (realpath) of search paths
  uint64_t ArchiveOpens = 0; // ArchiveReader::open calls
  uint64_t Loads = 0;        // successful code-object loads
  uint64_t FailureChecks = 0; // stat()s of a path that failed before
};

/// Where a code object is, found without reading it (locateCodeObject).
/// Holds the archive open; Entry points into it.
struct LocatedCodeObject {
  std::shared_ptr<const ArchiveReader> Archive;
  const void *Entry = nullptr; ///< the ArchiveReader::Entry
  std::string ArchivePath;     ///< as searched, for messages
  std::string Target;          ///< the archive's target ID for the entry
  uint64_t Size = 0;           ///< uncompressed size, from the TOC
};

class LoaderCache {
public:
  explicit LoaderCache(KpackEnvironment Env);
  ~LoaderCache();

  const KpackEnvironment &environment() const { return Env; }
  LoaderStats stats() const;

  /// Loads "<KernelName>#<CoIndex>" into a malloc'ed buffer. Arches is the
  /// caller's list in priority order (replaced by ROCM_KPACK_ARCH_OVERRIDE
  /// when set). Errors: KPACK_ERROR_INVALID_ARGUMENT for an empty list;
  /// KERNEL_NOT_FOUND if an archive listed a candidate but lacked the key,
  /// else ARCH_NOT_FOUND if archives opened but listed no candidate, else
  /// ARCHIVE_NOT_FOUND; a read or decompression failure as it is. An entry
  /// whose link identity differs from the binary's is refused and the
  /// search goes on (KERNEL_NOT_FOUND if nothing else loads).
  ///
  /// Account, when given, receives the account of the search (appended to:
  /// kpack/Resolution.h); explain() then diagnoses it. Without one, under
  /// ROCM_KPACK_DEBUG, a failed load's trace ends with "diagnosis: <line>".
  Status loadCodeObject(const KpackMetadata &Ref, std::string_view BinaryPath,
                        uint32_t CoIndex, const std::vector<std::string> &Arches,
                        void *&Data, size_t &Size,
                        ResolutionAccount *Account = nullptr);

  /// loadCodeObject without reading: the first entry the same search finds,
  /// with its uncompressed size from the TOC; same errors (no read error is
  /// possible). Read it with readLocated, from any thread, while Out lives.
  Status locateCodeObject(const KpackMetadata &Ref,
                          std::string_view BinaryPath, uint32_t CoIndex,
                          const std::vector<std::string> &Arches,
                          LocatedCodeObject &Out,
                          ResolutionAccount *Account = nullptr);

  /// Diagnoses the account of a search (or several) made by this cache:
  /// when nothing was found, first looks for the archives beside each
  /// @GFXARCH@ search path that were not probed (Siblings), opening them
  /// through the cache; then sets Verdict, Match and Message (diagnose()).
  void explain(ResolutionAccount &Account);

  /// Reads and decompresses a located code object into Allocate(Size)
  /// (ArchiveReader::read).
  Status readLocated(const LocatedCodeObject &Located,
                     const std::function<void *(size_t)> &Allocate) const;

  /// pthread_atfork handlers (every live cache's, in turn): the cache's lock
  /// is taken before fork and released after; the child forgets every
  /// archive (another thread may have been using one) and opens them again
  /// when it needs them.
  void forkPrepare();
  void forkParent();
  void forkChild();

  /// Reports to stderr under ROCM_KPACK_DEBUG.
  void debug(const char *Format, ...) const
      __attribute__((format(printf, 2, 3)));

  /// Tests only: called with the canonical path by every load that opens an
  /// archive, just before it does (no lock held), to stand for a slow open
  /// (a network mount) that a test cannot make otherwise: a FIFO, which
  /// used to block, is refused without waiting. Set before any load.
  std::function<void(const std::string &)> BeforeOpenForTesting;

private:
  struct FileStamp;
  struct Slot;
  std::shared_ptr<Slot> archiveFor(const std::string &Path);
  /// The search of loadCodeObject; Use is called for each entry found and
  /// ends the search when it succeeds; its last failure is returned if none
  /// does.
  using FoundFn = std::function<Status(const std::string &Path,
                                       const std::shared_ptr<Slot> &S,
                                       const void *Entry,
                                       const std::string &Candidate)>;
  Status search(const KpackMetadata &Ref, std::string_view BinaryPath,
                uint32_t CoIndex, const std::vector<std::string> &Arches,
                ResolutionAccount *Account, const FoundFn &Use);
  /// explain(), then the diagnosis as the trace's last line.
  void traceDiagnosis(ResolutionAccount &Account);

  KpackEnvironment Env;
  /// Guards the maps and the slots' Ready flags; never held across file
  /// I/O.
  mutable std::mutex Mutex;
  /// Notified when a slot becomes ready.
  std::condition_variable Opened;
  std::map<std::string, std::shared_ptr<Slot>> ByRequestedPath;
  std::map<std::string, std::shared_ptr<Slot>> ByCanonicalPath;
  std::atomic<uint64_t> PathLookups{0};
  std::atomic<uint64_t> ArchiveOpens{0};
  std::atomic<uint64_t> Loads{0};
  std::atomic<uint64_t> FailureChecks{0};
};

/// kpack_discover_binary_path: the file mapped at Address per /proc/self/maps
/// and the file offset that Address corresponds to.
Status discoverBinaryPath(const void *Address, std::string &Path,
                          uint64_t &Offset);

} // namespace kpack

#endif
