//===- LazyBundleTest.cpp - Lazy bundles filled on first touch ------------===//

#include "LazyBundle.h"

#include <gtest/gtest.h>

#include <csignal>
#include <sched.h>
#include <sys/mman.h>
#include <sys/wait.h>
#include <unistd.h>

#include <atomic>
#include <cerrno>
#include <chrono>
#include <cstring>
#include <memory>
#include <thread>
#include <vector>

using namespace kpack::shim;

namespace {

constexpr uint64_t Page = 4096;

/// The byte payload P holds at offset I.
uint8_t patternByte(unsigned P, uint64_t I) {
  return uint8_t((I * 131 + P * 7 + 1) & 0xff);
}

struct Fixture {
  std::vector<std::shared_ptr<std::atomic<int>>> Calls;
  std::vector<LazyPayload> Payloads;
  std::vector<uint8_t> Header;
  uint64_t TotalSize = 0;

  /// Payload sizes; each at the next page boundary after the header page.
  Fixture(const std::vector<uint64_t> &Sizes, int FailIndex = -1,
          int SleepMs = 0) {
    Header.assign(100, 'H');
    uint64_t Offset = Page;
    for (unsigned P = 0; P < Sizes.size(); ++P) {
      auto Count = std::make_shared<std::atomic<int>>(0);
      Calls.push_back(Count);
      LazyPayload L;
      L.Offset = Offset;
      L.Size = Sizes[P];
      L.Name = "payload " + std::to_string(P);
      const bool Fail = int(P) == FailIndex;
      const uint64_t Size = Sizes[P];
      L.Fill = [Count, P, Fail, Size, SleepMs](uint8_t *Dest,
                                               std::string &Error) {
        ++*Count;
        if (SleepMs)
          std::this_thread::sleep_for(std::chrono::milliseconds(SleepMs));
        if (Fail) {
          Error = "corrupt on purpose";
          return false;
        }
        for (uint64_t I = 0; I < Size; ++I)
          Dest[I] = patternByte(P, I);
        return true;
      };
      Payloads.push_back(std::move(L));
      Offset = (Offset + Sizes[P] + Page - 1) / Page * Page;
    }
    TotalSize = Offset;
  }
};

bool isMapped(const void *P) {
  return msync(const_cast<void *>(P), Page, MS_ASYNC) == 0;
}

/// Waits up to 10 s for a fork child; its exit code, or -1 if it hung (then
/// killed) or did not exit normally.
int childExitCode(pid_t Child) {
  int Status = 0;
  pid_t Done = 0;
  for (int I = 0; I < 1000 && Done == 0; ++I) {
    Done = waitpid(Child, &Status, WNOHANG);
    if (Done == 0)
      std::this_thread::sleep_for(std::chrono::milliseconds(10));
  }
  if (Done == 0) {
    kill(Child, SIGKILL);
    waitpid(Child, &Status, 0);
    return -1;
  }
  return WIFEXITED(Status) ? WEXITSTATUS(Status) : -1;
}

/// Reads *P on another thread; true with the byte in Out if that read ended
/// within 10 s. A read that hangs leaves its thread behind (detached).
bool readsWithin10s(const uint8_t *P, uint8_t &Out) {
  struct Result {
    std::atomic<bool> Done{false};
    std::atomic<int> Byte{0};
  };
  auto R = std::make_shared<Result>();
  std::thread([R, P] {
    R->Byte = *static_cast<const volatile uint8_t *>(P);
    R->Done = true;
  }).detach();
  for (int I = 0; I < 1000 && !R->Done; ++I)
    std::this_thread::sleep_for(std::chrono::milliseconds(10));
  Out = uint8_t(R->Byte.load());
  return R->Done;
}

/// Waits up to 10 s for Pred(lazyBundleStats()).
template <typename P> bool statsWithin10s(P Pred) {
  for (int I = 0; I < 1000; ++I) {
    if (Pred(lazyBundleStats()))
      return true;
    std::this_thread::sleep_for(std::chrono::milliseconds(10));
  }
  return false;
}

TEST(ShimLazyBundle, Available) {
  std::string Why;
  ASSERT_TRUE(lazyBundlesAvailable(Why)) << Why;
}

TEST(ShimLazyBundle, NothingFilledBeforeFirstTouchOfThatPayload) {
  Fixture F({10000, 5000});
  std::string Error;
  const LazyBundleStats Before = lazyBundleStats();
  const uint8_t *B =
      createLazyBundle(F.Header, F.TotalSize, F.Payloads, Error);
  ASSERT_NE(B, nullptr) << Error;
  EXPECT_TRUE(lazyBundleStats().HandlerRunning);
  // The header is there; no payload was filled for reading it.
  EXPECT_EQ(std::memcmp(B, F.Header.data(), F.Header.size()), 0);
  EXPECT_EQ(*F.Calls[0] + *F.Calls[1], 0);
  // Touching the second payload's last byte fills that payload only, whole.
  const uint64_t Off1 = F.Payloads[1].Offset;
  EXPECT_EQ(B[Off1 + 4999], patternByte(1, 4999));
  EXPECT_EQ(*F.Calls[0], 0);
  EXPECT_EQ(*F.Calls[1], 1);
  for (uint64_t I = 0; I < 5000; ++I)
    ASSERT_EQ(B[Off1 + I], patternByte(1, I)) << I;
  // The rest of its last page is zero padding.
  EXPECT_EQ(B[Off1 + 5000], 0);
  EXPECT_EQ(*F.Calls[1], 1);
  EXPECT_EQ(lazyBundleStats().Filled, Before.Filled + 1);
  EXPECT_EQ(releaseLazyBundle(B), 1u);
  EXPECT_EQ(*F.Calls[0], 0);
}

TEST(ShimLazyBundle, ReleaseUnmapsAndStopsTheHandler) {
  Fixture F({Page * 3});
  std::string Error;
  const uint8_t *B =
      createLazyBundle(F.Header, F.TotalSize, F.Payloads, Error);
  ASSERT_NE(B, nullptr) << Error;
  EXPECT_EQ(B[F.Payloads[0].Offset + 1], patternByte(0, 1));
  EXPECT_TRUE(isMapped(B));
  EXPECT_EQ(lazyBundleStats().Live, 1u);
  EXPECT_EQ(releaseLazyBundle(B), 1u);
  EXPECT_FALSE(isMapped(B));
  EXPECT_FALSE(isMapped(B + F.Payloads[0].Offset));
  const LazyBundleStats After = lazyBundleStats();
  EXPECT_EQ(After.Live, 0u);
  EXPECT_FALSE(After.HandlerRunning);
  // A new bundle starts the handler again.
  const uint8_t *C =
      createLazyBundle(F.Header, F.TotalSize, F.Payloads, Error);
  ASSERT_NE(C, nullptr) << Error;
  EXPECT_EQ(C[F.Payloads[0].Offset + 2], patternByte(0, 2));
  EXPECT_EQ(releaseLazyBundle(C), 1u);
  // Anything else is not ours: ignored.
  EXPECT_EQ(releaseLazyBundle(F.Header.data()), 0u);
}

TEST(ShimLazyBundle, ConcurrentFirstTouches) {
  // Four 1 MiB payloads, each Fill slow enough that touches pile up; sixteen
  // threads touch pages of all of them, starting together.
  const uint64_t Size = 1 << 20;
  Fixture F({Size, Size, Size, Size}, -1, /*SleepMs=*/20);
  std::string Error;
  const uint8_t *B =
      createLazyBundle(F.Header, F.TotalSize, F.Payloads, Error);
  ASSERT_NE(B, nullptr) << Error;
  std::atomic<bool> Go{false};
  std::atomic<int> Mismatches{0};
  std::vector<std::thread> Threads;
  for (unsigned T = 0; T < 16; ++T)
    Threads.emplace_back([&, T] {
      while (!Go)
        std::this_thread::yield();
      for (unsigned K = 0; K < 4; ++K) {
        unsigned P = (T + K) % 4;
        uint64_t I = (uint64_t(T) * 65537 + K * 4099) % Size;
        if (B[F.Payloads[P].Offset + I] != patternByte(P, I))
          ++Mismatches;
      }
    });
  Go = true;
  for (std::thread &T : Threads)
    T.join();
  EXPECT_EQ(Mismatches, 0);
  for (unsigned P = 0; P < 4; ++P)
    EXPECT_EQ(*F.Calls[P], 1) << "payload " << P;
  EXPECT_EQ(releaseLazyBundle(B), 4u);
}

TEST(ShimLazyBundle, FailedFillServesZerosOnce) {
  Fixture F({8000, 100}, /*FailIndex=*/0);
  std::string Error;
  const LazyBundleStats Before = lazyBundleStats();
  const uint8_t *B =
      createLazyBundle(F.Header, F.TotalSize, F.Payloads, Error);
  ASSERT_NE(B, nullptr) << Error;
  const uint8_t *P0 = B + F.Payloads[0].Offset;
  for (uint64_t I = 0; I < 8000; I += 997)
    EXPECT_EQ(P0[I], 0) << I;
  EXPECT_EQ(*F.Calls[0], 1);
  EXPECT_EQ(lazyBundleStats().FillFailures, Before.FillFailures + 1);
  // The other payload is unaffected.
  EXPECT_EQ(B[F.Payloads[1].Offset + 99], patternByte(1, 99));
  releaseLazyBundle(B);
}

TEST(ShimLazyBundle, ForkChildReadsWithoutHanging) {
  Fixture F({Page, Page});
  std::string Error;
  const uint8_t *B =
      createLazyBundle(F.Header, F.TotalSize, F.Payloads, Error);
  ASSERT_NE(B, nullptr) << Error;
  EXPECT_EQ(B[F.Payloads[0].Offset + 5], patternByte(0, 5)); // filled
  pid_t Child = fork();
  ASSERT_GE(Child, 0);
  if (Child == 0) {
    // The filled payload was copied by fork; the other one lost its
    // userfaultfd registration and reads as zeros.
    bool Ok = B[F.Payloads[0].Offset + 5] == patternByte(0, 5) &&
              B[F.Payloads[1].Offset + 5] == 0;
    _exit(Ok ? 0 : 1);
  }
  EXPECT_EQ(childExitCode(Child), 0) << "reading a lazy bundle";
  // The parent still fills on first touch.
  EXPECT_EQ(B[F.Payloads[1].Offset + 5], patternByte(1, 5));
  EXPECT_EQ(releaseLazyBundle(B), 2u);
}

TEST(ShimLazyBundle, ForkChildFillsLargePayloadsOfItsOwn) {
  // The parent's handler and populator threads are running (a large payload
  // was filled) when it forks; the child starts its own and fills a large
  // payload of a bundle it creates, then releases it, without hanging.
  const uint64_t Big = 4 << 20;
  Fixture F({Big, Page});
  std::string Error;
  const uint8_t *B =
      createLazyBundle(F.Header, F.TotalSize, F.Payloads, Error);
  ASSERT_NE(B, nullptr) << Error;
  EXPECT_EQ(B[F.Payloads[0].Offset + Big - 1], patternByte(0, Big - 1));
  pid_t Child = fork();
  ASSERT_GE(Child, 0);
  if (Child == 0) {
    Fixture G({Big + 5});
    std::string ChildError;
    const uint8_t *C =
        createLazyBundle(G.Header, G.TotalSize, G.Payloads, ChildError);
    bool Ok = C != nullptr;
    for (uint64_t I = 0; Ok && I < Big + 5; I += 4093)
      Ok = C[G.Payloads[0].Offset + I] == patternByte(0, I);
    Ok = Ok && releaseLazyBundle(C) == 1 && !lazyBundleStats().HandlerRunning &&
         !lazyBundleStats().PopulatorRunning;
    _exit(Ok ? 0 : 1);
  }
  EXPECT_EQ(childExitCode(Child), 0) << "filling a bundle of its own";
  EXPECT_EQ(releaseLazyBundle(B), 1u);
}

TEST(ShimLazyBundle, LaterPayloadsFromPreparedStagingMemory) {
  // After the first fill the handler prepares populated staging memory
  // between faults (sized for the largest payload left); later payloads,
  // smaller and equal to it, come out intact, tails zero.
  const uint64_t Big = 2 << 20;
  Fixture F({3 * Page + 100, Page - 1, Big, 5000});
  std::string Error;
  const uint8_t *B =
      createLazyBundle(F.Header, F.TotalSize, F.Payloads, Error);
  ASSERT_NE(B, nullptr) << Error;
  auto Check = [&](unsigned P) {
    const uint8_t *D = B + F.Payloads[P].Offset;
    const uint64_t Size = F.Payloads[P].Size;
    for (uint64_t I = 0; I < Size; ++I)
      if (D[I] != patternByte(P, I))
        return false;
    for (uint64_t I = Size; I % Page; ++I)
      if (D[I] != 0)
        return false;
    return true;
  };
  const LazyBundleStats Before = lazyBundleStats();
  for (unsigned P : {0u, 1u, 3u, 2u}) {
    EXPECT_TRUE(Check(P)) << "payload " << P;
    std::this_thread::sleep_for(std::chrono::milliseconds(50));
  }
  for (unsigned P = 0; P < 4; ++P)
    EXPECT_EQ(*F.Calls[P], 1) << "payload " << P;
  // Nothing is prepared before the first fill (payload 0, freshly mapped);
  // each later one (a page, 2 pages, 2 MiB) fits the reserve prepared for
  // the 2 MiB payload and is taken from it.
  EXPECT_EQ(lazyBundleStats().FromReserve - Before.FromReserve, 3u);
  EXPECT_EQ(releaseLazyBundle(B), 4u);
}

TEST(ShimLazyBundle, LargePayloadPopulatedAheadOnASecondCpu) {
  // A payload above two populate steps (512 KiB) has its staging memory
  // populated by a second thread while Fill writes it, where the process may
  // run on two CPUs; it comes out intact either way, and the thread stops
  // with the handler.
  cpu_set_t Cpus;
  ASSERT_EQ(sched_getaffinity(0, sizeof(Cpus), &Cpus), 0);
  const bool TwoCpus = CPU_COUNT(&Cpus) >= 2;
  const uint64_t Big = (8 << 20) + 123;
  Fixture F({Big, 300 << 10});
  std::string Error;
  const LazyBundleStats Before = lazyBundleStats();
  const uint8_t *B =
      createLazyBundle(F.Header, F.TotalSize, F.Payloads, Error);
  ASSERT_NE(B, nullptr) << Error;
  for (unsigned P = 0; P < 2; ++P) {
    const uint8_t *D = B + F.Payloads[P].Offset;
    uint64_t Wrong = 0;
    for (uint64_t I = 0; I < F.Payloads[P].Size; ++I)
      Wrong += D[I] != patternByte(P, I);
    EXPECT_EQ(Wrong, 0u) << "payload " << P;
  }
  const LazyBundleStats During = lazyBundleStats();
  // Only the large payload is populated ahead; the small one in place.
  EXPECT_EQ(During.PopulatedAhead - Before.PopulatedAhead, TwoCpus ? 1u : 0u);
  EXPECT_EQ(During.PopulatorRunning, TwoCpus);
  EXPECT_EQ(releaseLazyBundle(B), 2u);
  EXPECT_FALSE(lazyBundleStats().PopulatorRunning);
  EXPECT_FALSE(lazyBundleStats().HandlerRunning);
}

TEST(ShimLazyBundle, HandlerSurvivesEintrFromPoll) {
  Fixture F({Page, Page});
  std::string Error;
  const uint8_t *B =
      createLazyBundle(F.Header, F.TotalSize, F.Payloads, Error);
  ASSERT_NE(B, nullptr) << Error;
  EXPECT_EQ(B[F.Payloads[0].Offset + 3], patternByte(0, 3));
  injectHandlerPollErrorForTesting(EINTR);
  uint8_t Byte = 0;
  ASSERT_TRUE(readsWithin10s(B + F.Payloads[1].Offset + 7, Byte))
      << "first touch after an EINTR from poll hangs";
  EXPECT_EQ(Byte, patternByte(1, 7));
  const LazyBundleStats St = lazyBundleStats();
  EXPECT_TRUE(St.HandlerRunning);
  EXPECT_FALSE(St.HandlerFailed);
  EXPECT_EQ(releaseLazyBundle(B), 2u);
}

TEST(ShimLazyBundle, HandlerPollFailureFillsEverythingInsteadOfHanging) {
  // poll() fails for good: the handler fills every payload not filled yet
  // and unregisters the bundle before it ends, so later first touches
  // (payloads and padding) return, with the payloads' bytes; no new lazy
  // bundle is made while it is gone, and once the last bundle is released a
  // new handler serves new bundles.
  Fixture F({Page, 5000, 3 * Page});
  std::string Error;
  const uint8_t *B =
      createLazyBundle(F.Header, F.TotalSize, F.Payloads, Error);
  ASSERT_NE(B, nullptr) << Error;
  EXPECT_EQ(B[F.Payloads[0].Offset + 3], patternByte(0, 3));
  injectHandlerPollErrorForTesting(EBADF);
  ASSERT_TRUE(
      statsWithin10s([](const LazyBundleStats &S) { return S.HandlerFailed; }));
  uint8_t Byte = 0;
  ASSERT_TRUE(readsWithin10s(B + F.Payloads[1].Offset + 4999, Byte))
      << "first touch after the handler failed hangs";
  EXPECT_EQ(Byte, patternByte(1, 4999));
  ASSERT_TRUE(readsWithin10s(B + F.Payloads[1].Offset + 5000, Byte));
  EXPECT_EQ(Byte, 0); // padding
  ASSERT_TRUE(readsWithin10s(B + F.Payloads[2].Offset + 2 * Page, Byte));
  EXPECT_EQ(Byte, patternByte(2, 2 * Page));
  for (unsigned P = 0; P < 3; ++P)
    EXPECT_EQ(*F.Calls[P], 1) << "payload " << P;

  Fixture G({Page});
  EXPECT_EQ(createLazyBundle(G.Header, G.TotalSize, G.Payloads, Error),
            nullptr);
  EXPECT_NE(Error.find("userfaultfd handler stopped (poll: "),
            std::string::npos)
      << Error;
  EXPECT_EQ(releaseLazyBundle(B), 3u);
  EXPECT_FALSE(lazyBundleStats().HandlerRunning);
  EXPECT_FALSE(lazyBundleStats().HandlerFailed);
  const uint8_t *C =
      createLazyBundle(G.Header, G.TotalSize, G.Payloads, Error);
  ASSERT_NE(C, nullptr) << Error;
  EXPECT_EQ(C[G.Payloads[0].Offset + 9], patternByte(0, 9));
  EXPECT_EQ(releaseLazyBundle(C), 1u);
}

TEST(ShimLazyBundle, ForkDuringAnInFlightFill) {
  // The parent forks while its handler is inside a Fill (holding the
  // bundle's lock, its populator busy on a large payload): the child
  // creates, fills and releases a bundle of its own without hanging.
  const uint64_t Big = 4 << 20;
  Fixture F({Big});
  std::atomic<bool> InFill{false}, Forked{false};
  auto Inner = F.Payloads[0].Fill;
  F.Payloads[0].Fill = [&, Inner](uint8_t *Dest, std::string &Error) {
    InFill = true;
    while (!Forked)
      std::this_thread::sleep_for(std::chrono::milliseconds(1));
    return Inner(Dest, Error);
  };
  std::string Error;
  const uint8_t *B =
      createLazyBundle(F.Header, F.TotalSize, F.Payloads, Error);
  ASSERT_NE(B, nullptr) << Error;
  std::thread Toucher([&] {
    (void)*static_cast<const volatile uint8_t *>(B + F.Payloads[0].Offset +
                                                 Big - 1);
  });
  while (!InFill)
    std::this_thread::sleep_for(std::chrono::milliseconds(1));
  pid_t Child = fork();
  if (Child == 0) {
    Fixture G({Big + 5, Page});
    std::string ChildError;
    const uint8_t *C =
        createLazyBundle(G.Header, G.TotalSize, G.Payloads, ChildError);
    bool Ok = C != nullptr;
    for (uint64_t I = 0; Ok && I < Big + 5; I += 4093)
      Ok = C[G.Payloads[0].Offset + I] == patternByte(0, I);
    Ok = Ok && C[G.Payloads[1].Offset + 1] == patternByte(1, 1) &&
         releaseLazyBundle(C) == 2 && !lazyBundleStats().HandlerRunning;
    _exit(Ok ? 0 : 1);
  }
  Forked = true;
  Toucher.join();
  ASSERT_GE(Child, 0);
  EXPECT_EQ(childExitCode(Child), 0) << "a bundle of its own after the fork";
  EXPECT_EQ(B[F.Payloads[0].Offset + 17], patternByte(0, 17));
  EXPECT_EQ(releaseLazyBundle(B), 1u);
}

TEST(ShimLazyBundle, RejectsPayloadsOverlappingTheHeader) {
  Fixture F({100});
  F.Payloads[0].Offset = 0;
  std::string Error;
  EXPECT_EQ(createLazyBundle(F.Header, F.TotalSize, F.Payloads, Error),
            nullptr);
  EXPECT_FALSE(Error.empty());
}

} // namespace
