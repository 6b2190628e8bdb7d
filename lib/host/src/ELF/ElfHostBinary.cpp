//===- HostBinary.cpp - HIP device code in host ELF files -----------------===//

#include "kpack/HostBinary.h"

#include "COFF/PeImage.h"

#include "kpack/COFF/CoffHostBinary.h"
#include "kpack/LLVMError.h"

#include "llvm/ADT/StringExtras.h"
#include "llvm/BinaryFormat/ELF.h"
#include "llvm/Object/ELF.h"
#include "llvm/Support/Endian.h"
#include "llvm/Support/Format.h"
#include "llvm/Support/MathExtras.h"

#include <algorithm>
#include <map>

using namespace llvm;
using namespace llvm::object;
using namespace kpack;

namespace {
using ELFT = ELF64LE;
using Elf_Shdr = ELFT::Shdr;

std::string hex(uint64_t V) { return "0x" + utohexstr(V); }


std::optional<uint64_t> offsetInLoads(const ELFFile<ELFT> &Obj,
                                      uint64_t Address, uint64_t Size,
                                      uint64_t *Avail = nullptr) {
  auto Phdrs = Obj.program_headers();
  if (!Phdrs) {
    consumeError(Phdrs.takeError());
    return std::nullopt;
  }
  uint64_t FileSize = Obj.getBufSize();
  for (const auto &P : *Phdrs) {
    if (P.p_type != ELF::PT_LOAD)
      continue;
    if (Address < P.p_vaddr || Address - P.p_vaddr >= P.p_filesz)
      continue;
    uint64_t Rel = Address - P.p_vaddr;
    if (P.p_filesz - Rel < Size || P.p_offset > FileSize ||
        P.p_filesz > FileSize - P.p_offset)
      return std::nullopt;
    if (Avail)
      *Avail = P.p_filesz - Rel;
    return P.p_offset + Rel;
  }
  return std::nullopt;
}

struct Analyzer {
  const ELFFile<ELFT> &Obj;
  ArrayRef<uint8_t> File;
  HostBinary &Host;
  const AnalyzeOptions &Opts;

  Expected<SectionSpan> spanOf(const Elf_Shdr &S, uint64_t Index) {
    SectionSpan Span{Index, S.sh_addr, S.sh_offset, S.sh_size};
    if (S.sh_type != ELF::SHT_NOBITS &&
        (S.sh_offset > File.size() || S.sh_size > File.size() - S.sh_offset))
      return makeError("section " + Twine(Index) + " lies outside the file");
    return Span;
  }

  Error run();
  Error resolveLinkedPointers(ArrayRef<Elf_Shdr> Sections);
  Error resolveObjectPointers(ArrayRef<Elf_Shdr> Sections);
  void readMetadata(WrapperInfo &W);
};

Error Analyzer::run() {
  const auto &Hdr = Obj.getHeader();
  switch (Hdr.e_type) {
  case ELF::ET_EXEC:
    Host.Kind = HostFileKind::Executable;
    break;
  case ELF::ET_DYN:
    Host.Kind = HostFileKind::SharedObject;
    break;
  case ELF::ET_REL:
    Host.Kind = HostFileKind::Relocatable;
    break;
  default:
    return makeError("unsupported ELF file type " + Twine(Hdr.e_type));
  }
  if (Hdr.e_machine != ELF::EM_X86_64)
    return makeError("unsupported ELF machine " + Twine(Hdr.e_machine) +
                     " (only x86-64 host binaries are supported)");

  auto Phdrs = Obj.program_headers();
  if (!Phdrs)
    return Phdrs.takeError();
  for (const auto &P : *Phdrs)
    if (P.p_type == ELF::PT_INTERP && Host.Kind == HostFileKind::SharedObject)
      Host.IsPIE = true;

  auto Sections = Obj.sections();
  if (!Sections)
    return Sections.takeError();
  for (uint64_t I = 0; I < Sections->size(); ++I) {
    const Elf_Shdr &S = (*Sections)[I];
    auto Name = Obj.getSectionName(S);
    if (!Name)
      return Name.takeError();
    std::optional<SectionSpan> *Slot = nullptr;
    if (*Name == ".hip_fatbin")
      Slot = &Host.Fatbin;
    else if (*Name == ".hipFatBinSegment")
      Slot = &Host.WrapperSection;
    else if (*Name == ".rocm_kpack_ref")
      Slot = &Host.KpackRefSection;
    if (!Slot)
      continue;
    if (*Slot)
      return makeError("more than one " + *Name + " section");
    auto Span = spanOf(S, I);
    if (!Span)
      return Span.takeError();
    *Slot = *Span;
  }
  if (Host.Kind == HostFileKind::Relocatable) {
    // Objects have no addresses: use section offsets.
    for (auto *Slot :
         {&Host.Fatbin, &Host.WrapperSection, &Host.KpackRefSection})
      if (*Slot)
        (*Slot)->Address = 0;
  }

  if (Host.Fatbin) {
    const Elf_Shdr &S = (*Sections)[Host.Fatbin->Index];
    if (S.sh_type != ELF::SHT_NOBITS) {
      ArrayRef<uint8_t> Bytes =
          File.slice(Host.Fatbin->FileOffset, Host.Fatbin->Size);
      if (Error E = summarizeBundleSection(Bytes, *Host.Fatbin, ".hip_fatbin",
                                           Host.Bundles, Opts))
        return E;
    }
  }

  if (!Host.WrapperSection)
    return Error::success();
  const SectionSpan &WS = *Host.WrapperSection;
  if ((*Sections)[WS.Index].sh_type == ELF::SHT_NOBITS)
    return makeError(".hipFatBinSegment has no file contents (SHT_NOBITS)");
  if (WS.Size % WrapperSize != 0)
    return makeError(".hipFatBinSegment size " + hex(WS.Size) +
                     " is not a multiple of 24");
  for (uint64_t Off = 0; Off < WS.Size; Off += WrapperSize) {
    const uint8_t *P = File.data() + WS.FileOffset + Off;
    WrapperInfo W;
    W.Address = WS.Address + Off;
    W.FileOffset = WS.FileOffset + Off;
    W.Magic = support::endian::read32le(P);
    W.Version = support::endian::read32le(P + 4);
    W.Target = support::endian::read64le(P + 8);
    W.Reserved1 = support::endian::read64le(P + 16);
    Host.Wrappers.push_back(W);
  }
  if (Error E = Host.Kind == HostFileKind::Relocatable
                    ? resolveObjectPointers(*Sections)
                    : resolveLinkedPointers(*Sections))
    return E;

  for (WrapperInfo &W : Host.Wrappers) {
    if (W.isHIPF())
      W.BundleIndex = Host.bundleAt(W.Target);
    else if (W.isHIPK())
      readMetadata(W);
  }
  return Error::success();
}

Error Analyzer::resolveLinkedPointers(ArrayRef<Elf_Shdr> Sections) {
  // Pointer slot address -> wrapper.
  std::map<uint64_t, WrapperInfo *> Slots;
  for (WrapperInfo &W : Host.Wrappers) {
    W.Style = PointerStyle::AbsoluteInPlace;
    Slots[W.Address + 8] = &W;
  }
  for (const Elf_Shdr &S : Sections) {
    if (S.sh_type == ELF::SHT_RELA) {
      if (!(S.sh_flags & ELF::SHF_ALLOC))
        continue;
      auto Relas = Obj.relas(S);
      if (!Relas)
        return Relas.takeError();
      for (size_t I = 0; I < Relas->size(); ++I) {
        const auto &R = (*Relas)[I];
        auto It = Slots.find(R.r_offset);
        if (It == Slots.end())
          continue;
        uint32_t Type = R.getType(false);
        WrapperInfo &W = *It->second;
        W.RelaFileOffset = S.sh_offset + I * sizeof(ELFT::Rela);
        if (Type == ELF::R_X86_64_RELATIVE) {
          W.Style = PointerStyle::RelaRelative;
          W.Target = R.r_addend;
          continue;
        }
        if (Type != ELF::R_X86_64_64)
          return makeError("wrapper pointer at " + hex(R.r_offset) +
                           " has an unsupported dynamic relocation (type " +
                           Twine(Type) + ")");
        // Only a symbol of this binary has a known value; an undefined one
        // would be bound at load time to another object's data.
        auto SymTab = Obj.getSection(S.sh_link);
        if (!SymTab)
          return SymTab.takeError();
        auto Sym = Obj.getRelocationSymbol(R, *SymTab);
        if (!Sym)
          return Sym.takeError();
        if (!*Sym || (*Sym)->st_shndx == ELF::SHN_UNDEF)
          return makeError("wrapper pointer at " + hex(R.r_offset) +
                           " has an R_X86_64_64 against a symbol not defined "
                           "in this binary");
        W.Style = PointerStyle::RelaSymbol;
        W.SymbolValue = (*Sym)->st_value;
        W.Target = W.SymbolValue + R.r_addend;
      }
    } else if (S.sh_type == ELF::SHT_RELR) {
      auto Relrs = Obj.relrs(S);
      if (!Relrs)
        return Relrs.takeError();
      for (const auto &R : Obj.decode_relrs(*Relrs)) {
        auto It = Slots.find(R.r_offset);
        if (It != Slots.end())
          It->second->Style = PointerStyle::RelrInPlace;
      }
    }
  }
  return Error::success();
}

Error Analyzer::resolveObjectPointers(ArrayRef<Elf_Shdr> Sections) {
  const SectionSpan &WS = *Host.WrapperSection;
  for (WrapperInfo &W : Host.Wrappers) {
    W.Style = PointerStyle::ObjectRelocation;
    W.Target = 0;
  }
  for (const Elf_Shdr &S : Sections) {
    if (S.sh_type != ELF::SHT_RELA || S.sh_info != WS.Index)
      continue;
    auto SymTab = Obj.getSection(S.sh_link);
    if (!SymTab)
      return SymTab.takeError();
    auto Relas = Obj.relas(S);
    if (!Relas)
      return Relas.takeError();
    for (const auto &R : *Relas) {
      if (R.r_offset % WrapperSize != 8 || R.r_offset >= WS.Size)
        continue;
      WrapperInfo &W = Host.Wrappers[R.r_offset / WrapperSize];
      auto Sym = Obj.getRelocationSymbol(R, *SymTab);
      if (!Sym)
        return Sym.takeError();
      if (!*Sym)
        continue;
      // Only pointers into .hip_fatbin (or .rocm_kpack_ref) resolve; their
      // "address" is the offset in that section.
      uint64_t SecIdx = (*Sym)->st_shndx;
      if ((Host.Fatbin && SecIdx == Host.Fatbin->Index) ||
          (Host.KpackRefSection && SecIdx == Host.KpackRefSection->Index))
        W.Target = (*Sym)->st_value + R.r_addend;
    }
  }
  return Error::success();
}

void Analyzer::readMetadata(WrapperInfo &W) {
  std::optional<uint64_t> Off;
  uint64_t Avail = 0;
  if (Host.Kind == HostFileKind::Relocatable) {
    if (Host.KpackRefSection && W.Target < Host.KpackRefSection->Size) {
      Off = Host.KpackRefSection->FileOffset + W.Target;
      Avail = Host.KpackRefSection->Size - W.Target;
    }
  } else {
    Off = offsetInLoads(Obj, W.Target, 1, &Avail);
  }
  if (!Off) {
    W.RefError = "pointer " + hex(W.Target) + " is not in a loaded segment";
    return;
  }
  KpackMetadata M;
  if (Status S = decodeKpackMetadata(
          File.data() + *Off, std::min<uint64_t>(Avail, MaxKpackMetadataSize),
          M)) {
    W.RefError = S.message();
    return;
  }
  W.Ref = std::move(M);
}
} // namespace

/// A compressed bundle is decoded for its entries one at a time, so that
/// memory stays bounded by the largest bundle.
Error kpack::summarizeBundleSection(ArrayRef<uint8_t> Bytes,
                                   const SectionSpan &Sec,
                                   StringRef SectionName,
                                   std::vector<BundleInfo> &Out,
                                   const AnalyzeOptions &Opts) {
  std::vector<BundleExtent> Extents;
  if (Status S = scanBundleSection(Bytes.data(), Bytes.size(), Extents))
    return makeError(SectionName + ": " + S.message());
  for (BundleExtent &E : Extents) {
    BundleInfo Info;
    static_cast<BundleExtent &>(Info) = std::move(E);
    Info.Address = Sec.Address + Info.SectionOffset;
    Info.FileOffset = Sec.FileOffset + Info.SectionOffset;
    if (Info.Compression != BundleCompression::None &&
        Opts.DecodeCompressedBundles) {
      Bundle B;
      if (Status S = decodeBundle(Bytes.data() + Info.SectionOffset,
                                  Bytes.size() - Info.SectionOffset, B))
        return makeError("bundle at " + SectionName + " offset 0x" +
                         utohexstr(Info.SectionOffset) + ": " + S.message());
      Info.Entries = std::move(B.Entries);
    }
    if (Opts.BundleScanned)
      Opts.BundleScanned(Info.FileOffset, Info.EncodedSize);
    Out.push_back(std::move(Info));
  }
  return Error::success();
}

const char *kpack::pointerStyleName(PointerStyle Style) {
  switch (Style) {
  case PointerStyle::RelaRelative:
    return "rela";
  case PointerStyle::RelaSymbol:
    return "rela-symbol";
  case PointerStyle::RelrInPlace:
    return "relr";
  case PointerStyle::AbsoluteInPlace:
    return "absolute";
  case PointerStyle::ObjectRelocation:
    return "object-reloc";
  case PointerStyle::CoffDir64:
    return "dir64";
  }
  return "unknown";
}

bool HostBinary::hasHIPK() const {
  return std::any_of(Wrappers.begin(), Wrappers.end(),
                     [](const WrapperInfo &W) { return W.isHIPK(); });
}

int HostBinary::bundleAt(uint64_t Address) const {
  for (size_t I = 0; I < Bundles.size(); ++I)
    if (Bundles[I].Address == Address)
      return static_cast<int>(I);
  return -1;
}

static Expected<ELFFile<ELFT>> openELF(MemoryBufferRef Image) {
  StringRef Buf = Image.getBuffer();
  if (Buf.size() < ELF::EI_NIDENT || !Buf.starts_with("\x7f"
                                                      "ELF"))
    return makeError("not an ELF file");
  if (static_cast<uint8_t>(Buf[ELF::EI_CLASS]) != ELF::ELFCLASS64 ||
      static_cast<uint8_t>(Buf[ELF::EI_DATA]) != ELF::ELFDATA2LSB)
    return makeError("unsupported ELF class or byte order (only ELF64 "
                     "little-endian host binaries are supported)");
  return ELFFile<ELFT>::create(Buf);
}

const char *HostBinary::fatbinSectionName() const {
  return Format == HostFormat::Coff ? CoffFatbinSection : HipFatbinSection;
}

HostImageFormat kpack::hostImageFormat(StringRef Head) {
  if (Head.starts_with(ELF::ElfMagic)) {
    if (Head.size() < sizeof(ELF::Elf64_Ehdr) ||
        uint8_t(Head[ELF::EI_CLASS]) != ELF::ELFCLASS64 ||
        uint8_t(Head[ELF::EI_DATA]) != ELF::ELFDATA2LSB)
      return HostImageFormat::None;
    uint16_t Type = support::endian::read16le(Head.data() + 16);
    uint16_t Machine = support::endian::read16le(Head.data() + 18);
    return (Type == ELF::ET_EXEC || Type == ELF::ET_DYN) &&
                   Machine == ELF::EM_X86_64
               ? HostImageFormat::Elf
               : HostImageFormat::None;
  }
  if (pe::isImageHead(arrayRefFromStringRef(Head)))
    return HostImageFormat::Pe;
  return HostImageFormat::None;
}

Expected<bool> kpack::hostImageHoldsDeviceCode(StringRef Bytes) {
  switch (hostImageFormat(Bytes)) {
  case HostImageFormat::None:
    return false;
  case HostImageFormat::Pe:
    return pe::holdsDeviceCode(arrayRefFromStringRef(Bytes));
  case HostImageFormat::Elf:
    break;
  }
  Expected<ELFFile<ELFT>> Elf = ELFFile<ELFT>::create(Bytes);
  if (!Elf)
    return Elf.takeError();
  auto Sections = Elf->sections();
  if (!Sections)
    return Sections.takeError();
  for (const Elf_Shdr &Sec : *Sections) {
    if (Sec.sh_type == ELF::SHT_NOBITS)
      continue;
    Expected<StringRef> Name = Elf->getSectionName(Sec);
    if (!Name)
      return Name.takeError();
    if (*Name == HipFatbinSection || *Name == FatbinWrapperSection)
      return true;
  }
  return false;
}

Expected<HostBinary> kpack::analyzeHostBinary(MemoryBufferRef Image,
                                              const AnalyzeOptions &Opts) {
  if (isCoffFile(Image.getBuffer()))
    return analyzeCoffHostBinary(Image, Opts);
  auto Obj = openELF(Image);
  if (!Obj)
    return Obj.takeError();
  HostBinary Host;
  ArrayRef<uint8_t> File(
      reinterpret_cast<const uint8_t *>(Image.getBufferStart()),
      Image.getBufferSize());
  Analyzer A{*Obj, File, Host, Opts};
  if (Error E = A.run())
    return E;
  return Host;
}

Error kpack::decodeBundleAt(MemoryBufferRef Image, const BundleInfo &B,
                            Bundle &Out) {
  uint64_t Size = Image.getBufferSize();
  if (B.FileOffset > Size || B.EncodedSize > Size - B.FileOffset)
    return makeError("bundle at file offset " + hex(B.FileOffset) +
                     " lies outside the file");
  const uint8_t *P =
      reinterpret_cast<const uint8_t *>(Image.getBufferStart()) + B.FileOffset;
  if (Status S = decodeBundle(P, B.EncodedSize, Out))
    return makeError("bundle at file offset " + hex(B.FileOffset) + ": " +
                     S.message());
  Out.SectionOffset = B.SectionOffset;
  return Error::success();
}
