//===- FuzzMetadata.cpp - Fuzz HIPK metadata through the C API ------------===//
//
// Input: the bytes a HIPK wrapper points at. They are placed at the very end
// of a readable anonymous mapping that is followed by a PROT_NONE page, which
// is what the loader faces in a real process: a pointer without a size, and
// memory that ends somewhere. kpack_load_code_object must bound its parse by
// the readable bytes (a read past them is a SIGSEGV the fuzzer reports), and
// the tools' strict decoder gets the same bytes with their exact size.
//
//===----------------------------------------------------------------------===//

#include "kpack/Metadata.h"
#include "rocm_kpack/kpack.h"

#include <sys/mman.h>
#include <unistd.h>

#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <cstring>

namespace {

/// A readable region of Capacity bytes followed by an inaccessible page.
struct GuardedBuffer {
  uint8_t *Readable = nullptr;
  size_t Capacity = 0;

  explicit GuardedBuffer(size_t MaxSize) {
    const size_t Page = static_cast<size_t>(sysconf(_SC_PAGESIZE));
    Capacity = (MaxSize + Page - 1) / Page * Page;
    void *Map = mmap(nullptr, Capacity + Page, PROT_READ | PROT_WRITE,
                     MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    if (Map == MAP_FAILED)
      std::abort();
    Readable = static_cast<uint8_t *>(Map);
    if (mprotect(Readable + Capacity, Page, PROT_NONE) != 0)
      std::abort();
  }

  /// Copies Data so that its last byte is the last readable byte.
  const uint8_t *placeAtEnd(const uint8_t *Data, size_t Size) {
    uint8_t *Start = Readable + Capacity - Size;
    std::memcpy(Start, Data, Size);
    return Start;
  }
};

kpack_cache_t cache() {
  static kpack_cache_t C = [] {
    // No archive exists: every load ends after the parse and a failed probe.
    unsetenv("ROCM_KPACK_PATH");
    unsetenv("ROCM_KPACK_PATH_PREFIX");
    unsetenv("ROCM_KPACK_DISABLE");
    unsetenv("ROCM_KPACK_ARCH_OVERRIDE");
    kpack_cache_t C = nullptr;
    if (kpack_cache_create(&C) != KPACK_SUCCESS)
      std::abort();
    return C;
  }();
  return C;
}

} // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t *Data, size_t Size) {
  static GuardedBuffer Buffer(1 << 20);
  if (Size > Buffer.Capacity)
    return 0;
  const uint8_t *Metadata = Buffer.placeAtEnd(Data, Size);

  const char *Arches[] = {"amdgcn-amd-amdhsa--gfx942:sramecc+:xnack-",
                          "gfx9-4-generic"};
  void *CodeObject = nullptr;
  size_t CodeObjectSize = 0;
  kpack_error_t E = kpack_load_code_object(
      cache(), Metadata, "/nonexistent-kpack-fuzz/bin/app", 0, Arches, 2,
      &CodeObject, &CodeObjectSize);
  if (E == KPACK_SUCCESS) // no archive exists, so nothing can load
    std::abort();

  kpack::KpackMetadata M;
  (void)kpack::decodeKpackMetadata(Metadata, Size, M,
                                   kpack::MetadataMode::Strict);
  return 0;
}
