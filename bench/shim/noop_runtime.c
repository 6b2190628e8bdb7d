/* The cheapest possible HIP runtime behind the shim, so that the benchmark
 * measures the shim, not a runtime: registration only stores the pointer (as
 * CLR does with deferred loading, its default). Versioned hip_4.2. */
#include <stdlib.h>

void **__hipRegisterFatBinary(const void *Wrapper) {
  void **M = malloc(sizeof(void *));
  if (M)
    *M = (void *)Wrapper;
  return M;
}

void __hipUnregisterFatBinary(void **Modules) { free(Modules); }
