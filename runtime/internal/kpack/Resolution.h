//===- kpack/Resolution.h - The account of a code-object search -*- C++ -*-===//
//
// What kpack_load_code_object's search did, step by step, and the one-line
// diagnosis of its result: the same account for the loader's
// ROCM_KPACK_DEBUG trace (whose last line is the diagnosis), the
// registration shim's "no code object" message and `kpack doctor`, which
// all get it from LoaderCache (kpack/LoaderCache.h): the loader's own search
// records it, no second implementation of the rules exists.
//
// Diagnoses (docs/doctor.md shows each as a user sees it), most specific
// first when nothing loads:
//   stale          an archive has the code object, written by another link
//                  of the binary (link identities differ)
//   corrupt        an archive at a searched path cannot be opened or read
//   missing-entry  an archive offers the target but lacks the binary's key
//   other-targets  archives were found, none for the requested targets: the
//                  archives opened and, for @GFXARCH@ paths, the archives
//                  beside them for other targets, with each one's targets
//   no-archive     no archive at any searched path (all listed, absolute
//                  when the binary's path is)
//   no-target      nothing was requested
// and when one does: loaded (exact target, feature subset, or generic).
//
//===----------------------------------------------------------------------===//
#ifndef KPACK_RUNTIME_RESOLUTION_H
#define KPACK_RUNTIME_RESOLUTION_H

#include "kpack/Error.h"
#include "kpack/SearchPaths.h"

#include <cstdint>
#include <string>
#include <vector>

namespace kpack {

/// One archive path looked at for one candidate target ID.
struct ProbeRecord {
  enum class Outcome {
    Unusable,  ///< nothing there, or not a readable archive (Failure)
    NotListed, ///< the archive's gfx_arches lacks the candidate (Offered)
    NoKey,     ///< listed, but no entry for the key
    Stale,     ///< the entry belongs to another link (EntryLinkId)
    ReadFailed, ///< the entry could not be read (Failure; loads only)
    Found,     ///< the code object
  };
  std::string Request;   ///< the requested target it was derived from
  std::string Candidate; ///< the feature subset tried
  std::string Path;      ///< the archive path: a template expanded
  size_t Template = 0;   ///< index into ResolutionAccount::Templates
  Outcome What = Outcome::Unusable;
  Status Failure;                   ///< Unusable, ReadFailed
  std::vector<std::string> Offered; ///< the archive's gfx_arches, if opened
  std::string EntryLinkId;          ///< Stale
  uint64_t Size = 0;                ///< Found: uncompressed size (TOC)
};
const char *probeOutcomeName(ProbeRecord::Outcome O);

/// An archive beside an @GFXARCH@ search path, named for another target.
struct SiblingArchive {
  std::string Path;
  std::string NameTarget;           ///< what its name puts for @GFXARCH@
  std::vector<std::string> Offered; ///< its gfx_arches (if it opened)
  Status Failure;                   ///< why it did not open
};

enum class Diagnosis {
  Loaded,
  Disabled,        ///< ROCM_KPACK_DISABLE (decided before any search)
  InvalidMetadata, ///< the HIPK metadata cannot be used (likewise)
  NoTarget,
  NoArchive,
  OtherTargets,
  MissingEntry,
  Stale,
  Corrupt,
};
/// The stable name: "loaded", "disabled", "invalid-metadata", "no-target",
/// "no-archive", "other-targets", "missing-entry", "stale", "corrupt".
const char *diagnosisName(Diagnosis D);

/// How the code object found matches the first requested target.
enum class MatchKind {
  Exact,         ///< the requested target ID itself
  FeatureSubset, ///< the same processor, fewer features named
  Generic,       ///< a generic processor's code object
};
const char *matchKindName(MatchKind M); // "exact", "feature-subset", "generic"

/// Everything one search did. A search appends to the account it is given
/// (Requested, Probes), so that several searches for the same key (the
/// shim asks for an agent's target, then for its generic one) make one
/// account; explain() then gives the diagnosis of all of them.
struct ResolutionAccount {
  std::string Key;        ///< "<kernel_name>#<index>"
  std::string BinaryPath; ///< the file holding the metadata, as given
  std::string BinaryLinkId;
  bool ArchOverride = false; ///< ROCM_KPACK_ARCH_OVERRIDE replaced the list
  std::vector<std::string> Requested;
  std::vector<SearchTemplate> Templates;
  std::vector<ProbeRecord> Probes;
  int Found = -1; ///< index into Probes of the code object, or -1
  Status Result;  ///< what the search returned

  /// Filled by LoaderCache::explain.
  std::vector<SiblingArchive> Siblings;
  Diagnosis Verdict = Diagnosis::NoTarget;
  MatchKind Match = MatchKind::Exact; ///< when Loaded
  std::string Message;

  /// "<diagnosis name>: <message>", the line the ROCM_KPACK_DEBUG trace
  /// ends with and `kpack doctor` prints.
  std::string line() const;
  const ProbeRecord *found() const {
    return Found >= 0 ? &Probes[size_t(Found)] : nullptr;
  }
};

/// Sets Verdict, Match and Message from the probes and siblings of a search
/// (LoaderCache::explain finds the siblings first).
void diagnose(ResolutionAccount &Account);

/// The diagnosis lines of a load refused before any search:
/// ROCM_KPACK_DISABLE, or metadata that cannot be used (Why).
std::string disabledDiagnosis();
std::string invalidMetadataDiagnosis(const std::string &Why);

/// What a feature target archive's target T lacks for the target the GPU
/// runs (Want): "this GPU runs xnack+" for T = gfx90a:xnack-, Want =
/// gfx90a:xnack+; "" when the processors differ or nothing conflicts.
std::string featureMismatch(const std::string &T, const std::string &Want);

} // namespace kpack

#endif
