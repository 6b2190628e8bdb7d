//===- ShimCodeObjectTargetTest.cpp - Bundle labels from ELF e_flags ------===//

#include "CodeObjectTarget.h"

#include <gtest/gtest.h>

#include <cstdint>
#include <vector>

using kpack::shim::codeObjectTargetId;

namespace {

/// A 64-byte AMDGPU HSA ELF header with the given ABI version and e_flags.
std::vector<uint8_t> header(uint8_t AbiVersion, uint32_t Flags) {
  std::vector<uint8_t> H(64, 0);
  H[0] = 0x7f, H[1] = 'E', H[2] = 'L', H[3] = 'F';
  H[4] = 2;  // ELFCLASS64
  H[5] = 1;  // little-endian
  H[7] = 64; // ELFOSABI_AMDGPU_HSA
  H[8] = AbiVersion;
  H[18] = 224; // EM_AMDGPU
  for (int I = 0; I < 4; ++I)
    H[48 + I] = uint8_t(Flags >> (8 * I));
  return H;
}

std::string label(const std::vector<uint8_t> &H, const char *Processor) {
  return codeObjectTargetId(H.data(), H.size(), Processor, "fallback");
}

TEST(ShimCodeObjectTarget, V4AndLaterFeatureStates) {
  // v5 (ABI version 3): xnack on (0x300), sramecc any (0x400).
  EXPECT_EQ(label(header(3, 0x300 | 0x400), "gfx90a"), "gfx90a:xnack+");
  // xnack off, sramecc on.
  EXPECT_EQ(label(header(2, 0x200 | 0xc00), "gfx942"), "gfx942:sramecc+:xnack-");
  // Both any.
  EXPECT_EQ(label(header(4, 0x100 | 0x400), "gfx942"), "gfx942");
  // A processor without the features: none printed whatever the bits say.
  EXPECT_EQ(label(header(3, 0x300), "gfx1100"), "gfx1100");
}

TEST(ShimCodeObjectTarget, V3OnOff) {
  EXPECT_EQ(label(header(1, 0x100), "gfx906"), "gfx906:sramecc-:xnack+");
}

TEST(ShimCodeObjectTarget, NotAnAmdgpuElfFallsBack) {
  std::vector<uint8_t> H = header(3, 0x300);
  H[18] = 62; // EM_X86_64
  EXPECT_EQ(label(H, "gfx90a"), "fallback");
  EXPECT_EQ(label(header(0, 0), "gfx90a"), "fallback"); // code object v2
  EXPECT_EQ(codeObjectTargetId("short", 5, "gfx90a", "fallback"), "fallback");
  EXPECT_EQ(codeObjectTargetId(nullptr, 0, "gfx90a", "fallback"), "fallback");
}

} // namespace
