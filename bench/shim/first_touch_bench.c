/* First-launch latency of the shim's lazy bundles: dlopen's a converted HIP
 * library (the shim preloaded, libnoop.so as the runtime behind it), then
 * reads the first byte of every code object each registered bundle holds, as
 * a stock CLR does at the first launch of a kernel of that binary, timing
 * each read (first touch to code object available: the read returns once the
 * whole code object is in place). Then decompresses every code object of
 * ARCHIVE for ARCH through librocm_kpack, timed alone, and pairs the two by
 * code-object size, twice: into memory malloc reuses (already faulted in) and
 * into fresh memory (M_MMAP_THRESHOLD 0: every buffer is a new mapping whose
 * pages fault in as the decompressor writes them, as any buffer handed to a
 * runtime is). Prints one line per code object:
 *   <size> <first touch ms> <decompression ms> <decompression, fresh ms>
 * and, first, "dlopen <ms>". With GAP_MS=<n> in the environment the reads
 * are n ms apart (first launches spread over a run rather than back to
 * back; the shim prepares staging memory between faults), and so are the
 * decompressions they are compared with (a core idle for n ms runs the next
 * few milliseconds slower than one in a tight loop).
 *   first_touch_bench LIBRARY ARCHIVE ARCH */
#include <rocm_kpack/kpack.h>

#include <dlfcn.h>
#include <malloc.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

const void *const *noop_registered(size_t *N);

struct Wrapper {
  uint32_t Magic, Version;
  const uint8_t *Binary;
  uint64_t Reserved1;
};

struct Sample {
  uint64_t Size;
  double TouchMs, DecompressMs, FreshMs;
};

static double now(void) {
  struct timespec T;
  clock_gettime(CLOCK_MONOTONIC, &T);
  return T.tv_sec * 1e3 + T.tv_nsec / 1e6;
}

static uint64_t readU64(const uint8_t *P) {
  uint64_t V;
  memcpy(&V, P, 8);
  return V;
}

int main(int argc, char **argv) {
  if (argc != 4) {
    fprintf(stderr, "usage: %s LIBRARY ARCHIVE ARCH\n", argv[0]);
    return 2;
  }
  double Begin = now();
  void *Lib = dlopen(argv[1], RTLD_LAZY | RTLD_LOCAL);
  double End = now();
  if (!Lib) {
    fprintf(stderr, "error: %s\n", dlerror());
    return 1;
  }
  printf("dlopen %.3f\n", End - Begin);

  size_t N = 0, Used = 0;
  const void *const *Wrappers = noop_registered(&N);
  struct Sample *Samples = calloc(N * 4 + 1, sizeof(struct Sample));
  volatile uint8_t Sink = 0;
  const char *Gap = getenv("GAP_MS");
  const long GapNs = Gap ? atol(Gap) * 1000000L : 0;
  for (size_t I = 0; I < N; ++I) {
    const struct Wrapper *W = Wrappers[I];
    const uint8_t *B = W->Binary;
    if (memcmp(B, "__CLANG_OFFLOAD_BUNDLE__", 24) != 0)
      continue;
    uint64_t Count = readU64(B + 24), Pos = 32;
    for (uint64_t E = 0; E < Count; ++E) {
      uint64_t Offset = readU64(B + Pos), Size = readU64(B + Pos + 8),
               IdSize = readU64(B + Pos + 16);
      int Device = IdSize > 6 && memcmp(B + Pos + 24, "hipv4-", 6) == 0;
      Pos += 24 + IdSize;
      if (!Device || !Size || Used == N * 4)
        continue;
      if (GapNs) {
        struct timespec Pause = {GapNs / 1000000000L, GapNs % 1000000000L};
        nanosleep(&Pause, NULL);
      }
      double T0 = now();
      Sink += B[Offset];
      Samples[Used].TouchMs = now() - T0;
      Samples[Used++].Size = Size;
    }
  }

  kpack_archive_t A;
  if (kpack_open(argv[2], &A) != KPACK_SUCCESS) {
    fprintf(stderr, "error: cannot open %s\n", argv[2]);
    return 1;
  }
  size_t Keys = 0;
  kpack_get_binary_count(A, &Keys);
  for (int Fresh = 0; Fresh < 2; ++Fresh) {
    if (Fresh)
      mallopt(M_MMAP_THRESHOLD, 0);
    for (size_t K = 0; K < Keys; ++K) {
      const char *Key;
      void *Data;
      size_t Size;
      if (kpack_get_binary(A, K, &Key) != KPACK_SUCCESS)
        continue;
      if (Fresh)
        malloc_trim(0); // else malloc serves the next buffer from the heap
      if (GapNs) { // the same idle time before it as before each touch
        struct timespec Pause = {GapNs / 1000000000L, GapNs % 1000000000L};
        nanosleep(&Pause, NULL);
      }
      double T0 = now();
      if (kpack_get_kernel(A, Key, argv[3], &Data, &Size) != KPACK_SUCCESS)
        continue;
      double Ms = now() - T0;
      kpack_free_kernel(Data);
      for (size_t S = 0; S < Used; ++S) {
        double *Slot = Fresh ? &Samples[S].FreshMs : &Samples[S].DecompressMs;
        if (Samples[S].Size == Size && *Slot == 0) {
          *Slot = Ms;
          break;
        }
      }
    }
  }
  kpack_close(A);
  for (size_t S = 0; S < Used; ++S)
    printf("%llu %.3f %.3f %.3f\n", (unsigned long long)Samples[S].Size,
           Samples[S].TouchMs, Samples[S].DecompressMs, Samples[S].FreshMs);
  fflush(stdout);
  _exit(Sink == 255 ? 0 : 0);
}
