//===- kpack/TimeTrace.h - --time-trace of the writers ----------*- C++ -*-===//
//
// `--time-trace[=FILE]` of `kpack` and ld.kpack: LLVM's TimeTraceProfiler
// (Chrome trace JSON, as clang's -ftime-trace and lld's --time-trace). A tool
// starts a session on its main thread; the archive writer's worker threads
// join it for each piece of work they run (TimeTraceWorker), so that every
// thread's events are in the one file, each thread on its own row. The
// events are listed in docs/benchmarks.md ("Time traces").
//
// Without a session nothing is recorded and the scopes cost a thread-local
// load each.
//
//===----------------------------------------------------------------------===//
#ifndef KPACK_TIMETRACE_H
#define KPACK_TIMETRACE_H

#include "kpack/Error.h"

#include "llvm/ADT/StringRef.h"

#include <string>

namespace kpack {

/// The default granularity of every tool's --time-trace: every event is
/// recorded (the writer's model, bench/writer/trace_model.py, needs them
/// all; lld's default would drop frames shorter than 500 us).
constexpr unsigned DefaultTimeTraceGranularityUs = 0;

/// The file --time-trace writes when it names none: "<Output>.time-trace"
/// (lld's name), "-" for Output meaning the current directory's
/// "out.time-trace".
std::string defaultTimeTracePath(llvm::StringRef Output);

/// A --time-trace session: starts LLVM's profiler on the calling thread.
/// One at a time per process.
class TimeTraceSession {
public:
  TimeTraceSession(unsigned GranularityUs, llvm::StringRef ProcessName);
  ~TimeTraceSession();
  TimeTraceSession(const TimeTraceSession &) = delete;
  TimeTraceSession &operator=(const TimeTraceSession &) = delete;

  /// Writes every thread's events to Path, atomically. Call it on the
  /// thread that made the session, once no worker runs.
  Status write(const std::string &Path);
};

/// A worker thread's part of the session of the thread that handed it
/// work: Enabled is llvm::timeTraceProfilerEnabled() on that thread. The
/// worker's events are handed to the session when this ends.
class TimeTraceWorker {
public:
  explicit TimeTraceWorker(bool Enabled);
  ~TimeTraceWorker();
  TimeTraceWorker(const TimeTraceWorker &) = delete;
  TimeTraceWorker &operator=(const TimeTraceWorker &) = delete;

private:
  bool Joined = false;
};

} // namespace kpack

#endif
