//===- EmissionTest.cpp - kpack/Emission.h --------------------------------===//
//
// The emission library on synthetic inputs: minimal AMDGPU code objects
// (ELF headers that pass checkArchiveEntry), a yaml2obj host binary with an
// uncompressed and a CCOB bundle, archives read back with the runtime's
// reader. Real compiler and linker output is covered by the lit tests
// (test/lit/convert, test/lit/linker, test/lit/cli).
//
//===----------------------------------------------------------------------===//

#include "kpack/ArchiveReader.h"
#include "kpack/Emission.h"

#include "llvm/ADT/SmallString.h"
#include "llvm/ADT/StringExtras.h"
#include "llvm/BinaryFormat/ELF.h"
#include "llvm/Object/OffloadBundle.h"
#include "llvm/ObjectYAML/yaml2obj.h"
#include "llvm/Support/Compression.h"
#include "llvm/Support/Endian.h"
#include "llvm/Support/FileSystem.h"
#include "llvm/Support/MathExtras.h"
#include "llvm/Support/MemoryBuffer.h"
#include "llvm/Support/Path.h"
#include "llvm/Support/YAMLTraits.h"
#include "llvm/Support/raw_ostream.h"

#include "ElfTestObjects.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <cstdio>
#include <sys/resource.h>
#include <sys/wait.h>
#include <unistd.h>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <map>
#include <string>
#include <vector>

using namespace kpack;
namespace endian = llvm::support::endian;

namespace {

const unsigned Gfx1100 = llvm::ELF::EF_AMDGPU_MACH_AMDGCN_GFX1100;
const unsigned Gfx90aXnackOn = llvm::ELF::EF_AMDGPU_MACH_AMDGCN_GFX90A |
                               llvm::ELF::EF_AMDGPU_FEATURE_XNACK_ON_V4;

/// A minimal AMDGPU code object: an ELF header for Flags, then Size bytes of
/// Fill (so that objects differ in content, not only in size).
std::vector<uint8_t> codeObject(unsigned Flags, uint8_t Fill,
                                size_t Size = 200) {
  std::vector<uint8_t> H = kpack::test::amdgpuHeader(Flags);
  H.insert(H.end(), Size, Fill);
  return H;
}

std::vector<uint8_t> readSource(const EntrySource &S) {
  ReadBuffers Buf;
  const uint8_t *View = nullptr;
  size_t Size = 0;
  Status St = S.read(Buf, View, Size);
  EXPECT_FALSE(St) << St.message();
  return std::vector<uint8_t>(View, View + Size);
}

CodeObjectRef refOf(const std::vector<uint8_t> &Bytes, std::string Target,
                    uint32_t Index, std::string Origin) {
  CodeObjectRef C;
  C.Index = Index;
  C.TargetId = Target;
  C.EntryId = "hipv4-amdgcn-amd-amdhsa--" + Target;
  C.Size = Bytes.size();
  C.Source = EntrySource::fromBytes(Bytes.data(), Bytes.size());
  C.Origin = std::move(Origin);
  return C;
}

std::vector<uint8_t> readFile(const std::string &Path) {
  auto B = llvm::MemoryBuffer::getFile(Path, false, false);
  if (!B)
    return {};
  return std::vector<uint8_t>((*B)->getBuffer().bytes_begin(),
                              (*B)->getBuffer().bytes_end());
}

void writeFile(const std::string &Path, const std::vector<uint8_t> &Bytes) {
  llvm::sys::fs::create_directories(llvm::sys::path::parent_path(Path));
  std::ofstream(Path, std::ios::binary)
      .write(reinterpret_cast<const char *>(Bytes.data()), Bytes.size());
}

std::unique_ptr<ArchiveReader> openArchive(const std::string &Path) {
  std::unique_ptr<ArchiveReader> R;
  Status S = ArchiveReader::open(Path, R);
  EXPECT_FALSE(S) << Path << ": " << S.message();
  return R;
}

std::vector<uint8_t> entryBytes(const ArchiveReader &R, const std::string &Key,
                                const std::string &Arch) {
  const ArchiveReader::Entry *E = R.find(Key, Arch);
  EXPECT_NE(E, nullptr) << Key << " " << Arch;
  std::vector<uint8_t> Out;
  if (E) {
    EXPECT_FALSE(R.read(*E, Out));
  }
  return Out;
}

class EmissionTest : public ::testing::Test {
protected:
  void SetUp() override {
    llvm::SmallString<128> D;
    ASSERT_FALSE(llvm::sys::fs::createUniqueDirectory("kpack-emit", D));
    Dir = D.str().str();
  }
  void TearDown() override { llvm::sys::fs::remove_directories(Dir); }
  std::string Dir;
};

//===----------------------------------------------------------------------===//
// CompressionSettings
//===----------------------------------------------------------------------===//

TEST(CompressionSettings, OneCheckForEveryWriter) {
  auto Default = CompressionSettings::parse("zstd", std::nullopt);
  ASSERT_TRUE(static_cast<bool>(Default));
  EXPECT_EQ(Default->Scheme, ArchiveCompression::ZstdPerKernel);
  EXPECT_EQ(Default->Level, 3);
  auto None = CompressionSettings::parse("none", std::nullopt);
  ASSERT_TRUE(static_cast<bool>(None));
  EXPECT_EQ(None->Scheme, ArchiveCompression::None);
  auto High = CompressionSettings::parse("zstd-per-kernel", 22);
  ASSERT_TRUE(static_cast<bool>(High));
  EXPECT_EQ(High->Level, 22);
  EXPECT_EQ(toString(CompressionSettings::parse("zstd", 23).takeError()),
            "zstd level 23 is not in 1..22");
  EXPECT_EQ(toString(CompressionSettings::parse("zstd", 0).takeError()),
            "zstd level 0 is not in 1..22");
  EXPECT_EQ(toString(CompressionSettings::parse("none", 5).takeError()),
            "a compression level needs --compression zstd, zstd-long or "
            "zstd-shared");
  EXPECT_EQ(toString(CompressionSettings::parse("lz4", std::nullopt)
                         .takeError()),
            "unknown compression 'lz4' (expected one of none, zstd, "
            "zstd-long, zstd-shared)");
}

TEST(CompressionSettings, ReleaseGradeAndSharedSegments) {
  // Each scheme's own default level; the release grade is only reachable by
  // its option name (its TOC name is zstd-per-kernel's).
  auto Long = CompressionSettings::parse("zstd-long", std::nullopt);
  ASSERT_TRUE(static_cast<bool>(Long));
  EXPECT_EQ(Long->Scheme, ArchiveCompression::ZstdPerKernelLong);
  EXPECT_EQ(Long->Level, 19);
  auto Shared = CompressionSettings::parse("zstd-shared", std::nullopt);
  ASSERT_TRUE(static_cast<bool>(Shared));
  EXPECT_EQ(Shared->Scheme, ArchiveCompression::ZstdSharedSegments);
  EXPECT_EQ(Shared->Level, 9);
  auto TocName = CompressionSettings::parse("zstd-shared-segments", 12);
  ASSERT_TRUE(static_cast<bool>(TocName));
  EXPECT_EQ(TocName->Scheme, ArchiveCompression::ZstdSharedSegments);
  EXPECT_EQ(TocName->Level, 12);
  for (ArchiveCompression C :
       {ArchiveCompression::None, ArchiveCompression::ZstdPerKernel,
        ArchiveCompression::ZstdPerKernelLong,
        ArchiveCompression::ZstdSharedSegments}) {
    auto Parsed =
        CompressionSettings::parse(CompressionSettings::optionName(C),
                                   std::nullopt);
    ASSERT_TRUE(static_cast<bool>(Parsed));
    EXPECT_EQ(Parsed->Scheme, C);
  }
}

//===----------------------------------------------------------------------===//
// ArchiveSet
//===----------------------------------------------------------------------===//

TEST_F(EmissionTest, SingleArchiveKeysMetadataAndFamily) {
  std::vector<uint8_t> A = codeObject(Gfx1100, 1),
                       B = codeObject(Gfx90aXnackOn, 2);
  ArchiveLayout L;
  L.ArchivePath = Dir + "/sub/all.kpack";
  L.GroupName = "grp";
  ArchiveSet Set(L);
  ASSERT_FALSE(static_cast<bool>(Set.addAll(
      "lib/libx.so",
      {refOf(A, "gfx1100", 0, "x: 0"), refOf(B, "gfx90a:xnack+", 3, "x: 3")},
      {{"target", "t"}, {"source_prefix", "p"}})));
  EXPECT_EQ(Set.targets(),
            (std::vector<std::string>{"gfx1100", "gfx90a:xnack+"}));
  auto W = Set.write();
  ASSERT_TRUE(static_cast<bool>(W)) << toString(W.takeError());
  ASSERT_EQ(W->size(), 1u);
  EXPECT_EQ((*W)[0].Stats.Entries, 2u);
  EXPECT_EQ((*W)[0].Deduplicated, 0u);

  auto R = openArchive(L.ArchivePath);
  ASSERT_TRUE(R);
  EXPECT_EQ(R->groupName(), "grp");
  EXPECT_EQ(R->gfxArchFamily(), "multi"); // defaultArchFamily of one archive
  EXPECT_EQ(entryBytes(*R, "lib/libx.so#0", "gfx1100"), A);
  EXPECT_EQ(entryBytes(*R, "lib/libx.so#3", "gfx90a:xnack+"), B);
  const ArchiveReader::Entry *E = R->find("lib/libx.so#3", "gfx90a:xnack+");
  ASSERT_NE(E, nullptr);
  EXPECT_EQ(E->Metadata,
            (std::vector<std::pair<std::string, std::string>>{
                {"target", "t"}, {"source_prefix", "p"}}));
}

TEST_F(EmissionTest, PerTargetArchivesTakeTheTargetAsFamily) {
  std::vector<uint8_t> A = codeObject(Gfx1100, 1),
                       B = codeObject(Gfx90aXnackOn, 2);
  for (bool ByFunction : {false, true}) {
    SCOPED_TRACE(ByFunction);
    ArchiveLayout L;
    if (ByFunction)
      L.PathForTarget = [&](llvm::StringRef T) {
        return Dir + "/fn/" + T.str() + "/c_" + T.str() + ".kpack";
      };
    else {
      L.Dir = Dir + "/dir";
      L.Name = "app";
    }
    L.GroupName = "g";
    L.Compression.Scheme = ArchiveCompression::None;
    ArchiveSet Set(L);
    ASSERT_FALSE(static_cast<bool>(Set.add("app#0", refOf(A, "gfx1100", 0, "a"))));
    ASSERT_FALSE(static_cast<bool>(
        Set.add("app#0", refOf(B, "gfx90a:xnack+", 0, "b"))));
    auto W = Set.write();
    ASSERT_TRUE(static_cast<bool>(W)) << toString(W.takeError());
    ASSERT_EQ(W->size(), 2u);
    EXPECT_EQ((*W)[0].TargetId, "gfx1100");
    EXPECT_EQ((*W)[1].TargetId, "gfx90a:xnack+");
    std::string P0 = ByFunction ? Dir + "/fn/gfx1100/c_gfx1100.kpack"
                                : Dir + "/dir/app_gfx1100.kpack";
    EXPECT_EQ((*W)[0].Path, P0);
    auto R = openArchive((*W)[1].Path);
    ASSERT_TRUE(R);
    EXPECT_EQ(R->gfxArchFamily(), "gfx90a:xnack+");
    EXPECT_EQ(R->gfxArches(), std::vector<std::string>{"gfx90a:xnack+"});
    EXPECT_EQ(entryBytes(*R, "app#0", "gfx90a:xnack+"), B);
  }
}

// Identical code objects under different keys share one stored blob: the
// TOC entries carry the same ordinal; objects of the same size with other
// bytes are never merged.
TEST_F(EmissionTest, IdenticalCodeObjectsAreStoredOnce) {
  std::vector<uint8_t> A = codeObject(Gfx1100, 1), A2 = A,
                       Other = codeObject(Gfx1100, 9);
  for (ArchiveCompression Scheme :
       {ArchiveCompression::None, ArchiveCompression::ZstdPerKernel}) {
    for (unsigned Threads : {1u, 4u}) {
      SCOPED_TRACE(Threads);
      ArchiveLayout L;
      L.ArchivePath = Dir + "/d" + std::to_string(Threads) +
                      compressionSchemeName(Scheme) + ".kpack";
      L.Compression.Scheme = Scheme;
      L.Threads = Threads;
      ArchiveSet Set(L);
      ASSERT_FALSE(static_cast<bool>(Set.add("a#0", refOf(A, "gfx1100", 0, "a"))));
      ASSERT_FALSE(static_cast<bool>(
          Set.add("b#0", refOf(Other, "gfx1100", 0, "other"))));
      ASSERT_FALSE(static_cast<bool>(Set.add("c#0", refOf(A2, "gfx1100", 0, "c"))));
      auto W = Set.write();
      ASSERT_TRUE(static_cast<bool>(W)) << toString(W.takeError());
      EXPECT_EQ((*W)[0].Deduplicated, 1u);
      EXPECT_EQ((*W)[0].Stats.Entries, 3u);
      auto R = openArchive(L.ArchivePath);
      ASSERT_TRUE(R);
      EXPECT_EQ(R->find("a#0", "gfx1100")->Ordinal, 0u);
      EXPECT_EQ(R->find("b#0", "gfx1100")->Ordinal, 1u);
      EXPECT_EQ(R->find("c#0", "gfx1100")->Ordinal, 0u);
      EXPECT_EQ(entryBytes(*R, "c#0", "gfx1100"), A);
      EXPECT_EQ(entryBytes(*R, "b#0", "gfx1100"), Other);
    }
  }
  // Without deduplication each entry has its own blob.
  ArchiveLayout L;
  L.ArchivePath = Dir + "/nodedup.kpack";
  L.DeduplicateIdentical = false;
  ArchiveSet Set(L);
  ASSERT_FALSE(static_cast<bool>(Set.add("a#0", refOf(A, "gfx1100", 0, "a"))));
  ASSERT_FALSE(static_cast<bool>(Set.add("c#0", refOf(A2, "gfx1100", 0, "c"))));
  auto W = Set.write();
  ASSERT_TRUE(static_cast<bool>(W));
  EXPECT_EQ((*W)[0].Deduplicated, 0u);
  EXPECT_EQ(openArchive(L.ArchivePath)->find("c#0", "gfx1100")->Ordinal, 1u);
}

// A device entry that is no code object for its target fails the write with
// its origin named; nothing is left: no archive, no directory made for one.
TEST_F(EmissionTest, BadCodeObjectLeavesNoTrace) {
  std::vector<uint8_t> Good = codeObject(Gfx1100, 1),
                       Wrong = codeObject(Gfx1100, 2);
  ArchiveLayout L;
  L.Dir = Dir + "/new/dirs";
  L.Name = "n";
  ArchiveSet Set(L);
  ASSERT_FALSE(static_cast<bool>(Set.add("n#0", refOf(Good, "gfx1100", 0, "good"))));
  ASSERT_FALSE(static_cast<bool>(
      Set.add("n#1", refOf(Wrong, "gfx90a:xnack+", 1, "lib/x.so: bundle 1"))));
  auto W = Set.write();
  ASSERT_FALSE(static_cast<bool>(W));
  EXPECT_EQ(toString(W.takeError()),
            "lib/x.so: bundle 1: code object is built for gfx1100, not "
            "gfx90a:xnack+");
  EXPECT_FALSE(llvm::sys::fs::exists(Dir + "/new"));
}

TEST_F(EmissionTest, OpaqueEntriesOnlyWhenAllowedAndNotFromBundles) {
  std::vector<uint8_t> Blob = {'d', 'b'};
  CodeObjectRef File;
  File.TargetId = "gfx1100";
  File.Size = Blob.size();
  File.Source = EntrySource::fromBytes(Blob.data(), Blob.size());
  File.Origin = "'x.dat' as 'gfx1100'";
  CodeObjectRef FromBundle = File;
  FromBundle.EntryId = "hipv4-amdgcn-amd-amdhsa--gfx1100";
  FromBundle.Origin = "bundle";

  ArchiveLayout L;
  L.ArchivePath = Dir + "/o.kpack";
  ArchiveSet Strict(L);
  ASSERT_FALSE(static_cast<bool>(Strict.add("db", File)));
  EXPECT_EQ(toString(Strict.write().takeError()),
            "'x.dat' as 'gfx1100': not an AMDGPU code object");

  L.AllowOpaqueEntries = true;
  ArchiveSet Lax(L);
  ASSERT_FALSE(static_cast<bool>(Lax.add("db", File)));
  ASSERT_TRUE(static_cast<bool>(Lax.write()));
  ArchiveSet Bundled(L);
  ASSERT_FALSE(static_cast<bool>(Bundled.add("k#0", FromBundle)));
  EXPECT_EQ(toString(Bundled.write().takeError()),
            "bundle: not an AMDGPU code object");
}

// Empty device entries hold no code for their target: skipped by every
// writer (the loader then finds no entry, as the runtime found no code
// object in the fat binary).
TEST_F(EmissionTest, EmptyDeviceEntriesAreSkipped) {
  std::vector<uint8_t> A = codeObject(Gfx1100, 1), Empty;
  ArchiveLayout L;
  L.Dir = Dir;
  L.Name = "e";
  ArchiveSet Set(L);
  ASSERT_FALSE(static_cast<bool>(Set.add("e#0", refOf(A, "gfx1100", 0, "a"))));
  ASSERT_FALSE(static_cast<bool>(
      Set.add("e#0", refOf(Empty, "gfx90a:xnack+", 0, "empty"))));
  EXPECT_EQ(Set.targets(), std::vector<std::string>{"gfx1100"});
  auto W = Set.write();
  ASSERT_TRUE(static_cast<bool>(W));
  EXPECT_EQ(W->size(), 1u);
}

TEST_F(EmissionTest, AddErrorsNameTheOrigin) {
  std::vector<uint8_t> A = codeObject(Gfx1100, 1);
  ArchiveLayout L;
  L.Dir = Dir;
  L.Name = "e";
  ArchiveSet Set(L);
  ASSERT_FALSE(static_cast<bool>(Set.add("e#0", refOf(A, "gfx1100", 0, "a"))));
  EXPECT_EQ(toString(Set.add("e#0", refOf(A, "gfx1100", 0, "again"))),
            "again: duplicate archive entry 'e#0' for gfx1100");
  EXPECT_EQ(toString(Set.add("e#1", refOf(A, "../../x", 1, "evil"))),
            "evil: arch '../../x' is not a target ID");
}

TEST_F(EmissionTest, WriteEmptyOnlyForASingleArchive) {
  ArchiveLayout L;
  L.ArchivePath = Dir + "/empty.kpack";
  ArchiveSet Quiet(L);
  auto W = Quiet.write();
  ASSERT_TRUE(static_cast<bool>(W));
  EXPECT_TRUE(W->empty());
  EXPECT_FALSE(llvm::sys::fs::exists(L.ArchivePath));
  L.WriteEmpty = true;
  ArchiveSet Always(L);
  W = Always.write();
  ASSERT_TRUE(static_cast<bool>(W));
  ASSERT_EQ(W->size(), 1u);
  EXPECT_TRUE(openArchive(L.ArchivePath)->entries().empty());
}

//===----------------------------------------------------------------------===//
// FatHostBinary and EmittedHostBinary
//===----------------------------------------------------------------------===//

std::vector<uint8_t> compressBundle(const std::vector<uint8_t> &Plain) {
  auto In = llvm::MemoryBuffer::getMemBuffer(
      llvm::StringRef(reinterpret_cast<const char *>(Plain.data()),
                      Plain.size()),
      "bundle", false);
  llvm::compression::Params P(llvm::compression::zstd::isAvailable()
                                  ? llvm::DebugCompressionType::Zstd
                                  : llvm::DebugCompressionType::Zlib);
  auto Out = llvm::object::CompressedOffloadBundle::compress(P, *In, 3);
  EXPECT_TRUE(static_cast<bool>(Out));
  if (!Out) {
    llvm::consumeError(Out.takeError());
    return {};
  }
  return std::vector<uint8_t>((*Out)->getBuffer().bytes_begin(),
                              (*Out)->getBuffer().bytes_end());
}

/// A non-PIE executable (yaml2obj) whose .hip_fatbin holds bundle 0
/// (uncompressed: gfx1100, gfx90a:xnack+ and an empty gfx942 entry) and
/// bundle 1 (CCOB: gfx1100, gfx90a:xnack+), and two wrappers pointing at
/// bundle 1 and bundle 0.
struct FatImage {
  std::vector<uint8_t> Objects[2][2]; ///< [bundle][gfx1100, gfx90a:xnack+]
  std::vector<uint8_t> Bytes;
};

FatImage makeFatImage() {
  FatImage F;
  for (unsigned B = 0; B < 2; ++B) {
    F.Objects[B][0] = codeObject(Gfx1100, 0x10 + B);
    F.Objects[B][1] = codeObject(Gfx90aXnackOn, 0x20 + B);
  }
  const std::string Host = "host-x86_64-unknown-linux-gnu-";
  const std::string Dev = "hipv4-amdgcn-amd-amdhsa--";
  std::vector<uint8_t> B0 = encodeBundle(
      {{Host, nullptr, 0},
       {Dev + "gfx1100", F.Objects[0][0].data(), F.Objects[0][0].size()},
       {Dev + "gfx90a:xnack+", F.Objects[0][1].data(), F.Objects[0][1].size()},
       {Dev + "gfx942", nullptr, 0}},
      /*Align=*/8);
  std::vector<uint8_t> B1 = compressBundle(encodeBundle(
      {{Host, nullptr, 0},
       {Dev + "gfx1100", F.Objects[1][0].data(), F.Objects[1][0].size()},
       {Dev + "gfx90a:xnack+", F.Objects[1][1].data(),
        F.Objects[1][1].size()}},
      /*Align=*/8));
  constexpr uint64_t FatbinAddr = 0x1000, Bundle1Addr = 0x2000;
  std::vector<uint8_t> Fatbin = B0;
  EXPECT_LE(Fatbin.size(), Bundle1Addr - FatbinAddr);
  Fatbin.resize(Bundle1Addr - FatbinAddr, 0);
  Fatbin.insert(Fatbin.end(), B1.begin(), B1.end());
  const uint64_t TailAddr = FatbinAddr + Fatbin.size();
  EXPECT_LT(TailAddr + 8, 0x5000u);

  std::vector<uint8_t> Wrappers = kpack::test::hipfWrapper(Bundle1Addr);
  std::vector<uint8_t> W1 = kpack::test::hipfWrapper(FatbinAddr);
  Wrappers.insert(Wrappers.end(), W1.begin(), W1.end());
  kpack::test::FatHostLayout L;
  L.Fatbin = std::move(Fatbin);
  L.Wrappers = std::move(Wrappers);
  L.SegmentAddr = 0x6020;
  F.Bytes = kpack::test::objectFromYaml(kpack::test::fatHostYaml(L));
  return F;
}

TEST_F(EmissionTest, FatHostBinaryCodeObjects) {
  FatImage F = makeFatImage();
  std::string Path = Dir + "/prog";
  writeFile(Path, F.Bytes);
  auto Fat = FatHostBinary::open(Path);
  ASSERT_TRUE(static_cast<bool>(Fat)) << toString(Fat.takeError());
  EXPECT_EQ(Fat->path(), Path);
  EXPECT_TRUE(Fat->isConvertible());
  EXPECT_EQ(Fat->analysis().Bundles.size(), 2u);
  auto Objects = Fat->codeObjects();
  ASSERT_TRUE(static_cast<bool>(Objects)) << toString(Objects.takeError());
  // Bundle by bundle in section order, device entries in bundle order (the
  // empty one included: ArchiveSet decides about it).
  ASSERT_EQ(Objects->size(), 5u);
  const std::vector<std::pair<uint32_t, std::string>> Expected = {
      {0, "gfx1100"}, {0, "gfx90a:xnack+"}, {0, "gfx942"},
      {1, "gfx1100"}, {1, "gfx90a:xnack+"}};
  for (size_t I = 0; I < Expected.size(); ++I) {
    EXPECT_EQ((*Objects)[I].Index, Expected[I].first);
    EXPECT_EQ((*Objects)[I].TargetId, Expected[I].second);
    EXPECT_EQ((*Objects)[I].EntryId,
              "hipv4-amdgcn-amd-amdhsa--" + Expected[I].second);
  }
  EXPECT_EQ((*Objects)[3].Origin,
            Path + ": bundle 1 (.hip_fatbin offset 0x1000), entry "
                   "'hipv4-amdgcn-amd-amdhsa--gfx1100'");
  // The compressed bundle's entries, their reads announced, read in any
  // order: decoded once, held until the last announced read, released.
  (*Objects)[3].Source.willRead();
  (*Objects)[4].Source.willRead();
  EXPECT_EQ(Fat->decodeCounters().Held, 0u);
  EXPECT_EQ(readSource((*Objects)[4].Source), F.Objects[1][1]);
  EXPECT_EQ(Fat->decodeCounters().Decodes, 1u);
  EXPECT_EQ(Fat->decodeCounters().Held, 1u);
  EXPECT_EQ(readSource((*Objects)[3].Source), F.Objects[1][0]);
  EXPECT_EQ(Fat->decodeCounters().Decodes, 1u);
  EXPECT_EQ(Fat->decodeCounters().Held, 0u) << "not released after its last entry";
  // A read nobody announced decodes it for itself, and releases it.
  EXPECT_EQ(readSource((*Objects)[3].Source), F.Objects[1][0]);
  EXPECT_EQ(Fat->decodeCounters().Decodes, 2u);
  EXPECT_EQ(Fat->decodeCounters().Held, 0u);
  EXPECT_EQ(Fat->decodeCounters().PeakHeld, 1u);
  // Uncompressed bundles are read from the file.
  EXPECT_EQ(readSource((*Objects)[0].Source), F.Objects[0][0]);
  EXPECT_EQ(readSource((*Objects)[1].Source), F.Objects[0][1]);
  EXPECT_EQ((*Objects)[2].Size, 0u);
  EXPECT_EQ(Fat->decodeCounters().Decodes, 2u);
}

/// A non-PIE executable with Count compressed bundles, each holding a
/// gfx1100 and a gfx90a:xnack+ code object of ObjectSize bytes (a fill
/// that compresses to almost nothing), one wrapper per bundle.
std::vector<uint8_t> manyBundleImage(unsigned Count,
                                     size_t ObjectSize = 4096) {
  const std::string Dev = "hipv4-amdgcn-amd-amdhsa--";
  std::vector<uint8_t> Fatbin;
  std::vector<uint8_t> Wrappers;
  for (unsigned B = 0; B < Count; ++B) {
    std::vector<uint8_t> A =
        codeObject(Gfx1100, static_cast<uint8_t>(B), ObjectSize);
    std::vector<uint8_t> X =
        codeObject(Gfx90aXnackOn, static_cast<uint8_t>(0x80 + B), ObjectSize);
    std::vector<uint8_t> Bundle = compressBundle(encodeBundle(
        {{"host-x86_64-unknown-linux-gnu-", nullptr, 0},
         {Dev + "gfx1100", A.data(), A.size()},
         {Dev + "gfx90a:xnack+", X.data(), X.size()}},
        /*Align=*/8));
    Fatbin.resize(llvm::alignTo(Fatbin.size(), 0x1000), 0);
    std::vector<uint8_t> W = kpack::test::hipfWrapper(0x1000 + Fatbin.size());
    Wrappers.insert(Wrappers.end(), W.begin(), W.end());
    Fatbin.insert(Fatbin.end(), Bundle.begin(), Bundle.end());
  }
  kpack::test::FatHostLayout L;
  L.SegmentAddr = llvm::alignTo(0x1000 + Fatbin.size() + 8, 0x1000) + 0x1020;
  L.Fatbin = std::move(Fatbin);
  L.Wrappers = std::move(Wrappers);
  return kpack::test::objectFromYaml(kpack::test::fatHostYaml(L));
}

// split --gpu-targets, split-wheel --targets: only some entries of each
// compressed bundle go to an archive. Each bundle is released after its
// last read, so at most one (per thread) is held at a time, whatever the
// number of bundles, and none once the archives are written.
TEST_F(EmissionTest, BundlesReleasedWhenSomeTargetsAreLeftOut) {
  constexpr unsigned Count = 12;
  writeFile(Dir + "/in/prog", manyBundleImage(Count));
  for (CompressionSettings C :
       {CompressionSettings{ArchiveCompression::ZstdPerKernel, 3},
        CompressionSettings{ArchiveCompression::ZstdSharedSegments, 9}}) {
    SCOPED_TRACE(CompressionSettings::optionName(C.Scheme).str());
    auto Fat = FatHostBinary::open(Dir + "/in/prog");
    ASSERT_TRUE(static_cast<bool>(Fat)) << toString(Fat.takeError());
    auto Objects = Fat->codeObjects();
    ASSERT_TRUE(static_cast<bool>(Objects));
    ASSERT_EQ(Objects->size(), 2 * Count);
    ArchiveLayout L;
    L.Dir = Dir + "/out";
    L.Name = "prog";
    L.Threads = 1;
    L.Compression = C;
    ArchiveSet Set(L);
    for (const CodeObjectRef &R : *Objects)
      if (R.TargetId == "gfx1100")
        ASSERT_FALSE(static_cast<bool>(
            Set.add("prog#" + std::to_string(R.Index), R)));
    auto Written = Set.write();
    ASSERT_TRUE(static_cast<bool>(Written)) << toString(Written.takeError());
    FatHostBinary::DecodeCounters N = Fat->decodeCounters();
    EXPECT_EQ(N.Held, 0u);
    EXPECT_EQ(N.PeakHeld, 1u);
    EXPECT_EQ(N.Decodes,
              C.Scheme == ArchiveCompression::ZstdSharedSegments ? 2 * Count
                                                                 : Count);
    auto R = openArchive(Dir + "/out/prog_gfx1100.kpack");
    ASSERT_TRUE(R);
    EXPECT_EQ(R->entries().size(), Count);
  }
}

TEST_F(EmissionTest, FatHostBinaryErrors) {
  writeFile(Dir + "/text", {'h', 'i'});
  EXPECT_EQ(toString(FatHostBinary::open(Dir + "/text").takeError()),
            "not an ELF file");
  EXPECT_FALSE(static_cast<bool>(FatHostBinary::open(Dir + "/missing")));
}

/// Converts the fat image into Dir/bin/prog with per-target archives in
/// Dir/.kpack (TheRock's layout), through the library's phases.
struct Converted {
  std::string Binary;
  std::vector<uint8_t> Metadata;
};

Converted convertFat(const std::string &Dir, const FatImage &F) {
  writeFile(Dir + "/in/prog", F.Bytes);
  auto Fat = FatHostBinary::open(Dir + "/in/prog");
  EXPECT_TRUE(static_cast<bool>(Fat));
  if (!Fat) {
    llvm::consumeError(Fat.takeError());
    return {};
  }
  ArchiveLayout L;
  L.Dir = Dir + "/.kpack";
  L.Name = "blas_lib";
  L.GroupName = "blas_lib";
  ArchiveSet Set(L);
  auto Objects = Fat->codeObjects();
  EXPECT_TRUE(static_cast<bool>(Objects));
  EXPECT_FALSE(static_cast<bool>(Set.addAll("pfx/bin/prog", *Objects)));
  auto W = Set.write();
  EXPECT_TRUE(static_cast<bool>(W));
  Converted C;
  auto Meta = encodeMetadata("pfx/bin/prog", {"../.kpack/blas_lib_@GFXARCH@.kpack"});
  EXPECT_TRUE(static_cast<bool>(Meta));
  C.Metadata = *Meta;
  auto Image = Fat->rewrite(C.Metadata);
  EXPECT_TRUE(static_cast<bool>(Image)) << toString(Image.takeError());
  C.Binary = Dir + "/bin/prog";
  writeFile(C.Binary, *Image);
  return C;
}

TEST_F(EmissionTest, EmittedHostBinaryReachesItsArchives) {
  FatImage F = makeFatImage();
  Converted C = convertFat(Dir, F);
  // Files the pattern must not pick: another name, no target ID.
  writeFile(Dir + "/.kpack/other_gfx1100.kpack", {1});
  writeFile(Dir + "/.kpack/blas_lib_notatarget.kpack", {1});

  auto E = EmittedHostBinary::open(C.Binary);
  ASSERT_TRUE(static_cast<bool>(E)) << toString(E.takeError());
  EXPECT_EQ(E->metadata().KernelName, "pfx/bin/prog");
  EXPECT_EQ(E->metadata().SearchPaths,
            std::vector<std::string>{"../.kpack/blas_lib_@GFXARCH@.kpack"});
  // A converted binary's room is what is left of .hip_fatbin.
  EXPECT_EQ(E->metadataRoom(), C.Metadata.size());
  EXPECT_EQ(E->archives(),
            (std::vector<std::string>{Dir + "/.kpack/blas_lib_gfx1100.kpack",
                                      Dir + "/.kpack/blas_lib_gfx90a:xnack+.kpack"}));
  auto Objects = E->codeObjects();
  ASSERT_TRUE(static_cast<bool>(Objects)) << toString(Objects.takeError());
  ASSERT_EQ(Objects->size(), 4u);
  std::map<std::pair<uint32_t, std::string>, std::vector<uint8_t>> Got;
  for (const CodeObjectRef &Ref : *Objects) {
    EXPECT_EQ(Ref.EntryId, "hipv4-amdgcn-amd-amdhsa--" + Ref.TargetId);
    Got[{Ref.Index, Ref.TargetId}] = readSource(Ref.Source);
  }
  EXPECT_EQ((Got[{0, "gfx1100"}]), F.Objects[0][0]);
  EXPECT_EQ((Got[{1, "gfx90a:xnack+"}]), F.Objects[1][1]);

  // They join another archive under other keys: adoption without rewriting
  // the code.
  ArchiveLayout L;
  L.ArchivePath = Dir + "/merged.kpack";
  ArchiveSet Set(L);
  ASSERT_FALSE(static_cast<bool>(Set.addAll("new/name", *Objects)));
  ASSERT_TRUE(static_cast<bool>(Set.write()));
  EXPECT_EQ(entryBytes(*openArchive(L.ArchivePath), "new/name#1", "gfx1100"),
            F.Objects[1][0]);
}

TEST_F(EmissionTest, EmittedMetadataIsReplacedInPlace) {
  FatImage F = makeFatImage();
  Converted C = convertFat(Dir, F);
  auto E = EmittedHostBinary::open(C.Binary);
  ASSERT_TRUE(static_cast<bool>(E)) << toString(E.takeError());

  auto Shorter = encodeMetadata("p/prog", {"x_@GFXARCH@.kpack"});
  ASSERT_TRUE(static_cast<bool>(Shorter));
  ASSERT_LT(Shorter->size(), C.Metadata.size());
  auto Image = E->withMetadata(*Shorter);
  ASSERT_TRUE(static_cast<bool>(Image)) << toString(Image.takeError());
  std::vector<uint8_t> Before = readFile(C.Binary);
  ASSERT_EQ(Image->size(), Before.size());
  size_t Changed = 0;
  for (size_t I = 0; I < Before.size(); ++I)
    Changed += (*Image)[I] != Before[I];
  EXPECT_GT(Changed, 0u);
  EXPECT_LE(Changed, C.Metadata.size()); // only the room changes
  writeFile(Dir + "/bin/prog2", *Image);
  auto Again = EmittedHostBinary::open(Dir + "/bin/prog2");
  ASSERT_TRUE(static_cast<bool>(Again)) << toString(Again.takeError());
  EXPECT_EQ(Again->metadata().KernelName, "p/prog");
  EXPECT_EQ(Again->metadataRoom(), C.Metadata.size());

  auto Longer = encodeMetadata(std::string(300, 'k'), {"x.kpack"});
  ASSERT_TRUE(static_cast<bool>(Longer));
  EXPECT_EQ(toString(E->withMetadata(*Longer).takeError()),
            "'" + C.Binary + "': the new kpack metadata (" +
                std::to_string(Longer->size()) + " bytes) does not fit in the " +
                std::to_string(C.Metadata.size()) +
                " bytes of .rocm_kpack_ref; link it with ld.kpack "
                "--kpack-metadata-room=" +
                std::to_string(Longer->size()) + " or more");
}

// A shared library linked by ld.kpack with --kpack-metadata-room: its
// metadata lives in .rocm_kpack_ref with that room, its archives are found
// by the @GFXARCH@ pattern, its code objects are those of the fat object, and
// longer metadata is written in place up to the room.
TEST_F(EmissionTest, EmittedBinaryFromLdKpack) {
  const std::string Src = std::string(KPACK_SOURCE_DIR);
  const std::string Obj = Dir + "/single.o", Lib = Dir + "/lib/libs.so";
  llvm::sys::fs::create_directories(Dir + "/lib");
  std::string Compile = std::string(KPACK_PROGRAM_CLANGXX) +
                        " -x hip -nogpuinc -nogpulib -I" + Src +
                        "/test/inputs --offload-arch=gfx1100"
                        " --offload-arch=gfx90a:xnack+ -fPIC -c " +
                        Src + "/test/lit/linker/Inputs/single.hip -o " + Obj;
  ASSERT_EQ(std::system(Compile.c_str()), 0) << Compile;
  std::string Link = std::string(KPACK_PROGRAM_CLANGXX) + " -shared -nostdlib " +
                     Obj + " -fuse-ld=lld --ld-path=" KPACK_LD_KPACK
                     " -Wl,--kpack-dir=" + Dir + "/lib/.kpack"
                     " -Wl,--kpack-name=libs -Wl,--kpack-metadata-room=1024"
                     " -o " + Lib;
  ASSERT_EQ(std::system(Link.c_str()), 0) << Link;

  auto E = EmittedHostBinary::open(Lib);
  ASSERT_TRUE(static_cast<bool>(E)) << toString(E.takeError());
  EXPECT_EQ(E->metadata().KernelName, "libs");
  EXPECT_EQ(E->metadata().SearchPaths,
            std::vector<std::string>{".kpack/libs_@GFXARCH@.kpack"});
  EXPECT_EQ(E->metadataRoom(), 1024u);
  EXPECT_EQ(E->archives(),
            (std::vector<std::string>{Dir + "/lib/.kpack/libs_gfx1100.kpack",
                                      Dir + "/lib/.kpack/libs_gfx90a:xnack+.kpack"}));
  auto Objects = E->codeObjects();
  ASSERT_TRUE(static_cast<bool>(Objects)) << toString(Objects.takeError());
  auto Fat = FatHostBinary::open(Obj);
  ASSERT_TRUE(static_cast<bool>(Fat)) << toString(Fat.takeError());
  auto FatObjects = Fat->codeObjects();
  ASSERT_TRUE(static_cast<bool>(FatObjects));
  ASSERT_EQ(Objects->size(), 2u);
  ASSERT_EQ(FatObjects->size(), 2u);
  for (size_t I = 0; I < 2; ++I) {
    EXPECT_EQ((*Objects)[I].Index, 0u);
    EXPECT_EQ((*Objects)[I].TargetId, (*FatObjects)[I].TargetId);
    EXPECT_EQ(readSource((*Objects)[I].Source),
              readSource((*FatObjects)[I].Source));
  }

  // TheRock's split metadata fits the room; only the room's bytes change.
  auto Split = encodeMetadata("math-libs/BLAS/stage/lib/libs.so",
                              {"../.kpack/blas_lib_@GFXARCH@.kpack"});
  ASSERT_TRUE(static_cast<bool>(Split));
  auto Image = E->withMetadata(*Split);
  ASSERT_TRUE(static_cast<bool>(Image)) << toString(Image.takeError());
  std::vector<uint8_t> Before = readFile(Lib);
  ASSERT_EQ(Image->size(), Before.size());
  size_t First = Before.size(), Last = 0;
  for (size_t I = 0; I < Before.size(); ++I)
    if ((*Image)[I] != Before[I]) {
      First = std::min(First, I);
      Last = I;
    }
  ASSERT_LT(First, Before.size());
  EXPECT_LT(Last - First, 1024u);
  writeFile(Dir + "/lib/libs2.so", *Image);
  auto Again = EmittedHostBinary::open(Dir + "/lib/libs2.so");
  ASSERT_TRUE(static_cast<bool>(Again)) << toString(Again.takeError());
  EXPECT_EQ(Again->metadata().KernelName, "math-libs/BLAS/stage/lib/libs.so");
  EXPECT_EQ(Again->metadataRoom(), 1024u);

  auto TooLong = encodeMetadata(std::string(1100, 'k'), {"x.kpack"});
  ASSERT_TRUE(static_cast<bool>(TooLong));
  std::string Msg = toString(E->withMetadata(*TooLong).takeError());
  EXPECT_NE(Msg.find("does not fit in the 1024 bytes"), std::string::npos)
      << Msg;
  EXPECT_NE(Msg.find("--kpack-metadata-room="), std::string::npos) << Msg;
}

TEST_F(EmissionTest, FatBinariesAreNotEmitted) {
  FatImage F = makeFatImage();
  writeFile(Dir + "/fat", F.Bytes);
  EXPECT_EQ(toString(EmittedHostBinary::open(Dir + "/fat").takeError()),
            "no HIPK wrapper: not a kpack host binary");
}

} // namespace

namespace {
// The same in resident memory: 16 bundles of 2 x 8 MiB decoded. Holding
// every decoded bundle to the end grows the peak by 256 MiB more; one per
// thread at a time (plus a batch of read entries) stays far below.
TEST_F(EmissionTest, PeakMemoryDoesNotGrowWithTheBundles) {
  constexpr unsigned Count = 16;
  constexpr size_t ObjectSize = size_t(8) << 20;
  writeFile(Dir + "/in/prog", manyBundleImage(Count, ObjectSize));
  fflush(nullptr);
  pid_t Child = ::fork();
  ASSERT_GE(Child, 0);
  if (Child == 0) {
    struct rusage Before, After;
    ::getrusage(RUSAGE_SELF, &Before);
    auto Fat = FatHostBinary::open(Dir + "/in/prog");
    if (!Fat) {
      llvm::consumeError(Fat.takeError());
      ::_exit(101);
    }
    auto Objects = Fat->codeObjects();
    if (!Objects) {
      llvm::consumeError(Objects.takeError());
      ::_exit(102);
    }
    ArchiveLayout L;
    L.Dir = Dir + "/out";
    L.Name = "prog";
    L.Threads = 2;
    ArchiveSet Set(L);
    for (const CodeObjectRef &R : *Objects)
      if (R.TargetId == "gfx1100")
        if (llvm::Error E = Set.add("prog#" + std::to_string(R.Index), R)) {
          llvm::consumeError(std::move(E));
          ::_exit(103);
        }
    auto Written = Set.write();
    if (!Written) {
      llvm::consumeError(Written.takeError());
      ::_exit(104);
    }
    ::getrusage(RUSAGE_SELF, &After);
    long GrowthMiB = (After.ru_maxrss - Before.ru_maxrss) / 1024;
    std::fprintf(stderr, "peak RSS growth: %ld MiB\n", GrowthMiB);
    ::_exit(GrowthMiB < 160 ? 0 : 1);
  }
  int Status = 0;
  ASSERT_EQ(::waitpid(Child, &Status, 0), Child);
  ASSERT_TRUE(WIFEXITED(Status));
  EXPECT_EQ(WEXITSTATUS(Status), 0) << "peak RSS grew with the bundles";
}


} // namespace
