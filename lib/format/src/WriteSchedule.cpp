//===- WriteSchedule.cpp - When the writer's threads start entries --------===//

#include "kpack/WriteSchedule.h"

#include <algorithm>
#include <numeric>

using namespace kpack;

WriteSchedule::WriteSchedule(std::vector<Entry> E, unsigned Threads,
                             uint64_t Budget)
    : Entries(std::move(E)), HeldBy(Entries.size()), State(Entries.size()),
      Order(Entries.size()), Budget(Budget) {
  std::iota(Order.begin(), Order.end(), size_t(0));
  if (Threads <= 1)
    return;
  // Key B_i / N - c_i, in doubles as bench/writer/trace_model.py computes
  // it (the order only moves time, never bytes).
  std::vector<double> Key(Entries.size());
  double Before = 0;
  for (size_t I = 0; I < Entries.size(); ++I) {
    Key[I] = Before / Threads - static_cast<double>(Entries[I].Cost);
    Before += static_cast<double>(Entries[I].Cost);
  }
  std::sort(Order.begin(), Order.end(), [&](size_t A, size_t B) {
    return Key[A] != Key[B] ? Key[A] < Key[B] : A < B;
  });
}

void WriteSchedule::start(size_t I) {
  State[I] = 1;
  HeldBy[I] = Entries[I].Charge;
  Held += HeldBy[I];
  PeakHeld = std::max(PeakHeld, Held);
  ++Started;
}

size_t WriteSchedule::next() {
  if (allStarted())
    return None;
  while (State[Order[NextInOrder]] != 0)
    ++NextInOrder;
  size_t Candidate = Order[NextInOrder];
  if (Held == 0 || Held + Entries[Candidate].Charge <= Budget) {
    start(Candidate);
    return Candidate;
  }
  // Over the budget: the first entry not started may still start once
  // every entry before it is done, so that the archive moves on.
  while (State[FirstWaiting] != 0)
    ++FirstWaiting;
  while (FirstNotDone < State.size() && State[FirstNotDone] == 2)
    ++FirstNotDone;
  if (FirstWaiting != FirstNotDone)
    return None;
  start(FirstWaiting);
  return FirstWaiting;
}

void WriteSchedule::finished(size_t I, uint64_t HeldAfter) {
  State[I] = 2;
  Held = Held - HeldBy[I] + HeldAfter;
  HeldBy[I] = HeldAfter;
  PeakHeld = std::max(PeakHeld, Held);
}

void WriteSchedule::released(size_t I) {
  Held -= HeldBy[I];
  HeldBy[I] = 0;
}
