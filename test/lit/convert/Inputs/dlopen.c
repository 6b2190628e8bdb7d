// Loads each library named on the command line with RTLD_NOW.
#include <dlfcn.h>
#include <stdio.h>
int main(int argc, char **argv) {
  for (int I = 1; I < argc; ++I) {
    if (!dlopen(argv[I], RTLD_NOW)) {
      printf("dlopen failed: %s\n", dlerror());
      return 1;
    }
    printf("dlopen ok\n");
  }
  return 0;
}
