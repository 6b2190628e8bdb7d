//===- ElfTestObjects.h - Small ELF images for unit tests -------*- C++ -*-===//
//
// What the host-binary and emission tests build their inputs from: a bare
// AMDGPU code-object header and an image made by yaml2obj's library.
//
//===----------------------------------------------------------------------===//
#ifndef KPACK_TEST_ELFTESTOBJECTS_H
#define KPACK_TEST_ELFTESTOBJECTS_H

#include "llvm/ADT/SmallString.h"
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
