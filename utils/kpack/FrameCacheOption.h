//===- FrameCacheOption.h - --cache-dir/--cache-policy of writers -*- C++ -*-===//
//
// `--cache-dir=DIR` and `--cache-policy=POLICY` of the subcommands that
// compress code objects into archives (convert, split): the compressed-frame
// cache of kpack/FrameCache.h, as ld.kpack's --kpack-cache-dir and
// --kpack-cache-policy (lld's --thinlto-cache-policy syntax). The one
// definition of these options; a subcommand constructs one and calls open().
//
//===----------------------------------------------------------------------===//
#ifndef KPACK_UTILS_KPACK_FRAMECACHEOPTION_H
#define KPACK_UTILS_KPACK_FRAMECACHEOPTION_H

#include "kpack/Emission.h"
#include "kpack/FrameCache.h"

#include "llvm/Support/CommandLine.h"

#include <string>

namespace kpack {

class FrameCacheOption {
public:
  explicit FrameCacheOption(
      llvm::cl::SubCommand &Sub,
      llvm::cl::OptionCategory &Category = llvm::cl::getGeneralCategory())
      : Dir("cache-dir",
            llvm::cl::desc("Keep compressed code objects in <dir> and take "
                           "them from there when the same code object is "
                           "compressed with the same settings again "
                           "(default: no cache)"),
            llvm::cl::value_desc("dir"), llvm::cl::sub(Sub),
            llvm::cl::cat(Category)),
        Policy("cache-policy",
               llvm::cl::desc("Pruning of --cache-dir, lld's "
                              "--thinlto-cache-policy syntax (e.g. "
                              "prune_after=24h:cache_size_bytes=1g)"),
               llvm::cl::value_desc("policy"), llvm::cl::sub(Sub),
               llvm::cl::cat(Category)) {}

  llvm::cl::opt<std::string> Dir;
  llvm::cl::opt<std::string> Policy;

  /// Opens the cache into Settings.Cache when --cache-dir was given; the
  /// error names the option.
  Status open(CompressionSettings &Settings) const {
    if (Dir.empty()) {
      if (Policy.getNumOccurrences())
        return Status::error("--cache-policy needs --cache-dir");
      return Status::ok();
    }
    if (Status S = FrameCache::open(Dir, Policy, Settings.Cache))
      return Status::error("--cache-dir: " + S.message());
    return Status::ok();
  }
};

} // namespace kpack

#endif
