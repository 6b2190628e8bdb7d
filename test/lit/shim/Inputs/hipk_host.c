/* A host program whose fat binary wrapper is HIPK, registered by hand the way
 * clang's module constructor registers a fat binary. The kpack metadata,
 *   {"kernel_name": KPACK_NAME, "kpack_search_paths": [KPACK_SEARCH_PATH]},
 * is a constant in the binary, as the kpack tools write it; KPACK_NAME and
 * KPACK_SEARCH_PATH are string macros (at most 255 bytes each), the
 * code-object index is KPACK_CO_INDEX (default 0). With KPACK_LAUNCH main
 * launches kpk_add once through hipLaunchKernel (the stand-in runtime's
 * "first launch" of the binary). With KPACK_NO_MAIN the
 * object has no main, so that several (one per "translation unit") can be
 * linked together. C, so that the msgpack strings can be char arrays without
 * a terminating NUL. */
#include <stdint.h>
#include <stdio.h>

#ifndef KPACK_CO_INDEX
#define KPACK_CO_INDEX 0
#endif

void **__hipRegisterFatBinary(const void *Wrapper);
void __hipUnregisterFatBinary(void **Modules);
void __hipRegisterFunction(void **Modules, const void *HostFunction,
                           char *DeviceFunction, const char *DeviceName,
                           int ThreadLimit, void *Tid, void *Bid,
                           void *BlockDim, void *GridDim, int *WarpSize);
void __hipRegisterVar(void **Modules, void *Var, char *HostVar, char *DeviceVar,
                      int Ext, size_t Size, int Constant, int Global);

#define STR8(Name, Text)                                                       \
  uint8_t Name##Tag, Name##Len;                                                \
  char Name[sizeof(Text) - 1]
#define STR8_INIT(Text) 0xd9, sizeof(Text) - 1, Text

static const struct __attribute__((packed)) {
  uint8_t Map;
  STR8(NameKey, "kernel_name");
  STR8(Name, KPACK_NAME);
  STR8(PathsKey, "kpack_search_paths");
  uint8_t Array;
  STR8(Path, KPACK_SEARCH_PATH);
} Metadata = {0x82 /* fixmap 2 */,
              STR8_INIT("kernel_name"),
              STR8_INIT(KPACK_NAME),
              STR8_INIT("kpack_search_paths"),
              0x91 /* fixarray 1 */,
              STR8_INIT(KPACK_SEARCH_PATH)};

static const struct {
  uint32_t Magic;
  uint32_t Version;
  const void *Binary;
  uint64_t Reserved1;
} Wrapper = {0x4B504948 /* HIPK */, 1, &Metadata, KPACK_CO_INDEX};

static void **Modules;
static int KpkVarShadow;
static void kpkAddStub(void) {}

__attribute__((constructor)) static void registerBinary(void) {
  Modules = __hipRegisterFatBinary(&Wrapper);
  __hipRegisterFunction(Modules, (const void *)&kpkAddStub, (char *)"kpk_add",
                        "kpk_add", -1, 0, 0, 0, 0, 0);
  __hipRegisterVar(Modules, &KpkVarShadow, (char *)"kpk_var", (char *)"kpk_var",
                   0, sizeof(int), 0, 0);
}

__attribute__((destructor)) static void unregisterBinary(void) {
  __hipUnregisterFatBinary(Modules);
}

#ifndef KPACK_NO_MAIN
#ifdef KPACK_LAUNCH
typedef struct {
  unsigned X, Y, Z;
} Dim3;
int hipLaunchKernel(const void *HostFunction, Dim3 Grid, Dim3 Block,
                    void **Args, size_t SharedMem, void *Stream);
#endif

int main(void) {
  fprintf(stderr, "host: main ran\n");
#ifdef KPACK_LAUNCH
  Dim3 One = {1, 1, 1};
  int Err = hipLaunchKernel((const void *)&kpkAddStub, One, One, 0, 0, 0);
  fprintf(stderr, "host: hipLaunchKernel(kpk_add) returned %d\n", Err);
#endif
  return 0;
}
#endif
