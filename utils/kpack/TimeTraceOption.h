//===- TimeTraceOption.h - --time-trace of the writing subcommands -*- C++ -*-===//
//
// `--time-trace[=FILE]` and `--time-trace-granularity=US` of every subcommand
// that writes archives (convert, split, split-wheel, pack, merge, pack-db),
// as clang's -ftime-trace and lld's --time-trace: a Chrome trace of the run,
// every writer thread on its own row (kpack/TimeTrace.h; the events are
// listed in docs/benchmarks.md, "Time traces").
//
//===----------------------------------------------------------------------===//
#ifndef KPACK_UTILS_KPACK_TIMETRACEOPTION_H
#define KPACK_UTILS_KPACK_TIMETRACEOPTION_H

#include "kpack/TimeTrace.h"

#include "llvm/ADT/STLFunctionalExtras.h"
#include "llvm/Support/CommandLine.h"
#include "llvm/Support/TimeProfiler.h"
#include "llvm/Support/WithColor.h"
#include "llvm/Support/raw_ostream.h"

#include <optional>
#include <string>

namespace kpack {

class TimeTraceOption {
public:
  explicit TimeTraceOption(
      llvm::cl::SubCommand &Sub,
      llvm::cl::OptionCategory &Category = llvm::cl::getGeneralCategory())
      : File("time-trace", llvm::cl::ValueOptional,
             llvm::cl::desc("Record a Chrome trace of the run (every read, "
                            "hash, frame and write, per thread) to <file>, "
                            "default <output>.time-trace"),
             llvm::cl::value_desc("file"), llvm::cl::sub(Sub),
             llvm::cl::cat(Category)),
        Granularity("time-trace-granularity",
                    llvm::cl::desc("Leave out --time-trace events shorter "
                                   "than this many microseconds (default 0)"),
                    llvm::cl::init(DefaultTimeTraceGranularityUs),
                    llvm::cl::value_desc("us"), llvm::cl::sub(Sub),
                    llvm::cl::cat(Category)) {}

  llvm::cl::opt<std::string> File;
  llvm::cl::opt<unsigned> Granularity;

  /// Runs Body, within a --time-trace session if one was asked for; when
  /// Body succeeds (0) the trace goes to its file (defaultTimeTracePath of
  /// Output unless named). Returns Body's status, or 1 if the trace cannot
  /// be written.
  int run(llvm::StringRef Tool, llvm::StringRef Output,
          llvm::function_ref<int()> Body) {
    if (!File.getNumOccurrences())
      return Body();
    std::optional<TimeTraceSession> Session;
    Session.emplace(Granularity, Tool);
    int Status;
    {
      llvm::TimeTraceScope Whole(Tool);
      Status = Body();
    }
    if (Status != 0)
      return Status;
    std::string Path =
        File.empty() ? defaultTimeTracePath(Output) : File.getValue();
    if (kpack::Status S = Session->write(Path)) {
      llvm::WithColor::error(llvm::errs(), Tool)
          << "cannot write the time trace: " << S.message() << "\n";
      return 1;
    }
    return 0;
  }
};

} // namespace kpack

#endif
