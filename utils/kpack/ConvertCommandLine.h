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
#include "CompressionOptions.h"
#include "TimeTraceOption.h"

#include "kpack/Convert.h"
#include "kpack/LLVMError.h"
#include "kpack/ToolCommandLine.h"

#include "llvm/Support/CommandLine.h"
#include "llvm/Support/FileSystem.h"
#include "llvm/Support/Format.h"
#include "llvm/Support/JSON.h"
#include "llvm/Support/Process.h"
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
  CompressionOptions Compression{Sub, Category};
  llvm::cl::opt<bool> Quiet{"quiet", llvm::cl::desc("No summary on stdout"),
                            llvm::cl::sub(Sub), llvm::cl::cat(Category)};
  TimeTraceOption Trace{Sub, Category};
  FrameCacheOption Cache{Sub, Category};
  llvm::cl::opt<bool> Json{
      "json", llvm::cl::desc("The summary as JSON (docs/convert.md)"),
      llvm::cl::sub(Sub), llvm::cl::cat(Category)};

  /// Runs the conversion; returns the process exit status
  /// (kpack::ToolExitStatus).
  int run() {
    return Trace.run(ToolName, Output, [this] { return convert(); });
  }

private:
  int convert() {
    using namespace llvm;
    if (KpackOutput.empty() == KpackDir.empty())
      return reportUsageError(ToolName, "exactly one of --kpack-output and "
                                        "--kpack-dir is required");
    if (Json && Quiet)
      return reportUsageError(ToolName,
                              "--json and --quiet exclude each other");
    ConvertOptions Opts;
    Opts.Input = Input;
    Opts.Output = Output;
    Opts.KpackOutput = KpackOutput;
    Opts.KpackDir = KpackDir;
    Opts.KernelName = KpackName;
    Opts.SearchPaths.assign(SearchPaths.begin(), SearchPaths.end());
    Opts.GroupName = Group;
    Opts.Family = Family;
    Opts.Threads = Compression.threads();
    auto Settings = Compression.settings();
    if (!Settings)
      return reportToolError(ToolName, Settings.takeError());
    Opts.Compression = *Settings;
    if (Status S = Cache.open(Opts.Compression))
      return reportUsageError(ToolName, S.message());
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
    if (!Result)
      return reportToolError(ToolName, Result.takeError());
    switch (Result->Outcome) {
    case ConvertOutcome::AlreadyConverted:
      return reportToolError(
          ToolName, makeError(Opts.Input + ": already converted (its wrappers "
                                           "are HIPK); nothing written"));
    case ConvertOutcome::NoDeviceCode:
      return reportToolError(ToolName,
                             makeError(Opts.Input + ": carries no device "
                                                    "code; nothing written"));
    case ConvertOutcome::Converted:
      break;
    }
    if (Json)
      printJson(Opts, *Result);
    else if (!Quiet)
      printText(Opts, *Result);
    return ToolExitOk;
  }

private:
  static void printText(const ConvertOptions &Opts, const ConvertResult &R) {
    using namespace llvm;
    outs() << "converted " << Opts.Input << " -> " << Opts.Output << ": "
           << R.Wrappers << " wrappers, " << R.Bundles << " bundles, "
           << R.CodeObjects << " code objects, " << R.InputBytes << " -> "
           << R.OutputBytes << " bytes\n";
    for (const ConvertedArchive &A : R.Archives) {
      outs() << "archive " << A.Path << ": " << A.Entries << " entries, "
             << A.OriginalBytes << " -> " << A.FileBytes << " bytes";
      if (A.Deduplicated)
        outs() << ", " << A.Deduplicated << " stored once with another";
      outs() << "\n";
    }
  }

  /// The keys are documented in docs/convert.md ("--json").
  static void printJson(const ConvertOptions &Opts, const ConvertResult &R) {
    llvm::json::OStream J(llvm::outs(), 2);
    J.object([&] {
      J.attribute("input", Opts.Input);
      J.attribute("output", Opts.Output);
      J.attribute("wrappers", R.Wrappers);
      J.attribute("bundles", R.Bundles);
      J.attribute("code_objects", R.CodeObjects);
      J.attribute("input_bytes", R.InputBytes);
      J.attribute("output_bytes", R.OutputBytes);
      J.attributeArray("archives", [&] {
        for (const ConvertedArchive &A : R.Archives)
          J.object([&] {
            J.attribute("path", A.Path);
            J.attribute("entries", A.Entries);
            J.attribute("original_bytes", A.OriginalBytes);
            J.attribute("file_bytes", A.FileBytes);
            J.attribute("deduplicated", A.Deduplicated);
          });
      });
    });
    llvm::outs() << "\n";
  }
};

} // namespace kpack

#endif
