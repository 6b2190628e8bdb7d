//===- kpack/ReadableMemory.h - Bytes readable at an address ----*- C++ -*-===//
//
// The C API receives pointers without sizes (a HIPK wrapper's metadata, the
// wrapper itself). Before reading through one, the runtime asks how many
// bytes are really readable there, so that a corrupt pointer or a corrupt
// length inside the data is an error instead of a SIGSEGV.
//
//===----------------------------------------------------------------------===//
#ifndef KPACK_READABLEMEMORY_H
#define KPACK_READABLEMEMORY_H

#include <cstddef>

namespace kpack {

/// How many bytes from Address on are readable, at most Max: up to the end
/// of the loaded ELF segment (PT_LOAD, found with dl_iterate_phdr) that
/// holds Address; for an address in no loaded object (heap, anonymous or
/// unloaded mappings) up to the end of the run of readable mappings the
/// kernel reports in /proc/self/maps. 0 when Address is not readable.
size_t readableBytesAt(const void *Address, size_t Max);

/// True if [Address, Address + Size) is readable as a whole.
inline bool isReadable(const void *Address, size_t Size) {
  return Size == 0 || readableBytesAt(Address, Size) == Size;
}

} // namespace kpack

#endif
