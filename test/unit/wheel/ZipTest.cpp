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
  std::vector<uint8_t> sample() {
    std::string P = Dir + "/sample.zip";
    Expected<ZipWriter> W = ZipWriter::create(P);
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
  // The copy has the original's compressed bytes (not recompressed).
  Expected<std::vector<uint8_t>> CopyRaw = R->rawData(*Copy);
  Expected<std::vector<uint8_t>> OrigRaw = In->rawData(In->entries()[1]);
  ASSERT_TRUE(bool(CopyRaw) && bool(OrigRaw));
  EXPECT_EQ(*CopyRaw, *OrigRaw);
  EXPECT_EQ(Copy->Crc32, In->entries()[1].Crc32);
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
  EXPECT_EQ(R->entries()[0].HostSystem, 3u);
}

// Copied entries are not recompressed: a deflate stream made at another
// level than the writer's (1 here, the writer deflates at 6) is copied as
// it is.
TEST_F(ZipTest, RawCopyKeepsCompressedBytes) {
  std::string Text;
  for (int I = 0; I < 20000; ++I)
    Text += std::to_string(I * 7919 % 10007) + (I % 13 ? " " : "\n");
  std::string P1 = Dir + "/level1.zip";
  ZipWriterOptions Fast;
  Fast.DeflateLevel = 1;
  Expected<ZipWriter> W1 = ZipWriter::create(P1, Fast);
  ASSERT_TRUE(bool(W1));
  ASSERT_FALSE(bool(W1->add("t.txt", bytes(Text), ZipMethod::Deflated)));
  ASSERT_FALSE(bool(W1->commit()));
  Expected<ZipReader> In = ZipReader::open(P1);
  ASSERT_TRUE(bool(In));

  std::string P = Dir + "/copy.zip";
  Expected<ZipWriter> W = ZipWriter::create(P);
  ASSERT_TRUE(bool(W));
  ASSERT_FALSE(bool(W->addRaw("t.txt", *In, In->entries()[0], 0100644)));
  ASSERT_FALSE(bool(W->add("t6.txt", bytes(Text), ZipMethod::Deflated)));
  ASSERT_FALSE(bool(W->commit()));
  Expected<ZipReader> R = ZipReader::open(P);
  ASSERT_TRUE(bool(R));
  Expected<std::vector<uint8_t>> Orig = In->rawData(In->entries()[0]);
  Expected<std::vector<uint8_t>> Copied = R->rawData(*R->find("t.txt"));
  Expected<std::vector<uint8_t>> Level6 = R->rawData(*R->find("t6.txt"));
  ASSERT_TRUE(bool(Orig) && bool(Copied) && bool(Level6));
  EXPECT_EQ(*Copied, *Orig);
  // The two levels give different streams, so the equality above means
  // the bytes were copied, not deflated again.
  EXPECT_NE(*Level6, *Orig);
  EXPECT_EQ(readEntry(*R, "t.txt"), Text);
}

// A zip64 zip (zip64 end record and locator, zip64 extra fields in the
// local headers and the central directory) written by Python's zipfile:
//   zipfile.ZIP64_LIMIT = 0; zipfile.ZIP_FILECOUNT_LIMIT = 1
//   a.txt = b'alpha' stored (mode 0100644),
//   pkg/b.txt = b'z' * 5000 deflated (mode 0100755).
const uint8_t Zip64Sample[] = {
    0x50, 0x4b, 0x03, 0x04, 0x2d, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00,
    0x21, 0x00, 0x6a, 0x39, 0xe0, 0xd0, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff,
    0xff, 0xff, 0x05, 0x00, 0x14, 0x00, 0x61, 0x2e, 0x74, 0x78, 0x74, 0x01,
    0x00, 0x10, 0x00, 0x05, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x05,
    0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x61, 0x6c, 0x70, 0x68, 0x61,
    0x50, 0x4b, 0x03, 0x04, 0x2d, 0x00, 0x00, 0x00, 0x08, 0x00, 0x00, 0x00,
    0x21, 0x00, 0x2a, 0x91, 0x9d, 0xe8, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff,
    0xff, 0xff, 0x09, 0x00, 0x14, 0x00, 0x70, 0x6b, 0x67, 0x2f, 0x62, 0x2e,
    0x74, 0x78, 0x74, 0x01, 0x00, 0x10, 0x00, 0x88, 0x13, 0x00, 0x00, 0x00,
    0x00, 0x00, 0x00, 0x16, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0xed,
    0xc1, 0x31, 0x01, 0x00, 0x00, 0x00, 0xc2, 0xa0, 0xde, 0x4b, 0x6f, 0x0a,
    0x3f, 0xa0, 0x00, 0x00, 0x00, 0x00, 0x80, 0xb7, 0x01, 0x50, 0x4b, 0x01,
    0x02, 0x2d, 0x03, 0x2d, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x21,
    0x00, 0x6a, 0x39, 0xe0, 0xd0, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff,
    0xff, 0x05, 0x00, 0x14, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00,
    0x00, 0xa4, 0x81, 0x00, 0x00, 0x00, 0x00, 0x61, 0x2e, 0x74, 0x78, 0x74,
    0x01, 0x00, 0x10, 0x00, 0x05, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00,
    0x05, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x50, 0x4b, 0x01, 0x02,
    0x2d, 0x03, 0x2d, 0x00, 0x00, 0x00, 0x08, 0x00, 0x00, 0x00, 0x21, 0x00,
    0x2a, 0x91, 0x9d, 0xe8, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff,
    0x09, 0x00, 0x1c, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00,
    0xed, 0x81, 0xff, 0xff, 0xff, 0xff, 0x70, 0x6b, 0x67, 0x2f, 0x62, 0x2e,
    0x74, 0x78, 0x74, 0x01, 0x00, 0x18, 0x00, 0x88, 0x13, 0x00, 0x00, 0x00,
    0x00, 0x00, 0x00, 0x16, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x3c,
    0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x50, 0x4b, 0x06, 0x06, 0x2c,
    0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x2d, 0x00, 0x2d, 0x00, 0x00,
    0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x02, 0x00, 0x00, 0x00, 0x00,
    0x00, 0x00, 0x00, 0x02, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x9a,
    0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x8d, 0x00, 0x00, 0x00, 0x00,
    0x00, 0x00, 0x00, 0x50, 0x4b, 0x06, 0x07, 0x00, 0x00, 0x00, 0x00, 0x27,
    0x01, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x01, 0x00, 0x00, 0x00, 0x50,
    0x4b, 0x05, 0x06, 0x00, 0x00, 0x00, 0x00, 0x02, 0x00, 0x02, 0x00, 0x9a,
    0x00, 0x00, 0x00, 0x8d, 0x00, 0x00, 0x00, 0x00, 0x00};

TEST_F(ZipTest, Zip64Read) {
  std::string S(std::begin(Zip64Sample), std::end(Zip64Sample));
  ASSERT_NE(S.find("PK\x06\x06"), std::string::npos);
  ASSERT_NE(S.find("PK\x06\x07"), std::string::npos);
  Expected<ZipReader> R = openBytes(Zip64Sample);
  ASSERT_TRUE(bool(R)) << toString(R.takeError());
  ASSERT_EQ(R->entries().size(), 2u);
  EXPECT_EQ(R->entries()[1].Name, "pkg/b.txt");
  EXPECT_EQ(R->entries()[1].UncompressedSize, 5000u);
  EXPECT_EQ(R->entries()[1].unixMode(), 0100755u);
  EXPECT_EQ(readEntry(*R, "a.txt"), "alpha");
  EXPECT_EQ(readEntry(*R, "pkg/b.txt"), std::string(5000, 'z'));
}

// The mode of an output entry made from an untrusted one: permission bits
// only (no setuid, setgid or sticky), always a regular file, 0644 if none.
TEST(ZipFileMode, PermissionBitsOnly) {
  EXPECT_EQ(zipFileMode(0100755), 0100755u);
  EXPECT_EQ(zipFileMode(0104777), 0100777u);
  EXPECT_EQ(zipFileMode(0107755), 0100755u);
  EXPECT_EQ(zipFileMode(0120777), 0100777u);
  EXPECT_EQ(zipFileMode(0), ZipDefaultFileMode);
  EXPECT_EQ(zipFileMode(07000), ZipDefaultFileMode);
}

// libzip writes no empty zips: committing one is an error, and nothing is
// left behind.
TEST_F(ZipTest, EmptyZip) {
  std::string P = Dir + "/empty.zip";
  Expected<ZipWriter> W = ZipWriter::create(P);
  ASSERT_TRUE(bool(W));
  EXPECT_NE(toString(W->commit()).find("no entries"), std::string::npos);
  EXPECT_FALSE(sys::fs::exists(P));
}

// Nothing is visible before commit, and a writer dropped without commit
// leaves nothing.
TEST_F(ZipTest, NothingBeforeCommit) {
  std::string P = Dir + "/late.zip";
  {
    Expected<ZipWriter> W = ZipWriter::create(P);
    ASSERT_TRUE(bool(W));
    ASSERT_FALSE(bool(W->add("a", bytes("x"), ZipMethod::Stored)));
    EXPECT_FALSE(sys::fs::exists(P));
  }
  EXPECT_FALSE(sys::fs::exists(P));
  std::error_code EC;
  EXPECT_TRUE(sys::fs::directory_iterator(Dir, EC) ==
              sys::fs::directory_iterator());
}

TEST_F(ZipTest, NotAZip) {
  EXPECT_NE(openError(bytes("short")).find("not a zip file"), std::string::npos);
  EXPECT_NE(openError(std::vector<uint8_t>(100, 'x')).find("not a zip file"),
            std::string::npos);
  EXPECT_NE(openError({}).find("not a zip file (empty)"), std::string::npos);
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

/// The local header of Name in Z (offset).
size_t localOffset(const std::vector<uint8_t> &Z, StringRef Name) {
  std::string S(Z.begin(), Z.end());
  size_t Pos = 0;
  while ((Pos = S.find("PK\x03\x04", Pos)) != std::string::npos) {
    uint16_t Len = support::endian::read16le(&Z[Pos + 26]);
    if (S.compare(Pos + 30, Len, Name.str()) == 0)
      return Pos;
    ++Pos;
  }
  ADD_FAILURE() << "no local header " << Name.str();
  return 0;
}

/// The offset of Name's (compressed) data in Z.
size_t dataOffset(const std::vector<uint8_t> &Z, StringRef Name) {
  size_t L = localOffset(Z, Name);
  return L + 30 + support::endian::read16le(&Z[L + 26]) +
         support::endian::read16le(&Z[L + 28]);
}

TEST_F(ZipTest, CorruptContents) {
  std::vector<uint8_t> Z = sample();
  // Flip a byte of the stored entry's data: the CRC catches it.
  std::vector<uint8_t> M = Z;
  ASSERT_EQ(M[dataOffset(Z, "a.txt")], 'a');
  M[dataOffset(Z, "a.txt")] ^= 1;
  Expected<ZipReader> R = openBytes(M);
  ASSERT_TRUE(bool(R));
  EXPECT_NE(readEntry(*R, "a.txt").find("CRC-32 mismatch"), std::string::npos);
  // Corrupt the deflate stream.
  M = Z;
  M[dataOffset(Z, "pkg/b.txt")] = 0xff;
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

// What libzip checks (ZIP_CHECKCONS: the end record, the central directory
// against every local header) and what the reader adds for wheels (methods,
// encryption, names, sizes of stored entries), each on a zip broken in one
// way; the reader's own checks see central directory and local header
// changed alike, as a consistent zip would carry them.
TEST_F(ZipTest, StructuralErrors) {
  std::vector<uint8_t> Z = sample();
  size_t A = centralOffset(Z, "a.txt"), B = centralOffset(Z, "pkg/b.txt");
  size_t LA = localOffset(Z, "a.txt");

  auto Expect = [&](std::vector<uint8_t> M, StringRef Want) {
    std::string E = openError(M);
    EXPECT_NE(E.find(Want.str()), std::string::npos)
        << "want '" << Want.str() << "', got '" << E << "'";
  };
  // Central directory field at CentralAt, local header field at LocalAt.
  auto Both16 = [&](size_t CentralAt, size_t LocalAt, uint16_t V) {
    std::vector<uint8_t> M = Z;
    support::endian::write16le(&M[A + CentralAt], V);
    support::endian::write16le(&M[LA + LocalAt], V);
    return M;
  };
  auto BothName = [&](const char *Name) {
    std::vector<uint8_t> M = Z;
    std::copy_n(Name, 5, &M[A + 46]);
    std::copy_n(Name, 5, &M[LA + 30]);
    return M;
  };
  Expect(Both16(10, 8, 12), "entry 'a.txt': compression method 12 is not "
                            "supported (only stored and deflate)");
  Expect(Both16(8, 6, 1), "entry 'a.txt': encrypted entries are not supported");
  Expect(BothName("../x/"), "entry '../x/': invalid name ('..' path component)");
  Expect(BothName("/abcd"), "entry '/abcd': invalid name (absolute path)");
  Expect(BothName("a//bc"), "invalid name (empty path component)");
  Expect(BothName("a\\bcd"), "invalid name (backslash in name)");
  {
    std::vector<uint8_t> M = Z;
    support::endian::write32le(&M[A + 20], 4);
    support::endian::write32le(&M[LA + 18], 4);
    Expect(M, "entry 'a.txt': stored entry with compressed size 4 != size 5");
  }
  // a.txt (stored) grown over pkg/b.txt's local header and data, in its
  // central directory entry and local header alike: libzip accepts it, the
  // reader finds the entries needing more bytes than the file has.
  {
    size_t LB = localOffset(Z, "pkg/b.txt"), LC = localOffset(Z, "pkg/c");
    uint32_t Grown = static_cast<uint32_t>(LC - (LA + 30 + 5));
    ASSERT_EQ(LB, LA + 30 + 5 + 5);
    std::vector<uint8_t> M = Z;
    for (size_t At : {A + 20, A + 24, LA + 18, LA + 22})
      support::endian::write32le(&M[At], Grown);
    Expect(M, "overlaps other entries: the entries need more than the file's");
  }
  // Only the central directory changed: libzip finds the local header
  // disagreeing.
  std::vector<uint8_t> M = Z;
  support::endian::write16le(&M[A + 10], 12);
  Expect(M, "'test.zip': inconsistent zip");
  // Two entries pointing at one local header.
  M = Z;
  support::endian::write32le(&M[B + 42],
                             static_cast<uint32_t>(localOffset(Z, "pkg/c")));
  Expect(M, "'test.zip': not a zip file");
  // Data running into the central directory.
  M = Z;
  support::endian::write32le(&M[B + 20], 1u << 20);
  support::endian::write32le(&M[B + 24], 1u << 20);
  Expect(M, "'test.zip': not a zip file");
  // Entry count larger than the directory.
  M = Z;
  size_t End = M.size() - 22;
  support::endian::write16le(&M[End + 8], 500);
  support::endian::write16le(&M[End + 10], 500);
  Expect(M, "'test.zip': inconsistent zip");
  // Bytes prepended shift every offset.
  M = Z;
  M.insert(M.begin(), 16, 0);
  Expect(M, "'test.zip': not a zip file");
  // Duplicate names (central and local header both renamed).
  M = Z;
  std::copy_n("a.txt", 5, &M[centralOffset(Z, "pkg/c") + 46]);
  std::copy_n("a.txt", 5, &M[localOffset(Z, "pkg/c") + 30]);
  Expect(M, "'test.zip': duplicate entry names");
}

} // namespace
