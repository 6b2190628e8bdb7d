/* Registration cost of a whole library: times dlopen(RTLD_LAZY) of a HIP
 * library, whose module constructors register every fat binary wrapper it
 * has (111 for librocsparse), and prints the wall time in milliseconds.
 * Lazy binding: only the registration entry points need to resolve. Exits
 * without dlclose so that only registration is measured.
 *   dlopen_bench LIBRARY */
#include <dlfcn.h>
#include <stdio.h>
#include <time.h>
#include <unistd.h>

int main(int argc, char **argv) {
  if (argc != 2) {
    fprintf(stderr, "usage: %s LIBRARY\n", argv[0]);
    return 2;
  }
  struct timespec Begin, End;
  clock_gettime(CLOCK_MONOTONIC, &Begin);
  void *Lib = dlopen(argv[1], RTLD_LAZY | RTLD_LOCAL);
  clock_gettime(CLOCK_MONOTONIC, &End);
  if (!Lib) {
    fprintf(stderr, "error: %s\n", dlerror());
    return 1;
  }
  printf("%.3f\n", (End.tv_sec - Begin.tv_sec) * 1e3 + (End.tv_nsec - Begin.tv_nsec) / 1e6);
  fflush(stdout);
  _exit(0);
}
