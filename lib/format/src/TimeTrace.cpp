//===- TimeTrace.cpp - --time-trace of the writers ------------------------===//

#include "kpack/TimeTrace.h"

#include "kpack/AtomicFile.h"

#include "llvm/ADT/SmallString.h"
#include "llvm/Support/TimeProfiler.h"
#include "llvm/Support/raw_ostream.h"

#include <atomic>
#include <mutex>
#include <string>

using namespace kpack;

namespace {
// What workers join a session with: the granularity and process name of
// the session (or, for a profiler some other code started, e.g. lld's,
// every event and "kpack").
std::atomic<unsigned> SessionGranularity{DefaultTimeTraceGranularityUs};
std::mutex SessionNameLock;
std::string SessionName = "kpack";
} // namespace

std::string kpack::defaultTimeTracePath(llvm::StringRef Output) {
  return (Output == "-" ? std::string("out") : Output.str()) + ".time-trace";
}

TimeTraceSession::TimeTraceSession(unsigned GranularityUs,
                                   llvm::StringRef ProcessName) {
  SessionGranularity = GranularityUs;
  {
    std::lock_guard<std::mutex> Lock(SessionNameLock);
    SessionName = ProcessName.str();
  }
  llvm::timeTraceProfilerInitialize(GranularityUs, ProcessName);
}

TimeTraceSession::~TimeTraceSession() { llvm::timeTraceProfilerCleanup(); }

Status TimeTraceSession::write(const std::string &Path) {
  llvm::SmallString<0> Json;
  llvm::raw_svector_ostream OS(Json);
  llvm::timeTraceProfilerWrite(OS);
  return writeFileAtomically(Path, Json.data(), Json.size());
}

TimeTraceWorker::TimeTraceWorker(bool Enabled) {
  // A thread that has a profiler already (the session's own, when the work
  // runs on the calling thread) records into it.
  if (!Enabled || llvm::timeTraceProfilerEnabled())
    return;
  std::string Name;
  {
    std::lock_guard<std::mutex> Lock(SessionNameLock);
    Name = SessionName;
  }
  llvm::timeTraceProfilerInitialize(SessionGranularity, Name);
  Joined = true;
}

TimeTraceWorker::~TimeTraceWorker() {
  if (Joined)
    llvm::timeTraceProfilerFinishThread();
}
