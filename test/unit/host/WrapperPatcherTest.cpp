//===- WrapperPatcherTest.cpp - kpack/WrapperPatcher.h --------------------===//

#include "kpack/WrapperPatcher.h"

#include "llvm/BinaryFormat/ELF.h"
#include "llvm/Support/Endian.h"

#include "gtest/gtest.h"

#include <vector>

using namespace kpack;
namespace endian = llvm::support::endian;

namespace {

/// "" on success, else the error's message.
std::string message(llvm::Error E) { return E ? toString(std::move(E)) : ""; }

// A fake image: a HIPF wrapper at offset 64 (pointer 0x1000, reserved1 with
// garbage in the upper half to check it is cleared) and an Elf64_Rela at
// offset 128 relocating the pointer slot.
struct FakeImage {
  std::vector<uint8_t> Bytes = std::vector<uint8_t>(256, 0);
  static constexpr uint64_t WrapperOff = 64, RelaOff = 128;

  FakeImage(uint64_t InPlace, uint32_t RelType = llvm::ELF::R_X86_64_RELATIVE) {
    uint8_t *W = Bytes.data() + WrapperOff;
    endian::write32le(W, HipfMagic);
    endian::write32le(W + 4, 1);
    endian::write64le(W + 8, InPlace);
    endian::write64le(W + 16, 0xdeadbeef00000000ull);
    uint8_t *R = Bytes.data() + RelaOff;
    endian::write64le(R, 0x5008); // r_offset: the wrapper's pointer slot
    endian::write64le(R + 8, RelType);
    endian::write64le(R + 16, 0x1000);
  }
  uint32_t magic() const { return endian::read32le(Bytes.data() + WrapperOff); }
  uint32_t version() const {
    return endian::read32le(Bytes.data() + WrapperOff + 4);
  }
  uint64_t inPlace() const {
    return endian::read64le(Bytes.data() + WrapperOff + 8);
  }
  uint64_t reserved1() const {
    return endian::read64le(Bytes.data() + WrapperOff + 16);
  }
  uint64_t addend() const {
    return endian::read64le(Bytes.data() + RelaOff + 16);
  }
};

WrapperLocation location(PointerStyle Style) {
  WrapperLocation L;
  L.FileOffset = FakeImage::WrapperOff;
  L.Style = Style;
  L.RelaFileOffset = FakeImage::RelaOff;
  L.OldTarget = 0x1000;
  return L;
}

TEST(WrapperPatcher, RelaRewritesTheAddendOnly) {
  FakeImage Img(/*InPlace=*/0); // lld leaves the slot zero
  ASSERT_EQ(message(patchWrapperToHIPK(
                Img.Bytes, location(PointerStyle::RelaRelative), 0x2000, 7)),
            "");
  EXPECT_EQ(Img.magic(), HipkMagic);
  EXPECT_EQ(Img.version(), 1u);
  EXPECT_EQ(Img.reserved1(), 7u); // upper half cleared
  EXPECT_EQ(Img.addend(), 0x2000u);
  EXPECT_EQ(Img.inPlace(), 0u);
}

TEST(WrapperPatcher, RelaKeepsAnAppliedInPlaceValueInStep) {
  FakeImage Img(/*InPlace=*/0x1000); // GNU ld stores the addend in place too
  ASSERT_EQ(message(patchWrapperToHIPK(
                Img.Bytes, location(PointerStyle::RelaRelative), 0x2000, 1)),
            "");
  EXPECT_EQ(Img.addend(), 0x2000u);
  EXPECT_EQ(Img.inPlace(), 0x2000u);
}

TEST(WrapperPatcher, InPlaceStylesRewriteTheSlot) {
  for (PointerStyle S :
       {PointerStyle::RelrInPlace, PointerStyle::AbsoluteInPlace}) {
    FakeImage Img(/*InPlace=*/0x1000);
    ASSERT_EQ(message(patchWrapperToHIPK(Img.Bytes, location(S), 0x3000, 2)),
              "");
    EXPECT_EQ(Img.magic(), HipkMagic);
    EXPECT_EQ(Img.inPlace(), 0x3000u);
    EXPECT_EQ(Img.reserved1(), 2u);
    EXPECT_EQ(Img.addend(), 0x1000u) << "the unrelated RELA must not change";
  }
}

// R_X86_64_64 against a symbol at 0x800 with addend 0x800 (pointer 0x1000).
WrapperLocation symbolLocation(FakeImage &Img) {
  uint8_t *R = Img.Bytes.data() + FakeImage::RelaOff;
  endian::write64le(R + 8, (uint64_t(3) << 32) | llvm::ELF::R_X86_64_64);
  endian::write64le(R + 16, 0x800);
  WrapperLocation L = location(PointerStyle::RelaSymbol);
  L.SymbolValue = 0x800;
  return L;
}

TEST(WrapperPatcher, RelaSymbolRewritesTheAddendAgainstTheSymbol) {
  FakeImage Img(/*InPlace=*/0);
  WrapperLocation L = symbolLocation(Img);
  ASSERT_EQ(message(patchWrapperToHIPK(Img.Bytes, L, 0x2000, 5)), "");
  EXPECT_EQ(Img.magic(), HipkMagic);
  EXPECT_EQ(Img.reserved1(), 5u);
  EXPECT_EQ(Img.addend(), 0x2000u - 0x800u);
  EXPECT_EQ(endian::read64le(Img.Bytes.data() + FakeImage::RelaOff + 8),
            (uint64_t(3) << 32) | llvm::ELF::R_X86_64_64)
      << "type and symbol must be kept";
  EXPECT_EQ(Img.inPlace(), 0u);
}

TEST(WrapperPatcher, RelaSymbolKeepsAnAppliedInPlaceValueInStep) {
  FakeImage Img(/*InPlace=*/0x1000); // symbol + addend applied in place
  WrapperLocation L = symbolLocation(Img);
  ASSERT_EQ(message(patchWrapperToHIPK(Img.Bytes, L, 0x2000, 0)), "");
  EXPECT_EQ(Img.addend(), 0x1800u);
  EXPECT_EQ(Img.inPlace(), 0x2000u);
}

TEST(WrapperPatcher, RejectsAWrongRelocationAndLeavesTheImageAlone) {
  FakeImage Img(0, llvm::ELF::R_X86_64_GLOB_DAT);
  std::vector<uint8_t> Before = Img.Bytes;
  EXPECT_EQ(message(patchWrapperToHIPK(
                Img.Bytes, location(PointerStyle::RelaRelative), 0x2000, 0)),
            "relocation at file offset 128 is not an "
            "R_X86_64_RELATIVE");
  EXPECT_EQ(message(patchWrapperToHIPK(
                Img.Bytes, location(PointerStyle::RelaSymbol), 0x2000, 0)),
            "relocation at file offset 128 is not an R_X86_64_64");
  EXPECT_EQ(Img.Bytes, Before);
}

TEST(WrapperPatcher, RejectsOffsetsOutsideTheImage) {
  FakeImage Img(0);
  WrapperLocation L = location(PointerStyle::AbsoluteInPlace);
  L.FileOffset = Img.Bytes.size() - 8;
  EXPECT_NE(message(patchWrapperToHIPK(Img.Bytes, L, 0, 0)), "");
  for (PointerStyle S :
       {PointerStyle::RelaRelative, PointerStyle::RelaSymbol}) {
    L = location(S);
    L.RelaFileOffset = Img.Bytes.size() - 16;
    EXPECT_NE(message(patchWrapperToHIPK(Img.Bytes, L, 0, 0)), "");
  }
  L = location(PointerStyle::ObjectRelocation);
  EXPECT_NE(message(patchWrapperToHIPK(Img.Bytes, L, 0, 0)), "");
}

} // namespace
