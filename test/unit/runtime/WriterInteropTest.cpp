//===- WriterInteropTest.cpp - Archives from lib/format's ArchiveWriter ---===//
//
// The project's writer and reader must agree, in particular on the
// frame_offset/frame_size extension (docs/format-extensions.md).
//
//===----------------------------------------------------------------------===//

#include "TestSupport.h"

#include "kpack/ArchiveReader.h"
#include "kpack/ArchiveWriter.h"

#include <gtest/gtest.h>

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
                   kpack::ArchiveCompression::ZstdPerKernel, true}),
    [](const auto &Info) { return std::string(Info.param.Name); });

} // namespace
