//===- Resolution.cpp - The account of a code-object search ---------------===//

#include "kpack/Resolution.h"

#include "kpack/TargetId.h"

#include <algorithm>

namespace kpack {

namespace {

std::string quoted(const std::string &S) { return "'" + S + "'"; }

std::string joined(const std::vector<std::string> &Items,
                   const char *Separator = ", ") {
  std::string Out;
  for (const std::string &I : Items)
    Out += (Out.empty() ? "" : Separator) + I;
  return Out;
}

void appendUnique(std::vector<std::string> &Out, const std::string &S) {
  if (std::find(Out.begin(), Out.end(), S) == Out.end())
    Out.push_back(S);
}

/// "gfx90a:xnack-" or "gfx90a:xnack-: this GPU runs xnack+" for each target.
std::string describeTargets(const std::vector<std::string> &Targets,
                            const std::string &Want) {
  std::vector<std::string> Parts;
  for (const std::string &T : Targets) {
    std::string Why = featureMismatch(T, Want);
    Parts.push_back(Why.empty() ? T : T + ": " + Why);
  }
  return Parts.empty() ? std::string("no targets") : joined(Parts);
}

} // namespace

const char *probeOutcomeName(ProbeRecord::Outcome O) {
  switch (O) {
  case ProbeRecord::Outcome::Unusable:
    return "unusable";
  case ProbeRecord::Outcome::NotListed:
    return "not-listed";
  case ProbeRecord::Outcome::NoKey:
    return "no-key";
  case ProbeRecord::Outcome::Stale:
    return "stale";
  case ProbeRecord::Outcome::ReadFailed:
    return "read-failed";
  case ProbeRecord::Outcome::Found:
    return "found";
  }
  return "?";
}

const char *diagnosisName(Diagnosis D) {
  switch (D) {
  case Diagnosis::Loaded:
    return "loaded";
  case Diagnosis::Disabled:
    return "disabled";
  case Diagnosis::InvalidMetadata:
    return "invalid-metadata";
  case Diagnosis::NoTarget:
    return "no-target";
  case Diagnosis::NoArchive:
    return "no-archive";
  case Diagnosis::OtherTargets:
    return "other-targets";
  case Diagnosis::MissingEntry:
    return "missing-entry";
  case Diagnosis::Stale:
    return "stale";
  case Diagnosis::Corrupt:
    return "corrupt";
  }
  return "?";
}

const char *matchKindName(MatchKind M) {
  switch (M) {
  case MatchKind::Exact:
    return "exact";
  case MatchKind::FeatureSubset:
    return "feature-subset";
  case MatchKind::Generic:
    return "generic";
  }
  return "?";
}

std::string ResolutionAccount::line() const {
  return std::string(diagnosisName(Verdict)) + ": " + Message;
}

std::string disabledDiagnosis() {
  return std::string(diagnosisName(Diagnosis::Disabled)) +
         ": ROCM_KPACK_DISABLE is set: no code object is loaded from "
         "archives (unset it)";
}

std::string invalidMetadataDiagnosis(const std::string &Why) {
  return std::string(diagnosisName(Diagnosis::InvalidMetadata)) + ": " + Why +
         " (the binary is damaged: reinstall or rebuild it)";
}

std::string featureMismatch(const std::string &T, const std::string &Want) {
  std::optional<TargetId> Have = parseTargetId(T);
  std::optional<TargetId> Need =
      parseTargetId(std::string(stripTargetTriple(Want)));
  if (!Have || !Need || Have->Processor != Need->Processor)
    return "";
  std::vector<std::string> Runs, Unsaid;
  auto Check = [&](const char *Name, FeatureState H, FeatureState N) {
    if (H == FeatureState::Any || H == N)
      return;
    if (N == FeatureState::Any)
      Unsaid.push_back(Name);
    else
      Runs.push_back(std::string(Name) + (N == FeatureState::On ? "+" : "-"));
  };
  Check("sramecc", Have->Sramecc, Need->Sramecc);
  Check("xnack", Have->Xnack, Need->Xnack);
  std::string Out;
  if (!Runs.empty())
    Out = "this GPU runs " + joined(Runs);
  if (!Unsaid.empty())
    Out += (Out.empty() ? "" : "; ") + std::string("the requested target ") +
           Need->str() + " names no " + joined(Unsaid, " or ") + " setting";
  return Out;
}

void diagnose(ResolutionAccount &A) {
  const std::string First =
      A.Requested.empty() ? std::string()
                          : std::string(stripTargetTriple(A.Requested[0]));
  if (const ProbeRecord *F = A.found()) {
    A.Verdict = Diagnosis::Loaded;
    std::optional<TargetId> T = parseTargetId(F->Candidate);
    A.Match = F->Candidate == First ? MatchKind::Exact
              : T && isGenericProcessor(T->Processor) ? MatchKind::Generic
                                                      : MatchKind::FeatureSubset;
    A.Message = quoted(A.Key) + " for " + F->Candidate + " from " +
                quoted(F->Path) + " (" + matchKindName(A.Match) +
                (A.Match == MatchKind::Exact ? "" : " for " + First) + ")";
    return;
  }
  if (A.Requested.empty()) {
    A.Verdict = Diagnosis::NoTarget;
    A.Message = "no target requested for " + quoted(A.Key);
    return;
  }
  using O = ProbeRecord::Outcome;
  auto firstOf = [&](auto Pred) -> const ProbeRecord * {
    for (const ProbeRecord &P : A.Probes)
      if (Pred(P))
        return &P;
    return nullptr;
  };
  if (const ProbeRecord *P =
          firstOf([](const ProbeRecord &R) { return R.What == O::Stale; })) {
    A.Verdict = Diagnosis::Stale;
    A.Message = quoted(P->Path) + " was written by another link of " +
                quoted(A.BinaryPath) +
                " (stale archive): rebuild or reinstall both together";
    return;
  }
  if (const ProbeRecord *P = firstOf([](const ProbeRecord &R) {
        return R.What == O::ReadFailed ||
               (R.What == O::Unusable &&
                R.Failure.code() != KPACK_ERROR_FILE_NOT_FOUND);
      })) {
    A.Verdict = Diagnosis::Corrupt;
    A.Message =
        (P->What == O::ReadFailed
             ? "reading " + quoted(A.Key) + " for " + P->Candidate + " from " +
                   quoted(P->Path) + " failed: "
             : quoted(P->Path) + " is not a usable archive: ") +
        P->Failure.message() + " (" + errorCodeName(P->Failure.code()) + ")";
    return;
  }
  std::vector<std::string> Lacking;
  for (const ProbeRecord &P : A.Probes)
    if (P.What == O::NoKey)
      appendUnique(Lacking, quoted(P.Path) + " offers " + P.Candidate);
  if (!Lacking.empty()) {
    A.Verdict = Diagnosis::MissingEntry;
    A.Message = joined(Lacking, "; ") + " but has no " + quoted(A.Key) +
                " (an archive of another build of the binary, or a partial "
                "one)";
    return;
  }
  std::vector<std::string> Candidates, Found, Opened;
  for (const ProbeRecord &P : A.Probes) {
    appendUnique(Candidates, P.Candidate);
    if (P.What == O::NotListed &&
        std::find(Opened.begin(), Opened.end(), P.Path) == Opened.end()) {
      Opened.push_back(P.Path);
      Found.push_back(quoted(P.Path) + " (" + describeTargets(P.Offered, First) +
                      ")");
    }
  }
  for (const SiblingArchive &S : A.Siblings)
    Found.push_back(quoted(S.Path) + " (" +
                    (S.Failure ? S.NameTarget + " by its name; not usable: " +
                                     S.Failure.message()
                               : describeTargets(S.Offered, First)) +
                    ")");
  const std::string Tried =
      Candidates.size() > 1
          ? " (tried " + joined(Candidates) + ")"
          : std::string();
  if (!Found.empty()) {
    A.Verdict = Diagnosis::OtherTargets;
    A.Message = "no archive offers " + quoted(A.Key) + " for " + First + Tried +
                "; found: " + joined(Found);
    return;
  }
  std::vector<std::string> Paths;
  for (const ProbeRecord &P : A.Probes)
    appendUnique(Paths, quoted(P.Path));
  A.Verdict = Diagnosis::NoArchive;
  A.Message = "no archive for " + quoted(A.Key) + " at any searched path: " +
              (Paths.empty() ? std::string("(none)") : joined(Paths));
  if (!A.Templates.empty() &&
      A.Templates[0].From == SearchTemplate::Origin::PathOverride)
    A.Message += " (ROCM_KPACK_PATH replaces the binary's own search paths)";
}

} // namespace kpack
