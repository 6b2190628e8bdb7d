//===- WriteProgress.cpp - Progress within the writer's phases ------------===//

#include "kpack/WriteProgress.h"

#include "llvm/Support/Format.h"
#include "llvm/Support/Process.h"
#include "llvm/Support/raw_ostream.h"

#include <chrono>
#include <cstdlib>
#include <memory>
#include <mutex>
#include <string>

using namespace kpack;

namespace {
std::mutex SinkLock;
WriteProgressSink &sink() {
  static WriteProgressSink S;
  return S;
}
} // namespace

void kpack::setWriteProgressSink(WriteProgressSink Sink) {
  sink() = std::move(Sink);
}

bool kpack::writeProgressEnabled() { return static_cast<bool>(sink()); }

void kpack::reportWriteProgress(const WriteProgress &P) {
  if (!sink())
    return;
  std::lock_guard<std::mutex> Lock(SinkLock);
  sink()(P);
}

void kpack::enableTerminalWriteProgress(llvm::StringRef Tool) {
  if (!llvm::sys::Process::StandardErrIsDisplayed())
    return;
  using Clock = std::chrono::steady_clock;
  std::chrono::milliseconds Interval(1000);
  if (const char *Env = std::getenv("KPACK_PROGRESS_INTERVAL_MS"))
    Interval = std::chrono::milliseconds(std::strtoul(Env, nullptr, 10));
  struct State {
    std::string Phase; ///< of the last report
    bool Ended = true; ///< the last report ended its phase
    Clock::time_point Start, Last;
    bool Printed = false;
  };
  auto S = std::make_shared<State>();
  setWriteProgressSink([S, Interval, Tool = Tool.str()](const WriteProgress &P) {
    Clock::time_point Now = Clock::now();
    if (S->Ended || S->Phase != P.Phase) { // a new phase
      S->Phase = P.Phase;
      S->Start = S->Last = Now;
      S->Printed = false;
    }
    S->Ended = P.Finished;
    bool Due = Now - (S->Printed ? S->Last : S->Start) >= Interval;
    if (!(Due || (P.Finished && S->Printed)))
      return;
    S->Last = Now;
    S->Printed = true;
    llvm::raw_ostream &OS = llvm::errs();
    OS << Tool << ": " << P.Phase << ": " << P.Done << "/" << P.Total << " "
       << P.Unit << ", " << llvm::format("%.1f", P.Bytes / 1048576.0);
    if (P.TotalBytes)
      OS << "/" << llvm::format("%.1f", P.TotalBytes / 1048576.0);
    OS << " MiB\n";
    OS.flush();
  });
}
