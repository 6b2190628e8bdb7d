//===- kpack/WrapperPatcher.h - Turn HIPF wrappers into HIPK ----*- C++ -*-===//
//
// The one place that rewrites a fat binary wrapper in a linked ELF image:
// magic HIPK, reserved1 = N (u32 low half, upper half zero) and the `binary`
// pointer redirected to the kpack metadata, in whichever of the four pointer
// styles the wrapper uses (FORMAT.md §3.1). Shared by `kpack convert` and the
// linker front-end ld.kpack.
//
//===----------------------------------------------------------------------===//
#ifndef KPACK_WRAPPERPATCHER_H
#define KPACK_WRAPPERPATCHER_H

#include "kpack/HostBinary.h"

#include "llvm/ADT/ArrayRef.h"
#include "llvm/Support/Error.h"

#include <cstdint>

namespace kpack {

/// Where a wrapper and its pointer live in an image (file offsets).
struct WrapperLocation {
  uint64_t FileOffset = 0; ///< the 24 wrapper bytes
  PointerStyle Style = PointerStyle::AbsoluteInPlace;
  uint64_t RelaFileOffset = 0; ///< RelaRelative/RelaSymbol: the Elf64_Rela
  uint64_t OldTarget = 0;      ///< the pointer's current value
  uint64_t SymbolValue = 0;    ///< RelaSymbol: the symbol's st_value

  static WrapperLocation of(const WrapperInfo &W) {
    return {W.FileOffset, W.Style, W.RelaFileOffset, W.Target, W.SymbolValue};
  }
};

/// Rewrites the wrapper at Loc in Image: magic HIPK, version 1 kept,
/// reserved1 = Index, pointer = NewTarget (RELA: the addend, and the in-place
/// value too when the linker had applied it there; RelaSymbol: the addend
/// becomes NewTarget - SymbolValue, type and symbol kept). Fails, leaving Image
/// unchanged, if the wrapper or relocation lies outside Image, the relocation
/// is not an R_X86_64_RELATIVE (RelaSymbol: R_X86_64_64) for the wrapper's
/// pointer, or the style is ObjectRelocation.
llvm::Error patchWrapperToHIPK(llvm::MutableArrayRef<uint8_t> Image,
                               const WrapperLocation &Loc, uint64_t NewTarget,
                               uint32_t Index);

} // namespace kpack

#endif
