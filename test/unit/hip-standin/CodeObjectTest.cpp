//===- CodeObjectTest.cpp - The stand-in's code-object reader -------------===//

#include "CodeObject.h"

#include <gtest/gtest.h>

#include <cstring>
#include <string>
#include <vector>

using hipstandin::CodeObjectInfo;
using hipstandin::readCodeObject;

namespace {

constexpr uint16_t EM_AMDGPU = 224, EM_X86_64 = 62;

/// Builds a small ELF64 shared object: ELF header, .strtab, .symtab, one
/// NT_AMDGPU_METADATA note, then the section header table (last, so that
/// any truncation cuts it).
struct TestElf {
  std::vector<std::string> Symbols = {"kernel.kd", "kernel", "deviceVar"};
  std::string Target = "amdgcn-amd-amdhsa--gfx90a:xnack+";
  uint16_t Machine = EM_AMDGPU;

  std::vector<uint8_t> Bytes;
  size_t StrtabOffset = 0, SymtabOffset = 0, ShdrOffset = 0;

  template <typename T> void put(size_t Off, T V) {
    for (size_t I = 0; I < sizeof(T); ++I)
      Bytes[Off + I] = uint8_t(uint64_t(V) >> (8 * I));
  }
  size_t append(const void *Data, size_t Size) {
    size_t Off = Bytes.size();
    const uint8_t *P = static_cast<const uint8_t *>(Data);
    Bytes.insert(Bytes.end(), P, P + Size);
    return Off;
  }
  void align(size_t A) { Bytes.resize((Bytes.size() + A - 1) / A * A); }

  std::vector<uint8_t> build() {
    Bytes.assign(64, 0);
    memcpy(Bytes.data(),
           "\x7f"
           "ELF\x02\x01\x01",
           7);
    put<uint16_t>(16, 3); // ET_DYN
    put<uint16_t>(18, Machine);
    put<uint32_t>(20, 1);

    std::string Strtab(1, '\0');
    std::vector<uint32_t> NameOffsets;
    for (const std::string &S : Symbols) {
      NameOffsets.push_back(Strtab.size());
      Strtab += S + '\0';
    }
    StrtabOffset = append(Strtab.data(), Strtab.size());
    align(8);
    SymtabOffset = Bytes.size();
    Bytes.resize(Bytes.size() + 24 * (Symbols.size() + 1));
    for (size_t I = 0; I < Symbols.size(); ++I)
      put<uint32_t>(SymtabOffset + 24 * (I + 1), NameOffsets[I]);

    // Metadata: {"amdhsa.target": Target} as msgpack (str8 for the value).
    std::vector<uint8_t> Desc = {0x81, 0xad};
    Desc.insert(Desc.end(), {'a', 'm', 'd', 'h', 's', 'a', '.', 't', 'a', 'r',
                             'g', 'e', 't'});
    Desc.push_back(0xd9);
    Desc.push_back(uint8_t(Target.size()));
    Desc.insert(Desc.end(), Target.begin(), Target.end());
    align(4);
    size_t NoteOffset = Bytes.size();
    uint32_t NoteHeader[3] = {7, uint32_t(Desc.size()), 32};
    append(NoteHeader, sizeof(NoteHeader));
    append("AMDGPU\0", 8);
    append(Desc.data(), Desc.size());
    align(4);
    size_t NoteSize = Bytes.size() - NoteOffset;

    align(8);
    ShdrOffset = Bytes.size();
    Bytes.resize(Bytes.size() + 4 * 64);
    auto Section = [&](unsigned I, uint32_t Type, size_t Off, size_t Size,
                       uint32_t Link) {
      size_t H = ShdrOffset + 64 * I;
      put<uint32_t>(H + 4, Type);
      put<uint64_t>(H + 24, Off);
      put<uint64_t>(H + 32, Size);
      put<uint32_t>(H + 40, Link);
    };
    Section(1, 3, StrtabOffset, Strtab.size(), 0);             // .strtab
    Section(2, 2, SymtabOffset, 24 * (Symbols.size() + 1), 1); // .symtab
    Section(3, 7, NoteOffset, NoteSize, 0);                    // .note
    put<uint64_t>(40, ShdrOffset);
    put<uint16_t>(58, 64);
    put<uint16_t>(60, 4);
    return Bytes;
  }
};

TEST(StandinCodeObject, ReadsSymbolsAndTarget) {
  std::vector<uint8_t> Elf = TestElf().build();
  CodeObjectInfo Info;
  std::string S = readCodeObject(Elf.data(), Elf.size(), Info);
  ASSERT_EQ(S, "");
  EXPECT_EQ(Info.Symbols,
            (std::set<std::string>{"kernel.kd", "kernel", "deviceVar"}));
  EXPECT_EQ(Info.TargetId, "gfx90a:xnack+");
}

TEST(StandinCodeObject, RejectsOtherMachines) {
  TestElf T;
  T.Machine = EM_X86_64;
  std::vector<uint8_t> Elf = T.build();
  CodeObjectInfo Info;
  std::string S = readCodeObject(Elf.data(), Elf.size(), Info);
  EXPECT_EQ(S, "not an AMDGPU code object");
  const uint8_t NotElf[] = "HIP_KERNEL_GFX1100_DATA";
  S = readCodeObject(NotElf, sizeof(NotElf), Info);
  EXPECT_EQ(S, "not an ELF file");
}

TEST(StandinCodeObject, EveryTruncationIsAnError) {
  std::vector<uint8_t> Elf = TestElf().build();
  for (size_t Size = 0; Size < Elf.size(); ++Size) {
    // A copy of exactly Size bytes, so that sanitizers see any overread.
    std::vector<uint8_t> Prefix(Elf.begin(), Elf.begin() + Size);
    CodeObjectInfo Info;
    EXPECT_NE(readCodeObject(Prefix.data(), Prefix.size(), Info), "")
        << "truncated to " << Size << " bytes";
  }
}

TEST(StandinCodeObject, RejectsNameOutsideStringTable) {
  TestElf T;
  std::vector<uint8_t> Elf = T.build();
  T.Bytes = Elf;
  T.put<uint32_t>(T.SymtabOffset + 24, 0x7fffffff);
  CodeObjectInfo Info;
  std::string S = readCodeObject(T.Bytes.data(), T.Bytes.size(), Info);
  EXPECT_EQ(S, "symbol name outside the string table");
}

TEST(StandinCodeObject, RejectsSectionTableOutsideFile) {
  TestElf T;
  T.Bytes = T.build();
  T.put<uint16_t>(60, 0xffff); // e_shnum far beyond the file
  CodeObjectInfo Info;
  std::string S = readCodeObject(T.Bytes.data(), T.Bytes.size(), Info);
  EXPECT_EQ(S, "section headers outside the file");
}

TEST(StandinCodeObject, CorruptBytesNeverReadOutOfBounds) {
  // Every single-byte corruption either parses or fails with a message;
  // under the sanitizer build an out-of-bounds read fails the test.
  std::vector<uint8_t> Elf = TestElf().build();
  size_t Failures = 0;
  for (size_t I = 0; I < Elf.size(); ++I) {
    std::vector<uint8_t> Copy = Elf;
    Copy[I] ^= 0xff;
    CodeObjectInfo Info;
    if (!readCodeObject(Copy.data(), Copy.size(), Info).empty())
      ++Failures;
  }
  EXPECT_GT(Failures, 0u);
}

} // namespace
