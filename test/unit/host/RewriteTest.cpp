//===- RewriteTest.cpp - Analysis and rewrite of synthetic host ELFs ------===//
//
// Small ELF images made with yaml2obj (ObjectYAML, part of libLLVM): two
// bundles in .hip_fatbin, an .eh_frame "tail" after it in the same PT_LOAD,
// and two wrappers in the opposite order of the bundles, in each of the
// three pointer styles. Real compiler/linker output is covered by the lit
// tests (test/lit/convert, test/lit/inspect).
//
//===----------------------------------------------------------------------===//

#include "kpack/HostRewrite.h"
#include "kpack/HostBinary.h"
#include "kpack/Metadata.h"

#include "llvm/Support/Endian.h"

#include "ElfTestObjects.h"

#include "gtest/gtest.h"

#include <string>
#include <vector>

using namespace kpack;

namespace {

constexpr uint64_t FatbinAddr = 0x1000, Bundle1Addr = 0x3000;

std::vector<uint8_t> bundle(const std::string &Target, uint8_t Fill) {
  std::vector<uint8_t> Payload(16, Fill);
  return encodeBundle(
      {{"host-x86_64-unknown-linux-gnu-", nullptr, 0},
       {"hipv4-amdgcn-amd-amdhsa--" + Target, Payload.data(), Payload.size()}});
}

/// Builds the image: Style decides the file type and how the wrappers'
/// pointers (wrapper 0 -> bundle 1, wrapper 1 -> bundle 0) are stored.
std::vector<uint8_t> makeImage(PointerStyle Style) {
  std::vector<uint8_t> Fatbin = bundle("gfx1100", 0x11);
  Fatbin.resize(Bundle1Addr - FatbinAddr, 0);
  std::vector<uint8_t> B1 = bundle("gfx90a:xnack+", 0x22);
  Fatbin.insert(Fatbin.end(), B1.begin(), B1.end());

  bool InPlace = Style != PointerStyle::RelaRelative;
  std::vector<uint8_t> Wrappers =
      kpack::test::hipfWrapper(InPlace ? Bundle1Addr : 0);
  std::vector<uint8_t> W1 = kpack::test::hipfWrapper(InPlace ? FatbinAddr : 0);
  Wrappers.insert(Wrappers.end(), W1.begin(), W1.end());

  std::string Relocs;
  if (Style == PointerStyle::RelaRelative)
    Relocs =
        "  - Name: .rela.dyn\n"
        "    Type: SHT_RELA\n"
        "    Flags: [ SHF_ALLOC ]\n"
        "    Address: 0x200\n"
        "    Offset: 0x200\n"
        "    AddressAlign: 8\n"
        "    Relocations:\n"
        "      - { Offset: 0x5028, Type: R_X86_64_RELATIVE, Addend: 0x3000 }\n"
        "      - { Offset: 0x5040, Type: R_X86_64_RELATIVE, Addend: 0x1000 }\n";
  else if (Style == PointerStyle::RelrInPlace)
    // 0x5028, then a bitmap whose bit 2 (after the marker bit) is 0x5040.
    Relocs = "  - Name: .relr.dyn\n"
             "    Type: SHT_RELR\n"
             "    Flags: [ SHF_ALLOC ]\n"
             "    Address: 0x200\n"
             "    Offset: 0x200\n"
             "    AddressAlign: 8\n"
             "    Entries: [ 0x5028, 0x9 ]\n";

  kpack::test::FatHostLayout L;
  L.Type = Style == PointerStyle::AbsoluteInPlace ? "ET_EXEC" : "ET_DYN";
  L.LeadingSections = Relocs;
  if (!Relocs.empty())
    L.FirstSection = Style == PointerStyle::RelaRelative ? ".rela.dyn"
                                                         : ".relr.dyn";
  L.Fatbin = std::move(Fatbin);
  L.Wrappers = std::move(Wrappers);
  L.SegmentAddr = 0x5020;
  return kpack::test::objectFromYaml(kpack::test::fatHostYaml(L));
}

llvm::MemoryBufferRef bufferRef(const std::vector<uint8_t> &Bytes) {
  return llvm::MemoryBufferRef(
      llvm::StringRef(reinterpret_cast<const char *>(Bytes.data()),
                      Bytes.size()),
      "image");
}

std::vector<uint8_t> metadata() {
  std::vector<uint8_t> M;
  EXPECT_FALSE(encodeKpackMetadata({"prog", {"prog_@GFXARCH@.kpack"}}, M));
  return M;
}

class Styles : public ::testing::TestWithParam<PointerStyle> {};

TEST_P(Styles, WrappersResolveToTheBundleTheyPointAt) {
  std::vector<uint8_t> Image = makeImage(GetParam());
  auto Host = analyzeHostBinary(bufferRef(Image));
  ASSERT_TRUE(static_cast<bool>(Host)) << toString(Host.takeError());
  ASSERT_EQ(Host->Bundles.size(), 2u);
  EXPECT_EQ(Host->Bundles[1].Address, Bundle1Addr);
  EXPECT_EQ(Host->Bundles[1].Entries.back().TargetId, "gfx90a:xnack+");
  ASSERT_EQ(Host->Wrappers.size(), 2u);
  EXPECT_EQ(Host->Wrappers[0].Style, GetParam());
  EXPECT_EQ(Host->Wrappers[0].Target, Bundle1Addr);
  EXPECT_EQ(Host->Wrappers[0].BundleIndex, 1);
  EXPECT_EQ(Host->Wrappers[1].BundleIndex, 0);
}

TEST_P(Styles, RewriteKeepsEachWrappersOwnBundleIndex) {
  std::vector<uint8_t> Image = makeImage(GetParam());
  auto Out = rewriteHostBinary(bufferRef(Image), metadata());
  ASSERT_TRUE(static_cast<bool>(Out)) << toString(Out.takeError());
  EXPECT_LT(Out->size(), Image.size());
  auto Host = analyzeHostBinary(bufferRef(*Out));
  ASSERT_TRUE(static_cast<bool>(Host)) << toString(Host.takeError());
  EXPECT_TRUE(Host->Bundles.empty());
  ASSERT_EQ(Host->Wrappers.size(), 2u);
  for (const WrapperInfo &W : Host->Wrappers) {
    EXPECT_TRUE(W.isHIPK());
    EXPECT_EQ(W.Style, GetParam());
    EXPECT_EQ(W.Target, FatbinAddr);
    ASSERT_TRUE(W.Ref.has_value()) << W.RefError;
    EXPECT_EQ(W.Ref->KernelName, "prog");
  }
  EXPECT_EQ(Host->Wrappers[0].Reserved1, 1u);
  EXPECT_EQ(Host->Wrappers[1].Reserved1, 0u);
  ASSERT_TRUE(Host->KpackRefSection.has_value());
  EXPECT_EQ(Host->KpackRefSection->Address, FatbinAddr);
}

INSTANTIATE_TEST_SUITE_P(Elf, Styles,
                         ::testing::Values(PointerStyle::RelaRelative,
                                           PointerStyle::RelrInPlace,
                                           PointerStyle::AbsoluteInPlace));

TEST(Rewrite, ConvertedInputIsRefused) {
  std::vector<uint8_t> Image = makeImage(PointerStyle::RelaRelative);
  auto Once = rewriteHostBinary(bufferRef(Image), metadata());
  ASSERT_TRUE(static_cast<bool>(Once)) << toString(Once.takeError());
  auto Twice = rewriteHostBinary(bufferRef(*Once), metadata());
  ASSERT_FALSE(static_cast<bool>(Twice));
  EXPECT_EQ(toString(Twice.takeError()),
            "the binary is already converted (HIPK wrappers)");
}

TEST(Rewrite, VerifierCatchesAChangedLoadedByte) {
  std::vector<uint8_t> Image = makeImage(PointerStyle::RelaRelative);
  auto Out = rewriteHostBinary(bufferRef(Image), metadata());
  ASSERT_TRUE(static_cast<bool>(Out)) << toString(Out.takeError());
  EXPECT_FALSE(static_cast<bool>(
      verifyConvertedBinary(bufferRef(Image), bufferRef(*Out))));
  // Corrupt .eh_frame (the tail that moved) in the output.
  std::vector<uint8_t> Bad = *Out;
  auto Host = analyzeHostBinary(bufferRef(Bad));
  ASSERT_TRUE(static_cast<bool>(Host)) << toString(Host.takeError());
  uint64_t RefEnd = Host->KpackRefSection->FileOffset;
  bool Flipped = false;
  for (uint64_t I = RefEnd; I + 8 <= Bad.size() && !Flipped; ++I)
    if (llvm::support::endian::read64be(Bad.data() + I) == 0x0102030405060708) {
      Bad[I] ^= 0xff;
      Flipped = true;
    }
  ASSERT_TRUE(Flipped);
  llvm::Error E = verifyConvertedBinary(bufferRef(Image), bufferRef(Bad));
  ASSERT_TRUE(static_cast<bool>(E));
  EXPECT_NE(toString(std::move(E)).find("('.eh_frame') changed"),
            std::string::npos);
}

TEST(Rewrite, MetadataLargerThanTheFatbinIsAnError) {
  std::vector<uint8_t> Image = makeImage(PointerStyle::RelaRelative);
  std::vector<uint8_t> Huge(0x10000, 0);
  auto Out = rewriteHostBinary(bufferRef(Image), Huge);
  ASSERT_FALSE(static_cast<bool>(Out));
  EXPECT_NE(toString(Out.takeError()).find("does not fit"), std::string::npos);
}

} // namespace
