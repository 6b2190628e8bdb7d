//===- WriteScheduleTest.cpp - kpack::WriteSchedule -----------------------===//

#include "kpack/WriteSchedule.h"

#include <gtest/gtest.h>

#include <random>

using namespace kpack;

namespace {

std::vector<WriteSchedule::Entry> costs(std::vector<uint64_t> C,
                                        bool Charged = false) {
  std::vector<WriteSchedule::Entry> E;
  for (uint64_t X : C)
    E.push_back({X, Charged ? X : 0});
  return E;
}

std::vector<size_t> startAll(WriteSchedule &S) {
  std::vector<size_t> Got;
  for (size_t I; (I = S.next()) != WriteSchedule::None;)
    Got.push_back(I);
  return Got;
}

// One thread: entry order, whatever the sizes.
TEST(WriteSchedule, OneThreadStartsInEntryOrder) {
  WriteSchedule S(costs({5, 100, 1, 70, 3}), 1, 1000);
  EXPECT_EQ(startAll(S), (std::vector<size_t>{0, 1, 2, 3, 4}));
}

// N threads: key B_i / N - c_i. Small entries go in entry order; a large
// one starts as soon as the work before it, shared by the threads, is less
// than its own, i.e. early enough to be done when they are.
TEST(WriteSchedule, LargeEntriesStartEarlyEnough) {
  // Costs 10 x 8, then 100 at entry 8, then 10 x 4. With 4 threads the
  // large entry's key is 80/4 - 100 = -80: first; the entries after it
  // follow those before it.
  std::vector<uint64_t> C(8, 10);
  C.push_back(100);
  C.insert(C.end(), 4, 10);
  WriteSchedule S(costs(C), 4, 1 << 20);
  EXPECT_EQ(S.order(), (std::vector<size_t>{8, 0, 1, 2, 3, 4, 5, 6, 7, 9, 10,
                                            11, 12}));
  // With 2 threads a 30 at entry 8 has the key 80/2 - 30 = 10, entry 4's
  // (40/2 - 10): it follows entry 4 (ties go in entry order), three entries
  // early.
  C[8] = 30;
  WriteSchedule T(costs(C), 2, 1 << 20);
  EXPECT_EQ(T.order(), (std::vector<size_t>{0, 1, 2, 3, 4, 8, 5, 6, 7, 9, 10,
                                            11, 12}));
}

// No batches, no barrier: while memory allows, a thread that is free gets
// an entry, however far behind the slowest running one is.
TEST(WriteSchedule, NoBarrierBehindASlowEntry) {
  WriteSchedule S(costs(std::vector<uint64_t>(100, 1)), 2, 1 << 20);
  size_t Slow = S.next();
  EXPECT_EQ(Slow, 0u);
  for (size_t I = 1; I < 100; ++I) {
    size_t K = S.next();
    ASSERT_EQ(K, I);
    S.finished(K, 1); // its frame waits for entry 0
  }
  EXPECT_TRUE(S.allStarted());
  EXPECT_EQ(S.held(), 99u);
}

// The memory rule: charges and held results stay within the budget; the
// first entry not started starts regardless once all before it are done,
// so the pass always moves on.
TEST(WriteSchedule, MemoryBudget) {
  WriteSchedule S(costs({40, 40, 40, 40}, /*Charged=*/true), 4, 100);
  EXPECT_EQ(S.next(), 0u);
  EXPECT_EQ(S.next(), 1u);
  EXPECT_EQ(S.next(), WriteSchedule::None); // 120 > 100
  S.finished(1, 30);                        // 40 + 30 held
  EXPECT_EQ(S.next(), WriteSchedule::None); // 70 + 40 > 100
  S.finished(0, 30);                        // 60 held, 0 and 1 done
  EXPECT_EQ(S.next(), 2u);                  // 100
  S.finished(2, 90);                        // 150 held, all before 3 done
  EXPECT_EQ(S.next(), 3u);                  // the exemption
  EXPECT_EQ(S.next(), WriteSchedule::None);
  S.released(0);
  S.released(1);
  EXPECT_EQ(S.held(), 130u);
  EXPECT_EQ(S.peakHeld(), 190u);
}

// Whatever order entries finish and are written in, everything starts and
// what is held never exceeds the budget by more than one entry per thread;
// nothing depends on the number of entries.
TEST(WriteSchedule, RandomCompletionsFinishWithinBounds) {
  std::mt19937 Rng(7);
  for (unsigned Threads : {1u, 2u, 5u, 16u}) {
    std::vector<uint64_t> C;
    for (int I = 0; I < 500; ++I)
      C.push_back(1 + Rng() % 1000);
    const uint64_t Budget = 3000, Largest = 1000;
    WriteSchedule S(costs(C, /*Charged=*/true), Threads, Budget);
    std::vector<size_t> Running, Done;
    size_t Released = 0;
    std::vector<uint8_t> IsDone(C.size());
    while (Released < C.size()) {
      while (Running.size() < Threads) {
        size_t K = S.next();
        if (K == WriteSchedule::None)
          break;
        Running.push_back(K);
      }
      ASSERT_LE(S.held(), Budget + Threads * Largest);
      if (!Running.empty() && (Rng() % 3 || Done.empty())) {
        size_t At = Rng() % Running.size();
        size_t K = Running[At];
        Running.erase(Running.begin() + At);
        S.finished(K, C[K] / 4);
        IsDone[K] = 1;
        Done.push_back(K);
      } else {
        ASSERT_FALSE(Done.empty()) << "nothing can start or finish";
        // Results are written in entry order once placed.
        while (Released < C.size() && IsDone[Released])
          S.released(Released++);
        Done.clear();
      }
    }
    EXPECT_TRUE(S.allStarted());
    EXPECT_EQ(S.held(), 0u);
  }
}

} // namespace
