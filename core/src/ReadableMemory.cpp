//===- ReadableMemory.cpp - Bytes readable at an address ------------------===//
//
// First the loaded ELF objects' segments (dl_iterate_phdr: no system call,
// no file parsing), since HIPK metadata lives in the binary that registers
// it; then, for anything else, the kernel's own list of mappings. Neither
// touches the memory in question.
//
//===----------------------------------------------------------------------===//

#include "kpack/ReadableMemory.h"

#include <link.h>

#include <algorithm>
#include <cinttypes>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>

namespace kpack {

namespace {

struct SegmentQuery {
  uintptr_t Address;
  bool Found = false;
  bool Readable = false;
  uintptr_t End = 0;
};

int findSegment(struct dl_phdr_info *Info, size_t, void *Data) {
  auto *Q = static_cast<SegmentQuery *>(Data);
  for (ElfW(Half) I = 0; I < Info->dlpi_phnum; ++I) {
    const ElfW(Phdr) &P = Info->dlpi_phdr[I];
    if (P.p_type != PT_LOAD || P.p_memsz == 0)
      continue;
    uintptr_t Start = Info->dlpi_addr + P.p_vaddr;
    uintptr_t End = Start + P.p_memsz;
    if (Q->Address < Start || Q->Address >= End)
      continue;
    Q->Found = true;
    Q->Readable = (P.p_flags & PF_R) != 0;
    Q->End = End;
    return 1;
  }
  return 0;
}

/// The end of the run of readable mappings that starts at or before Address
/// and contains it, per /proc/self/maps; 0 if Address is not readable.
uintptr_t readableEndFromMaps(uintptr_t Address) {
  std::FILE *Maps = std::fopen("/proc/self/maps", "re");
  if (!Maps)
    return 0;
  char *Line = nullptr;
  size_t Capacity = 0;
  uintptr_t RunEnd = 0; // end of the readable run containing Address
  while (getline(&Line, &Capacity, Maps) > 0) {
    uintptr_t Start, End;
    char Perms[8] = {0};
    if (std::sscanf(Line, "%" SCNxPTR "-%" SCNxPTR " %7s", &Start, &End,
                    Perms) != 3)
      continue;
    bool Readable = Perms[0] == 'r';
    if (RunEnd) {
      // Extend the run over adjacent readable mappings.
      if (Start == RunEnd && Readable) {
        RunEnd = End;
        continue;
      }
      break;
    }
    if (Address >= Start && Address < End) {
      if (!Readable)
        break;
      RunEnd = End;
    } else if (Start > Address) {
      break; // the file is sorted: Address is in no mapping
    }
  }
  std::free(Line);
  std::fclose(Maps);
  return RunEnd;
}

} // namespace

size_t readableBytesAt(const void *Address, size_t Max) {
  const uintptr_t Addr = reinterpret_cast<uintptr_t>(Address);
  if (Addr == 0 || Max == 0)
    return 0;
  SegmentQuery Q;
  Q.Address = Addr;
  dl_iterate_phdr(findSegment, &Q);
  uintptr_t End;
  if (Q.Found && Q.Readable) {
    End = Q.End;
  } else {
    // Not in a readable segment of a loaded object: the heap, an anonymous
    // or hand-made mapping, or memory that is not mapped at all.
    End = readableEndFromMaps(Addr);
    if (End <= Addr)
      return 0;
  }
  return static_cast<size_t>(std::min<uintptr_t>(End - Addr, Max));
}

} // namespace kpack
