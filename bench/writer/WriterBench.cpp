//===- WriterBench.cpp - ArchiveWriter throughput -------------------------===//
//
// kpack-writer-bench [-j N] [-l LEVEL] [-r ROUNDS] [--time-trace FILE]
//                    [--raw DIR] OUT.kpack INPUT...
//
// Each INPUT that holds offload bundles (a dumped .hip_fatbin section) adds
// its device code objects as entries "<input>#<bundle>" / <target id>; a
// .kpack archive adds its entries (key and arch as in its TOC, in TOC
// order), so that a benchmark's input travels compressed; any other INPUT is
// one entry. The code objects are decoded into memory first (not timed),
// then written with the zstd-per-kernel scheme ROUNDS times (default 1); the
// time of each ArchiveWriter::write is reported, one line each.
// --time-trace FILE records the last round's --time-trace (docs/
// benchmarks.md, "Time traces"). --raw DIR writes the code objects to DIR,
// one file each (N.co) and concatenated (all.bin), to time the zstd command
// line on the same bytes (see docs/benchmarks.md).
//
//===----------------------------------------------------------------------===//

#include "kpack/ArchiveReader.h"
#include "kpack/ArchiveWriter.h"
#include "kpack/AtomicFile.h"
#include "kpack/BundleCodec.h"
#include "kpack/TimeTrace.h"

#include <algorithm>
#include <chrono>
#include <sys/resource.h>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <iterator>
#include <memory>
#include <string>
#include <vector>

using namespace kpack;

static int fail(const std::string &Msg) {
  std::fprintf(stderr, "error: %s\n", Msg.c_str());
  return 1;
}

int main(int Argc, char **Argv) {
  ArchiveWriterOptions Opts{"bench", "bench"};
  std::string Out, Raw, Trace;
  unsigned Rounds = 1;
  std::vector<std::string> Inputs;
  for (int I = 1; I < Argc; ++I) {
    std::string A = Argv[I];
    if ((A == "-j" || A == "-l" || A == "-r" || A == "--raw" ||
         A == "--time-trace") &&
        I + 1 < Argc) {
      std::string V = Argv[++I];
      if (A == "-j")
        Opts.Threads = static_cast<unsigned>(std::strtoul(V.c_str(), nullptr, 10));
      else if (A == "-l")
        Opts.ZstdLevel = std::atoi(V.c_str());
      else if (A == "-r")
        Rounds = std::max(1ul, std::strtoul(V.c_str(), nullptr, 10));
      else if (A == "--time-trace")
        Trace = V;
      else
        Raw = V;
    } else if (Out.empty()) {
      Out = A;
    } else {
      Inputs.push_back(A);
    }
  }
  if (Out.empty() || Inputs.empty())
    return fail("usage: kpack-writer-bench [-j N] [-l LEVEL] [-r ROUNDS] "
                "[--time-trace FILE] [--raw DIR] OUT.kpack INPUT...");

  std::vector<std::vector<uint8_t>> Objects;
  std::vector<std::pair<std::string, std::string>> Names;
  for (const std::string &Path : Inputs) {
    std::ifstream In(Path, std::ios::binary);
    if (!In)
      return fail("cannot read '" + Path + "'");
    std::vector<uint8_t> Bytes((std::istreambuf_iterator<char>(In)), {});
    if (Bytes.size() >= 4 && std::memcmp(Bytes.data(), "KPAK", 4) == 0) {
      std::unique_ptr<ArchiveReader> Reader;
      if (Status S = ArchiveReader::openBytes(Bytes.data(), Bytes.size(),
                                              Reader))
        return fail(Path + ": " + S.message());
      for (const ArchiveReader::Entry &E : Reader->entries()) {
        Names.push_back({E.Key, E.Arch});
        Objects.emplace_back();
        if (Status S = Reader->read(E, Objects.back()))
          return fail(Path + ": " + E.Key + ": " + S.message());
      }
      continue;
    }
    if (!isBundle(Bytes.data(), Bytes.size())) {
      Names.push_back({Path, "gfx000"});
      Objects.push_back(std::move(Bytes));
      continue;
    }
    std::vector<Bundle> Bundles;
    if (Status S = decodeBundleSection(Bytes.data(), Bytes.size(), Bundles))
      return fail(Path + ": " + S.message());
    for (size_t B = 0; B < Bundles.size(); ++B)
      for (const BundleEntry *E : Bundles[B].deviceEntries()) {
        Names.push_back({Path + "#" + std::to_string(B), E->TargetId});
        const uint8_t *P = Bundles[B].payload(*E);
        Objects.emplace_back(P, P + E->Size);
      }
  }

  ArchiveWriter W(Opts);
  uint64_t Total = 0;
  std::vector<uint8_t> Concat;
  for (size_t I = 0; I < Objects.size(); ++I) {
    if (Status S = W.addEntry(Names[I].first, Names[I].second,
                              EntrySource::fromBytes(Objects[I].data(),
                                                     Objects[I].size())))
      return fail(S.message());
    Total += Objects[I].size();
    if (Raw.empty())
      continue;
    Concat.insert(Concat.end(), Objects[I].begin(), Objects[I].end());
    if (Status S = writeFileAtomically(Raw + "/" + std::to_string(I) + ".co",
                                       Objects[I].data(), Objects[I].size()))
      return fail(S.message());
  }
  if (!Raw.empty())
    if (Status S = writeFileAtomically(Raw + "/all.bin", Concat.data(),
                                       Concat.size()))
      return fail(S.message());

  // CPU time as well as wall time: on a loaded machine only the former is
  // comparable between runs.
  auto CpuSeconds = [] {
    struct rusage U;
    getrusage(RUSAGE_SELF, &U);
    return U.ru_utime.tv_sec + U.ru_stime.tv_sec +
           (U.ru_utime.tv_usec + U.ru_stime.tv_usec) / 1e6;
  };
  // The writer's memory: how far the process's peak RSS (VmHWM, reset
  // before each round where Linux allows) rises above its RSS before the
  // write, i.e. above the decoded inputs.
  auto StatusMiB = [](const char *Field) {
    std::ifstream Status("/proc/self/status");
    std::string Line;
    while (std::getline(Status, Line))
      if (Line.rfind(Field, 0) == 0)
        return std::strtod(Line.c_str() + std::strlen(Field), nullptr) / 1024;
    return 0.0;
  };
  for (unsigned R = 0; R < Rounds; ++R) {
    std::ofstream("/proc/self/clear_refs") << "5";
    const double RssBefore = StatusMiB("VmRSS:");
    std::unique_ptr<TimeTraceSession> Session;
    if (!Trace.empty() && R + 1 == Rounds)
      Session = std::make_unique<TimeTraceSession>(
          DefaultTimeTraceGranularityUs, "kpack-writer-bench");
    double CpuStart = CpuSeconds();
    auto Start = std::chrono::steady_clock::now();
    ArchiveWriteStats Stats;
    if (Status S = W.write(Out, &Stats))
      return fail(S.message());
    double Secs = std::chrono::duration<double>(
                      std::chrono::steady_clock::now() - Start)
                      .count();
    double Cpu = CpuSeconds() - CpuStart;
    std::printf("entries %llu, input %.1f MiB, archive %.1f MiB (%.2fx), "
                "%.3f s wall, %.3f s cpu, %.1f MiB/s, peak RSS +%.1f MiB\n",
                static_cast<unsigned long long>(Stats.Entries),
                Total / 1048576.0, Stats.FileBytes / 1048576.0,
                Stats.FileBytes ? double(Total) / Stats.FileBytes : 0.0, Secs,
                Cpu, Total / 1048576.0 / Secs, StatusMiB("VmHWM:") - RssBefore);
    std::fflush(stdout);
    if (Session)
      if (Status S = Session->write(Trace))
        return fail(S.message());
  }
  return 0;
}
