//===- LinkOptions.h - ld.kpack command line ---------------------*- C++ -*-===//
//
// ld.kpack accepts lld's GNU command line plus a few --kpack-* options. This
// splits the two: the kpack options are consumed here and never reach lld,
// and the rest is kept verbatim, in order, for lld::lldMain.
//
//===----------------------------------------------------------------------===//
#ifndef KPACK_LLD_LINKOPTIONS_H
#define KPACK_LLD_LINKOPTIONS_H

#include "llvm/ADT/StringRef.h"
#include "llvm/Support/Error.h"

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

namespace kpack {
namespace link {

struct KpackOptions {
  /// --kpack-output=FILE: one archive holding every target.
  std::string OutputArchive;
  /// --kpack-dir=DIR: one archive per target, <name>_<target id>.kpack.
  std::string OutputDir;
  /// --kpack-name=NAME: TOC kernel name (default: output file name).
  std::string KernelName;
  /// --kpack-search-path=PATH (repeatable): overrides the computed paths.
  std::vector<std::string> SearchPaths;
  /// --kpack-group= / --kpack-family=: TOC group_name / gfx_arch_family.
  std::string Group;
  std::string Family;
  /// --kpack-compression=SCHEME (the --compression values of every writer)
  /// and --kpack-compression-level=N (0 = no compression when no scheme is
  /// named); checked by the one check of every writer when the emission is
  /// planned (planEmission).
  std::string Compression;
  std::optional<int> CompressionLevel;
  /// --kpack-jobs=N: compression threads, as every writer's --jobs (unset or
  /// 0: all cores).
  std::optional<unsigned> Jobs;
  /// --kpack-metadata-room=BYTES: .rocm_kpack_ref holds at least this many
  /// bytes, so that the metadata can later be rewritten in place
  /// (`kpack split` adopting the binary; EmittedHostBinary::withMetadata).
  std::optional<uint64_t> MetadataRoom;
  /// --time-trace[=FILE] and --time-trace-granularity=US, lld's spellings:
  /// with --kpack-output/--kpack-dir ld.kpack records the whole link, lld's
  /// events among its own (kpack/TimeTrace.h), to FILE (empty: the
  /// output's name + ".time-trace"); otherwise they go to lld as they are.
  std::optional<std::string> TimeTrace;
  unsigned TimeTraceGranularity = 0;
  /// --kpack-cache-dir=DIR and --kpack-cache-policy=POLICY (lld's
  /// --thinlto-cache-policy syntax): the compressed-frame cache of
  /// incremental links (kpack/FrameCache.h); the policy is checked here.
  std::string CacheDir;
  std::string CachePolicy;

  bool emitsArchives() const {
    return !OutputArchive.empty() || !OutputDir.empty();
  }
};

/// What ld.kpack needs to know about lld's own arguments.
struct LinkerArgs {
  /// Everything except the --kpack-* options, argv[0] excluded.
  std::vector<std::string> Args;
  /// -o value ("a.out" if absent).
  std::string Output = "a.out";
  /// Index in Args of the -o value (every spelling is normalized to
  /// "-o PATH"); unset if there is no -o.
  std::optional<size_t> OutputIndex;
  bool Relocatable = false; ///< -r / --relocatable
  /// An MSVC-style link (ld.kpack run as `lld-link`): lld's COFF driver,
  /// the output named by "-out:PATH".
  bool LldLink = false;

  /// The same arguments writing to Path instead.
  LinkerArgs withOutput(llvm::StringRef Path) const;
  /// A GNU-style link for a PE target (lld's rule: the -m emulation is
  /// i386pe, i386pep, thumb2pe, arm64pe, ...), which lld runs with its MinGW
  /// driver.
  bool isMinGW() const;
};

struct ParsedCommandLine {
  KpackOptions Kpack;
  LinkerArgs Linker;
};

/// Splits Argv (argv[0] excluded, response files already expanded).
llvm::Expected<ParsedCommandLine>
parseCommandLine(const std::vector<std::string> &Argv);

/// The same for ld.kpack run as `lld-link` (MSVC style, docs/ld-kpack.md):
/// the kpack options are "/kpack-NAME:VALUE" or "-kpack-NAME:VALUE" (or the
/// GNU spellings), everything else goes to lld-link as it is; the output is
/// the last "/out:" or "-out:" (any case), normalized to "-out:PATH".
llvm::Expected<ParsedCommandLine>
parseLldLinkCommandLine(const std::vector<std::string> &Argv);

/// How an lld argument is laid out, so inputs can be found without lld's
/// private option table.
enum class ArgKind {
  Input,      ///< a positional input file
  Flag,       ///< an option with no separate value
  WithValue,  ///< an option whose value is the next argument
};

/// Classifies Arg. Options taking a separate value that are unknown here are
/// classified as flags; their value is then seen as a positional input, which
/// is harmless because only relocatable objects and archives that carry
/// device code are acted upon.
ArgKind classifyLinkerArg(llvm::StringRef Arg);

} // namespace link
} // namespace kpack

#endif
