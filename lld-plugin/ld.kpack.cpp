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

#include "llvm/ADT/SmallVector.h"
#include "llvm/Support/CommandLine.h"
#include "llvm/Support/InitLLVM.h"
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

  // Expand @response files first so --kpack-* options inside them are seen
  // and inputs listed in them can be substituted.
  BumpPtrAllocator Alloc;
  SmallVector<const char *, 64> Expanded(Argv + 1, Argv + Argc);
  cl::ExpansionContext Expansion(Alloc, cl::TokenizeGNUCommandLine);
  if (Error E = Expansion.expandResponseFiles(Expanded))
    return fail(std::move(E));

  auto Parsed = kpack::link::parseCommandLine(
      std::vector<std::string>(Expanded.begin(), Expanded.end()));
  if (!Parsed)
    return fail(Parsed.takeError());

  auto RC = kpack::link::runKpackLink(*Parsed);
  if (!RC)
    return fail(RC.takeError());
  return *RC;
}
