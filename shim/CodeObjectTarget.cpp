//===- CodeObjectTarget.cpp - The target ID a code object was built for ---===//
//
// Field values from LLVM's AMDGPUUsage ("ELF Header", "AMDGPU ELF Header
// e_flags for Code Object V3" and "... V4 and After").
//
//===----------------------------------------------------------------------===//

#include "CodeObjectTarget.h"

#include "kpack/ByteOrder.h"
#include "kpack/TargetId.h"

#include <cstdint>
#include <cstring>

namespace kpack {
namespace shim {

namespace {
constexpr uint8_t ElfClass64 = 2;
constexpr uint8_t ElfData2Lsb = 1;
constexpr uint8_t OsAbiAmdgpuHsa = 64;
constexpr uint16_t MachineAmdgpu = 224;
// EI_ABIVERSION for ELFOSABI_AMDGPU_HSA: 1 = code object v3, 2 = v4, ...
constexpr uint8_t AbiVersionV3 = 1;
constexpr uint32_t XnackV3 = 0x100, SrameccV3 = 0x200;
constexpr uint32_t XnackMaskV4 = 0x300, SrameccMaskV4 = 0xc00;
constexpr uint32_t XnackOffV4 = 0x200, XnackOnV4 = 0x300;
constexpr uint32_t SrameccOffV4 = 0x800, SrameccOnV4 = 0xc00;

FeatureState v4State(uint32_t Flags, uint32_t Mask, uint32_t Off, uint32_t On) {
  uint32_t V = Flags & Mask;
  return V == On ? FeatureState::On : V == Off ? FeatureState::Off
                                               : FeatureState::Any;
}
} // namespace

std::string codeObjectTargetId(const void *Data, size_t Size,
                               const std::string &Processor,
                               const std::string &Fallback) {
  const auto *B = static_cast<const uint8_t *>(Data);
  if (!B || Size < 64 || std::memcmp(B, "\x7f" "ELF", 4) != 0 ||
      B[4] != ElfClass64 || B[5] != ElfData2Lsb || B[7] != OsAbiAmdgpuHsa ||
      detail::readLE<uint16_t>(B + 18) != MachineAmdgpu)
    return Fallback;
  const uint8_t AbiVersion = B[8];
  const uint32_t Flags = detail::readLE<uint32_t>(B + 48);
  TargetId Id;
  Id.Processor = Processor;
  if (AbiVersion < AbiVersionV3) {
    return Fallback;
  } else if (AbiVersion == AbiVersionV3) {
    Id.Xnack = Flags & XnackV3 ? FeatureState::On : FeatureState::Off;
    Id.Sramecc = Flags & SrameccV3 ? FeatureState::On : FeatureState::Off;
  } else {
    Id.Xnack = v4State(Flags, XnackMaskV4, XnackOffV4, XnackOnV4);
    Id.Sramecc = v4State(Flags, SrameccMaskV4, SrameccOffV4, SrameccOnV4);
  }
  // Only the features the processor takes (v3 sets both bits' meaning for
  // every processor).
  if (std::optional<ProcessorFeatures> F = supportedFeatures(Processor)) {
    if (!F->Xnack)
      Id.Xnack = FeatureState::Any;
    if (!F->Sramecc)
      Id.Sramecc = FeatureState::Any;
  }
  return Id.str();
}

} // namespace shim
} // namespace kpack
