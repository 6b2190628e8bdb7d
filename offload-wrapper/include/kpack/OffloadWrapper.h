//===- kpack/OffloadWrapper.h - Kpack-ready HIP registration ---*- C++ -*-===//
//
// The kpack replacement for `llvm-offload-wrapper --kind=hip`: builds the HIP
// registration module for one offload bundle exactly as LLVM does
// (llvm::offloading::wrapHIPBinary: wrapper, ctor/dtor, offload entries),
// then turns the embedded bundle into the kpack-ready form
// (kpack/ReadyEmitter.h), so the module compiles to a kpack-ready object.
//
//===----------------------------------------------------------------------===//

#ifndef KPACK_OFFLOADWRAPPER_H
#define KPACK_OFFLOADWRAPPER_H

#include "llvm/ADT/ArrayRef.h"
#include "llvm/Support/Error.h"
#include "llvm/TargetParser/Triple.h"

#include <memory>

namespace llvm {
class LLVMContext;
class Module;
class raw_pwrite_stream;
} // namespace llvm

namespace kpack {

/// Registration module for \p Bundle (a clang offload bundle, compressed or
/// not) targeting the host \p Triple.
llvm::Expected<std::unique_ptr<llvm::Module>>
wrapHIPBundle(llvm::LLVMContext &Ctx, llvm::ArrayRef<char> Bundle,
              const llvm::Triple &Triple);

/// Compiles \p M to a relocatable object (PIC, default CPU of its triple).
llvm::Error emitObjectFile(llvm::Module &M, llvm::raw_pwrite_stream &OS);

} // namespace kpack

#endif // KPACK_OFFLOADWRAPPER_H
