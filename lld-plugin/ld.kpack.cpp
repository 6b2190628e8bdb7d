//===- ld.kpack.cpp - lld front-end that emits kpack ----------------------===//
//
// A drop-in GNU-style linker (selected with clang's -fuse-ld=kpack or
// --ld-path=) that runs lld in process. With --kpack-output/--kpack-dir it
// makes every fat input kpack-ready, links, and finalizes the output into a
// host-only binary plus .kpack archives (docs/ld-kpack.md). Without device
// code it is exactly an lld link.
//
//===----------------------------------------------------------------------===//

#include "KpackLink.h"
#include "LinkOptions.h"

#include "kpack/TimeTrace.h"
#include "kpack/WriteProgress.h"

#include "llvm/ADT/SmallVector.h"
#include "llvm/Support/CommandLine.h"
#include "llvm/Support/InitLLVM.h"
#include "llvm/Support/Path.h"
#include "llvm/Support/TimeProfiler.h"
#include "llvm/Support/WithColor.h"
#include "llvm/Support/raw_ostream.h"

using namespace llvm;

static int fail(Error E) {
  handleAllErrors(std::move(E), [](const ErrorInfoBase &EI) {
    WithColor::error(errs(), "ld.kpack") << EI.message() << "\n";
  });
  return 1;
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
    return fail(std::move(E));

  std::vector<std::string> Args(Expanded.begin(), Expanded.end());
  auto Parsed = LldLink ? kpack::link::parseLldLinkCommandLine(Args)
                        : kpack::link::parseCommandLine(Args);
  if (!Parsed) { // a usage error
    fail(Parsed.takeError());
    return 2;
  }

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
    return fail(RC.takeError());
  if (*RC == 0 && Session) {
    std::string Path = Kpack.TimeTrace->empty()
                           ? kpack::defaultTimeTracePath(Parsed->Linker.Output)
                           : *Kpack.TimeTrace;
    if (kpack::Status S = Session->write(Path))
      return fail(createStringError("cannot write the time trace: " +
                                    S.message()));
  }
  return *RC;
}
