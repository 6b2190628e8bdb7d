//===- SplitWheel.cpp - kpack split-wheel ---------------------------------===//
//
// kpack split-wheel --input FAT.whl --output-dir DIR
//                   --device-package-prefix P --overlay-root R
//                   [--device-requires-dist REQ ...] [--wheel-type torch-fat]
//                   [--databases H ...] [--output-format wheel|directory]
//                   [--compression none|zstd|...] [--compression-level N]
//                   [-j N] [--generate-variant-wheel [--variant-label L]]
//                   [--tmp-dir D] [--verbose] [--clang-offload-bundler B]
//
// Upstream's split_python_wheels, flag for flag (docs/wheels.md): a fat
// wheel -> a host wheel (same name) and one device wheel per rocm_bootstrap
// bundle key. The fat wheel may also be given as the positional argument;
// --targets, --split-databases, --level and --quiet are this tool's own.
// The work is kpack::splitWheel (lib/artifacts).
//
//===----------------------------------------------------------------------===//

#include "Commands.h"
#include "CompressionOptions.h"
#include "TimeTraceOption.h"

#include "kpack/WheelSplit.h"

#include "llvm/ADT/StringExtras.h"
#include "llvm/Support/raw_ostream.h"

using namespace llvm;
using namespace kpack;

static cl::SubCommand
    SplitWheelCmd("split-wheel", "Split a fat wheel into a host wheel and one "
                                 "device wheel per target bundle");
static cl::opt<std::string> SWPositional(cl::Positional, cl::Optional,
                                         cl::desc("<fat wheel>"),
                                         cl::sub(SplitWheelCmd));
static cl::opt<std::string> SWInput("input",
                                    cl::desc("Fat wheel (or the positional "
                                             "argument)"),
                                    cl::value_desc("wheel"),
                                    cl::sub(SplitWheelCmd));
static cl::opt<std::string> SWOutputDir("output-dir", cl::Required,
                                        cl::desc("Directory of the wheels"),
                                        cl::value_desc("dir"),
                                        cl::sub(SplitWheelCmd));
static cl::opt<std::string> SWPrefix(
    "device-package-prefix",
    cl::desc("Device wheels are <prefix>-<bundle key> (default: "
             "<name>-device)"),
    cl::value_desc("prefix"), cl::sub(SplitWheelCmd));
static cl::opt<std::string>
    SWOverlay("overlay-root",
              cl::desc("Directory of the wheel whose fat binaries are "
                       "converted; .kpack/ goes into it (default: the one "
                       "name in top_level.txt)"),
              cl::value_desc("dir"), cl::sub(SplitWheelCmd));
static cl::list<std::string> SWRequires(
    "device-requires-dist",
    cl::desc("Requires-Dist of target device wheels; @GFXARCH@ becomes the "
             "target (repeatable, or several values)"),
    cl::value_desc("requirement"), cl::sub(SplitWheelCmd));
static cl::opt<std::string>
    SWFormat("output-format", cl::init("wheel"),
             cl::desc("wheel (.whl files) or directory (exploded wheels)"),
             cl::value_desc("wheel|directory"), cl::sub(SplitWheelCmd));
static cl::opt<std::string>
    SWWheelType("wheel-type",
                cl::desc("Database handlers preset: torch-fat (rocblas, "
                         "hipblaslt, hipsparselt, aotriton, miopen)"),
                cl::value_desc("type"), cl::sub(SplitWheelCmd));
static cl::list<std::string> SWDatabases(
    "databases", cl::CommaSeparated,
    cl::desc("Kernel-database handlers whose files go to the device wheels "
             "(overrides --wheel-type)"),
    cl::value_desc("handler"), cl::sub(SplitWheelCmd));
static cl::list<std::string> SWSplitDatabases(
    "split-databases", cl::CommaSeparated,
    cl::desc("Alias of --databases"), cl::value_desc("handler,..."),
    cl::sub(SplitWheelCmd));
static cl::list<std::string>
    SWTargets("targets", cl::CommaSeparated,
              cl::desc("Target IDs to keep (default: every target in the "
                       "wheel)"),
              cl::value_desc("target,..."), cl::sub(SplitWheelCmd));
static CompressionOptions SWCompression(SplitWheelCmd);
static cl::opt<bool> SWVariant(
    "generate-variant-wheel",
    cl::desc("Also write the PEP 817 variant wheel <host>-<label>.whl"),
    cl::sub(SplitWheelCmd));
static cl::opt<std::string> SWVariantLabel(
    "variant-label", cl::init("variant"),
    cl::desc("Label of the variant wheel's file name (default: variant)"),
    cl::sub(SplitWheelCmd));
static cl::opt<std::string>
    SWTmpDir("tmp-dir", cl::desc("Directory for scratch files"),
             cl::value_desc("dir"), cl::sub(SplitWheelCmd));
static cl::opt<bool> SWVerbose("verbose", cl::desc("Log each step"),
                               cl::sub(SplitWheelCmd));
static cl::opt<std::string> SWBundler(
    "clang-offload-bundler",
    cl::desc("Accepted for upstream's command line; not needed (bundles are "
             "read in process)"),
    cl::value_desc("path"), cl::sub(SplitWheelCmd));
static cl::opt<bool> SWQuiet("quiet", cl::desc("No summary on stdout"),
                             cl::sub(SplitWheelCmd));

static TimeTraceOption SWTrace(SplitWheelCmd);

static int splitWheelCommand() {
  const char *Tool = "kpack split-wheel";
  auto Usage = [&](const Twine &Msg) { return reportUsageError(Tool, Msg); };
  if (SWInput.empty() == SWPositional.empty())
    return Usage(SWInput.empty()
                     ? "no fat wheel given (--input)"
                     : "the fat wheel is given twice (--input and an "
                       "argument)");
  std::string Input = SWInput.empty() ? SWPositional : SWInput;

  WheelSplitOptions Opts;
  Opts.OutputDir = SWOutputDir;
  Opts.DevicePackagePrefix = SWPrefix;
  Opts.OverlayRoot = SWOverlay;
  Opts.DeviceRequiresDist.assign(SWRequires.begin(), SWRequires.end());
  Opts.Targets.assign(SWTargets.begin(), SWTargets.end());
  if (SWFormat != "wheel" && SWFormat != "directory")
    return Usage("--output-format: '" + SWFormat +
                 "' is neither 'wheel' nor 'directory'");
  Opts.DirectoryOutput = SWFormat == "directory";
  if (SWWheelType.getNumOccurrences()) {
    if (SWWheelType != "torch-fat")
      return Usage("--wheel-type: unknown type '" + SWWheelType +
                   "' (expected torch-fat)");
    Opts.DatabaseHandlers = {"rocblas", "hipblaslt", "hipsparselt", "aotriton",
                             "miopen"};
  }
  if (SWDatabases.getNumOccurrences() || SWSplitDatabases.getNumOccurrences()) {
    Opts.DatabaseHandlers.assign(SWDatabases.begin(), SWDatabases.end());
    Opts.DatabaseHandlers.insert(Opts.DatabaseHandlers.end(),
                                 SWSplitDatabases.begin(),
                                 SWSplitDatabases.end());
  }
  Opts.GenerateVariantWheel = SWVariant;
  Opts.VariantLabel = SWVariantLabel;
  Opts.TmpDir = SWTmpDir;
  Opts.Threads = SWCompression.threads();
  if (SWVerbose)
    Opts.Log = [](const std::string &Line) {
      outs() << Line << "\n";
      outs().flush();
    };
  Expected<CompressionSettings> Compression = SWCompression.settings();
  if (!Compression)
    return reportError(Tool, Compression.takeError());
  Opts.Compression = *Compression;

  Expected<WheelSplitResult> R = splitWheel(Input, Opts);
  if (!R)
    return reportError(Tool, R.takeError());
  if (!SWQuiet) {
    outs() << "host wheel " << R->Host.Path << ": " << R->ConvertedBinaries
           << " fat binaries converted, " << R->Host.Files << " files\n";
    if (R->Variant)
      outs() << "variant wheel " << R->Variant->Path << ": "
             << R->Variant->Files << " files\n";
    for (const WrittenWheel &D : R->Devices)
      outs() << "device wheel " << D.Path << " (" << D.BundleKey
             << "): " << D.Files << " files\n";
    outs() << "architectures: " << join(R->Architectures, ", ") << "\n";
    outs() << "GPUs served: " << join(R->Gpus, ", ") << "\n";
    if (R->DatabaseFiles || R->DroppedFiles)
      outs() << R->DatabaseFiles << " database files moved, "
             << R->DroppedFiles << " of unselected targets left out\n";
    for (const std::string &F : R->FatOutsideOverlay)
      outs() << "left unchanged (outside the overlay root): " << F << "\n";
  }
  return 0;
}

int runSplitWheel() {
  return SWTrace.run("kpack split-wheel", SWOutputDir, splitWheelCommand);
}
