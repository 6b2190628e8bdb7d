//===- CoffHostBinary.cpp - HIP device code in PE/COFF files --------------===//
//
// analyzeHostBinary for Windows: PE32+ x86-64 images through LLVM's
// COFFObjectFile (validation, names) and PeImage.h (bounds-checked headers,
// base relocations), COFF objects through COFFObjectFile and their
// relocation tables (read here with bounds checks). See
// kpack/COFF/CoffHostBinary.h.
//
//===----------------------------------------------------------------------===//

#include "PeImage.h"

#include "kpack/COFF/CoffHostBinary.h"
#include "kpack/LLVMError.h"
#include "kpack/Quote.h"
#include "kpack/Wrapper.h"

#include "llvm/ADT/StringExtras.h"
#include "llvm/BinaryFormat/COFF.h"
#include "llvm/BinaryFormat/Magic.h"
#include "llvm/Object/COFF.h"
#include "llvm/Support/Endian.h"
#include "llvm/Support/MathExtras.h"

#include <algorithm>
#include <cstring>
#include <map>

using namespace llvm;
using namespace llvm::object;
using namespace kpack;
namespace endian = llvm::support::endian;

std::string pe::hex(uint64_t V) { return "0x" + utohexstr(V, /*LowerCase=*/true); }

using pe::hex;

//===----------------------------------------------------------------------===//
// PeImage.h
//===----------------------------------------------------------------------===//

int pe::Image::sectionOfRva(uint64_t Rva) const {
  for (size_t I = 0; I < Sections.size(); ++I) {
    uint64_t VA = Sections[I].VirtualAddress;
    if (Rva >= VA && Rva - VA < extent(Sections[I]))
      return static_cast<int>(I);
  }
  return -1;
}

std::optional<uint64_t> pe::Image::rvaToOffset(uint64_t Rva, uint64_t Size,
                                               uint64_t *Avail) const {
  int Idx = sectionOfRva(Rva);
  if (Idx < 0)
    return std::nullopt;
  const coff_section &S = Sections[Idx];
  uint64_t Rel = Rva - S.VirtualAddress;
  uint64_t Backed = fileBacked(S);
  if (Rel > Backed || Size > Backed - Rel)
    return std::nullopt;
  uint64_t Off = uint64_t(S.PointerToRawData) + Rel;
  if (Off > File.size() || Backed - Rel > File.size() - Off)
    return std::nullopt;
  if (Avail)
    *Avail = Backed - Rel;
  return Off;
}

static bool inFile(ArrayRef<uint8_t> File, uint64_t Off, uint64_t Size) {
  return Off <= File.size() && Size <= File.size() - Off;
}

/// The first PE headers of File into I, through the optional header's
/// magic: the MZ header, e_lfanew, the signature, the machine (x86-64) and
/// the magic (PE32+). What readImage and isImageHead share.
static Error readHead(ArrayRef<uint8_t> File, pe::Image &I) {
  using namespace pe;
  if (File.size() < 0x40 || File[0] != 'M' || File[1] != 'Z')
    return makeError("not a PE image (no MZ header)");
  I.PeOffset = endian::read32le(File.data() + 0x3c);
  if (!inFile(File, I.PeOffset, 4 + FileHeaderSize))
    return makeError("truncated PE header (e_lfanew " + hex(I.PeOffset) +
                     " is past the end of the file)");
  if (std::memcmp(File.data() + I.PeOffset, "PE\0\0", 4) != 0)
    return makeError("not a PE image (no PE signature at " + hex(I.PeOffset) +
                     ")");
  I.FileHeaderOffset = I.PeOffset + 4;
  std::memcpy(&I.FileHdr, File.data() + I.FileHeaderOffset, FileHeaderSize);
  if (I.FileHdr.Machine != COFF::IMAGE_FILE_MACHINE_AMD64)
    return makeError("unsupported PE machine " + hex(I.FileHdr.Machine) +
                     " (only x86-64 host binaries are supported)");
  I.OptOffset = I.FileHeaderOffset + FileHeaderSize;
  uint64_t OptSize = I.FileHdr.SizeOfOptionalHeader;
  if (OptSize < 2 || !inFile(File, I.OptOffset, OptSize))
    return makeError("truncated PE optional header");
  uint16_t Magic = endian::read16le(File.data() + I.OptOffset);
  if (Magic != COFF::PE32Header::PE32_PLUS)
    return makeError("unsupported PE optional header magic " + hex(Magic) +
                     " (only PE32+ images are supported)");
  return Error::success();
}

bool pe::isImageHead(ArrayRef<uint8_t> Head) {
  Image I;
  if (Error E = readHead(Head, I)) {
    consumeError(std::move(E));
    return false;
  }
  return I.FileHdr.Characteristics & COFF::IMAGE_FILE_EXECUTABLE_IMAGE;
}

Expected<pe::Image> pe::readImage(ArrayRef<uint8_t> File) {
  Image I;
  I.File = File;
  if (Error E = readHead(File, I))
    return E;
  uint64_t OptSize = I.FileHdr.SizeOfOptionalHeader;
  if (OptSize < OptionalHeaderSize)
    return makeError("truncated PE optional header");
  std::memcpy(&I.Opt, File.data() + I.OptOffset, OptionalHeaderSize);
  uint64_t NDirs = I.Opt.NumberOfRvaAndSize;
  if (NDirs > (OptSize - OptionalHeaderSize) / DataDirectorySize)
    return makeError("the PE data directories (" + Twine(NDirs) +
                     ") do not fit in the optional header");
  for (uint64_t D = 0; D < NDirs; ++D) {
    data_directory Dir;
    std::memcpy(&Dir,
                File.data() + I.OptOffset + OptionalHeaderSize +
                    D * DataDirectorySize,
                DataDirectorySize);
    I.Dirs.push_back(Dir);
  }
  I.SectionTableOffset = I.OptOffset + OptSize;
  uint64_t N = I.FileHdr.NumberOfSections;
  if (!inFile(File, I.SectionTableOffset, N * SectionHeaderSize))
    return makeError("the section table (" + Twine(N) +
                     " sections) runs past the end of the file");
  for (uint64_t S = 0; S < N; ++S) {
    coff_section Sec;
    std::memcpy(&Sec, File.data() + I.SectionTableOffset + S * SectionHeaderSize,
                SectionHeaderSize);
    I.Sections.push_back(Sec);
  }
  // Names; a long name "/<decimal>" is an offset into the string table
  // after the symbol table (mingw images keep one for debug sections).
  uint64_t StrTab = uint64_t(I.FileHdr.PointerToSymbolTable) +
                    uint64_t(I.FileHdr.NumberOfSymbols) * COFF::Symbol16Size;
  uint64_t StrSize = 0;
  if (I.FileHdr.PointerToSymbolTable && inFile(File, StrTab, 4))
    StrSize = std::min<uint64_t>(endian::read32le(File.data() + StrTab),
                                 File.size() - StrTab);
  for (const coff_section &Sec : I.Sections) {
    StringRef Raw(Sec.Name, strnlen(Sec.Name, COFF::NameSize));
    uint64_t Off = 0;
    if (Raw.starts_with("/") && !Raw.drop_front().getAsInteger(10, Off)) {
      if (Off >= 4 && Off < StrSize) {
        StringRef Table(reinterpret_cast<const char *>(File.data()) + StrTab,
                        StrSize);
        I.Names.push_back(Table.drop_front(Off).split('\0').first.str());
      } else {
        I.Names.push_back("");
      }
      continue;
    }
    I.Names.push_back(Raw.str());
  }
  return I;
}

Expected<bool> pe::holdsDeviceCode(ArrayRef<uint8_t> File) {
  auto I = readImage(File);
  if (!I)
    return I.takeError();
  for (size_t S = 0; S < I->Sections.size(); ++S)
    if ((I->Names[S] == CoffFatbinSection ||
         I->Names[S] == CoffWrapperSection) &&
        I->Sections[S].SizeOfRawData != 0)
      return true;
  return false;
}

Error pe::checkLayout(const Image &I) {
  const auto &O = I.Opt;
  uint64_t FA = O.FileAlignment, SA = O.SectionAlignment;
  if (!isPowerOf2_64(FA) || !isPowerOf2_64(SA) || FA > SA || FA > 0x10000)
    return makeError("bad alignments: FileAlignment " + hex(FA) +
                     ", SectionAlignment " + hex(SA));
  if (O.SizeOfHeaders > I.File.size() || O.SizeOfHeaders < I.sectionTableEnd())
    return makeError("SizeOfHeaders " + hex(O.SizeOfHeaders) +
                     " does not cover the section table or exceeds the file");
  // The loader maps the headers, then every section right after the one
  // before it: each section starts where the previous one's extent ends,
  // rounded up to SectionAlignment (the first where the headers end). A gap
  // or an overlap is a malformed image.
  uint64_t PrevEnd = alignTo(O.SizeOfHeaders, SA);
  std::vector<std::pair<uint64_t, uint64_t>> Raw; // [begin, end)
  for (size_t S = 0; S < I.Sections.size(); ++S) {
    const coff_section &Sec = I.Sections[S];
    std::string What =
        "section " + Twine(S + 1).str() + " (" + quoteInput(I.Names[S]) + ")";
    uint64_t VA = Sec.VirtualAddress;
    if (VA % SA != 0)
      return makeError(What + " address " + hex(VA) +
                       " is not a multiple of the section alignment");
    if (VA != PrevEnd)
      return makeError(What + " at " + hex(VA) + " does not follow " +
                       (S ? "the previous section" : "the headers") +
                       " (expected " + hex(PrevEnd) +
                       "): sections must be contiguous in memory");
    PrevEnd = alignTo(VA + Image::extent(Sec), SA);
    if (Sec.SizeOfRawData == 0)
      continue;
    uint64_t Begin = Sec.PointerToRawData, Size = Sec.SizeOfRawData;
    if (!inFile(I.File, Begin, Size))
      return makeError("the raw data of " + What + " (" + hex(Begin) + ", " +
                       hex(Size) + " bytes) runs past the end of the file");
    if (Begin < O.SizeOfHeaders)
      return makeError("the raw data of " + What + " overlaps the headers");
    Raw.push_back({Begin, Begin + Size});
  }
  if (O.SizeOfImage < PrevEnd)
    return makeError("SizeOfImage " + hex(O.SizeOfImage) +
                     " does not cover the sections (they end at " +
                     hex(PrevEnd) + ")");
  llvm::sort(Raw);
  for (size_t R = 1; R < Raw.size(); ++R)
    if (Raw[R].first < Raw[R - 1].second)
      return makeError("the raw data of two sections overlap at file offset " +
                       hex(Raw[R].first));
  auto Relocs = readBaseRelocs(I);
  if (!Relocs)
    return Relocs.takeError();
  for (const BaseReloc &R : *Relocs)
    if (R.Rva + 8 > O.SizeOfImage)
      return makeError("base relocation at RVA " + hex(R.Rva) +
                       " is outside the image");
  return Error::success();
}

Expected<std::vector<pe::BaseReloc>> pe::readBaseRelocs(const Image &I) {
  std::vector<BaseReloc> Out;
  const data_directory *D = I.dir(COFF::BASE_RELOCATION_TABLE);
  if (!D || D->Size == 0)
    return Out;
  uint64_t Avail = 0;
  auto Off = I.rvaToOffset(D->RelativeVirtualAddress, D->Size, &Avail);
  if (!Off)
    return makeError("the base relocation directory (RVA " +
                     hex(D->RelativeVirtualAddress) + ", " + hex(D->Size) +
                     " bytes) is not inside a section's file data");
  uint64_t Pos = 0, End = D->Size;
  while (Pos < End) {
    if (End - Pos < 8)
      return makeError("base relocation block at directory offset " +
                       hex(Pos) + " is truncated");
    const uint8_t *B = I.File.data() + *Off + Pos;
    uint32_t Page = endian::read32le(B), Size = endian::read32le(B + 4);
    if (Size < 8 || Size % 2 != 0 || Size > End - Pos)
      return makeError("base relocation block at directory offset " +
                       hex(Pos) + " has size " + hex(Size) +
                       " outside the directory");
    for (uint64_t E = 8; E < Size; E += 2) {
      uint16_t V = endian::read16le(B + E);
      uint8_t Type = V >> 12;
      if (Type == COFF::IMAGE_REL_BASED_ABSOLUTE)
        continue;
      Out.push_back({uint64_t(Page) + (V & 0xfff), Type, *Off + Pos + E});
    }
    Pos += Size;
  }
  return Out;
}

Expected<std::vector<pe::DebugEntry>> pe::readDebugDirectory(const Image &I) {
  std::vector<DebugEntry> Out;
  const data_directory *D = I.dir(COFF::DEBUG_DIRECTORY);
  if (!D || D->Size == 0)
    return Out;
  auto Off = I.rvaToOffset(D->RelativeVirtualAddress, D->Size);
  if (!Off || D->Size % DebugDirectorySize != 0)
    return makeError("the debug directory (RVA " +
                     hex(D->RelativeVirtualAddress) + ", " + hex(D->Size) +
                     " bytes) is malformed or not in a section's file data");
  for (uint64_t P = 0; P < D->Size; P += DebugDirectorySize) {
    DebugEntry E;
    std::memcpy(&E.Entry, I.File.data() + *Off + P, DebugDirectorySize);
    E.FileOffset = *Off + P;
    Out.push_back(E);
  }
  return Out;
}

//===----------------------------------------------------------------------===//
// Analysis
//===----------------------------------------------------------------------===//

bool kpack::isCoffFile(StringRef Bytes) {
  if (Bytes.starts_with("MZ"))
    return true;
  file_magic M = identify_magic(Bytes);
  if (M != file_magic::coff_object)
    return false;
  // identify_magic accepts every machine; only x86-64 objects are ours (a
  // bigobj header carries its machine at offset 6).
  if (Bytes.size() >= 2 &&
      endian::read16le(Bytes.data()) == COFF::IMAGE_FILE_MACHINE_AMD64)
    return true;
  return Bytes.size() >= 8 && endian::read16le(Bytes.data()) == 0 &&
         endian::read16le(Bytes.data() + 2) == 0xffff &&
         endian::read16le(Bytes.data() + 6) == COFF::IMAGE_FILE_MACHINE_AMD64;
}

namespace {

enum class Role { None, Fatbin, Wrappers, KpackRef };

Role roleOf(StringRef Name) {
  if (Name == CoffFatbinSection || Name == HipFatbinSection)
    return Role::Fatbin;
  if (Name == CoffWrapperSection || Name == FatbinWrapperSection)
    return Role::Wrappers;
  if (Name == CoffKpackRefSection || Name == KpackRefSection)
    return Role::KpackRef;
  return Role::None;
}

std::optional<SectionSpan> *slotFor(HostBinary &Host, Role R) {
  switch (R) {
  case Role::Fatbin:
    return &Host.Fatbin;
  case Role::Wrappers:
    return &Host.WrapperSection;
  case Role::KpackRef:
    return &Host.KpackRefSection;
  case Role::None:
    break;
  }
  return nullptr;
}

const char *roleName(Role R) {
  switch (R) {
  case Role::Fatbin:
    return ".hip_fat";
  case Role::Wrappers:
    return ".hipFatB";
  case Role::KpackRef:
    return ".kpackrf";
  case Role::None:
    break;
  }
  return "?";
}

void readWrappers(ArrayRef<uint8_t> File, HostBinary &Host, uint64_t Count) {
  const SectionSpan &WS = *Host.WrapperSection;
  for (uint64_t K = 0; K < Count; ++K) {
    const uint8_t *P = File.data() + WS.FileOffset + K * WrapperSize;
    WrapperInfo W;
    W.Address = WS.Address + K * WrapperSize;
    W.FileOffset = WS.FileOffset + K * WrapperSize;
    W.Magic = endian::read32le(P);
    W.Version = endian::read32le(P + 4);
    W.Target = endian::read64le(P + 8);
    W.Reserved1 = endian::read64le(P + 16);
    Host.Wrappers.push_back(W);
  }
}

void readMetadataAt(ArrayRef<uint8_t> File, uint64_t Off, uint64_t Avail,
                    WrapperInfo &W) {
  KpackMetadata M;
  if (Status S = decodeKpackMetadata(
          File.data() + Off, std::min<uint64_t>(Avail, MaxKpackMetadataSize),
          M)) {
    W.RefError = S.message();
    return;
  }
  W.Ref = std::move(M);
}

Expected<HostBinary> analyzeImage(MemoryBufferRef Buf,
                                  const AnalyzeOptions &Opts) {
  ArrayRef<uint8_t> File(
      reinterpret_cast<const uint8_t *>(Buf.getBufferStart()),
      Buf.getBufferSize());
  auto I = pe::readImage(File);
  if (!I)
    return I.takeError();
  // LLVM's reader validates the rest (symbol and string tables, import,
  // export, debug, TLS and load-config directories).
  auto Obj = COFFObjectFile::create(Buf);
  if (!Obj)
    return makeError("malformed PE image: " + toString(Obj.takeError()));
  HostBinary Host;
  Host.Format = HostFormat::Coff;
  Host.Kind = (I->FileHdr.Characteristics & COFF::IMAGE_FILE_DLL)
                  ? HostFileKind::SharedObject
                  : HostFileKind::Executable;
  Host.ImageBase = I->Opt.ImageBase;
  const uint64_t Base = Host.ImageBase;

  std::vector<Role> Roles(I->Sections.size(), Role::None);
  for (size_t S = 0; S < I->Sections.size(); ++S) {
    Role R = roleOf(I->Names[S]);
    if (R == Role::None)
      continue;
    auto *Slot = slotFor(Host, R);
    if (*Slot)
      return makeError(std::string("more than one ") + roleName(R) +
                       " section");
    const coff_section &Sec = I->Sections[S];
    uint64_t Backed = pe::Image::fileBacked(Sec);
    if (Backed && !inFile(File, Sec.PointerToRawData, Backed))
      return makeError(std::string("section ") + roleName(R) +
                       " runs past the end of the file");
    *Slot = SectionSpan{S + 1, Base + Sec.VirtualAddress, Sec.PointerToRawData,
                        Backed};
    Roles[S] = R;
  }

  if (Host.Fatbin && Host.Fatbin->Size) {
    ArrayRef<uint8_t> Bytes =
        File.slice(Host.Fatbin->FileOffset, Host.Fatbin->Size);
    if (Error E = summarizeBundleSection(Bytes, *Host.Fatbin, ".hip_fat",
                                         Host.Bundles, Opts))
      return E;
  }
  if (!Host.WrapperSection)
    return Host;
  const coff_section &WSec = I->Sections[Host.WrapperSection->Index - 1];
  uint64_t WSize = WSec.VirtualSize ? uint64_t(WSec.VirtualSize)
                                    : uint64_t(WSec.SizeOfRawData);
  if (WSize % WrapperSize != 0)
    return makeError(".hipFatB size " + hex(WSize) +
                     " is not a multiple of 24");
  if (Host.WrapperSection->Size < WSize)
    return makeError(".hipFatB has " + hex(WSize) + " bytes but only " +
                     hex(Host.WrapperSection->Size) + " in the file");
  Host.WrapperSection->Size = WSize;
  readWrappers(File, Host, WSize / WrapperSize);

  auto Relocs = pe::readBaseRelocs(*I);
  if (!Relocs)
    return Relocs.takeError();
  std::map<uint64_t, uint8_t> RelocAt;
  for (const pe::BaseReloc &R : *Relocs)
    RelocAt[R.Rva] = R.Type;
  for (WrapperInfo &W : Host.Wrappers) {
    auto It = RelocAt.find(W.Address - Base + 8);
    W.Style = It != RelocAt.end() && It->second == COFF::IMAGE_REL_BASED_DIR64
                  ? PointerStyle::CoffDir64
                  : PointerStyle::AbsoluteInPlace;
    if (W.isHIPF()) {
      W.BundleIndex = Host.bundleAt(W.Target);
    } else if (W.isHIPK()) {
      uint64_t Avail = 0;
      std::optional<uint64_t> Off;
      if (W.Target >= Base)
        Off = I->rvaToOffset(W.Target - Base, 1, &Avail);
      if (!Off)
        W.RefError = "pointer " + hex(W.Target) +
                     " is not in a section's file data";
      else
        readMetadataAt(File, *Off, Avail, W);
    }
  }
  return Host;
}

/// COFF objects: sections at address 0 (addresses are section offsets, as
/// for ELF objects); wrapper pointers resolve through IMAGE_REL_AMD64_ADDR64
/// relocations (implicit addend in place).
Expected<HostBinary> analyzeObject(MemoryBufferRef Buf,
                                   const AnalyzeOptions &Opts) {
  auto Obj = COFFObjectFile::create(Buf);
  if (!Obj)
    return makeError("malformed COFF object: " + toString(Obj.takeError()));
  const COFFObjectFile &O = **Obj;
  ArrayRef<uint8_t> File(
      reinterpret_cast<const uint8_t *>(Buf.getBufferStart()),
      Buf.getBufferSize());
  HostBinary Host;
  Host.Format = HostFormat::Coff;
  Host.Kind = HostFileKind::Relocatable;
  std::vector<const coff_section *> Secs;
  for (uint32_t S = 1; S <= O.getNumberOfSections(); ++S) {
    auto Sec = O.getSection(S);
    if (!Sec)
      return Sec.takeError();
    Secs.push_back(*Sec);
    auto Name = O.getSectionName(*Sec);
    if (!Name)
      return Name.takeError();
    Role R = roleOf(*Name);
    if (R == Role::None)
      continue;
    auto *Slot = slotFor(Host, R);
    if (*Slot)
      return makeError(std::string("more than one ") + roleName(R) +
                       " section");
    const coff_section &C = **Sec;
    uint64_t Size = (C.Characteristics & COFF::IMAGE_SCN_CNT_UNINITIALIZED_DATA)
                        ? 0
                        : uint64_t(C.SizeOfRawData);
    if (Size && !inFile(File, C.PointerToRawData, Size))
      return makeError(std::string("section ") + roleName(R) +
                       " runs past the end of the file");
    *Slot = SectionSpan{S, 0, C.PointerToRawData, Size};
  }
  if (Host.Fatbin && Host.Fatbin->Size) {
    ArrayRef<uint8_t> Bytes =
        File.slice(Host.Fatbin->FileOffset, Host.Fatbin->Size);
    if (Error E = summarizeBundleSection(Bytes, *Host.Fatbin, ".hip_fatbin",
                                         Host.Bundles, Opts))
      return E;
  }
  if (!Host.WrapperSection)
    return Host;
  const SectionSpan &WS = *Host.WrapperSection;
  if (WS.Size % WrapperSize != 0)
    return makeError(".hipFatBinSegment size " + hex(WS.Size) +
                     " is not a multiple of 24");
  readWrappers(File, Host, WS.Size / WrapperSize);
  for (WrapperInfo &W : Host.Wrappers) {
    W.Style = PointerStyle::ObjectRelocation;
    W.Target = 0;
  }
  // The relocation table, bounds-checked here (LLVM's accessor trusts it).
  const coff_section &C = *Secs[WS.Index - 1];
  uint64_t NRel = C.NumberOfRelocations, RelOff = C.PointerToRelocations;
  constexpr uint64_t RelSize = sizeof(coff_relocation);
  if (C.hasExtendedRelocations()) {
    if (!inFile(File, RelOff, RelSize))
      return makeError(".hipFatBinSegment relocations run past the end of "
                       "the file");
    NRel = endian::read32le(File.data() + RelOff);
    if (NRel == 0)
      return makeError(".hipFatBinSegment has a bad relocation count");
    RelOff += RelSize;
    --NRel;
  }
  if (NRel && (NRel > File.size() / RelSize ||
               !inFile(File, RelOff, NRel * RelSize)))
    return makeError(".hipFatBinSegment relocations run past the end of the "
                     "file");
  for (uint64_t K = 0; K < NRel; ++K) {
    const uint8_t *P = File.data() + RelOff + K * RelSize;
    uint32_t Offset = endian::read32le(P), SymIdx = endian::read32le(P + 4);
    uint16_t Type = endian::read16le(P + 8);
    if (Type != COFF::IMAGE_REL_AMD64_ADDR64 || Offset % WrapperSize != 8 ||
        Offset >= WS.Size)
      continue;
    WrapperInfo &W = Host.Wrappers[Offset / WrapperSize];
    auto Sym = O.getSymbol(SymIdx);
    if (!Sym)
      return Sym.takeError();
    int32_t SecNum = Sym->getSectionNumber();
    uint64_t Addend = endian::read64le(File.data() + W.FileOffset + 8);
    if ((Host.Fatbin && SecNum == static_cast<int32_t>(Host.Fatbin->Index)) ||
        (Host.KpackRefSection &&
         SecNum == static_cast<int32_t>(Host.KpackRefSection->Index)))
      W.Target = Sym->getValue() + Addend;
  }
  for (WrapperInfo &W : Host.Wrappers) {
    if (W.isHIPF()) {
      W.BundleIndex = Host.bundleAt(W.Target);
    } else if (W.isHIPK()) {
      if (Host.KpackRefSection && W.Target < Host.KpackRefSection->Size)
        readMetadataAt(File, Host.KpackRefSection->FileOffset + W.Target,
                       Host.KpackRefSection->Size - W.Target, W);
      else
        W.RefError = "pointer " + hex(W.Target) + " is not in .rocm_kpack_ref";
    }
  }
  return Host;
}

} // namespace

Expected<HostBinary> kpack::analyzeCoffHostBinary(MemoryBufferRef Image,
                                                  const AnalyzeOptions &Opts) {
  if (Image.getBuffer().starts_with("MZ"))
    return analyzeImage(Image, Opts);
  if (!isCoffFile(Image.getBuffer()))
    return makeError("not a PE/COFF file");
  return analyzeObject(Image, Opts);
}

Error kpack::checkPeImage(MemoryBufferRef Image) {
  ArrayRef<uint8_t> File(
      reinterpret_cast<const uint8_t *>(Image.getBufferStart()),
      Image.getBufferSize());
  auto I = pe::readImage(File);
  if (!I)
    return I.takeError();
  return pe::checkLayout(*I);
}

uint32_t kpack::computePeChecksum(ArrayRef<uint8_t> File,
                                  uint64_t ChecksumOffset) {
  auto Byte = [&](size_t P) -> uint32_t {
    if (P >= File.size() || (P >= ChecksumOffset && P - ChecksumOffset < 4))
      return 0;
    return File[P];
  };
  uint64_t Sum = 0;
  const size_t N = File.size();
  for (size_t P = 0; P < N; P += 2) {
    Sum += Byte(P) | (Byte(P + 1) << 8);
    Sum = (Sum & 0xffff) + (Sum >> 16);
  }
  Sum = (Sum & 0xffff) + (Sum >> 16);
  return static_cast<uint32_t>(Sum + N);
}

Error kpack::refreshPeChecksum(MutableArrayRef<uint8_t> Image) {
  auto I = pe::readImage(Image);
  if (!I)
    return I.takeError();
  if (I->Opt.CheckSum == 0)
    return Error::success();
  const uint64_t At = I->OptOffset + pe::CheckSumOffset;
  endian::write32le(Image.data() + At, computePeChecksum(Image, At));
  return Error::success();
}
