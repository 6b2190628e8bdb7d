//===- CoffTest.cpp - kpack/COFF/CoffHostBinary.h on hand-made PE images -===//
//
// Real images (mingw, lld-link, both offload drivers) are covered by
// test/lit/windows; these check the reader's errors on malformed headers
// (never a crash), the dispatch on the magic, the checksum, and the
// host-image tests the tools pick binaries with (hostImageFormat,
// hostImageHoldsDeviceCode).

#include "kpack/COFF/CoffHostBinary.h"
#include "kpack/HostBinary.h"
#include "kpack/HostRewrite.h"

#include "llvm/BinaryFormat/COFF.h"
#include "llvm/Support/Endian.h"

#include "gtest/gtest.h"

#include <cstring>
#include <string>
#include <vector>

using namespace kpack;
namespace endian = llvm::support::endian;

namespace {

constexpr uint32_t PeOffset = 0x40, OptOffset = PeOffset + 24;
constexpr uint32_t TableOffset = OptOffset + 240;

/// A minimal PE32+ x86-64 image: one .text section at RVA 0x1000, raw data
/// at 0x200 (0x200 bytes), no base relocations.
std::vector<uint8_t> minimalImage() {
  std::vector<uint8_t> B(0x400, 0);
  B[0] = 'M';
  B[1] = 'Z';
  endian::write32le(&B[0x3c], PeOffset);
  std::memcpy(&B[PeOffset], "PE\0\0", 4);
  endian::write16le(&B[PeOffset + 4], llvm::COFF::IMAGE_FILE_MACHINE_AMD64);
  endian::write16le(&B[PeOffset + 6], 1);   // NumberOfSections
  endian::write16le(&B[PeOffset + 20], 240); // SizeOfOptionalHeader
  endian::write16le(&B[PeOffset + 22], 0x22);
  endian::write16le(&B[OptOffset], 0x20b);
  endian::write64le(&B[OptOffset + 24], 0x140000000); // ImageBase
  endian::write32le(&B[OptOffset + 32], 0x1000);      // SectionAlignment
  endian::write32le(&B[OptOffset + 36], 0x200);       // FileAlignment
  endian::write32le(&B[OptOffset + 56], 0x2000);      // SizeOfImage
  endian::write32le(&B[OptOffset + 60], 0x200);       // SizeOfHeaders
  endian::write32le(&B[OptOffset + 108], 16);         // NumberOfRvaAndSize
  std::memcpy(&B[TableOffset], ".text\0\0\0", 8);
  endian::write32le(&B[TableOffset + 8], 0x10);     // VirtualSize
  endian::write32le(&B[TableOffset + 12], 0x1000);  // VirtualAddress
  endian::write32le(&B[TableOffset + 16], 0x200);   // SizeOfRawData
  endian::write32le(&B[TableOffset + 20], 0x200);   // PointerToRawData
  endian::write32le(&B[TableOffset + 36], 0x60000020);
  return B;
}

llvm::MemoryBufferRef bufferOf(const std::vector<uint8_t> &B) {
  return llvm::MemoryBufferRef(
      llvm::StringRef(reinterpret_cast<const char *>(B.data()), B.size()),
      "test");
}

std::string analyzeError(const std::vector<uint8_t> &B) {
  auto H = analyzeHostBinary(bufferOf(B));
  return H ? "" : toString(H.takeError());
}

std::string layoutError(const std::vector<uint8_t> &B) {
  return toString(checkPeImage(bufferOf(B)));
}

TEST(Coff, MinimalImageHasNoDeviceCode) {
  std::vector<uint8_t> B = minimalImage();
  EXPECT_EQ(layoutError(B), "");
  auto H = analyzeHostBinary(bufferOf(B));
  ASSERT_TRUE(static_cast<bool>(H)) << toString(H.takeError());
  EXPECT_EQ(H->Format, HostFormat::Coff);
  EXPECT_EQ(H->Kind, HostFileKind::Executable);
  EXPECT_EQ(H->ImageBase, 0x140000000u);
  EXPECT_FALSE(H->hasDeviceCode());
  auto Out = rewriteHostBinary(bufferOf(B), *H, {0x80});
  ASSERT_FALSE(static_cast<bool>(Out));
  EXPECT_EQ(toString(Out.takeError()), "the binary carries no device code");
}

TEST(Coff, Dispatch) {
  EXPECT_TRUE(isCoffFile("MZ"));
  EXPECT_FALSE(isCoffFile("\x7f"
                          "ELF"));
  EXPECT_FALSE(isCoffFile(""));
  EXPECT_EQ(analyzeError({'M', 'Z'}), "not a PE image (no MZ header)");
}

TEST(Coff, TruncatedHeaders) {
  std::vector<uint8_t> B = minimalImage();
  B.resize(OptOffset + 40);
  EXPECT_EQ(analyzeError(B), "truncated PE optional header");
  B.resize(PeOffset + 10);
  EXPECT_NE(analyzeError(B).find("truncated PE header"), std::string::npos);
}

TEST(Coff, SectionTablePastTheEnd) {
  std::vector<uint8_t> B = minimalImage();
  endian::write16le(&B[PeOffset + 6], 0x1000);
  EXPECT_EQ(analyzeError(B), "the section table (4096 sections) runs past the "
                             "end of the file");
}

TEST(Coff, RawDataPastTheEnd) {
  std::vector<uint8_t> B = minimalImage();
  endian::write32le(&B[TableOffset + 16], 0x400);
  EXPECT_NE(layoutError(B).find("runs past the end of the file"),
            std::string::npos);
}

TEST(Coff, BadBaseRelocationBlock) {
  std::vector<uint8_t> B = minimalImage();
  // Directory 5 at RVA 0x1000 (the .text raw data), 12 bytes; its block
  // claims 0x100.
  endian::write32le(&B[OptOffset + 112 + 5 * 8], 0x1000);
  endian::write32le(&B[OptOffset + 112 + 5 * 8 + 4], 12);
  endian::write32le(&B[0x200], 0x1000);
  endian::write32le(&B[0x204], 0x100);
  EXPECT_NE(layoutError(B).find("outside the directory"), std::string::npos);
  endian::write32le(&B[0x204], 0); // a zero-size block never ends
  EXPECT_NE(layoutError(B).find("outside the directory"), std::string::npos);
}

TEST(Coff, Checksum) {
  // The checksum is the folded 16-bit sum plus the length; the CheckSum
  // field itself counts as zero.
  std::vector<uint8_t> B = {1, 0, 2, 0, 0xff, 0xff, 0xff, 0xff};
  EXPECT_EQ(computePeChecksum(B, 4), 3u + 8u);
  std::vector<uint8_t> C = {0xff, 0xff, 0x02, 0x00, 0x01};
  EXPECT_EQ(computePeChecksum(C, 100), 0x0002u + 0x0001u + 5u);
}

llvm::StringRef textOf(const std::vector<uint8_t> &B) {
  return llvm::StringRef(reinterpret_cast<const char *>(B.data()), B.size());
}

std::string holdsError(const std::vector<uint8_t> &B) {
  auto R = hostImageHoldsDeviceCode(textOf(B));
  return R ? "" : toString(R.takeError());
}

TEST(HostImageFormat, PeImages) {
  std::vector<uint8_t> B = minimalImage();
  EXPECT_EQ(hostImageFormat(textOf(B)), HostImageFormat::Pe);
  // The headers through the optional header's magic are enough.
  std::vector<uint8_t> Head(B.begin(), B.begin() + TableOffset);
  EXPECT_EQ(hostImageFormat(textOf(Head)), HostImageFormat::Pe);
  Head.resize(OptOffset + 1);
  EXPECT_EQ(hostImageFormat(textOf(Head)), HostImageFormat::None);
  // A DLL is an image too.
  endian::write16le(&B[PeOffset + 22], 0x2022);
  EXPECT_EQ(hostImageFormat(textOf(B)), HostImageFormat::Pe);
}

TEST(HostImageFormat, NotHostImages) {
  auto With = [](size_t At, uint16_t V) {
    std::vector<uint8_t> B = minimalImage();
    endian::write16le(&B[At], V);
    return hostImageFormat(textOf(B));
  };
  EXPECT_EQ(With(OptOffset, 0x10b), HostImageFormat::None); // PE32
  EXPECT_EQ(With(PeOffset + 4, llvm::COFF::IMAGE_FILE_MACHINE_ARM64),
            HostImageFormat::None);
  EXPECT_EQ(With(PeOffset + 22, 0x20), HostImageFormat::None); // not an image
  EXPECT_EQ(With(PeOffset, 0), HostImageFormat::None);         // no "PE\0\0"
  EXPECT_EQ(With(0x3c, 0xfff0), HostImageFormat::None); // e_lfanew past the end
  // An import library is an ar archive; text starting with "MZ" is text.
  EXPECT_EQ(hostImageFormat("!<arch>\n/               0"), HostImageFormat::None);
  EXPECT_EQ(hostImageFormat("MZ is a text file"), HostImageFormat::None);
  EXPECT_EQ(hostImageFormat(""), HostImageFormat::None);
}

TEST(HostImageFormat, ElfHeaders) {
  std::vector<uint8_t> E(64, 0);
  std::memcpy(E.data(), "\x7f"
                        "ELF",
              4);
  E[4] = 2; // ELFCLASS64
  E[5] = 1; // ELFDATA2LSB
  auto With = [&](uint16_t Type, uint16_t Machine) {
    endian::write16le(&E[16], Type);
    endian::write16le(&E[18], Machine);
    return hostImageFormat(textOf(E));
  };
  EXPECT_EQ(With(2, 62), HostImageFormat::Elf);  // ET_EXEC, x86-64
  EXPECT_EQ(With(3, 62), HostImageFormat::Elf);  // ET_DYN
  EXPECT_EQ(With(1, 62), HostImageFormat::None); // ET_REL
  EXPECT_EQ(With(3, 224), HostImageFormat::None); // AMDGPU
  E[4] = 1;
  EXPECT_EQ(With(3, 62), HostImageFormat::None); // ELFCLASS32
}

TEST(HostImageFormat, PeDeviceCodeSections) {
  // No .hip_fat/.hipFatB: nothing to split.
  std::vector<uint8_t> B = minimalImage();
  auto Holds = [&] {
    auto R = hostImageHoldsDeviceCode(textOf(B));
    return R ? *R : (llvm::consumeError(R.takeError()), false);
  };
  EXPECT_FALSE(Holds());
  EXPECT_EQ(holdsError(B), "");
  // .hip_fat with raw data: a fat image.
  std::memcpy(&B[TableOffset], ".hip_fat", 8);
  EXPECT_TRUE(Holds());
  // .hip_fat without file bytes (converted) and no wrappers: nothing.
  endian::write32le(&B[TableOffset + 16], 0);
  EXPECT_FALSE(Holds());
  // .hipFatB with raw data (the wrappers of a converted image): adopted.
  std::memcpy(&B[TableOffset], ".hipFatB", 8);
  endian::write32le(&B[TableOffset + 16], 0x200);
  EXPECT_TRUE(Holds());
  // A section table past the end of the file is an error, not "no".
  endian::write16le(&B[PeOffset + 6], 0x1000);
  EXPECT_EQ(holdsError(B), "the section table (4096 sections) runs past the "
                           "end of the file");
  // Not a host image: no, without reading further.
  EXPECT_EQ(holdsError({'M', 'Z'}), "");
}

} // namespace
