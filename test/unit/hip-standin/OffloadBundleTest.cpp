//===- OffloadBundleTest.cpp - The stand-in's offload-bundle reader -------===//

#include "OffloadBundle.h"

#include <gtest/gtest.h>
#include <zlib.h>
#include <zstd.h>

#include <cstring>
#include <string>
#include <vector>

using hipstandin::OffloadBundle;
using hipstandin::readOffloadBundle;

namespace {

template <typename T> void put(std::vector<uint8_t> &B, T V) {
  for (size_t I = 0; I < sizeof(T); ++I)
    B.push_back(uint8_t(uint64_t(V) >> (8 * I)));
}

/// An uncompressed bundle of (ID, payload) entries, laid out as clang does:
/// header, then the payloads.
std::vector<uint8_t>
makeBundle(const std::vector<std::pair<std::string, std::string>> &Entries) {
  const char Magic[] = "__CLANG_OFFLOAD_BUNDLE__";
  std::vector<uint8_t> B(Magic, Magic + 24);
  put<uint64_t>(B, Entries.size());
  size_t Header = B.size();
  for (const auto &E : Entries)
    Header += 24 + E.first.size();
  size_t Offset = Header;
  for (const auto &E : Entries) {
    put<uint64_t>(B, Offset);
    put<uint64_t>(B, E.second.size());
    put<uint64_t>(B, E.first.size());
    B.insert(B.end(), E.first.begin(), E.first.end());
    Offset += E.second.size();
  }
  for (const auto &E : Entries)
    B.insert(B.end(), E.second.begin(), E.second.end());
  return B;
}

/// Bundle compressed as CCOB Version with Method (0 zlib, 1 zstd).
std::vector<uint8_t> makeCcob(const std::vector<uint8_t> &Raw, unsigned Version,
                              unsigned Method) {
  std::vector<uint8_t> Data;
  if (Method == 0) {
    uLongf Size = compressBound(Raw.size());
    Data.resize(Size);
    EXPECT_EQ(compress(Data.data(), &Size, Raw.data(), Raw.size()), Z_OK);
    Data.resize(Size);
  } else {
    Data.resize(ZSTD_compressBound(Raw.size()));
    size_t Size =
        ZSTD_compress(Data.data(), Data.size(), Raw.data(), Raw.size(), 3);
    EXPECT_FALSE(ZSTD_isError(Size));
    Data.resize(Size);
  }
  std::vector<uint8_t> B = {'C', 'C', 'O', 'B'};
  put<uint16_t>(B, Version);
  put<uint16_t>(B, Method);
  size_t Header = Version == 1 ? 20 : Version == 2 ? 24 : 32;
  if (Version == 1) {
    put<uint32_t>(B, Raw.size());
  } else if (Version == 2) {
    put<uint32_t>(B, Header + Data.size());
    put<uint32_t>(B, Raw.size());
  } else {
    put<uint64_t>(B, Header + Data.size());
    put<uint64_t>(B, Raw.size());
  }
  put<uint64_t>(B, 0x1234); // hash: not checked
  B.insert(B.end(), Data.begin(), Data.end());
  return B;
}

const std::vector<std::pair<std::string, std::string>> TwoEntries = {
    {"host-x86_64-unknown-linux-gnu-", ""},
    {"hipv4-amdgcn-amd-amdhsa--gfx1100", "GFX1100 CODE"},
    {"hipv4-amdgcn-amd-amdhsa--gfx90a:xnack+", "GFX90A CODE, LONGER"}};

void expectTwoEntries(const OffloadBundle &B) {
  ASSERT_EQ(B.Entries.size(), 3u);
  EXPECT_EQ(B.Entries[1].Id, "hipv4-amdgcn-amd-amdhsa--gfx1100");
  EXPECT_EQ(std::string(reinterpret_cast<const char *>(B.payload(B.Entries[1])),
                        B.Entries[1].Size),
            "GFX1100 CODE");
  EXPECT_EQ(B.Entries[2].Id, "hipv4-amdgcn-amd-amdhsa--gfx90a:xnack+");
  EXPECT_EQ(std::string(reinterpret_cast<const char *>(B.payload(B.Entries[2])),
                        B.Entries[2].Size),
            "GFX90A CODE, LONGER");
}

TEST(StandinOffloadBundle, Uncompressed) {
  std::vector<uint8_t> Raw = makeBundle(TwoEntries);
  Raw.resize(Raw.size() + 100, 0xee); // whatever follows in memory
  OffloadBundle B;
  ASSERT_EQ(readOffloadBundle(Raw.data(), Raw.size(), B), "");
  EXPECT_FALSE(B.Compressed);
  EXPECT_EQ(B.Bytes.size(), Raw.size() - 100);
  expectTwoEntries(B);
}

TEST(StandinOffloadBundle, CompressedEveryVersionAndMethod) {
  std::vector<uint8_t> Raw = makeBundle(TwoEntries);
  for (unsigned Version : {1u, 2u, 3u})
    for (unsigned Method : {0u, 1u}) {
      std::vector<uint8_t> C = makeCcob(Raw, Version, Method);
      C.resize(C.size() + 64, 0); // padding after the bundle
      OffloadBundle B;
      ASSERT_EQ(readOffloadBundle(C.data(), C.size(), B), "")
          << "v" << Version << " method " << Method;
      EXPECT_TRUE(B.Compressed);
      EXPECT_EQ(B.CcobVersion, Version);
      EXPECT_EQ(B.Compression, Method ? "zstd" : "zlib");
      expectTwoEntries(B);
    }
}

TEST(StandinOffloadBundle, EveryTruncationIsAnError) {
  std::vector<std::vector<uint8_t>> Inputs = {makeBundle(TwoEntries)};
  for (unsigned Version : {1u, 2u, 3u})
    for (unsigned Method : {0u, 1u})
      Inputs.push_back(makeCcob(Inputs[0], Version, Method));
  for (const std::vector<uint8_t> &In : Inputs)
    for (size_t Size = 0; Size < In.size(); ++Size) {
      std::vector<uint8_t> Prefix(In.begin(), In.begin() + Size);
      OffloadBundle B;
      EXPECT_NE(readOffloadBundle(Prefix.data(), Prefix.size(), B), "")
          << "truncated to " << Size << " of " << In.size();
    }
}

TEST(StandinOffloadBundle, CorruptBytesNeverReadOutOfBounds) {
  // Under the sanitizer build an out-of-bounds read fails the test.
  std::vector<uint8_t> In = makeCcob(makeBundle(TwoEntries), 3, 1);
  std::vector<uint8_t> Raw = makeBundle(TwoEntries);
  for (const std::vector<uint8_t> *Src : {&In, &Raw})
    for (size_t I = 0; I < Src->size(); ++I) {
      std::vector<uint8_t> Copy = *Src;
      Copy[I] ^= 0xff;
      OffloadBundle B;
      std::string E = readOffloadBundle(Copy.data(), Copy.size(), B);
      if (!E.empty())
        continue;
      for (const OffloadBundle::Entry &Entry : B.Entries) {
        EXPECT_LE(Entry.Offset + Entry.Size, B.Bytes.size());
      }
    }
}

TEST(StandinOffloadBundle, RejectsOtherData) {
  const uint8_t Elf[] = "\x7f"
                        "ELF\x02\x01\x01";
  OffloadBundle B;
  EXPECT_EQ(
      readOffloadBundle(Elf, sizeof(Elf), B),
      "not an offload bundle (no __CLANG_OFFLOAD_BUNDLE__ or CCOB magic)");
  std::vector<uint8_t> C = makeCcob(makeBundle(TwoEntries), 4, 1);
  C[4] = 4;
  EXPECT_EQ(readOffloadBundle(C.data(), C.size(), B),
            "compressed bundle: unsupported CCOB version 4");
}

} // namespace
