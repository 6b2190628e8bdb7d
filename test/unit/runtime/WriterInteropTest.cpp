//===- WriterInteropTest.cpp - Archives from lib/format's ArchiveWriter ---===//
//
// The project's writer and reader must agree, in particular on the
// frame_offset/frame_size extension and format version 2
// (docs/format-extensions.md).
//
//===----------------------------------------------------------------------===//

#include "TestSupport.h"

#include "kpack/ArchiveReader.h"
#include "kpack/ArchiveWriter.h"
#include "rocm_kpack/kpack.h"

#include <gtest/gtest.h>

#include <algorithm>

using namespace kpack_test;

namespace {

struct WriterCase {
  const char *Name;
  kpack::ArchiveCompression Compression;
  bool FrameOffsets;
};

class WriterInterop : public ::testing::TestWithParam<WriterCase> {};

TEST_P(WriterInterop, ReaderLoadsEveryEntry) {
  kpack::ArchiveWriterOptions Opts;
  Opts.GroupName = "interop";
  Opts.GfxArchFamily = "gfx110X";
  Opts.Compression = GetParam().Compression;
  Opts.FrameOffsets = GetParam().FrameOffsets;
  Opts.Threads = 1;
  kpack::ArchiveWriter Writer(Opts);
  std::vector<TestEntry> Entries;
  for (int I = 0; I < 5; ++I)
    for (const char *Arch : {"gfx1100", "gfx1101"})
      Entries.push_back(
          {"lib/libw.so#" + std::to_string(I), Arch,
           payload(std::string(Arch) + std::to_string(I), 1000 + 333 * I)});
  for (const TestEntry &E : Entries)
    ASSERT_TRUE(Writer
                    .addEntry(E.Key, E.Arch,
                              kpack::EntrySource::fromBytes(E.Data.data(),
                                                            E.Data.size()))
                    .isOk());
  TempDir Dir;
  const std::string Path = Dir.file("w.kpack");
  kpack::Status S = Writer.write(Path);
  ASSERT_TRUE(S.isOk()) << S.message();

  std::unique_ptr<kpack::ArchiveReader> R;
  kpack::Status Err = kpack::ArchiveReader::open(Path, R);
  ASSERT_FALSE(Err) << Err.message();
  EXPECT_EQ(R->groupName(), "interop");
  EXPECT_EQ(R->gfxArches(), (std::vector<std::string>{"gfx1100", "gfx1101"}));
  ASSERT_EQ(R->entries().size(), Entries.size());
  for (const TestEntry &E : Entries) {
    const kpack::ArchiveReader::Entry *Found = R->find(E.Key, E.Arch);
    ASSERT_NE(Found, nullptr);
    EXPECT_EQ(Found->HasDataOffset,
              GetParam().FrameOffsets ||
                  GetParam().Compression == kpack::ArchiveCompression::None);
    std::vector<uint8_t> Out;
    Err = R->read(*Found, Out);
    ASSERT_FALSE(Err) << Err.message();
    EXPECT_EQ(Out, E.Data);
  }
}

// Deduplicated archives: several TOC entries share one ordinal (what
// upstream's reader follows); every one of them reads back, with its entry
// metadata.
TEST_P(WriterInterop, AliasedOrdinalsAndEntryMetadata) {
  kpack::ArchiveWriterOptions Opts;
  Opts.GroupName = "dedup";
  Opts.Compression = GetParam().Compression;
  Opts.FrameOffsets = GetParam().FrameOffsets;
  Opts.Deduplicate = true;
  kpack::ArchiveWriter Writer(Opts);
  std::vector<uint8_t> Same = payload("same", 4000), Other = payload("o", 4000);
  const std::vector<std::pair<std::string, const std::vector<uint8_t> *>>
      Keys = {{"a#0", &Same}, {"b#0", &Other}, {"c#0", &Same}, {"d#3", &Same}};
  for (const auto &[Key, Data] : Keys)
    ASSERT_TRUE(Writer
                    .addEntry(Key, "gfx1100",
                              kpack::EntrySource::fromBytes(Data->data(),
                                                            Data->size()),
                              {{"source_prefix", Key}})
                    .isOk());
  TempDir Dir;
  const std::string Path = Dir.file("d.kpack");
  kpack::ArchiveWriteStats Stats;
  kpack::Status S = Writer.write(Path, &Stats);
  ASSERT_TRUE(S.isOk()) << S.message();
  EXPECT_EQ(Stats.Deduplicated, 2u);

  std::unique_ptr<kpack::ArchiveReader> R;
  kpack::Status Err = kpack::ArchiveReader::open(Path, R);
  ASSERT_FALSE(Err) << Err.message();
  for (const auto &[Key, Data] : Keys) {
    const kpack::ArchiveReader::Entry *Found = R->find(Key, "gfx1100");
    ASSERT_NE(Found, nullptr);
    EXPECT_EQ(Found->Ordinal, Data == &Same ? 0u : 1u);
    EXPECT_EQ(Found->Metadata,
              (std::vector<std::pair<std::string, std::string>>{
                  {"source_prefix", Key}}));
    std::vector<uint8_t> Out;
    Err = R->read(*Found, Out);
    ASSERT_FALSE(Err) << Err.message();
    EXPECT_EQ(Out, *Data);
  }
}

INSTANTIATE_TEST_SUITE_P(
    Writer, WriterInterop,
    ::testing::Values(
        WriterCase{"none", kpack::ArchiveCompression::None, false},
        WriterCase{"zstd", kpack::ArchiveCompression::ZstdPerKernel, false},
        WriterCase{"zstd_frame_offsets",
                   kpack::ArchiveCompression::ZstdPerKernel, true},
        WriterCase{"zstd_long", kpack::ArchiveCompression::ZstdPerKernelLong,
                   true},
        // Version 2 always records frame locations.
        WriterCase{"zstd_shared",
                   kpack::ArchiveCompression::ZstdSharedSegments, true}),
    [](const auto &Info) { return std::string(Info.param.Name); });

/// Code objects with content in common: each holds one of two common
/// blocks and bytes of its own.
std::vector<TestEntry> overlappingEntries() {
  const std::vector<uint8_t> Common[2] = {payload("common-0", 30000),
                                          payload("common-1", 20000)};
  std::vector<TestEntry> Entries;
  for (int I = 0; I < 6; ++I)
    for (const char *Arch : {"gfx1100", "gfx90a:xnack+"}) {
      std::vector<uint8_t> Data =
          payload(std::string(Arch) + std::to_string(I), 3000 + 100 * I);
      const std::vector<uint8_t> &C = Common[I % 2];
      Data.insert(Data.begin() + 1000, C.begin(), C.end());
      Entries.push_back({"lib/libs.so#" + std::to_string(I), Arch, Data});
    }
  return Entries;
}

std::string writeArchive(const std::vector<TestEntry> &Entries,
                         kpack::ArchiveCompression C, const TempDir &Dir,
                         const std::string &Name,
                         kpack::ArchiveWriteStats *Stats = nullptr) {
  kpack::ArchiveWriterOptions Opts;
  Opts.GroupName = "shared";
  Opts.Compression = C;
  Opts.ZstdLevel = kpack::defaultZstdLevel(C);
  kpack::ArchiveWriter Writer(Opts);
  for (const TestEntry &E : Entries)
    EXPECT_FALSE(Writer.addEntry(E.Key, E.Arch,
                                 kpack::EntrySource::fromBytes(E.Data.data(),
                                                               E.Data.size())));
  const std::string Path = Dir.file(Name);
  kpack::Status S = Writer.write(Path, Stats);
  EXPECT_FALSE(S) << S.message();
  return Path;
}

// Content common to several code objects is stored once, as segments the
// entries list; every entry reads back, through the C++ reader and the C API.
TEST(WriterInteropShared, SegmentsHoldTheCommonContent) {
  TempDir Dir;
  std::vector<TestEntry> Entries = overlappingEntries();
  kpack::ArchiveWriteStats Shared, Plain;
  std::string Path =
      writeArchive(Entries, kpack::ArchiveCompression::ZstdSharedSegments, Dir,
                   "s.kpack", &Shared);
  writeArchive(Entries, kpack::ArchiveCompression::ZstdPerKernel, Dir,
               "p.kpack", &Plain);
  EXPECT_GT(Shared.SharedSegments, 0u);
  // All of the common blocks but the chunks cut by their edges.
  EXPECT_GE(Shared.SharedBytes, 45000u);
  EXPECT_LT(Shared.FileBytes, Plain.FileBytes / 2);

  std::unique_ptr<kpack::ArchiveReader> R;
  ASSERT_FALSE(kpack::ArchiveReader::open(Path, R));
  EXPECT_EQ(R->formatVersion(), 2u);
  EXPECT_EQ(R->scheme(), kpack::ArchiveReader::Scheme::ZstdSharedSegments);
  const kpack::ArchiveReader::SegmentIndex *Index = nullptr;
  ASSERT_FALSE(R->segmentIndex(Index));
  EXPECT_EQ(Index->Segments.size(), Shared.SharedSegments);
  kpack_archive_t A = nullptr;
  ASSERT_EQ(kpack_open(Path.c_str(), &A), KPACK_SUCCESS);
  for (const TestEntry &E : Entries) {
    const kpack::ArchiveReader::Entry *Found = R->find(E.Key, E.Arch);
    ASSERT_NE(Found, nullptr);
    std::vector<uint32_t> Segments;
    ASSERT_FALSE(R->entrySegments(*Found, Segments));
    EXPECT_FALSE(Segments.empty()) << E.Key << " " << E.Arch;
    std::vector<uint8_t> Out;
    kpack::Status Err = R->read(*Found, Out);
    ASSERT_FALSE(Err) << Err.message();
    EXPECT_EQ(Out, E.Data);
    void *Data = nullptr;
    size_t Size = 0;
    ASSERT_EQ(kpack_get_kernel(A, E.Key.c_str(), E.Arch.c_str(), &Data, &Size),
              KPACK_SUCCESS);
    EXPECT_EQ(std::vector<uint8_t>(static_cast<uint8_t *>(Data),
                                   static_cast<uint8_t *>(Data) + Size),
              E.Data);
    kpack_free_kernel(Data);
  }
  kpack_close(A);
}

// Each segment is decoded once and kept while the cache is within its limit;
// past it, the least recently used segments are dropped and decoded again
// when needed.
TEST(WriterInteropShared, SegmentCacheKeepsWithinItsLimit) {
  TempDir Dir;
  std::vector<TestEntry> Entries = overlappingEntries();
  std::string Path = writeArchive(
      Entries, kpack::ArchiveCompression::ZstdSharedSegments, Dir, "s.kpack");
  std::unique_ptr<kpack::ArchiveReader> R;
  ASSERT_FALSE(kpack::ArchiveReader::open(Path, R));
  EXPECT_EQ(R->cachedSegmentBytes(), 0u);
  std::vector<uint8_t> Out;
  const kpack::ArchiveReader::Entry *First = R->find("lib/libs.so#0", "gfx1100");
  const kpack::ArchiveReader::Entry *Second =
      R->find("lib/libs.so#1", "gfx1100");
  ASSERT_TRUE(First && Second);
  ASSERT_FALSE(R->read(*First, Out));
  const uint64_t AfterFirst = R->cachedSegmentBytes();
  EXPECT_GE(AfterFirst, 27000u);
  ASSERT_FALSE(R->read(*First, Out)); // from the cache
  EXPECT_EQ(R->cachedSegmentBytes(), AfterFirst);
  ASSERT_FALSE(R->read(*Second, Out));
  const uint64_t SecondOnly = R->cachedSegmentBytes() - AfterFirst;
  EXPECT_GE(SecondOnly, 17000u);

  // Room for the second entry's segments only: loading the first again
  // drops them, loading the second drops the first's.
  R->setSegmentCacheLimit(std::max(AfterFirst, SecondOnly));
  EXPECT_EQ(R->cachedSegmentBytes(), SecondOnly); // the older ones went
  ASSERT_FALSE(R->read(*First, Out));
  EXPECT_EQ(R->cachedSegmentBytes(), AfterFirst);
  EXPECT_EQ(Out, Entries[0].Data);
  ASSERT_FALSE(R->read(*Second, Out));
  EXPECT_EQ(R->cachedSegmentBytes(), SecondOnly);
  EXPECT_EQ(Out, Entries[2].Data);

  R->setSegmentCacheLimit(1); // below every segment: nothing is kept
  EXPECT_EQ(R->cachedSegmentBytes(), 0u);
  ASSERT_FALSE(R->read(*First, Out)); // decoded for the load alone
  EXPECT_EQ(R->cachedSegmentBytes(), 0u);
  EXPECT_EQ(Out, Entries[0].Data);
}

// writeArchives with archives of different schemes and an interleaved
// order (per-target archives of one host binary): the shared-segments one
// reads its sources a second time for its analysis; both read back.
TEST(WriterInteropShared, WriteArchivesMixesSchemes) {
  TempDir Dir;
  std::vector<TestEntry> Entries = overlappingEntries();
  kpack::ArchiveWriterOptions SharedOpts, PlainOpts;
  SharedOpts.Compression = kpack::ArchiveCompression::ZstdSharedSegments;
  SharedOpts.BatchBytes = 1; // one entry per batch
  kpack::ArchiveWriter Shared(SharedOpts), Plain(PlainOpts);
  std::vector<std::pair<size_t, size_t>> Order;
  for (const TestEntry &E : Entries) {
    kpack::ArchiveWriter &W = E.Arch == "gfx1100" ? Shared : Plain;
    Order.emplace_back(&W == &Shared ? 0 : 1, W.size());
    ASSERT_FALSE(W.addEntry(E.Key, E.Arch,
                            kpack::EntrySource::fromBytes(E.Data.data(),
                                                          E.Data.size())));
  }
  std::vector<kpack::ArchiveWriter::Job> Jobs = {
      {&Shared, Dir.file("shared.kpack"), {}},
      {&Plain, Dir.file("plain.kpack"), {}}};
  kpack::Status S = kpack::ArchiveWriter::writeArchives(Jobs, Order);
  ASSERT_FALSE(S) << S.message();
  EXPECT_GT(Jobs[0].Stats.SharedSegments, 0u);
  EXPECT_EQ(Jobs[1].Stats.SharedSegments, 0u);
  for (const kpack::ArchiveWriter::Job &J : Jobs) {
    std::unique_ptr<kpack::ArchiveReader> R;
    ASSERT_FALSE(kpack::ArchiveReader::open(J.Path, R));
    EXPECT_EQ(R->formatVersion(), &J == &Jobs[0] ? 2u : 1u);
    for (const TestEntry &E : Entries) {
      const kpack::ArchiveReader::Entry *Found = R->find(E.Key, E.Arch);
      if (!Found)
        continue;
      std::vector<uint8_t> Out;
      ASSERT_FALSE(R->read(*Found, Out));
      EXPECT_EQ(Out, E.Data);
    }
    EXPECT_EQ(R->entries().size(), Entries.size() / 2);
  }
}

} // namespace
