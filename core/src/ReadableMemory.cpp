//===- ReadableMemory.cpp - Bytes readable at an address ------------------===//
//
// The query itself is the OS's (kpack/Platform.h: dl_iterate_phdr and
// /proc/self/maps on Linux, VirtualQuery on Windows).
//
//===----------------------------------------------------------------------===//

#include "kpack/ReadableMemory.h"
#include "kpack/Platform.h"

namespace kpack {

size_t readableBytesAt(const void *Address, size_t Max) {
  return platform::readableBytesAt(Address, Max);
}

} // namespace kpack
