//===- CodeObjectCheckTest.cpp - kpack::checkArchiveEntry -----------------===//

#include "kpack/CodeObjectCheck.h"

#include "llvm/ADT/StringExtras.h"
#include "llvm/BinaryFormat/ELF.h"
#include "llvm/Support/Endian.h"

#include "ElfTestObjects.h"

#include <gtest/gtest.h>

#include <cstring>
#include <vector>

using namespace kpack;
namespace endian = llvm::support::endian;

namespace {

using kpack::test::amdgpuHeader;

std::string errorOf(llvm::Expected<std::optional<TargetId>> R) {
  if (R)
    return "";
  return llvm::toString(R.takeError());
}

const unsigned Gfx1100 = llvm::ELF::EF_AMDGPU_MACH_AMDGCN_GFX1100;
const unsigned Gfx90aXnackOn = llvm::ELF::EF_AMDGPU_MACH_AMDGCN_GFX90A |
                               llvm::ELF::EF_AMDGPU_FEATURE_XNACK_ON_V4;

} // namespace

TEST(CodeObjectCheck, CodeObjectForItsArchPasses) {
  auto R = checkArchiveEntry("gfx1100", amdgpuHeader(Gfx1100),
                             OpaqueEntries::Reject);
  ASSERT_TRUE(static_cast<bool>(R)) << llvm::toString(R.takeError());
  ASSERT_TRUE(R->has_value());
  EXPECT_EQ((*R)->str(), "gfx1100");
  auto X = checkArchiveEntry("gfx90a:xnack+", amdgpuHeader(Gfx90aXnackOn),
                             OpaqueEntries::Reject);
  ASSERT_TRUE(static_cast<bool>(X)) << llvm::toString(X.takeError());
  EXPECT_EQ((*X)->str(), "gfx90a:xnack+");
}

TEST(CodeObjectCheck, ArchThatIsNoTargetIdFails) {
  EXPECT_EQ(errorOf(checkArchiveEntry("-gfx1100", amdgpuHeader(Gfx1100),
                                      OpaqueEntries::Allow)),
            "arch '-gfx1100' is not a target ID");
  EXPECT_EQ(errorOf(checkArchiveEntry(llvm::StringRef("gfx\0\xff", 5),
                                      {}, OpaqueEntries::Allow)),
            "arch 'gfx\\x00\\xff' is not a target ID");
}

TEST(CodeObjectCheck, CodeObjectForAnotherTargetFails) {
  EXPECT_EQ(errorOf(checkArchiveEntry("gfx-100", amdgpuHeader(Gfx1100),
                                      OpaqueEntries::Allow)),
            "code object is built for gfx1100, not gfx-100");
  EXPECT_EQ(errorOf(checkArchiveEntry("gfx90a:xnack-",
                                      amdgpuHeader(Gfx90aXnackOn),
                                      OpaqueEntries::Allow)),
            "code object is built for gfx90a:xnack+, not gfx90a:xnack-");
}

// A strict target's code object has its processor's machine number; the
// entry keeps the strict identity, and a strict entry takes no other
// processor's code (upstream test_strict_identity.py).
TEST(CodeObjectCheck, StrictTargetTakesItsProcessorsCodeObject) {
  const unsigned Gfx1250 = llvm::ELF::EF_AMDGPU_MACH_AMDGCN_GFX1250;
  auto R = checkArchiveEntry("gfx1250-strict", amdgpuHeader(Gfx1250),
                             OpaqueEntries::Reject);
  ASSERT_TRUE(static_cast<bool>(R)) << llvm::toString(R.takeError());
  EXPECT_EQ((*R)->str(), "gfx1250-strict");
  auto Plain = checkArchiveEntry("gfx1250", amdgpuHeader(Gfx1250),
                                 OpaqueEntries::Reject);
  ASSERT_TRUE(static_cast<bool>(Plain)) << llvm::toString(Plain.takeError());
  EXPECT_EQ((*Plain)->str(), "gfx1250");
  EXPECT_EQ(errorOf(checkArchiveEntry("gfx1100-strict", amdgpuHeader(Gfx1250),
                                      OpaqueEntries::Reject)),
            "code object is built for gfx1250, not gfx1100-strict");
  EXPECT_EQ(errorOf(checkArchiveEntry("gfx1250-strictx", amdgpuHeader(Gfx1250),
                                      OpaqueEntries::Reject)),
            "code object is built for gfx1250, not gfx1250-strictx");
}

TEST(CodeObjectCheck, OpaqueBytesFollowThePolicy) {
  std::vector<uint8_t> Blob = {'b', 'l', 'o', 'b'};
  auto Allowed = checkArchiveEntry("gfx1100", Blob, OpaqueEntries::Allow);
  ASSERT_TRUE(static_cast<bool>(Allowed));
  EXPECT_FALSE(Allowed->has_value());
  EXPECT_EQ(errorOf(checkArchiveEntry("gfx1100", Blob, OpaqueEntries::Reject)),
            "not an AMDGPU code object");
  // An ELF file for another machine is no code object either.
  EXPECT_EQ(errorOf(checkArchiveEntry(
                "gfx1100", amdgpuHeader(0, llvm::ELF::EM_X86_64),
                OpaqueEntries::Reject)),
            "not an AMDGPU code object");
}

// Found by the fuzzer: LLVM names no processor for these (llvm_unreachable).
TEST(CodeObjectCheck, UnknownMachIsAnError) {
  for (unsigned Mach : {0x000u, 0x027u, 0x05cu, 0x0ffu})
    EXPECT_EQ(errorOf(checkArchiveEntry("gfx1100", amdgpuHeader(Mach),
                                        OpaqueEntries::Allow)),
              "AMDGPU ELF with an unknown EF_AMDGPU_MACH 0x" +
                  llvm::utohexstr(Mach, /*LowerCase=*/true))
        << Mach;
}

TEST(CodeObjectCheck, VerdictDoesNotDependOnAlignment) {
  std::vector<uint8_t> Header = amdgpuHeader(Gfx1100);
  std::vector<uint8_t> Shifted(Header.size() + 1);
  std::memcpy(Shifted.data() + 1, Header.data(), Header.size());
  auto R = checkArchiveEntry(
      "gfx1100", llvm::ArrayRef<uint8_t>(Shifted).drop_front(),
      OpaqueEntries::Reject);
  ASSERT_TRUE(static_cast<bool>(R)) << llvm::toString(R.takeError());
  EXPECT_EQ((*R)->str(), "gfx1100");
}
