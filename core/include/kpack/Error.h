//===- kpack/Error.h - The error type of the no-LLVM layers -----*- C++ -*-===//
//
// Everything below the LLVM-based tools (core/, the runtime, the shim, the
// stand-in HIP runtime, lib/format) reports failures as a Status value: the
// C API error code it maps to, so that the C layer is a plain pass-through,
// and a human-readable message for the tools and ROCM_KPACK_DEBUG. Functions
// returning a Status never throw.
//
//===----------------------------------------------------------------------===//
#ifndef KPACK_ERROR_H
#define KPACK_ERROR_H

#include "rocm_kpack/kpack_types.h"

#include <string>
#include <utility>

namespace kpack {

class Status {
public:
  Status() = default;
  Status(kpack_error_t Code, std::string Message)
      : Code(Code), Message(std::move(Message)) {}

  static Status ok() { return Status(); }
  /// A failure without a more specific code: malformed input.
  static Status error(std::string Message) {
    return Status(KPACK_ERROR_INVALID_FORMAT, std::move(Message));
  }
  static Status error(kpack_error_t Code, std::string Message) {
    return Status(Code, std::move(Message));
  }

  /// True on failure, so that `if (Status S = f()) return S;` propagates.
  explicit operator bool() const { return Code != KPACK_SUCCESS; }
  bool isOk() const { return Code == KPACK_SUCCESS; }
  kpack_error_t code() const { return Code; }
  const std::string &message() const { return Message; }

private:
  kpack_error_t Code = KPACK_SUCCESS;
  std::string Message;
};

/// The enumerator name of an error code, e.g. "KPACK_ERROR_INVALID_FORMAT".
const char *errorCodeName(kpack_error_t Code);

} // namespace kpack

#endif
