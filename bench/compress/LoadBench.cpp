//===- LoadBench.cpp - Random code-object loads from archive sets ---------===//
//
// usage: kpack_compress_load_bench [-n LOADS] [-s SEED] NAME=ARCHIVE[,...]...
//
// Each NAME=... is one set of archives holding the same code objects (e.g.
// per-target archives written with one compression scheme). LOADS entries
// are drawn uniformly, with a fixed seed, from the first set; each is then
// loaded from every set in turn (rotating which set goes first, so that a
// noisy moment hits every set alike). A load is what a fresh process pays:
// kpack_open of the archive holding the entry, kpack_get_kernel,
// kpack_free_kernel, kpack_close. The page cache is left warm. Prints, per
// set, the median, p99 and mean latency and the ratio of each to the first
// set's.
//
//===----------------------------------------------------------------------===//

#include "kpack/ArchiveReader.h"
#include "rocm_kpack/kpack.h"

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <map>
#include <memory>
#include <random>
#include <string>
#include <utility>
#include <vector>

namespace {

struct Set {
  std::string Name;
  std::vector<std::string> Archives;
  /// (key, arch) -> the archive of this set holding it.
  std::map<std::pair<std::string, std::string>, std::string> Where;
  std::vector<double> Millis;
};

[[noreturn]] void fail(const std::string &Message) {
  std::fprintf(stderr, "error: %s\n", Message.c_str());
  std::exit(1);
}

double quantile(std::vector<double> V, double Q) {
  std::sort(V.begin(), V.end());
  size_t I = std::min(V.size() - 1, size_t(Q * double(V.size())));
  return V[I];
}

} // namespace

int main(int Argc, char **Argv) {
  size_t Loads = 200;
  unsigned long Seed = 1;
  std::vector<Set> Sets;
  for (int I = 1; I < Argc; ++I) {
    std::string A = Argv[I];
    if (A == "-n" && I + 1 < Argc) {
      Loads = std::strtoul(Argv[++I], nullptr, 10);
    } else if (A == "-s" && I + 1 < Argc) {
      Seed = std::strtoul(Argv[++I], nullptr, 10);
    } else if (size_t Eq = A.find('='); Eq != std::string::npos) {
      Set S;
      S.Name = A.substr(0, Eq);
      for (size_t P = Eq + 1; P <= A.size();) {
        size_t Comma = A.find(',', P);
        if (Comma == std::string::npos)
          Comma = A.size();
        if (Comma > P)
          S.Archives.push_back(A.substr(P, Comma - P));
        P = Comma + 1;
      }
      Sets.push_back(std::move(S));
    } else {
      fail("usage: kpack_compress_load_bench [-n LOADS] [-s SEED] "
           "NAME=ARCHIVE[,ARCHIVE...]...");
    }
  }
  if (Sets.empty() || Loads == 0)
    fail("nothing to measure");

  for (Set &S : Sets)
    for (const std::string &Path : S.Archives) {
      std::unique_ptr<kpack::ArchiveReader> R;
      if (kpack::Status E = kpack::ArchiveReader::open(Path, R))
        fail(Path + ": " + E.message());
      for (const kpack::ArchiveReader::Entry &E : R->entries())
        S.Where[{E.Key, E.Arch}] = Path;
    }
  std::vector<std::pair<std::string, std::string>> Entries;
  for (const auto &KV : Sets.front().Where)
    Entries.push_back(KV.first);
  for (const Set &S : Sets)
    for (const auto &E : Entries)
      if (!S.Where.count(E))
        fail(S.Name + " lacks " + E.first + " for " + E.second);

  std::mt19937_64 Rng(Seed);
  std::uniform_int_distribution<size_t> Pick(0, Entries.size() - 1);
  for (size_t L = 0; L < Loads; ++L) {
    const auto &[Key, Arch] = Entries[Pick(Rng)];
    for (size_t K = 0; K < Sets.size(); ++K) {
      Set &S = Sets[(L + K) % Sets.size()];
      const std::string &Path = S.Where[{Key, Arch}];
      auto Start = std::chrono::steady_clock::now();
      kpack_archive_t A = nullptr;
      void *Data = nullptr;
      size_t Size = 0;
      if (kpack_open(Path.c_str(), &A) != KPACK_SUCCESS ||
          kpack_get_kernel(A, Key.c_str(), Arch.c_str(), &Data, &Size) !=
              KPACK_SUCCESS)
        fail("cannot load " + Key + " for " + Arch + " from " + Path);
      kpack_free_kernel(Data);
      kpack_close(A);
      S.Millis.push_back(std::chrono::duration<double, std::milli>(
                             std::chrono::steady_clock::now() - Start)
                             .count());
    }
  }

  std::printf("| archives | loads | median | p99 | mean | median ratio | p99 "
              "ratio |\n|---|---|---|---|---|---|---|\n");
  const double Median0 = quantile(Sets.front().Millis, 0.5),
               P990 = quantile(Sets.front().Millis, 0.99);
  for (const Set &S : Sets) {
    double Sum = 0;
    for (double M : S.Millis)
      Sum += M;
    double Median = quantile(S.Millis, 0.5), P99 = quantile(S.Millis, 0.99);
    std::printf("| %s | %zu | %.3f ms | %.3f ms | %.3f ms | %.2fx | %.2fx |\n",
                S.Name.c_str(), S.Millis.size(), Median, P99,
                Sum / double(S.Millis.size()), Median / Median0, P99 / P990);
  }
  return 0;
}
