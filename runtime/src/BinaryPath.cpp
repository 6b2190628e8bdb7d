//===- BinaryPath.cpp - Which loaded file holds an address ----------------===//
//
// The OS's answer (kpack/Platform.h): /proc/self/maps on Linux,
// GetModuleHandleExW(FROM_ADDRESS) + GetModuleFileNameW on Windows.
//
//===----------------------------------------------------------------------===//

#include "kpack/LoaderCache.h"
#include "kpack/Platform.h"

namespace kpack {

Status discoverBinaryPath(const void *Address, std::string &Path,
                          uint64_t &Offset) {
  return platform::binaryPathOf(Address, Path, Offset);
}

} // namespace kpack
