//===- Merge.cpp - kpack merge: several archives into one -----------------===//
//
// kpack merge -o OUT.kpack IN.kpack... [--group G] [--family F]
//             [--compression none|zstd] [--level N] [-j N]
//
// Every entry of every input (read with the runtime's reader), its entry
// metadata kept, goes into one archive through the emission library's
// ArchiveSet, so the output is checked, compressed and deduplicated like
// every other writer's: identical code objects under different keys are
// stored once (TOC ordinal aliasing). The same (key, arch) in two inputs is
// stored once when the bytes are identical and an error naming both inputs
// otherwise. Inputs are read in command-line order, each in its own ordinal
// order, so the output is deterministic. Group and family default to the
// inputs' when they all agree (else the output's file name without .kpack,
// and the single-archive default).
//
//===----------------------------------------------------------------------===//

#include "Commands.h"
#include "CompressionOptions.h"
#include "TimeTraceOption.h"

#include "kpack/ArchiveReader.h"
#include "kpack/Emission.h"
#include "kpack/LLVMError.h"

#include "llvm/Support/FileSystem.h"
#include "llvm/Support/Path.h"
#include "llvm/Support/raw_ostream.h"

#include <algorithm>
#include <map>
#include <tuple>

using namespace llvm;
using namespace kpack;

static cl::SubCommand MergeCmd("merge",
                               "Merge .kpack archives into one, storing "
                               "identical code objects once");
static cl::list<std::string> MergeInputs(cl::Positional, cl::OneOrMore,
                                         cl::desc("<archive.kpack>..."),
                                         cl::sub(MergeCmd));
static cl::opt<std::string> MergeOutput("o", cl::Required,
                                        cl::desc("Output archive"),
                                        cl::value_desc("file"),
                                        cl::sub(MergeCmd));
static cl::opt<std::string>
    MergeGroup("group",
               cl::desc("TOC group_name (default: the inputs' if they agree, "
                        "else the output file name without .kpack)"),
               cl::sub(MergeCmd));
static cl::opt<std::string>
    MergeFamily("family",
                cl::desc("TOC gfx_arch_family (default: the inputs' if they "
                         "agree, else the arch if there is only one, else "
                         "\"multi\")"),
                cl::sub(MergeCmd));
static CompressionOptions MergeCompression(MergeCmd);

namespace {

struct Input {
  std::string Path;
  std::shared_ptr<const ArchiveReader> Reader;
};

Expected<std::vector<uint8_t>> readEntry(const Input &In,
                                         const ArchiveReader::Entry &E) {
  std::vector<uint8_t> Out;
  if (Status S = In.Reader->read(E, Out))
    return makeError("'" + In.Path + "': entry '" + E.Key + "' for " + E.Arch +
                     ": " + S.message());
  return Out;
}

/// The value all inputs agree on, or "".
template <typename Get>
std::string agreed(const std::vector<Input> &Inputs, Get Of) {
  std::string Value = Of(*Inputs.front().Reader);
  for (const Input &In : Inputs)
    if (Of(*In.Reader) != Value)
      return "";
  return Value;
}

} // namespace

static Error merge() {
  auto Compression = MergeCompression.settings();
  if (!Compression)
    return Compression.takeError();

  std::vector<Input> Inputs;
  for (const std::string &Path : MergeInputs) {
    bool Same = false;
    if (!sys::fs::equivalent(Path, MergeOutput, Same) && Same)
      return makeError("the output '" + MergeOutput + "' is the input '" +
                       Path + "'");
    auto R = openArchive(Path);
    if (!R)
      return R.takeError();
    Inputs.push_back({Path, std::shared_ptr<const ArchiveReader>(std::move(*R))});
  }

  ArchiveLayout Layout;
  Layout.ArchivePath = MergeOutput;
  Layout.GroupName = MergeGroup;
  if (Layout.GroupName.empty())
    Layout.GroupName =
        agreed(Inputs, [](const ArchiveReader &R) { return R.groupName(); });
  if (Layout.GroupName.empty())
    Layout.GroupName = sys::path::stem(MergeOutput).str();
  Layout.Family = MergeFamily;
  if (Layout.Family.empty())
    Layout.Family = agreed(
        Inputs, [](const ArchiveReader &R) { return R.gfxArchFamily(); });
  Layout.Compression = *Compression;
  Layout.Threads = MergeCompression.threads();
  Layout.WriteEmpty = true;
  // Inputs may hold kernel-database blobs; ELF entries are still checked.
  Layout.AllowOpaqueEntries = true;
  ArchiveSet Archives(std::move(Layout));

  // (key, arch) -> the input and entry that provided it.
  std::map<std::pair<std::string, std::string>,
           std::pair<size_t, const ArchiveReader::Entry *>>
      Seen;
  uint64_t SameKey = 0;
  for (size_t I = 0; I < Inputs.size(); ++I) {
    const Input &In = Inputs[I];
    std::vector<const ArchiveReader::Entry *> Entries;
    for (const ArchiveReader::Entry &E : In.Reader->entries())
      Entries.push_back(&E);
    // The input's own order: its ordinals, aliases by key and arch.
    std::sort(Entries.begin(), Entries.end(), [](const auto *A, const auto *B) {
      return std::tie(A->Ordinal, A->Key, A->Arch) <
             std::tie(B->Ordinal, B->Key, B->Arch);
    });
    for (const ArchiveReader::Entry *E : Entries) {
      auto [It, New] = Seen.try_emplace({E->Key, E->Arch}, I, E);
      if (!New) {
        const Input &First = Inputs[It->second.first];
        auto Theirs = readEntry(First, *It->second.second);
        if (!Theirs)
          return Theirs.takeError();
        auto Ours = readEntry(In, *E);
        if (!Ours)
          return Ours.takeError();
        if (*Theirs != *Ours)
          return makeError("entry '" + E->Key + "' for " + E->Arch +
                           " differs between '" + First.Path + "' and '" +
                           In.Path + "'");
        ++SameKey;
        continue;
      }
      CodeObjectRef C;
      C.TargetId = E->Arch;
      C.Size = E->OriginalSize;
      C.Origin = "'" + In.Path + "': entry '" + E->Key + "' for " + E->Arch;
      C.Source = EntrySource::fromCallback(
          [Reader = In.Reader, Entry = *E](std::vector<uint8_t> &Out) {
            return Reader->read(Entry, Out);
          },
          E->OriginalSize);
      if (Error Err = Archives.add(E->Key, C, E->Metadata))
        return Err;
    }
  }

  auto Written = Archives.write();
  if (!Written)
    return Written.takeError();
  const ArchiveWriteStats &Stats = Written->front().Stats;
  outs() << MergeOutput << ": " << Stats.Entries << " entries from "
         << Inputs.size() << " archives, " << Stats.OriginalBytes
         << " bytes -> " << Stats.FileBytes << " bytes";
  if (SameKey)
    outs() << ", " << SameKey << " identical duplicate"
           << (SameKey == 1 ? "" : "s") << " dropped";
  if (Stats.Deduplicated)
    outs() << ", " << Stats.Deduplicated << " stored once with another";
  outs() << "\n";
  return Error::success();
}

static TimeTraceOption MergeTrace(MergeCmd);

int runMerge() {
  return MergeTrace.run("kpack merge", MergeOutput, [] {
    if (Error E = merge())
      return reportError("kpack merge", std::move(E));
    return 0;
  });
}
