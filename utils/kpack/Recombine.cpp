//===- Recombine.cpp - kpack recombine: TheRock's reduce step -------------===//
//
// kpack recombine --input-shards-dir DIR --config FILE.json --output-dir DIR
//                 [--component NAME] [--copy] [--verbose]
// upstream recombine_artifacts' command line (docs/therock.md); the work is
// kpack::recombineArtifacts (lib/artifacts). Exit status as upstream's: 2
// (a usage error) for a bad argument or configuration, 1 for a failed
// recombination.
//
//===----------------------------------------------------------------------===//

#include "Commands.h"

#include "kpack/Recombine.h"

#include "llvm/Support/raw_ostream.h"

#include <sys/stat.h>

using namespace llvm;
using namespace kpack;

static cl::SubCommand RecombineCmd(
    "recombine",
    "Recombine split artifacts of CI shards into package groups (TheRock)");
static cl::opt<std::string> ShardsDir(
    "input-shards-dir", cl::Required,
    cl::desc("Directory holding one directory per shard"),
    cl::value_desc("dir"), cl::sub(RecombineCmd));
static cl::opt<std::string>
    ConfigPath("config", cl::Required,
               cl::desc("JSON configuration (primary_shard, "
                        "architecture_groups, validation)"),
               cl::value_desc("file"), cl::sub(RecombineCmd));
static cl::opt<std::string> OutputDir("output-dir", cl::Required,
                                      cl::desc("Where the artifacts go"),
                                      cl::value_desc("dir"),
                                      cl::sub(RecombineCmd));
static cl::opt<std::string>
    OnlyComponent("component", cl::desc("Only this component (e.g. blas_lib)"),
                  cl::value_desc("name"), cl::sub(RecombineCmd));
static cl::opt<bool> CopyData(
    "copy",
    cl::desc("Copy file data (copy_file_range) instead of hard-linking the "
             "outputs to the shards"),
    cl::sub(RecombineCmd));
static cl::opt<bool> Verbose("verbose", cl::desc("Print what goes where"),
                             cl::sub(RecombineCmd));

int runRecombine() {
  const char *Tool = "kpack recombine";
  struct stat St;
  if (::stat(ShardsDir.c_str(), &St) != 0 || !S_ISDIR(St.st_mode))
    return reportUsageError(Tool, "input shards directory '" + ShardsDir +
                                      "' does not exist or is not a directory");
  Expected<RecombineConfig> Config = readRecombineConfig(ConfigPath);
  if (!Config)
    return reportError(Tool, asUsageError(Config.takeError()));
  RecombineOptions Opts;
  Opts.ShardsDir = ShardsDir;
  Opts.OutputDir = OutputDir;
  if (OnlyComponent.getNumOccurrences())
    Opts.Component = OnlyComponent;
  Opts.Mode = CopyData ? CopyMode::Copy : CopyMode::HardLinkFirst;
  if (Verbose)
    Opts.Log = &outs();
  Expected<std::vector<std::string>> Written =
      recombineArtifacts(*Config, Opts);
  if (!Written)
    return reportError(Tool, Written.takeError());
  if (Verbose)
    for (const std::string &Name : *Written)
      outs() << "wrote " << OutputDir << "/" << Name << "\n";
  return 0;
}
