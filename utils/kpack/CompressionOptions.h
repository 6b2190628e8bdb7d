//===- CompressionOptions.h - --compression, --level, --jobs ----*- C++ -*-===//
//
// The options of every subcommand that writes archives (convert, pack,
// merge, pack-db, split, split-wheel), defined once so that they are spelled,
// described and checked the same everywhere:
//   --compression=none|zstd|zstd-long|zstd-shared  (the TOC names
//                  zstd-per-kernel and zstd-shared-segments accepted too)
//   --level=N, alias --compression-level=N   zstd level, 1..22
//   --jobs=N, alias -j N                     threads (0, the default: all
//                                            cores)
// A bad value is a usage error (kpack/ToolCommandLine.h): an unknown scheme
// or a non-number when llvm::cl parses, a level out of range or with
// --compression=none in settings().
//
//===----------------------------------------------------------------------===//
#ifndef KPACK_UTILS_KPACK_COMPRESSIONOPTIONS_H
#define KPACK_UTILS_KPACK_COMPRESSIONOPTIONS_H

#include "kpack/Emission.h"
#include "kpack/ToolCommandLine.h"

#include "llvm/Support/CommandLine.h"

#include <optional>

namespace kpack {

/// --compression's values: the named schemes of CompressionSettings::parse,
/// its error for anything else.
class CompressionParser : public llvm::cl::parser<ArchiveCompression> {
public:
  using llvm::cl::parser<ArchiveCompression>::parser;
  bool parse(llvm::cl::Option &O, llvm::StringRef ArgName, llvm::StringRef Arg,
             ArchiveCompression &Value) {
    llvm::Expected<CompressionSettings> S =
        CompressionSettings::parse(Arg, std::nullopt);
    if (!S)
      return O.error(llvm::toString(S.takeError()), ArgName);
    Value = S->Scheme;
    return false;
  }
};

class CompressionOptions {
public:
  explicit CompressionOptions(
      llvm::cl::SubCommand &Sub,
      llvm::cl::OptionCategory &Category = llvm::cl::getGeneralCategory())
      : Compression("compression", llvm::cl::desc("Archive compression"),
                    llvm::cl::init(ArchiveCompression::ZstdPerKernel),
                    CompressionSettings::optionValues(), llvm::cl::sub(Sub),
                    llvm::cl::cat(Category)),
        Level("level", llvm::cl::desc(CompressionSettings::levelHelp()),
              llvm::cl::sub(Sub), llvm::cl::cat(Category)),
        LevelAlias("compression-level", llvm::cl::desc("Alias for --level"),
                   llvm::cl::aliasopt(Level), llvm::cl::NotHidden),
        Jobs("jobs", llvm::cl::desc("Threads (default: all cores)"),
             llvm::cl::value_desc("N"), llvm::cl::init(0), llvm::cl::sub(Sub),
             llvm::cl::cat(Category)),
        JobsShort("j", llvm::cl::desc("Alias for --jobs"),
                  llvm::cl::aliasopt(Jobs), llvm::cl::NotHidden) {}

  /// The scheme and level, checked by CompressionSettings::parse; its
  /// errors are usage errors.
  llvm::Expected<CompressionSettings> settings() const {
    llvm::Expected<CompressionSettings> S = CompressionSettings::parse(
        CompressionSettings::optionName(Compression),
        Level.getNumOccurrences() ? std::optional<int>(Level) : std::nullopt);
    if (!S)
      return asUsageError(S.takeError());
    return S;
  }
  /// --jobs: 0 for all cores.
  unsigned threads() const { return Jobs; }

private:
  llvm::cl::opt<ArchiveCompression, false, CompressionParser> Compression;
  llvm::cl::opt<int> Level;
  llvm::cl::alias LevelAlias;
  llvm::cl::opt<unsigned> Jobs;
  llvm::cl::alias JobsShort;
};

} // namespace kpack

#endif
