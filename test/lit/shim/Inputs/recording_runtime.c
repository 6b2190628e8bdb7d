/* A minimal HIP runtime for the shim tests: it prints what
 * __hipRegisterFatBinary receives (wrapper magic, bundle entries) and, with
 * RECORD_DIR set, writes each bundle payload to RECORD_DIR/<target>.co
 * (':' -> '_'). Built with recording_runtime.map, which gives the entry
 * points version hip_4.2 as libamdhip64 does, so programs linked against it
 * import __hipRegisterFatBinary@hip_4.2. */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

struct Wrapper {
  uint32_t Magic;
  uint32_t Version;
  const uint8_t *Binary;
  uint64_t Reserved1;
};

static uint64_t readU64(const uint8_t *P) {
  uint64_t V;
  memcpy(&V, P, 8);
  return V;
}

static void record(const char *Id, const uint8_t *Data, uint64_t Size) {
  const char *Dir = getenv("RECORD_DIR");
  const char *Target = strstr(Id, "--");
  if (!Dir || !Target || !Size)
    return;
  char Path[4096];
  snprintf(Path, sizeof(Path), "%s/%s.co", Dir, Target + 2);
  for (char *C = Path + strlen(Dir) + 1; *C; ++C)
    if (*C == ':')
      *C = '_';
  /* Copied first, as a runtime's loader copies a code object: the shim's
   * lazy bundles serve user-mode reads only (UFFD_USER_MODE_ONLY), so
   * handing an unread payload straight to write(2) would fail (EFAULT). */
  uint8_t *Copy = malloc(Size);
  FILE *F = Copy ? fopen(Path, "wb") : NULL;
  if (F) {
    memcpy(Copy, Data, Size);
    fwrite(Copy, 1, Size, F);
    fclose(F);
  }
  free(Copy);
}

void **__hipRegisterFatBinary(const struct Wrapper *W) {
  const char *Magic = W->Magic == 0x48495046   ? "HIPF"
                      : W->Magic == 0x4B504948 ? "HIPK"
                                               : "unknown";
  fprintf(stderr, "runtime: register magic %s\n", Magic);
  if (W->Magic == 0x48495046 &&
      memcmp(W->Binary, "__CLANG_OFFLOAD_BUNDLE__", 24) == 0) {
    uint64_t N = readU64(W->Binary + 24);
    const uint8_t *P = W->Binary + 32;
    for (uint64_t I = 0; I < N; ++I) {
      uint64_t Offset = readU64(P), Size = readU64(P + 8), Len = readU64(P + 16);
      fprintf(stderr, "runtime: entry %.*s size %s\n", (int)Len, P + 24,
              Size ? "nonzero" : "0");
      char Id[256];
      snprintf(Id, sizeof(Id), "%.*s", (int)Len, P + 24);
      record(Id, W->Binary + Offset, Size);
      P += 24 + Len;
    }
  }
  return (void **)calloc(1, sizeof(void *));
}

void __hipUnregisterFatBinary(void **Modules) {
  fprintf(stderr, "runtime: unregister\n");
  free(Modules);
}

void __hipRegisterFunction(void **Modules, const void *HostFunction,
                           char *DeviceFunction, const char *DeviceName,
                           int ThreadLimit, void *Tid, void *Bid,
                           void *BlockDim, void *GridDim, int *WarpSize) {
  (void)Modules, (void)HostFunction, (void)DeviceFunction, (void)ThreadLimit;
  (void)Tid, (void)Bid, (void)BlockDim, (void)GridDim, (void)WarpSize;
  fprintf(stderr, "runtime: function %s\n", DeviceName);
}

void __hipRegisterVar(void **Modules, void *Var, char *HostVar, char *DeviceVar,
                      int Ext, size_t Size, int Constant, int Global) {
  (void)Modules, (void)Var, (void)HostVar, (void)Ext, (void)Size;
  (void)Constant, (void)Global;
  fprintf(stderr, "runtime: variable %s\n", DeviceVar);
}

/* Launch entry points referenced by clang's kernel stubs; never called. */
struct Dim3 {
  unsigned X, Y, Z;
};
unsigned __hipPushCallConfiguration(struct Dim3 Grid, struct Dim3 Block,
                                    size_t SharedMem, void *Stream) {
  (void)Grid, (void)Block, (void)SharedMem, (void)Stream;
  return 0;
}
int __hipPopCallConfiguration(struct Dim3 *Grid, struct Dim3 *Block,
                              size_t *SharedMem, void **Stream) {
  (void)Grid, (void)Block, (void)SharedMem, (void)Stream;
  return 0;
}
int hipLaunchKernel(const void *Function, struct Dim3 Grid, struct Dim3 Block,
                    void **Args, size_t SharedMem, void *Stream) {
  (void)Function, (void)Grid, (void)Block, (void)Args, (void)SharedMem;
  (void)Stream;
  return 0;
}
