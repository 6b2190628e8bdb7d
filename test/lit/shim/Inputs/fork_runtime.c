/* A minimal HIP runtime for the fork test (fork-during-registration.test):
 * __hipRegisterFatBinary reads every device code object of a HIPF bundle
 * at once (a lazy bundle's first touch, inside the registration) and
 * remembers whether each starts with an ELF header; fork_runtime_valid()
 * tells the program. No locks, no output: a fork child may call it whatever
 * another thread of the parent was doing. */
#include <stdint.h>
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

void **__hipRegisterFatBinary(const struct Wrapper *W) {
  int *Valid = calloc(2, sizeof(void *));
  if (!Valid)
    return NULL;
  if (W->Magic != 0x48495046 ||
      memcmp(W->Binary, "__CLANG_OFFLOAD_BUNDLE__", 24) != 0)
    return (void **)Valid;
  uint64_t N = readU64(W->Binary + 24), CodeObjects = 0, Good = 0;
  const uint8_t *P = W->Binary + 32;
  for (uint64_t I = 0; I < N; ++I) {
    uint64_t Offset = readU64(P), Size = readU64(P + 8), Len = readU64(P + 16);
    if (Size) {
      const volatile uint8_t *D = W->Binary + Offset;
      unsigned Sum = 0;
      for (uint64_t K = 0; K < Size; K += 4096)
        Sum += D[K];
      (void)Sum;
      ++CodeObjects;
      Good += Size >= 4 && D[0] == 0x7f && D[1] == 'E' && D[2] == 'L' &&
              D[3] == 'F';
    }
    P += 24 + Len;
  }
  *Valid = CodeObjects > 0 && Good == CodeObjects;
  return (void **)Valid;
}

int fork_runtime_valid(void **Modules) { return Modules && *(int *)Modules; }

void __hipUnregisterFatBinary(void **Modules) { free(Modules); }

void __hipRegisterFunction(void **Modules, const void *HostFunction,
                           char *DeviceFunction, const char *DeviceName,
                           int ThreadLimit, void *Tid, void *Bid,
                           void *BlockDim, void *GridDim, int *WarpSize) {
  (void)Modules, (void)HostFunction, (void)DeviceFunction, (void)DeviceName;
  (void)ThreadLimit, (void)Tid, (void)Bid, (void)BlockDim, (void)GridDim;
  (void)WarpSize;
}

void __hipRegisterVar(void **Modules, void *Var, char *HostVar, char *DeviceVar,
                      int Ext, size_t Size, int Constant, int Global) {
  (void)Modules, (void)Var, (void)HostVar, (void)DeviceVar, (void)Ext;
  (void)Size, (void)Constant, (void)Global;
}
