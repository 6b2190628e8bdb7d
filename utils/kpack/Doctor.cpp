//===- Doctor.cpp - kpack doctor: will this install run on this GPU? ------===//
//
// For every HIP binary of the paths given and every GPU (named with --gpu,
// or this machine's, from the KFD topology): which code object it loads and
// why, or the one diagnosis of why none loads and what to install
// (docs/doctor.md). The archive choice is the runtime's: the loader
// (LoaderCache) searches with the account kpack/Resolution.h describes, and
// its diagnosis is the line the runtime's ROCM_KPACK_DEBUG trace and the
// registration shim print. Binaries are read for their headers, wrappers and
// metadata, archives for their TOCs; nothing is decompressed unless
// --verify asks.
//
//===----------------------------------------------------------------------===//

#include "Commands.h"
#include "Doctor.h"

#include "kpack/CodeObjectCheck.h"
#include "kpack/HostBinary.h"
#include "kpack/HostBinaryClass.h"
#include "kpack/KfdTopology.h"
#include "kpack/LoaderCache.h"
#include "kpack/Quote.h"
#include "kpack/SearchPaths.h"

#include "llvm/ADT/SmallString.h"
#include "llvm/Support/CommandLine.h"
#include "llvm/Support/FileSystem.h"
#include "llvm/Support/JSON.h"
#include "llvm/Support/MemoryBuffer.h"
#include "llvm/Support/Parallel.h"
#include "llvm/Support/Path.h"
#include "llvm/Support/WithColor.h"
#include "llvm/Support/raw_ostream.h"

#include <algorithm>
#include <cstdlib>
#include <set>

using namespace llvm;
using namespace kpack;
using namespace kpack::doctor;

static cl::SubCommand
    DoctorCmd("doctor",
              "For each GPU, which code object each HIP binary of an install "
              "loads; when none, why and what to install (exit 0: all load, "
              "1: some do not, 2: usage)");
static cl::list<std::string>
    DoctorPaths(cl::Positional, cl::OneOrMore,
                cl::desc("<binary | directory | installed distribution>..."),
                cl::sub(DoctorCmd));
static cl::list<std::string>
    DoctorGpus("gpu",
               cl::desc("A GPU to check, by its full target ID "
                        "(gfx942:sramecc+:xnack-, gfx90a:xnack+, gfx1101); "
                        "repeatable. Default: the GPUs of this machine"),
               cl::value_desc("TARGET_ID"), cl::sub(DoctorCmd));
static cl::opt<bool> DoctorJson("json",
                                cl::desc("Print JSON (docs/doctor.md)"),
                                cl::sub(DoctorCmd));
static cl::opt<bool>
    DoctorVerbose("verbose",
                  cl::desc("One line per binary that loads, every path "
                           "searched, links not followed"),
                  cl::sub(DoctorCmd));
static cl::alias DoctorVerboseShort("v", cl::aliasopt(DoctorVerbose),
                                    cl::desc("Alias for --verbose"));
static cl::opt<bool>
    DoctorVerify("verify",
                 cl::desc("Also read and decompress each code object found "
                          "(and compressed bundles) and check it"),
                 cl::sub(DoctorCmd));
// Tests: a fabricated KFD topology (docs/doctor.md).
static cl::opt<std::string> DoctorSysfs("sysfs-root", cl::init("/sys"),
                                        cl::Hidden, cl::sub(DoctorCmd));

namespace {

constexpr const char *Tool = "kpack doctor";

/// Diagnoses beyond the loader's (kpack/Resolution.h), for binaries that
/// load nothing from archives. Names are stable (docs/doctor.md).
constexpr const char *FatLoads = "fat";
constexpr const char *FatNoCode = "fat-no-code-object";
constexpr const char *Broken = "broken";
constexpr const char *KpackReadyObject = "kpack-ready-object";
constexpr const char *Unreadable = "unreadable";
constexpr const char *OverrideMismatch = "override-mismatch";

/// How specific a failing diagnosis is: the binary's verdict is its most
/// specific code object's.
int rank(StringRef D) {
  static const std::string Order[] = {
      diagnosisName(Diagnosis::NoTarget),
      diagnosisName(Diagnosis::NoArchive),
      diagnosisName(Diagnosis::OtherTargets),
      diagnosisName(Diagnosis::MissingEntry),
      diagnosisName(Diagnosis::Corrupt),
      diagnosisName(Diagnosis::Stale),
      FatNoCode,
      OverrideMismatch,
      diagnosisName(Diagnosis::InvalidMetadata),
      Unreadable,
      KpackReadyObject,
      Broken,
      diagnosisName(Diagnosis::Disabled)};
  for (size_t I = 0; I < std::size(Order); ++I)
    if (D == Order[I])
      return int(I);
  return -1;
}

/// Is D the name of the loader's diagnosis L?
bool is(StringRef D, Diagnosis L) { return D == diagnosisName(L); }

struct Gpu {
  TargetId Id;
  std::string Source; ///< "--gpu" or "kfd"
};

struct ObjectVerdict {
  std::string Key; ///< "name#N", or "bundle N" for a fat binary's bundle
  bool Ok = false;
  std::string Diagnosis, Message;
  std::optional<ResolutionAccount> Account;
};

struct Verdict {
  bool Ok = true;
  std::string Diagnosis, Message;
  size_t SameFailures = 0; ///< code objects failing with Diagnosis
  std::vector<ObjectVerdict> Objects;
  std::vector<std::string> Remedies;
};

struct Examined {
  std::string Path;     ///< as found
  std::string RealPath; ///< what the runtime sees (/proc/self/maps)
  bool Hip = false;     ///< has device code or wrappers
  std::string Format, Kind;
  HostBinaryClass Class = HostBinaryClass::None;
  std::string Error; ///< could not be read or analyzed
  std::vector<Verdict> PerGpu;
};

std::string quoted(StringRef S) { return "'" + S.str() + "'"; }

/// A file named on the command line that holds no HIP device code: said so,
/// not counted.
bool isPlainHost(const Examined &X) {
  return X.Class == HostBinaryClass::None && X.PerGpu.empty() &&
         StringRef(X.Error).starts_with("no HIP");
}

std::string joined(const std::vector<std::string> &Items,
                   const char *Sep = ", ") {
  std::string Out;
  for (const std::string &I : Items)
    Out += (Out.empty() ? "" : Sep) + I;
  return Out;
}

/// The GPUs to check, or a usage error (exit 2).
Expected<std::vector<Gpu>> selectGpus(std::vector<std::string> &Notes) {
  std::vector<Gpu> Gpus;
  for (const std::string &G : DoctorGpus) {
    std::optional<TargetId> Id = parseTargetId(G);
    // A GPU is a processor LLVM knows, not a generic one.
    std::optional<ProcessorFeatures> F =
        Id && !isGenericProcessor(Id->Processor)
            ? supportedFeatures(Id->Processor)
            : std::nullopt;
    if (!F)
      return makeError("--gpu " + quoteInput(G) +
                       " is not a GPU's target ID (e.g. "
                       "gfx942:sramecc+:xnack-, gfx90a:xnack+, gfx1101)");
    {
      std::vector<std::string> Unsaid;
      if (F->Sramecc && Id->Sramecc == FeatureState::Any)
        Unsaid.push_back("sramecc");
      if (F->Xnack && Id->Xnack == FeatureState::Any)
        Unsaid.push_back("xnack");
      // A GPU always reports the features its processor takes; a target ID
      // naming none of them is most likely not what the GPU reports.
      if (!Unsaid.empty() && Unsaid.size() == size_t(F->Sramecc) + F->Xnack)
        Notes.push_back("--gpu " + G + ": a " + Id->Processor +
                        " GPU reports its " + joined(Unsaid, " and ") +
                        " setting; the runtime then asks for it first (name "
                        "it as the GPU does, e.g. " + Id->Processor +
                        (F->Sramecc ? ":sramecc+" : "") +
                        (F->Xnack ? ":xnack-" : "") + ")");
    }
    if (std::none_of(Gpus.begin(), Gpus.end(),
                     [&](const Gpu &E) { return E.Id.str() == Id->str(); }))
      Gpus.push_back({*Id, "--gpu"});
  }
  if (!Gpus.empty())
    return Gpus;
  std::vector<TargetId> Found;
  if (Status S = readKfdTopology(DoctorSysfs, Found))
    return makeError(S.message());
  for (const TargetId &Id : Found)
    Gpus.push_back({Id, "kfd"});
  if (Gpus.empty())
    return makeError("this machine has no GPU that the kernel lists (no "
                     "KFD topology under " + DoctorSysfs +
                     "/class/kfd/kfd/topology): name the GPUs to check with "
                     "--gpu TARGET_ID (e.g. --gpu gfx942:sramecc+:xnack-)");
  return Gpus;
}

/// The environment's effects on every load, one line each.
std::vector<std::pair<std::string, std::string>>
environmentEffects(const KpackEnvironment &Env) {
  std::vector<std::pair<std::string, std::string>> Out;
  auto Raw = [](const char *Name) {
    const char *V = std::getenv(Name);
    return std::string(V ? V : "");
  };
  if (!Env.PathOverride.empty())
    Out.push_back({"ROCM_KPACK_PATH",
                   "replaces every binary's own search paths with " +
                       joined(Env.PathOverride)});
  if (!Env.PathPrefix.empty())
    Out.push_back({"ROCM_KPACK_PATH_PREFIX",
                   "is searched before every binary's own search paths: " +
                       joined(Env.PathPrefix)});
  if (!Env.ArchOverride.empty())
    Out.push_back({"ROCM_KPACK_ARCH_OVERRIDE",
                   "replaces each GPU's targets in every load with " +
                       joined(Env.ArchOverride)});
  else if (Env.ArchOverrideMalformed)
    Out.push_back({"ROCM_KPACK_ARCH_OVERRIDE",
                   quoteInput(Raw("ROCM_KPACK_ARCH_OVERRIDE")) +
                       " is not a list of target IDs: the runtime ignores "
                       "it"});
  if (Env.Disabled)
    Out.push_back({"ROCM_KPACK_DISABLE",
                   "is set: no code object loads from archives"});
  return Out;
}

/// A fat binary's own bundles on Agent: CLR picks among their entries.
void judgeFat(const HostBinary &H, const TargetId &Agent, Verdict &V) {
  std::set<int> Done;
  for (const WrapperInfo &W : H.Wrappers) {
    if (!W.isHIPF() || W.BundleIndex < 0 || !Done.insert(W.BundleIndex).second)
      continue;
    const BundleInfo &B = H.Bundles[size_t(W.BundleIndex)];
    ObjectVerdict O;
    O.Key = "bundle " + std::to_string(W.BundleIndex);
    std::vector<std::string> Offered;
    for (const BundleEntry &E : B.Entries)
      if (E.isDevice())
        Offered.push_back(E.TargetId);
    if (B.Compression != BundleCompression::None && B.Entries.empty()) {
      O.Ok = true;
      O.Diagnosis = FatLoads;
      O.Message = "carries its own device code (a compressed bundle, whose "
                  "targets --verify reads); needs no archive";
    } else if (int I = selectTargetId(Offered, Agent); I >= 0) {
      O.Ok = true;
      O.Diagnosis = FatLoads;
      O.Message = "carries its own code object for " + Offered[size_t(I)] +
                  "; needs no archive";
    } else {
      O.Diagnosis = FatNoCode;
      O.Message = "its own device code has no code object " + Agent.str() +
                  " can run (it has " +
                  (Offered.empty() ? std::string("none") : joined(Offered)) +
                  ")";
    }
    V.Objects.push_back(std::move(O));
  }
}

/// What the runtime does for each HIPK code object of H on Agent.
void judgeHipk(const HostBinary &H, const Examined &X, LoaderCache &Cache,
               const TargetId &Agent, Verdict &V) {
  const std::vector<std::string> Requests = agentRequests(Agent);
  std::set<std::pair<uint64_t, uint32_t>> Done;
  for (const WrapperInfo &W : H.Wrappers) {
    if (!W.isHIPK() || !Done.insert({W.Target, W.kpackIndex()}).second)
      continue;
    ObjectVerdict O;
    if (!W.Ref) {
      O.Key = "#" + std::to_string(W.kpackIndex());
      std::string Line = invalidMetadataDiagnosis(W.RefError);
      O.Diagnosis = diagnosisName(Diagnosis::InvalidMetadata);
      O.Message = Line.substr(O.Diagnosis.size() + 2);
      V.Objects.push_back(std::move(O));
      continue;
    }
    O.Key = W.Ref->KernelName + "#" + std::to_string(W.kpackIndex());
    if (Cache.environment().Disabled) {
      std::string Line = disabledDiagnosis();
      O.Diagnosis = diagnosisName(Diagnosis::Disabled);
      O.Message = Line.substr(O.Diagnosis.size() + 2);
      V.Objects.push_back(std::move(O));
      continue;
    }
    ResolutionAccount A;
    std::string VerifyError;
    if (DoctorVerify) {
      void *Data = nullptr;
      size_t Size = 0;
      if (!Cache.loadCodeObject(*W.Ref, X.RealPath, W.kpackIndex(), Requests,
                                Data, Size, &A)) {
        if (Expected<std::optional<TargetId>> T = checkArchiveEntry(
                A.found()->Candidate,
                ArrayRef<uint8_t>(static_cast<const uint8_t *>(Data), Size),
                OpaqueEntries::Reject);
            !T)
          VerifyError = toString(T.takeError());
        std::free(Data);
      }
    } else {
      LocatedCodeObject Located;
      (void)Cache.locateCodeObject(*W.Ref, X.RealPath, W.kpackIndex(),
                                   Requests, Located, &A);
    }
    Cache.explain(A);
    O.Ok = A.Verdict == Diagnosis::Loaded && VerifyError.empty();
    // ROCM_KPACK_ARCH_OVERRIDE replaces what is asked for: the code object
    // found may be one the GPU cannot run, which the HIP runtime then
    // refuses.
    std::string Foreign;
    if (O.Ok && !Cache.environment().ArchOverride.empty()) {
      const std::vector<std::string> Runs = candidateTargetIds(Agent);
      if (std::find(Runs.begin(), Runs.end(), A.found()->Candidate) ==
          Runs.end())
        Foreign = A.found()->Candidate;
    }
    if (!Foreign.empty()) {
      O.Ok = false;
      O.Diagnosis = OverrideMismatch;
      O.Message = "ROCM_KPACK_ARCH_OVERRIDE makes the loader take " +
                  quoted(A.Key) + " for " + Foreign + " from " +
                  quoted(A.found()->Path) + ", which " + Agent.str() +
                  " cannot run";
    } else if (!VerifyError.empty()) {
      O.Diagnosis = diagnosisName(Diagnosis::Corrupt);
      O.Message = "the code object " + quoted(A.Key) + " for " +
                  A.found()->Candidate + " in " + quoted(A.found()->Path) +
                  " is damaged: " + VerifyError;
    } else {
      O.Diagnosis = diagnosisName(A.Verdict);
      O.Message = A.Message;
    }
    O.Account = std::move(A);
    V.Objects.push_back(std::move(O));
  }
}

/// Remedies of a failing verdict, where known.
void addRemedies(const Examined &X, const TargetId &Agent,
                 const KpackEnvironment &Env, WheelIndex &Wheels, Verdict &V) {
  const std::string &D = V.Diagnosis;
  const ObjectVerdict *First = nullptr;
  for (const ObjectVerdict &O : V.Objects)
    if (!O.Ok && O.Diagnosis == D) {
      First = &O;
      break;
    }
  const ResolutionAccount *A =
      First && First->Account ? &*First->Account : nullptr;
  auto Add = [&](std::string R) { V.Remedies.push_back(std::move(R)); };
  if (D == Broken || D == KpackReadyObject) {
    Add("rebuild, linking with ld.kpack: -fuse-ld=kpack, hipcc "
        "--emit-kpack, or kpack_emit in CMake (docs/kpack-ready.md)");
  } else if (is(D, Diagnosis::Disabled)) {
    Add("unset ROCM_KPACK_DISABLE");
  } else if (D == OverrideMismatch) {
    Add("unset ROCM_KPACK_ARCH_OVERRIDE, or name a target " + Agent.str() +
        " runs in it");
  } else if (is(D, Diagnosis::InvalidMetadata) || D == Unreadable) {
    Add("reinstall or rebuild " + quoted(X.Path));
  } else if (D == FatNoCode) {
    Add("rebuild with --offload-arch=" + Agent.str() +
        " (or a target it can run)");
  } else if (is(D, Diagnosis::Stale) && A) {
    const ProbeRecord *P = nullptr;
    for (const ProbeRecord &R : A->Probes)
      if (R.What == ProbeRecord::Outcome::Stale) {
        P = &R;
        break;
      }
    Add("rebuild or reinstall " + quoted(X.Path) +
        (P ? " and " + quoted(P->Path) : std::string()) +
        " together (both from one link)");
  } else if (is(D, Diagnosis::Corrupt) && A) {
    for (const ProbeRecord &R : A->Probes)
      if (R.What == ProbeRecord::Outcome::ReadFailed ||
          (R.What == ProbeRecord::Outcome::Unusable &&
           R.Failure.code() != KPACK_ERROR_FILE_NOT_FOUND)) {
        Add("reinstall " + quoted(R.Path) + " (`kpack verify " + R.Path +
            "` shows the damage)");
        break;
      }
    if (V.Remedies.empty() && A->found())
      Add("reinstall " + quoted(A->found()->Path));
  } else if (is(D, Diagnosis::MissingEntry)) {
    Add("the archive belongs to another build of " + quoted(X.Path) +
        ": reinstall (or rebuild) the binary and its archives together");
  } else if ((is(D, Diagnosis::NoArchive) || is(D, Diagnosis::OtherTargets)) && A) {
    std::vector<std::string> Candidates;
    for (const ProbeRecord &P : A->Probes)
      if (std::find(Candidates.begin(), Candidates.end(), P.Candidate) ==
          Candidates.end())
        Candidates.push_back(P.Candidate);
    for (std::string &R : Wheels.remedies(X.RealPath, Agent, Candidates))
      Add(std::move(R));
    if (!Env.PathOverride.empty())
      Add("ROCM_KPACK_PATH replaces the binary's own search paths: unset it, "
          "or name the archive for " + Agent.str() + " in it");
    if (V.Remedies.empty())
      for (const SearchTemplate &T : A->Templates) {
        const std::string Name = fileNameOf(T.Path);
        const size_t At = Name.find(ArchPlaceholder);
        if (At == std::string::npos)
          continue;
        const std::string Dir = directoryOf(T.Path);
        const std::string Want = Dir + "/" +
                                 expandArchPlaceholder(Name, Agent.Processor);
        std::string R = "install the archive " + quoted(Want);
        StringRef Prefix = StringRef(Name).substr(0, At);
        if (sys::path::filename(Dir) == ".kpack" && Prefix.consume_back("_") &&
            !Prefix.empty())
          R += " (TheRock: the artifact " + Prefix.str() + "_" +
               Agent.Processor + ")";
        R += ", or one for a target " + Agent.str() + " runs (" +
             joined(Candidates) + ")";
        Add(R);
        break;
      }
    // An archive for this GPU's processor in the other xnack mode: xnack is
    // the process's choice (HSA_XNACK), sramecc is the hardware's.
    auto XnackHint = [&](const std::vector<std::string> &Targets) {
      for (const std::string &T : Targets) {
        std::optional<TargetId> Id = parseTargetId(T);
        if (Id && Id->Processor == Agent.Processor &&
            Id->Xnack != FeatureState::Any && Id->Xnack != Agent.Xnack &&
            (Id->Sramecc == FeatureState::Any || Id->Sramecc == Agent.Sramecc))
          return std::string(Id->Xnack == FeatureState::On ? "1" : "0");
      }
      return std::string();
    };
    std::string Hint;
    for (const SiblingArchive &S : A->Siblings)
      if (Hint.empty())
        Hint = XnackHint(S.Offered);
    for (const ProbeRecord &P : A->Probes)
      if (Hint.empty())
        Hint = XnackHint(P.Offered);
    if (!Hint.empty())
      Add("or run with HSA_XNACK=" + Hint +
          ", the xnack mode of the archive found");
    Add("or rebuild with --offload-arch=" + Agent.str());
  }
}

void judge(const HostBinary &H, Examined &X, LoaderCache &Cache,
           const std::vector<Gpu> &Gpus, const KpackEnvironment &Env,
           WheelIndex &Wheels) {
  for (const Gpu &G : Gpus) {
    Verdict V;
    if (X.Class == HostBinaryClass::Broken) {
      V.Objects.push_back(
          {"", false, Broken,
           "linked from kpack-ready objects without ld.kpack: its wrappers "
           "point at key records, its device code was dropped at link time",
           std::nullopt});
    } else if (X.Class == HostBinaryClass::KpackReady) {
      V.Objects.push_back({"", false, KpackReadyObject,
                           "a kpack-ready object: not loadable until ld.kpack "
                           "links it",
                           std::nullopt});
    } else {
      judgeHipk(H, X, Cache, G.Id, V);
      judgeFat(H, G.Id, V);
      for (const WrapperInfo &W : H.Wrappers)
        if (W.isHIPF() && W.BundleIndex < 0) {
          V.Objects.push_back({"", false, Unreadable,
                               "a HIPF wrapper points at no offload bundle",
                               std::nullopt});
          break;
        }
    }
    for (const ObjectVerdict &O : V.Objects) {
      if (O.Ok)
        continue;
      if (V.Ok || rank(O.Diagnosis) > rank(V.Diagnosis)) {
        V.Ok = false;
        V.Diagnosis = O.Diagnosis;
        V.Message = O.Message;
      }
    }
    if (V.Ok && !V.Objects.empty()) {
      V.Diagnosis = V.Objects.front().Diagnosis;
      V.Message = V.Objects.front().Message;
    }
    for (const ObjectVerdict &O : V.Objects)
      V.SameFailures += !O.Ok && O.Diagnosis == V.Diagnosis;
    if (!V.Ok)
      addRemedies(X, G.Id, Env, Wheels, V);
    X.PerGpu.push_back(std::move(V));
  }
}

void examine(Examined &X, bool Named, LoaderCache &Cache,
             const std::vector<Gpu> &Gpus, const KpackEnvironment &Env,
             WheelIndex &Wheels) {
  auto Buf = MemoryBuffer::getFile(X.Path, /*IsText=*/false,
                                   /*RequiresNullTerminator=*/false);
  if (!Buf) {
    X.Error = Buf.getError().message();
    X.Hip = Named;
    return;
  }
  StringRef Head = (*Buf)->getBuffer().take_front(HostImageHeadSize);
  const bool Object = Named && Head.starts_with("\x7f"
                                                "ELF") &&
                      Head.size() > 17 && Head[16] == 1; // ET_REL
  if (!looksLikeHostImage(Head) && !Object) {
    if (Named) {
      X.Hip = true;
      X.Error = "not an x86-64 ELF or PE host binary";
    }
    return;
  }
  AnalyzeOptions Opts;
  Opts.DecodeCompressedBundles = DoctorVerify;
  Expected<HostBinary> H = analyzeHostBinary((*Buf)->getMemBufferRef(), Opts);
  if (!H) {
    X.Hip = true;
    X.Error = toString(H.takeError());
    return;
  }
  X.Class = classifyHostBinary(*H);
  if (X.Class == HostBinaryClass::None) {
    X.Hip = Named;
    X.Error = Named ? "no HIP device code: it needs no archive" : "";
    return;
  }
  X.Hip = true;
  X.Format = H->Format == HostFormat::Coff ? "pe" : "elf";
  X.Kind = hostFileKindName(H->Kind, H->IsPIE);
  SmallString<256> Real;
  X.RealPath = sys::fs::real_path(X.Path, Real) ? X.Path : std::string(Real);
  judge(*H, X, Cache, Gpus, Env, Wheels);
}

void printAccount(raw_ostream &OS, const ResolutionAccount &A) {
  OS << "    requested: " << joined(A.Requested) << "\n";
  for (const ProbeRecord &P : A.Probes) {
    OS << "    " << P.Candidate << ": " << P.Path << ": "
       << probeOutcomeName(P.What);
    if (P.What == ProbeRecord::Outcome::Unusable ||
        P.What == ProbeRecord::Outcome::ReadFailed)
      OS << " (" << P.Failure.message() << ")";
    else if (P.What == ProbeRecord::Outcome::NotListed)
      OS << " (offers " << joined(P.Offered) << ")";
    OS << "\n";
  }
  for (const SiblingArchive &S : A.Siblings)
    OS << "    beside: " << S.Path << " ("
       << (S.Failure ? "not usable: " + S.Failure.message()
                     : "offers " + joined(S.Offered))
       << ")\n";
}

void printText(raw_ostream &OS, const std::vector<Gpu> &Gpus,
               const std::vector<std::pair<std::string, std::string>> &EnvFx,
               const std::vector<std::string> &Notes,
               const std::vector<Examined> &All,
               const std::vector<NotFollowed> &Skipped,
               const std::vector<std::vector<ExtraProblem>> &Extras) {
  for (const Gpu &G : Gpus)
    OS << Tool << ": GPU " << G.Id.str()
       << (G.Source == "kfd" ? " (this machine)" : "") << "\n";
  for (const auto &[Var, Effect] : EnvFx)
    OS << Tool << ": " << Var << " " << Effect << "\n";
  for (const std::string &N : Notes)
    OS << Tool << ": note: " << N << "\n";
  size_t Binaries = 0, Fine = 0, Problems = 0;
  for (const Examined &X : All) {
    if (!X.Hip)
      continue;
    ++Binaries;
    if (isPlainHost(X)) {
      --Binaries;
      OS << X.Path << ": " << X.Error << "\n";
      continue;
    }
    if (!X.Error.empty()) {
      ++Problems;
      OS << X.Path << ": " << Unreadable << ": " << X.Error << "\n";
      continue;
    }
    bool AllOk = true;
    for (size_t G = 0; G < Gpus.size(); ++G) {
      const Verdict &V = X.PerGpu[G];
      if (V.Ok) {
        if (DoctorVerbose)
          OS << X.Path << ": " << Gpus[G].Id.str() << ": " << V.Diagnosis
             << ": " << V.Message << "\n";
        continue;
      }
      AllOk = false;
      ++Problems;
      OS << X.Path << ": " << Gpus[G].Id.str() << ": " << V.Diagnosis << ": "
         << V.Message << "\n";
      const size_t Failing = size_t(std::count_if(
          V.Objects.begin(), V.Objects.end(),
          [](const ObjectVerdict &O) { return !O.Ok; }));
      if (V.Objects.size() > 1)
        OS << "  " << Failing << " of " << V.Objects.size()
           << " code objects do not load"
           << (V.SameFailures == Failing ? "" : " (not all for this reason)")
           << "\n";
      for (const std::string &R : V.Remedies)
        OS << "  remedy: " << R << "\n";
      if (DoctorVerbose)
        for (const ObjectVerdict &O : V.Objects) {
          OS << "  " << (O.Key.empty() ? "binary" : O.Key) << ": "
             << O.Diagnosis << (O.Ok ? "" : " (fails)") << "\n";
          if (O.Account)
            printAccount(OS, *O.Account);
        }
    }
    Fine += AllOk;
  }
  for (size_t G = 0; G < Gpus.size(); ++G)
    for (const ExtraProblem &E : Extras[G]) {
      ++Problems;
      OS << E.Site << ": " << Gpus[G].Id.str() << ": incomplete-extra: "
         << E.Distribution << "[" << E.Extra << "] is installed in part: "
         << joined(E.Missing) << " missing\n";
      OS << "  remedy: " << E.Remedy << "\n";
    }
  if (DoctorVerbose)
    for (const NotFollowed &N : Skipped)
      OS << N.Link << ": not followed: a link out of the tree (to "
         << N.Target << ")\n";
  OS << Tool << ": " << Binaries << " HIP binar" << (Binaries == 1 ? "y" : "ies")
     << ", " << Gpus.size() << " GPU" << (Gpus.size() == 1 ? "" : "s") << ": "
     << Fine << " load on every GPU, " << (Binaries - Fine) << " do not";
  if (Problems)
    OS << " (" << Problems << " problem" << (Problems == 1 ? "" : "s") << ")";
  OS << "\n";
}

void jsonAccount(json::OStream &J, const ResolutionAccount &A) {
  J.attributeArray("requested", [&] {
    for (const std::string &R : A.Requested)
      J.value(R);
  });
  J.attributeArray("search_paths", [&] {
    for (const SearchTemplate &T : A.Templates)
      J.object([&] {
        J.attribute("path", T.Path);
        J.attribute("origin", searchOriginName(T.From));
        J.attribute("entry", T.Entry);
      });
  });
  J.attributeArray("searched", [&] {
    for (const ProbeRecord &P : A.Probes)
      J.object([&] {
        J.attribute("request", P.Request);
        J.attribute("candidate", P.Candidate);
        J.attribute("path", P.Path);
        J.attribute("result", probeOutcomeName(P.What));
        if (P.Failure)
          J.attribute("error", P.Failure.message());
        if (!P.Offered.empty())
          J.attributeArray("offers", [&] {
            for (const std::string &T : P.Offered)
              J.value(T);
          });
        if (!P.EntryLinkId.empty())
          J.attribute("entry_link_id", P.EntryLinkId);
      });
  });
  J.attributeArray("beside", [&] {
    for (const SiblingArchive &S : A.Siblings)
      J.object([&] {
        J.attribute("path", S.Path);
        J.attribute("name_target", S.NameTarget);
        J.attributeArray("offers", [&] {
          for (const std::string &T : S.Offered)
            J.value(T);
        });
        if (S.Failure)
          J.attribute("error", S.Failure.message());
      });
  });
  if (const ProbeRecord *F = A.found()) {
    J.attribute("archive", F->Path);
    J.attribute("target", F->Candidate);
    J.attribute("match", matchKindName(A.Match));
    J.attribute("size", int64_t(F->Size));
  }
}

void printJson(raw_ostream &OS, const std::vector<Gpu> &Gpus,
               const std::vector<std::pair<std::string, std::string>> &EnvFx,
               const std::vector<std::string> &Notes,
               const std::vector<Examined> &All,
               const std::vector<NotFollowed> &Skipped,
               const std::vector<std::vector<ExtraProblem>> &Extras,
               size_t Fine, size_t Failed) {
  json::OStream J(OS, 2);
  J.object([&] {
    J.attributeArray("gpus", [&] {
      for (const Gpu &G : Gpus)
        J.object([&] {
          J.attribute("target", G.Id.str());
          J.attribute("source", G.Source);
        });
    });
    J.attributeObject("environment", [&] {
      for (const auto &[Var, Effect] : EnvFx)
        J.attribute(Var, Effect);
    });
    J.attributeArray("notes", [&] {
      for (const std::string &N : Notes)
        J.value(N);
    });
    J.attributeArray("results", [&] {
      for (const Examined &X : All) {
        if (!X.Hip)
          continue;
        for (size_t G = 0; G < Gpus.size(); ++G)
          J.object([&] {
            J.attribute("binary", X.Path);
            if (X.RealPath != X.Path && !X.RealPath.empty())
              J.attribute("real_path", X.RealPath);
            J.attribute("gpu", Gpus[G].Id.str());
            if (!X.Error.empty()) {
              const bool NoHip = isPlainHost(X);
              J.attribute("ok", NoHip);
              J.attribute("class", hostBinaryClassName(X.Class));
              J.attribute("diagnosis", NoHip ? "none" : Unreadable);
              J.attribute("message", X.Error);
              return;
            }
            const Verdict &V = X.PerGpu[G];
            J.attribute("format", X.Format);
            J.attribute("kind", X.Kind);
            J.attribute("class", hostBinaryClassName(X.Class));
            J.attribute("ok", V.Ok);
            J.attribute("diagnosis", V.Diagnosis);
            J.attribute("message", V.Message);
            J.attributeArray("remedies", [&] {
              for (const std::string &R : V.Remedies)
                J.value(R);
            });
            J.attributeArray("code_objects", [&] {
              for (const ObjectVerdict &O : V.Objects)
                J.object([&] {
                  J.attribute("key", O.Key);
                  J.attribute("ok", O.Ok);
                  J.attribute("diagnosis", O.Diagnosis);
                  J.attribute("message", O.Message);
                  if (O.Account)
                    jsonAccount(J, *O.Account);
                });
            });
          });
      }
    });
    J.attributeArray("distributions", [&] {
      for (size_t G = 0; G < Gpus.size(); ++G)
        for (const ExtraProblem &E : Extras[G])
          J.object([&] {
            J.attribute("site", E.Site);
            J.attribute("distribution", E.Distribution);
            J.attribute("gpu", Gpus[G].Id.str());
            J.attribute("ok", false);
            J.attribute("diagnosis", "incomplete-extra");
            J.attribute("extra", E.Extra);
            J.attributeArray("installed", [&] {
              for (const std::string &I : E.Installed)
                J.value(I);
            });
            J.attributeArray("missing", [&] {
              for (const std::string &M : E.Missing)
                J.value(M);
            });
            J.attribute("remedy", E.Remedy);
          });
    });
    J.attributeArray("not_followed", [&] {
      for (const NotFollowed &N : Skipped)
        J.object([&] {
          J.attribute("link", N.Link);
          J.attribute("target", N.Target);
        });
    });
    J.attributeObject("summary", [&] {
      J.attribute("binaries", int64_t(Fine + Failed));
      J.attribute("load_everywhere", int64_t(Fine));
      J.attribute("fail_somewhere", int64_t(Failed));
    });
  });
  OS << "\n";
}

} // namespace

int runDoctor() {
  std::vector<std::string> Notes;
  Expected<std::vector<Gpu>> Gpus = selectGpus(Notes);
  if (!Gpus) {
    reportError(Tool, Gpus.takeError());
    return 2;
  }
  std::vector<Candidate> Inputs;
  InputContext Ctx;
  Ctx.Args.assign(DoctorPaths.begin(), DoctorPaths.end());
  for (const std::string &P : Ctx.Args)
    if (Error E = collectInputs(P, Ctx, Inputs))
      return reportError(Tool, std::move(E));
  std::vector<NotFollowed> &Skipped = Ctx.Skipped;
  if (!Ctx.WheelSite.empty()) {
    // The wheels' files are shown inside them: "pkg.whl:pkg/lib/libx.so",
    // or "wheels:pkg/lib/libx.so" for several installed together.
    const std::string Shown =
        Ctx.Wheels.size() == 1 ? Ctx.Wheels[0] + ":" : std::string("wheels:");
    SmallString<256> Real;
    if (!sys::fs::real_path(Ctx.WheelSite, Real) &&
        StringRef(Real) != Ctx.WheelSite)
      Ctx.Display.push_back({std::string(Real) + "/", Shown});
    Ctx.Display.push_back({Ctx.WheelSite + "/", Shown});
    if (Ctx.Wheels.size() > 1)
      Notes.push_back("wheels: " + joined(Ctx.Wheels) +
                      ", installed together as pip would");
  }
  std::sort(Skipped.begin(), Skipped.end(),
            [](const NotFollowed &A, const NotFollowed &B) {
              return A.Link < B.Link;
            });

  KpackEnvironment Env = KpackEnvironment::fromProcess();
  Env.Debug = false; // the account says it all
  LoaderCache Cache(Env);
  WheelIndex Wheels;
  std::vector<Examined> All(Inputs.size());
  parallelFor(0, Inputs.size(), [&](size_t I) {
    All[I].Path = Inputs[I].Path;
    examine(All[I], Inputs[I].Named, Cache, *Gpus, Env, Wheels);
  });

  std::vector<std::string> HipBinaries;
  size_t Fine = 0, Failed = 0;
  for (const Examined &X : All) {
    if (!X.Hip)
      continue;
    if (!X.RealPath.empty())
      HipBinaries.push_back(X.RealPath);
    if (isPlainHost(X))
      continue;
    bool Ok = X.Error.empty();
    for (const Verdict &V : X.PerGpu)
      Ok &= V.Ok;
    (Ok ? Fine : Failed)++;
  }
  std::vector<std::vector<ExtraProblem>> Extras;
  bool ExtraProblems = false;
  for (const Gpu &G : *Gpus) {
    Extras.push_back(Wheels.incompleteExtras(G.Id, HipBinaries));
    ExtraProblems |= !Extras.back().empty();
  }
  const auto EnvFx = environmentEffects(Env);
  std::string Report;
  raw_string_ostream OS(Report);
  if (DoctorJson)
    printJson(OS, *Gpus, EnvFx, Notes, All, Skipped, Extras, Fine, Failed);
  else
    printText(OS, *Gpus, EnvFx, Notes, All, Skipped, Extras);
  OS.flush();
  // A wheel's files are shown inside it ("pkg.whl:pkg/lib/libx.so").
  for (const auto &[Scratch, Shown] : Ctx.Display)
    for (size_t At = Report.find(Scratch); At != std::string::npos;
         At = Report.find(Scratch, At + Shown.size()))
      Report.replace(At, Scratch.size(), Shown);
  outs() << Report;
  return Failed || ExtraProblems ? 1 : 0;
}
