//===- Report.h - The shim's stderr lines -----------------------*- C++ -*-===//
//
// "rocm_kpack_hip: <text>" on stderr, written with a single write(2): lines
// from several threads never interleave, and no stdio lock is taken (the
// userfaultfd handler thread must not wait for a lock that a thread it is
// serving may hold).
//
//===----------------------------------------------------------------------===//
#ifndef KPACK_SHIM_REPORT_H
#define KPACK_SHIM_REPORT_H

// mingw-w64 (the Windows build, with __USE_MINGW_ANSI_STDIO=1): the C99
// formats (%zu) of mingw's own printf, not msvcrt's.
#ifdef _WIN32
#define KPACK_SHIM_PRINTF(F, A) __attribute__((format(gnu_printf, F, A)))
#else
#define KPACK_SHIM_PRINTF(F, A) __attribute__((format(printf, F, A)))
#endif

namespace kpack {
namespace shim {

void reportLine(const char *Format, ...) KPACK_SHIM_PRINTF(1, 2);

} // namespace shim
} // namespace kpack

#endif
