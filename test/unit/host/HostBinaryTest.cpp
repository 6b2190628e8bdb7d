//===- HostBinaryTest.cpp - kpack/HostBinary.h on malformed input ---------===//
//
// Real binaries (all pointer styles, CCOB, multi-TU) are covered by the lit
// tests in test/lit/inspect and test/lit/convert; these check that bad input
// is an error, not a crash, and how a hand-made R_X86_64_64 wrapper pointer
// resolves (its defined/undefined/other-type variants are hard to link).

#include "kpack/HostBinary.h"

#include "llvm/BinaryFormat/ELF.h"

#include "gtest/gtest.h"

#include <cstring>
#include <string>

using namespace kpack;

namespace {

llvm::Expected<HostBinary> analyze(const std::string &Bytes) {
  return analyzeHostBinary(llvm::MemoryBufferRef(Bytes, "test"));
}

/// The analysis error's message, or "" if it succeeded.
std::string failure(const std::string &Bytes) {
  auto H = analyze(Bytes);
  return H ? "" : toString(H.takeError());
}

std::string elfHeader(uint8_t Class, uint16_t Machine, uint16_t Type) {
  llvm::ELF::Elf64_Ehdr H;
  std::memset(&H, 0, sizeof(H));
  std::memcpy(H.e_ident,
              "\x7f"
              "ELF",
              4);
  H.e_ident[llvm::ELF::EI_CLASS] = Class;
  H.e_ident[llvm::ELF::EI_DATA] = llvm::ELF::ELFDATA2LSB;
  H.e_ident[llvm::ELF::EI_VERSION] = 1;
  H.e_type = Type;
  H.e_machine = Machine;
  H.e_version = 1;
  H.e_ehsize = sizeof(H);
  return std::string(reinterpret_cast<const char *>(&H), sizeof(H));
}

TEST(HostBinary, NotAnElfFile) {
  EXPECT_EQ(failure("hello, world"), "not an ELF file");
  EXPECT_EQ(failure(""), "not an ELF file");
}

TEST(HostBinary, Elf32IsRejected) {
  EXPECT_NE(failure(elfHeader(llvm::ELF::ELFCLASS32, llvm::ELF::EM_X86_64,
                              llvm::ELF::ET_DYN)),
            "");
}

TEST(HostBinary, OtherMachinesAreRejected) {
  EXPECT_NE(failure(elfHeader(llvm::ELF::ELFCLASS64, llvm::ELF::EM_AARCH64,
                              llvm::ELF::ET_DYN)),
            "");
}

TEST(HostBinary, EmptyElfHasNoDeviceCode) {
  auto H = analyze(elfHeader(llvm::ELF::ELFCLASS64, llvm::ELF::EM_X86_64,
                             llvm::ELF::ET_DYN));
  ASSERT_TRUE(static_cast<bool>(H)) << toString(H.takeError());
  EXPECT_FALSE(H->hasDeviceCode());
  EXPECT_TRUE(H->Wrappers.empty());
  EXPECT_FALSE(H->Fatbin.has_value());
}

TEST(HostBinary, TruncatedSectionTableIsAnError) {
  std::string Bytes =
      elfHeader(llvm::ELF::ELFCLASS64, llvm::ELF::EM_X86_64, llvm::ELF::ET_DYN);
  auto *H = reinterpret_cast<llvm::ELF::Elf64_Ehdr *>(Bytes.data());
  H->e_shoff = 0x1000; // beyond the end of the file
  H->e_shnum = 4;
  H->e_shentsize = sizeof(llvm::ELF::Elf64_Shdr);
  EXPECT_NE(failure(Bytes), "");
}

/// A shared object whose one wrapper pointer (at 0x3008) is relocated by an
/// Elf64_Rela of type RelType against .dynsym symbol SymIndex (1: defined at
/// 0x1000, 2: undefined) with addend 0x40.
std::string symbolRelocatedDso(uint32_t RelType, uint32_t SymIndex) {
  using namespace llvm::ELF;
  std::string Bytes = elfHeader(ELFCLASS64, EM_X86_64, ET_DYN);
  const char ShStr[] = "\0.hipFatBinSegment\0.dynsym\0.rela.dyn\0.shstrtab";
  auto Append = [&](const void *P, size_t N) {
    uint64_t Off = Bytes.size();
    Bytes.append(static_cast<const char *>(P), N);
    return Off;
  };
  uint8_t Wrapper[24] = {};
  std::memcpy(Wrapper, &HipfMagic, 4);
  uint64_t WrapperOff = Append(Wrapper, sizeof(Wrapper));
  Elf64_Sym Syms[3] = {};
  Syms[1].st_value = 0x1000;
  Syms[1].st_shndx = 1;
  Syms[1].st_info = (STB_GLOBAL << 4) | STT_OBJECT;
  Syms[2].st_info = (STB_GLOBAL << 4) | STT_OBJECT;
  uint64_t SymOff = Append(Syms, sizeof(Syms));
  Elf64_Rela Rela = {};
  Rela.r_offset = 0x3008;
  Rela.setSymbolAndType(SymIndex, RelType);
  Rela.r_addend = 0x40;
  uint64_t RelaOff = Append(&Rela, sizeof(Rela));
  uint64_t StrOff = Append(ShStr, sizeof(ShStr));
  Elf64_Shdr Shdrs[5] = {};
  Shdrs[1] = {
      1, SHT_PROGBITS, SHF_ALLOC | SHF_WRITE, 0x3000, WrapperOff, 24, 0, 0, 8,
      0};
  Shdrs[2] = {19,           SHT_DYNSYM, SHF_ALLOC, 0x100, SymOff,
              sizeof(Syms), 0,          1,         8,     sizeof(Elf64_Sym)};
  Shdrs[3] = {27,           SHT_RELA, SHF_ALLOC, 0x200, RelaOff,
              sizeof(Rela), 2,        0,         8,     sizeof(Elf64_Rela)};
  Shdrs[4] = {37, SHT_STRTAB, 0, 0, StrOff, sizeof(ShStr), 0, 0, 1, 0};
  uint64_t ShOff = Append(Shdrs, sizeof(Shdrs));
  auto *H = reinterpret_cast<Elf64_Ehdr *>(Bytes.data());
  H->e_shoff = ShOff;
  H->e_shnum = 5;
  H->e_shentsize = sizeof(Elf64_Shdr);
  H->e_shstrndx = 4;
  return Bytes;
}

TEST(HostBinary, AbsoluteRelocationAgainstADefinedSymbolResolves) {
  auto H = analyze(symbolRelocatedDso(llvm::ELF::R_X86_64_64, 1));
  ASSERT_TRUE(static_cast<bool>(H)) << toString(H.takeError());
  ASSERT_EQ(H->Wrappers.size(), 1u);
  const WrapperInfo &W = H->Wrappers[0];
  EXPECT_EQ(W.Style, PointerStyle::RelaSymbol);
  EXPECT_EQ(W.SymbolValue, 0x1000u);
  EXPECT_EQ(W.Target, 0x1040u); // symbol + addend
  EXPECT_EQ(std::string(pointerStyleName(W.Style)), "rela-symbol");
}

TEST(HostBinary, AbsoluteRelocationAgainstAnUndefinedSymbolIsAnError) {
  EXPECT_EQ(failure(symbolRelocatedDso(llvm::ELF::R_X86_64_64, 2)),
            "wrapper pointer at 0x3008 has an R_X86_64_64 against a symbol "
            "not defined in this binary");
}

TEST(HostBinary, OtherDynamicRelocationTypesAreAnError) {
  EXPECT_EQ(failure(symbolRelocatedDso(llvm::ELF::R_X86_64_GLOB_DAT, 1)),
            "wrapper pointer at 0x3008 has an unsupported dynamic relocation "
            "(type 6)");
}

} // namespace
