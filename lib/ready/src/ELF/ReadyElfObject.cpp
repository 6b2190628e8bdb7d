//===- ReadyObject.cpp - Kpack-ready relocatable objects -------------------===//
//
// The rewrite is two steps: llvm/ObjCopy renames `.hip_fatbin` to
// `.rocm_kpack_ref`, replaces its contents with the key records and adds the
// payload section, the guard's symbol and its relocation section (as
// stand-ins: an absolute symbol, a plain section); then, because ObjCopy
// cannot move symbols or relocation addends nor add an undefined symbol or
// relocations, the fields that referred to bundle i and the stand-ins' fields
// are patched in place (they are fixed-size, so the layout ObjCopy wrote does
// not change).
//
//===----------------------------------------------------------------------===//

#include "kpack/ReadyObject.h"
#include "kpack/BundleCodec.h"
#include "kpack/LLVMError.h"

#include "llvm/ObjCopy/ConfigManager.h"
#include "llvm/ObjCopy/ObjCopy.h"
#include "llvm/Object/ELFObjectFile.h"
#include "llvm/Support/Endian.h"
#include "llvm/Support/MathExtras.h"
#include "llvm/Support/MemoryBuffer.h"
#include "llvm/Support/Process.h"
#include "llvm/Support/raw_ostream.h"

#include <sys/mman.h>

using namespace llvm;
using namespace llvm::object;

namespace kpack {
namespace ready {

bool hasFatbinSection(const ObjectFile &Obj) {
  for (const SectionRef &Sec : Obj.sections()) {
    Expected<StringRef> Name = Sec.getName();
    if (!Name) {
      consumeError(Name.takeError());
      continue;
    }
    if (*Name == FatbinSectionName && Sec.getSize() != 0)
      return true;
  }
  return false;
}

Error checkGuardSymbolFree(const ObjectFile &Obj) {
  for (const SymbolRef &Sym : Obj.symbols()) {
    Expected<StringRef> Name = Sym.getName();
    if (!Name)
      return Name.takeError();
    if (*Name == GuardSymbolName)
      return makeError("already has a symbol named " + GuardSymbolName);
  }
  return Error::success();
}

namespace {
/// One bundle's byte range within `.hip_fatbin`.
struct BundleRange {
  uint64_t Begin;
  uint64_t End;
};
} // namespace

/// Splits `.hip_fatbin` contents into bundles (kpack_format's codec: one
/// bundle per 4096-aligned offset, zero fill between them). The bundles move
/// as opaque bytes, so nothing is decompressed here.
static Expected<std::vector<BundleRange>>
splitFatbin(ArrayRef<uint8_t> Contents) {
  std::vector<BundleExtent> Bundles;
  if (Status S = scanBundleSection(Contents.data(), Contents.size(), Bundles))
    return makeError(FatbinSectionName + ": " + S.message());
  std::vector<BundleRange> Ranges;
  for (const BundleExtent &B : Bundles)
    Ranges.push_back({B.SectionOffset, B.SectionOffset + B.EncodedSize});
  return Ranges;
}

/// Maps an offset into the old `.hip_fatbin` to the start of the matching
/// key slot: a reference to bundle i (its start or anywhere inside it) now
/// refers to slot i.
static Expected<uint64_t> mapToSlot(const std::vector<BundleRange> &Ranges,
                                    uint64_t OldOffset) {
  for (size_t I = 0; I < Ranges.size(); ++I)
    if (OldOffset >= Ranges[I].Begin &&
        (OldOffset < Ranges[I].End || OldOffset == Ranges[I].Begin))
      return I * KeySlotSize;
  return makeError("reference to offset 0x" + Twine::utohexstr(OldOffset) +
                   " of " + FatbinSectionName + " is not inside a bundle");
}

using ELFT = ELF64LE;

// Field offsets in Elf64_Sym and Elf64_Rela (ELF gABI).
static constexpr size_t SymValueOffset = 8;
static constexpr size_t SymSizeOffset = 16;
static constexpr size_t RelaAddendOffset = 16;
// ... and in Elf64_Shdr and Elf64_Ehdr.
static constexpr size_t ShdrSizeOffset = 32;
static constexpr size_t EhdrShOffOffset = 40;

/// Moves symbols defined in the key section and relocation addends against
/// it from bundle offsets to slot offsets, in the ObjCopy output \p Buf.
static Error patchReferences(MutableArrayRef<char> Buf,
                             const std::vector<BundleRange> &Ranges) {
  using namespace support::endian;
  Expected<ELFFile<ELFT>> File =
      ELFFile<ELFT>::create(StringRef(Buf.data(), Buf.size()));
  if (!File)
    return File.takeError();
  auto Sections = File->sections();
  if (!Sections)
    return Sections.takeError();

  uint64_t KeyIndex = 0;
  const ELFT::Shdr *SymTab = nullptr;
  for (const ELFT::Shdr &Sec : *Sections) {
    Expected<StringRef> Name = File->getSectionName(Sec);
    if (!Name)
      return Name.takeError();
    if (*Name == KeySectionName)
      KeyIndex = &Sec - &(*Sections)[0];
    if (Sec.sh_type == ELF::SHT_SYMTAB)
      SymTab = &Sec;
  }
  if (KeyIndex == 0)
    return makeError("rewritten object lacks " + KeySectionName);
  if (!SymTab)
    return Error::success(); // Nothing can refer to the section.

  auto Syms = File->symbols(SymTab);
  if (!Syms)
    return Syms.takeError();
  // Old values first: relocation targets are computed from them.
  std::vector<uint64_t> OldValue(Syms->size());
  std::vector<bool> InKeySection(Syms->size());
  for (size_t I = 0; I < Syms->size(); ++I) {
    const ELFT::Sym &S = (*Syms)[I];
    OldValue[I] = S.st_value;
    InKeySection[I] = S.st_shndx == KeyIndex;
  }

  std::vector<uint64_t> NewValue(OldValue);
  for (size_t I = 0; I < Syms->size(); ++I) {
    if (!InKeySection[I])
      continue;
    Expected<uint64_t> Slot = mapToSlot(Ranges, OldValue[I]);
    if (!Slot)
      return Slot.takeError();
    NewValue[I] = *Slot;
    char *Entry = Buf.data() + SymTab->sh_offset + I * sizeof(ELFT::Sym);
    write64le(Entry + SymValueOffset, *Slot);
    if (read64le(Entry + SymSizeOffset) != 0)
      write64le(Entry + SymSizeOffset, KeySlotSize);
  }

  for (const ELFT::Shdr &Sec : *Sections) {
    if (Sec.sh_type == ELF::SHT_REL && Sec.sh_link == SymTab - &(*Sections)[0])
      return makeError("SHT_REL relocations are not supported");
    if (Sec.sh_type != ELF::SHT_RELA)
      continue;
    if (Sec.sh_info == KeyIndex)
      return makeError("relocations inside " + FatbinSectionName +
                       " are not supported");
    auto Relas = File->relas(Sec);
    if (!Relas)
      return Relas.takeError();
    for (size_t I = 0; I < Relas->size(); ++I) {
      const ELFT::Rela &R = (*Relas)[I];
      uint32_t SymIndex = R.getSymbol(/*isMips64EL=*/false);
      if (SymIndex >= InKeySection.size() || !InKeySection[SymIndex])
        continue;
      uint64_t OldTarget = OldValue[SymIndex] + R.r_addend;
      Expected<uint64_t> Slot = mapToSlot(Ranges, OldTarget);
      if (!Slot)
        return Slot.takeError();
      char *Entry = Buf.data() + Sec.sh_offset + I * sizeof(ELFT::Rela);
      write64le(Entry + RelaAddendOffset,
                *Slot - NewValue[SymIndex]);
    }
  }
  return Error::success();
}

// ... and in Elf64_Shdr, Elf64_Sym and Elf64_Rela, for the guard.
static constexpr size_t ShdrTypeOffset = 4, ShdrFlagsOffset = 8,
                        ShdrOffsetOffset = 24, ShdrLinkOffset = 40,
                        ShdrInfoOffset = 44, ShdrAlignOffset = 48,
                        ShdrEntSizeOffset = 56;
static constexpr size_t SymShndxOffset = 6;
static constexpr size_t RelaInfoOffset = 8;
/// ELFT::Rela is a packed struct; ELF64 aligns its entries to 8.
static constexpr uint64_t RelaAlign = sizeof(ELFT::Addr);

/// The relocation section of the key section, as the IR emitter's objects
/// name it.
static std::string guardRelaSectionName() {
  return (".rela" + KeySectionName).str();
}

/// The guard (KpackReady.h): one R_X86_64_PC32 at GuardFieldOffset of every
/// key slot against the undefined hidden GuardSymbolName. ObjCopy can add
/// neither an undefined symbol nor a relocation section (nor align a section
/// it adds), so this asks it for stand-ins: an absolute hidden global of the
/// name and an empty section of the relocation section's name; patchGuard
/// turns them into what they stand for. \p RelaName must outlive the ObjCopy
/// run.
static void requestGuard(objcopy::CommonConfig &Common, StringRef RelaName) {
  objcopy::NewSymbolInfo Guard;
  Guard.SymbolName = GuardSymbolName;
  Guard.Flags = {objcopy::SymbolFlag::Global, objcopy::SymbolFlag::Hidden};
  Common.SymbolsToAdd.push_back(std::move(Guard));
  Common.AddSection.emplace_back(
      RelaName, MemoryBuffer::getMemBuffer(StringRef(), RelaName,
                                           /*RequiresNullTerminator=*/false));
}

namespace {
/// The guard's relocation section, to be laid out by the caller.
struct GuardRelocations {
  size_t HeaderIndex = 0;
  std::vector<uint8_t> Bytes;
};
} // namespace

/// Makes requestGuard's stand-ins in the ObjCopy output \p Buf what they
/// stand for, in place: the symbol undefined, the section an SHT_RELA
/// (SHF_INFO_LINK, align 8) of the key section linked to the symbol table.
/// Returns the relocations, one per slot of the key section, for the caller
/// to place (the section's sh_offset and sh_size are left to it).
static Expected<GuardRelocations> patchGuard(MutableArrayRef<char> Buf,
                                             StringRef RelaName) {
  using namespace support::endian;
  Expected<ELFFile<ELFT>> File =
      ELFFile<ELFT>::create(StringRef(Buf.data(), Buf.size()));
  if (!File)
    return File.takeError();
  auto Sections = File->sections();
  if (!Sections)
    return Sections.takeError();
  const ELFT::Shdr *Key = nullptr, *Rela = nullptr, *SymTab = nullptr;
  for (const ELFT::Shdr &Sec : *Sections) {
    Expected<StringRef> Name = File->getSectionName(Sec);
    if (!Name)
      return Name.takeError();
    if (*Name == KeySectionName)
      Key = &Sec;
    else if (*Name == RelaName)
      Rela = &Sec;
    if (Sec.sh_type == ELF::SHT_SYMTAB)
      SymTab = &Sec;
  }
  if (!Key || !Rela || !SymTab || Rela->sh_size != 0)
    return makeError("internal error: the rewritten object lacks the guard's "
                     "sections");
  auto Syms = File->symbols(SymTab);
  if (!Syms)
    return Syms.takeError();
  auto Strings = File->getStringTableForSymtab(*SymTab);
  if (!Strings)
    return Strings.takeError();
  std::optional<uint32_t> GuardIndex;
  for (const ELFT::Sym &S : *Syms) {
    Expected<StringRef> Name = S.getName(*Strings);
    if (!Name)
      return Name.takeError();
    if (*Name == GuardSymbolName && S.st_shndx == ELF::SHN_ABS)
      GuardIndex = &S - Syms->begin();
  }
  if (!GuardIndex)
    return makeError("internal error: the rewritten object lacks " +
                     GuardSymbolName);
  write16le(Buf.data() + SymTab->sh_offset + *GuardIndex * sizeof(ELFT::Sym) +
                SymShndxOffset,
            ELF::SHN_UNDEF);

  GuardRelocations Out;
  Out.HeaderIndex = Rela - Sections->begin();
  char *Hdr = Buf.data() + File->getHeader().e_shoff +
              Out.HeaderIndex * sizeof(ELFT::Shdr);
  write32le(Hdr + ShdrTypeOffset, ELF::SHT_RELA);
  write64le(Hdr + ShdrFlagsOffset, ELF::SHF_INFO_LINK);
  write32le(Hdr + ShdrLinkOffset, SymTab - Sections->begin());
  write32le(Hdr + ShdrInfoOffset, Key - Sections->begin());
  write64le(Hdr + ShdrAlignOffset, RelaAlign);
  write64le(Hdr + ShdrEntSizeOffset, sizeof(ELFT::Rela));

  const uint64_t NumSlots = Key->sh_size / KeySlotSize;
  Out.Bytes.assign(NumSlots * sizeof(ELFT::Rela), 0);
  for (uint64_t I = 0; I < NumSlots; ++I) {
    uint8_t *R = Out.Bytes.data() + I * sizeof(ELFT::Rela);
    write64le(R, I * KeySlotSize + GuardFieldOffset);
    write64le(R + RelaInfoOffset,
              uint64_t(*GuardIndex) << 32 | ELF::R_X86_64_PC32);
  }
  return Out;
}

static std::unique_ptr<MemoryBuffer> toBuffer(const std::vector<uint8_t> &B,
                                              StringRef Name) {
  return MemoryBuffer::getMemBufferCopy(
      StringRef(reinterpret_cast<const char *>(B.data()), B.size()), Name);
}

/// ObjCopy trusts the headers: it sizes its output from them (a section
/// past the end of the file or a huge alignment made it allocate exabytes;
/// found by the fuzzer) and follows their links unchecked. Checks that the
/// links are sound and the output it will lay out is of the order of the
/// input.
static Error checkSectionLayout(const ELFFile<ELFT> &File) {
  // ObjCopy keeps (and sizes its output by) program headers; a relocatable
  // object has none.
  if (File.getHeader().e_phnum != 0)
    return makeError("relocatable object with program headers");
  auto Sections = File.sections();
  if (!Sections)
    return Sections.takeError();
  const uint64_t FileSize = File.getBufSize();
  uint64_t Bound = 0;
  auto IsType = [&](uint32_t Link, uint32_t Type) {
    return Link < Sections->size() && (*Sections)[Link].sh_type == Type;
  };
  for (const ELFT::Shdr &Sec : *Sections) {
    uint64_t Index = &Sec - Sections->begin();
    // ObjCopy follows these links without checking them (a group whose
    // link is not a symbol table crashed it; found by the fuzzer).
    bool NeedsSymtab = Sec.sh_type == ELF::SHT_GROUP ||
                       Sec.sh_type == ELF::SHT_REL ||
                       Sec.sh_type == ELF::SHT_RELA ||
                       Sec.sh_type == ELF::SHT_SYMTAB_SHNDX;
    if (NeedsSymtab && !IsType(Sec.sh_link, ELF::SHT_SYMTAB))
      return makeError("section " + Twine(Index) +
                       " does not link to a symbol table");
    if (Sec.sh_type == ELF::SHT_SYMTAB && !IsType(Sec.sh_link, ELF::SHT_STRTAB))
      return makeError("symbol table " + Twine(Index) +
                       " does not link to a string table");
    if (Sec.sh_type == ELF::SHT_SYMTAB)
      if (auto Syms = File.symbols(&Sec); !Syms)
        return Syms.takeError();
    if (Sec.sh_type != ELF::SHT_NOBITS &&
        (Sec.sh_offset > FileSize || Sec.sh_size > FileSize - Sec.sh_offset))
      return makeError("section " + Twine(Index) + " lies outside the file");
    if (Sec.sh_addralign > 1 && !isPowerOf2_64(Sec.sh_addralign))
      return makeError("section " + Twine(Index) +
                       " has an alignment that is not a power of two");
    // Sizes are within the file here, alignments bounded below.
    Bound += (Sec.sh_type == ELF::SHT_NOBITS ? 0 : Sec.sh_size) +
             std::min<uint64_t>(Sec.sh_addralign, uint64_t(1) << 40) +
             sizeof(ELFT::Shdr);
  }
  if (Bound > 2 * FileSize + (uint64_t(1) << 20))
    return makeError("section alignments would make the rewritten object "
                     "far larger than the input");
  return Error::success();
}

void releaseMappedPages(const void *Data, size_t Size) {
  const uintptr_t Page = sys::Process::getPageSizeEstimate();
  uintptr_t Begin = alignTo(reinterpret_cast<uintptr_t>(Data), Page);
  uintptr_t End = alignDown(reinterpret_cast<uintptr_t>(Data) + Size, Page);
  if (End > Begin)
    ::madvise(reinterpret_cast<void *>(Begin), End - Begin, MADV_DONTNEED);
}

/// Bytes of a bundle keyed or copied at once.
static constexpr size_t StreamChunk = size_t(8) << 20;

/// Calls F on consecutive chunks of Bytes, releasing each one's pages after
/// it if Release.
template <typename Fn>
static void forEachChunk(ArrayRef<uint8_t> Bytes, bool Release, Fn F) {
  for (size_t Off = 0; Off < Bytes.size(); Off += StreamChunk) {
    ArrayRef<uint8_t> Chunk =
        Bytes.slice(Off, std::min(StreamChunk, Bytes.size() - Off));
    F(Chunk);
    if (Release)
      releaseMappedPages(Chunk.data(), Chunk.size());
  }
}

/// The link-local key of bundle Index of the input seeded Seed: the
/// splitmix64 finalizer (a bijection) of Seed * G + (Index rotated by 32),
/// which is distinct for distinct pairs while both are below 2^32 (G is odd,
/// so Seed * G takes a multiple of 2^32 only at Seed = 0 there).
static uint64_t linkLocalKey(uint64_t Seed, uint64_t Index) {
  uint64_t Z = Seed * 0x9e3779b97f4a7c15ULL + (Index << 32 | Index >> 32);
  Z = (Z ^ (Z >> 30)) * 0xbf58476d1ce4e5b9ULL;
  Z = (Z ^ (Z >> 27)) * 0x94d049bb133111ebULL;
  return Z ^ (Z >> 31);
}

Error rewriteFatObject(MemoryBufferRef In, raw_ostream &OS,
                       const StreamOptions &Options,
                       std::vector<WrittenPayload> *Written) {
  const bool ReleaseInput = Options.ReleaseInput;
  const bool InOutput = Options.Placement == PayloadPlacement::InOutput;
  Expected<std::unique_ptr<ObjectFile>> ObjOrErr =
      ObjectFile::createObjectFile(In);
  if (!ObjOrErr)
    return ObjOrErr.takeError();
  auto *Obj = dyn_cast<ELF64LEObjectFile>(ObjOrErr->get());
  if (!Obj || Obj->getELFFile().getHeader().e_machine != ELF::EM_X86_64 ||
      Obj->getELFFile().getHeader().e_type != ELF::ET_REL)
    return makeError("not an x86-64 ELF relocatable object");

  if (Error E = checkSectionLayout(Obj->getELFFile()))
    return E;

  std::optional<SectionRef> Fatbin;
  for (const SectionRef &Sec : Obj->sections()) {
    Expected<StringRef> Name = Sec.getName();
    if (!Name)
      return Name.takeError();
    if (*Name == KeySectionName || *Name == PayloadSectionName)
      return makeError("already kpack-ready (has " + *Name + ")");
    if (*Name != FatbinSectionName)
      continue;
    if (Fatbin)
      return makeError("more than one " + FatbinSectionName + " section");
    Fatbin = Sec;
  }
  if (!Fatbin)
    return makeError("no " + FatbinSectionName + " section");
  if (Error E = checkGuardSymbolFree(*Obj))
    return E;
  Expected<StringRef> Contents = Fatbin->getContents();
  if (!Contents)
    return Contents.takeError();
  ArrayRef<uint8_t> Bytes = arrayRefFromStringRef(*Contents);
  // Reads only the bundle headers and the padding between bundles.
  Expected<std::vector<BundleRange>> Ranges = splitFatbin(Bytes);
  if (!Ranges)
    return Ranges.takeError();

  // The keys, a chunk at a time; the payload section's size.
  std::vector<uint8_t> Keys;
  std::vector<uint64_t> BundleKeys;
  uint64_t PayloadSize = 0;
  for (const BundleRange &R : *Ranges) {
    uint64_t Key = ContentKeyBasis;
    if (InOutput)
      forEachChunk(Bytes.slice(R.Begin, R.End - R.Begin), ReleaseInput,
                   [&](ArrayRef<uint8_t> C) { Key = updateContentKey(Key, C); });
    else
      Key = linkLocalKey(Options.KeySeed, BundleKeys.size());
    BundleKeys.push_back(Key);
    std::vector<uint8_t> Slot = encodeKeyRecord(Key, R.End - R.Begin);
    Keys.insert(Keys.end(), Slot.begin(), Slot.end());
    if (InOutput)
      PayloadSize +=
          alignTo(PayloadHeaderSize + (R.End - R.Begin), RecordAlign);
  }

  // The host part: everything but the payload section's contents, which
  // ObjCopy adds last, right before the section header table (checked
  // below). The payload is streamed into that gap, the guard's relocations
  // (whose section ObjCopy adds empty) after it.
  objcopy::ConfigManager Config;
  objcopy::CommonConfig &Common = Config.Common;
  Common.InputFilename = In.getBufferIdentifier();
  Common.OutputFilename = In.getBufferIdentifier();
  using objcopy::SectionFlag;
  // ObjCopy applies the update and the alignment by the old name.
  Common.SectionsToRename.try_emplace(
      FatbinSectionName,
      objcopy::SectionRename{FatbinSectionName, KeySectionName,
                             SectionFlag::SecAlloc | SectionFlag::SecReadonly |
                                 SectionFlag::SecContents});
  Common.UpdateSection.emplace_back(FatbinSectionName,
                                    toBuffer(Keys, KeySectionName));
  Common.SetSectionAlignment[FatbinSectionName] = RecordAlign;
  // Added before the payload section, which must be the last one laid out.
  const std::string GuardRela = guardRelaSectionName();
  requestGuard(Common, GuardRela);
  Common.AddSection.emplace_back(
      PayloadSectionName,
      MemoryBuffer::getMemBuffer(StringRef(), PayloadSectionName,
                                 /*RequiresNullTerminator=*/false));
  Common.SetSectionFlags.try_emplace(
      PayloadSectionName,
      objcopy::SectionFlagsUpdate{PayloadSectionName,
                                  SectionFlag::SecExclude |
                                      SectionFlag::SecReadonly |
                                      SectionFlag::SecContents});

  SmallVector<char, 0> Head;
  raw_svector_ostream HeadOS(Head);
  if (Error E = objcopy::executeObjcopyOnBinary(Config, *Obj, HeadOS))
    return E;
  if (Error E = patchReferences(MutableArrayRef<char>(Head.data(), Head.size()),
                                *Ranges))
    return E;
  Expected<GuardRelocations> Guard =
      patchGuard(MutableArrayRef<char>(Head.data(), Head.size()), GuardRela);
  if (!Guard)
    return Guard.takeError();

  // Where the (empty) payload section and the section header table are.
  Expected<ELFFile<ELFT>> File =
      ELFFile<ELFT>::create(StringRef(Head.data(), Head.size()));
  if (!File)
    return File.takeError();
  auto Sections = File->sections();
  if (!Sections)
    return Sections.takeError();
  std::optional<size_t> PayloadIndex;
  for (const ELFT::Shdr &Sec : *Sections) {
    Expected<StringRef> Name = File->getSectionName(Sec);
    if (!Name)
      return Name.takeError();
    if (*Name == PayloadSectionName)
      PayloadIndex = &Sec - Sections->begin();
  }
  const uint64_t ShOff = File->getHeader().e_shoff;
  const uint64_t ShEnd =
      ShOff + uint64_t(File->getHeader().e_shnum) * sizeof(ELFT::Shdr);
  if (!PayloadIndex)
    return makeError("internal error: the rewritten object lacks " +
                     PayloadSectionName);
  const uint64_t Gap = (*Sections)[*PayloadIndex].sh_offset;
  bool LaidOutLast = (*Sections)[*PayloadIndex].sh_size == 0 &&
                     ShOff == alignTo(Gap, sizeof(ELFT::Addr)) &&
                     ShEnd == Head.size();
  for (const ELFT::Shdr &Sec : *Sections)
    if (Sec.sh_type != ELF::SHT_NOBITS && Sec.sh_size != 0 &&
        Sec.sh_offset + Sec.sh_size > Gap)
      LaidOutLast = false;
  if (!LaidOutLast)
    return makeError("internal error: ObjCopy did not lay out " +
                     PayloadSectionName + " last");
  // The guard's relocations follow the payload records.
  const uint64_t RelaOff = alignTo(Gap + PayloadSize, RelaAlign);
  const uint64_t RelaEnd = RelaOff + Guard->Bytes.size();
  const uint64_t NewShOff = alignTo(RelaEnd, sizeof(ELFT::Addr));
  {
    using namespace support::endian;
    const size_t ShdrAt = ShOff + *PayloadIndex * sizeof(ELFT::Shdr);
    write64le(Head.data() + ShdrAt + ShdrSizeOffset,
              PayloadSize);
    const size_t RelaAt = ShOff + Guard->HeaderIndex * sizeof(ELFT::Shdr);
    write64le(Head.data() + RelaAt + ShdrOffsetOffset, RelaOff);
    write64le(Head.data() + RelaAt + ShdrSizeOffset, Guard->Bytes.size());
    write64le(Head.data() + EhdrShOffOffset, NewShOff);
  }

  OS.write(Head.data(), Gap);
  if (!InOutput) {
    const uint64_t FatbinOffset =
        reinterpret_cast<const char *>(Bytes.data()) - In.getBufferStart();
    if (Written)
      for (size_t I = 0; I < Ranges->size(); ++I)
        Written->push_back({BundleKeys[I], FatbinOffset + (*Ranges)[I].Begin,
                            (*Ranges)[I].End - (*Ranges)[I].Begin});
  }
  uint64_t Pos = Gap;
  for (size_t I = 0; InOutput && I < Ranges->size(); ++I) {
    const BundleRange &R = (*Ranges)[I];
    const uint64_t Size = R.End - R.Begin;
    uint8_t Header[PayloadHeaderSize] = {};
    support::endian::write32le(Header, PayloadMagic);
    support::endian::write32le(Header + 4, PayloadVersion);
    support::endian::write64le(Header + 8, BundleKeys[I]);
    support::endian::write64le(Header + 16, Size);
    OS.write(reinterpret_cast<const char *>(Header), sizeof(Header));
    if (Written)
      Written->push_back({BundleKeys[I], Pos + PayloadHeaderSize, Size});
    forEachChunk(Bytes.slice(R.Begin, Size), ReleaseInput,
                 [&](ArrayRef<uint8_t> C) {
                   OS.write(reinterpret_cast<const char *>(C.data()),
                            C.size());
                 });
    const uint64_t Record = alignTo(PayloadHeaderSize + Size, RecordAlign);
    OS.write_zeros(Record - PayloadHeaderSize - Size);
    Pos += Record;
  }
  OS.write_zeros(RelaOff - Pos);
  OS.write(reinterpret_cast<const char *>(Guard->Bytes.data()),
           Guard->Bytes.size());
  OS.write_zeros(NewShOff - RelaEnd);
  OS.write(Head.data() + ShOff, Head.size() - ShOff);
  return Error::success();
}

Error rewriteFatObject(MemoryBufferRef In, SmallVectorImpl<char> &Out) {
  Out.clear();
  raw_svector_ostream OS(Out);
  return rewriteFatObject(In, OS, StreamOptions());
}

Expected<std::vector<PayloadRecord>>
readPayloadRecords(const ObjectFile &Obj, KeyCheck Check) {
  std::vector<PayloadRecord> All;
  for (const SectionRef &Sec : Obj.sections()) {
    Expected<StringRef> Name = Sec.getName();
    if (!Name)
      return Name.takeError();
    if (*Name != PayloadSectionName)
      continue;
    Expected<StringRef> Contents = Sec.getContents();
    if (!Contents)
      return Contents.takeError();
    auto Records = parsePayloadSection(arrayRefFromStringRef(*Contents), Check);
    if (!Records)
      return Records.takeError();
    All.insert(All.end(), Records->begin(), Records->end());
  }
  return All;
}

/// Offset of the 8-byte `binary` field in the 24-byte wrapper.
static constexpr uint64_t WrapperBinaryOffset = 8;
static constexpr uint64_t WrapperSize = 24;

// Works on ELFFile rather than the generic RelocationRef API, which aborts on
// malformed relocation sections instead of returning an error.
Expected<ReadyObjectInfo> inspectReadyObject(const ObjectFile &Obj) {
  const auto *ELFObj = dyn_cast<ELF64LEObjectFile>(&Obj);
  if (!ELFObj)
    return makeError("not a 64-bit little-endian ELF object");
  const ELFFile<ELFT> &File = ELFObj->getELFFile();

  ReadyObjectInfo Info;
  Expected<std::vector<PayloadRecord>> Payloads = readPayloadRecords(Obj);
  if (!Payloads)
    return Payloads.takeError();
  Info.Payloads = std::move(*Payloads);

  auto Sections = File.sections();
  if (!Sections)
    return Sections.takeError();
  std::optional<uint64_t> KeyIndex, WrapperIndex;
  for (const ELFT::Shdr &Sec : *Sections) {
    Expected<StringRef> Name = File.getSectionName(Sec);
    if (!Name)
      return Name.takeError();
    uint64_t Index = &Sec - Sections->begin();
    if (*Name == WrapperSectionName)
      WrapperIndex = Index;
    if (*Name != KeySectionName)
      continue;
    if (KeyIndex)
      return makeError("more than one " + KeySectionName + " section");
    KeyIndex = Index;
    Expected<ArrayRef<uint8_t>> Contents = File.getSectionContents(Sec);
    if (!Contents)
      return Contents.takeError();
    Expected<std::vector<KeySlot>> Slots = parseKeySection(*Contents);
    if (!Slots)
      return Slots.takeError();
    Info.Keys = std::move(*Slots);
  }
  if (!KeyIndex || !WrapperIndex)
    return Info;

  for (const ELFT::Shdr &RelSec : *Sections) {
    if (RelSec.sh_type != ELF::SHT_RELA || RelSec.sh_info != *WrapperIndex)
      continue;
    auto SymTab = File.getSection(RelSec.sh_link);
    if (!SymTab)
      return SymTab.takeError();
    auto Relas = File.relas(RelSec);
    if (!Relas)
      return Relas.takeError();
    for (const ELFT::Rela &R : *Relas) {
      if (R.r_offset % WrapperSize != WrapperBinaryOffset)
        continue;
      auto Sym = File.getRelocationSymbol(R, *SymTab);
      if (!Sym)
        return Sym.takeError();
      if (!*Sym || (*Sym)->st_shndx != *KeyIndex)
        continue;
      uint64_t WrapperOffset = R.r_offset - WrapperBinaryOffset;
      uint64_t KeyOffset = (*Sym)->st_value + R.r_addend;
      if (KeyOffset % KeySlotSize != 0 ||
          KeyOffset / KeySlotSize >= Info.Keys.size())
        return makeError("wrapper at offset 0x" +
                         Twine::utohexstr(WrapperOffset) + " points into " +
                         KeySectionName + " but not at a key record");
      Info.Wrappers.push_back({WrapperOffset, KeyOffset});
    }
  }
  llvm::sort(Info.Wrappers, [](const auto &A, const auto &B) {
    return A.WrapperOffset < B.WrapperOffset;
  });
  return Info;
}

} // namespace ready
} // namespace kpack
