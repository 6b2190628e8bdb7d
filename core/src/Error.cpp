//===- Error.cpp - Names of the C API error codes -------------------------===//

#include "kpack/Error.h"

namespace kpack {

const char *errorCodeName(kpack_error_t Code) {
  switch (Code) {
#define CASE(X)                                                                \
  case X:                                                                      \
    return #X;
    CASE(KPACK_SUCCESS)
    CASE(KPACK_ERROR_INVALID_ARGUMENT)
    CASE(KPACK_ERROR_FILE_NOT_FOUND)
    CASE(KPACK_ERROR_INVALID_FORMAT)
    CASE(KPACK_ERROR_UNSUPPORTED_VERSION)
    CASE(KPACK_ERROR_KERNEL_NOT_FOUND)
    CASE(KPACK_ERROR_DECOMPRESSION_FAILED)
    CASE(KPACK_ERROR_OUT_OF_MEMORY)
    CASE(KPACK_ERROR_NOT_IMPLEMENTED)
    CASE(KPACK_ERROR_IO_ERROR)
    CASE(KPACK_ERROR_MSGPACK_PARSE_FAILED)
    CASE(KPACK_ERROR_PATH_DISCOVERY_FAILED)
    CASE(KPACK_ERROR_INVALID_METADATA)
    CASE(KPACK_ERROR_ARCHIVE_NOT_FOUND)
    CASE(KPACK_ERROR_ARCH_NOT_FOUND)
#undef CASE
  }
  return "KPACK_ERROR_UNKNOWN";
}

} // namespace kpack
