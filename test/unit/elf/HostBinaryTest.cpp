//===- HostBinaryTest.cpp - kpack/HostBinary.h on malformed input ---------===//
//
// Real binaries (all pointer styles, CCOB, multi-TU) are covered by the lit
// tests in test/lit/inspect and test/lit/convert; these check that bad input
// is an error, not a crash.

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

} // namespace
