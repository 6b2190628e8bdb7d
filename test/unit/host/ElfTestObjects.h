//===- ElfTestObjects.h - Small ELF images for unit tests -------*- C++ -*-===//
//
// What the host-binary and emission tests build their inputs from: a bare
// AMDGPU code-object header, HIPF wrappers, the YAML of a small fat host
// image, and an image made by yaml2obj's library.
//
//===----------------------------------------------------------------------===//
#ifndef KPACK_TEST_ELFTESTOBJECTS_H
#define KPACK_TEST_ELFTESTOBJECTS_H

#include "llvm/ADT/SmallString.h"
#include "llvm/ADT/StringExtras.h"
#include "llvm/BinaryFormat/ELF.h"
#include "llvm/ObjectYAML/yaml2obj.h"
#include "llvm/Support/Endian.h"
#include "llvm/Support/YAMLTraits.h"
#include "llvm/Support/raw_ostream.h"

#include "gtest/gtest.h"

#include <cstdint>
#include <cstring>
#include <string>
#include <vector>

namespace kpack {
namespace test {

/// A bare ELF64 header of an AMDGPU code object (no sections) with e_flags
/// Flags (the processor and features).
inline std::vector<uint8_t>
amdgpuHeader(unsigned Flags, uint16_t Machine = llvm::ELF::EM_AMDGPU) {
  using namespace llvm::support;
  std::vector<uint8_t> H(sizeof(llvm::ELF::Elf64_Ehdr), 0);
  std::memcpy(H.data(), "\x7f"
                        "ELF",
              4);
  H[llvm::ELF::EI_CLASS] = llvm::ELF::ELFCLASS64;
  H[llvm::ELF::EI_DATA] = llvm::ELF::ELFDATA2LSB;
  H[llvm::ELF::EI_VERSION] = 1;
  H[llvm::ELF::EI_OSABI] = llvm::ELF::ELFOSABI_AMDGPU_HSA;
  H[llvm::ELF::EI_ABIVERSION] = llvm::ELF::ELFABIVERSION_AMDGPU_HSA_V5;
  endian::write16le(&H[16], llvm::ELF::ET_DYN);
  endian::write16le(&H[18], Machine);
  endian::write32le(&H[20], 1);
  endian::write32le(&H[48], Flags);
  endian::write16le(&H[52], sizeof(llvm::ELF::Elf64_Ehdr));
  return H;
}

/// A HIPF wrapper (one .hipFatBinSegment entry, version 1) whose binary
/// pointer holds Binary.
inline std::vector<uint8_t> hipfWrapper(uint64_t Binary) {
  using namespace llvm::support;
  std::vector<uint8_t> W(24, 0);
  endian::write32le(W.data(), 0x48495046); // "HIPF"
  endian::write32le(W.data() + 4, 1);
  endian::write64le(W.data() + 8, Binary);
  return W;
}

/// A small fat host image: Fatbin in .hip_fatbin at 0x1000, an 8-byte
/// .eh_frame "tail" right after it in the same read-only PT_LOAD (which
/// starts at FirstSection), and Wrappers in .hipFatBinSegment at SegmentAddr
/// (file offset SegmentAddr - 0x1000) in a writable PT_LOAD.
struct FatHostLayout {
  std::string Type = "ET_EXEC";
  /// YAML of sections before .hip_fatbin (relocations), if any.
  std::string LeadingSections;
  std::string FirstSection = ".hip_fatbin";
  std::vector<uint8_t> Fatbin;
  std::vector<uint8_t> Wrappers;
  uint64_t SegmentAddr = 0;
};

/// The yaml2obj input of L (objectFromYaml makes the image).
inline std::string fatHostYaml(const FatHostLayout &L) {
  auto Hex = [](const std::vector<uint8_t> &B) {
    return llvm::toHex(llvm::ArrayRef<uint8_t>(B));
  };
  const uint64_t TailAddr = 0x1000 + L.Fatbin.size();
  return "--- !ELF\n"
         "FileHeader:\n"
         "  Class: ELFCLASS64\n"
         "  Data: ELFDATA2LSB\n"
         "  Type: " +
         L.Type +
         "\n"
         "  Machine: EM_X86_64\n"
         "Sections:\n" +
         L.LeadingSections +
         "  - Name: .hip_fatbin\n"
         "    Type: SHT_PROGBITS\n"
         "    Flags: [ SHF_ALLOC ]\n"
         "    Address: 0x1000\n"
         "    Offset: 0x1000\n"
         "    AddressAlign: 0x1000\n"
         "    Content: \"" +
         Hex(L.Fatbin) +
         "\"\n"
         "  - Name: .eh_frame\n"
         "    Type: SHT_PROGBITS\n"
         "    Flags: [ SHF_ALLOC ]\n"
         "    Address: 0x" +
         llvm::utohexstr(TailAddr) +
         "\n"
         "    Content: \"0102030405060708\"\n"
         "  - Name: .hipFatBinSegment\n"
         "    Type: SHT_PROGBITS\n"
         "    Flags: [ SHF_ALLOC, SHF_WRITE ]\n"
         "    Address: 0x" +
         llvm::utohexstr(L.SegmentAddr) +
         "\n"
         "    Offset: 0x" +
         llvm::utohexstr(L.SegmentAddr - 0x1000) +
         "\n"
         "    AddressAlign: 8\n"
         "    Content: \"" +
         Hex(L.Wrappers) +
         "\"\n"
         "ProgramHeaders:\n"
         "  - Type: PT_LOAD\n"
         "    Flags: [ PF_R ]\n"
         "    FirstSec: " +
         L.FirstSection +
         "\n"
         "    LastSec: .eh_frame\n"
         "    VAddr: 0x0\n"
         "    Offset: 0x0\n"
         "    Align: 0x1000\n"
         "  - Type: PT_LOAD\n"
         "    Flags: [ PF_R, PF_W ]\n"
         "    FirstSec: .hipFatBinSegment\n"
         "    LastSec: .hipFatBinSegment\n"
         "    VAddr: 0x" +
         llvm::utohexstr(L.SegmentAddr) +
         "\n"
         "    Align: 0x1000\n";
}

/// The image yaml2obj makes of Yaml; a failure fails the current test.
inline std::vector<uint8_t> objectFromYaml(const std::string &Yaml) {
  llvm::SmallString<0> Out;
  llvm::raw_svector_ostream OS(Out);
  llvm::yaml::Input In(Yaml);
  std::string Errors;
  bool Ok = llvm::yaml::convertYAML(
      In, OS, [&](const llvm::Twine &Msg) { Errors += Msg.str() + "\n"; });
  EXPECT_TRUE(Ok) << Errors;
  return std::vector<uint8_t>(Out.begin(), Out.end());
}

} // namespace test
} // namespace kpack

#endif
