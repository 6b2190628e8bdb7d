//===- VerifyArtifacts.cpp - Checks on split artifacts --------------------===//
//
// See kpack/VerifyArtifacts.h and docs/verify-artifacts.md. The artifact set
// is read as TheRock installs it: every prefix of every artifact copied into
// one root, so a search path of a host binary in a generic artifact resolves
// against the files of all artifacts of the directory.
//
//===----------------------------------------------------------------------===//

#include "kpack/VerifyArtifacts.h"

#include "kpack/ArchiveReader.h"
#include "kpack/ArtifactTree.h"
#include "kpack/BundleCodec.h"
#include "kpack/CodeObjectCheck.h"
#include "kpack/DatabaseHandlers.h"
#include "kpack/HostBinary.h"
#include "kpack/TargetId.h"

#include "llvm/ADT/STLExtras.h"
#include "llvm/ADT/StringExtras.h"
#include "llvm/Support/FileSystem.h"
#include "llvm/Support/MemoryBuffer.h"
#include "llvm/Support/Parallel.h"
#include "llvm/Support/Path.h"

#include <algorithm>
#include <map>
#include <memory>
#include <set>

using namespace llvm;

namespace kpack {

size_t ArtifactsReport::problemCount() const {
  size_t N = 0;
  for (const ArtifactCheck &C : Checks)
    N += C.Problems.size();
  return N;
}

std::vector<std::pair<std::string, char>> targetsInName(StringRef Name) {
  std::vector<std::pair<std::string, char>> Out;
  size_t I = 0;
  while ((I = Name.find("gfx", I)) != StringRef::npos) {
    // A token starts at "gfx" not preceded by a letter or digit.
    if (I > 0 && isAlnum(Name[I - 1])) {
      I += 3;
      continue;
    }
    size_t E = I + 3;
    while (E < Name.size() && isAlnum(Name[E]))
      ++E;
    if (E == I + 3) {
      I = E;
      continue;
    }
    std::string Processor = Name.slice(I, E).str();
    if (Name.substr(E).starts_with("-generic")) {
      Processor += "-generic";
      E += 8;
    }
    char Xnack = 0;
    // Features, in the colon form of target IDs or Tensile's hyphen form.
    while (E < Name.size() && (Name[E] == ':' || Name[E] == '-')) {
      StringRef Rest = Name.substr(E + 1);
      size_t Len = Rest.starts_with("xnack") ? 5 : Rest.starts_with("sramecc") ? 7 : 0;
      if (!Len || Rest.size() <= Len || (Rest[Len] != '+' && Rest[Len] != '-'))
        break;
      if (Len == 5)
        Xnack = Rest[Len];
      E += 1 + Len + 1;
    }
    Out.emplace_back(std::move(Processor), Xnack);
    I = E;
  }
  return Out;
}

namespace {

char xnackOf(const TargetId &T) {
  return T.Xnack == FeatureState::On ? '+' : T.Xnack == FeatureState::Off ? '-' : 0;
}

struct Artifact {
  std::string Name, Path, Component, Suffix;
  bool Generic = false;
  std::optional<TargetId> Target; ///< per-target artifacts
  /// baseArch(Suffix), split's routing of database files ("gfx90a" for
  /// "gfx90a:xnack+"); empty for a suffix that is neither a target ID nor a
  /// bare processor name such as "gfx11" (a recombined group).
  std::string Base;
  /// Suffix is its own base arch: the artifact split writes database files
  /// of that base arch to, in any feature spelling.
  bool IsBaseArch = false;
  /// The whole directory, read as one installed root (no artifacts in it).
  bool InstallTree = false;
  std::vector<std::string> Prefixes;
  bool ManifestOk = false;
  std::vector<TreeEntry> Files; ///< relative to the artifact
};

/// The base arch whose artifact split writes a processor's database files
/// to: the processor itself, a generic one as upstream's Tensile pattern
/// cuts it ("gfx11-generic" -> "gfx11", "gfx9-4-generic" -> "gfx9").
std::string databaseArchOf(StringRef Processor) {
  std::string B = baseArch(Processor);
  if (!StringRef(B).ends_with("-generic"))
    return B;
  size_t E = 3;
  while (E < B.size() && isAlnum(B[E]))
    ++E;
  return B.substr(0, E);
}

/// A processor of the target table ("gfx942", "gfx11-generic") or the cut
/// of a generic one (databaseArchOf: "gfx11", "gfx10", "gfx9").
bool isKnownArch(StringRef Processor) {
  if (supportedFeatures(Processor.str()) ||
      isGenericProcessor(Processor.str()))
    return true;
  if (isGenericProcessor(Processor.str() + "-generic"))
    return true;
  for (char N = '0'; N <= '9'; ++N)
    if (isGenericProcessor(Processor.str() + "-" + N + "-generic"))
      return true;
  return false;
}

/// Dir with every component that names a target ("gfx942", "gfx90a-xnack+",
/// "amd-gfx942") read as "<arch>": the directories of one layout that hold
/// each target's files apart compare equal.
std::string perArchPattern(StringRef Dir) {
  SmallVector<StringRef, 8> Parts;
  Dir.split(Parts, '/');
  std::string Out;
  for (size_t I = 0; I < Parts.size(); ++I) {
    StringRef P = Parts[I];
    if (I)
      Out += '/';
    Out += targetsInName(P).empty() ? P.str() : "<arch>";
  }
  return Out;
}

/// A name token (processor P, xnack state X) belongs in artifact A: P has A's
/// base arch (a generic P also in the artifact of its cut, as split routes
/// Tensile's "gfx11-generic" files to "gfx11"); in an artifact named by a
/// target ID with xnack, no contradicting xnack state (it holds that
/// target's archive only). A base-arch artifact takes every variant.
bool belongsTo(const std::pair<std::string, char> &Tok, const Artifact &A) {
  std::string TokBase = baseArch(Tok.first);
  if (TokBase != A.Base &&
      !(A.IsBaseArch && isGenericProcessor(TokBase) &&
        databaseArchOf(TokBase) == A.Base))
    return false;
  char TX = A.Target ? xnackOf(*A.Target) : 0;
  return !Tok.second || !TX || Tok.second == TX;
}


struct OpenArchive {
  std::string Label; ///< "<artifact>/<relpath>"
  std::string Component;
  const Artifact *Owner = nullptr;
  std::unique_ptr<ArchiveReader> Reader;
  std::set<std::string> Keys; ///< "key\0arch"
};

/// The manifest prefix of A that RelPath lies below (the longest), or null.
const std::string *prefixOf(const Artifact &A, StringRef RelPath) {
  const std::string *Owner = nullptr;
  for (const std::string &P : A.Prefixes)
    if (RelPath.starts_with(P + "/") && (!Owner || P.size() > Owner->size()))
      Owner = &P;
  return Owner;
}

/// An ELF64 little-endian file for AMDGPU (a device code object).
bool isAmdgpuElf(StringRef Bytes) {
  if (Bytes.size() < 20 || !Bytes.starts_with("\x7f" "ELF") || Bytes[4] != 2 ||
      Bytes[5] != 1)
    return false;
  return (uint8_t(Bytes[18]) | uint16_t(uint8_t(Bytes[19])) << 8) ==
         224; // EM_AMDGPU
}

class Verifier {
public:
  explicit Verifier(std::string Dir) : Dir(std::move(Dir)) {}
  Expected<ArtifactsReport> run();

private:
  Expected<ArtifactsReport> runInstallTree();
  std::string Dir;
  std::vector<Artifact> Artifacts;
  std::vector<std::unique_ptr<OpenArchive>> Archives;
  /// Root-relative path (as installed) -> file on disk.
  std::map<std::string, std::string> Installed;
  ArtifactsReport Report;

  ArtifactCheck &check(StringRef Name) {
    Report.Checks.push_back({Name.str(), {}, {}});
    return Report.Checks.back();
  }
  void checkManifests();
  void checkGeneric();
  void checkSeparation();
  void checkArchives();
  void checkWrappers();
  void checkVariants();
  void checkDatabases();
  std::set<std::string> targetsOf(StringRef Component) const;
};

Expected<ArtifactsReport> Verifier::run() {
  std::error_code EC;
  std::vector<std::string> Names;
  for (sys::fs::directory_iterator I(Dir, EC), E; I != E && !EC; I.increment(EC))
    if (I->type() == sys::fs::file_type::directory_file)
      Names.push_back(sys::path::filename(I->path()).str());
  if (EC)
    return createStringError(EC, "'" + Dir + "': " + EC.message());
  llvm::sort(Names);
  // No subdirectory is an artifact (none has a manifest or an artifact's
  // name: bin/, lib/, share/): Dir is an install tree, every artifact
  // copied into one root, or a CMake or wheel install prefix.
  if (!Names.empty() && llvm::none_of(Names, [&](const std::string &N) {
        return splitArtifactName(N) ||
               sys::fs::exists(Dir + "/" + N + "/" + ArtifactManifestName);
      }))
    return runInstallTree();
  for (const std::string &N : Names) {
    Artifact A;
    A.Name = N;
    A.Path = Dir + "/" + N;
    if (auto Parts = splitArtifactName(N)) {
      A.Component = Parts->first;
      A.Suffix = Parts->second;
      A.Generic = A.Suffix == "generic";
      // A suffix naming a processor the target table knows, or the cut of
      // a generic one ("gfx11", "gfx9": the base arch split reads from
      // Tensile's generic names), is a target; any other suffix is a
      // recombined group (gfx110X, gfx94X, or one spelled as an unknown
      // processor, "gfx110x"), whose files are not checked for separation.
      if (!A.Generic) {
        A.Target = parseTargetId(A.Suffix);
        if (A.Target && !isKnownArch(A.Target->Processor))
          A.Target.reset();
        if (A.Target) {
          A.Base = baseArch(A.Suffix);
          A.IsBaseArch = A.Base == A.Suffix;
        }
      }
    }
    Report.Artifacts.push_back(N);
    Artifacts.push_back(std::move(A));
  }
  checkManifests();
  checkGeneric();
  checkSeparation();
  checkArchives();
  checkWrappers();
  checkVariants();
  checkDatabases();
  return std::move(Report);
}

Expected<ArtifactsReport> Verifier::runInstallTree() {
  Artifact A;
  A.Name = sys::path::filename(StringRef(Dir).rtrim('/')).str();
  A.Path = Dir;
  A.InstallTree = A.ManifestOk = true;
  Expected<std::vector<TreeEntry>> Files = listTree(Dir);
  if (!Files)
    return Files.takeError();
  A.Files = std::move(*Files);
  for (const TreeEntry &E : A.Files)
    Installed.emplace(E.RelPath, Dir + "/" + E.RelPath);
  Report.Artifacts.push_back(A.Name);
  Artifacts.push_back(std::move(A));
  // An install tree has no manifests, no generic artifact, no per-target
  // artifacts and may hold fat binaries: its archives are read, and every
  // HIPK wrapper must resolve for every target of an archive in the tree
  // (the targets it claims).
  check("install tree").Notes.push_back(
      Artifacts.back().Name + ": " +
      std::to_string(Artifacts.back().Files.size()) + " entries");
  checkArchives();
  checkWrappers();
  checkVariants();
  return std::move(Report);
}

void Verifier::checkManifests() {
  ArtifactCheck &C = check("manifests");
  if (Artifacts.empty())
    C.Problems.push_back("no artifacts in '" + Dir + "'");
  for (Artifact &A : Artifacts) {
    if (A.Component.empty())
      C.Problems.push_back(A.Name + ": not an artifact name (<component>_<target>)");
    Expected<std::vector<std::string>> P = readArtifactManifest(A.Path);
    if (!P) {
      C.Problems.push_back(A.Name + ": " + toString(P.takeError()));
    } else {
      A.Prefixes = std::move(*P);
      A.ManifestOk = true;
    }
    Expected<std::vector<TreeEntry>> Files = listTree(A.Path);
    if (!Files) {
      C.Problems.push_back(A.Name + ": " + toString(Files.takeError()));
      continue;
    }
    for (TreeEntry &E : *Files)
      if (E.RelPath != ArtifactManifestName)
        A.Files.push_back(std::move(E));
    if (!A.ManifestOk)
      continue;
    std::set<std::string> Used;
    for (const TreeEntry &E : A.Files) {
      const std::string *Owner = prefixOf(A, E.RelPath);
      if (!Owner) {
        C.Problems.push_back(A.Name + "/" + E.RelPath +
                             ": outside every prefix of the manifest");
        continue;
      }
      Used.insert(*Owner);
      // Installed, every prefix is copied into one root.
      Installed.emplace(E.RelPath.substr(Owner->size() + 1),
                        A.Path + "/" + E.RelPath);
    }
    // A target artifact lists the prefixes it holds (FORMAT.md §5); the
    // generic one keeps every prefix directory, empty or not.
    if (!A.Generic)
      for (const std::string &P : A.Prefixes)
        if (!Used.count(P))
          C.Problems.push_back(A.Name + ": manifest lists '" + P +
                               "', which holds no file");
    C.Notes.push_back(A.Name + ": " + std::to_string(A.Prefixes.size()) +
                      " prefixes, " + std::to_string(A.Files.size()) + " entries");
  }
}

void Verifier::checkGeneric() {
  ArtifactCheck &C = check("generic artifacts hold no device code");
  for (const Artifact &A : Artifacts) {
    if (!A.Generic)
      continue;
    unsigned Converted = 0, HostOnly = 0;
    for (const TreeEntry &E : A.Files) {
      if (E.K != TreeEntry::File)
        continue;
      std::string Label = A.Name + "/" + E.RelPath;
      if (StringRef(E.RelPath).ends_with(".kpack")) {
        C.Problems.push_back(Label + ": a .kpack archive in a generic artifact");
        continue;
      }
      if (E.Size < 64)
        continue;
      auto BufOr = MemoryBuffer::getFile(A.Path + "/" + E.RelPath, false,
                                         /*RequiresNullTerminator=*/false);
      if (!BufOr) {
        C.Problems.push_back(Label + ": " + BufOr.getError().message());
        continue;
      }
      StringRef Bytes = (*BufOr)->getBuffer();
      if (isAmdgpuElf(Bytes)) {
        C.Problems.push_back(Label + ": an AMDGPU code object");
        continue;
      }
      if (isBundle(reinterpret_cast<const uint8_t *>(Bytes.data()), Bytes.size())) {
        C.Problems.push_back(Label + ": an offload bundle");
        continue;
      }
      // Host binaries: x86-64 ELF executables and shared objects, PE32+
      // x86-64 EXEs and DLLs.
      if (hostImageFormat(Bytes) == HostImageFormat::None)
        continue;
      Expected<HostBinary> H = analyzeHostBinary((*BufOr)->getMemBufferRef());
      if (!H) {
        C.Problems.push_back(Label + ": " + toString(H.takeError()));
        continue;
      }
      if (H->hasDeviceCode()) {
        C.Problems.push_back(Label + ": a fat binary (" +
                             std::to_string(H->Bundles.size()) +
                             " offload bundles in " +
                             H->fatbinSectionName() + ")");
        continue;
      }
      unsigned Hipf = 0, Hipk = 0, Bad = 0;
      for (const WrapperInfo &W : H->Wrappers) {
        Hipf += W.isHIPF();
        Hipk += W.isHIPK();
        if (W.isHIPK() && !W.Ref) {
          ++Bad;
          C.Problems.push_back(Label + ": wrapper at 0x" + utohexstr(W.Address) +
                               ": unreadable kpack metadata: " + W.RefError);
        }
        if (!W.isHIPF() && !W.isHIPK()) {
          ++Bad;
          C.Problems.push_back(Label + ": wrapper at 0x" + utohexstr(W.Address) +
                               ": unknown magic 0x" + utohexstr(W.Magic));
        }
      }
      if (Hipk && Hipf)
        C.Problems.push_back(Label + ": " + std::to_string(Hipf) +
                             " HIPF wrappers beside HIPK ones");
      if (Hipk)
        ++Converted;
      else
        ++HostOnly;
      (void)Bad;
    }
    C.Notes.push_back(A.Name + ": " + std::to_string(Converted) +
                      " host binaries with kpack metadata, " +
                      std::to_string(HostOnly) + " without device code");
  }
}

void Verifier::checkSeparation() {
  ArtifactCheck &C = check("target artifacts hold only their target's files");
  for (const Artifact &A : Artifacts) {
    if (A.Generic || A.Component.empty())
      continue;
    if (A.Base.empty()) {
      C.Notes.push_back(A.Name + ": '" + A.Suffix +
                        "' is no target ID (a recombined group): not checked");
      continue;
    }
    unsigned N = 0;
    for (const TreeEntry &E : A.Files) {
      ++N;
      for (const auto &Tok : targetsInName(E.RelPath))
        if (!belongsTo(Tok, A)) {
          std::string T = Tok.first;
          if (Tok.second)
            T += std::string(":xnack") + Tok.second;
          C.Problems.push_back(A.Name + "/" + E.RelPath + ": names " + T +
                               ", not " +
                               (A.Target ? A.Target->str() : A.Suffix));
          break;
        }
    }
    C.Notes.push_back(A.Name + ": " + std::to_string(N) + " entries");
  }
}

void Verifier::checkArchives() {
  ArtifactCheck &C = check("archives");
  for (const Artifact &A : Artifacts) {
    if (A.Generic)
      continue;
    for (const TreeEntry &E : A.Files) {
      if (E.K != TreeEntry::File || !StringRef(E.RelPath).ends_with(".kpack"))
        continue;
      auto O = std::make_unique<OpenArchive>();
      O->Label = A.Name + "/" + E.RelPath;
      O->Component = A.Component;
      O->Owner = &A;
      if (Status S = ArchiveReader::open(A.Path + "/" + E.RelPath, O->Reader)) {
        C.Problems.push_back(O->Label + ": " + S.message());
        continue;
      }
      const ArchiveReader &R = *O->Reader;
      if (A.Target)
        for (const std::string &G : R.gfxArches()) {
          std::optional<TargetId> T = parseTargetId(G);
          if (!T || T->Processor != A.Target->Processor ||
              (xnackOf(*T) && xnackOf(*A.Target) && xnackOf(*T) != xnackOf(*A.Target)))
            C.Problems.push_back(O->Label + ": gfx_arches lists " + G +
                                 ", not " + A.Target->str());
        }
      const std::vector<ArchiveReader::Entry> &Entries = R.entries();
      std::vector<std::string> Errors(Entries.size());
      parallelFor(0, Entries.size(), [&](size_t I) {
        const ArchiveReader::Entry &En = Entries[I];
        std::vector<uint8_t> Bytes;
        if (Status S = R.read(En, Bytes)) {
          Errors[I] = S.message();
          return;
        }
        if (!llvm::is_contained(R.gfxArches(), En.Arch)) {
          Errors[I] = "arch is not listed in gfx_arches";
          return;
        }
        Expected<std::optional<TargetId>> T =
            checkArchiveEntry(En.Arch, Bytes, OpaqueEntries::Reject);
        if (!T)
          Errors[I] = toString(T.takeError());
      });
      for (size_t I = 0; I < Entries.size(); ++I) {
        if (!Errors[I].empty())
          C.Problems.push_back(O->Label + ": " + Entries[I].Key + " (" +
                               Entries[I].Arch + "): " + Errors[I]);
        O->Keys.insert(Entries[I].Key + '\0' + Entries[I].Arch);
      }
      C.Notes.push_back(O->Label + ": " + std::to_string(Entries.size()) +
                        " code objects");
      Archives.push_back(std::move(O));
    }
  }
}

std::set<std::string> Verifier::targetsOf(StringRef Component) const {
  std::set<std::string> T;
  for (const auto &O : Archives)
    if (O->Component == Component)
      for (const std::string &G : O->Reader->gfxArches())
        T.insert(G);
  return T;
}

void Verifier::checkWrappers() {
  ArtifactCheck &C = check("every wrapper resolves for every target");
  std::map<std::string, const OpenArchive *> ByPath;
  for (const auto &O : Archives)
    ByPath[O->Owner->Path + "/" +
           StringRef(O->Label).drop_front(O->Owner->Name.size() + 1).str()] = O.get();
  for (const Artifact &A : Artifacts) {
    if (!A.Generic && !A.InstallTree)
      continue;
    std::set<std::string> Targets = targetsOf(A.Component);
    unsigned Checked = 0;
    for (const TreeEntry &E : A.Files) {
      if (E.K != TreeEntry::File || E.Size < 64)
        continue;
      auto BufOr = MemoryBuffer::getFile(A.Path + "/" + E.RelPath, false, false);
      if (!BufOr)
        continue;
      if (hostImageFormat((*BufOr)->getBuffer()) == HostImageFormat::None)
        continue;
      Expected<HostBinary> H = analyzeHostBinary((*BufOr)->getMemBufferRef());
      if (!H) {
        consumeError(H.takeError()); // reported by the generic check
        continue;
      }
      std::string Label = A.Name + "/" + E.RelPath;
      const std::string *Prefix = prefixOf(A, E.RelPath);
      if (!Prefix && !A.InstallTree)
        continue; // reported by the manifest check
      StringRef BinDir = sys::path::parent_path(
          StringRef(E.RelPath).drop_front(Prefix ? Prefix->size() + 1 : 0),
          sys::path::Style::posix);
      for (const WrapperInfo &W : H->Wrappers) {
        if (!W.isHIPK() || !W.Ref)
          continue;
        ++Checked;
        std::string Key = W.Ref->KernelName + "#" + std::to_string(W.kpackIndex());
        if (Targets.empty())
          C.Problems.push_back(
              Label + ": " + Key +
              (A.InstallTree
                   ? std::string(": the tree has no archive")
                   : ": the artifact set has no archive of component " +
                         A.Component));
        for (const std::string &T : Targets) {
          std::vector<std::string> Tried;
          bool Found = false;
          for (const std::string &SP : W.Ref->SearchPaths) {
            std::string P = SP;
            size_t At = P.find("@GFXARCH@");
            if (At != std::string::npos)
              P.replace(At, 9, T);
            SmallString<256> Rel(BinDir);
            sys::path::append(Rel, sys::path::Style::posix, P);
            sys::path::remove_dots(Rel, /*remove_dot_dot=*/true,
                                   sys::path::Style::posix);
            Tried.push_back(Rel.str().str());
            auto It = Installed.find(Rel.str().str());
            if (It == Installed.end())
              continue;
            auto Arch = ByPath.find(It->second);
            if (Arch == ByPath.end())
              continue;
            if (Arch->second->Keys.count(Key + '\0' + T)) {
              Found = true;
              break;
            }
          }
          if (!Found)
            C.Problems.push_back(Label + ": " + Key + " not found for " + T +
                                 " (searched " + join(Tried, ", ") + ")");
        }
      }
    }
    C.Notes.push_back(A.Name + ": " + std::to_string(Checked) +
                      " HIPK wrappers, " + std::to_string(Targets.size()) +
                      " targets");
  }
}

void Verifier::checkVariants() {
  // Archives of one component for targets of one processor (gfx90a:xnack+,
  // gfx90a:xnack-, gfx90a) hold the same keys: every feature variant was
  // built from the same sources (TheRock #7081 lost the variants' kernels).
  ArtifactCheck &C = check("feature variants hold the same kernels");
  std::map<std::pair<std::string, std::string>,
           std::vector<std::pair<std::string, const OpenArchive *>>>
      Groups;
  for (const auto &O : Archives)
    for (const std::string &G : O->Reader->gfxArches())
      if (std::optional<TargetId> T = parseTargetId(G))
        Groups[{O->Component, T->Processor}].push_back({G, O.get()});
  for (const auto &[Id, Members] : Groups) {
    if (Members.size() < 2)
      continue;
    std::set<std::string> All;
    auto KeysOf = [](const std::pair<std::string, const OpenArchive *> &M) {
      std::set<std::string> K;
      for (const ArchiveReader::Entry &E : M.second->Reader->entries())
        if (E.Arch == M.first)
          K.insert(E.Key);
      return K;
    };
    for (const auto &M : Members)
      for (const std::string &K : KeysOf(M))
        All.insert(K);
    for (const auto &M : Members) {
      std::set<std::string> Own = KeysOf(M);
      std::vector<std::string> Missing;
      for (const std::string &K : All)
        if (!Own.count(K))
          Missing.push_back(K);
      if (!Missing.empty())
        C.Problems.push_back(M.second->Label + ": " + std::to_string(Missing.size()) +
                             " kernels of other " + Id.second +
                             " variants missing for " + M.first + " (first: " +
                             Missing.front() + ")");
    }
    C.Notes.push_back(Id.first + " " + Id.second + ": " +
                      std::to_string(Members.size()) + " variants, " +
                      std::to_string(All.size()) + " keys");
  }
}

void Verifier::checkDatabases() {
  // Database files of a component lie in the artifact of their base arch
  // (split's routing: gfx90a-xnack+ files in <component>_gfx90a), at their
  // installed path. A base arch that has code objects (of any feature
  // variant) but no database file in a directory where other base archs
  // with code objects have some lost them (rocm-systems #7645 dropped
  // xnack-variant Tensile files: the base-arch artifact lacks them). A
  // directory named after a target (hipBLASLt's library/gfx942/,
  // library/gfx90a-xnack+/, AOTriton's amd-gfx942/) is that target's alone:
  // directories are compared with such components read as "<arch>", so each
  // base arch needs its own per-arch directory where the others have theirs.
  ArtifactCheck &C = check("database files for every target with code");
  // Component -> processor -> directories holding its non-archive files.
  std::map<std::string, std::map<std::string, std::set<std::string>>> Dirs;
  std::map<std::string, std::set<std::string>> WithCode;
  for (const auto &O : Archives)
    for (const std::string &G : O->Reader->gfxArches())
      if (std::optional<TargetId> T = parseTargetId(G))
        WithCode[O->Component].insert(databaseArchOf(T->Processor));
  for (const Artifact &A : Artifacts) {
    if (A.Generic || A.Base.empty())
      continue;
    for (const TreeEntry &E : A.Files)
      if (!StringRef(E.RelPath).ends_with(".kpack"))
        Dirs[A.Component][A.Base].insert(perArchPattern(
            sys::path::parent_path(E.RelPath, sys::path::Style::posix)));
  }
  for (const auto &[Component, Procs] : WithCode) {
    std::map<std::string, std::string> DirOwner; // dir -> a processor with it
    for (const std::string &P : Procs)
      for (const std::string &D : Dirs[Component][P])
        DirOwner.emplace(D, P);
    for (const std::string &P : Procs)
      for (const auto &[D, Other] : DirOwner)
        if (!Dirs[Component][P].count(D))
          C.Problems.push_back(
              Component + " " + P + ": no database file in " + D +
              (StringRef(D).contains("<arch>") ? " (a directory of its own)"
                                               : "") +
              ", where " + Other + " has some");
    C.Notes.push_back(Component + ": " + std::to_string(DirOwner.size()) +
                      " database directories, " + std::to_string(Procs.size()) +
                      " base archs with code objects");
  }
}

} // namespace

Expected<ArtifactsReport> verifyArtifacts(StringRef Dir) {
  if (!sys::fs::is_directory(Dir))
    return createStringError(inconvertibleErrorCode(),
                             "'" + Dir + "' is not a directory");
  return Verifier(Dir.str()).run();
}

void printArtifactsReport(const ArtifactsReport &R, raw_ostream &OS,
                          bool Verbose) {
  OS << "artifacts: " << R.Artifacts.size() << "\n";
  if (Verbose)
    for (const std::string &A : R.Artifacts)
      OS << "  " << A << "\n";
  unsigned Failed = 0;
  for (const ArtifactCheck &C : R.Checks) {
    OS << (C.passed() ? "ok:   " : "FAIL: ") << C.Name << "\n";
    Failed += !C.passed();
    for (const std::string &P : C.Problems)
      OS << "  error: " << P << "\n";
    if (Verbose)
      for (const std::string &N : C.Notes)
        OS << "  " << N << "\n";
  }
  OS << R.Checks.size() << " checks, " << Failed << " failed, "
     << R.problemCount() << " problem" << (R.problemCount() == 1 ? "" : "s")
     << "\n";
}

} // namespace kpack
