//===- kpack/VerifyArtifacts.h - Checks on split artifacts ------*- C++ -*-===//
//
// `kpack verify-artifacts`: checks a directory of TheRock artifacts as
// `kpack split` (or upstream's split_artifacts, or `kpack recombine`) writes
// them (FORMAT.md §5) for the invariants the loader relies on, including the
// bug classes upstream shipped: a wrapper index that is not the TOC index
// (rocm-systems #6943), xnack-variant database files dropped (#7645), an
// xnack archive missing kernels its base has (TheRock #7081).
// docs/verify-artifacts.md lists the checks.
//
//===----------------------------------------------------------------------===//
#ifndef KPACK_VERIFYARTIFACTS_H
#define KPACK_VERIFYARTIFACTS_H

#include "llvm/ADT/StringRef.h"
#include "llvm/Support/Error.h"
#include "llvm/Support/raw_ostream.h"

#include <optional>
#include <string>
#include <utility>
#include <vector>

namespace kpack {

/// One check over the whole artifact set.
struct ArtifactCheck {
  std::string Name;
  std::vector<std::string> Problems; ///< each names the artifact and file
  std::vector<std::string> Notes;    ///< what was checked (verbose output)
  bool passed() const { return Problems.empty(); }
};

struct ArtifactsReport {
  std::vector<std::string> Artifacts; ///< directory names, sorted
  std::vector<ArtifactCheck> Checks;  ///< in a fixed order
  size_t problemCount() const;
};

/// Runs every check on the artifacts (the subdirectories) of Dir. An error
/// only when Dir cannot be read at all (not a directory).
llvm::Expected<ArtifactsReport> verifyArtifacts(llvm::StringRef Dir);

/// The report as text: one line per check (ok/FAIL) followed by its
/// problems, with Verbose also its notes; then the total.
void printArtifactsReport(const ArtifactsReport &R, llvm::raw_ostream &OS,
                          bool Verbose);

/// A target named in a file or directory name: "gfx90a:xnack+",
/// "gfx90a-xnack-" (Tensile's hyphen form), "gfx11-generic", "gfx942".
/// Returns the processor and the xnack state ('+', '-' or 0 for none) of
/// every such token in Name, in order.
std::vector<std::pair<std::string, char>> targetsInName(llvm::StringRef Name);

} // namespace kpack

#endif
