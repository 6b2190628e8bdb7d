//===- VerifyArtifacts.cpp - kpack verify-artifacts -----------------------===//
//
// kpack verify-artifacts --artifacts-dir DIR [--verbose] [--json]
//
// Upstream's verify_artifacts command line and exit status (0 every check
// passed, 1 problems found, 2 the checks could not run); the checks are
// kpack::verifyArtifacts's (docs/verify-artifacts.md).
//
//===----------------------------------------------------------------------===//

#include "Commands.h"

#include "kpack/VerifyArtifacts.h"

#include "llvm/Support/JSON.h"
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
static cl::opt<bool>
    Json("json", cl::desc("The report as JSON (docs/verify-artifacts.md)"),
         cl::sub(VerifyArtifactsCmd));

/// --json: the keys are documented in docs/verify-artifacts.md.
static void printJson(const kpack::ArtifactsReport &R) {
  json::OStream J(outs(), 2);
  J.object([&] {
    J.attribute("artifacts_dir", ArtifactsDir);
    J.attribute("ok", R.problemCount() == 0);
    J.attribute("problems", uint64_t(R.problemCount()));
    J.attributeArray("artifacts", [&] {
      for (const std::string &A : R.Artifacts)
        J.value(A);
    });
    J.attributeArray("checks", [&] {
      for (const kpack::ArtifactCheck &C : R.Checks)
        J.object([&] {
          J.attribute("name", C.Name);
          J.attribute("ok", C.passed());
          J.attributeArray("problems", [&] {
            for (const std::string &P : C.Problems)
              J.value(P);
          });
          if (Verbose)
            J.attributeArray("notes", [&] {
              for (const std::string &N : C.Notes)
                J.value(N);
            });
        });
    });
  });
  outs() << "\n";
}

int runVerifyArtifacts() {
  Expected<kpack::ArtifactsReport> R = kpack::verifyArtifacts(ArtifactsDir);
  // Upstream's status 2: the checks could not run (not a directory).
  if (!R)
    return reportError("kpack verify-artifacts",
                       kpack::asUsageError(R.takeError()));
  if (Json)
    printJson(*R);
  else
    kpack::printArtifactsReport(*R, outs(), Verbose);
  return R->problemCount() ? 1 : 0;
}
