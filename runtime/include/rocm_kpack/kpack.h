/*===- rocm_kpack/kpack.h - kpack archive reader and loader C API ---------===*
 *
 * The C API of librocm_kpack. Names, signatures, semantics and error-code
 * values are those of upstream rocm-kpack, so code written against upstream
 * (CLR's HIPK path in particular) compiles and behaves unchanged.
 *
 * Valid as C11 and C++. Every function is safe against malformed input: it
 * returns an error code and never aborts, throws or reads out of bounds.
 *
 *===----------------------------------------------------------------------===*/
#ifndef ROCM_KPACK_H
#define ROCM_KPACK_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "rocm_kpack/kpack_export.h"
#include "rocm_kpack/kpack_types.h"

#ifdef __cplusplus
extern "C" {
#endif

/* kpack_error_t, KPACK_MAGIC and the compression schemes: kpack_types.h. */

/* Opaque handles. */
typedef struct kpack_archive* kpack_archive_t;
typedef struct kpack_cache* kpack_cache_t;

/* Return true to continue enumeration, false to stop. */
typedef bool (*kpack_arch_callback_t)(const char* arch, void* user_data);

/*--- Archive lifecycle ----------------------------------------------------*/

/* Opens a .kpack archive: reads and validates the header and the TOC only. */
KPACK_API kpack_error_t kpack_open(const char* path, kpack_archive_t* archive);
/* Closes an archive (NULL is a no-op). Not while other threads use it. */
KPACK_API void kpack_close(kpack_archive_t archive);

/*--- Queries (returned strings are owned by the archive) ------------------*/

KPACK_API kpack_error_t kpack_get_architecture_count(kpack_archive_t archive,
                                                     size_t* count);
KPACK_API kpack_error_t kpack_get_architecture(kpack_archive_t archive,
                                               size_t index, const char** arch);
KPACK_API kpack_error_t kpack_get_binary_count(kpack_archive_t archive,
                                               size_t* count);
KPACK_API kpack_error_t kpack_get_binary(kpack_archive_t archive, size_t index,
                                         const char** binary);

/*--- Kernel loading -------------------------------------------------------*/

/* Decompresses the entry (binary_name, arch) into a malloc'ed buffer that the
 * caller frees with kpack_free_kernel. Thread-safe on one archive; concurrent
 * calls decompress in parallel. */
KPACK_API kpack_error_t kpack_get_kernel(kpack_archive_t archive,
                                         const char* binary_name,
                                         const char* arch, void** kernel_data,
                                         size_t* kernel_size);
KPACK_API void kpack_free_kernel(void* kernel_data);

/*--- Loader API (what CLR calls for HIPK wrappers) ------------------------*/

/* Creates a loader cache; reads ROCM_KPACK_PATH, ROCM_KPACK_PATH_PREFIX,
 * ROCM_KPACK_DISABLE, ROCM_KPACK_DEBUG and ROCM_KPACK_ARCH_OVERRIDE once. */
KPACK_API kpack_error_t kpack_cache_create(kpack_cache_t* cache);
KPACK_API void kpack_cache_destroy(kpack_cache_t cache);

/* Finds the file of the loaded binary that contains address_in_binary. */
KPACK_API kpack_error_t kpack_discover_binary_path(const void* address_in_binary,
                                                   char* path_out,
                                                   size_t path_out_size,
                                                   size_t* offset_out);

/* Loads code object "<kernel_name>#<co_index>" for the first architecture of
 * arch_list (priority order) found in the archives named by hipk_metadata. */
KPACK_API kpack_error_t kpack_load_code_object(
    kpack_cache_t cache, const void* hipk_metadata, const char* binary_path,
    uint32_t co_index, const char* const* arch_list, size_t arch_count,
    void** code_object_out, size_t* code_object_size_out);
KPACK_API void kpack_free_code_object(void* code_object);

/* Opens archive_path and calls callback for each architecture it offers. */
KPACK_API kpack_error_t kpack_enumerate_architectures(
    const char* archive_path, kpack_arch_callback_t callback, void* user_data);

#ifdef __cplusplus
}
#endif

#endif /* ROCM_KPACK_H */
