//===- ld.kpack.cpp - lld front-end that emits kpack ----------------------===//
//
// A drop-in GNU-style linker (selected with clang's -fuse-ld=kpack or
// --ld-path=) that runs lld in process. With --kpack-output/--kpack-dir it
// makes every fat input kpack-ready, links, and finalizes the output into a
// host-only binary plus .kpack archives (docs/ld-kpack.md). Without device
// code it is exactly an lld link.
//
// --help prints lld's help, then the kpack options; --version lld's version
// line, then ld.kpack's (kpack/ToolCommandLine.h). A bad --kpack-* option is
// a usage error (exit status 2, with the help hint); lld's own diagnostics
// and exit status come through unchanged.
//
//===----------------------------------------------------------------------===//

#include "Finalize.h"
#include "Driver.h"
#include "LinkOptions.h"

#include "kpack/Emission.h"
#include "kpack/TimeTrace.h"
#include "kpack/ToolCommandLine.h"
#include "kpack/WriteProgress.h"

#include "llvm/ADT/STLExtras.h"
#include "llvm/ADT/SmallVector.h"
#include "llvm/Support/CommandLine.h"
#include "llvm/Support/InitLLVM.h"
#include "llvm/Support/Path.h"
#include "llvm/Support/TimeProfiler.h"
#include "llvm/Support/raw_ostream.h"

using namespace llvm;

static constexpr const char *Tool = "ld.kpack";

/// The options ld.kpack adds to lld's, as --help lists them after lld's.
static void printKpackHelp(raw_ostream &OS) {
  struct {
    const char *Option, *Help;
  } Options[] = {
      {"--kpack-output=FILE", "Write the device code to one archive holding "
                              "every target"},
      {"--kpack-dir=DIR", "Write one archive per target ID, "
                          "DIR/<name>_<target id>.kpack"},
      {"--kpack-name=NAME",
       "TOC kernel name and archive prefix (default: the output's file name)"},
      {"--kpack-search-path=PATH", "Archive path the binary records "
                                   "(repeatable; default: the archives "
                                   "relative to the output)"},
      {"--kpack-group=NAME", "TOC group_name (default: the kernel name)"},
      {"--kpack-family=NAME", "TOC gfx_arch_family (default: the target ID, "
                              "'multi' for one archive)"},
      {"--kpack-compression=SCHEME", kpack::CompressionSettings::optionHelp()},
      {"--kpack-compression-level=N",
       "zstd level 1..22; 0 without --kpack-compression: none"},
      {"--kpack-jobs=N", "Compression threads (default: all cores)"},
      {"--kpack-metadata-room=BYTES",
       "Room for metadata rewritten in place later (kpack split)"},
  };
  OS << "\nKPACK OPTIONS (" << kpack::toolVersion(Tool) << "):\n";
  for (const auto &O : Options)
    OS << "  " << left_justify(O.Option, 30) << O.Help << "\n";
  OS << "  Without --kpack-output or --kpack-dir, ld.kpack is lld "
        "(docs/ld-kpack.md).\n"
     << kpack::ExitStatusHelp;
}

int main(int Argc, char **Argv) {
  InitLLVM X(Argc, Argv);

  // Run as `lld-link` (the libexec/kpack alias clang's MSVC toolchain finds
  // with -fuse-ld=lld -B<prefix>/libexec/kpack): an MSVC-style link through
  // lld's COFF driver (docs/ld-kpack.md, "lld-link").
  const bool LldLink =
      sys::path::stem(Argv[0]).equals_insensitive("lld-link");

  // Expand @response files first so --kpack-* options inside them are seen
  // and inputs listed in them can be substituted (lld-link's are tokenized
  // as Windows command lines, as lld-link does).
  BumpPtrAllocator Alloc;
  SmallVector<const char *, 64> Expanded(Argv + 1, Argv + Argc);
  cl::ExpansionContext Expansion(Alloc, LldLink
                                            ? cl::TokenizeWindowsCommandLine
                                            : cl::TokenizeGNUCommandLine);
  if (Error E = Expansion.expandResponseFiles(Expanded))
    return kpack::reportToolError(Tool, std::move(E));

  // --help and --version as lld answers them (nothing is linked), followed
  // by ld.kpack's part.
  for (StringRef A : Expanded) {
    bool Help = is_contained({"--help", "-help"}, A) ||
                (LldLink && is_contained({"/help", "/?", "-?"}, A));
    bool Version = is_contained({"--version", "-version"}, A);
    if (!Help && !Version)
      continue;
    int RC = kpack::link::runLld({A.str()}, LldLink);
    if (Help)
      printKpackHelp(outs());
    else
      kpack::printToolVersion(outs(), Tool);
    return RC;
  }

  std::vector<std::string> Args(Expanded.begin(), Expanded.end());
  auto Parsed = LldLink ? kpack::link::parseLldLinkCommandLine(Args)
                        : kpack::link::parseCommandLine(Args);
  if (!Parsed)
    return kpack::reportToolError(Tool,
                                  kpack::asUsageError(Parsed.takeError()));
  // The compression options are checked before anything is linked.
  if (Parsed->Kpack.emitsArchives())
    if (auto Compression = kpack::link::compressionOf(Parsed->Kpack);
        !Compression)
      return kpack::reportToolError(
          Tool, kpack::asUsageError(Compression.takeError()));

  // --time-trace of a link that emits archives: the whole link, lld's
  // events among ld.kpack's (lld itself never sees the option then).
  const kpack::link::KpackOptions &Kpack = Parsed->Kpack;
  // The writer's progress within its phases, on a terminal.
  if (Kpack.emitsArchives())
    kpack::enableTerminalWriteProgress("ld.kpack");
  std::optional<kpack::TimeTraceSession> Session;
  if (Kpack.TimeTrace)
    Session.emplace(Kpack.TimeTraceGranularity, "ld.kpack");
  Expected<int> RC = 0;
  {
    TimeTraceScope Whole("ld.kpack", [&] { return Parsed->Linker.Output; });
    RC = kpack::link::runKpackLink(*Parsed);
  }
  if (!RC)
    return kpack::reportToolError(Tool, RC.takeError());
  if (*RC == 0 && Session) {
    std::string Path = Kpack.TimeTrace->empty()
                           ? kpack::defaultTimeTracePath(Parsed->Linker.Output)
                           : *Kpack.TimeTrace;
    if (kpack::Status S = Session->write(Path))
      return kpack::reportToolError(
          Tool, createStringError("cannot write the time trace: " +
                                  S.message()));
  }
  return *RC;
}
