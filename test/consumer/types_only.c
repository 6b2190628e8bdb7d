/* Includes rocm_kpack/kpack_types.h alone (no kpack.h) from C11 and uses
 * each of its names: the archive magic and version, the compression schemes
 * and the error codes, as upstream rocm-kpack's header provides them. */
#include <rocm_kpack/kpack_types.h>

#include <stdio.h>
#include <string.h>

_Static_assert(KPACK_MAGIC_SIZE == 4, "magic size");
_Static_assert(sizeof(KPACK_MAGIC) == KPACK_MAGIC_SIZE + 1, "magic literal");
_Static_assert(KPACK_CURRENT_VERSION == 1, "format version");

int main(void) {
  unsigned char header[8] = {0};
  memcpy(header, KPACK_MAGIC, KPACK_MAGIC_SIZE);
  kpack_compression_scheme_t schemes[] = {KPACK_COMPRESSION_NOOP,
                                          KPACK_COMPRESSION_ZSTD_PER_KERNEL};
  kpack_error_t last = KPACK_ERROR_ARCH_NOT_FOUND;
  printf("magic %.4s version %d schemes %d %d errors %d..%d\n", header,
         KPACK_CURRENT_VERSION, (int)schemes[0], (int)schemes[1],
         (int)KPACK_SUCCESS, (int)last);
  return 0;
}
