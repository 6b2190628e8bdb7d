//===- VerifyArtifacts.cpp - kpack verify-artifacts -----------------------===//
//
// kpack verify-artifacts --artifacts-dir DIR [--verbose]
//
// Upstream's verify_artifacts command line and exit status (0 every check
// passed, 1 problems found, 2 the checks could not run); the checks are
// kpack::verifyArtifacts's (docs/verify-artifacts.md).
//
//===----------------------------------------------------------------------===//

#include "Commands.h"

#include "kpack/VerifyArtifacts.h"

#include "llvm/Support/WithColor.h"
#include "llvm/Support/raw_ostream.h"

using namespace llvm;

static cl::SubCommand VerifyArtifactsCmd(
    "verify-artifacts", "Check split TheRock artifacts (manifests, host "
                        "binaries, archives, wrapper resolution)");
static cl::opt<std::string> ArtifactsDir(
    "artifacts-dir", cl::Required, cl::desc("Directory holding the artifacts"),
    cl::value_desc("dir"), cl::sub(VerifyArtifactsCmd));
static cl::opt<bool> Verbose("verbose",
                             cl::desc("Print what every check looked at"),
                             cl::sub(VerifyArtifactsCmd));
static cl::opt<std::string> ClangOffloadBundler(
    "clang-offload-bundler", cl::desc("Accepted for upstream's command line; unused"),
    cl::value_desc("path"), cl::sub(VerifyArtifactsCmd));

int runVerifyArtifacts() {
  Expected<kpack::ArtifactsReport> R = kpack::verifyArtifacts(ArtifactsDir);
  if (!R) {
    reportError("kpack verify-artifacts", R.takeError());
    return 2;
  }
  kpack::printArtifactsReport(*R, outs(), Verbose);
  return R->problemCount() ? 1 : 0;
}
