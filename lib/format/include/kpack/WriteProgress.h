//===- kpack/WriteProgress.h - Progress within the writer's phases -*- C++ -*-===//
//
// Long writes show how far they are within each phase on a terminal (issue
// 27 §6): "kpack split: writing archives: 120/777 entries, 410.2/1234.7 MiB",
// at most one line a second, nothing when stderr is not a terminal. The
// archive writer reports every entry it places (the event its --time-trace
// records as "Place"), every shared-segments batch it analyses and every
// segment it compresses to the process's sink; a tool's main installs the
// terminal sink (kpack and ld.kpack do, for every writer).
//
//===----------------------------------------------------------------------===//
#ifndef KPACK_WRITEPROGRESS_H
#define KPACK_WRITEPROGRESS_H

#include "llvm/ADT/StringRef.h"

#include <cstdint>
#include <functional>

namespace kpack {

struct WriteProgress {
  const char *Phase = "";  ///< "writing archives", ...
  const char *Unit = "entries";
  uint64_t Done = 0, Total = 0;
  uint64_t Bytes = 0;      ///< original bytes done
  uint64_t TotalBytes = 0; ///< 0: not known in advance
  bool Finished = false;   ///< the phase's last report
};

using WriteProgressSink = std::function<void(const WriteProgress &)>;

/// Sets the process's sink (empty: none). Not thread-safe: set it before
/// any write.
void setWriteProgressSink(WriteProgressSink Sink);
/// Whether a sink is set (reports cost nothing otherwise).
bool writeProgressEnabled();
/// Hands P to the sink, one report at a time (the writer's call, from any
/// thread).
void reportWriteProgress(const WriteProgress &P);

/// Installs a sink that prints "<Tool>: <phase>: D/T <unit>, B/TB MiB" on
/// stderr once a phase has run for a second, then at most once a second,
/// and the phase's last line; only if stderr is a terminal. The interval is
/// KPACK_PROGRESS_INTERVAL_MS when set (tests; docs/testing.md).
void enableTerminalWriteProgress(llvm::StringRef Tool);

} // namespace kpack

#endif
