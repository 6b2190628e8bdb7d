//===- ConvertCommandLine.h - Options of kpack convert ----------*- C++ -*-===//
//
// The command line of the converter, shared by the `kpack convert`
// subcommand and `kpack` invoked as `kpack-convert` (top-level options, as
// llvm-strip is llvm-objcopy): one set of options registered in the given
// llvm::cl::SubCommand, and the driver logic over kpack::convertHostBinary.
//
//===----------------------------------------------------------------------===//
#ifndef KPACK_UTILS_CONVERTCOMMANDLINE_H
#define KPACK_UTILS_CONVERTCOMMANDLINE_H

#include "FrameCacheOption.h"
#include "TimeTraceOption.h"

#include "kpack/Convert.h"

#include "llvm/Support/CommandLine.h"
#include "llvm/Support/FileSystem.h"
#include "llvm/Support/Format.h"
#include "llvm/Support/Process.h"
#include "llvm/Support/WithColor.h"
#include "llvm/Support/raw_ostream.h"

#include <chrono>
#include <optional>
#include <string>

namespace kpack {

class ConvertCommandLine {
  using OptString = llvm::cl::opt<std::string>;

public:
  llvm::cl::OptionCategory Category{"Conversion options"};
  explicit ConvertCommandLine(llvm::cl::SubCommand &Sub, const char *ToolName)
      : ToolName(ToolName), Sub(Sub) {}

  const char *ToolName;
  llvm::cl::SubCommand &Sub;

  OptString Input{llvm::cl::Positional, llvm::cl::Required,
                  llvm::cl::desc("<fat host binary>"), llvm::cl::sub(Sub),
                  llvm::cl::cat(Category)};
  OptString Output{"o",
                   llvm::cl::Required,
                   llvm::cl::desc("Output host binary"),
                   llvm::cl::value_desc("file"),
                   llvm::cl::sub(Sub),
                   llvm::cl::cat(Category)};
  OptString KpackOutput{"kpack-output",
                        llvm::cl::desc("Write one multi-target archive"),
                        llvm::cl::value_desc("file"), llvm::cl::sub(Sub),
                        llvm::cl::cat(Category)};
  OptString KpackDir{"kpack-dir",
                     llvm::cl::desc("Write one archive per target ID, "
                                    "<name>_<target id>.kpack, into dir"),
                     llvm::cl::value_desc("dir"), llvm::cl::sub(Sub),
                     llvm::cl::cat(Category)};
  OptString KpackName{"kpack-name",
                      llvm::cl::desc("Kernel name of the TOC keys "
                                     "(default: the output's file name)"),
                      llvm::cl::sub(Sub), llvm::cl::cat(Category)};
  llvm::cl::list<std::string> SearchPaths{
      "kpack-search-path",
      llvm::cl::desc("Archive path embedded in the binary (repeatable; "
                     "default: the archives relative to the output)"),
      llvm::cl::sub(Sub), llvm::cl::cat(Category)};
  OptString Group{"group", llvm::cl::desc("TOC group_name"), llvm::cl::sub(Sub),
                  llvm::cl::cat(Category)};
  OptString Family{"family", llvm::cl::desc("TOC gfx_arch_family"),
                   llvm::cl::sub(Sub), llvm::cl::cat(Category)};
  llvm::cl::opt<ArchiveCompression> Compression{
      "compression", llvm::cl::desc("Archive compression"),
      llvm::cl::init(ArchiveCompression::ZstdPerKernel),
      CompressionSettings::optionValues(), llvm::cl::sub(Sub),
      llvm::cl::cat(Category)};
  llvm::cl::opt<int> Level{"level", llvm::cl::desc(kpack::CompressionSettings::levelHelp()),
                           llvm::cl::init(kpack::DefaultZstdLevel), llvm::cl::sub(Sub),
                           llvm::cl::cat(Category)};
  llvm::cl::opt<unsigned> Threads{
      "jobs", llvm::cl::desc("Compression threads (default: all cores)"),
      llvm::cl::init(0), llvm::cl::sub(Sub), llvm::cl::cat(Category)};
  llvm::cl::opt<bool> Quiet{"quiet", llvm::cl::desc("No summary on stdout"),
                            llvm::cl::sub(Sub), llvm::cl::cat(Category)};
  TimeTraceOption Trace{Sub, Category};
  FrameCacheOption Cache{Sub, Category};

  /// Runs the conversion; returns the process exit status (ConvertExitCode).
  int run() {
    return Trace.run(ToolName, Output, [this] { return convert(); });
  }

private:
  int convert() {
    using namespace llvm;
    ConvertOptions Opts;
    Opts.Input = Input;
    Opts.Output = Output;
    Opts.KpackOutput = KpackOutput;
    Opts.KpackDir = KpackDir;
    Opts.KernelName = KpackName;
    Opts.SearchPaths.assign(SearchPaths.begin(), SearchPaths.end());
    Opts.GroupName = Group;
    Opts.Family = Family;
    Opts.Threads = Threads;
    auto Settings = CompressionSettings::parse(
        CompressionSettings::optionName(Compression),
        Level.getNumOccurrences() ? std::optional<int>(Level) : std::nullopt);
    if (!Settings) {
      WithColor::error(errs(), ToolName)
          << toString(Settings.takeError()) << "\n";
      return ConvertExitError;
    }
    Opts.Compression = *Settings;
    if (Status S = Cache.open(Opts.Compression)) {
      WithColor::error(errs(), ToolName) << S.message() << "\n";
      return ConvertExitError;
    }
    // Progress only for a terminal and inputs large enough to wait for.
    uint64_t Size = 0;
    if (sys::Process::StandardErrIsDisplayed() &&
        !sys::fs::file_size(Opts.Input, Size) && Size >= (64u << 20))
      Opts.Progress = [this, Start = std::chrono::steady_clock::now()](
                          const std::string &Phase) {
        std::chrono::duration<double> T =
            std::chrono::steady_clock::now() - Start;
        errs() << ToolName << ": [" << format("%.1f", T.count()) << "s] "
               << Phase << "\n";
      };

    auto Result = convertHostBinary(Opts);
    if (!Result) {
      WithColor::error(errs(), ToolName) << toString(Result.takeError())
                                         << "\n";
      return ConvertExitError;
    }
    switch (Result->Outcome) {
    case ConvertOutcome::AlreadyConverted:
      WithColor::error(errs(), ToolName)
          << Opts.Input
          << ": already converted (its wrappers are HIPK); nothing written\n";
      return ConvertExitAlreadyConverted;
    case ConvertOutcome::NoDeviceCode:
      WithColor::error(errs(), ToolName)
          << Opts.Input << ": carries no device code; nothing written\n";
      return ConvertExitNoDeviceCode;
    case ConvertOutcome::Converted:
      break;
    }
    if (!Quiet) {
      outs() << "converted " << Opts.Input << " -> " << Opts.Output << ": "
             << Result->Wrappers << " wrappers, " << Result->Bundles
             << " bundles, " << Result->CodeObjects << " code objects, "
             << Result->InputBytes << " -> " << Result->OutputBytes
             << " bytes\n";
      for (const ConvertedArchive &A : Result->Archives) {
        outs() << "archive " << A.Path << ": " << A.Entries << " entries, "
               << A.OriginalBytes << " -> " << A.FileBytes << " bytes";
        if (A.Deduplicated)
          outs() << ", " << A.Deduplicated << " stored once with another";
        outs() << "\n";
      }
    }
    return ConvertExitOk;
  }
};

} // namespace kpack

#endif
