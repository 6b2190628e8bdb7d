// Registers a fat binary with the HIP runtime it is linked against the way
// host code does, without compiler support, and registers kernels by device
// name. Lets tests drive a runtime's registration paths with any input:
//
//   register_fatbin hipk <kernel_name> <N> <search path>... [-- <kernel>...]
//     a HIPK wrapper (reserved1 = N) pointing at kpack metadata, encoded with
//     kpack_format, in this executable's data, as in a kpack'd binary;
//   register_fatbin hipf-heap <bundle file> [-- <kernel>...]
//     a HIPF wrapper and its offload bundle in heap memory, as a runtime
//     shim that builds registrations at run time produces them.
#include "kpack/Metadata.h"

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <string>
#include <vector>

extern "C" void **__hipRegisterFatBinary(const void *Wrapper);
extern "C" void __hipRegisterFunction(void **Handle, const void *HostFunction,
                                      char *DeviceFunction,
                                      const char *DeviceName, unsigned, void *,
                                      void *, void *, void *, int *);
extern "C" void __hipUnregisterFatBinary(void **Handle);

namespace {
struct Wrapper {
  uint32_t Magic, Version;
  const void *Binary;
  const void *Reserved1;
};
constexpr uint32_t HipfMagic = 0x48495046, HipkMagic = 0x4B504948;

// The metadata must be file-backed (initialized data, not .bss): a loader
// finds the binary's path from the mapping that holds it.
uint8_t Metadata[kpack::MaxKpackMetadataSize] = {1};
Wrapper HipkWrapper = {HipkMagic, 1, Metadata, nullptr};
char HostStubs[256]; // one distinct address per registered kernel

int usage(const char *Argv0) {
  fprintf(stderr,
          "usage: %s hipk <kernel_name> <N> <search path>... [-- <kernel>...]\n"
          "       %s hipf-heap <bundle file> [-- <kernel>...]\n",
          Argv0, Argv0);
  return 2;
}

const Wrapper *hipkWrapper(int Argc, char **Argv, int &I) {
  kpack::KpackMetadata M;
  M.KernelName = Argv[2];
  for (I = 4; I < Argc && strcmp(Argv[I], "--") != 0; ++I)
    M.SearchPaths.push_back(Argv[I]);
  std::vector<uint8_t> Bytes;
  if (kpack::Status S = kpack::encodeKpackMetadata(M, Bytes)) {
    fprintf(stderr, "error: %s\n", S.message().c_str());
    return nullptr;
  }
  memcpy(Metadata, Bytes.data(), Bytes.size());
  HipkWrapper.Reserved1 =
      reinterpret_cast<const void *>(uintptr_t(strtoul(Argv[3], nullptr, 10)));
  return &HipkWrapper;
}

const Wrapper *heapHipfWrapper(char **Argv, int &I) {
  FILE *F = fopen(Argv[2], "rb");
  if (!F) {
    fprintf(stderr, "error: cannot open %s\n", Argv[2]);
    return nullptr;
  }
  std::vector<uint8_t> Bytes;
  for (int C; (C = fgetc(F)) != EOF;)
    Bytes.push_back(uint8_t(C));
  fclose(F);
  // Both stay allocated for the life of the process, as a runtime expects.
  uint8_t *Bundle = static_cast<uint8_t *>(malloc(Bytes.size() + 1));
  memcpy(Bundle, Bytes.data(), Bytes.size());
  I = 3;
  return new Wrapper{HipfMagic, 1, Bundle, nullptr};
}
} // namespace

int main(int Argc, char **Argv) {
  if (Argc < 3)
    return usage(Argv[0]);
  int I = 0;
  const Wrapper *W = nullptr;
  if (strcmp(Argv[1], "hipk") == 0 && Argc >= 5)
    W = hipkWrapper(Argc, Argv, I);
  else if (strcmp(Argv[1], "hipf-heap") == 0)
    W = heapHipfWrapper(Argv, I);
  else
    return usage(Argv[0]);
  if (!W)
    return 2;
  void **Handle = __hipRegisterFatBinary(W);
  // Argv[I] is "--" (or the end); kernels follow it.
  for (int K = 0; ++I < Argc && K < int(sizeof(HostStubs)); ++K)
    __hipRegisterFunction(Handle, &HostStubs[K], Argv[I], Argv[I], ~0u, nullptr,
                          nullptr, nullptr, nullptr, nullptr);
  __hipUnregisterFatBinary(Handle);
  return 0;
}
