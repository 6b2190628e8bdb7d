//===- RuntimeBench.cpp - librocm_kpack performance
//------------------------===//
//
// usage: kpack_runtime_bench [scratch dir, default /tmp]
//
//  open     kpack_open+kpack_close of archives from 1 MiB to 1 GiB that share
//           one TOC shape (64 entries): open must not grow with archive size.
//  first    open + first kpack_get_kernel of a 2.5 MiB code object (zstd),
//           without and with the frame_offset extension.
//  threads  64 loads of 2.5 MiB code objects from one archive by 1/2/4/8
//           threads: loads on one archive must decompress in parallel.
//
//===----------------------------------------------------------------------===//

#include "ArchiveBuilder.h"

#include "rocm_kpack/kpack.h"

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <sys/resource.h>
#include <thread>
#include <unistd.h>

using namespace kpack_test;
using Clock = std::chrono::steady_clock;

namespace {

double secondsSince(Clock::time_point Start) {
  return std::chrono::duration<double>(Clock::now() - Start).count();
}

/// User + system CPU time of the whole process.
double processCpuSeconds() {
  struct rusage U;
  getrusage(RUSAGE_SELF, &U);
  return double(U.ru_utime.tv_sec + U.ru_stime.tv_sec) +
         double(U.ru_utime.tv_usec + U.ru_stime.tv_usec) * 1e-6;
}

template <typename Fn> double medianSeconds(int Runs, Fn &&Body) {
  std::vector<double> Times;
  for (int I = 0; I < Runs; ++I) {
    Clock::time_point Start = Clock::now();
    Body();
    Times.push_back(secondsSince(Start));
  }
  std::sort(Times.begin(), Times.end());
  return Times[Times.size() / 2];
}

void check(kpack_error_t Err, const char *What) {
  if (Err != KPACK_SUCCESS) {
    std::fprintf(stderr, "error: %s failed with %d\n", What, int(Err));
    std::exit(1);
  }
}

/// A "none" archive of TotalSize bytes of blobs in 64 entries, streamed to
/// disk (the TOC differs between sizes only in integer widths).
std::string writeSizedArchive(const std::string &Dir, uint64_t TotalSize) {
  const int Entries = 64;
  const uint64_t EntrySize = TotalSize / Entries;
  TocValue Toc = TocValue::map();
  Toc["format_version"] = 1;
  Toc["group_name"] = "bench";
  Toc["gfx_arch_family"] = "gfx1100";
  Toc["gfx_arches"] = TocValue::array({"gfx1100"});
  Toc["compression_scheme"] = "none";
  TocValue Blobs = TocValue::array();
  TocValue Index = TocValue::map();
  for (int I = 0; I < Entries; ++I) {
    TocValue Blob = TocValue::map();
    Blob["offset"] = BlobStart + I * EntrySize;
    Blob["size"] = EntrySize;
    Blobs.A.push_back(Blob);
    TocValue Fields = TocValue::map();
    Fields["type"] = "hsaco";
    Fields["ordinal"] = uint64_t(I);
    Fields["original_size"] = EntrySize;
    Index["lib/libbench.so#" + std::to_string(I)]["gfx1100"] = Fields;
  }
  Toc["blobs"] = Blobs;
  Toc["toc"] = Index;

  ArchiveParts Header;
  Header.TocOffsetOverride = BlobStart + Entries * EntrySize;
  Header.Toc = TocValue::map(); // placeholder, rewritten below
  Bytes Head = serialize(Header);
  Head.resize(BlobStart);
  std::string Path =
      Dir + "/kpack-bench-open-" + std::to_string(TotalSize) + ".kpack";
  std::FILE *F = std::fopen(Path.c_str(), "wb");
  if (!F) {
    std::fprintf(stderr, "error: cannot write %s\n", Path.c_str());
    std::exit(1);
  }
  std::fwrite(Head.data(), 1, Head.size(), F);
  Bytes Chunk = payload("blob", 1 << 20);
  for (uint64_t Left = Entries * EntrySize; Left > 0;) {
    size_t N = size_t(std::min<uint64_t>(Left, Chunk.size()));
    std::fwrite(Chunk.data(), 1, N, F);
    Left -= N;
  }
  Bytes TocBytes = packToBytes(Toc);
  std::fwrite(TocBytes.data(), 1, TocBytes.size(), F);
  if (std::fclose(F) != 0) {
    std::fprintf(stderr, "error: cannot write %s\n", Path.c_str());
    std::exit(1);
  }
  return Path;
}

std::string writeCodeObjectArchive(const std::string &Dir, int Entries,
                                   bool FrameExtension) {
  ArchiveSpec Spec;
  Spec.Arches = {"gfx1100"};
  Spec.FrameExtension = FrameExtension;
  for (int I = 0; I < Entries; ++I)
    Spec.Entries.push_back({"lib/libbench.so#" + std::to_string(I), "gfx1100",
                            payload("co" + std::to_string(I), 2560 * 1024)});
  std::string Path = Dir + "/kpack-bench-co-" + std::to_string(Entries) +
                     (FrameExtension ? "-ext" : "") + ".kpack";
  if (!writeFile(Path, buildArchive(Spec))) {
    std::fprintf(stderr, "error: cannot write %s\n", Path.c_str());
    std::exit(1);
  }
  return Path;
}

void loadOne(kpack_archive_t A, int Ordinal) {
  void *Data = nullptr;
  size_t Size = 0;
  std::string Key = "lib/libbench.so#" + std::to_string(Ordinal);
  check(kpack_get_kernel(A, Key.c_str(), "gfx1100", &Data, &Size),
        "kpack_get_kernel");
  kpack_free_kernel(Data);
}

} // namespace

int main(int argc, char **argv) {
  const std::string Dir = argc > 1 ? argv[1] : "/tmp";
  std::vector<std::string> Generated;

  std::printf("## open time vs archive size (64 entries, median of 201)\n");
  std::printf("| archive size | open+close |\n|---|---|\n");
  for (uint64_t MiB : {1, 16, 256, 1024}) {
    std::string Path = writeSizedArchive(Dir, MiB << 20);
    Generated.push_back(Path);
    double T = medianSeconds(201, [&] {
      kpack_archive_t A = nullptr;
      check(kpack_open(Path.c_str(), &A), "kpack_open");
      kpack_close(A);
    });
    std::printf("| %llu MiB | %.1f us |\n", (unsigned long long)MiB, T * 1e6);
    std::fflush(stdout);
  }

  std::printf("\n## first load of a 2.5 MiB code object (16 entries, last "
              "ordinal, median of 21)\n");
  std::printf("| archive | open + first load |\n|---|---|\n");
  for (bool Ext : {false, true}) {
    std::string Path = writeCodeObjectArchive(Dir, 16, Ext);
    Generated.push_back(Path);
    double T = medianSeconds(21, [&] {
      kpack_archive_t A = nullptr;
      check(kpack_open(Path.c_str(), &A), "kpack_open");
      loadOne(A, 15);
      kpack_close(A);
    });
    std::printf("| zstd-per-kernel%s | %.2f ms |\n",
                Ext ? " + frame_offset" : " (size chain)", T * 1e3);
    std::fflush(stdout);
  }

  std::printf(
      "\n## 64 loads of 2.5 MiB code objects from one archive (median of 5)\n");
  std::printf(
      "CPU/wall = cores the process actually got (2.0 = both cores busy).\n\n");
  std::printf(
      "| threads | wall time | speed-up | CPU/wall |\n|---|---|---|---|\n");
  {
    std::string Path = writeCodeObjectArchive(Dir, 32, true);
    Generated.push_back(Path);
    kpack_archive_t A = nullptr;
    check(kpack_open(Path.c_str(), &A), "kpack_open");
    const int Loads = 64;
    double Single = 0;
    for (int Threads : {1, 2, 4, 8}) {
      double Cpu = 0, Wall = 0;
      double T = medianSeconds(5, [&] {
        double Cpu0 = processCpuSeconds();
        Clock::time_point Start = Clock::now();
        std::vector<std::thread> Pool;
        for (int W = 0; W < Threads; ++W)
          Pool.emplace_back([&, W] {
            for (int I = W; I < Loads; I += Threads)
              loadOne(A, I % 32);
          });
        for (std::thread &Th : Pool)
          Th.join();
        Wall += secondsSince(Start);
        Cpu += processCpuSeconds() - Cpu0;
      });
      if (Threads == 1)
        Single = T;
      std::printf("| %d | %.1f ms | %.2fx | %.2f |\n", Threads, T * 1e3,
                  Single / T, Cpu / Wall);
      std::fflush(stdout);
    }
    kpack_close(A);
  }
  std::printf("\n(hardware threads: %u)\n",
              std::thread::hardware_concurrency());
  for (const std::string &P : Generated)
    ::unlink(P.c_str());
  return 0;
}
