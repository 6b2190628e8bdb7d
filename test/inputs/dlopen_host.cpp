// Host program (no HIP code, not linked against any HIP runtime) that
// dlopen()s a HIP shared library, optionally calls one of its functions, and
// dlclose()s it: the library registers its device code from its own
// constructors. Lazy binding, so that a HIP library whose runtime functions
// are never called can load against a runtime that lacks them.
// Usage: dlopen_host <library> [<function returning int>]
#include <dlfcn.h>
#include <stdio.h>

int main(int argc, char **argv) {
  if (argc != 2 && argc != 3) {
    fprintf(stderr, "usage: %s <library> [<function>]\n", argv[0]);
    return 2;
  }
  void *Lib = dlopen(argv[1], RTLD_LAZY | RTLD_LOCAL);
  if (!Lib) {
    fprintf(stderr, "dlopen failed: %s\n", dlerror());
    return 2;
  }
  fprintf(stderr, "dlopen done\n");
  int Result = 0;
  if (argc == 3) {
    auto *Fn = reinterpret_cast<int (*)()>(dlsym(Lib, argv[2]));
    if (!Fn) {
      fprintf(stderr, "dlsym failed: %s\n", dlerror());
      return 2;
    }
    Result = Fn();
  }
  dlclose(Lib);
  fprintf(stderr, "dlclose done\n");
  return Result;
}
