//===- ReadyCoffObject.cpp - Kpack-ready COFF objects ----------------------===//
//
// A COFF object is a file header, a section table, raw data and relocations
// per section, a symbol table and a string table, all located by file
// offsets. The rewrite lays the object out again: every section keeps its
// number and header fields, `.hip_fatbin`'s bytes are replaced by the key
// records (so the section shrinks from the device code to 256 bytes per
// bundle, with the guard's relocations), a payload section is appended, and
// the symbol and string tables are copied with the few fields that referred
// to bundle offsets moved and the guard symbol appended.
// llvm/ObjCopy's COFF writer cannot move symbol values or implicit addends
// (which on COFF live in the section bytes, not in the relocation), so the
// layout is written here; LLVM's COFFObjectFile validates the input first
// and reads the section names.
//
//===----------------------------------------------------------------------===//

#include "kpack/COFF/ReadyCoffObject.h"
#include "kpack/BundleCodec.h"
#include "kpack/KpackReady.h"
#include "kpack/LLVMError.h"
#include "kpack/ReadyObject.h"

#include "llvm/ADT/StringExtras.h"
#include "llvm/BinaryFormat/COFF.h"
#include "llvm/Object/COFF.h"
#include "llvm/Support/Endian.h"
#include "llvm/Support/MathExtras.h"

#include <cstring>
#include <map>
#include <optional>

using namespace llvm;
using namespace llvm::object;
namespace endian = llvm::support::endian;

namespace kpack {
namespace ready {

namespace {

constexpr uint64_t FileHeaderSize = 20;
constexpr uint64_t SectionHeaderSize = 40;
constexpr uint64_t RelocSize = 10;
constexpr uint64_t SymbolSize = 18;

// Field offsets in the section header and the symbol records (PE/COFF
// specification).
constexpr size_t SecSizeOfRawData = 16, SecPointerToRawData = 20,
                 SecPointerToRelocations = 24, SecPointerToLinenumbers = 28,
                 SecNumberOfRelocations = 32, SecNumberOfLinenumbers = 34,
                 SecCharacteristics = 36;
constexpr size_t SymValue = 8, SymSectionNumber = 12, SymType = 14,
                 SymStorageClass = 16, SymNumberOfAux = 17;
constexpr size_t AuxLength = 0, AuxCheckSum = 8;
// ... and in a relocation.
constexpr size_t RelocSymbolIndex = 4, RelocType = 8;

std::string hex(uint64_t V) { return "0x" + utohexstr(V); }

struct BundleRange {
  uint64_t Begin, End;
};

/// The key slot a reference to old `.hip_fatbin` offset Off now refers to
/// (the convention of the ELF rewrite: a reference to bundle i, its start or
/// anywhere inside it, refers to slot i).
Expected<uint64_t> slotFor(const std::vector<BundleRange> &Ranges,
                           uint64_t Off) {
  for (size_t I = 0; I < Ranges.size(); ++I)
    if (Off >= Ranges[I].Begin &&
        (Off < Ranges[I].End || Off == Ranges[I].Begin))
      return I * KeySlotSize;
  return makeError("reference to offset " + hex(Off) + " of " +
                   FatbinSectionName + " is not inside a bundle");
}

/// Bytes of the implicit addend a relocation of Type keeps in place, or 0
/// for kinds whose addend cannot be moved here.
unsigned addendSize(uint16_t Type) {
  switch (Type) {
  case COFF::IMAGE_REL_AMD64_ADDR64:
    return 8;
  case COFF::IMAGE_REL_AMD64_ADDR32:
  case COFF::IMAGE_REL_AMD64_ADDR32NB:
  case COFF::IMAGE_REL_AMD64_REL32:
  case COFF::IMAGE_REL_AMD64_REL32_1:
  case COFF::IMAGE_REL_AMD64_REL32_2:
  case COFF::IMAGE_REL_AMD64_REL32_3:
  case COFF::IMAGE_REL_AMD64_REL32_4:
  case COFF::IMAGE_REL_AMD64_REL32_5:
  case COFF::IMAGE_REL_AMD64_SECREL:
    return 4;
  default:
    return 0;
  }
}

bool inFile(StringRef File, uint64_t Off, uint64_t Size) {
  return Off <= File.size() && Size <= File.size() - Off;
}

} // namespace

bool isCoffObjectBytes(StringRef Bytes) {
  return Bytes.size() >= FileHeaderSize &&
         endian::read16le(Bytes.data()) == COFF::IMAGE_FILE_MACHINE_AMD64 &&
         endian::read16le(Bytes.data() + 16) == 0; // no optional header
}

Error rewriteFatCoffObject(MemoryBufferRef In, SmallVectorImpl<char> &Out) {
  StringRef File = In.getBuffer();
  if (File.size() >= 4 && endian::read16le(File.data()) == 0 &&
      endian::read16le(File.data() + 2) == 0xffff)
    return makeError("bigobj COFF objects are not supported");
  if (!isCoffObjectBytes(File))
    return makeError("not an x86-64 COFF object");
  // LLVM's reader checks the section table, the symbol table and the string
  // table against the file.
  auto ObjOrErr = COFFObjectFile::create(In);
  if (!ObjOrErr)
    return ObjOrErr.takeError();
  const COFFObjectFile &Obj = **ObjOrErr;

  const uint8_t *Base = reinterpret_cast<const uint8_t *>(File.data());
  const uint32_t NumSections = endian::read16le(Base + 2);
  const uint32_t SymTabOff = endian::read32le(Base + 8);
  const uint32_t NumSymbols = SymTabOff ? endian::read32le(Base + 12) : 0;
  if (!inFile(File, FileHeaderSize, NumSections * SectionHeaderSize))
    return makeError("the section table runs past the end of the file");
  auto Header = [&](uint32_t I) {
    return Base + FileHeaderSize + I * SectionHeaderSize;
  };

  // The one `.hip_fatbin` section (0-based index).
  std::optional<uint32_t> Fat;
  for (uint32_t I = 0; I < NumSections; ++I) {
    auto Sec = Obj.getSection(I + 1);
    if (!Sec)
      return Sec.takeError();
    auto Name = Obj.getSectionName(*Sec);
    if (!Name)
      return Name.takeError();
    if (*Name == PayloadSectionName || *Name == CoffKeySectionName)
      return makeError("the object has both " + FatbinSectionName + " and " +
                       *Name);
    if (*Name != FatbinSectionName)
      continue;
    if (Fat)
      return makeError("more than one " + FatbinSectionName + " section");
    Fat = I;
  }
  if (!Fat)
    return makeError("no " + FatbinSectionName + " section");
  if (Error E = checkGuardSymbolFree(Obj))
    return E;
  const uint8_t *FatHdr = Header(*Fat);
  const uint32_t FatFlags = endian::read32le(FatHdr + SecCharacteristics);
  if (endian::read16le(FatHdr + SecNumberOfRelocations) != 0)
    return makeError(FatbinSectionName + " has relocations");
  if (FatFlags & COFF::IMAGE_SCN_LNK_COMDAT)
    return makeError(FatbinSectionName + " is a COMDAT section");
  const uint32_t FatSize = endian::read32le(FatHdr + SecSizeOfRawData);
  const uint32_t FatOff = endian::read32le(FatHdr + SecPointerToRawData);
  if (FatOff == 0 || !inFile(File, FatOff, FatSize))
    return makeError(FatbinSectionName + " has no bytes in the file");
  ArrayRef<uint8_t> FatBytes(Base + FatOff, FatSize);

  // The bundles, their keys and records.
  std::vector<BundleExtent> Extents;
  if (Status S = scanBundleSection(FatBytes.data(), FatBytes.size(), Extents))
    return makeError(FatbinSectionName + ": " + S.message());
  std::vector<BundleRange> Ranges;
  std::vector<uint8_t> Keys, Payloads;
  for (const BundleExtent &B : Extents) {
    Ranges.push_back({B.SectionOffset, B.SectionOffset + B.EncodedSize});
    ArrayRef<uint8_t> Bundle = FatBytes.slice(B.SectionOffset, B.EncodedSize);
    std::vector<uint8_t> K =
        encodeKeyRecord(computeContentKey(Bundle), Bundle.size());
    Keys.insert(Keys.end(), K.begin(), K.end());
    std::vector<uint8_t> P = encodePayloadRecord(Bundle);
    Payloads.insert(Payloads.end(), P.begin(), P.end());
  }

  // Old symbol values of the section's symbols and where they go.
  const int32_t FatNumber = static_cast<int32_t>(*Fat + 1);
  std::vector<uint8_t> Symbols;
  if (SymTabOff != 0) {
    if (!inFile(File, SymTabOff, uint64_t(NumSymbols) * SymbolSize))
      return makeError("the symbol table runs past the end of the file");
    Symbols.assign(Base + SymTabOff,
                   Base + SymTabOff + uint64_t(NumSymbols) * SymbolSize);
  }
  std::map<uint32_t, uint32_t> OldValue; // symbol index -> old value
  for (uint32_t I = 0; I < NumSymbols; ++I) {
    uint8_t *S = Symbols.data() + I * SymbolSize;
    const uint8_t NumAux = S[SymNumberOfAux];
    if (NumAux > NumSymbols - I - 1)
      return makeError("symbol " + Twine(I) +
                       " has auxiliary records past the symbol table");
    if (static_cast<int16_t>(endian::read16le(S + SymSectionNumber)) ==
        FatNumber) {
      const uint32_t V = endian::read32le(S + SymValue);
      OldValue[I] = V;
      const bool SectionDefinition =
          S[SymStorageClass] == COFF::IMAGE_SYM_CLASS_STATIC && NumAux > 0 &&
          endian::read16le(S + SymType) == 0 && V == 0;
      if (SectionDefinition) {
        uint8_t *Aux = S + SymbolSize;
        endian::write32le(Aux + AuxLength, static_cast<uint32_t>(Keys.size()));
        endian::write32le(Aux + AuxCheckSum, 0);
      } else {
        auto Slot = slotFor(Ranges, V);
        if (!Slot)
          return Slot.takeError();
        endian::write32le(S + SymValue, static_cast<uint32_t>(*Slot));
      }
    }
    I += NumAux;
  }
  auto NewValue = [&](uint32_t Sym) {
    return endian::read32le(Symbols.data() + Sym * SymbolSize + SymValue);
  };

  // The string table: copied, with the payload section's name appended.
  std::vector<uint8_t> Strings = {4, 0, 0, 0};
  if (SymTabOff != 0) {
    const uint64_t StrOff = SymTabOff + uint64_t(NumSymbols) * SymbolSize;
    if (inFile(File, StrOff, 4)) {
      const uint32_t StrSize = endian::read32le(Base + StrOff);
      if (StrSize >= 4) {
        if (!inFile(File, StrOff, StrSize))
          return makeError("the string table runs past the end of the file");
        Strings.assign(Base + StrOff, Base + StrOff + StrSize);
      }
    }
  }
  auto AddString = [&](StringRef Literal) {
    const uint32_t At = Strings.size();
    // Copied first: under ASan, clang folds begin() and end() of a constexpr
    // literal to two different copies of it, which is not a range.
    const std::string Copy = Literal.str();
    Strings.insert(Strings.end(), Copy.begin(), Copy.end());
    Strings.push_back(0);
    return At;
  };
  const uint32_t PayloadNameOff = AddString(PayloadSectionName);
  const uint32_t GuardNameOff = AddString(GuardSymbolName);
  endian::write32le(Strings.data(), static_cast<uint32_t>(Strings.size()));

  // The guard (KpackReady.h): an external undefined symbol, appended so
  // that no symbol index changes, and one IMAGE_REL_AMD64_REL32 against it
  // at GuardFieldOffset of every key slot, its implicit addend 4 (the
  // distance from the end of the field to its start) as LLVM writes it for
  // the IR emitter's objects.
  const uint32_t GuardIndex = NumSymbols;
  {
    uint8_t S[SymbolSize] = {}; // short name 0: the name is in the strings
    endian::write32le(S + 4, GuardNameOff);
    S[SymStorageClass] = COFF::IMAGE_SYM_CLASS_EXTERNAL;
    Symbols.insert(Symbols.end(), S, S + SymbolSize);
  }
  if (Ranges.size() >= 0xffff)
    return makeError("too many bundles in " + FatbinSectionName);
  std::vector<uint8_t> GuardRelocs(Ranges.size() * RelocSize);
  for (size_t I = 0; I < Ranges.size(); ++I) {
    const uint64_t Field = I * KeySlotSize + GuardFieldOffset;
    endian::write32le(Keys.data() + Field, 4);
    uint8_t *R = GuardRelocs.data() + I * RelocSize;
    endian::write32le(R, static_cast<uint32_t>(Field));
    endian::write32le(R + RelocSymbolIndex, GuardIndex);
    endian::write16le(R + RelocType, COFF::IMAGE_REL_AMD64_REL32);
  }

  // Per section: its bytes (implicit addends moved) and relocations.
  struct Piece {
    std::vector<uint8_t> Raw;
    bool HasRaw = false;
    std::vector<uint8_t> Relocs;
  };
  std::vector<Piece> Pieces(NumSections);
  for (uint32_t I = 0; I < NumSections; ++I) {
    const uint8_t *H = Header(I);
    Piece &P = Pieces[I];
    if (I == *Fat) {
      P.Raw = Keys;
      P.HasRaw = true;
      P.Relocs = GuardRelocs;
      continue;
    }
    if (endian::read16le(H + SecNumberOfLinenumbers) != 0)
      return makeError("section " + Twine(I + 1) + " has COFF line numbers");
    const uint32_t RawSize = endian::read32le(H + SecSizeOfRawData);
    const uint32_t RawOff = endian::read32le(H + SecPointerToRawData);
    if (RawOff != 0) {
      if (!inFile(File, RawOff, RawSize))
        return makeError("section " + Twine(I + 1) +
                         " runs past the end of the file");
      P.Raw.assign(Base + RawOff, Base + RawOff + RawSize);
      P.HasRaw = true;
    }
    uint64_t NRel = endian::read16le(H + SecNumberOfRelocations);
    const uint32_t RelOff = endian::read32le(H + SecPointerToRelocations);
    const uint32_t Flags = endian::read32le(H + SecCharacteristics);
    if ((Flags & COFF::IMAGE_SCN_LNK_NRELOC_OVFL) && NRel == 0xffff) {
      if (!inFile(File, RelOff, RelocSize))
        return makeError("section " + Twine(I + 1) +
                         " relocations run past the end of the file");
      NRel = endian::read32le(Base + RelOff); // this entry included
    }
    if (NRel == 0)
      continue;
    if (!inFile(File, RelOff, NRel * RelocSize))
      return makeError("section " + Twine(I + 1) +
                       " relocations run past the end of the file");
    P.Relocs.assign(Base + RelOff, Base + RelOff + NRel * RelocSize);
    for (uint64_t R = 0; R < NRel; ++R) {
      const uint8_t *E = P.Relocs.data() + R * RelocSize;
      const uint32_t Sym = endian::read32le(E + RelocSymbolIndex);
      auto It = OldValue.find(Sym);
      if (It == OldValue.end())
        continue;
      if ((Flags & COFF::IMAGE_SCN_LNK_NRELOC_OVFL) && R == 0 &&
          P.Relocs.size() / RelocSize == endian::read32le(E))
        continue; // the count entry of an overflowed table
      const uint32_t At = endian::read32le(E);
      const uint16_t Type = endian::read16le(E + RelocType);
      const unsigned Size = addendSize(Type);
      if (Size == 0)
        return makeError("relocation of type " + hex(Type) + " in section " +
                         Twine(I + 1) + " refers to " + FatbinSectionName);
      if (!P.HasRaw || At > P.Raw.size() || P.Raw.size() - At < Size)
        return makeError("relocation at " + hex(At) + " in section " +
                         Twine(I + 1) + " lies outside its bytes");
      uint8_t *Where = P.Raw.data() + At;
      const int64_t Addend = Size == 8
                                 ? int64_t(endian::read64le(Where))
                                 : int64_t(int32_t(endian::read32le(Where)));
      const int64_t Target = int64_t(It->second) + Addend;
      if (Target < 0)
        return makeError("reference to a negative offset of " +
                         FatbinSectionName);
      auto Slot = slotFor(Ranges, uint64_t(Target));
      if (!Slot)
        return Slot.takeError();
      const int64_t NewAddend = int64_t(*Slot) - int64_t(NewValue(Sym));
      if (Size == 8)
        endian::write64le(Where, uint64_t(NewAddend));
      else
        endian::write32le(Where, uint32_t(int32_t(NewAddend)));
    }
  }

  // Layout: headers, then per section its bytes and relocations (8-aligned),
  // the payload records, the symbol table and the string table.
  const uint32_t NewNumSections = NumSections + 1;
  uint64_t Off = FileHeaderSize + NewNumSections * SectionHeaderSize;
  std::vector<uint8_t> Headers(Base + FileHeaderSize,
                               Base + FileHeaderSize +
                                   NumSections * SectionHeaderSize);
  Headers.resize(NewNumSections * SectionHeaderSize, 0);
  std::vector<std::pair<uint64_t, const std::vector<uint8_t> *>> Blobs;
  auto Place = [&](const std::vector<uint8_t> &B) {
    Off = alignTo(Off, 8);
    uint64_t At = Off;
    Blobs.push_back({At, &B});
    Off += B.size();
    return At;
  };
  for (uint32_t I = 0; I < NumSections; ++I) {
    uint8_t *H = Headers.data() + I * SectionHeaderSize;
    Piece &P = Pieces[I];
    if (P.HasRaw) {
      endian::write32le(H + SecPointerToRawData,
                        static_cast<uint32_t>(Place(P.Raw)));
      endian::write32le(H + SecSizeOfRawData,
                        static_cast<uint32_t>(P.Raw.size()));
    }
    endian::write32le(H + SecPointerToRelocations,
                      P.Relocs.empty() ? 0
                                       : static_cast<uint32_t>(Place(P.Relocs)));
    endian::write32le(H + SecPointerToLinenumbers, 0);
    if (I == *Fat) {
      std::memcpy(H, CoffKeySectionName.data(), COFF::NameSize);
      endian::write16le(H + SecNumberOfRelocations,
                        static_cast<uint16_t>(P.Relocs.size() / RelocSize));
      endian::write32le(H + SecCharacteristics,
                        COFF::IMAGE_SCN_CNT_INITIALIZED_DATA |
                            COFF::IMAGE_SCN_MEM_READ |
                            COFF::IMAGE_SCN_ALIGN_8BYTES);
    }
  }
  {
    // The payload section: what LLVM emits for a global with !exclude.
    uint8_t *H = Headers.data() + NumSections * SectionHeaderSize;
    std::string Name = "/" + std::to_string(PayloadNameOff);
    if (Name.size() > COFF::NameSize)
      return makeError("the string table is too large for another section "
                       "name");
    std::memcpy(H, Name.data(), Name.size());
    endian::write32le(H + SecSizeOfRawData,
                      static_cast<uint32_t>(Payloads.size()));
    endian::write32le(H + SecPointerToRawData,
                      static_cast<uint32_t>(Place(Payloads)));
    endian::write32le(H + SecCharacteristics,
                      COFF::IMAGE_SCN_ALIGN_8BYTES | COFF::IMAGE_SCN_LNK_REMOVE |
                          COFF::IMAGE_SCN_MEM_DISCARDABLE);
  }
  const uint64_t NewSymTabOff = Place(Symbols);
  // The string table follows the symbol table directly.
  const uint64_t StrAt = NewSymTabOff + Symbols.size();
  Off = StrAt + Strings.size();
  if (Off > UINT32_MAX)
    return makeError("the rewritten object would exceed 4 GiB");

  Out.assign(Off, 0);
  uint8_t *O = reinterpret_cast<uint8_t *>(Out.data());
  std::memcpy(O, Base, FileHeaderSize);
  endian::write16le(O + 2, static_cast<uint16_t>(NewNumSections));
  endian::write32le(O + 8, static_cast<uint32_t>(NewSymTabOff));
  endian::write32le(O + 12, static_cast<uint32_t>(Symbols.size() / SymbolSize));
  std::memcpy(O + FileHeaderSize, Headers.data(), Headers.size());
  for (const auto &[At, B] : Blobs)
    if (!B->empty())
      std::memcpy(O + At, B->data(), B->size());
  std::memcpy(O + StrAt, Strings.data(), Strings.size());
  return Error::success();
}

} // namespace ready
} // namespace kpack
