/* The cheapest possible HIP runtime behind the shim, so that the benchmark
 * measures the shim, not a runtime: registration only stores the pointer (as
 * CLR does with deferred loading, its default). Versioned hip_4.2.
 * noop_registered() lists the wrappers registered so far, for
 * first_touch_bench. */
#include <stddef.h>
#include <stdlib.h>

static const void **Registered;
static size_t Count, Capacity;

void **__hipRegisterFatBinary(const void *Wrapper) {
  void **M = malloc(sizeof(void *));
  if (M)
    *M = (void *)Wrapper;
  if (Count == Capacity) {
    size_t NewCapacity = Capacity ? 2 * Capacity : 256;
    const void **Grown = realloc(Registered, NewCapacity * sizeof(void *));
    if (!Grown)
      return M;
    Registered = Grown;
    Capacity = NewCapacity;
  }
  Registered[Count++] = Wrapper;
  return M;
}

void __hipUnregisterFatBinary(void **Modules) { free(Modules); }

/* The other registration calls a library's module constructor makes, as
 * no-ops (a deferred-loading CLR records them in maps). */
void __hipRegisterFunction(void) {}
void __hipRegisterVar(void) {}
void __hipRegisterManagedVar(void) {}
void __hipRegisterSurface(void) {}
void __hipRegisterTexture(void) {}

const void *const *noop_registered(size_t *N) {
  *N = Count;
  return Registered;
}
