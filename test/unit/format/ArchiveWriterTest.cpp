//===- ArchiveWriterTest.cpp - kpack::ArchiveWriter -----------------------===//

#include "kpack/ArchiveWriter.h"

#include "TestArchive.h"

#define ZSTD_STATIC_LINKING_ONLY // ZSTD_getFrameHeader
#include <gtest/gtest.h>
#include <zstd.h>

#include <chrono>
#include <cstring>
#include <fstream>
#include <condition_variable>
#include <mutex>

#include <fcntl.h>
#include <malloc.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <unistd.h>

using namespace kpack;
using namespace kpack::test;

namespace {

std::vector<uint8_t> pattern(size_t Size, unsigned Seed) {
  return patternBytes(Size, Seed);
}

using ArchiveWriterTest = TempDirTest;

// Fills a writer with one entry of each source kind.
void addMixed(ArchiveWriter &W, const std::string &Dir,
              std::vector<uint8_t> &Kept) {
  Kept = pattern(5000, 1);
  ASSERT_FALSE(W.addEntry("lib/libfoo.so#0", "gfx942", EntrySource::fromBytes(
                                                           Kept.data(), Kept.size())));
  std::vector<uint8_t> FileBytes = pattern(20000, 2);
  writeFile(Dir + "/input.bin", FileBytes);
  ASSERT_FALSE(W.addEntry("lib/libfoo.so#0", "gfx1100",
                          EntrySource::fromFileRange(Dir + "/input.bin", 1000, 9000)));
  ASSERT_FALSE(W.addEntry("bin/app#0", "gfx1100", EntrySource::fromCallback(
                                                      [](std::vector<uint8_t> &Out) {
                                                        Out = pattern(3000, 3);
                                                        return Status::ok();
                                                      })));
  ASSERT_FALSE(W.addEntry("bin/app#0", "gfx90a:xnack+",
                          EntrySource::fromOwnedBytes(pattern(0, 4))));
}

TEST_F(ArchiveWriterTest, ZstdRoundTrip) {
  ArchiveWriter W({"blas_lib", "gfx11X", ArchiveCompression::ZstdPerKernel});
  std::vector<uint8_t> Kept;
  addMixed(W, Dir, Kept);
  ArchiveWriteStats Stats;
  ASSERT_FALSE(W.write(Dir + "/out.kpack", &Stats));
  EXPECT_EQ(Stats.Entries, 4u);
  EXPECT_EQ(Stats.OriginalBytes, 5000u + 9000u + 3000u);

  DecodedArchive A;
  ASSERT_EQ(decodeArchive(Dir + "/out.kpack", A), "");
  EXPECT_EQ(A.GroupName, "blas_lib");
  EXPECT_EQ(A.Family, "gfx11X");
  EXPECT_EQ(A.Scheme, "zstd-per-kernel");
  EXPECT_EQ(A.Arches, (std::vector<std::string>{"gfx1100", "gfx90a:xnack+", "gfx942"}));
  EXPECT_EQ(A.TopLevelKeys,
            (std::vector<std::string>{"format_version", "group_name", "gfx_arch_family",
                                      "gfx_arches", "toc", "compression_scheme",
                                      "zstd_offset", "zstd_size"}));
  ASSERT_EQ(A.Entries.size(), 4u);
  std::vector<uint8_t> FileRange = pattern(20000, 2);
  FileRange = std::vector<uint8_t>(FileRange.begin() + 1000, FileRange.begin() + 10000);
  const std::vector<uint8_t> Expected[] = {Kept, FileRange, pattern(3000, 3), {}};
  const char *Keys[] = {"lib/libfoo.so#0", "lib/libfoo.so#0", "bin/app#0", "bin/app#0"};
  const char *Arches[] = {"gfx942", "gfx1100", "gfx1100", "gfx90a:xnack+"};
  for (unsigned I = 0; I < 4; ++I) {
    SCOPED_TRACE(I);
    EXPECT_EQ(A.Entries[I].Key, Keys[I]);
    EXPECT_EQ(A.Entries[I].Arch, Arches[I]);
    EXPECT_EQ(A.Entries[I].Ordinal, I);
    EXPECT_EQ(A.Entries[I].Bytes, Expected[I]);
    EXPECT_TRUE(A.Entries[I].FrameHasContentSize);
    EXPECT_TRUE(A.Entries[I].HasFrameOffset);
  }
}

TEST_F(ArchiveWriterTest, NoneRoundTrip) {
  ArchiveWriter W({"g", "gfx9X", ArchiveCompression::None});
  std::vector<uint8_t> Kept;
  addMixed(W, Dir, Kept);
  ASSERT_FALSE(W.write(Dir + "/out.kpack"));
  DecodedArchive A;
  ASSERT_EQ(decodeArchive(Dir + "/out.kpack", A), "");
  EXPECT_EQ(A.Scheme, "none");
  EXPECT_EQ(A.TopLevelKeys.back(), "blobs");
  ASSERT_EQ(A.Entries.size(), 4u);
  EXPECT_EQ(A.Entries[0].Bytes, Kept);
  EXPECT_EQ(A.Entries[2].Bytes, pattern(3000, 3));
  EXPECT_FALSE(A.Entries[0].HasFrameOffset);
}

// Swapping read buffers exchanges the buffers, so a view into bytes read
// earlier stays valid (SmallVector's own swap copies into an empty side).
TEST(ReadBuffers, SwapKeepsViewsValid) {
  ReadBuffers Worker, Item;
  Worker.Range.assign(100, 7);
  Worker.Produced.assign(50, 9);
  const uint8_t *R = Worker.Range.data(), *P = Worker.Produced.data();
  Item.swap(Worker);
  EXPECT_EQ(Item.Range.data(), R);
  EXPECT_EQ(Item.Produced.data(), P);
  EXPECT_TRUE(Item.holds(R));
  EXPECT_TRUE(Item.holds(P));
  EXPECT_TRUE(Worker.Range.empty());
  EXPECT_FALSE(Worker.holds(R));
}

// Uncompressed entries keep their bytes from the read to the in-order
// write, across batches and threads, while the read buffers are reused.
TEST_F(ArchiveWriterTest, NoneKeepsEveryEntrysBytesAcrossBatches) {
  constexpr size_t Count = 40;
  std::string In = Dir + "/in.bin";
  std::vector<std::vector<uint8_t>> Want;
  std::vector<uint64_t> Offsets;
  int Fd = ::open(In.c_str(), O_CREAT | O_WRONLY, 0644);
  ASSERT_GE(Fd, 0);
  uint64_t At = 0;
  for (size_t I = 0; I < Count; ++I) {
    Want.push_back(pattern(1000 + 37000 * (I % 9), static_cast<unsigned>(I)));
    ASSERT_EQ(::write(Fd, Want.back().data(), Want.back().size()),
              ssize_t(Want.back().size()));
    Offsets.push_back(At);
    At += Want.back().size();
  }
  ::close(Fd);
  ArchiveWriterOptions Opts{"g", "f", ArchiveCompression::None};
  Opts.BatchBytes = 100000;
  Opts.Threads = 2;
  Opts.Deduplicate = false;
  ArchiveWriter W(Opts);
  for (size_t I = 0; I < Count; ++I)
    ASSERT_FALSE(W.addEntry("k#" + std::to_string(I), "gfx942",
                            EntrySource::fromFileRange(In, Offsets[I],
                                                       Want[I].size())));
  ASSERT_FALSE(W.write(Dir + "/out.kpack"));
  DecodedArchive A;
  ASSERT_EQ(decodeArchive(Dir + "/out.kpack", A), "");
  ASSERT_EQ(A.Entries.size(), Count);
  for (size_t I = 0; I < Count; ++I)
    EXPECT_EQ(A.Entries[I].Bytes, Want[I]) << "entry " << I;
}

// Rewriting upstream's sample archives from their own payloads must give
// their exact bytes: same header, blob layout and TOC encoding.
TEST_F(ArchiveWriterTest, ReproducesUpstreamArchives) {
  for (const char *Name : {"test_noop.kpack", "test_zstd.kpack"}) {
    SCOPED_TRACE(Name);
    std::string Upstream = std::string(KPACK_UPSTREAM_TESTDATA) + "/" + Name;
    DecodedArchive U;
    ASSERT_EQ(decodeArchive(Upstream, U), "");
    ArchiveWriterOptions Opts{U.GroupName, U.Family,
                              U.Scheme == "none" ? ArchiveCompression::None
                                                 : ArchiveCompression::ZstdPerKernel};
    Opts.FrameOffsets = false;
    ArchiveWriter W(Opts);
    for (const DecodedEntry &E : U.Entries)
      ASSERT_FALSE(W.addEntry(E.Key, E.Arch,
                              EntrySource::fromBytes(E.Bytes.data(), E.Bytes.size())));
    ASSERT_FALSE(W.write(Dir + "/" + Name));
    EXPECT_EQ(readFile(Dir + "/" + Name), readFile(Upstream));
  }
}

TEST_F(ArchiveWriterTest, OutputIndependentOfThreadsAndBatching) {
  std::vector<std::vector<uint8_t>> Payloads;
  for (unsigned I = 0; I < 40; ++I)
    Payloads.push_back(pattern(1000 + 997 * I, I));
  std::vector<uint8_t> First;
  for (unsigned Threads : {1u, 3u, 8u}) {
    for (uint64_t Batch : {uint64_t(1), uint64_t(64) << 20}) {
      ArchiveWriterOptions Opts{"g", "f", ArchiveCompression::ZstdPerKernel};
      Opts.Threads = Threads;
      Opts.BatchBytes = Batch;
      ArchiveWriter W(Opts);
      for (unsigned I = 0; I < Payloads.size(); ++I)
        ASSERT_FALSE(W.addEntry("k#" + std::to_string(I / 2), I % 2 ? "gfx1100" : "gfx942",
                                EntrySource::fromBytes(Payloads[I].data(),
                                                       Payloads[I].size())));
      std::string Out = Dir + "/t" + std::to_string(Threads) + ".kpack";
      ASSERT_FALSE(W.write(Out));
      std::vector<uint8_t> Bytes = readFile(Out);
      if (First.empty())
        First = Bytes;
      else
        EXPECT_EQ(Bytes, First) << Threads << " threads, batch " << Batch;
    }
  }
  DecodedArchive A;
  ASSERT_EQ(decodeArchive(Dir + "/t1.kpack", A), "");
  ASSERT_EQ(A.Entries.size(), 40u);
  for (unsigned I = 0; I < 40; ++I)
    EXPECT_EQ(A.Entries[I].Bytes, Payloads[A.Entries[I].Ordinal]);
}

// Issue 29: no barrier waits for a batch's slowest entry. Entry 0 is slow:
// its source waits until entry 12 has been read. With batches of a few
// entries (BatchBytes) every other thread would wait for it at the end of
// its batch, so entry 12 would never be read before it is done; now the
// other thread goes on, the results still placed in order.
TEST_F(ArchiveWriterTest, ASlowEntryDoesNotHoldBackTheOthers) {
  constexpr size_t Count = 30, Size = 64 << 10;
  std::mutex M;
  std::condition_variable Cv;
  bool Reached = false, TimedOut = false;
  ArchiveWriterOptions Opts{"g", "f"};
  Opts.Threads = 2;
  Opts.BatchBytes = 4 * Size;
  ArchiveWriter W(Opts);
  for (size_t I = 0; I < Count; ++I)
    ASSERT_FALSE(W.addEntry(
        "k#" + std::to_string(I), "gfx942",
        EntrySource::fromCallback(
            [&, I](std::vector<uint8_t> &Out) {
              std::unique_lock<std::mutex> Lock(M);
              if (I == 0)
                TimedOut = !Cv.wait_for(Lock, std::chrono::seconds(10),
                                        [&] { return Reached; });
              if (I == 12) {
                Reached = true;
                Cv.notify_all();
              }
              Out = pattern(Size, static_cast<unsigned>(I));
              return Status::ok();
            },
            Size)));
  ASSERT_FALSE(W.write(Dir + "/out.kpack"));
  EXPECT_FALSE(TimedOut) << "the other thread waited for entry 0";
  DecodedArchive A;
  ASSERT_EQ(decodeArchive(Dir + "/out.kpack", A), "");
  ASSERT_EQ(A.Entries.size(), Count);
  for (size_t I = 0; I < Count; ++I)
    EXPECT_EQ(A.Entries[I].Bytes, pattern(Size, static_cast<unsigned>(I)));
}

// The same bytes whatever the thread count and the memory budget, with
// duplicates (placed in order against blobs whose writes may still be in
// flight) and entries read into the writer's buffers (charged).
TEST_F(ArchiveWriterTest, OutputIndependentOfThreadsWithDuplicates) {
  std::vector<std::vector<uint8_t>> Payloads;
  for (unsigned I = 0; I < 60; ++I)
    Payloads.push_back(pattern(3000 + 1999 * (I % 13), I % 13));
  std::string In = Dir + "/in.bin";
  std::vector<uint8_t> All;
  std::vector<uint64_t> Offsets;
  for (const std::vector<uint8_t> &P : Payloads) {
    Offsets.push_back(All.size());
    All.insert(All.end(), P.begin(), P.end());
  }
  writeFile(In, All);
  std::vector<uint8_t> First;
  for (ArchiveCompression C :
       {ArchiveCompression::ZstdPerKernel, ArchiveCompression::None}) {
    First.clear();
    for (unsigned Threads : {1u, 2u, 8u, 16u})
      for (uint64_t Budget : {uint64_t(1), uint64_t(40000), uint64_t(64) << 20}) {
        SCOPED_TRACE(std::to_string(Threads) + " threads, budget " +
                     std::to_string(Budget));
        ArchiveWriterOptions Opts{"g", "f", C};
        Opts.ZstdLevel = defaultZstdLevel(C);
        Opts.Threads = Threads;
        Opts.BatchBytes = Budget;
        ArchiveWriter W(Opts);
        for (size_t I = 0; I < Payloads.size(); ++I)
          ASSERT_FALSE(W.addEntry(
              "k#" + std::to_string(I), "gfx942",
              I % 2 ? EntrySource::fromFileRange(In, Offsets[I],
                                                 Payloads[I].size())
                    : EntrySource::fromBytes(Payloads[I].data(),
                                             Payloads[I].size())));
        ArchiveWriteStats Stats;
        ASSERT_FALSE(W.write(Dir + "/out.kpack", &Stats));
        EXPECT_EQ(Stats.Deduplicated, 60u - 13u);
        std::vector<uint8_t> Bytes = readFile(Dir + "/out.kpack");
        if (First.empty())
          First = Bytes;
        else
          EXPECT_EQ(Bytes, First);
      }
    DecodedArchive A;
    ASSERT_EQ(decodeArchive(Dir + "/out.kpack", A), "");
    ASSERT_EQ(A.Entries.size(), Payloads.size());
    for (size_t I = 0; I < Payloads.size(); ++I)
      EXPECT_EQ(A.Entries[I].Bytes, Payloads[I]);
  }
}

TEST_F(ArchiveWriterTest, RejectsDuplicatesAndEmptyNames) {
  ArchiveWriter W({"g", "f"});
  uint8_t B[1] = {1};
  EXPECT_FALSE(W.addEntry("k#0", "gfx942", EntrySource::fromBytes(B, 1)));
  Status S = W.addEntry("k#0", "gfx942", EntrySource::fromBytes(B, 1));
  ASSERT_TRUE(S);
  EXPECT_NE(S.message().find("duplicate"), std::string::npos);
  EXPECT_FALSE(W.addEntry("k#0", "gfx1100", EntrySource::fromBytes(B, 1)));
  EXPECT_TRUE(W.addEntry("", "gfx1100", EntrySource::fromBytes(B, 1)));
  EXPECT_TRUE(W.addEntry("k#1", "", EntrySource::fromBytes(B, 1)));
  EXPECT_EQ(W.size(), 2u);
}

// A failing source or a bad option leaves an existing output untouched and
// no temporary file behind.
TEST_F(ArchiveWriterTest, FailureLeavesOutputUntouched) {
  std::string Out = Dir + "/out.kpack";
  writeFile(Out, {'o', 'l', 'd'});
  for (ArchiveCompression C : {ArchiveCompression::None, ArchiveCompression::ZstdPerKernel}) {
    ArchiveWriter W({"g", "f", C});
    uint8_t B[3] = {1, 2, 3};
    ASSERT_FALSE(W.addEntry("a#0", "gfx942", EntrySource::fromBytes(B, 3)));
    ASSERT_FALSE(W.addEntry("b#0", "gfx942", EntrySource::fromCallback(
                                                  [](std::vector<uint8_t> &) {
                                                    return Status::error("boom");
                                                  })));
    ASSERT_FALSE(W.addEntry("c#0", "gfx942",
                            EntrySource::fromFileRange(Dir + "/missing", 0, 10)));
    Status S = W.write(Out);
    ASSERT_TRUE(S);
    EXPECT_NE(S.message().find("b#0 (gfx942): boom"), std::string::npos) << S.message();
  }
  ArchiveWriterOptions Opts{"g", "f"};
  Opts.ZstdLevel = 99;
  EXPECT_TRUE(ArchiveWriter(Opts).write(Out));
  EXPECT_EQ(readFile(Out), (std::vector<uint8_t>{'o', 'l', 'd'}));
  std::string Ls = "test $(ls -A '" + Dir + "' | wc -l) -eq 1";
  EXPECT_EQ(std::system(Ls.c_str()), 0) << "temporary file left behind";
}

// An exception escaping a source in a worker thread (an allocation failure)
// is an error of write(), not std::terminate, whatever the thread count and
// scheme (shared segments read the sources in a first pass too); no output
// is left.
TEST_F(ArchiveWriterTest, AllocationFailureInAWorkerIsAnError) {
  std::string Out = Dir + "/out.kpack";
  for (ArchiveCompression C :
       {ArchiveCompression::None, ArchiveCompression::ZstdPerKernel,
        ArchiveCompression::ZstdSharedSegments})
    for (unsigned Threads : {1u, 4u}) {
      SCOPED_TRACE(std::to_string(Threads) + " threads, " +
                   compressionSchemeName(C));
      ArchiveWriterOptions Opts{"g", "f", C};
      Opts.ZstdLevel = defaultZstdLevel(C);
      Opts.Threads = Threads;
      ArchiveWriter W(Opts);
      for (int I = 0; I < 16; ++I)
        ASSERT_FALSE(W.addEntry(
            "k#" + std::to_string(I), "gfx942",
            EntrySource::fromCallback([I](std::vector<uint8_t> &Bytes) {
              if (I == 11)
                throw std::bad_alloc();
              Bytes = pattern(4096, static_cast<uint8_t>(I));
              return Status::ok();
            })));
      Status S = W.write(Out);
      ASSERT_TRUE(S);
      EXPECT_EQ(S.message(), "out of memory while writing archives");
      EXPECT_NE(::access(Out.c_str(), F_OK), 0);
    }
  std::string Ls = "test $(ls -A '" + Dir + "' | wc -l) -eq 0";
  EXPECT_EQ(std::system(Ls.c_str()), 0) << "temporary file left behind";
}

// Before each pass over the sources the writer announces every read of it
// (EntrySource::willRead), so that sources sharing state know when their
// last read is done: once for per-kernel schemes, once per pass for shared
// segments (the analysis, then compression).
TEST_F(ArchiveWriterTest, AnnouncesTheReadsOfEachPass) {
  for (ArchiveCompression C :
       {ArchiveCompression::ZstdPerKernel, ArchiveCompression::ZstdSharedSegments}) {
    SCOPED_TRACE(compressionSchemeName(C));
    std::vector<std::string> Log;
    ArchiveWriterOptions Opts{"g", "f", C};
    Opts.ZstdLevel = defaultZstdLevel(C);
    Opts.Threads = 1;
    ArchiveWriter W(Opts);
    for (std::string Name : {"a", "b"})
      ASSERT_FALSE(W.addEntry(
          Name + "#0", "gfx942",
          EntrySource::fromCallback(
              [&Log, Name](std::vector<uint8_t> &Bytes) {
                Log.push_back("read " + Name);
                Bytes = pattern(4096, static_cast<uint8_t>(Name[0]));
                return Status::ok();
              },
              4096, [&Log, Name] { Log.push_back("will " + Name); })));
    ASSERT_FALSE(W.write(Dir + "/out.kpack"));
    std::vector<std::string> Pass = {"will a", "will b", "read a", "read b"};
    std::vector<std::string> Expected = Pass;
    if (C == ArchiveCompression::ZstdSharedSegments)
      Expected.insert(Expected.end(), Pass.begin(), Pass.end());
    EXPECT_EQ(Log, Expected);
  }
}

TEST_F(ArchiveWriterTest, ShortFileRangeIsAnError) {
  writeFile(Dir + "/small", pattern(100, 0));
  ArchiveWriter W({"g", "f"});
  ASSERT_FALSE(W.addEntry("a#0", "gfx942", EntrySource::fromFileRange(Dir + "/small", 50, 51)));
  Status S = W.write(Dir + "/out.kpack");
  ASSERT_TRUE(S);
  EXPECT_NE(S.message().find("ends before byte 101"), std::string::npos) << S.message();
}

// Identical entries share one stored blob (TOC ordinal aliasing), in
// first-occurrence order, independently of threads and batching; entries of
// the same size with other bytes keep their own.
TEST_F(ArchiveWriterTest, DeduplicatesByOrdinalAliasing) {
  std::vector<uint8_t> A = pattern(3000, 1), B = pattern(3000, 2);
  for (ArchiveCompression C : {ArchiveCompression::None, ArchiveCompression::ZstdPerKernel}) {
    std::vector<uint8_t> First;
    for (uint64_t Batch : {uint64_t(1), uint64_t(64) << 20}) {
      ArchiveWriterOptions Opts{"g", "f", C};
      Opts.Deduplicate = true;
      Opts.BatchBytes = Batch;
      ArchiveWriter W(Opts);
      ASSERT_FALSE(W.addEntry("a#0", "gfx942", EntrySource::fromBytes(A.data(), A.size())));
      ASSERT_FALSE(W.addEntry("b#0", "gfx942", EntrySource::fromOwnedBytes(A)));
      ASSERT_FALSE(W.addEntry("c#0", "gfx942", EntrySource::fromBytes(B.data(), B.size())));
      ASSERT_FALSE(W.addEntry("d#0", "gfx1100", EntrySource::fromCallback(
                                                    [&](std::vector<uint8_t> &Out) {
                                                      Out = B;
                                                      return Status::ok();
                                                    })));
      ArchiveWriteStats Stats;
      std::string Out = Dir + "/dedup.kpack";
      ASSERT_FALSE(W.write(Out, &Stats));
      EXPECT_EQ(Stats.Entries, 4u);
      EXPECT_EQ(Stats.Deduplicated, 2u);
      EXPECT_EQ(Stats.OriginalBytes, 4 * 3000u);
      DecodedArchive D;
      ASSERT_EQ(decodeArchive(Out, D), "");
      ASSERT_EQ(D.Entries.size(), 4u);
      std::vector<uint64_t> Ordinals;
      for (const DecodedEntry &E : D.Entries)
        Ordinals.push_back(E.Ordinal);
      EXPECT_EQ(Ordinals, (std::vector<uint64_t>{0, 0, 1, 1}));
      EXPECT_EQ(D.Entries[1].Bytes, A);
      EXPECT_EQ(D.Entries[3].Bytes, B);
      std::vector<uint8_t> Bytes = readFile(Out);
      if (First.empty())
        First = Bytes;
      else
        EXPECT_EQ(Bytes, First) << "batch " << Batch;
    }
  }
}

TEST_F(ArchiveWriterTest, WritesEntryMetadata) {
  ArchiveWriter W({"g", "f", ArchiveCompression::None});
  uint8_t B[2] = {1, 2};
  ASSERT_FALSE(W.addEntry("p/lib/x.so#0", "gfx942", EntrySource::fromBytes(B, 2),
                          {{"target", "hipv4-amdgcn-amd-amdhsa--gfx942"},
                           {"source_prefix", "p"}}));
  ASSERT_FALSE(W.write(Dir + "/meta.kpack"));
  std::vector<uint8_t> Bytes = readFile(Dir + "/meta.kpack");
  std::string Text(Bytes.begin(), Bytes.end());
  // The TOC's msgpack strings, in order, after the entry's fixed fields.
  size_t Meta = Text.find("metadata");
  ASSERT_NE(Meta, std::string::npos);
  EXPECT_LT(Text.find("original_size"), Meta);
  EXPECT_LT(Meta, Text.find("target"));
  EXPECT_LT(Text.find("target"), Text.find("source_prefix"));
  DecodedArchive D;
  ASSERT_EQ(decodeArchive(Dir + "/meta.kpack", D), "");
  EXPECT_EQ(D.Entries[0].Bytes, (std::vector<uint8_t>{1, 2}));
}

// Several archives in one pass: the sources are read in the given order
// across archives, and a failing source commits none of them.
TEST_F(ArchiveWriterTest, WriteArchivesReadsInOrderAndCommitsAllOrNothing) {
  std::vector<std::string> Reads;
  auto Source = [&](std::string Name) {
    return EntrySource::fromCallback([&Reads, Name](std::vector<uint8_t> &Out) {
      Reads.push_back(Name);
      Out.assign(Name.begin(), Name.end());
      return Name == "bad" ? Status::error("boom") : Status::ok();
    });
  };
  for (bool Fail : {true, false}) {
    SCOPED_TRACE(Fail);
    Reads.clear();
    ArchiveWriterOptions Opts{"g", "f"};
    Opts.Threads = 1;
    ArchiveWriter X(Opts), Y(Opts);
    ASSERT_FALSE(X.addEntry("k#0", "gfx942", Source("x0")));
    ASSERT_FALSE(X.addEntry("k#1", "gfx942", Source(Fail ? "bad" : "x1")));
    ASSERT_FALSE(Y.addEntry("k#0", "gfx1100", Source("y0")));
    std::vector<ArchiveWriter::Job> Jobs{{&X, Dir + "/x.kpack", {}},
                                         {&Y, Dir + "/y.kpack", {}}};
    Status S = ArchiveWriter::writeArchives(Jobs, {{0, 0}, {1, 0}, {0, 1}});
    if (Fail) {
      ASSERT_TRUE(S);
      EXPECT_NE(S.message().find("boom"), std::string::npos);
      EXPECT_NE(::access((Dir + "/y.kpack").c_str(), F_OK), 0);
      EXPECT_NE(::access((Dir + "/x.kpack").c_str(), F_OK), 0);
      continue;
    }
    ASSERT_FALSE(S) << S.message();
    EXPECT_EQ(Reads, (std::vector<std::string>{"x0", "y0", "x1"}));
    EXPECT_EQ(Jobs[0].Stats.Entries, 2u);
    EXPECT_EQ(Jobs[1].Stats.Entries, 1u);
    DecodedArchive D;
    ASSERT_EQ(decodeArchive(Dir + "/x.kpack", D), "");
    ASSERT_EQ(D.Entries.size(), 2u);
    EXPECT_EQ(D.Entries[1].Bytes, (std::vector<uint8_t>{'x', '1'}));
  }
  std::string Ls = "test $(ls -A '" + Dir + "' | wc -l) -eq 2";
  EXPECT_EQ(std::system(Ls.c_str()), 0) << "temporary file left behind";
}

// 512 MiB of code objects from a file go through a writer limited to 8 MiB
// batches; the process's peak RSS may grow by far less than the input.
TEST_F(ArchiveWriterTest, StreamsLargeInputsInBoundedMemory) {
  constexpr uint64_t EntrySize = uint64_t(4) << 20, Count = 128;
  std::string In = Dir + "/big.bin";
  int Fd = ::open(In.c_str(), O_CREAT | O_WRONLY, 0644);
  ASSERT_GE(Fd, 0);
  std::vector<uint8_t> Chunk = pattern(EntrySize, 7);
  for (uint64_t I = 0; I < 8; ++I) // 32 MiB of data, reused by the entries
    ASSERT_EQ(::write(Fd, Chunk.data(), Chunk.size()), ssize_t(Chunk.size()));
  ::close(Fd);
  std::vector<uint8_t>().swap(Chunk);

  ArchiveWriterOptions Opts{"g", "f"};
  Opts.ZstdLevel = 1;
  Opts.BatchBytes = uint64_t(8) << 20;
  Opts.Threads = 2;
  ArchiveWriter W(Opts);
  for (uint64_t I = 0; I < Count; ++I)
    ASSERT_FALSE(W.addEntry("k#" + std::to_string(I), "gfx942",
                            EntrySource::fromFileRange(In, (I % 8) * EntrySize, EntrySize)));
  struct rusage Before, After;
  getrusage(RUSAGE_SELF, &Before);
  ArchiveWriteStats Stats;
  ASSERT_FALSE(W.write(Dir + "/big.kpack", &Stats));
  getrusage(RUSAGE_SELF, &After);
  EXPECT_EQ(Stats.OriginalBytes, EntrySize * Count);
  long GrowthKiB = After.ru_maxrss - Before.ru_maxrss;
#if defined(__has_feature)
#if __has_feature(address_sanitizer)
  GTEST_SKIP() << "ASan's quarantine keeps freed batches resident";
#endif
#endif
  EXPECT_LT(GrowthKiB, 64 * 1024) << "peak RSS grew by " << GrowthKiB << " KiB";
}

// Issue 29: what the writer holds is bounded by its memory budget plus one
// entry per thread, never by the number of entries: the peak RSS (VmHWM,
// reset before each write) of a write of 512 entries rises no more than
// that of 64, whatever order the threads take them in.
TEST_F(ArchiveWriterTest, PeakMemoryDoesNotGrowWithTheEntries) {
#if defined(__has_feature)
#if __has_feature(address_sanitizer)
  GTEST_SKIP() << "ASan's quarantine keeps freed buffers resident";
#endif
#endif
  constexpr uint64_t MiB = 1 << 20;
  std::string In = Dir + "/in.bin";
  writeFile(In, pattern(40 * MiB, 5));
  auto StatusKiB = [](const char *Field) {
    std::ifstream Status("/proc/self/status");
    std::string Line;
    while (std::getline(Status, Line))
      if (Line.rfind(Field, 0) == 0)
        return std::strtol(Line.c_str() + std::strlen(Field), nullptr, 10);
    return 0L;
  };
  auto Growth = [&](size_t Count) {
    ArchiveWriterOptions Opts{"g", "f"};
    Opts.ZstdLevel = 1;
    Opts.Threads = 4;
    Opts.BatchBytes = 8 * MiB;
    Opts.Deduplicate = false;
    ArchiveWriter W(Opts);
    for (size_t I = 0; I < Count; ++I)
      EXPECT_FALSE(W.addEntry(
          "k#" + std::to_string(I), "gfx942",
          EntrySource::fromFileRange(In, (I * 65537) % (39 * MiB), MiB)));
    malloc_trim(0);
    std::ofstream("/proc/self/clear_refs") << "5"; // VmHWM = VmRSS
    long Before = StatusKiB("VmRSS:");
    EXPECT_LE(StatusKiB("VmHWM:"), Before + 1024) << "VmHWM was not reset";
    EXPECT_FALSE(W.write(Dir + "/out.kpack"));
    return StatusKiB("VmHWM:") - Before;
  };
  long Small = Growth(64), Large = Growth(512);
  EXPECT_LT(Large, Small + 8 * 1024)
      << "64 entries: +" << Small << " KiB, 512: +" << Large << " KiB";
  EXPECT_LT(Large, 48 * 1024) << "+" << Large << " KiB";
}

// Format version 2: header and TOC say 2, the scheme is
// zstd-shared-segments, segments come first, and the bytes depend neither on
// the thread count nor on the batch size (the analysis reads the sources in
// the same batches as the compression).
TEST_F(ArchiveWriterTest, SharedSegmentsOutputIndependentOfThreadsAndBatching) {
  std::vector<uint8_t> Common = pattern(40000, 99);
  std::vector<std::vector<uint8_t>> Payloads;
  for (unsigned I = 0; I < 24; ++I) {
    std::vector<uint8_t> P = pattern(2000 + 501 * I, I);
    P.insert(P.begin() + 1000, Common.begin(), Common.end());
    Payloads.push_back(P);
  }
  std::vector<uint8_t> First;
  ArchiveWriteStats FirstStats;
  for (unsigned Threads : {1u, 3u, 8u}) {
    for (uint64_t Batch : {uint64_t(1), uint64_t(64) << 20}) {
      ArchiveWriterOptions Opts{"g", "f",
                                ArchiveCompression::ZstdSharedSegments};
      Opts.ZstdLevel = defaultZstdLevel(Opts.Compression);
      Opts.Threads = Threads;
      Opts.BatchBytes = Batch;
      ArchiveWriter W(Opts);
      for (unsigned I = 0; I < Payloads.size(); ++I)
        ASSERT_FALSE(W.addEntry("k#" + std::to_string(I / 2),
                                I % 2 ? "gfx1100" : "gfx942",
                                EntrySource::fromBytes(Payloads[I].data(),
                                                       Payloads[I].size())));
      std::string Out = Dir + "/s" + std::to_string(Threads) + ".kpack";
      ArchiveWriteStats Stats;
      ASSERT_FALSE(W.write(Out, &Stats));
      std::vector<uint8_t> Bytes = readFile(Out);
      if (First.empty()) {
        First = Bytes;
        FirstStats = Stats;
      } else {
        EXPECT_EQ(Bytes, First) << Threads << " threads, batch " << Batch;
      }
    }
  }
  ASSERT_GE(First.size(), 72u);
  EXPECT_EQ(std::string(First.begin(), First.begin() + 4), "KPAK");
  EXPECT_EQ(First[4], 2); // header version
  EXPECT_GE(FirstStats.SharedSegments, 1u);
  EXPECT_GE(FirstStats.SharedBytes, 35000u);
  EXPECT_EQ(FirstStats.Entries, 24u);
  // The first segment's frame opens the blob section.
  EXPECT_EQ(First[64] | First[65] << 8 | First[66] << 16 |
                uint32_t(First[67]) << 24,
            ZSTD_MAGICNUMBER);
  // The TOC: the scheme, then the shared blob's and index's keys at the end;
  // entries carry no segment lists (the index does).
  std::string Text(First.begin(), First.end());
  size_t Scheme = Text.find("zstd-shared-segments"),
         Index = Text.find("shared_index_offset");
  ASSERT_NE(Scheme, std::string::npos);
  ASSERT_NE(Index, std::string::npos);
  EXPECT_LT(Scheme, Index);
  EXPECT_EQ(Text.find("\xa8segments"), std::string::npos);
}

// The release grade stays version 1 and zstd-per-kernel, readable the way
// upstream reads it; each frame's window spans its whole code object, so
// repeats far apart compress even at a low level, and every frame decodes
// with a default streaming decoder too (window at most 2^27).
TEST_F(ArchiveWriterTest, ReleaseGradeFramesDecodeEverywhere) {
  // 3 MiB: one 1 MiB block three times.
  std::vector<uint8_t> Block = pattern(1 << 20, 5), Big;
  for (int I = 0; I < 3; ++I)
    Big.insert(Big.end(), Block.begin(), Block.end());
  uint64_t Sizes[2];
  for (ArchiveCompression C :
       {ArchiveCompression::ZstdPerKernel, ArchiveCompression::ZstdPerKernelLong}) {
    ArchiveWriterOptions Opts{"g", "f", C};
    Opts.ZstdLevel = 1; // a 512 KiB window by default
    ArchiveWriter W(Opts);
    ASSERT_FALSE(W.addEntry("k#0", "gfx942",
                            EntrySource::fromBytes(Big.data(), Big.size())));
    std::string Out = Dir + "/long.kpack";
    ArchiveWriteStats Stats;
    ASSERT_FALSE(W.write(Out, &Stats));
    Sizes[C == ArchiveCompression::ZstdPerKernelLong] = Stats.FileBytes;
    DecodedArchive A;
    ASSERT_EQ(decodeArchive(Out, A), "");
    EXPECT_EQ(A.Scheme, "zstd-per-kernel");
    ASSERT_EQ(A.Entries.size(), 1u);
    EXPECT_EQ(A.Entries[0].Bytes, Big);
    EXPECT_TRUE(A.Entries[0].FrameHasContentSize);
    std::vector<uint8_t> File = readFile(Out);
    EXPECT_EQ(File[4], 1);
    const uint8_t *Frame = File.data() + A.Entries[0].FrameOffset + 4;
    size_t FrameSize = A.Entries[0].FrameSize;
    ZSTD_frameHeader H;
    ASSERT_EQ(ZSTD_getFrameHeader(&H, Frame, FrameSize), 0u);
    EXPECT_LE(H.windowSize, uint64_t(1) << 27);
    // A streaming decoder with its default window limit.
    ZSTD_DStream *D = ZSTD_createDStream();
    std::vector<uint8_t> Got(Big.size());
    ZSTD_inBuffer In{Frame, FrameSize, 0};
    ZSTD_outBuffer OutBuf{Got.data(), Got.size(), 0};
    size_t R = ZSTD_decompressStream(D, &OutBuf, &In);
    ZSTD_freeDStream(D);
    EXPECT_EQ(R, 0u) << (ZSTD_isError(R) ? ZSTD_getErrorName(R) : "");
    EXPECT_EQ(Got, Big);
  }
  EXPECT_LT(Sizes[1] * 2, Sizes[0]) << "long " << Sizes[1] << " vs " << Sizes[0];
}

} // namespace
