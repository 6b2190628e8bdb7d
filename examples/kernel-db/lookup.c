/* How a kernel library finds a file of its database in the archives that
 * `kpack pack-db` wrote (docs/kernel-databases.md).
 *
 *   lookup DIR NAME LIBRARY FILE TARGET...
 *
 * For each TARGET in order (the library's candidates, most specific first:
 * the agent's full target ID, the same with features dropped, its generic
 * processor), opens DIR/NAME_<TARGET>.kpack if it exists and asks it for the
 * entry "<LIBRARY>/<TARGET>/<FILE>" of arch TARGET. Prints where it was found
 * and the entry's bytes. Exits 1 if no candidate has it.
 *
 * Built and run by test/lit/pack-db/lookup-example.test. */
#include <rocm_kpack/kpack.h>

#include <stdio.h>
#include <stdlib.h>

/* The bytes of <library>/<target>/<file> from the first archive that has
 * them; the caller frees *data with kpack_free_kernel. Returns the target
 * that matched, or NULL. */
static const char *find_kernel(const char *dir, const char *name,
                               const char *library, const char *file,
                               const char *const *targets, int count,
                               void **data, size_t *size) {
  for (int i = 0; i < count; ++i) {
    char path[4096], key[4096];
    snprintf(path, sizeof path, "%s/%s_%s.kpack", dir, name, targets[i]);
    snprintf(key, sizeof key, "%s/%s/%s", library, targets[i], file);
    kpack_archive_t archive;
    if (kpack_open(path, &archive) != KPACK_SUCCESS)
      continue; /* no archive for this candidate */
    kpack_error_t err = kpack_get_kernel(archive, key, targets[i], data, size);
    kpack_close(archive);
    if (err == KPACK_SUCCESS)
      return targets[i];
  }
  return NULL;
}

int main(int argc, char **argv) {
  if (argc < 6) {
    fprintf(stderr, "usage: %s DIR NAME LIBRARY FILE TARGET...\n", argv[0]);
    return 2;
  }
  void *data = NULL;
  size_t size = 0;
  const char *target =
      find_kernel(argv[1], argv[2], argv[3], argv[4],
                  (const char *const *)argv + 5, argc - 5, &data, &size);
  if (!target) {
    printf("%s: not found\n", argv[4]);
    return 1;
  }
  printf("%s/%s/%s: %zu bytes\n", argv[3], target, argv[4], size);
  fwrite(data, 1, size, stdout);
  printf("\n");
  kpack_free_kernel(data);
  return 0;
}
