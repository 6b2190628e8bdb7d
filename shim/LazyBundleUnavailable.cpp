//===- LazyBundleUnavailable.cpp - No lazy bundles (Windows) --------------===//
//
// The LazyBundle.h interface where the shim is built without userfaultfd
// (rocm_kpack_hip.dll, cmake/windows): lazy bundles are never available, so
// every HIPK registration loads its code objects eagerly. What a lazy mode
// would need on Windows is described in docs/shim.md, "Windows".
//
//===----------------------------------------------------------------------===//

#include "LazyBundle.h"

namespace kpack {
namespace shim {

bool lazyBundlesAvailable(std::string &Why) {
  Why = "this build has no lazy bundles (Windows: no userfaultfd)";
  return false;
}

const uint8_t *createLazyBundle(const std::vector<uint8_t> &, uint64_t,
                                std::vector<LazyPayload>, std::string &Error) {
  Error = "this build has no lazy bundles";
  return nullptr;
}

size_t releaseLazyBundle(const uint8_t *) { return 0; }

LazyBundleStats lazyBundleStats() { return {}; }

void injectHandlerPollErrorForTesting(int) {}

} // namespace shim
} // namespace kpack
