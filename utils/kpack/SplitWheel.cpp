//===- SplitWheel.cpp - kpack split-wheel ---------------------------------===//
//
// kpack split-wheel FAT.whl --output-dir DIR [--targets T,...]
//                   [--split-databases H,...]
//                   [--compression none|zstd|zstd-long|zstd-shared]
//                   [--level N] [--jobs N] [--quiet]
//
// A fat ROCm wheel -> a host wheel (same name) and one device wheel per
// target ID (docs/wheels.md). The work is kpack::splitWheel (lib/artifacts).
//
//===----------------------------------------------------------------------===//

#include "Commands.h"

#include "kpack/WheelSplit.h"

#include "llvm/Support/raw_ostream.h"

using namespace llvm;
using namespace kpack;

static cl::SubCommand
    SplitWheelCmd("split-wheel", "Split a fat wheel into a host wheel and one "
                                 "device wheel per target");
static cl::opt<std::string> SWInput(cl::Positional, cl::Required,
                                    cl::desc("<fat wheel>"),
                                    cl::sub(SplitWheelCmd));
static cl::opt<std::string> SWOutputDir("output-dir", cl::Required,
                                        cl::desc("Directory of the wheels"),
                                        cl::value_desc("dir"),
                                        cl::sub(SplitWheelCmd));
static cl::list<std::string>
    SWTargets("targets", cl::CommaSeparated,
              cl::desc("Target IDs to write device wheels for (default: "
                       "every target in the wheel)"),
              cl::value_desc("target,..."), cl::sub(SplitWheelCmd));
static cl::list<std::string> SWDatabases(
    "split-databases", cl::CommaSeparated,
    cl::desc("Kernel-database handlers whose files go to the device wheels "
             "(rocblas, hipblaslt, aotriton, miopen, ...)"),
    cl::value_desc("handler,..."), cl::sub(SplitWheelCmd));
static cl::opt<std::string>
    SWCompression("compression", cl::init("zstd"),
                  cl::desc(CompressionSettings::optionHelp()),
                  cl::sub(SplitWheelCmd));
static cl::opt<int> SWLevel("level", cl::desc(CompressionSettings::levelHelp()),
                            cl::sub(SplitWheelCmd));
static cl::opt<unsigned>
    SWJobs("jobs", cl::init(0),
           cl::desc("Compression threads (default: all cores)"),
           cl::sub(SplitWheelCmd));
static cl::opt<bool> SWQuiet("quiet", cl::desc("No summary on stdout"),
                             cl::sub(SplitWheelCmd));

int runSplitWheel() {
  WheelSplitOptions Opts;
  Opts.OutputDir = SWOutputDir;
  Opts.Targets.assign(SWTargets.begin(), SWTargets.end());
  Opts.DatabaseHandlers.assign(SWDatabases.begin(), SWDatabases.end());
  Opts.Threads = SWJobs;
  Expected<CompressionSettings> Compression = CompressionSettings::parse(
      SWCompression, SWLevel.getNumOccurrences()
                         ? std::optional<int>(SWLevel)
                         : std::nullopt);
  if (!Compression)
    return reportError("kpack split-wheel", Compression.takeError());
  Opts.Compression = *Compression;

  Expected<WheelSplitResult> R = splitWheel(SWInput, Opts);
  if (!R)
    return reportError("kpack split-wheel", R.takeError());
  if (!SWQuiet) {
    outs() << "host wheel " << R->Host.Path << ": " << R->ConvertedBinaries
           << " fat binaries converted, " << R->Host.Files << " files, "
           << R->Host.Size << " bytes\n";
    for (const WrittenWheel &D : R->Devices)
      outs() << "device wheel " << D.Path << " (" << D.TargetId
             << "): " << D.Files << " files, " << D.Size << " bytes\n";
    if (R->DatabaseFiles || R->DroppedFiles)
      outs() << R->DatabaseFiles << " database files moved, "
             << R->DroppedFiles << " of unselected targets left out\n";
  }
  return 0;
}
