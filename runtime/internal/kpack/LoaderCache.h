//===- kpack/LoaderCache.h - HIPK code-object loader ------------*- C++ -*-===//
//
// What kpack_load_code_object does for CLR (docs/FORMAT.md §3.2, §3.3): parse
// the HIPK metadata, expand and resolve the search paths, open archives lazily
// (each canonical path once, failures cached too) and return the code object
// for the first requested architecture that an archive provides.
//
//===----------------------------------------------------------------------===//
#ifndef KPACK_RUNTIME_LOADERCACHE_H
#define KPACK_RUNTIME_LOADERCACHE_H

#include "kpack/ApiError.h"
#include "kpack/HipkReference.h"

#include <atomic>
#include <cstdint>
#include <cstdio>
#include <map>
#include <memory>
#include <mutex>
#include <string>
#include <string_view>
#include <vector>

namespace kpack {

class ArchiveReader;

/// Drops the "amdgcn-amd-amdhsa--" prefix of a target ID, if present.
std::string_view stripTargetTriple(std::string_view Arch);

/// The environment, read once when a cache is created.
struct LoaderConfig {
  std::vector<std::string> PathOverride; // ROCM_KPACK_PATH
  std::vector<std::string> PathPrefix;   // ROCM_KPACK_PATH_PREFIX
  std::vector<std::string> ArchOverride; // ROCM_KPACK_ARCH_OVERRIDE
  bool Disabled = false;                 // ROCM_KPACK_DISABLE
  bool Debug = false;                    // ROCM_KPACK_DEBUG

  static LoaderConfig fromEnvironment();
};

/// Counters for tests and diagnostics.
struct LoaderStats {
  uint64_t PathLookups = 0;  // filesystem probes (realpath) of search paths
  uint64_t ArchiveOpens = 0; // ArchiveReader::open calls
  uint64_t Loads = 0;        // successful code-object loads
};

class LoaderCache {
public:
  explicit LoaderCache(LoaderConfig Config);
  ~LoaderCache();

  const LoaderConfig &config() const { return Config; }
  LoaderStats stats() const;

  /// Loads "<KernelName>#<CoIndex>" into a malloc'ed buffer.
  ApiError loadCodeObject(const HipkReference &Ref, std::string_view BinaryPath,
                          uint32_t CoIndex,
                          const std::vector<std::string> &Arches, void *&Data,
                          size_t &Size);

private:
  struct Slot;
  std::shared_ptr<Slot> archiveFor(const std::string &Path);
  void debug(const char *Format, ...) const
      __attribute__((format(printf, 2, 3)));

  LoaderConfig Config;
  mutable std::mutex Mutex;
  std::map<std::string, std::shared_ptr<Slot>> ByRequestedPath;
  std::map<std::string, std::shared_ptr<Slot>> ByCanonicalPath;
  std::atomic<uint64_t> PathLookups{0};
  std::atomic<uint64_t> ArchiveOpens{0};
  std::atomic<uint64_t> Loads{0};
};

/// kpack_discover_binary_path: the file mapped at Address per /proc/self/maps
/// and the file offset that Address corresponds to.
ApiError discoverBinaryPath(const void *Address, std::string &Path,
                            uint64_t &Offset);

} // namespace kpack

#endif
