//===- Split.cpp - kpack split: TheRock's split_artifacts -----------------===//
//
// kpack split (--artifact-dir DIR --artifact-prefix NAME_COMP |
//              --batch-artifact-parent-dir DIR) --output-dir OUT
//             [--split-databases H...] [--gpu-targets T...] [--tmp-dir D]
//             [--verbose] [--clang-offload-bundler P]
//             [--compression none|zstd|zstd-long|zstd-shared] [--level N] [-j N]
//
// Upstream's split_artifacts command line (docs/split.md); the work is
// kpack::splitArtifact (lib/artifacts, kpack/Split.h). Multi-value options
// take argparse's `--opt A B` form as well (Driver.cpp rewrites it).
//
//===----------------------------------------------------------------------===//

#include "Commands.h"
#include "FrameCacheOption.h"
#include "TimeTraceOption.h"

#include "kpack/DatabaseHandlers.h"
#include "kpack/Split.h"

#include "llvm/ADT/StringExtras.h"
#include "llvm/Support/FileSystem.h"
#include "llvm/Support/Parallel.h"
#include "llvm/Support/Threading.h"
#include "llvm/Support/WithColor.h"
#include "llvm/Support/raw_ostream.h"

using namespace llvm;
using namespace kpack;

static cl::SubCommand
    SplitCmd("split", "Split a TheRock artifact into a generic artifact and "
                      "one per target ID (upstream's split_artifacts)");
static cl::opt<std::string>
    SplitArtifactDir("artifact-dir",
                     cl::desc("Single mode: artifact directory holding "
                              "artifact_manifest.txt"),
                     cl::value_desc("dir"), cl::sub(SplitCmd));
static cl::opt<std::string> SplitBatchDir(
    "batch-artifact-parent-dir",
    cl::desc("Batch mode: split every target-specific artifact in this "
             "directory"),
    cl::value_desc("dir"), cl::sub(SplitCmd));
static cl::opt<std::string> SplitOutputDir("output-dir",
                                           cl::desc("Output directory"),
                                           cl::value_desc("dir"),
                                           cl::sub(SplitCmd));
static cl::opt<std::string> SplitArtifactPrefix(
    "artifact-prefix",
    cl::desc("<name>_<component> (e.g. blas_lib); required with "
             "--artifact-dir, not allowed in batch mode"),
    cl::value_desc("name"), cl::sub(SplitCmd));
static cl::list<std::string> SplitDatabases(
    "split-databases",
    cl::desc("Kernel-database handlers: files they own go to the artifact "
             "of their base arch (gfx90a for gfx90a-xnack+)"),
    cl::value_desc("handler"), cl::CommaSeparated, cl::sub(SplitCmd));
static cl::list<std::string> SplitGpuTargets(
    "gpu-targets",
    cl::desc("Only these targets get per-target artifacts, compared "
             "without features; device code and database files of others "
             "are left out"),
    cl::value_desc("target"), cl::CommaSeparated, cl::sub(SplitCmd));
static cl::opt<std::string>
    SplitTmpDir("tmp-dir",
                cl::desc("Accepted for compatibility; outputs are staged "
                         "in the output directory"),
                cl::value_desc("dir"), cl::sub(SplitCmd));
static cl::opt<bool> SplitVerbose("verbose",
                                  cl::desc("Print what happens to each file"),
                                  cl::sub(SplitCmd));
static cl::opt<std::string> SplitBundler(
    "clang-offload-bundler",
    cl::desc("Accepted for compatibility; unused (bundles are read "
             "directly)"),
    cl::value_desc("path"), cl::sub(SplitCmd));
static cl::opt<std::string> SplitCompression(
    "compression",
    cl::desc(CompressionSettings::optionHelp()),
    cl::init("zstd"), cl::sub(SplitCmd));
static cl::opt<int> SplitLevel(
    "level",
    cl::desc(CompressionSettings::levelHelp()),
    cl::sub(SplitCmd));

static FrameCacheOption SplitCache(SplitCmd);

static cl::opt<unsigned> SplitThreads("j",
                                      cl::desc("Threads (default: all cores)"),
                                      cl::init(0), cl::sub(SplitCmd));

static Error splitArtifacts() {
  bool Batch = !SplitBatchDir.empty();
  if (Batch == !SplitArtifactDir.empty())
    return makeError("exactly one of --artifact-dir and "
                     "--batch-artifact-parent-dir is required");
  if (SplitOutputDir.empty())
    return makeError("--output-dir is required");
  if (Batch && !SplitArtifactPrefix.empty())
    return makeError(
        "--artifact-prefix cannot be used with --batch-artifact-parent-dir");
  if (!Batch && SplitArtifactPrefix.empty())
    return makeError("--artifact-prefix is required with --artifact-dir");
  StringRef Input = Batch ? SplitBatchDir : SplitArtifactDir;
  if (!sys::fs::is_directory(Input))
    return makeError("input directory does not exist: '" + Input + "'");

  SplitOptions Opts;
  Opts.OutputDir = SplitOutputDir;
  Opts.Threads = SplitThreads;
  // CMake lists may arrive as one ';'-separated argument.
  for (const std::string &T : SplitGpuTargets) {
    SmallVector<StringRef, 4> Parts;
    StringRef(T).split(Parts, ';', -1, /*KeepEmpty=*/false);
    for (StringRef P : Parts)
      Opts.GpuTargets.push_back(P.trim().str());
  }
  Expected<std::vector<const DatabaseHandler *>> Handlers =
      databaseHandlersNamed(SplitDatabases);
  if (!Handlers)
    return Handlers.takeError();
  Opts.DatabaseHandlers = std::move(*Handlers);
  Expected<CompressionSettings> Compression = CompressionSettings::parse(
      SplitCompression,
      SplitLevel.getNumOccurrences() ? std::optional<int>(SplitLevel)
                                     : std::nullopt);
  if (!Compression)
    return Compression.takeError();
  Opts.Compression = *Compression;
  if (Status S = SplitCache.open(Opts.Compression))
    return makeError(S.message());
  if (SplitVerbose)
    Opts.Log = [](const std::string &Line) { outs() << "  " << Line << "\n"; };

  std::vector<BatchArtifact> Artifacts;
  if (Batch) {
    Expected<std::vector<BatchArtifact>> Listed =
        listBatchArtifacts(SplitBatchDir, Opts.Log);
    if (!Listed)
      return Listed.takeError();
    Artifacts = std::move(*Listed);
  } else {
    Artifacts.push_back({SplitArtifactDir, SplitArtifactPrefix});
  }

  // As upstream's batch mode: every artifact is tried, failures are listed
  // at the end.
  std::vector<std::string> Failures;
  for (const BatchArtifact &A : Artifacts) {
    Opts.ArtifactDir = A.Dir;
    Opts.Component = A.Component;
    Expected<SplitSummary> Summary = splitArtifact(Opts);
    if (Summary)
      for (const std::string &W : Summary->Warnings)
        WithColor::warning(errs(), "kpack split") << W << "\n";
    if (!Summary) {
      std::string Msg = toString(Summary.takeError());
      if (!Batch)
        return makeError(Msg);
      errs() << "kpack split: error: " << A.Dir << ": " << Msg << "\n";
      Failures.push_back(A.Dir);
      continue;
    }
    outs() << "split " << A.Dir << " (" << A.Component << "): "
           << Summary->FatBinaries << " fat binaries, "
           << Summary->EmittedBinaries << " compiler-emitted, "
           << Summary->CodeObjects << " code objects in "
           << Summary->Archives.size() << " archives, "
           << Summary->DatabaseFiles << " database files -> "
           << join(Summary->Artifacts, " ") << "\n";
    if (Summary->FilteredCodeObjects || Summary->FilteredDatabaseFiles)
      outs() << "  left out for other targets (--gpu-targets): "
             << Summary->FilteredCodeObjects << " code objects, "
             << Summary->FilteredDatabaseFiles << " database files\n";
  }
  if (!Failures.empty())
    return makeError(Twine(Failures.size()) + " of " +
                     Twine(Artifacts.size()) +
                     " artifacts failed to split: " + join(Failures, ", "));
  return Error::success();
}

static TimeTraceOption SplitTrace(SplitCmd);

int runSplit() {
  // Analysis and rewrites run on llvm::parallelFor, whose executor takes
  // its thread count from this strategy when first used.
  if (SplitThreads)
    parallel::strategy = hardware_concurrency(SplitThreads);
  return SplitTrace.run("kpack split", SplitOutputDir, [] {
    if (Error E = splitArtifacts())
      return reportError("kpack split", std::move(E));
    return 0;
  });
}
