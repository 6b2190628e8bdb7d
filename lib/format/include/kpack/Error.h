//===- kpack/Error.h - Error reporting for the non-LLVM core ----*- C++ -*-===//
//
// The format core (lib/format) is used by the runtime-level pieces (stand-in
// HIP runtime, registration shim) that must not link LLVM, so it reports
// errors as values: a Status carries a message; functions never throw.
//
//===----------------------------------------------------------------------===//
#ifndef KPACK_ERROR_H
#define KPACK_ERROR_H

#include <string>
#include <utility>

namespace kpack {

class Status {
public:
  static Status ok() { return Status(); }
  static Status error(std::string Message) {
    Status S;
    S.Failed = true;
    S.Message = std::move(Message);
    return S;
  }
  explicit operator bool() const { return Failed; } // true on error
  bool isOk() const { return !Failed; }
  const std::string &message() const { return Message; }

private:
  bool Failed = false;
  std::string Message;
};

} // namespace kpack

#endif
