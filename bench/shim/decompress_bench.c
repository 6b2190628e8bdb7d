/* The floor for HIPK registration: the time to decompress, through
 * librocm_kpack, every code object an archive holds for one architecture
 * (what the shim must hand the runtime for that GPU). Prints milliseconds and
 * the decompressed bytes.
 *   decompress_bench ARCHIVE ARCH */
#include <rocm_kpack/kpack.h>

#include <stdio.h>
#include <time.h>

int main(int argc, char **argv) {
  if (argc != 3) {
    fprintf(stderr, "usage: %s ARCHIVE ARCH\n", argv[0]);
    return 2;
  }
  kpack_archive_t A;
  if (kpack_open(argv[1], &A) != KPACK_SUCCESS) {
    fprintf(stderr, "error: cannot open %s\n", argv[1]);
    return 1;
  }
  size_t Count = 0, Bytes = 0;
  kpack_get_binary_count(A, &Count);
  struct timespec Begin, End;
  clock_gettime(CLOCK_MONOTONIC, &Begin);
  for (size_t I = 0; I < Count; ++I) {
    const char *Key;
    void *Data;
    size_t Size;
    if (kpack_get_binary(A, I, &Key) != KPACK_SUCCESS ||
        kpack_get_kernel(A, Key, argv[2], &Data, &Size) != KPACK_SUCCESS)
      continue;
    Bytes += Size;
    kpack_free_kernel(Data);
  }
  clock_gettime(CLOCK_MONOTONIC, &End);
  printf("%.3f %zu\n", (End.tv_sec - Begin.tv_sec) * 1e3 + (End.tv_nsec - Begin.tv_nsec) / 1e6, Bytes);
  kpack_close(A);
  return 0;
}
