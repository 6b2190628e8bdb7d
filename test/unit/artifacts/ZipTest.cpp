//===- ZipTest.cpp - kpack::ZipReader and kpack::ZipWriter ----------------===//

#include "kpack/Zip.h"

#include "llvm/ADT/StringExtras.h"
#include "llvm/Support/Endian.h"
#include "llvm/Support/FileSystem.h"
#include "llvm/Support/MemoryBuffer.h"
#include "llvm/Support/raw_ostream.h"

#include <gtest/gtest.h>

#include <fstream>
#include <iterator>

using namespace llvm;
using namespace kpack;

namespace {

class ZipTest : public ::testing::Test {
protected:
  void SetUp() override {
    SmallString<128> P;
    ASSERT_FALSE(sys::fs::createUniqueDirectory("kpack-zip-test", P));
    Dir = P.str().str();
  }
  void TearDown() override { sys::fs::remove_directories(Dir); }

  static std::vector<uint8_t> bytes(StringRef S) {
    return std::vector<uint8_t>(S.begin(), S.end());
  }
  static std::vector<uint8_t> readFile(const std::string &P) {
    std::ifstream In(P, std::ios::binary);
    return std::vector<uint8_t>(std::istreambuf_iterator<char>(In), {});
  }
  static void writeFile(const std::string &P, ArrayRef<uint8_t> B) {
    std::ofstream Out(P, std::ios::binary);
    Out.write(reinterpret_cast<const char *>(B.data()), B.size());
  }
  static Expected<ZipReader> openBytes(ArrayRef<uint8_t> B) {
    return ZipReader::openBuffer(MemoryBuffer::getMemBufferCopy(
        toStringRef(B), "test.zip"));
  }
  /// A zip of three small entries, the second deflated.
  std::vector<uint8_t> sample(ZipWriterOptions Opts = {}) {
    std::string P = Dir + "/sample.zip";
    Expected<ZipWriter> W = ZipWriter::create(P, Opts);
    EXPECT_TRUE(bool(W)) << toString(W.takeError());
    EXPECT_FALSE(bool(W->add("a.txt", bytes("alpha"), ZipMethod::Stored)));
    std::string Long(5000, 'z');
    EXPECT_FALSE(bool(W->add("pkg/b.txt", bytes(Long), ZipMethod::Deflated,
                             0100755)));
    EXPECT_FALSE(bool(W->add("pkg/c", bytes(""), ZipMethod::Deflated)));
    EXPECT_FALSE(bool(W->commit()));
    return readFile(P);
  }
  static std::string readEntry(const ZipReader &R, StringRef Name) {
    const ZipEntry *E = R.find(Name);
    if (!E)
      return "<missing>";
    Expected<std::string> S = R.readAll(*E, 1 << 20);
    return S ? *S : "<error: " + toString(S.takeError()) + ">";
  }
  static std::string openError(ArrayRef<uint8_t> B) {
    Expected<ZipReader> R = openBytes(B);
    return R ? "" : toString(R.takeError());
  }

  std::string Dir;
};

TEST_F(ZipTest, RoundTrip) {
  std::vector<uint8_t> Z = sample();
  Expected<ZipReader> R = openBytes(Z);
  ASSERT_TRUE(bool(R)) << toString(R.takeError());
  ASSERT_EQ(R->entries().size(), 3u);
  EXPECT_EQ(R->entries()[0].Name, "a.txt");
  EXPECT_EQ(R->entries()[1].Name, "pkg/b.txt");
  EXPECT_EQ(R->entries()[0].Method, ZipMethod::Stored);
  EXPECT_EQ(R->entries()[1].Method, ZipMethod::Deflated);
  EXPECT_LT(R->entries()[1].CompressedSize, 100u);
  EXPECT_EQ(R->entries()[0].unixMode(), 0100644u);
  EXPECT_EQ(R->entries()[1].unixMode(), 0100755u);
  EXPECT_EQ(readEntry(*R, "a.txt"), "alpha");
  EXPECT_EQ(readEntry(*R, "pkg/b.txt"), std::string(5000, 'z'));
  EXPECT_EQ(readEntry(*R, "pkg/c"), "");
  EXPECT_EQ(R->find("nope"), nullptr);
}

TEST_F(ZipTest, FileAndRawEntries) {
  std::string Src = Dir + "/src.bin";
  std::vector<uint8_t> Big(3 << 20);
  for (size_t I = 0; I < Big.size(); ++I)
    Big[I] = static_cast<uint8_t>((I * 7) ^ (I >> 9));
  writeFile(Src, Big);
  std::vector<uint8_t> First = sample();
  Expected<ZipReader> In = openBytes(First);
  ASSERT_TRUE(bool(In));

  std::string P = Dir + "/out.zip";
  Expected<ZipWriter> W = ZipWriter::create(P);
  ASSERT_TRUE(bool(W));
  ASSERT_FALSE(bool(W->addFile("big.deflate", Src, ZipMethod::Deflated)));
  ASSERT_FALSE(bool(W->addFile("big.stored", Src, ZipMethod::Stored)));
  ASSERT_FALSE(bool(W->addRaw("copy/b.txt", *In, In->entries()[1], 0100600)));
  Error Dup = W->add("big.stored", bytes("x"), ZipMethod::Stored);
  EXPECT_NE(toString(std::move(Dup)).find("duplicate"), std::string::npos);
  ASSERT_FALSE(bool(W->commit()));

  Expected<ZipReader> R = ZipReader::open(P);
  ASSERT_TRUE(bool(R)) << toString(R.takeError());
  for (StringRef N : {"big.deflate", "big.stored"}) {
    Expected<std::string> S = R->readAll(*R->find(N), 8 << 20);
    ASSERT_TRUE(bool(S)) << toString(S.takeError());
    EXPECT_TRUE(std::vector<uint8_t>(S->begin(), S->end()) == Big) << N.str();
  }
  const ZipEntry *Copy = R->find("copy/b.txt");
  ASSERT_NE(Copy, nullptr);
  EXPECT_EQ(Copy->Method, ZipMethod::Deflated);
  EXPECT_EQ(Copy->unixMode(), 0100600u);
  EXPECT_EQ(R->rawData(*Copy), In->rawData(In->entries()[1]));
  EXPECT_EQ(readEntry(*R, "copy/b.txt"), std::string(5000, 'z'));
  // Streaming never hands out more than 1 MiB at once.
  size_t Chunks = 0;
  ASSERT_FALSE(bool(R->read(*R->find("big.stored"), [&](ArrayRef<uint8_t> C) {
    EXPECT_LE(C.size(), size_t(1) << 20);
    ++Chunks;
    return Error::success();
  })));
  EXPECT_EQ(Chunks, 3u);
  // readAll refuses what is larger than allowed.
  Expected<std::string> TooBig = R->readAll(*R->find("big.stored"), 100);
  EXPECT_NE(toString(TooBig.takeError()).find("more than the 100 allowed"),
            std::string::npos);
}

TEST_F(ZipTest, DeterministicWithFixedTimestamps) {
  std::vector<uint8_t> A = sample(), B = sample();
  EXPECT_EQ(A, B);
  // Local header of the first entry: time 0, date 1980-01-01, made for
  // version 2.0, then the Unix "made by" in the central directory.
  EXPECT_EQ(support::endian::read16le(&A[10]), 0u);
  EXPECT_EQ(support::endian::read16le(&A[12]), (1u << 5) | 1u);
  Expected<ZipReader> R = openBytes(A);
  ASSERT_TRUE(bool(R));
  EXPECT_EQ(R->entries()[0].VersionMadeBy, (3u << 8) | 20u);
}

TEST_F(ZipTest, Zip64RoundTrip) {
  ZipWriterOptions Opts;
  Opts.ForceZip64 = true;
  std::vector<uint8_t> Z = sample(Opts);
  // The zip64 end record and its locator are present.
  std::string S(Z.begin(), Z.end());
  EXPECT_NE(S.find("PK\x06\x06"), std::string::npos);
  EXPECT_NE(S.find("PK\x06\x07"), std::string::npos);
  Expected<ZipReader> R = openBytes(Z);
  ASSERT_TRUE(bool(R)) << toString(R.takeError());
  ASSERT_EQ(R->entries().size(), 3u);
  EXPECT_EQ(R->entries()[2].HeaderOffset, R->entries()[1].DataOffset +
                                              R->entries()[1].CompressedSize);
  EXPECT_EQ(readEntry(*R, "pkg/b.txt"), std::string(5000, 'z'));
  EXPECT_EQ(R->entries()[0].VersionMadeBy, (3u << 8) | 45u);
}

TEST_F(ZipTest, EmptyZip) {
  std::string P = Dir + "/empty.zip";
  Expected<ZipWriter> W = ZipWriter::create(P);
  ASSERT_TRUE(bool(W));
  ASSERT_FALSE(bool(W->commit()));
  EXPECT_EQ(readFile(P).size(), 22u);
  Expected<ZipReader> R = ZipReader::open(P);
  ASSERT_TRUE(bool(R));
  EXPECT_TRUE(R->entries().empty());
}

TEST_F(ZipTest, NotAZip) {
  EXPECT_NE(openError(bytes("short")).find("not a zip file"), std::string::npos);
  EXPECT_NE(openError(std::vector<uint8_t>(100, 'x')).find("no end of central"),
            std::string::npos);
  Expected<ZipReader> Missing = ZipReader::open(Dir + "/missing.zip");
  EXPECT_NE(toString(Missing.takeError()).find("cannot read"),
            std::string::npos);
}

// Every truncation and every single-byte change of a valid zip is either
// rejected when opened or read back with its contents checked; nothing
// crashes (the fuzzer, test/fuzz/artifacts, goes further).
TEST_F(ZipTest, TruncationsAndByteFlips) {
  std::vector<uint8_t> Z = sample();
  for (size_t N = 0; N < Z.size(); ++N)
    EXPECT_FALSE(openError(ArrayRef<uint8_t>(Z).take_front(N)).empty()) << N;
  size_t Rejected = 0;
  for (size_t I = 0; I < Z.size(); ++I) {
    std::vector<uint8_t> M = Z;
    M[I] ^= 0x5a;
    Expected<ZipReader> R = openBytes(M);
    if (!R) {
      consumeError(R.takeError());
      ++Rejected;
      continue;
    }
    for (const ZipEntry &E : R->entries())
      if (Error Err = R->read(E, [](ArrayRef<uint8_t>) {
            return Error::success();
          }))
        consumeError(std::move(Err)), ++Rejected;
  }
  // Only bytes nobody checks may change unnoticed (version fields, internal
  // attributes, modes, local copies of checked fields).
  EXPECT_GT(Rejected, Z.size() / 2);
}

TEST_F(ZipTest, CorruptContents) {
  std::vector<uint8_t> Z = sample();
  Expected<ZipReader> R0 = openBytes(Z);
  ASSERT_TRUE(bool(R0));
  // Flip a byte of the stored entry's data: the CRC catches it.
  std::vector<uint8_t> M = Z;
  M[R0->entries()[0].DataOffset] ^= 1;
  Expected<ZipReader> R = openBytes(M);
  ASSERT_TRUE(bool(R));
  EXPECT_NE(readEntry(*R, "a.txt").find("CRC-32 mismatch"), std::string::npos);
  // Corrupt the deflate stream.
  M = Z;
  M[R0->entries()[1].DataOffset] = 0xff;
  R = openBytes(M);
  ASSERT_TRUE(bool(R));
  std::string Err = readEntry(*R, "pkg/b.txt");
  EXPECT_NE(Err.find("'test.zip': entry 'pkg/b.txt'"), std::string::npos) << Err;
}

/// The central directory entry of Name in Z (offset).
size_t centralOffset(const std::vector<uint8_t> &Z, StringRef Name) {
  std::string S(Z.begin(), Z.end());
  size_t Pos = 0;
  while ((Pos = S.find("PK\x01\x02", Pos)) != std::string::npos) {
    uint16_t Len = support::endian::read16le(&Z[Pos + 28]);
    if (S.compare(Pos + 46, Len, Name.str()) == 0)
      return Pos;
    ++Pos;
  }
  ADD_FAILURE() << "no central entry " << Name.str();
  return 0;
}

TEST_F(ZipTest, StructuralErrors) {
  std::vector<uint8_t> Z = sample();
  Expected<ZipReader> R0 = openBytes(Z);
  ASSERT_TRUE(bool(R0));
  size_t A = centralOffset(Z, "a.txt"), B = centralOffset(Z, "pkg/b.txt");

  auto Expect = [&](std::vector<uint8_t> M, StringRef Want) {
    std::string E = openError(M);
    EXPECT_NE(E.find(Want.str()), std::string::npos)
        << "want '" << Want.str() << "', got '" << E << "'";
  };
  std::vector<uint8_t> M = Z;
  support::endian::write16le(&M[A + 10], 12); // bzip2
  Expect(M, "compression method 12 is not supported");
  M = Z;
  support::endian::write16le(&M[A + 8], 1);
  Expect(M, "encrypted entries are not supported");
  M = Z;
  std::copy_n("../x/", 5, &M[A + 46]);
  Expect(M, "invalid name ('..' path component)");
  M = Z;
  std::copy_n("/abcd", 5, &M[A + 46]);
  Expect(M, "invalid name (absolute path)");
  // Two entries pointing at one local header.
  M = Z;
  support::endian::write32le(&M[B + 42],
                             static_cast<uint32_t>(R0->entries()[2].HeaderOffset));
  Expect(M, "local header names another file");
  // Stored entry whose sizes disagree.
  M = Z;
  support::endian::write32le(&M[A + 20], 4);
  Expect(M, "stored entry with compressed size 4 != size 5");
  // Data running into the central directory.
  M = Z;
  support::endian::write32le(&M[B + 20], 1u << 20);
  support::endian::write32le(&M[B + 24], 1u << 20);
  Expect(M, "beyond the file's data");
  // Entry count larger than the directory.
  M = Z;
  size_t End = M.size() - 22;
  support::endian::write16le(&M[End + 8], 500);
  support::endian::write16le(&M[End + 10], 500);
  Expect(M, "500 entries cannot fit");
  // Bytes prepended shift every offset.
  M = Z;
  M.insert(M.begin(), 16, 0);
  Expect(M, "does not end where the end record begins");
  // Duplicate names (central and local header both renamed).
  M = Z;
  std::copy_n("a.txt", 5, &M[centralOffset(Z, "pkg/c") + 46]);
  std::copy_n("a.txt", 5, &M[R0->entries()[2].HeaderOffset + 30]);
  Expect(M, "entry 'a.txt': duplicate entry");
}

} // namespace
