//===- CodeObject.cpp - Minimal AMDGPU code-object reader -----------------===//

#include "CodeObject.h"

#include <cstring>
#include <vector>

namespace hipstandin {
namespace {

constexpr uint16_t EM_AMDGPU = 224;
constexpr uint32_t SHT_SYMTAB = 2;
constexpr uint32_t SHT_NOTE = 7;
constexpr uint32_t SHT_DYNSYM = 11;
constexpr uint32_t NT_AMDGPU_METADATA = 32;
constexpr size_t EhdrSize = 64, ShdrSize = 64, SymSize = 24;

/// Bounds-checked little-endian view of the file.
class Bytes {
public:
  Bytes(const uint8_t *Data, size_t Size) : Data(Data), Size(Size) {}
  bool has(uint64_t Off, uint64_t Len) const {
    return Off <= Size && Len <= Size - Off;
  }
  template <typename T> T read(uint64_t Off) const {
    T V = 0;
    for (size_t I = 0; I < sizeof(T); ++I)
      V |= static_cast<T>(Data[Off + I]) << (8 * I);
    return V;
  }
  const uint8_t *at(uint64_t Off) const { return Data + Off; }

private:
  const uint8_t *Data;
  size_t Size;
};

struct Section {
  uint32_t Type, Link;
  uint64_t Offset, Size;
};

/// Reads the msgpack string at P (fixstr, str8, str16, str32) within End.
bool readMsgpackString(const uint8_t *P, const uint8_t *End, std::string &Out) {
  if (P >= End)
    return false;
  uint64_t Len, Hdr;
  if ((*P & 0xe0) == 0xa0) {
    Len = *P & 0x1f;
    Hdr = 1;
  } else if (*P == 0xd9 && End - P >= 2) {
    Len = P[1];
    Hdr = 2;
  } else if (*P == 0xda && End - P >= 3) {
    Len = (uint64_t(P[1]) << 8) | P[2];
    Hdr = 3;
  } else {
    return false;
  }
  if (uint64_t(End - P) < Hdr + Len)
    return false;
  Out.assign(reinterpret_cast<const char *>(P + Hdr), Len);
  return true;
}

/// The value of the "amdhsa.target" key in the metadata note's msgpack map.
/// Keys are unique in that map, so finding the encoded key is enough; a full
/// msgpack decoder is not needed.
std::string findTargetInMetadata(const uint8_t *Desc, size_t Size) {
  static const char Key[] = "\xad"
                            "amdhsa.target"; // fixstr of length 13
  const size_t KeyLen = sizeof(Key) - 1;
  const uint8_t *End = Desc + Size;
  for (const uint8_t *P = Desc; size_t(End - P) >= KeyLen; ++P) {
    if (std::memcmp(P, Key, KeyLen) != 0)
      continue;
    std::string Value;
    if (!readMsgpackString(P + KeyLen, End, Value))
      return "";
    static const char Prefix[] = "amdgcn-amd-amdhsa--";
    if (Value.compare(0, sizeof(Prefix) - 1, Prefix) == 0)
      Value.erase(0, sizeof(Prefix) - 1);
    return Value;
  }
  return "";
}

std::string readSymbols(const Bytes &B, const Section &Sym, const Section &Str,
                   std::set<std::string> &Out) {
  if (!B.has(Sym.Offset, Sym.Size) || !B.has(Str.Offset, Str.Size))
    return "symbol table outside the file";
  for (uint64_t Off = 0; Off + SymSize <= Sym.Size; Off += SymSize) {
    uint32_t Name = B.read<uint32_t>(Sym.Offset + Off);
    if (Name == 0)
      continue;
    if (Name >= Str.Size)
      return "symbol name outside the string table";
    const char *S = reinterpret_cast<const char *>(B.at(Str.Offset + Name));
    size_t Len = strnlen(S, Str.Size - Name);
    if (Len == Str.Size - Name)
      return "unterminated symbol name";
    Out.emplace(S, Len);
  }
  return "";
}

void readNotes(const Bytes &B, const Section &Note, CodeObjectInfo &Out) {
  auto Align4 = [](uint64_t V) { return (V + 3) & ~uint64_t(3); };
  uint64_t Off = Note.Offset, End = Note.Offset + Note.Size;
  while (Off + 12 <= End) {
    uint32_t NameSz = B.read<uint32_t>(Off), DescSz = B.read<uint32_t>(Off + 4),
             Type = B.read<uint32_t>(Off + 8);
    uint64_t NameOff = Off + 12, DescOff = NameOff + Align4(NameSz);
    if (DescOff > End || DescSz > End - DescOff)
      return;
    if (Type == NT_AMDGPU_METADATA && NameSz == 7 &&
        std::memcmp(B.at(NameOff), "AMDGPU", 7) == 0 && Out.TargetId.empty())
      Out.TargetId = findTargetInMetadata(B.at(DescOff), DescSz);
    Off = DescOff + Align4(DescSz);
  }
}

} // namespace

std::string readCodeObject(const uint8_t *Data, size_t Size, CodeObjectInfo &Out) {
  Bytes B(Data, Size);
  if (!B.has(0, EhdrSize) || std::memcmp(Data,
                                         "\x7f"
                                         "ELF",
                                         4) != 0)
    return "not an ELF file";
  if (Data[4] != 2 || Data[5] != 1)
    return "not a little-endian ELF64 file";
  if (B.read<uint16_t>(18) != EM_AMDGPU)
    return "not an AMDGPU code object";
  uint64_t ShOff = B.read<uint64_t>(40);
  uint64_t ShNum = B.read<uint16_t>(60);
  if (ShOff == 0)
    return "no section headers";
  if (B.read<uint16_t>(58) != ShdrSize)
    return "unexpected section header size";
  if (!B.has(ShOff, ShdrSize))
    return "section headers outside the file";
  if (ShNum == 0) // extended numbering: the count is in section 0
    ShNum = B.read<uint64_t>(ShOff + 32);
  if (ShNum > (Size - ShOff) / ShdrSize)
    return "section headers outside the file";

  std::vector<Section> Sections(ShNum);
  for (uint64_t I = 0; I < ShNum; ++I) {
    uint64_t H = ShOff + I * ShdrSize;
    Sections[I] = {B.read<uint32_t>(H + 4), B.read<uint32_t>(H + 40),
                   B.read<uint64_t>(H + 24), B.read<uint64_t>(H + 32)};
  }
  for (const Section &S : Sections) {
    if (S.Type == SHT_SYMTAB || S.Type == SHT_DYNSYM) {
      if (S.Link >= ShNum)
        return "symbol table links to a missing string table";
      if (std::string E = readSymbols(B, S, Sections[S.Link], Out.Symbols);
          !E.empty())
        return E;
    } else if (S.Type == SHT_NOTE) {
      if (!B.has(S.Offset, S.Size))
        return "note section outside the file";
      readNotes(B, S, Out);
    }
  }
  return "";
}

} // namespace hipstandin
