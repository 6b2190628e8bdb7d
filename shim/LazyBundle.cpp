//===- LazyBundle.cpp - Offload bundles materialised on first touch -------===//

#include "LazyBundle.h"
#include "Report.h"

#include "kpack/Platform.h"
#include "kpack/SearchPaths.h"

#include <fcntl.h>
#include <linux/userfaultfd.h>
#include <poll.h>
#include <pthread.h>
#include <sched.h>
#include <signal.h>
#include <sys/eventfd.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <cerrno>
#include <chrono>
#include <condition_variable>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <map>
#include <memory>
#include <mutex>
#include <new>

#ifndef UFFD_USER_MODE_ONLY
#define UFFD_USER_MODE_ONLY 1
#endif
// UFFDIO_MOVE (Linux 6.8 uapi), for headers older than the running kernel;
// a kernel without it refuses the feature and the shim copies instead.
#ifndef UFFD_FEATURE_MOVE
#define UFFD_FEATURE_MOVE (1 << 16)
#define _UFFDIO_MOVE (0x05)
struct uffdio_move {
  __u64 dst;
  __u64 src;
  __u64 len;
  __u64 mode;
  __s64 move;
};
#define UFFDIO_MOVE_MODE_DONTWAKE ((__u64)1 << 0)
#define UFFDIO_MOVE _IOWR(UFFDIO, _UFFDIO_MOVE, struct uffdio_move)
#endif

namespace kpack {
namespace shim {
namespace {

constexpr uint64_t PageSize = 4096;

uint64_t alignUp(uint64_t V) { return (V + PageSize - 1) & ~(PageSize - 1); }

struct Region {
  std::mutex M; ///< held while a payload is filled and while unmapping
  uint8_t *Base = nullptr;
  uint64_t MapSize = 0;
  uint64_t RegisteredStart = 0; ///< offset of the first registered page
  std::vector<LazyPayload> Payloads; ///< sorted by offset
  std::vector<bool> Filled;
  bool Dead = false;
};

/// The process-wide state. Never destroyed: unregistration may run after
/// this library's destructors, and the handler thread may still be polling
/// when the process exits.
struct State {
  std::mutex Life; ///< serialises create/release and the thread's lifecycle
  std::mutex M;    ///< guards Regions (taken briefly by the handler thread)
  std::map<uintptr_t, std::shared_ptr<Region>> Regions; ///< by base address
  int Uffd = -1;
  int WakeFd = -1;
  bool Probed = false;
  bool Usable = false;
  bool CanMove = false; ///< UFFDIO_MOVE (Linux 6.8): no copy of the payload
  // The handler thread's reserve of populated staging memory (see
  // topUpReserve); touched by that thread only, and after it was joined.
  uint8_t *Reserve = nullptr;
  uint64_t ReserveLen = 0;       ///< bytes mapped from Reserve on
  uint64_t ReservePopulated = 0; ///< of which populated, from Reserve on
  bool AnyFilled = false;
  /// The populator thread (see populateAhead): populates the rest of a
  /// staging buffer while the handler decompresses into its start. Started
  /// by the handler on its first large fill, stopped with it.
  struct {
    std::mutex M;
    std::condition_variable CV;
    uint8_t *Begin = nullptr; ///< range waiting to be populated
    uint64_t Len = 0;
    bool Busy = false; ///< populating a range taken from Begin
    bool Exit = false;
    bool Running = false;
    std::atomic<bool> Cancel{false};
    pthread_t Thread{};
    cpu_set_t Cpus;       ///< where the process may run (at the start)
    int ExcludedCpu = -1; ///< the CPU the populator is kept off
  } Populator;
  std::string Why;
  bool Running = false;
  bool StopRequested = false;
  pthread_t Thread{};
  // under M:
  uint64_t Filled = 0, FillFailures = 0, Faults = 0, PopulatedAhead = 0;
  uint64_t FromReserve = 0;
  /// The handler thread gave up waiting for faults (abandonHandler); reset
  /// when it is joined.
  bool HandlerFailed = false;
  std::string HandlerError; ///< why, for createLazyBundle's error
};

/// A poll() error the handler thread is to see next (tests only).
std::atomic<int> InjectedPollError{0};

State &state();

void atforkPrepare() {
  state().Life.lock();
  state().M.lock();
  state().Populator.M.lock();
}
void atforkParent() {
  state().Populator.M.unlock();
  state().M.unlock();
  state().Life.unlock();
}
/// The child has no handler thread and its mappings lost their userfaultfd
/// registration (no UFFD_FEATURE_EVENT_FORK): forget them (never unmapped
/// here, the runtime may still point at them) and start afresh if the child
/// creates lazy bundles itself. A Region's own mutex may have been held by
/// the parent's handler thread; the child never locks one it inherited.
void atforkChild() {
  State &S = state();
  for (auto &R : S.Regions)
    (void)new std::shared_ptr<Region>(R.second); // leaked on purpose
  S.Regions.clear();
  if (S.Uffd >= 0)
    ::close(S.Uffd);
  if (S.WakeFd >= 0)
    ::close(S.WakeFd);
  S.Uffd = S.WakeFd = -1;
  S.Probed = S.Usable = S.Running = S.StopRequested = false;
  S.HandlerFailed = false;
  S.HandlerError.clear();
  S.Reserve = nullptr; // the parent's; left mapped
  S.ReserveLen = S.ReservePopulated = 0;
  S.AnyFilled = false;
  S.Populator.Running = S.Populator.Busy = S.Populator.Exit = false;
  S.Populator.Begin = nullptr; // the parent's thread is gone
  S.Why.clear();
  // The parent's populator may have been waiting on the condition variable:
  // its state counts a waiter the child does not have, which could make a
  // notification wait for it forever. Nothing uses it here yet: make it anew.
  new (&S.Populator.CV) std::condition_variable();
  S.Populator.M.unlock();
  S.M.unlock();
  S.Life.unlock();
}

State &state() {
  static State *S = [] {
    auto *S = new State;
    platform::registerForkHandlers(atforkPrepare, atforkParent, atforkChild);
    return S;
  }();
  return *S;
}

/// Probes userfaultfd once (under Life).
bool probe(State &S) {
  if (S.Probed)
    return S.Usable;
  S.Probed = true;
  if (envFlag("ROCM_KPACK_SHIM_EAGER")) {
    S.Why = "ROCM_KPACK_SHIM_EAGER is set";
    return false;
  }
  if (sysconf(_SC_PAGESIZE) != long(PageSize)) {
    S.Why = "the page size is not 4096";
    return false;
  }
  int Fd = int(syscall(SYS_userfaultfd,
                       O_CLOEXEC | O_NONBLOCK | UFFD_USER_MODE_ONLY));
  if (Fd < 0) {
    S.Why = std::string("userfaultfd: ") + std::strerror(errno);
    return false;
  }
  uffdio_api Api{};
  Api.api = UFFD_API;
#ifdef UFFD_FEATURE_MOVE
  // Moving the decompressed pages in saves copying them; a kernel without
  // the feature refuses the request, and the descriptor must then be made
  // anew (UFFDIO_API succeeds at most once per descriptor).
  Api.features = UFFD_FEATURE_MOVE;
  if (ioctl(Fd, UFFDIO_API, &Api) == 0) {
    S.CanMove = true;
  } else {
    ::close(Fd);
    Fd = int(syscall(SYS_userfaultfd,
                     O_CLOEXEC | O_NONBLOCK | UFFD_USER_MODE_ONLY));
    if (Fd < 0) {
      S.Why = std::string("userfaultfd: ") + std::strerror(errno);
      return false;
    }
    Api = uffdio_api{};
    Api.api = UFFD_API;
  }
#endif
  if (!S.CanMove && ioctl(Fd, UFFDIO_API, &Api) != 0) {
    S.Why = std::string("UFFDIO_API: ") + std::strerror(errno);
    ::close(Fd);
    return false;
  }
  int Wake = eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK);
  if (Wake < 0) {
    S.Why = std::string("eventfd: ") + std::strerror(errno);
    ::close(Fd);
    return false;
  }
  S.Uffd = Fd;
  S.WakeFd = Wake;
  S.Usable = true;
  return true;
}

/// Serves [Start, Start+Len) with zero pages, skipping populated ones.
/// Waiting threads are woken by the caller (wake), once all is in place.
void zeroFill(int Uffd, uint8_t *Start, uint64_t Len) {
  for (uint64_t Off = 0; Off < Len; Off += PageSize) {
    uffdio_zeropage Z{};
    Z.range.start = reinterpret_cast<uintptr_t>(Start + Off);
    Z.range.len = PageSize;
    Z.mode = UFFDIO_ZEROPAGE_MODE_DONTWAKE;
    while (ioctl(Uffd, UFFDIO_ZEROPAGE, &Z) != 0 && errno == EAGAIN)
      Z.zeropage = 0;
  }
}

/// Copies Len bytes from Src to the registered Dst, without waking waiting
/// threads; falls back to page by page when some page is already there
/// (EEXIST).
bool copyIn(int Uffd, uint8_t *Dst, const uint8_t *Src, uint64_t Len) {
  uint64_t Done = 0;
  while (Done < Len) {
    uffdio_copy C{};
    C.dst = reinterpret_cast<uintptr_t>(Dst + Done);
    C.src = reinterpret_cast<uintptr_t>(Src + Done);
    C.len = Len - Done;
    C.mode = UFFDIO_COPY_MODE_DONTWAKE;
    if (ioctl(Uffd, UFFDIO_COPY, &C) == 0) {
      Done += uint64_t(C.copy);
      continue;
    }
    if (errno == EAGAIN && C.copy > 0) {
      Done += uint64_t(C.copy);
      continue;
    }
    if (errno == EAGAIN)
      continue;
    if (errno != EEXIST)
      return false;
    // Some page of the range exists already: one page at a time.
    C.len = PageSize;
    if (ioctl(Uffd, UFFDIO_COPY, &C) != 0 && errno != EEXIST)
      return false;
    Done += PageSize;
  }
  return true;
}

/// Moves Len bytes of whole pages from the private anonymous Src to the
/// registered Dst without copying (UFFDIO_MOVE); returns how many bytes moved
/// (the caller copies the rest).
uint64_t moveIn(int Uffd, uint8_t *Dst, uint8_t *Src, uint64_t Len) {
  uint64_t Done = 0;
#ifdef UFFDIO_MOVE
  while (Done < Len) {
    uffdio_move M{};
    M.dst = reinterpret_cast<uintptr_t>(Dst + Done);
    M.src = reinterpret_cast<uintptr_t>(Src + Done);
    M.len = Len - Done;
    M.mode = UFFDIO_MOVE_MODE_DONTWAKE;
    if (ioctl(Uffd, UFFDIO_MOVE, &M) == 0) {
      Done += uint64_t(M.move);
      continue;
    }
    if (errno == EAGAIN && M.move > 0) {
      Done += uint64_t(M.move);
      continue;
    }
    break;
  }
#else
  (void)Uffd, (void)Dst, (void)Src, (void)Len;
#endif
  return Done;
}

void wake(int Uffd, uint8_t *Start, uint64_t Len) {
  uffdio_range R{reinterpret_cast<uintptr_t>(Start), Len};
  (void)ioctl(Uffd, UFFDIO_WAKE, &R);
}

#ifndef MADV_POPULATE_WRITE
#define MADV_POPULATE_WRITE 23
#endif

/// The most populated staging memory the handler keeps in advance.
constexpr uint64_t ReserveCap = uint64_t(16) << 20;

void freeReserve(State &S) {
  if (S.Reserve)
    munmap(S.Reserve, S.ReserveLen);
  S.Reserve = nullptr;
  S.ReserveLen = S.ReservePopulated = 0;
}

/// Starts Fn on a new thread with every signal blocked, so that signals keep
/// going to the application's threads.
int startThread(pthread_t &Thread, void *(*Fn)(void *)) {
  sigset_t All, Old;
  sigfillset(&All);
  pthread_sigmask(SIG_SETMASK, &All, &Old);
  int E = pthread_create(&Thread, nullptr, Fn, nullptr);
  pthread_sigmask(SIG_SETMASK, &Old, nullptr);
  return E;
}

constexpr uint64_t PopulateStep = uint64_t(256) << 10;

void *populatorMain(void *) {
  auto &P = state().Populator;
  std::unique_lock<std::mutex> Lock(P.M);
  for (;;) {
    P.CV.wait(Lock, [&] { return P.Exit || P.Begin; });
    if (P.Exit)
      return nullptr;
    uint8_t *Begin = P.Begin;
    const uint64_t Len = P.Len;
    P.Begin = nullptr;
    P.Busy = true;
    Lock.unlock();
    for (uint64_t Done = 0; Done < Len && !P.Cancel.load();) {
      const uint64_t N = std::min(PopulateStep, Len - Done);
      if (madvise(Begin + Done, N, MADV_POPULATE_WRITE) != 0)
        break;
      Done += N;
    }
    Lock.lock();
    P.Busy = false;
    P.CV.notify_all();
  }
}

void stopPopulator(State &S) {
  auto &P = S.Populator;
  {
    std::lock_guard<std::mutex> Lock(P.M);
    if (!P.Running)
      return;
    P.Exit = true;
    P.CV.notify_all();
  }
  pthread_join(P.Thread, nullptr);
  std::lock_guard<std::mutex> Lock(P.M);
  P.Running = P.Exit = false;
}

/// Populates [Begin, Begin+Len) of a staging buffer on the populator thread
/// while the caller writes it from the start; returns false (the caller then
/// relies on page faults) when there is no populator. Populating page by page
/// costs about half as much as decompressing into the pages (page allocation
/// and zeroing; more in virtual machines), and it does not depend on the
/// data: on a second core it runs ahead of the decompressor, which then
/// writes to present pages. waitPopulated ends it.
bool populateAhead(State &S, uint8_t *Begin, uint64_t Len) {
  auto &P = S.Populator;
  {
    std::lock_guard<std::mutex> Lock(P.M);
    if (!P.Running) {
      // Only worth it with a second core: on the same one it would take
      // turns with the decompressor.
      if (sched_getaffinity(0, sizeof(P.Cpus), &P.Cpus) != 0 ||
          CPU_COUNT(&P.Cpus) < 2 ||
          startThread(P.Thread, populatorMain) != 0)
        return false;
      P.Running = true;
      P.ExcludedCpu = -1;
    }
    // Keep it off the decompressor's core: woken from there, the scheduler
    // would run it there (preempting the decompressor or sharing the core)
    // until the load balancer moves one of them, milliseconds later.
    const int Cpu = sched_getcpu();
    if (Cpu >= 0 && Cpu != P.ExcludedCpu && CPU_ISSET(Cpu, &P.Cpus)) {
      cpu_set_t Others = P.Cpus;
      CPU_CLR(Cpu, &Others);
      if (pthread_setaffinity_np(P.Thread, sizeof(Others), &Others) == 0)
        P.ExcludedCpu = Cpu;
    }
    P.Cancel.store(false);
    P.Begin = Begin;
    P.Len = Len;
  }
  P.CV.notify_one();
  return true;
}

/// Stops populating (what the decompressor did not reach is no longer
/// needed) and waits until the populator has left the staging buffer, so
/// that its pages can be moved and the buffer unmapped.
void waitPopulated(State &S) {
  auto &P = S.Populator;
  P.Cancel.store(true);
  std::unique_lock<std::mutex> Lock(P.M);
  P.Begin = nullptr; // not taken yet: nothing to wait for
  P.CV.wait(Lock, [&] { return !P.Busy; });
}

/// Staging memory for Len bytes (a multiple of the page size): from the
/// reserve when it is large enough (FromReserve), else freshly mapped.
/// Returns in Populated how many bytes from its start are populated already;
/// the caller populates the rest (populateAhead). Unmap with munmap(Staging,
/// Len). (Transparent huge pages would fault less, but may stall in
/// compaction.)
uint8_t *takeStaging(State &S, uint64_t Len, uint64_t &Populated,
                     bool &FromReserve) {
  FromReserve = S.Reserve && S.ReserveLen >= Len;
  if (FromReserve) {
    uint8_t *Staging = S.Reserve;
    Populated = std::min(S.ReservePopulated, Len);
    S.ReservePopulated -= Populated;
    S.ReserveLen -= Len;
    S.Reserve = S.ReserveLen ? S.Reserve + Len : nullptr;
    return Staging;
  }
  Populated = 0;
  void *Map = mmap(nullptr, Len, PROT_READ | PROT_WRITE,
                   MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
  return Map == MAP_FAILED ? nullptr : static_cast<uint8_t *>(Map);
}

bool faultPending(const State &S) {
  pollfd Fd = {S.Uffd, POLLIN, 0};
  return poll(&Fd, 1, 0) > 0;
}

/// Once the process has started using its code objects (one was filled),
/// keeps staging memory populated in advance, between faults, for the
/// largest code object not filled yet (at most ReserveCap): the next first
/// touch then costs its decompression and the page move only. Populates in
/// small steps and stops as soon as a fault is waiting. Released when no
/// code object is left to fill.
void topUpReserve(State &S) {
  if (!S.AnyFilled)
    return;
  std::vector<std::shared_ptr<Region>> Live;
  {
    std::lock_guard<std::mutex> Lock(S.M);
    for (auto &R : S.Regions)
      Live.push_back(R.second);
  }
  uint64_t Want = 0;
  for (auto &R : Live) {
    std::lock_guard<std::mutex> Lock(R->M);
    if (R->Dead)
      continue;
    for (size_t I = 0; I < R->Payloads.size(); ++I)
      if (!R->Filled[I])
        Want = std::max(Want, alignUp(R->Payloads[I].Size));
  }
  Want = std::min(Want, ReserveCap);
  if (Want == 0) {
    freeReserve(S);
    return;
  }
  if (S.ReserveLen < Want) {
    freeReserve(S);
    void *Map = mmap(nullptr, Want, PROT_READ | PROT_WRITE,
                     MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    if (Map == MAP_FAILED)
      return;
    S.Reserve = static_cast<uint8_t *>(Map);
    S.ReserveLen = Want;
  }
  while (S.ReservePopulated < Want && !faultPending(S)) {
    // The thread just woken may be waiting for this core: let it run first
    // (else it may wait for the scheduler's next tick, milliseconds).
    sched_yield();
    uint64_t N = std::min(PopulateStep, Want - S.ReservePopulated);
    if (madvise(S.Reserve + S.ReservePopulated, N, MADV_POPULATE_WRITE) != 0)
      return;
    S.ReservePopulated += N;
  }
}

/// Fills payload I of R (R.M held); the threads waiting on it are woken
/// once all of it is in place and counted.
void fillPayload(State &S, Region &R, size_t I) {
  LazyPayload &P = R.Payloads[I];
  uint8_t *Dst = R.Base + P.Offset;
  const uint64_t Len = alignUp(P.Size);
  auto Start = std::chrono::steady_clock::now();
  std::string Error;
  bool Ok = false;
  bool Ahead = false;
  bool FromReserve = false;
  if (Len) {
    uint64_t Populated = 0;
    uint8_t *Staging = takeStaging(S, Len, Populated, FromReserve);
    if (!Staging) {
      Error = std::string("cannot map a staging buffer: ") +
              std::strerror(errno);
    } else {
      // The first step is populated here, while the populator thread wakes
      // up; small code objects are populated here whole.
      const uint64_t Here = Len - Populated <= 2 * PopulateStep
                                ? Len
                                : Populated + PopulateStep;
      if (Populated < Here)
        (void)madvise(Staging + Populated, Here - Populated,
                      MADV_POPULATE_WRITE);
      Ahead = Here < Len && populateAhead(S, Staging + Here, Len - Here);
      try {
        Ok = P.Fill(Staging, Error);
      } catch (...) {
        Error = "out of memory";
      }
      if (Ahead)
        waitPopulated(S);
      const uint64_t Moved =
          Ok && S.CanMove ? moveIn(S.Uffd, Dst, Staging, Len) : 0;
      if (Ok && !copyIn(S.Uffd, Dst + Moved, Staging + Moved, Len - Moved)) {
        Error = std::string("UFFDIO_COPY: ") + std::strerror(errno);
        Ok = false;
      }
      munmap(Staging, Len);
    }
  }
  if (!Ok && Len) {
    reportLine("error: cannot load %s: %s; the runtime gets an invalid code "
              "object",
              P.Name.c_str(), Error.empty() ? "unknown error" : Error.c_str());
    zeroFill(S.Uffd, Dst, Len);
  }
  R.Filled[I] = true;
  S.AnyFilled = true;
  {
    std::lock_guard<std::mutex> Lock(S.M);
    ++(Ok || !Len ? S.Filled : S.FillFailures);
    S.PopulatedAhead += Ahead;
    S.FromReserve += FromReserve;
  }
  // Logged before the wake-up, so that the line precedes anything the woken
  // thread prints (the log's order is the order of events).
  if (Ok && envFlag("ROCM_KPACK_DEBUG"))
    reportLine("materialised %s (%llu bytes) on first touch in %.3f ms",
              P.Name.c_str(), static_cast<unsigned long long>(P.Size),
              std::chrono::duration<double, std::milli>(
                  std::chrono::steady_clock::now() - Start)
                  .count());
  wake(S.Uffd, Dst, Len ? Len : PageSize);
  // The decompressed bytes now live in the bundle; Fill's captures (the
  // archive reference) are no longer needed.
  P.Fill = nullptr;
}

void serveFault(State &S, uintptr_t Address) {
  std::shared_ptr<Region> R;
  {
    std::lock_guard<std::mutex> Lock(S.M);
    ++S.Faults;
    auto It = S.Regions.upper_bound(Address);
    if (It != S.Regions.begin()) {
      --It;
      if (Address < It->first + It->second->MapSize)
        R = It->second;
    }
  }
  if (!R)
    return; // released meanwhile; unregistering woke the thread
  std::lock_guard<std::mutex> Lock(R->M);
  if (R->Dead)
    return;
  const uint64_t Off = Address - reinterpret_cast<uintptr_t>(R->Base);
  for (size_t I = 0; I < R->Payloads.size(); ++I) {
    const LazyPayload &P = R->Payloads[I];
    if (Off < P.Offset || Off >= P.Offset + alignUp(P.Size))
      continue;
    if (R->Filled[I]) {
      // Filled already (the fault raced with the fill): the page is there,
      // unless something unmapped it (MADV_DONTNEED); then it reads zeros
      // rather than faulting forever.
      uint8_t *Page = R->Base + (Off & ~(PageSize - 1));
      zeroFill(S.Uffd, Page, PageSize);
      wake(S.Uffd, Page, PageSize);
    } else {
      fillPayload(S, *R, I);
    }
    return;
  }
  // Padding outside every payload (e.g. the tail page of the mapping).
  uint8_t *Page = R->Base + (Off & ~(PageSize - 1));
  zeroFill(S.Uffd, Page, PageSize);

  wake(S.Uffd, Page, PageSize);
}

/// The handler cannot wait for faults any more (Why): fills every payload
/// of the live bundles now and unregisters them, which wakes every thread
/// waiting on them (padding then reads as zeros), so that no first touch
/// waits for a handler that is gone; createLazyBundle fails from now on
/// until the handler is joined. Never takes Life (whose holder may be
/// joining this thread).
void abandonHandler(State &S, const std::string &Why) {
  reportLine("error: userfaultfd handler: %s; loading the remaining code "
             "objects of the lazy bundles now",
             Why.c_str());
  std::vector<std::shared_ptr<Region>> Live;
  {
    std::lock_guard<std::mutex> Lock(S.M);
    S.HandlerFailed = true;
    S.HandlerError = "the userfaultfd handler stopped (" + Why + ")";
    for (auto &R : S.Regions)
      Live.push_back(R.second);
  }
  for (auto &R : Live) {
    std::lock_guard<std::mutex> Lock(R->M);
    if (R->Dead)
      continue;
    for (size_t I = 0; I < R->Payloads.size(); ++I)
      if (!R->Filled[I])
        fillPayload(S, *R, I);
    if (R->RegisteredStart < R->MapSize) {
      uffdio_range Range{
          reinterpret_cast<uintptr_t>(R->Base + R->RegisteredStart),
          R->MapSize - R->RegisteredStart};
      (void)ioctl(S.Uffd, UFFDIO_UNREGISTER, &Range);
      R->RegisteredStart = R->MapSize;
    }
  }
}

void *handlerMain(void *) {
  State &S = state();
  pollfd Fds[2] = {{S.Uffd, POLLIN, 0}, {S.WakeFd, POLLIN, 0}};
  for (;;) {
    topUpReserve(S);
    int N;
    if (const int Injected = InjectedPollError.exchange(0)) {
      N = -1;
      errno = Injected;
    } else {
      N = poll(Fds, 2, -1);
    }
    if (N < 0) {
      if (errno == EINTR)
        continue;
      abandonHandler(S, std::string("poll: ") + std::strerror(errno));
      return nullptr;
    }
    if (Fds[1].revents & POLLIN) {
      uint64_t Count;
      (void)!::read(S.WakeFd, &Count, sizeof(Count));
      std::lock_guard<std::mutex> Lock(S.M);
      if (S.StopRequested)
        return nullptr;
    }
    if (!(Fds[0].revents & POLLIN))
      continue;
    uffd_msg Msgs[16];
    ssize_t Got = ::read(S.Uffd, Msgs, sizeof(Msgs));
    if (Got <= 0)
      continue; // EAGAIN: another read took it, or a spurious wake-up
    for (size_t I = 0; I < size_t(Got) / sizeof(uffd_msg); ++I)
      if (Msgs[I].event == UFFD_EVENT_PAGEFAULT)
        serveFault(S, uintptr_t(Msgs[I].arg.pagefault.address));
  }
}

/// Starts the handler thread (under Life).
bool startHandler(State &S, std::string &Error) {
  if (S.Running)
    return true;
  int E = startThread(S.Thread, handlerMain);
  if (E != 0) {
    Error = std::string("cannot start the userfaultfd handler thread: ") +
            std::strerror(E);
    return false;
  }
  std::lock_guard<std::mutex> Lock(S.M);
  S.Running = true;
  return true;
}

/// Stops the handler thread (under Life) once no bundle is left.
void stopHandlerIfIdle(State &S) {
  {
    std::lock_guard<std::mutex> Lock(S.M);
    if (!S.Running || !S.Regions.empty())
      return;
    S.StopRequested = true;
  }
  uint64_t One = 1;
  (void)!::write(S.WakeFd, &One, sizeof(One));
  pthread_join(S.Thread, nullptr);
  stopPopulator(S);
  freeReserve(S);
  S.AnyFilled = false;
  std::lock_guard<std::mutex> Lock(S.M);
  S.Running = false;
  S.StopRequested = false;
  // A new handler gets a new chance.
  S.HandlerFailed = false;
  S.HandlerError.clear();
}

} // namespace

bool lazyBundlesAvailable(std::string &Why) {
  State &S = state();
  std::lock_guard<std::mutex> Lock(S.Life);
  bool Ok = probe(S);
  Why = S.Why;
  return Ok;
}

const uint8_t *createLazyBundle(const std::vector<uint8_t> &Header,
                                uint64_t TotalSize,
                                std::vector<LazyPayload> Payloads,
                                std::string &Error) {
  State &S = state();
  std::lock_guard<std::mutex> LifeLock(S.Life);
  if (!probe(S)) {
    Error = S.Why;
    return nullptr;
  }
  bool Failed;
  {
    std::lock_guard<std::mutex> Lock(S.M);
    Failed = S.HandlerFailed;
  }
  if (Failed) // joins the handler that gave up once no bundle is left
    stopHandlerIfIdle(S);
  {
    std::lock_guard<std::mutex> Lock(S.M);
    if (S.HandlerFailed) {
      Error = S.HandlerError;
      return nullptr;
    }
  }
  std::sort(Payloads.begin(), Payloads.end(),
            [](const LazyPayload &A, const LazyPayload &B) {
              return A.Offset < B.Offset;
            });
  const uint64_t HeaderEnd = alignUp(Header.size());
  uint64_t Cursor = HeaderEnd;
  for (const LazyPayload &P : Payloads) {
    if (P.Offset % PageSize || P.Offset < Cursor ||
        P.Offset + P.Size > TotalSize) {
      Error = "payloads overlap the header or each other";
      return nullptr;
    }
    Cursor = P.Offset + alignUp(P.Size);
  }
  auto R = std::make_shared<Region>();
  R->MapSize = std::max(alignUp(TotalSize), HeaderEnd);
  void *Map = mmap(nullptr, R->MapSize, PROT_READ | PROT_WRITE,
                   MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
  if (Map == MAP_FAILED) {
    Error = std::string("mmap: ") + std::strerror(errno);
    return nullptr;
  }
  R->Base = static_cast<uint8_t *>(Map);
  if (HeaderEnd == R->MapSize) {
    // No device code: a plain mapping.
    std::memcpy(R->Base, Header.data(), Header.size());
    R->RegisteredStart = R->MapSize;
  } else {
    // The whole mapping is registered (one VMA: registering only the
    // payloads would split it) and the header pages are copied in.
    R->RegisteredStart = 0;
    uffdio_register Reg{};
    Reg.range.start = reinterpret_cast<uintptr_t>(R->Base);
    Reg.range.len = R->MapSize;
    Reg.mode = UFFDIO_REGISTER_MODE_MISSING;
    void *Page = std::aligned_alloc(PageSize, HeaderEnd);
    bool Ok = Page != nullptr;
    if (Ok) {
      std::memset(Page, 0, HeaderEnd);
      std::memcpy(Page, Header.data(), Header.size());
    }
    if (!Ok || ioctl(S.Uffd, UFFDIO_REGISTER, &Reg) != 0 ||
        !(Reg.ioctls & (uint64_t(1) << _UFFDIO_COPY)) ||
        !copyIn(S.Uffd, R->Base, static_cast<uint8_t *>(Page), HeaderEnd)) {
      Error = std::string("UFFDIO_REGISTER: ") + std::strerror(errno);
      std::free(Page);
      munmap(Map, R->MapSize);
      return nullptr;
    }
    std::free(Page);
    if (!startHandler(S, Error)) {
      munmap(Map, R->MapSize);
      return nullptr;
    }
  }
  R->Filled.assign(Payloads.size(), false);
  R->Payloads = std::move(Payloads);
  std::lock_guard<std::mutex> Lock(S.M);
  if (S.HandlerFailed) {
    // The handler gave up after it was started (or found running) above;
    // nobody would serve this bundle's faults.
    Error = S.HandlerError;
    if (R->RegisteredStart < R->MapSize) {
      uffdio_range Range{reinterpret_cast<uintptr_t>(R->Base), R->MapSize};
      (void)ioctl(S.Uffd, UFFDIO_UNREGISTER, &Range);
    }
    munmap(R->Base, R->MapSize);
    return nullptr;
  }
  S.Regions[reinterpret_cast<uintptr_t>(R->Base)] = R;
  return R->Base;
}

size_t releaseLazyBundle(const uint8_t *Bundle) {
  State &S = state();
  std::lock_guard<std::mutex> LifeLock(S.Life);
  std::shared_ptr<Region> R;
  size_t Filled = 0;
  {
    std::lock_guard<std::mutex> Lock(S.M);
    auto It = S.Regions.find(reinterpret_cast<uintptr_t>(Bundle));
    if (It == S.Regions.end())
      return 0;
    R = It->second;
    S.Regions.erase(It);
  }
  {
    // Waits for a fill in progress; unregistering wakes any thread still
    // waiting on the range (it then reads zeros, as after munmap it would
    // crash: the runtime must not read a bundle it unregistered).
    std::lock_guard<std::mutex> Lock(R->M);
    R->Dead = true;
    if (R->RegisteredStart < R->MapSize) {
      uffdio_range Range{
          reinterpret_cast<uintptr_t>(R->Base + R->RegisteredStart),
          R->MapSize - R->RegisteredStart};
      (void)ioctl(S.Uffd, UFFDIO_UNREGISTER, &Range);
    }
    munmap(R->Base, R->MapSize);
    R->Payloads.clear();
    Filled = size_t(std::count(R->Filled.begin(), R->Filled.end(), true));
  }
  stopHandlerIfIdle(S);
  return Filled;
}

LazyBundleStats lazyBundleStats() {
  State &S = state();
  std::lock_guard<std::mutex> Lock(S.M);
  LazyBundleStats St;
  St.Live = S.Regions.size();
  St.Filled = S.Filled;
  St.FillFailures = S.FillFailures;
  St.Faults = S.Faults;
  St.PopulatedAhead = S.PopulatedAhead;
  St.FromReserve = S.FromReserve;
  St.HandlerRunning = S.Running;
  St.HandlerFailed = S.HandlerFailed;
  {
    std::lock_guard<std::mutex> PLock(S.Populator.M);
    St.PopulatorRunning = S.Populator.Running;
  }
  return St;
}

void injectHandlerPollErrorForTesting(int Errno) {
  State &S = state();
  std::lock_guard<std::mutex> Lock(S.Life);
  InjectedPollError.store(Errno);
  if (S.WakeFd >= 0) {
    uint64_t One = 1;
    (void)!::write(S.WakeFd, &One, sizeof(One));
  }
}

} // namespace shim
} // namespace kpack
