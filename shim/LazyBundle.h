//===- LazyBundle.h - Offload bundles materialised on first touch -*- C++ -*-=//
//
// A stock HIP runtime gets a pointer to an offload bundle at
// __hipRegisterFatBinary and reads it when it likes (docs/shim.md, "What a
// stock CLR reads, and when"). A lazy bundle is an anonymous mapping whose
// header is written at creation and whose payload pages are registered with
// userfaultfd (UFFD_USER_MODE_ONLY): the first read of any page of a payload
// makes the one handler thread fill that whole payload (Fill, e.g. decompress
// a code object) into staging memory and move it in (UFFDIO_MOVE; copied with
// UFFDIO_COPY where the kernel cannot move); the reading thread sleeps in the
// kernel meanwhile. A second thread populates the staging memory of large
// payloads while Fill writes it. No signal handlers.
//
// Limits: only user-mode reads are served; a system call handed a pointer to
// an unfilled payload (write(2) from the bundle) fails with EFAULT. A child
// created by fork() inherits the mapping without the registration: payloads
// not filled before the fork read as zeros there (an invalid code object).
//
//===----------------------------------------------------------------------===//
#ifndef KPACK_SHIM_LAZYBUNDLE_H
#define KPACK_SHIM_LAZYBUNDLE_H

#include <cstddef>
#include <cstdint>
#include <functional>
#include <string>
#include <vector>

namespace kpack {
namespace shim {

/// One payload of a lazy bundle.
struct LazyPayload {
  uint64_t Offset = 0; ///< from the bundle start; a multiple of the page size
  uint64_t Size = 0;
  /// Writes the Size payload bytes to Dest; on failure returns false and sets
  /// Error (one line). Runs on the handler thread, at most once.
  std::function<bool(uint8_t *Dest, std::string &Error)> Fill;
  std::string Name; ///< for messages, e.g. "'/lib/x.so'#3 for gfx1100"
};

/// Counters for tests and the benchmark.
struct LazyBundleStats {
  uint64_t Live = 0;         ///< lazy bundles currently mapped
  uint64_t Filled = 0;       ///< payloads filled successfully
  uint64_t FillFailures = 0; ///< payloads whose Fill failed (zeros served)
  uint64_t Faults = 0;       ///< page-fault events handled
  /// Fills whose staging memory a second thread populated while the payload
  /// was written (large payloads, at least two CPUs).
  uint64_t PopulatedAhead = 0;
  /// Fills whose staging memory came from the reserve the handler prepares
  /// between faults (after the first fill; docs/shim.md, "Staging memory").
  uint64_t FromReserve = 0;
  bool HandlerRunning = false;
  bool PopulatorRunning = false;
  /// The handler thread can no longer wait for faults (poll failed): every
  /// payload of the live bundles was filled at once, and createLazyBundle
  /// fails until the last of them is released.
  bool HandlerFailed = false;
};

/// Whether lazy bundles can be created here; if not, Why says why (the
/// environment asks for eager loading, or userfaultfd is unavailable). The
/// answer is computed once per process (again in a fork child).
bool lazyBundlesAvailable(std::string &Why);

/// Maps a bundle of TotalSize bytes, writes Header at its start and arranges
/// for each payload to be filled on first touch. The header must end before
/// the first payload; payloads must not overlap. Returns the bundle, or null
/// with Error set (nothing is left mapped then).
const uint8_t *createLazyBundle(const std::vector<uint8_t> &Header,
                                uint64_t TotalSize,
                                std::vector<LazyPayload> Payloads,
                                std::string &Error);

/// Unmaps a bundle from createLazyBundle (no-op for anything else); the
/// handler thread exits when the last one is gone. Returns how many of its
/// payloads had been filled.
size_t releaseLazyBundle(const uint8_t *Bundle);

LazyBundleStats lazyBundleStats();

/// Tests only: the handler thread's next poll() fails with Errno (it is
/// woken to make that happen at once). EINTR is retried; any other error is
/// fatal to the handler (LazyBundleStats::HandlerFailed).
void injectHandlerPollErrorForTesting(int Errno);

} // namespace shim
} // namespace kpack

#endif
