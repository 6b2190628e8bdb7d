//===- kpack/LLVMError.h - Errors of the LLVM-based layers ------*- C++ -*-===//
//
// Above the no-LLVM core, libraries and tools report failures as llvm::Error
// (the core's Status is converted at the boundary). makeError is the one way
// they make a plain message error.
//
//===----------------------------------------------------------------------===//
#ifndef KPACK_LLVMERROR_H
#define KPACK_LLVMERROR_H

#include "kpack/Error.h"

#include "llvm/ADT/Twine.h"
#include "llvm/Support/Error.h"

namespace kpack {

/// An llvm::Error carrying Msg (no error code: callers only print it).
inline llvm::Error makeError(const llvm::Twine &Msg) {
  return llvm::createStringError(llvm::inconvertibleErrorCode(), Msg);
}

/// The core's Status as an llvm::Error (success for a Status without error).
inline llvm::Error toError(const Status &S) {
  return S ? makeError(S.message()) : llvm::Error::success();
}

} // namespace kpack

#endif
