//===- kpack/ReadyEmitter.h - Kpack-ready IR emission ----------*- C++ -*-===//
//
// Rewrites a host module so that it compiles to a kpack-ready object
// (kpack/KpackReady.h): every defined global in `.hip_fatbin` becomes a
// payload record global (`.rocm_kpack_payload`, `!exclude`, kept through
// llvm.compiler.used) plus a key record global in `.rocm_kpack_ref` that takes
// over the old global's name, linkage and all its uses.
//
// Used by KpackPlugin.so (inside clang) and kpack-offload-wrapper; it must
// only use LLVM Core/TransformUtils so that the plugin can compile it in.
//
//===----------------------------------------------------------------------===//

#ifndef KPACK_READYEMITTER_H
#define KPACK_READYEMITTER_H

#include "llvm/Support/Error.h"

namespace llvm {
class Module;
}

namespace kpack {
namespace ready {

/// Converts every embedded bundle of \p M. Returns how many were converted
/// (0 leaves the module untouched). Fails if a `.hip_fatbin` global's
/// initializer is not plain bytes.
llvm::Expected<unsigned> makeModuleKpackReady(llvm::Module &M);

} // namespace ready
} // namespace kpack

#endif // KPACK_READYEMITTER_H
