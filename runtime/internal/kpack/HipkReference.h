//===- kpack/HipkReference.h - HIPK wrapper metadata ------------*- C++ -*-===//
//
// The one parser of FORMAT.md §3.2's msgpack map
//   {"kernel_name": str, "kpack_search_paths": [str, ...]}
// used by the loader and, through kpack_format's decodeKpackMetadata, by the
// tools. No LLVM, no exceptions out of it except std::bad_alloc.
//
//===----------------------------------------------------------------------===//
#ifndef KPACK_RUNTIME_HIPKREFERENCE_H
#define KPACK_RUNTIME_HIPKREFERENCE_H

#include "kpack/ApiError.h"

#include <cstddef>
#include <string>
#include <vector>

namespace kpack {

struct HipkReference {
  std::string KernelName;
  std::vector<std::string> SearchPaths;
};

/// What a reader of the map insists on beyond both keys with the right types
/// and at least one search path (unknown keys are always ignored).
enum class HipkParseMode {
  /// kpack_load_code_object: non-string keys are skipped and a repeated key's
  /// last value wins, but the kernel name and every search path must be
  /// non-empty, since nothing could be loaded with them.
  Loader,
  /// The tools: keys must be strings and appear once; empty strings are
  /// reported as they are.
  Strict,
};

/// Parses one msgpack map from Data, reading at most MaxSize bytes (and no
/// byte past the end of the map); Consumed (if given) receives the map's
/// size. Any problem is KPACK_ERROR_INVALID_METADATA.
ApiError parseHipkReference(const void *Data, size_t MaxSize,
                            HipkReference &Out,
                            HipkParseMode Mode = HipkParseMode::Loader,
                            size_t *Consumed = nullptr);

} // namespace kpack

#endif
