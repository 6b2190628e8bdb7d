//===- kpack/ApiError.h - Errors of the runtime's C++ layer -----*- C++ -*-===//
//
// The runtime reports failures as values that carry the C API error code they
// map to (so the C layer is a plain pass-through) and a human-readable reason
// used by the tools and by ROCM_KPACK_DEBUG.
//
//===----------------------------------------------------------------------===//
#ifndef KPACK_RUNTIME_APIERROR_H
#define KPACK_RUNTIME_APIERROR_H

#include "rocm_kpack/kpack.h"

#include <string>
#include <utility>

namespace kpack {

class ApiError {
public:
  ApiError() = default;
  ApiError(kpack_error_t Code, std::string Message)
      : Code(Code), Message(std::move(Message)) {}
  static ApiError success() { return ApiError(); }

  /// True on failure, so that `if (ApiError E = f()) return E;` propagates.
  explicit operator bool() const { return Code != KPACK_SUCCESS; }
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
