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

namespace kpack {
namespace shim {

void reportLine(const char *Format, ...) __attribute__((format(printf, 1, 2)));

} // namespace shim
} // namespace kpack

#endif
