//===- kpack/WriteSchedule.h - When the writer's threads start entries -*- C++ -*-===//
//
// The rule by which the archive writer's threads take the entries of a pass
// (ArchiveWriter::writeArchives, WriterFrames.cpp), kept apart from the
// threads so that it can be tested, and replayed by bench/writer/
// trace_model.py, on its own.
//
// Entries are placed in the archive in their order (ordinals, offsets,
// deduplication), whatever order the threads compress them in; the bytes
// written never depend on this schedule. What it decides is when each entry
// starts:
//
// - Order. With one thread, in entry order. With N threads, by the latest
//   time each could start and still be done when the entries before it
//   are: entry i (cost c_i, the costs before it summing to B_i) gets the key
//   B_i / N - c_i, and the smallest key starts first (ties: entry order).
//   Small entries therefore run in entry order while a large one starts
//   early enough, about N x c_i bytes of work ahead, that the threads never
//   wait for it at the end: there are no batches and no barriers.
// - Memory. An entry's charge (the bytes its read puts in the writer's
//   buffers) is held from its start until its work is done; from then its
//   result (a frame, or raw bytes kept) is held until it is written. A new
//   entry starts only while what is held, with its charge, stays within the
//   budget, or when nothing is held; the first entry not started, once
//   every entry before it is done, starts regardless (so that the archive
//   always moves on). Held bytes are bounded by the budget plus one entry
//   per thread: never by the number of entries.
//
//===----------------------------------------------------------------------===//
#ifndef KPACK_WRITESCHEDULE_H
#define KPACK_WRITESCHEDULE_H

#include <cstddef>
#include <cstdint>
#include <vector>

namespace kpack {

class WriteSchedule {
public:
  struct Entry {
    uint64_t Cost = 0;   ///< its work, in bytes (the size hint)
    uint64_t Charge = 0; ///< bytes its read holds in the writer's buffers
  };
  static constexpr size_t None = ~size_t(0);

  WriteSchedule(std::vector<Entry> Entries, unsigned Threads,
                uint64_t Budget);

  /// The entry to start now, or None: nothing may start until finished()
  /// or released() is called (or everything has started).
  size_t next();
  /// Entry I's work is done: its charge is released and Held bytes (its
  /// frame, or raw bytes kept for the write) are held until released(I).
  void finished(size_t I, uint64_t Held);
  /// Entry I's result is written: what finished() charged is released.
  void released(size_t I);

  size_t size() const { return Entries.size(); }
  bool allStarted() const { return Started == Entries.size(); }
  /// Bytes held now, and the most held at once so far.
  uint64_t held() const { return Held; }
  uint64_t peakHeld() const { return PeakHeld; }
  /// The start order (without the memory rule), for tests and tools.
  const std::vector<size_t> &order() const { return Order; }

private:
  std::vector<Entry> Entries;
  std::vector<uint64_t> HeldBy; ///< what each entry holds now
  std::vector<uint8_t> State;   ///< 0 waiting, 1 running, 2 done
  std::vector<size_t> Order;    ///< start order
  size_t NextInOrder = 0;       ///< first of Order maybe not started
  size_t FirstWaiting = 0;      ///< first entry (entry order) not started
  size_t FirstNotDone = 0;      ///< first entry (entry order) not done
  size_t Started = 0;
  uint64_t Budget;
  uint64_t Held = 0, PeakHeld = 0;

  void start(size_t I);
};

} // namespace kpack

#endif
