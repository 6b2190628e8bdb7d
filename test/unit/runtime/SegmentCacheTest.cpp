//===- SegmentCacheTest.cpp - The shared-segment cache's memory bound -----===//
//
// ArchiveReader keeps decoded "zstd-shared-segments" segments in a cache of
// at most ArchiveReader::SegmentCacheBytes (64 MiB) per archive. Checked two
// ways after loads that decode more than that: the cache's own accounting,
// and the heap memory the reader still holds (malloc's statistics, or the
// sanitizer allocator's), which counts whole allocations.
//
//===----------------------------------------------------------------------===//

#include "TestSupport.h"

#include "kpack/ArchiveReader.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <cstdio>
#include <malloc.h>

#if defined(__has_feature)
#if __has_feature(address_sanitizer) || __has_feature(thread_sanitizer)
#define KPACK_TEST_SANITIZED 1
#endif
#endif
#if defined(__SANITIZE_ADDRESS__) || defined(__SANITIZE_THREAD__)
#define KPACK_TEST_SANITIZED 1
#endif
#ifdef KPACK_TEST_SANITIZED
#include <sanitizer/allocator_interface.h>
#endif

using namespace kpack_test;
using kpack::ArchiveReader;

namespace {

constexpr uint64_t MiB = uint64_t(1) << 20;

/// Bytes of heap memory in use now.
uint64_t heapInUse() {
#ifdef KPACK_TEST_SANITIZED
  return __sanitizer_get_current_allocated_bytes();
#else
  struct mallinfo2 M = ::mallinfo2();
  return M.uordblks + M.hblkhd;
#endif
}

/// VmRSS of this process, in KiB (for the test's log).
unsigned long residentKiB() {
  std::FILE *F = std::fopen("/proc/self/status", "r");
  unsigned long KiB = 0;
  char Line[256];
  while (F && std::fgets(Line, sizeof(Line), F))
    if (std::sscanf(Line, "VmRSS: %lu kB", &KiB) == 1)
      break;
  if (F)
    std::fclose(F);
  return KiB;
}

/// A segment of Size bytes that compresses well and differs from the others.
Bytes segment(uint32_t Index, size_t Size) {
  Bytes Out(Size);
  for (size_t I = 0; I < Size; ++I)
    Out[I] = uint8_t((I * 7 + Index * 13) ^ (I >> 12));
  return Out;
}

// Five code objects, each compressed against three segments of 8 MiB of its
// own (the writer's largest): 120 MiB of distinct segments, loaded in order.
// Least recently used segments are dropped segment by segment, so a cache
// whose segments shared one decode buffer per load kept 72 MiB alive with
// 64 MiB accounted.
TEST(SegmentCache, StaysWithinItsBoundAfterLoadingMoreThanIt) {
  ASSERT_EQ(ArchiveReader::SegmentCacheBytes, 64 * MiB);
  const size_t SegmentSize = 8 * MiB;
  TempDir Dir;
  std::string Path;
  std::vector<Bytes> Expected;
  {
    ArchiveSpec Spec;
    Spec.Scheme = "zstd-shared-segments";
    Spec.Arches = {"gfx1100"};
    Spec.ZstdLevel = 1;
    for (uint32_t I = 0; I < 15; ++I)
      Spec.Segments.push_back(segment(I, SegmentSize));
    for (uint32_t O = 0; O < 5; ++O) {
      Spec.Entries.push_back({"k#" + std::to_string(O), "gfx1100",
                              payload("co" + std::to_string(O), 4000)});
      Spec.EntrySegments.push_back({3 * O, 3 * O + 1, 3 * O + 2});
      Expected.push_back(Spec.Entries.back().Data);
    }
    Path = Dir.write("big.kpack", buildArchive(Spec));
  }
  const uint64_t Before = heapInUse();
  const unsigned long RssBefore = residentKiB();
  std::unique_ptr<ArchiveReader> R;
  ASSERT_FALSE(ArchiveReader::open(Path, R));
  uint64_t MostCached = 0;
  for (uint32_t O = 0; O < 5; ++O) {
    const ArchiveReader::Entry *E = R->find("k#" + std::to_string(O), "gfx1100");
    ASSERT_NE(E, nullptr);
    std::vector<uint8_t> Out;
    ASSERT_FALSE(R->read(*E, Out));
    EXPECT_EQ(Out, Expected[O]) << O;
    MostCached = std::max(MostCached, R->cachedSegmentBytes());
  }
  const uint64_t Held = heapInUse() - Before;
#ifndef KPACK_TEST_SANITIZED
  ::malloc_trim(0); // so that VmRSS shows what is in use
#endif
  std::printf("segment cache: %llu MiB accounted (at most %llu), %llu MiB of "
              "heap held by the reader, VmRSS %lu -> %lu KiB\n",
              (unsigned long long)(R->cachedSegmentBytes() / MiB),
              (unsigned long long)(MostCached / MiB),
              (unsigned long long)(Held / MiB), RssBefore, residentKiB());
  EXPECT_EQ(MostCached, 64 * MiB); // it did fill up
  EXPECT_LE(R->cachedSegmentBytes(), ArchiveReader::SegmentCacheBytes);
  // The cache, plus a little for the TOC, the index and one decoder.
  EXPECT_LE(Held, ArchiveReader::SegmentCacheBytes + 4 * MiB);
  R.reset();
  EXPECT_LE(heapInUse() - std::min(heapInUse(), Before), 1 * MiB);
}

// A segment larger than the cache's limit is used by its load and not kept.
TEST(SegmentCache, SegmentLargerThanTheLimitIsNotKept) {
  ArchiveSpec Spec;
  Spec.Scheme = "zstd-shared-segments";
  Spec.Arches = {"gfx1100"};
  Bytes Small = segment(0, 3000), Large = segment(1, 20000);
  Spec.Segments = {Small, Large};
  Spec.Entries = {{"k#0", "gfx1100", payload("small", 500)},
                  {"k#1", "gfx1100", payload("large", 500)}};
  Spec.EntrySegments = {{0}, {1}};
  Bytes Image = buildArchive(Spec);
  std::unique_ptr<ArchiveReader> R;
  ASSERT_FALSE(ArchiveReader::openBytes(Image.data(), Image.size(), R));
  R->setSegmentCacheLimit(10000);
  std::vector<uint8_t> Out;
  ASSERT_FALSE(R->read(*R->find("k#0", "gfx1100"), Out));
  EXPECT_EQ(R->cachedSegmentBytes(), 3000u);
  ASSERT_FALSE(R->read(*R->find("k#1", "gfx1100"), Out));
  EXPECT_EQ(Out, Spec.Entries[1].Data);
  EXPECT_EQ(R->cachedSegmentBytes(), 3000u); // the small one stays
  ASSERT_FALSE(R->read(*R->find("k#1", "gfx1100"), Out)); // decoded again
  EXPECT_EQ(Out, Spec.Entries[1].Data);
  EXPECT_LE(R->cachedSegmentBytes(), 10000u);
}

} // namespace
