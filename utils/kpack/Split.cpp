//===- Split.cpp - kpack split: TheRock's split_artifacts -----------------===//
//
// kpack split (--artifact-dir DIR --artifact-prefix NAME_COMP |
//              --batch-artifact-parent-dir DIR) --output-dir OUT
//             [--split-databases H...] [--gpu-targets T...] [--tmp-dir D]
//             [--verbose] [--clang-offload-bundler P]
//             [--compression none|zstd|zstd-long|zstd-shared] [--level N] [-j N]
//             [--json]
//
// Upstream's split_artifacts command line (docs/split.md); the compression
// options are every writer's (CompressionOptions.h); the work is
// kpack::splitArtifact (lib/artifacts, kpack/Split.h). Multi-value options
// take argparse's `--opt A B` form as well (Driver.cpp rewrites it).
//
//===----------------------------------------------------------------------===//

#include "Commands.h"
#include "FrameCacheOption.h"
#include "CompressionOptions.h"
#include "TimeTraceOption.h"

#include "kpack/DatabaseHandlers.h"
#include "kpack/Split.h"

#include "llvm/ADT/StringExtras.h"
#include "llvm/Support/FileSystem.h"
#include "llvm/Support/JSON.h"
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
static CompressionOptions SplitCompression(SplitCmd);
static cl::opt<bool> SplitJson("json",
                               cl::desc("The summary as JSON (docs/split.md)"),
                               cl::sub(SplitCmd));

static FrameCacheOption SplitCache(SplitCmd);

static void printSummary(const BatchArtifact &A, const SplitSummary &S) {
  outs() << "split " << A.Dir << " (" << A.Component << "): " << S.FatBinaries
         << " fat binaries, " << S.EmittedBinaries << " compiler-emitted, "
         << S.CodeObjects << " code objects in " << S.Archives.size()
         << " archives, " << S.DatabaseFiles << " database files -> "
         << join(S.Artifacts, " ") << "\n";
  if (S.FilteredCodeObjects || S.FilteredDatabaseFiles)
    outs() << "  left out for other targets (--gpu-targets): "
           << S.FilteredCodeObjects << " code objects, "
           << S.FilteredDatabaseFiles << " database files\n";
}

/// --json: one document for the whole run; the keys are documented in
/// docs/split.md.
static void
printJson(const std::vector<std::pair<BatchArtifact, SplitSummary>> &Done,
          const std::vector<std::pair<std::string, std::string>> &Failures) {
  json::OStream J(outs(), 2);
  J.object([&] {
    J.attributeArray("artifacts", [&] {
      for (const auto &Artifact : Done)
        J.object([&] {
          const BatchArtifact &A = Artifact.first;
          const SplitSummary &S = Artifact.second;
          J.attribute("input", A.Dir);
          J.attribute("component", A.Component);
          J.attributeArray("outputs", [&] {
            for (const std::string &Name : S.Artifacts)
              J.value(Name);
          });
          J.attribute("fat_binaries", S.FatBinaries);
          J.attribute("compiler_emitted", S.EmittedBinaries);
          J.attribute("code_objects", S.CodeObjects);
          J.attribute("database_files", S.DatabaseFiles);
          J.attribute("filtered_code_objects", S.FilteredCodeObjects);
          J.attribute("filtered_database_files", S.FilteredDatabaseFiles);
          J.attributeArray("archives", [&] {
            for (const WrittenArchive &W : S.Archives)
              J.object([&] {
                J.attribute("path", W.Path);
                J.attribute("target", W.TargetId);
                J.attribute("entries", W.Stats.Entries);
                J.attribute("original_bytes", W.Stats.OriginalBytes);
                J.attribute("file_bytes", W.Stats.FileBytes);
                J.attribute("deduplicated", W.Stats.Deduplicated);
              });
          });
          J.attributeArray("warnings", [&] {
            for (const std::string &W : S.Warnings)
              J.value(W);
          });
        });
    });
    J.attributeArray("failed", [&] {
      for (const auto &Failure : Failures)
        J.object([&] {
          J.attribute("input", Failure.first);
          J.attribute("error", Failure.second);
        });
    });
  });
  outs() << "\n";
}

static Error splitArtifacts() {
  bool Batch = !SplitBatchDir.empty();
  if (Batch == !SplitArtifactDir.empty())
    return makeUsageError("exactly one of --artifact-dir and "
                          "--batch-artifact-parent-dir is required");
  if (SplitOutputDir.empty())
    return makeUsageError("--output-dir is required");
  if (Batch && !SplitArtifactPrefix.empty())
    return makeUsageError(
        "--artifact-prefix cannot be used with --batch-artifact-parent-dir");
  if (!Batch && SplitArtifactPrefix.empty())
    return makeUsageError("--artifact-prefix is required with --artifact-dir");
  // As verify-artifacts and recombine: an input directory that is not there
  // is a bad command line.
  StringRef Input = Batch ? SplitBatchDir : SplitArtifactDir;
  if (!sys::fs::is_directory(Input))
    return makeUsageError("input directory does not exist: '" + Input + "'");

  SplitOptions Opts;
  Opts.OutputDir = SplitOutputDir;
  Opts.Threads = SplitCompression.threads();
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
    return asUsageError(Handlers.takeError());
  Opts.DatabaseHandlers = std::move(*Handlers);
  Expected<CompressionSettings> Compression = SplitCompression.settings();
  if (!Compression)
    return Compression.takeError();
  Opts.Compression = *Compression;
  if (Status S = SplitCache.open(Opts.Compression))
    return makeUsageError(S.message());
  // With --json, stdout holds the document alone.
  if (SplitVerbose)
    Opts.Log = [](const std::string &Line) {
      (SplitJson ? errs() : outs()) << "  " << Line << "\n";
    };

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
  std::vector<std::pair<BatchArtifact, SplitSummary>> Done;
  std::vector<std::pair<std::string, std::string>> Failures; // dir, message
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
      Failures.emplace_back(A.Dir, Msg);
      continue;
    }
    if (!SplitJson)
      printSummary(A, *Summary);
    Done.emplace_back(A, std::move(*Summary));
  }
  if (SplitJson)
    printJson(Done, Failures);
  if (!Failures.empty()) {
    std::vector<std::string> Dirs;
    for (const auto &F : Failures)
      Dirs.push_back(F.first);
    return makeError(Twine(Failures.size()) + " of " +
                     Twine(Artifacts.size()) +
                     " artifacts failed to split: " + join(Dirs, ", "));
  }
  return Error::success();
}

static TimeTraceOption SplitTrace(SplitCmd);

int runSplit() {
  // Analysis and rewrites run on llvm::parallelFor, whose executor takes
  // its thread count from this strategy when first used.
  if (unsigned Threads = SplitCompression.threads())
    parallel::strategy = hardware_concurrency(Threads);
  return SplitTrace.run("kpack split", SplitOutputDir, [] {
    if (Error E = splitArtifacts())
      return reportError("kpack split", std::move(E));
    return 0;
  });
}
