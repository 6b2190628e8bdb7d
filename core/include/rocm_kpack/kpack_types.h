/*===- rocm_kpack/kpack_types.h - Constants and types of the kpack format -===*
 *
 * The archive magic and version, the compression schemes and the error codes
 * of the rocm-kpack C API. Names and values are upstream rocm-kpack's
 * (docs/FORMAT.md §1), so code written against upstream compiles unchanged.
 * Includes nothing but <stddef.h>; valid as C11 and C++.
 *
 *===----------------------------------------------------------------------===*/
#ifndef ROCM_KPACK_KPACK_TYPES_H
#define ROCM_KPACK_KPACK_TYPES_H

#include <stddef.h>

/* An archive starts with these 4 bytes (no terminating NUL in the file). */
#define KPACK_MAGIC "KPAK"
#define KPACK_MAGIC_SIZE 4
/* The archive format version this library reads and writes. */
#define KPACK_CURRENT_VERSION 1

#ifdef __cplusplus
extern "C" {
#endif

/* How an archive stores its code objects (the TOC's "compression_scheme"). */
typedef enum {
  KPACK_COMPRESSION_NOOP = 0,            /* "none": raw blobs */
  KPACK_COMPRESSION_ZSTD_PER_KERNEL = 1  /* "zstd-per-kernel": one frame each */
} kpack_compression_scheme_t;

/* Error codes: values are part of the ABI and equal upstream's. */
typedef enum {
  KPACK_SUCCESS = 0,
  KPACK_ERROR_INVALID_ARGUMENT = 1,
  KPACK_ERROR_FILE_NOT_FOUND = 2,
  KPACK_ERROR_INVALID_FORMAT = 3,
  KPACK_ERROR_UNSUPPORTED_VERSION = 4,
  KPACK_ERROR_KERNEL_NOT_FOUND = 5,
  KPACK_ERROR_DECOMPRESSION_FAILED = 6,
  KPACK_ERROR_OUT_OF_MEMORY = 7,
  KPACK_ERROR_NOT_IMPLEMENTED = 8,
  KPACK_ERROR_IO_ERROR = 9,
  KPACK_ERROR_MSGPACK_PARSE_FAILED = 10,
  KPACK_ERROR_PATH_DISCOVERY_FAILED = 11,
  KPACK_ERROR_INVALID_METADATA = 12,
  KPACK_ERROR_ARCHIVE_NOT_FOUND = 13,
  KPACK_ERROR_ARCH_NOT_FOUND = 14
} kpack_error_t;

#ifdef __cplusplus
}
#endif

#endif /* ROCM_KPACK_KPACK_TYPES_H */
