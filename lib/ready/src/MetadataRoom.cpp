//===- MetadataRoom.cpp - Extra room for the HIPK metadata ----------------===//

#include "kpack/MetadataRoom.h"

#include "kpack/KpackReady.h"

#include "llvm/BinaryFormat/COFF.h"
#include "llvm/BinaryFormat/ELF.h"
#include "llvm/Support/Endian.h"
#include "llvm/Support/MathExtras.h"

#include <cstring>

using namespace llvm;

namespace kpack {
namespace link {

std::vector<uint8_t> makeMetadataRoomObject(uint64_t Size) {
  Size = alignTo(Size, ready::RecordAlign);
  // Layout: header | section bytes | .shstrtab | section headers.
  std::string Names;
  Names.push_back('\0');
  uint32_t RefName = Names.size();
  Names += ready::KeySectionName.str();
  Names.push_back('\0');
  uint32_t StrtabName = Names.size();
  Names += ".shstrtab";
  Names.push_back('\0');

  const uint64_t DataOff = sizeof(ELF::Elf64_Ehdr);
  const uint64_t NamesOff = DataOff + Size;
  const uint64_t HeadersOff = alignTo(NamesOff + Names.size(), 8);
  std::vector<uint8_t> Out(HeadersOff + 3 * sizeof(ELF::Elf64_Shdr), 0);

  ELF::Elf64_Ehdr H;
  std::memset(&H, 0, sizeof(H));
  std::memcpy(H.e_ident, ELF::ElfMagic, 4);
  H.e_ident[ELF::EI_CLASS] = ELF::ELFCLASS64;
  H.e_ident[ELF::EI_DATA] = ELF::ELFDATA2LSB;
  H.e_ident[ELF::EI_VERSION] = ELF::EV_CURRENT;
  H.e_ident[ELF::EI_OSABI] = ELF::ELFOSABI_NONE;
  H.e_type = ELF::ET_REL;
  H.e_machine = ELF::EM_X86_64;
  H.e_version = ELF::EV_CURRENT;
  H.e_shoff = HeadersOff;
  H.e_ehsize = sizeof(ELF::Elf64_Ehdr);
  H.e_shentsize = sizeof(ELF::Elf64_Shdr);
  H.e_shnum = 3;
  H.e_shstrndx = 2;
  std::memcpy(Out.data(), &H, sizeof(H));
  std::memcpy(Out.data() + NamesOff, Names.data(), Names.size());

  ELF::Elf64_Shdr S[3];
  std::memset(S, 0, sizeof(S));
  S[1].sh_name = RefName;
  S[1].sh_type = ELF::SHT_PROGBITS;
  S[1].sh_flags = ELF::SHF_ALLOC | ELF::SHF_GNU_RETAIN;
  S[1].sh_offset = DataOff;
  S[1].sh_size = Size;
  S[1].sh_addralign = ready::RecordAlign;
  S[2].sh_name = StrtabName;
  S[2].sh_type = ELF::SHT_STRTAB;
  S[2].sh_offset = NamesOff;
  S[2].sh_size = Names.size();
  S[2].sh_addralign = 1;
  std::memcpy(Out.data() + HeadersOff, S, sizeof(S));
  return Out;
}

std::vector<uint8_t> makeCoffMetadataRoomObject(uint64_t Size) {
  namespace endian = llvm::support::endian;
  Size = alignTo(Size, ready::RecordAlign);
  // Layout: file header | 2 section headers | .kpackrf bytes | .drectve
  // bytes | symbol table (1 symbol) | string table (its long name).
  const std::string Directive =
      std::string(" /include:") + CoffMetadataRoomSymbol;
  constexpr uint64_t HeaderSize = 20, SectionHeaderSize = 40, SymbolSize = 18;
  const uint64_t DataOff = HeaderSize + 2 * SectionHeaderSize;
  const uint64_t DirectiveOff = DataOff + Size;
  const uint64_t SymOff = DirectiveOff + Directive.size();
  const uint64_t StrOff = SymOff + SymbolSize;
  const uint32_t StrSize = 4 + sizeof(CoffMetadataRoomSymbol);
  std::vector<uint8_t> Out(StrOff + StrSize, 0);
  uint8_t *P = Out.data();
  endian::write16le(P, COFF::IMAGE_FILE_MACHINE_AMD64);
  endian::write16le(P + 2, 2);                        // NumberOfSections
  endian::write32le(P + 8, static_cast<uint32_t>(SymOff));
  endian::write32le(P + 12, 1);                       // NumberOfSymbols
  auto Section = [&](unsigned I, StringRef Name, uint64_t Bytes,
                     uint64_t RawOff, uint32_t Flags) {
    uint8_t *S = P + HeaderSize + I * SectionHeaderSize;
    std::memcpy(S, Name.data(), Name.size()); // at most 8 characters
    endian::write32le(S + 16, static_cast<uint32_t>(Bytes)); // SizeOfRawData
    endian::write32le(S + 20, static_cast<uint32_t>(RawOff));
    endian::write32le(S + 36, Flags);
  };
  Section(0, ready::CoffKeySectionName, Size, DataOff,
          COFF::IMAGE_SCN_CNT_INITIALIZED_DATA | COFF::IMAGE_SCN_MEM_READ |
              COFF::IMAGE_SCN_ALIGN_8BYTES);
  Section(1, ".drectve", Directive.size(), DirectiveOff,
          COFF::IMAGE_SCN_LNK_INFO | COFF::IMAGE_SCN_LNK_REMOVE |
              COFF::IMAGE_SCN_ALIGN_1BYTES);
  std::memcpy(P + DirectiveOff, Directive.data(), Directive.size());
  // The symbol: a long name (string table offset 4), value 0 in section 1,
  // external.
  uint8_t *Sym = P + SymOff;
  endian::write32le(Sym + 4, 4);
  endian::write16le(Sym + 12, 1);
  Sym[16] = COFF::IMAGE_SYM_CLASS_EXTERNAL;
  endian::write32le(P + StrOff, StrSize);
  std::memcpy(P + StrOff + 4, CoffMetadataRoomSymbol,
              sizeof(CoffMetadataRoomSymbol));
  return Out;
}

} // namespace link
} // namespace kpack
