//===- GuardLibrary.h - ld.kpack's definition of the guard -------*- C++ -*-===//
//
// Every kpack-ready object refers to ready::GuardSymbolName (kpack/KpackReady.h)
// so that only ld.kpack can link it. ld.kpack defines the symbol with one
// extra input: an archive whose one member defines it, hidden, at offset 0
// of an empty key section. A member is linked only when a symbol it defines
// is referenced, so a link without kpack-ready inputs is exactly the lld
// link; with them, the output gains nothing but the (local) symbol in the
// static symbol table, and finalize overwrites the fields that referred to
// it. On a PE link the member's `.drectve` keeps MinGW's auto-export from
// exporting it.
//
//===----------------------------------------------------------------------===//
#ifndef KPACK_LLD_GUARDLIBRARY_H
#define KPACK_LLD_GUARDLIBRARY_H

#include "InputRewriter.h"

#include "llvm/Support/Error.h"

#include <string>
#include <vector>

namespace kpack {
namespace link {

/// Writes the guard archive (an x86-64 COFF member if \p Pe, ELF otherwise)
/// into \p Temp and appends its path to \p LldArgs.
llvm::Error addGuardLibrary(bool Pe, TempDir &Temp,
                            std::vector<std::string> &LldArgs);

} // namespace link
} // namespace kpack

#endif
