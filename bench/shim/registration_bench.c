/* Registration cost of one fat binary wrapper, HIPF (bundle in the binary)
 * versus HIPK (kpack metadata; code objects come from an archive through the
 * registration shim). Compiled per case:
 *   -DBENCH_FAT -DBENCH_BUNDLE="path"       HIPF wrapper over that bundle
 *   -DKPACK_NAME="x" -DKPACK_SEARCH_PATH="y" HIPK wrapper (as hipk_host.c)
 * Prints the first registration (cold: the shim creates its loader, opens the
 * archive, decompresses) and the mean of BENCH_REPEAT further
 * register/unregister pairs (warm: archive already open), in microseconds. */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

#ifndef BENCH_REPEAT
#define BENCH_REPEAT 200
#endif

void **__hipRegisterFatBinary(const void *Wrapper);
void __hipUnregisterFatBinary(void **Modules);

#ifdef BENCH_FAT
/* The bundle sits in the image as clang puts it in .hip_fatbin. */
__asm__(".section .rodata.bench_bundle,\"a\"\n"
        ".balign 4096\n"
        "bench_bundle:\n"
        ".incbin \"" BENCH_BUNDLE "\"\n"
        ".previous\n");
extern const char bench_bundle[] __asm__("bench_bundle");
#define MAGIC 0x48495046u /* HIPF */
#define BINARY ((const void *)bench_bundle)
#else
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
} Metadata = {0x82, STR8_INIT("kernel_name"), STR8_INIT(KPACK_NAME),
              STR8_INIT("kpack_search_paths"), 0x91,
              STR8_INIT(KPACK_SEARCH_PATH)};
#define MAGIC 0x4B504948u /* HIPK */
#define BINARY ((const void *)&Metadata)
#endif

static const struct {
  uint32_t Magic;
  uint32_t Version;
  const void *Binary;
  uint64_t Reserved1;
} Wrapper = {MAGIC, 1, BINARY, 0};

static double nowUs(void) {
  struct timespec T;
  clock_gettime(CLOCK_MONOTONIC, &T);
  return T.tv_sec * 1e6 + T.tv_nsec / 1e3;
}

int main(void) {
  double Start = nowUs();
  void **M = __hipRegisterFatBinary(&Wrapper);
  double Cold = nowUs() - Start;
  __hipUnregisterFatBinary(M);
  Start = nowUs();
  for (int I = 0; I < BENCH_REPEAT; ++I)
    __hipUnregisterFatBinary(__hipRegisterFatBinary(&Wrapper));
  double Warm = (nowUs() - Start) / BENCH_REPEAT;
  printf("%.1f %.1f\n", Cold, Warm);
  return 0;
}
