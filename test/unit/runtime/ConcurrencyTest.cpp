//===- ConcurrencyTest.cpp - Many threads loading from one archive --------===//

#include "TestSupport.h"

#include "kpack/ArchiveReader.h"
#include "rocm_kpack/kpack.h"

#include <gtest/gtest.h>

#include <atomic>
#include <condition_variable>
#include <mutex>
#include <thread>

using namespace kpack_test;
using kpack::ArchiveReader;

namespace {

class Concurrency : public ::testing::TestWithParam<bool> {};

TEST_P(Concurrency, EightThreadsLoadFromOneArchive) {
  ArchiveSpec Spec;
  Spec.FrameExtension = GetParam();
  for (int I = 0; I < 16; ++I)
    Spec.Entries.push_back({"k#" + std::to_string(I), "gfx1100",
                            payload("t" + std::to_string(I), 20000 + 31 * I)});
  TempDir Dir;
  std::string Path = Dir.write("t.kpack", buildArchive(Spec));
  kpack_archive_t A = nullptr;
  ASSERT_EQ(kpack_open(Path.c_str(), &A), KPACK_SUCCESS);

  std::atomic<int> Mismatches{0};
  std::vector<std::thread> Threads;
  for (int T = 0; T < 8; ++T)
    Threads.emplace_back([&, T] {
      for (int Round = 0; Round < 20; ++Round) {
        const TestEntry &E =
            Spec.Entries[(T * 7 + Round) % Spec.Entries.size()];
        void *Data = nullptr;
        size_t Size = 0;
        if (kpack_get_kernel(A, E.Key.c_str(), "gfx1100", &Data, &Size) !=
                KPACK_SUCCESS ||
            Size != E.Data.size() ||
            std::memcmp(Data, E.Data.data(), Size) != 0)
          ++Mismatches;
        kpack_free_kernel(Data);
      }
    });
  for (std::thread &T : Threads)
    T.join();
  EXPECT_EQ(Mismatches.load(), 0);
  kpack_close(A);
}

// Format version 2: loads that need the same segments wait for one decode of
// each, and a cache limit below what the loads use makes them evict each
// other's segments while others still hold them.
TEST(Concurrency, EightThreadsShareSegments) {
  ArchiveSpec Spec;
  Spec.Scheme = "zstd-shared-segments";
  for (int S = 0; S < 4; ++S)
    Spec.Segments.push_back(payload("s" + std::to_string(S), 6000 + 100 * S));
  for (uint32_t I = 0; I < 16; ++I) {
    std::vector<uint32_t> Uses = {I % 4};
    if (I % 3 == 0 && I % 4 != 3)
      Uses.push_back(3);
    Bytes Data = payload("t" + std::to_string(I), 3000);
    for (uint32_t S : Uses)
      Data.insert(Data.end(), Spec.Segments[S].begin(), Spec.Segments[S].end());
    Spec.Entries.push_back({"k#" + std::to_string(I), "gfx1100", Data});
    Spec.EntrySegments.push_back(Uses);
  }
  Bytes Image = buildArchive(Spec);
  for (uint64_t Limit : {ArchiveReader::SegmentCacheBytes, uint64_t(8000)}) {
    std::unique_ptr<ArchiveReader> R;
    ASSERT_FALSE(ArchiveReader::openBytes(Image.data(), Image.size(), R));
    R->setSegmentCacheLimit(Limit);
    std::atomic<int> Mismatches{0};
    std::vector<std::thread> Threads;
    for (int T = 0; T < 8; ++T)
      Threads.emplace_back([&, T] {
        for (int Round = 0; Round < 40; ++Round) {
          const TestEntry &E =
              Spec.Entries[(T * 5 + Round) % Spec.Entries.size()];
          std::vector<uint8_t> Out;
          if (R->read(*R->find(E.Key, E.Arch), Out) || Out != E.Data)
            ++Mismatches;
        }
      });
    for (std::thread &T : Threads)
      T.join();
    EXPECT_EQ(Mismatches.load(), 0) << "limit " << Limit;
  }
}

INSTANTIATE_TEST_SUITE_P(FrameLookup, Concurrency, ::testing::Bool(),
                         [](const auto &Info) {
                           return Info.param ? "frame_offsets" : "size_chain";
                         });

} // namespace

namespace {

TEST(Concurrency, EightThreadsShareOneLoaderCache) {
  TempDir Dir;
  ArchiveSpec Spec;
  Spec.Arches = {"gfx1100"};
  for (int I = 0; I < 8; ++I)
    Spec.Entries.push_back({"lib/libfoo.so#" + std::to_string(I), "gfx1100",
                            payload("c" + std::to_string(I), 5000 + I)});
  Dir.write(".kpack/foo_gfx1100.kpack", buildArchive(Spec));
  std::string Binary = Dir.write("lib/libfoo.so", Bytes{1});
  Bytes Meta = hipkMetadata("lib/libfoo.so", {"../missing_@GFXARCH@.kpack",
                                              "../.kpack/foo_@GFXARCH@.kpack"});
  kpack_cache_t Cache = nullptr;
  ASSERT_EQ(kpack_cache_create(&Cache), KPACK_SUCCESS);
  std::atomic<int> Mismatches{0};
  std::vector<std::thread> Threads;
  for (uint32_t T = 0; T < 8; ++T)
    Threads.emplace_back([&, T] {
      const char *Arches[] = {"gfx942", "amdgcn-amd-amdhsa--gfx1100"};
      for (uint32_t Round = 0; Round < 10; ++Round) {
        uint32_t Index = (T + Round) % 8;
        void *Data = nullptr;
        size_t Size = 0;
        if (kpack_load_code_object(Cache, Meta.data(), Binary.c_str(), Index,
                                   Arches, 2, &Data, &Size) != KPACK_SUCCESS ||
            Size != Spec.Entries[Index].Data.size() ||
            std::memcmp(Data, Spec.Entries[Index].Data.data(), Size) != 0)
          ++Mismatches;
        kpack_free_code_object(Data);
      }
    });
  for (std::thread &T : Threads)
    T.join();
  EXPECT_EQ(Mismatches.load(), 0);
  kpack_cache_destroy(Cache);
}

} // namespace

namespace {

// Deterministic check that nothing archive-wide is held while an entry is
// read: each thread's allocation callback (called between reading the frame
// and decompressing it) waits until the other thread is in the same place.
// An archive-wide lock around reads would make the second thread time out.
TEST(Concurrency, TwoReadsAreInFlightAtOnce) {
  ArchiveSpec Spec;
  Spec.Entries = {{"k#0", "gfx1100", payload("p0", 100000)},
                  {"k#1", "gfx1100", payload("p1", 100000)}};
  TempDir Dir;
  std::unique_ptr<kpack::ArchiveReader> R;
  ASSERT_FALSE(
      kpack::ArchiveReader::open(Dir.write("p.kpack", buildArchive(Spec)), R));

  std::mutex M;
  std::condition_variable CV;
  int Arrived = 0;
  std::atomic<int> SawPartner{0};
  auto Reader = [&](int I) {
    std::vector<uint8_t> Out;
    kpack::Status Err = R->read(R->entries()[I], [&](size_t N) -> void * {
      std::unique_lock<std::mutex> Lock(M);
      ++Arrived;
      CV.notify_all();
      if (CV.wait_for(Lock, std::chrono::seconds(10),
                      [&] { return Arrived == 2; }))
        ++SawPartner;
      Out.resize(N);
      return Out.data();
    });
    EXPECT_FALSE(Err) << Err.message();
    EXPECT_EQ(Out, Spec.Entries[I].Data);
  };
  std::thread A(Reader, 0), B(Reader, 1);
  A.join();
  B.join();
  EXPECT_EQ(SawPartner.load(), 2);
}

} // namespace
