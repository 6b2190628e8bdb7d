/* Uses all 14 functions of rocm_kpack/kpack.h from C11.
 * usage: kpack_consumer <archive.kpack>   (upstream's test_zstd.kpack) */
#include <rocm_kpack/kpack.h>

#include <stdio.h>
#include <string.h>

static int failed(const char *what, kpack_error_t err) {
  fprintf(stderr, "error: %s failed with %d\n", what, (int)err);
  return 1;
}

static bool print_arch(const char *arch, void *user_data) {
  int *seen = (int *)user_data;
  printf("enumerate: %s\n", arch);
  ++*seen;
  return true;
}

/* msgpack str (str8 or fixstr) */
static size_t put_str(unsigned char *out, const char *s) {
  size_t n = strlen(s), at = 0;
  if (n < 32) {
    out[at++] = (unsigned char)(0xa0 | n);
  } else {
    out[at++] = 0xd9;
    out[at++] = (unsigned char)n;
  }
  memcpy(out + at, s, n);
  return at + n;
}

int main(int argc, char **argv) {
  if (argc != 2 || strlen(argv[1]) > 200)
    return fprintf(stderr, "usage: %s <archive.kpack>\n", argv[0]), 2;

  kpack_archive_t archive = NULL;
  kpack_error_t err = kpack_open(argv[1], &archive);
  if (err != KPACK_SUCCESS)
    return failed("kpack_open", err);
  size_t count = 0;
  kpack_get_architecture_count(archive, &count);
  for (size_t i = 0; i < count; ++i) {
    const char *arch = NULL;
    kpack_get_architecture(archive, i, &arch);
    printf("arch: %s\n", arch);
  }
  kpack_get_binary_count(archive, &count);
  for (size_t i = 0; i < count; ++i) {
    const char *binary = NULL;
    kpack_get_binary(archive, i, &binary);
    printf("binary: %s\n", binary);
  }
  void *kernel = NULL;
  size_t size = 0;
  err = kpack_get_kernel(archive, "lib/libhip.so#0", "gfx1100", &kernel, &size);
  if (err != KPACK_SUCCESS)
    return failed("kpack_get_kernel", err);
  printf("kernel: %zu bytes, starts %.19s\n", size, (const char *)kernel);
  kpack_free_kernel(kernel);
  kpack_close(archive);

  int seen = 0;
  err = kpack_enumerate_architectures(argv[1], print_arch, &seen);
  if (err != KPACK_SUCCESS)
    return failed("kpack_enumerate_architectures", err);

  /* HIPK metadata naming the archive by absolute path. */
  unsigned char metadata[512];
  size_t at = 0;
  metadata[at++] = 0x82; /* map of 2 */
  at += put_str(metadata + at, "kernel_name");
  at += put_str(metadata + at, "lib/libhip.so");
  at += put_str(metadata + at, "kpack_search_paths");
  metadata[at++] = 0x91; /* array of 1 */
  at += put_str(metadata + at, argv[1]);

  char self[4096];
  size_t offset = 0;
  err = kpack_discover_binary_path((const void *)&put_str, self, sizeof self,
                                   &offset);
  if (err != KPACK_SUCCESS)
    return failed("kpack_discover_binary_path", err);
  const char *base = strrchr(self, '/');
  printf("binary path: %s\n", base ? base + 1 : self);

  kpack_cache_t cache = NULL;
  err = kpack_cache_create(&cache);
  if (err != KPACK_SUCCESS)
    return failed("kpack_cache_create", err);
  const char *arches[] = {"amdgcn-amd-amdhsa--gfx1201",
                          "amdgcn-amd-amdhsa--gfx1101"};
  void *code = NULL;
  err = kpack_load_code_object(cache, metadata, self, 0, arches, 2, &code, &size);
  if (err != KPACK_SUCCESS)
    return failed("kpack_load_code_object", err);
  printf("code object: %zu bytes\n", size);
  kpack_free_code_object(code);
  kpack_cache_destroy(cache);
  return 0;
}
