//===- BundleCodecTest.cpp - kpack bundle codec against clang's bundler ---===//
//
// Inputs are made at test time with clang++-22 and clang-offload-bundler-22;
// every decoded payload is compared with what the bundler unbundles.
//
//===----------------------------------------------------------------------===//

#include "kpack/BundleCodec.h"

#include "TestArchive.h"

#include <gtest/gtest.h>
#include <zlib.h>
#include <zstd.h>

#include <cstdlib>
#include <cstring>

using namespace kpack;
using namespace kpack::test;

namespace {

// Absolute paths found at configure time (cmake/KpackPrograms.cmake).
const std::string Clangxx = KPACK_PROGRAM_CLANGXX;
const std::string Bundler = KPACK_PROGRAM_CLANG_OFFLOAD_BUNDLER;
const std::string Objcopy = KPACK_PROGRAM_LLVM_OBJCOPY;
const char *const Host = "host-x86_64-unknown-linux-gnu-";
const char *const Gfx1100 = "hipv4-amdgcn-amd-amdhsa--gfx1100";
const char *const Gfx90a = "hipv4-amdgcn-amd-amdhsa--gfx90a:xnack+";

int run(const std::string &Cmd) {
  int Rc = std::system(Cmd.c_str());
  if (Rc != 0)
    ADD_FAILURE() << "command failed: " << Cmd;
  return Rc;
}

std::vector<uint8_t> slice(const std::vector<uint8_t> &B, size_t From, size_t Len) {
  return std::vector<uint8_t>(B.begin() + From, B.begin() + From + Len);
}

uint64_t le(const std::vector<uint8_t> &B, size_t At, size_t N) {
  uint64_t V = 0;
  for (size_t I = 0; I < N; ++I)
    V |= uint64_t(B[At + I]) << (8 * I);
  return V;
}

void putLE(std::vector<uint8_t> &B, uint64_t V, size_t N) {
  for (size_t I = 0; I < N; ++I)
    B.push_back(uint8_t(V >> (8 * I)));
}

class BundleCodecTest : public ::testing::Test {
protected:
  static void SetUpTestSuite() {
    Dir = makeTempDir();
    ASSERT_FALSE(Dir.empty());
    writeFile(Dir + "/k.hip", [] {
      std::string Src = "#include \"hip_min.h\"\n"
                        "__global__ void kern(int *p) { p[0] = 42; }\n"
                        "__device__ int devvar;\n";
      return std::vector<uint8_t>(Src.begin(), Src.end());
    }());
    std::string Hip = Clangxx + " -x hip -nogpuinc -nogpulib -I" KPACK_SOURCE_DIR
                                "/test/inputs --offload-arch=gfx90a:xnack+ "
                                "--offload-arch=gfx1100 -c '" + Dir + "/k.hip'";
    std::string Bundle = Bundler + " -type=o -bundle-align=4096 ";
    std::string Targets = std::string("-targets=") + Host + "," + Gfx1100 + "," + Gfx90a;
    std::string D = "'" + Dir + "/";
    if (run(Hip + " -o " + D + "plain.o'") ||
        run(Hip + " --offload-compress -o " + D + "ccob.o'") ||
        run(Objcopy + " --dump-section .hip_fatbin=" + D + "plain.fb' " + D + "plain.o'") ||
        run(Objcopy + " --dump-section .hip_fatbin=" + D + "ccob.fb' " + D + "ccob.o'") ||
        run(Bundle + "-unbundle " + Targets + " -input=" + D + "plain.fb' -output=" + D +
            "host.bin' -output=" + D + "gfx1100.co' -output=" + D + "gfx90a.co'") ||
        run(Bundle + "-unbundle " + Targets + " -input=" + D + "ccob.fb' -output=" + D +
            "host.bin' -output=" + D + "ccob-gfx1100.co' -output=" + D + "ccob-gfx90a.co'") ||
        run("env COMPRESSED_BUNDLE_FORMAT_VERSION=2 " + Bundle + "-compress " + Targets +
            " -input=/dev/null -input=" + D + "gfx1100.co' -input=" + D + "gfx90a.co' -output=" +
            D + "v2.ccob'") ||
        run("env COMPRESSED_BUNDLE_FORMAT_VERSION=3 " + Bundle + "-compress " + Targets +
            " -input=/dev/null -input=" + D + "gfx1100.co' -input=" + D + "gfx90a.co' -output=" +
            D + "v3.ccob'") ||
        run(Clangxx + " -shared -fuse-ld=lld -nostdlib "
                      "-Wl,--allow-multiple-definition -o " + D + "linked.so' " + D +
            "plain.o' " + D + "ccob.o' " + D + "plain.o'") ||
        run(Objcopy + " --dump-section .hip_fatbin=" + D + "linked.fb' " + D + "linked.so'"))
      Dir.clear();
  }
  static void TearDownTestSuite() {
    if (!Dir.empty())
      (void)std::system(("rm -rf '" + Dir + "'").c_str());
  }
  void SetUp() override {
    if (Dir.empty())
      FAIL() << "test inputs could not be generated with " << Clangxx << ", " << Bundler
             << " and " << Objcopy << " (see the failed command above)";
  }
  static std::vector<uint8_t> input(const char *Name) { return readFile(Dir + "/" + Name); }

  // The decoded bundle must hold exactly the bundler's unbundled payloads
  // (of plain.o, or of ccob.o if Prefix is "ccob-").
  static void expectClangPayloads(const Bundle &B, const std::string &Prefix = "") {
    ASSERT_EQ(B.Entries.size(), 3u);
    std::map<std::string, std::vector<uint8_t>> Want = {
        {Host, {}},
        {Gfx1100, input((Prefix + "gfx1100.co").c_str())},
        {Gfx90a, input((Prefix + "gfx90a.co").c_str())}};
    for (const BundleEntry &E : B.Entries) {
      ASSERT_TRUE(Want.count(E.Id)) << E.Id;
      EXPECT_EQ(std::vector<uint8_t>(B.payload(E), B.payload(E) + E.Size), Want[E.Id]) << E.Id;
    }
    ASSERT_EQ(B.deviceEntries().size(), 2u);
    EXPECT_EQ(B.deviceEntries()[0]->TargetId, "gfx1100");
    EXPECT_EQ(B.deviceEntries()[1]->TargetId, "gfx90a:xnack+");
  }

  static std::string Dir;
};
std::string BundleCodecTest::Dir;

TEST_F(BundleCodecTest, DecodesUncompressedBundle) {
  std::vector<uint8_t> Fb = input("plain.fb");
  ASSERT_TRUE(isBundle(Fb.data(), Fb.size()));
  Bundle B;
  ASSERT_FALSE(decodeBundle(Fb.data(), Fb.size(), B));
  EXPECT_EQ(B.Compression, BundleCompression::None);
  EXPECT_EQ(B.CcobVersion, 0u);
  EXPECT_EQ(B.EncodedSize, Fb.size());
  EXPECT_EQ(B.Entries[0].Kind, "host");
  EXPECT_EQ(B.Entries[0].Triple, "x86_64-unknown-linux-gnu");
  EXPECT_EQ(B.Entries[1].Kind, "hipv4");
  EXPECT_EQ(B.Entries[1].Triple, "amdgcn-amd-amdhsa");
  expectClangPayloads(B);
}

TEST_F(BundleCodecTest, EncodeMatchesClangOffloadBundler) {
  std::vector<uint8_t> A = input("gfx1100.co"), C = input("gfx90a.co");
  std::vector<uint8_t> Mine = encodeBundle(
      {{Host, nullptr, 0}, {Gfx1100, A.data(), A.size()}, {Gfx90a, C.data(), C.size()}});
  EXPECT_EQ(Mine, input("plain.fb"));
}

TEST_F(BundleCodecTest, DecodesCcobV3FromClang) {
  std::vector<uint8_t> Fb = input("ccob.fb");
  Bundle B;
  ASSERT_FALSE(decodeBundle(Fb.data(), Fb.size(), B));
  EXPECT_EQ(B.Compression, BundleCompression::Zstd);
  EXPECT_EQ(B.CcobVersion, 3u);
  EXPECT_EQ(B.EncodedSize, le(Fb, 8, 8));
  expectClangPayloads(B, "ccob-");
}

// The bundler's -compress output decompresses to exactly the uncompressed
// bundle it writes for the same inputs.
TEST_F(BundleCodecTest, DecodesCcobV2AndV3FromBundler) {
  for (unsigned Version : {2u, 3u}) {
    std::vector<uint8_t> C = input(Version == 2 ? "v2.ccob" : "v3.ccob");
    Bundle B;
    ASSERT_FALSE(decodeBundle(C.data(), C.size(), B));
    EXPECT_EQ(B.CcobVersion, Version);
    EXPECT_EQ(B.EncodedSize, C.size());
    EXPECT_EQ(B.Data, input("plain.fb"));
  }
}

// clang 22 no longer writes v1; derive it from clang's v2 output (same
// fields minus the total size), with trailing padding it must not need.
TEST_F(BundleCodecTest, DecodesCcobV1) {
  std::vector<uint8_t> V2 = input("v2.ccob");
  std::vector<uint8_t> V1 = slice(V2, 0, 8);
  V1[4] = 1;
  std::vector<uint8_t> Rest = slice(V2, 12, V2.size() - 12);
  V1.insert(V1.end(), Rest.begin(), Rest.end());
  size_t Encoded = V1.size();
  V1.resize(V1.size() + 100, 0);
  Bundle B;
  ASSERT_FALSE(decodeBundle(V1.data(), V1.size(), B));
  EXPECT_EQ(B.CcobVersion, 1u);
  EXPECT_EQ(B.EncodedSize, Encoded);
  EXPECT_EQ(B.Data, input("plain.fb"));
}

// zlib (method 0) CCOB: clang here always picks zstd, so recompress clang's
// bundle with zlib under v1, v2 and v3 headers; the bundler must accept them
// too, which shows the hand-made headers are right.
TEST_F(BundleCodecTest, DecodesZlibCcob) {
  std::vector<uint8_t> Plain = input("plain.fb"), V3 = input("v3.ccob");
  uLongf ZSize = compressBound(Plain.size());
  std::vector<uint8_t> Z(ZSize);
  ASSERT_EQ(compress2(Z.data(), &ZSize, Plain.data(), Plain.size(), 6), Z_OK);
  Z.resize(ZSize);
  for (unsigned Version : {1u, 2u, 3u}) {
    SCOPED_TRACE(Version);
    std::vector<uint8_t> C = {'C', 'C', 'O', 'B'};
    putLE(C, Version, 2);
    putLE(C, 0, 2);
    size_t Header = Version == 1 ? 20 : Version == 2 ? 24 : 32;
    if (Version == 2)
      putLE(C, Header + Z.size(), 4);
    if (Version == 3)
      putLE(C, Header + Z.size(), 8);
    putLE(C, Plain.size(), Version == 3 ? 8 : 4);
    C.insert(C.end(), V3.begin() + 24, V3.begin() + 32); // MD5-derived hash
    C.insert(C.end(), Z.begin(), Z.end());
    Bundle B;
    ASSERT_FALSE(decodeBundle(C.data(), C.size(), B));
    EXPECT_EQ(B.Compression, BundleCompression::Zlib);
    EXPECT_EQ(B.CcobVersion, Version);
    EXPECT_EQ(B.EncodedSize, C.size());
    expectClangPayloads(B);
    if (Version >= 2) {
      std::string Path = Dir + "/zlib" + std::to_string(Version) + ".ccob";
      writeFile(Path, C);
      EXPECT_EQ(run(Bundler + " -type=o -unbundle -targets=" + Gfx90a +
                    " -input='" + Path + "' -output='" + Path + ".co'"),
                0);
      EXPECT_EQ(readFile(Path + ".co"), input("gfx90a.co"));
    }
  }
}

// A linked shared library concatenates one bundle per object, each aligned
// to 4096: plain, CCOB, plain (the same object twice, hence the linker's
// --allow-multiple-definition).
TEST_F(BundleCodecTest, SplitsLinkedSection) {
  std::vector<uint8_t> Fb = input("linked.fb");
  std::vector<Bundle> Bundles;
  ASSERT_FALSE(decodeBundleSection(Fb.data(), Fb.size(), Bundles));
  ASSERT_EQ(Bundles.size(), 3u);
  EXPECT_EQ(Bundles[0].SectionOffset, 0u);
  EXPECT_EQ(Bundles[0].Compression, BundleCompression::None);
  EXPECT_EQ(Bundles[1].Compression, BundleCompression::Zstd);
  EXPECT_EQ(Bundles[2].Compression, BundleCompression::None);
  uint64_t PlainSize = input("plain.fb").size();
  uint64_t Second = (PlainSize + 4095) / 4096 * 4096;
  EXPECT_EQ(Bundles[1].SectionOffset, Second);
  EXPECT_EQ(Bundles[2].SectionOffset, (Second + Bundles[1].EncodedSize + 4095) / 4096 * 4096);
  expectClangPayloads(Bundles[0]);
  expectClangPayloads(Bundles[1], "ccob-");
  expectClangPayloads(Bundles[2]);
}

// The scan finds what decoding finds, from the headers alone.
TEST_F(BundleCodecTest, ScanMatchesDecode) {
  std::vector<uint8_t> Fb = input("linked.fb");
  std::vector<BundleExtent> Extents;
  std::vector<Bundle> Bundles;
  ASSERT_FALSE(scanBundleSection(Fb.data(), Fb.size(), Extents));
  ASSERT_FALSE(decodeBundleSection(Fb.data(), Fb.size(), Bundles));
  ASSERT_EQ(Extents.size(), Bundles.size());
  for (size_t I = 0; I < Extents.size(); ++I) {
    SCOPED_TRACE(I);
    EXPECT_EQ(Extents[I].SectionOffset, Bundles[I].SectionOffset);
    EXPECT_EQ(Extents[I].EncodedSize, Bundles[I].EncodedSize);
    EXPECT_EQ(Extents[I].Compression, Bundles[I].Compression);
    EXPECT_EQ(Extents[I].CcobVersion, Bundles[I].CcobVersion);
    EXPECT_EQ(Extents[I].UncompressedSize, Bundles[I].Data.size());
    bool Compressed = Bundles[I].Compression != BundleCompression::None;
    EXPECT_EQ(Extents[I].Entries.size(),
              Compressed ? 0u : Bundles[I].Entries.size());
  }
}

// CCOB v1 records no size: the scan finds the end of a zlib stream.
TEST_F(BundleCodecTest, ScanFindsEndOfZlibV1) {
  std::vector<uint8_t> Plain = input("plain.fb");
  uLongf ZSize = compressBound(Plain.size());
  std::vector<uint8_t> Z(ZSize);
  ASSERT_EQ(compress2(Z.data(), &ZSize, Plain.data(), Plain.size(), 6), Z_OK);
  Z.resize(ZSize);
  std::vector<uint8_t> Fb = {'C', 'C', 'O', 'B'};
  putLE(Fb, 1, 2);
  putLE(Fb, 0, 2);
  putLE(Fb, Plain.size(), 4);
  putLE(Fb, 0, 8); // hash, not checked
  Fb.insert(Fb.end(), Z.begin(), Z.end());
  Fb.resize((Fb.size() + 4095) / 4096 * 4096, 0);
  Fb.insert(Fb.end(), Plain.begin(), Plain.end());
  std::vector<BundleExtent> Extents;
  ASSERT_FALSE(scanBundleSection(Fb.data(), Fb.size(), Extents));
  ASSERT_EQ(Extents.size(), 2u);
  EXPECT_EQ(Extents[0].Compression, BundleCompression::Zlib);
  EXPECT_EQ(Extents[0].EncodedSize, 20 + Z.size());
  EXPECT_EQ(Extents[0].UncompressedSize, Plain.size());
  EXPECT_EQ(Extents[1].SectionOffset, Fb.size() - Plain.size());
  EXPECT_EQ(Extents[1].Entries.size(), 3u);
}

TEST_F(BundleCodecTest, SectionRejectsGarbageBetweenBundles) {
  std::vector<uint8_t> Fb = input("linked.fb");
  std::vector<Bundle> Bundles;
  uint64_t Gap = input("plain.fb").size() + 10; // inside the zero padding
  ASSERT_LT(Gap, Fb.size());
  Fb[Gap] = 0x5a;
  Status S = decodeBundleSection(Fb.data(), Fb.size(), Bundles);
  ASSERT_TRUE(S);
  EXPECT_NE(S.message().find("non-zero byte"), std::string::npos) << S.message();
  // All-zero sections (e.g. a zero-paged fatbin) hold no bundles.
  std::vector<uint8_t> Zeros(8192, 0);
  EXPECT_FALSE(decodeBundleSection(Zeros.data(), Zeros.size(), Bundles));
  EXPECT_TRUE(Bundles.empty());
}

// Every truncation of a real bundle is rejected with an error; random
// corruption never crashes (run under the sanitizer build to catch reads).
TEST_F(BundleCodecTest, MalformedInputsAreErrors) {
  for (const char *Name : {"plain.fb", "v2.ccob", "v3.ccob"}) {
    SCOPED_TRACE(Name);
    std::vector<uint8_t> Good = input(Name);
    Bundle B;
    ASSERT_FALSE(decodeBundle(Good.data(), Good.size(), B));
    for (size_t Len = 0; Len < B.EncodedSize; Len += (Len < 256 ? 1 : 97)) {
      std::vector<uint8_t> Cut = slice(Good, 0, Len);
      Bundle Tmp;
      EXPECT_TRUE(decodeBundle(Cut.data(), Cut.size(), Tmp)) << "length " << Len;
    }
    uint32_t X = 12345;
    for (int Round = 0; Round < 2000; ++Round) {
      std::vector<uint8_t> Bad = Good;
      for (int K = 0; K < 3; ++K) {
        X = X * 1664525u + 1013904223u;
        size_t At = (X >> 8) % std::min<size_t>(Bad.size(), 200);
        Bad[At] ^= uint8_t(1 + (X & 0x7f));
      }
      Bundle Tmp;
      (void)decodeBundle(Bad.data(), Bad.size(), Tmp);
    }
  }
  // Hostile header fields.
  std::vector<uint8_t> Huge = {'C', 'C', 'O', 'B', 3, 0, 1, 0};
  putLE(Huge, 40, 8);
  putLE(Huge, uint64_t(1) << 62, 8);
  Huge.resize(40, 0);
  Bundle B;
  Status S = decodeBundle(Huge.data(), Huge.size(), B);
  ASSERT_TRUE(S);
  EXPECT_NE(S.message().find("implausibly large"), std::string::npos) << S.message();
  std::vector<uint8_t> Many(std::begin("__CLANG_OFFLOAD_BUNDLE__"),
                            std::end("__CLANG_OFFLOAD_BUNDLE__") - 1);
  putLE(Many, uint64_t(1) << 60, 8);
  Many.resize(100, 0);
  S = decodeBundle(Many.data(), Many.size(), B);
  ASSERT_TRUE(S);
  EXPECT_NE(S.message().find("entries"), std::string::npos) << S.message();
  std::vector<uint8_t> Method = input("v3.ccob");
  Method[6] = 7;
  S = decodeBundle(Method.data(), Method.size(), B);
  ASSERT_TRUE(S);
  EXPECT_NE(S.message().find("compression method 7"), std::string::npos);
}

TEST(BundleEntryIdTest, Parses) {
  BundleEntry E;
  ASSERT_FALSE(parseBundleEntryId("hip-amdgcn-amd-amdhsa--gfx11-generic", E));
  EXPECT_EQ(E.Kind, "hip");
  EXPECT_EQ(E.Triple, "amdgcn-amd-amdhsa");
  EXPECT_EQ(E.TargetId, "gfx11-generic");
  ASSERT_FALSE(parseBundleEntryId("hipv4-amdgcn-amd-amdhsa--gfx942:sramecc+:xnack-", E));
  EXPECT_EQ(E.TargetId, "gfx942:sramecc+:xnack-");
  ASSERT_FALSE(parseBundleEntryId("host-x86_64-unknown-linux-gnu-", E));
  EXPECT_EQ(E.Kind, "host");
  EXPECT_EQ(E.Triple, "x86_64-unknown-linux-gnu");
  EXPECT_EQ(E.TargetId, "");
  EXPECT_FALSE(E.isDevice());
  EXPECT_TRUE(parseBundleEntryId("", E));
  EXPECT_TRUE(parseBundleEntryId("nodash", E));
  EXPECT_TRUE(parseBundleEntryId("-amdgcn", E));
  EXPECT_TRUE(parseBundleEntryId("hip-", E));
}

TEST(BundleEncodeTest, AlignsPayloads) {
  const uint8_t P[3] = {1, 2, 3};
  std::vector<uint8_t> B = encodeBundle({{"hip-amdgcn-amd-amdhsa--gfx942", P, 3},
                                         {"hip-amdgcn-amd-amdhsa--gfx1100", P, 2}},
                                        16);
  Bundle D;
  ASSERT_FALSE(decodeBundle(B.data(), B.size(), D));
  ASSERT_EQ(D.Entries.size(), 2u);
  EXPECT_EQ(D.Entries[0].Offset % 16, 0u);
  EXPECT_EQ(D.Entries[1].Offset, D.Entries[0].Offset + 16);
  EXPECT_EQ(D.Entries[1].Size, 2u);
  EXPECT_EQ(B.size(), D.Entries[1].Offset + 2);
}

} // namespace
