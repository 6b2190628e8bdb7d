//===- WrapperPatcher.cpp - Turn HIPF wrappers into HIPK ------------------===//

#include "kpack/WrapperPatcher.h"

#include "kpack/LLVMError.h"

#include "llvm/BinaryFormat/ELF.h"
#include "llvm/Support/Endian.h"

using namespace llvm;
using namespace kpack;
namespace endian = llvm::support::endian;

Error kpack::patchWrapperToHIPK(MutableArrayRef<uint8_t> Image,
                                const WrapperLocation &Loc, uint64_t NewTarget,
                                uint32_t Index) {
  if (Loc.Style == PointerStyle::ObjectRelocation)
    return makeError("cannot patch a wrapper in a relocatable object");
  if (Loc.FileOffset > Image.size() ||
      Image.size() - Loc.FileOffset < WrapperSize)
    return makeError("wrapper at file offset " + Twine(Loc.FileOffset) +
                     " lies outside the image");
  uint8_t *W = Image.data() + Loc.FileOffset;
  uint8_t *Rela = nullptr;
  bool BySymbol = Loc.Style == PointerStyle::RelaSymbol;
  if (Loc.Style == PointerStyle::RelaRelative || BySymbol) {
    constexpr uint64_t RelaSize = 24; // Elf64_Rela
    if (Loc.RelaFileOffset > Image.size() ||
        Image.size() - Loc.RelaFileOffset < RelaSize)
      return makeError("relocation at file offset " +
                       Twine(Loc.RelaFileOffset) + " lies outside the image");
    Rela = Image.data() + Loc.RelaFileOffset;
    uint32_t Type = endian::read64le(Rela + 8) & 0xffffffff;
    uint32_t Want = BySymbol ? ELF::R_X86_64_64 : ELF::R_X86_64_RELATIVE;
    if (Type != Want)
      return makeError("relocation at file offset " +
                       Twine(Loc.RelaFileOffset) + " is not an " +
                       (BySymbol ? "R_X86_64_64" : "R_X86_64_RELATIVE"));
  }

  endian::write32le(W, HipkMagic);
  endian::write64le(W + 16, Index); // u32 N, upper half zero
  if (Rela) {
    // RelaSymbol: the rewrite moves no address below the old fatbin end and
    // the metadata starts where the fatbin started, so the symbol keeps its
    // value and symbol + (NewTarget - value) is NewTarget. A preemptible
    // symbol could be interposed at load time, exactly as in the fat library.
    endian::write64le(Rela + 16, NewTarget - (BySymbol ? Loc.SymbolValue : 0));
    // Keep the linker's convention: GNU ld (and lld --apply-dynamic-relocs)
    // also store the value in place.
    if (endian::read64le(W + 8) == Loc.OldTarget && Loc.OldTarget != 0)
      endian::write64le(W + 8, NewTarget);
  } else {
    endian::write64le(W + 8, NewTarget);
  }
  return Error::success();
}
