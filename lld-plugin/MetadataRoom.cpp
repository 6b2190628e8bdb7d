//===- MetadataRoom.cpp - Extra room for the HIPK metadata ----------------===//

#include "MetadataRoom.h"

#include "kpack/KpackReady.h"

#include "llvm/BinaryFormat/ELF.h"
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

} // namespace link
} // namespace kpack
