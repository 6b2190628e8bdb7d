//===- CoffRewrite.cpp - Remove .hip_fat from a linked PE image -----------===//
//
// The PE rewrite of the converter (docs/windows.md). PE sections carry their
// own addresses, so no address changes and nothing needs to join another
// mapping as on ELF:
//   * .hip_fat keeps its header (name, RVA, extent, flags) and loses its
//     file bytes (SizeOfRawData = PointerToRawData = 0): the loader
//     zero-fills it, and no pointer into it is left. A VirtualSize of 0
//     (the loader then takes SizeOfRawData) becomes the raw size, so the
//     extent and the next section's contiguity stay;
//   * a new last section .kpackrf (initialized, read-only data) holds the
//     metadata at the next aligned RVA; SizeOfImage grows by its pages;
//   * the wrappers become HIPK and point at .kpackrf (their DIR64 base
//     relocations stay as they are: only the value changes);
//   * file contents after .hip_fat's raw data move down by its size (a
//     multiple of FileAlignment), the .kpackrf raw data goes after the last
//     section's, before the symbol table and whatever follows; every file
//     offset in the headers (raw data, symbol table, debug directory
//     entries) follows, and a non-zero checksum is recomputed.
// The new section header goes after the last one, in the room the headers
// have before the first section's raw data (or that room grows by whole
// FileAlignment units when the first section's address allows).
//
//===----------------------------------------------------------------------===//

#include "PeImage.h"

#include "kpack/COFF/CoffHostBinary.h"
#include "kpack/LLVMError.h"
#include "kpack/Quote.h"
#include "kpack/WrapperPatcher.h"

#include "llvm/BinaryFormat/COFF.h"
#include "llvm/Object/COFF.h"
#include "llvm/Support/Endian.h"
#include "llvm/Support/MathExtras.h"

#include <algorithm>
#include <cstring>
#include <set>

using namespace llvm;
using namespace llvm::object;
using namespace kpack;
using pe::hex;
namespace endian = llvm::support::endian;

namespace {

constexpr uint32_t KpackRefFlags =
    COFF::IMAGE_SCN_CNT_INITIALIZED_DATA | COFF::IMAGE_SCN_MEM_READ;

/// Old file offset -> new file offset.
struct OffsetMap {
  uint64_t FirstRaw = 0, FatBegin = 0, FatEnd = 0, LastRawEnd = 0;
  uint64_t HdrShift = 0, Pad = 0, KpackRaw = 0;

  std::optional<uint64_t> map(uint64_t Old) const {
    if (Old < FirstRaw)
      return Old;
    if (Old >= FatBegin && Old < FatEnd)
      return std::nullopt;
    uint64_t New = Old + HdrShift;
    if (Old >= FatEnd)
      New -= FatEnd - FatBegin;
    if (Old >= LastRawEnd)
      New += Pad + KpackRaw;
    return New;
  }
  /// Where the .kpackrf raw data goes.
  uint64_t kpackOffset() const {
    return LastRawEnd + HdrShift - (FatEnd - FatBegin) + Pad;
  }
};

bool allZero(ArrayRef<uint8_t> Bytes) {
  return std::all_of(Bytes.begin(), Bytes.end(),
                     [](uint8_t B) { return B == 0; });
}

Error inputChecks(const HostBinary &Host) {
  if (Host.Kind == HostFileKind::Relocatable)
    return makeError("relocatable objects cannot be converted (link first)");
  if (Host.hasHIPK())
    return makeError("the binary is already converted (HIPK wrappers)");
  if (!Host.Fatbin || Host.Bundles.empty() || Host.Wrappers.empty() ||
      !Host.WrapperSection)
    return makeError("the binary carries no device code");
  if (Host.KpackRefSection)
    return makeError("the image has both .hip_fat and .kpackrf; converting "
                     "it is not supported");
  for (const WrapperInfo &W : Host.Wrappers) {
    if (!W.isHIPF())
      return makeError("wrapper at " + hex(W.Address) +
                       " has an unknown magic " + hex(W.Magic));
    if (W.BundleIndex < 0)
      return makeError("wrapper at " + hex(W.Address) + " points at " +
                       hex(W.Target) + ", not at a bundle in .hip_fat");
  }
  return Error::success();
}

class CoffRewriter {
public:
  CoffRewriter(const pe::Image &I, const HostBinary &Host,
               ArrayRef<uint8_t> Metadata)
      : I(I), Host(Host), Metadata(Metadata) {}
  Expected<std::vector<uint8_t>> run();

private:
  Error plan();

  const pe::Image &I;
  const HostBinary &Host;
  ArrayRef<uint8_t> Metadata;
  size_t Fat = 0; ///< 0-based index of .hip_fat
  OffsetMap M;
  uint64_t NewSizeOfHeaders = 0, KpackRva = 0, NewSizeOfImage = 0;
  std::vector<pe::DebugEntry> Debug;
};

Error CoffRewriter::plan() {
  const auto &O = I.Opt;
  const uint64_t FA = O.FileAlignment, SA = O.SectionAlignment;
  Fat = Host.Fatbin->Index - 1;
  const coff_section &FS = I.Sections[Fat];
  if (FS.PointerToRawData % FA != 0 || FS.SizeOfRawData % FA != 0)
    return makeError("unsupported layout: .hip_fat's raw data (" +
                     hex(FS.PointerToRawData) + ", " +
                     hex(FS.SizeOfRawData) +
                     " bytes) is not aligned to FileAlignment " + hex(FA));
  const uint64_t FatVA = FS.VirtualAddress;
  const uint64_t FatVEnd = FatVA + pe::Image::extent(FS);

  // What the image must not do: be signed (the certificate table is found
  // by file offset, and the signature would no longer match), or refer to
  // .hip_fat other than through the wrappers.
  if (const auto *Cert = I.dir(COFF::CERTIFICATE_TABLE); Cert && Cert->Size)
    return makeError("signed images are not supported (the certificate "
                     "table would no longer match the image)");
  for (size_t D = 0; D < I.Dirs.size(); ++D) {
    uint64_t Rva = I.Dirs[D].RelativeVirtualAddress;
    if (I.Dirs[D].Size && D != COFF::CERTIFICATE_TABLE && Rva < FatVEnd &&
        FatVA < Rva + I.Dirs[D].Size)
      return makeError("data directory " + Twine(D) +
                       " lies in .hip_fat; converting is not supported");
  }
  auto Relocs = pe::readBaseRelocs(I);
  if (!Relocs)
    return Relocs.takeError();
  std::set<uint64_t> Slots;
  for (const WrapperInfo &W : Host.Wrappers)
    Slots.insert(W.Address - Host.ImageBase + 8);
  const bool Relocatable = !Relocs->empty();
  for (const WrapperInfo &W : Host.Wrappers)
    if (Relocatable && W.Style != PointerStyle::CoffDir64)
      return makeError("wrapper pointer at " + hex(W.Address + 8) +
                       " has no DIR64 base relocation");
  for (const pe::BaseReloc &R : *Relocs) {
    if (R.Type != COFF::IMAGE_REL_BASED_DIR64 || Slots.count(R.Rva))
      continue;
    auto Off = I.rvaToOffset(R.Rva, 8);
    if (!Off)
      continue; // zero-filled memory: points nowhere yet
    uint64_t V = endian::read64le(I.File.data() + *Off);
    if (V >= Host.ImageBase + FatVA && V < Host.ImageBase + FatVEnd)
      return makeError("the pointer at RVA " + hex(R.Rva) +
                       " (a DIR64 base relocation) points into .hip_fat and "
                       "is not a wrapper's; converting is not supported");
  }
  auto DebugOr = pe::readDebugDirectory(I);
  if (!DebugOr)
    return DebugOr.takeError();
  Debug = std::move(*DebugOr);

  M.FatBegin = FS.PointerToRawData;
  M.FatEnd = M.FatBegin + FS.SizeOfRawData;
  M.FirstRaw = UINT64_MAX;
  for (const coff_section &S : I.Sections)
    if (S.SizeOfRawData) {
      M.FirstRaw = std::min<uint64_t>(M.FirstRaw, S.PointerToRawData);
      M.LastRawEnd = std::max<uint64_t>(
          M.LastRawEnd, uint64_t(S.PointerToRawData) + S.SizeOfRawData);
    }
  M.Pad = alignTo(M.LastRawEnd, FA) - M.LastRawEnd;
  M.KpackRaw = alignTo(Metadata.size(), FA);
  for (const pe::DebugEntry &E : Debug)
    if (E.Entry.PointerToRawData && !M.map(E.Entry.PointerToRawData))
      return makeError("a debug directory entry's data lies in .hip_fat");
  if (I.FileHdr.PointerToSymbolTable && !M.map(I.FileHdr.PointerToSymbolTable))
    return makeError("the COFF symbol table lies in .hip_fat's raw data");

  // Room for one more section header.
  const uint64_t TableEnd = I.sectionTableEnd();
  const uint64_t NewTableEnd = TableEnd + pe::SectionHeaderSize;
  const uint64_t UsedEnd = std::min<uint64_t>(NewTableEnd, M.FirstRaw);
  if (!allZero(I.File.slice(TableEnd, UsedEnd - TableEnd)))
    return makeError("no room for the .kpackrf section header: the bytes "
                     "after the section table are in use");
  NewSizeOfHeaders =
      std::max<uint64_t>(O.SizeOfHeaders, alignTo(NewTableEnd, FA));
  if (NewSizeOfHeaders > I.Sections.front().VirtualAddress)
    return makeError("no room for the .kpackrf section header: the headers "
                     "would overlap the first section's address");
  if (NewSizeOfHeaders > M.FirstRaw)
    M.HdrShift = alignTo(NewSizeOfHeaders - M.FirstRaw, FA);

  KpackRva = 0;
  for (const coff_section &S : I.Sections)
    KpackRva = std::max<uint64_t>(
        KpackRva, alignTo(uint64_t(S.VirtualAddress) + pe::Image::extent(S),
                          SA));
  NewSizeOfImage = alignTo(KpackRva + Metadata.size(), SA);
  const uint64_t NewFileSize = I.File.size() + M.HdrShift -
                               (M.FatEnd - M.FatBegin) + M.Pad + M.KpackRaw;
  if (NewSizeOfImage > UINT32_MAX || NewFileSize > UINT32_MAX ||
      I.Sections.size() + 1 > UINT16_MAX)
    return makeError("the converted image would exceed the PE limits");
  return Error::success();
}

Expected<std::vector<uint8_t>> CoffRewriter::run() {
  if (Error E = plan())
    return E;
  const ArrayRef<uint8_t> File = I.File;
  const uint64_t FatRaw = M.FatEnd - M.FatBegin;
  std::vector<uint8_t> Out(File.size() + M.HdrShift - FatRaw + M.Pad +
                               M.KpackRaw,
                           0);
  auto Copy = [&](uint64_t Begin, uint64_t End, uint64_t To) {
    if (End > Begin)
      std::memcpy(Out.data() + To, File.data() + Begin, End - Begin);
  };
  Copy(0, M.FirstRaw, 0);
  Copy(M.FirstRaw, M.FatBegin, M.FirstRaw + M.HdrShift);
  Copy(M.FatEnd, M.LastRawEnd, M.FatEnd + M.HdrShift - FatRaw);
  const uint64_t KpackOff = M.kpackOffset();
  std::memcpy(Out.data() + KpackOff, Metadata.data(), Metadata.size());
  Copy(M.LastRawEnd, File.size(), KpackOff + M.KpackRaw);

  // Section headers.
  std::vector<coff_section> Secs = I.Sections;
  auto MapField = [&](uint32_t Old, const char *What) -> Expected<uint32_t> {
    if (!Old)
      return 0;
    auto New = M.map(Old);
    if (!New)
      return makeError(Twine(What) + " lies in .hip_fat's raw data");
    return static_cast<uint32_t>(*New);
  };
  for (size_t S = 0; S < Secs.size(); ++S) {
    coff_section &Sec = Secs[S];
    if (S == Fat) {
      // Its extent stays: a VirtualSize of 0 means SizeOfRawData to the
      // loader, which is about to become 0 (the next section would then
      // follow a gap the loader rejects).
      if (Sec.VirtualSize == 0)
        Sec.VirtualSize = Sec.SizeOfRawData;
      Sec.PointerToRawData = 0;
      Sec.SizeOfRawData = 0;
      continue;
    }
    for (auto [Field, What] :
         {std::pair{&Sec.PointerToRawData, "a section's raw data"},
          std::pair{&Sec.PointerToRelocations, "a section's relocations"},
          std::pair{&Sec.PointerToLinenumbers, "a section's line numbers"}}) {
      if (Field == &Sec.PointerToRawData && Sec.SizeOfRawData == 0)
        continue;
      auto New = MapField(*Field, What);
      if (!New)
        return New.takeError();
      *Field = *New;
    }
  }
  coff_section Ref;
  std::memset(&Ref, 0, sizeof(Ref));
  std::memcpy(Ref.Name, CoffKpackRefSection, COFF::NameSize);
  Ref.VirtualSize = static_cast<uint32_t>(Metadata.size());
  Ref.VirtualAddress = static_cast<uint32_t>(KpackRva);
  Ref.SizeOfRawData = static_cast<uint32_t>(M.KpackRaw);
  Ref.PointerToRawData = static_cast<uint32_t>(KpackOff);
  Ref.Characteristics = KpackRefFlags;
  Secs.push_back(Ref);
  std::memcpy(Out.data() + I.SectionTableOffset, Secs.data(),
              Secs.size() * pe::SectionHeaderSize);

  // File and optional headers.
  coff_file_header FH = I.FileHdr;
  FH.NumberOfSections = static_cast<uint16_t>(Secs.size());
  auto Sym = MapField(FH.PointerToSymbolTable, "the symbol table");
  if (!Sym)
    return Sym.takeError();
  FH.PointerToSymbolTable = *Sym;
  std::memcpy(Out.data() + I.FileHeaderOffset, &FH, pe::FileHeaderSize);
  pe32plus_header Opt = I.Opt;
  Opt.SizeOfImage = static_cast<uint32_t>(NewSizeOfImage);
  Opt.SizeOfHeaders = static_cast<uint32_t>(NewSizeOfHeaders);
  uint64_t Init = Opt.SizeOfInitializedData;
  Init = (Init > FatRaw ? Init - FatRaw : 0) + M.KpackRaw;
  Opt.SizeOfInitializedData = static_cast<uint32_t>(
      std::min<uint64_t>(Init, UINT32_MAX));
  std::memcpy(Out.data() + I.OptOffset, &Opt, pe::OptionalHeaderSize);

  // Debug directory entries name their data by file offset too.
  for (const pe::DebugEntry &E : Debug) {
    debug_directory D = E.Entry;
    auto New = MapField(D.PointerToRawData, "debug data");
    auto At = M.map(E.FileOffset);
    if (!New || !At) {
      consumeError(New.takeError());
      return makeError("the debug directory lies in .hip_fat's raw data");
    }
    D.PointerToRawData = *New;
    std::memcpy(Out.data() + *At, &D, pe::DebugDirectorySize);
  }

  // Wrappers.
  for (const WrapperInfo &W : Host.Wrappers) {
    WrapperLocation Loc = WrapperLocation::of(W);
    auto At = M.map(W.FileOffset);
    if (!At)
      return makeError("wrapper at " + hex(W.Address) + " lies in .hip_fat");
    Loc.FileOffset = *At;
    if (Error E = patchWrapperToHIPK(Out, Loc, Host.ImageBase + KpackRva,
                                     static_cast<uint32_t>(W.BundleIndex)))
      return E;
  }

  if (I.Opt.CheckSum != 0)
    endian::write32le(Out.data() + I.OptOffset + pe::CheckSumOffset,
                      computePeChecksum(Out, I.OptOffset + pe::CheckSumOffset));
  return Out;
}

ArrayRef<uint8_t> bytesOf(MemoryBufferRef B) {
  return ArrayRef<uint8_t>(
      reinterpret_cast<const uint8_t *>(B.getBufferStart()),
      B.getBufferSize());
}

} // namespace

Expected<std::vector<uint8_t>>
kpack::rewriteCoffHostBinary(MemoryBufferRef Image, const HostBinary &Host,
                             ArrayRef<uint8_t> Metadata) {
  if (Error E = inputChecks(Host))
    return E;
  if (Metadata.empty())
    return makeError("empty kpack metadata");
  auto I = pe::readImage(bytesOf(Image));
  if (!I)
    return makeError("malformed PE image: " + toString(I.takeError()));
  if (Error E = pe::checkLayout(*I))
    return makeError("malformed PE image: " + toString(std::move(E)));
  if (Host.Fatbin->Index == 0 || Host.Fatbin->Index > I->Sections.size())
    return makeError("internal error: .hip_fat's section number is stale");
  CoffRewriter R(*I, Host, Metadata);
  auto Out = R.run();
  if (!Out)
    return Out.takeError();
  MemoryBufferRef OutRef(
      StringRef(reinterpret_cast<const char *>(Out->data()), Out->size()),
      Image.getBufferIdentifier());
  if (Error E = verifyConvertedCoffBinary(Image, Host, OutRef))
    return makeError("internal error: the rewritten binary fails "
                     "verification: " +
                     toString(std::move(E)));
  return Out;
}

Error kpack::verifyConvertedCoffBinary(MemoryBufferRef Original,
                                       const HostBinary &Before,
                                       MemoryBufferRef Converted) {
  auto OldI = pe::readImage(bytesOf(Original));
  if (!OldI)
    return OldI.takeError();
  auto NewI = pe::readImage(bytesOf(Converted));
  if (!NewI)
    return makeError("does not re-parse: " + toString(NewI.takeError()));
  if (Error E = pe::checkLayout(*NewI))
    return E;
  if (auto Obj = object::COFFObjectFile::create(Converted); !Obj)
    return makeError("LLVM's COFF reader rejects it: " +
                     toString(Obj.takeError()));
  auto After = analyzeHostBinary(Converted);
  if (!After)
    return makeError("does not re-parse: " + toString(After.takeError()));
  if (!Before.Fatbin || !Before.WrapperSection)
    return makeError("the original binary has no device code");

  // Wrappers.
  if (After->Wrappers.size() != Before.Wrappers.size())
    return makeError("wrapper count changed");
  if (!After->Bundles.empty())
    return makeError("device code is still present");
  if (!After->KpackRefSection)
    return makeError("no .kpackrf section");
  const uint64_t RefVA = After->KpackRefSection->Address;
  for (size_t K = 0; K < After->Wrappers.size(); ++K) {
    const WrapperInfo &W = After->Wrappers[K], &Old = Before.Wrappers[K];
    if (!W.isHIPK())
      return makeError("wrapper " + Twine(K) + " is not HIPK");
    if (!W.Ref)
      return makeError("wrapper " + Twine(K) + ": " + W.RefError);
    if (W.Target != RefVA)
      return makeError("wrapper " + Twine(K) + " does not point at .kpackrf");
    if (W.Address != Old.Address || W.Style != Old.Style ||
        W.Version != Old.Version)
      return makeError("wrapper " + Twine(K) + " moved or changed style");
    if (W.Reserved1 != static_cast<uint64_t>(Old.BundleIndex))
      return makeError("wrapper " + Twine(K) + " has index " +
                       Twine(W.Reserved1) + ", expected " +
                       Twine(Old.BundleIndex));
  }

  // Headers: only what the rewrite changes may differ.
  const pe::Image &A = *OldI, &B = *NewI;
  if (B.Sections.size() != A.Sections.size() + 1)
    return makeError("section count is not one more");
  auto SameDir = [](const data_directory &X, const data_directory &Y) {
    return X.RelativeVirtualAddress == Y.RelativeVirtualAddress &&
           X.Size == Y.Size;
  };
  if (!std::equal(A.Dirs.begin(), A.Dirs.end(), B.Dirs.begin(), B.Dirs.end(),
                  SameDir))
    return makeError("the data directories changed");
  if (B.Opt.ImageBase != A.Opt.ImageBase ||
      B.Opt.AddressOfEntryPoint != A.Opt.AddressOfEntryPoint ||
      B.Opt.SectionAlignment != A.Opt.SectionAlignment ||
      B.Opt.FileAlignment != A.Opt.FileAlignment ||
      B.FileHdr.Characteristics != A.FileHdr.Characteristics ||
      B.FileHdr.NumberOfSymbols != A.FileHdr.NumberOfSymbols)
    return makeError("the file or optional header changed");
  if (B.Opt.CheckSum != 0 &&
      B.Opt.CheckSum !=
          computePeChecksum(B.File, B.OptOffset + pe::CheckSumOffset))
    return makeError("wrong checksum");
  if ((A.Opt.CheckSum == 0) != (B.Opt.CheckSum == 0))
    return makeError("the checksum field was set or cleared");

  // Sections: same names, addresses, sizes, flags and bytes; .hip_fat
  // without file bytes; the wrappers checked above, the debug directory's
  // file offsets may differ.
  const size_t Fat = Before.Fatbin->Index - 1;
  const size_t Wrap = Before.WrapperSection->Index - 1;
  auto DebugA = pe::readDebugDirectory(A);
  if (!DebugA)
    return DebugA.takeError();
  auto DebugB = pe::readDebugDirectory(B);
  if (!DebugB)
    return DebugB.takeError();
  if (DebugA->size() != DebugB->size())
    return makeError("the debug directory changed");
  std::vector<uint8_t> Scratch;
  for (size_t S = 0; S < A.Sections.size(); ++S) {
    const coff_section &SA = A.Sections[S], &SB = B.Sections[S];
    // .hip_fat's VirtualSize may go from 0 to its raw size, its extent
    // either way; every other section's stays as it was.
    if (std::memcmp(SA.Name, SB.Name, COFF::NameSize) != 0 ||
        SA.VirtualAddress != SB.VirtualAddress ||
        pe::Image::extent(SA) != pe::Image::extent(SB) ||
        (S != Fat && SA.VirtualSize != SB.VirtualSize) ||
        SA.Characteristics != SB.Characteristics)
      return makeError("section " + Twine(S + 1) +
                       " changed name, address, size or flags");
    if (S == Fat) {
      if (SB.SizeOfRawData != 0)
        return makeError(".hip_fat still has file bytes");
      continue;
    }
    if (SA.SizeOfRawData != SB.SizeOfRawData)
      return makeError("section " + Twine(S + 1) + " changed its raw size");
    if (S == Wrap || SA.SizeOfRawData == 0)
      continue;
    ArrayRef<uint8_t> RA = A.File.slice(SA.PointerToRawData, SA.SizeOfRawData);
    ArrayRef<uint8_t> RB = B.File.slice(SB.PointerToRawData, SB.SizeOfRawData);
    if (RA == RB)
      continue;
    // Only the debug entries' PointerToRawData fields may differ.
    Scratch.assign(RB.begin(), RB.end());
    for (size_t D = 0; D < DebugA->size(); ++D) {
      uint64_t At = (*DebugB)[D].FileOffset;
      if (At >= SB.PointerToRawData && At - SB.PointerToRawData + 28 <=
                                           Scratch.size())
        std::memcpy(Scratch.data() + (At - SB.PointerToRawData) + 24,
                    RA.data() + (At - SB.PointerToRawData) + 24, 4);
    }
    if (ArrayRef<uint8_t>(Scratch) != RA)
      return makeError("the bytes of section " + Twine(S + 1) + " (" +
                       quoteInput(A.Names[S]) + ") changed");
  }
  const coff_section &Ref = B.Sections.back();
  if (std::memcmp(Ref.Name, CoffKpackRefSection, COFF::NameSize) != 0 ||
      Ref.Characteristics != KpackRefFlags)
    return makeError("the last section is not .kpackrf");
  // Whatever follows the raw data (symbol and string tables) is unchanged.
  auto RawEnd = [](const pe::Image &X) {
    uint64_t End = 0;
    for (const coff_section &S : X.Sections)
      if (S.SizeOfRawData)
        End = std::max<uint64_t>(End, uint64_t(S.PointerToRawData) +
                                          S.SizeOfRawData);
    return End;
  };
  if (A.File.drop_front(RawEnd(A)) != B.File.drop_front(RawEnd(B)))
    return makeError("the data after the sections (symbol table) changed");
  // No base relocation points into .hip_fat.
  auto Relocs = pe::readBaseRelocs(B);
  if (!Relocs)
    return Relocs.takeError();
  const coff_section &FS = B.Sections[Fat];
  const uint64_t Lo = B.Opt.ImageBase + FS.VirtualAddress;
  const uint64_t Hi = Lo + pe::Image::extent(FS);
  for (const pe::BaseReloc &R : *Relocs) {
    if (R.Type != COFF::IMAGE_REL_BASED_DIR64)
      continue;
    auto Off = B.rvaToOffset(R.Rva, 8);
    if (!Off)
      continue;
    uint64_t V = endian::read64le(B.File.data() + *Off);
    if (V >= Lo && V < Hi)
      return makeError("the base relocation at RVA " + hex(R.Rva) +
                       " points into .hip_fat");
  }
  return Error::success();
}
