//===- Driver.cpp - The kpack command-line tool ---------------------------===//
//
// kpack <subcommand> [options]: inspect, pack, list, extract and verify
// device code archives and host binaries. The work is done by the libraries
// (lib/format, lib/host, the runtime's reader); the subcommands are thin.
//
//===----------------------------------------------------------------------===//

#include "Commands.h"

#include "kpack/ArchiveReader.h"
#include "kpack/Error.h"
#include "kpack/ToolCommandLine.h"
#include "kpack/WriteProgress.h"

#include "llvm/ADT/SmallVector.h"
#include "llvm/Support/InitLLVM.h"
#include "llvm/Support/Path.h"
#include "llvm/Support/StringSaver.h"
#include "llvm/Support/raw_ostream.h"

using namespace llvm;

int reportError(StringRef Tool, Error E) {
  return kpack::reportToolError(Tool, std::move(E));
}

Expected<std::unique_ptr<kpack::ArchiveReader>> openArchive(StringRef Path) {
  std::unique_ptr<kpack::ArchiveReader> Reader;
  if (kpack::Status E = kpack::ArchiveReader::open(Path.str(), Reader))
    return createStringError(inconvertibleErrorCode(),
                             "'" + Path + "': " + E.message());
  return Reader;
}

static void printVersion(raw_ostream &OS) {
  kpack::printToolVersion(OS, "kpack");
}

/// "kpack <subcommand>" once llvm::cl has selected one, else "kpack".
static std::string activeToolName() {
  for (cl::SubCommand *Sub : cl::getRegisteredSubcommands())
    if (*Sub && !Sub->getName().empty())
      return ("kpack " + Sub->getName()).str();
  return "kpack";
}

/// Options that upstream's Python tools declare with argparse nargs="+"
/// (`--split-databases rocblas hipblaslt`), per subcommand. llvm::cl takes
/// one value per occurrence, so such an option's values, up to the next
/// argument starting with '-', become `--opt=A --opt=B`.
static const struct {
  const char *Sub, *Opt;
} MultiValueOptions[] = {{"split", "split-databases"},
                         {"split", "gpu-targets"},
                         {"split-wheel", "device-requires-dist"},
                         {"split-wheel", "databases"}};

static SmallVector<const char *, 32>
expandMultiValueOptions(int Argc, char **Argv, StringSaver &Saver) {
  SmallVector<const char *, 32> Out(Argv, Argv + std::min(Argc, 2));
  for (int I = 2; I < Argc; ++I) {
    StringRef Name = StringRef(Argv[I]).ltrim('-');
    bool Multi = false;
    for (const auto &M : MultiValueOptions)
      Multi |= Argv[1] == StringRef(M.Sub) && Argv[I][0] == '-' &&
               Name == M.Opt;
    if (!Multi || I + 1 >= Argc || Argv[I + 1][0] == '-') {
      Out.push_back(Argv[I]);
      continue;
    }
    while (I + 1 < Argc && Argv[I + 1][0] != '-')
      Out.push_back(Saver.save("--" + Name + "=" + Argv[++I]).data());
  }
  return Out;
}

int main(int Argc, char **Argv) {
  InitLLVM X(Argc, Argv);
  cl::SetVersionPrinter(printVersion);
  kpack::addExitStatusHelp();
  // Invoked through the kpack-convert link: `kpack convert`'s command line.
  if (sys::path::filename(Argv[0]) == "kpack-convert")
    return runConvertAlias(Argc, Argv);
  BumpPtrAllocator Alloc;
  StringSaver Saver(Alloc);
  SmallVector<const char *, 32> Args =
      expandMultiValueOptions(Argc, Argv, Saver);
  // libLLVM registers its own options globally; keep them out of --help.
  static cl::OptionCategory NoTopLevelOptions("kpack");
  cl::HideUnrelatedOptions(NoTopLevelOptions);
  if (!kpack::parseToolCommandLine(
          Args.size(), Args.data(),
          "kpack: split HIP device code into .kpack archives and inspect "
          "them\n",
          activeToolName))
    return kpack::ToolExitUsage;

  static const struct {
    const char *Name;
    int (*Run)();
  } Commands[] = {{"ls", runLs},
                  {"extract", runExtract},
                  {"verify", runVerify},
                  {"pack", runPack},
                  {"inspect", runInspect},
                  {"convert", runConvert},
                  {"merge", runMerge},
                  {"pack-db", runPackDb},
                  {"split", runSplit},
                  {"recombine", runRecombine},
                  {"split-wheel", runSplitWheel},
                  {"recombine-wheels", runRecombineWheels},
                  {"verify-artifacts", runVerifyArtifacts},
                  {"unbundle", runUnbundle},
                  {"doctor", runDoctor}};
  for (cl::SubCommand *Sub : cl::getRegisteredSubcommands()) {
    if (!*Sub)
      continue;
    for (const auto &C : Commands)
      if (Sub->getName() == C.Name) {
        // Every writer's progress within its phases, on a terminal.
        kpack::enableTerminalWriteProgress(("kpack " + Sub->getName()).str());
        return C.Run();
      }
  }
  return kpack::reportUsageError("kpack", "no subcommand given");
}
