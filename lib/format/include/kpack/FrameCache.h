//===- kpack/FrameCache.h - Compressed frames kept between runs -*- C++ -*-===//
//
// The compressed-frame cache of incremental links (ld.kpack
// --kpack-cache-dir, `kpack convert`/`split` --cache-dir): a code object
// compressed once is not compressed again by a later run with the same
// settings. An entry is keyed by llvm::xxh3_128bits over the code object's
// bytes and what makes its frame (scheme, level, format version, the zstd
// library's version), 32 hex digits; its value is the frame exactly as the
// writer makes it, so that archives are byte-identical with and without the
// cache.
//
// An entry is a file "llvmcache-kpack-<key>" (the prefix LLVM's pruneCache
// considers): a 40-byte header (magic, the key, the frame's size, the
// frame's xxh3_64bits) and the frame. It is written to a temporary file in
// the directory and renamed over the name, so that concurrent runs sharing
// the directory never corrupt an entry and a reader never sees a partial
// one; an entry whose header does not match (truncated, corrupt, another
// key) is a miss, and the run writes it again. A cache failure never fails
// a run: the frame is then compressed as without a cache.
//
// The cache is pruned, when the last reference to it goes, by
// llvm::pruneCache with a policy in lld's --thinlto-cache-policy syntax
// (llvm::parseCachePruningPolicy: prune_after=, cache_size=,
// cache_size_bytes=, cache_size_files=, prune_interval=).
//
//===----------------------------------------------------------------------===//
#ifndef KPACK_FRAMECACHE_H
#define KPACK_FRAMECACHE_H

#include "kpack/Error.h"

#include "llvm/ADT/SmallVector.h"
#include "llvm/ADT/StringRef.h"
#include "llvm/Support/CachePruning.h"

#include <array>
#include <atomic>
#include <cstddef>
#include <cstdint>
#include <memory>
#include <string>

namespace kpack {

class FrameCache {
public:
  using Key = std::array<uint8_t, 16>;

  /// Checks Policy (lld's syntax; empty: LLVM's defaults) as a one-line
  /// error naming it.
  static Status parsePolicy(llvm::StringRef Policy,
                            llvm::CachePruningPolicy &Out);
  /// The cache in directory Dir (created if missing), pruned with Policy
  /// when the last reference goes.
  static Status open(llvm::StringRef Dir, llvm::StringRef Policy,
                     std::shared_ptr<FrameCache> &Out);
  ~FrameCache();
  FrameCache(const FrameCache &) = delete;
  FrameCache &operator=(const FrameCache &) = delete;

  /// The key of a code object's frame: Salt names everything besides the
  /// bytes that the frame depends on (the writer's frameSalt()).
  static Key keyOf(const uint8_t *Data, size_t Size, llvm::StringRef Salt);
  /// The 32 hex digits of a key.
  static std::string hex(const Key &K);
  /// The entry file of key K.
  std::string pathOf(const Key &K) const;

  /// Appends the frame cached for K to Frame; false (Frame as it was) when
  /// there is none or the entry is not valid.
  bool lookup(const Key &K, llvm::SmallVectorImpl<uint8_t> &Frame);
  /// Stores the frame of K (replacing any entry); failures are ignored.
  void store(const Key &K, const uint8_t *Frame, size_t Size);

  /// What this process did with the cache.
  struct Counters {
    uint64_t Hits = 0, Misses = 0, Invalid = 0, Stored = 0;
  };
  Counters counters() const {
    return {Hits.load(), Misses.load(), Invalid.load(), Stored.load()};
  }
  const std::string &directory() const { return Dir; }

private:
  FrameCache(std::string Dir, llvm::CachePruningPolicy Policy)
      : Dir(std::move(Dir)), Policy(Policy) {}
  std::string Dir;
  llvm::CachePruningPolicy Policy;
  std::atomic<uint64_t> Hits{0}, Misses{0}, Invalid{0}, Stored{0};
};

} // namespace kpack

#endif
