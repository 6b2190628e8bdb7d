//===- Recombine.cpp - TheRock's reduce step ------------------------------===//
//
// Collects the artifacts of every shard, checks them against the
// configuration's validation rules, then builds every output in a staging
// directory and moves them into place together. Nothing is written to the
// output directory before every check has passed and every copy succeeded.
//
//===----------------------------------------------------------------------===//

#include "kpack/Recombine.h"

#include "kpack/LLVMError.h"

#include "llvm/ADT/STLExtras.h"
#include "llvm/ADT/StringExtras.h"
#include "llvm/Support/FileSystem.h"
#include "llvm/Support/JSON.h"
#include "llvm/Support/MemoryBuffer.h"
#include "llvm/Support/Path.h"

#include <cstring>
#include <fcntl.h>
#include <map>
#include <set>
#include <sys/stat.h>
#include <unistd.h>

using namespace llvm;
using namespace kpack;

//===----------------------------------------------------------------------===//
// Configuration
//===----------------------------------------------------------------------===//

Expected<RecombineConfig> kpack::parseRecombineConfig(StringRef Text,
                                                      StringRef Path) {
  auto Fail = [&](const Twine &Msg) {
    return makeError("configuration '" + Path + "': " + Msg);
  };
  if (Text.trim().empty())
    return Fail("the file is empty");
  Expected<json::Value> Root = json::parse(Text);
  if (!Root)
    return Fail("invalid JSON: " + toString(Root.takeError()));
  const json::Object *Top = Root->getAsObject();
  if (!Top)
    return Fail("the top level is not an object");

  RecombineConfig C;
  const json::Value *Primary = Top->get("primary_shard");
  if (!Primary)
    return Fail("missing required field 'primary_shard'");
  std::optional<StringRef> PrimaryName = Primary->getAsString();
  if (!PrimaryName)
    return Fail("'primary_shard' must be a string");
  if (PrimaryName->empty())
    return Fail("'primary_shard' is empty");
  C.PrimaryShard = PrimaryName->str();

  const json::Value *GroupsValue = Top->get("architecture_groups");
  if (!GroupsValue)
    return Fail("missing required field 'architecture_groups'");
  const json::Object *Groups = GroupsValue->getAsObject();
  if (!Groups)
    return Fail("'architecture_groups' must be an object");
  if (Groups->empty())
    return Fail("'architecture_groups' defines no group");
  for (const auto &[Key, Value] : *Groups) {
    StringRef Name = Key;
    // The group name becomes an artifact name suffix.
    if (Name.empty() || Name.contains('/') || Name.contains('_') ||
        Name == "generic")
      return Fail("architecture group name '" + Name +
                  "' cannot name an artifact (<component>_<group>)");
    const json::Object *G = Value.getAsObject();
    if (!G)
      return Fail("architecture group '" + Name + "' must be an object");
    ArchitectureGroup Group;
    Group.Name = Name.str();
    Group.DisplayName = Group.Name;
    if (const json::Value *Display = G->get("display_name")) {
      std::optional<StringRef> S = Display->getAsString();
      if (!S)
        return Fail("architecture group '" + Name +
                    "': 'display_name' must be a string");
      Group.DisplayName = S->str();
    }
    const json::Value *ArchesValue = G->get("architectures");
    if (!ArchesValue)
      return Fail("architecture group '" + Name +
                  "' is missing 'architectures'");
    const json::Array *Arches = ArchesValue->getAsArray();
    if (!Arches)
      return Fail("architecture group '" + Name +
                  "': 'architectures' must be a list");
    if (Arches->empty())
      return Fail("architecture group '" + Name +
                  "' must have at least one architecture");
    for (const json::Value &A : *Arches) {
      std::optional<StringRef> S = A.getAsString();
      if (!S || !S->starts_with("gfx"))
        return Fail("architecture group '" + Name +
                    "': invalid architecture " +
                    (S ? "'" + *S + "'" : std::string("(not a string)")) +
                    ": must start with 'gfx'");
      Group.Architectures.push_back(S->str());
    }
    C.Groups.push_back(std::move(Group));
  }
  llvm::sort(C.Groups, [](const ArchitectureGroup &A,
                          const ArchitectureGroup &B) { return A.Name < B.Name; });

  if (const json::Value *V = Top->get("validation")) {
    const json::Object *Rules = V->getAsObject();
    if (!Rules)
      return Fail("'validation' must be an object");
    for (auto [Key, Field] :
         {std::pair<StringRef, bool *>{"error_on_duplicate_device_code",
                                       &C.ErrorOnDuplicateDeviceCode},
          {"verify_generic_artifacts_match", &C.VerifyGenericArtifactsMatch},
          {"error_on_missing_architecture", &C.ErrorOnMissingArchitecture}}) {
      const json::Value *Rule = Rules->get(Key);
      if (!Rule)
        continue;
      std::optional<bool> B = Rule->getAsBoolean();
      if (!B)
        return Fail("'validation." + Key + "' must be true or false");
      *Field = *B;
    }
  }
  return C;
}

Expected<RecombineConfig> kpack::readRecombineConfig(StringRef Path) {
  ErrorOr<std::unique_ptr<MemoryBuffer>> Buf = MemoryBuffer::getFile(Path);
  if (!Buf)
    return makeError("cannot read configuration '" + Path +
                     "': " + Buf.getError().message());
  return parseRecombineConfig((*Buf)->getBuffer(), Path);
}

//===----------------------------------------------------------------------===//
// Collection
//===----------------------------------------------------------------------===//

namespace {

struct Artifact {
  std::string Shard, Name, Path, Component, Target;
  std::vector<std::string> Prefixes;

  std::string describe() const {
    return "shard '" + Shard + "' (" + Name + ")";
  }
};

struct Collection {
  /// The primary shard's generic artifact of each component.
  std::map<std::string, Artifact> Generic;
  /// Generic artifacts of the other shards (compared with the primary's
  /// under verify_generic_artifacts_match).
  std::map<std::string, std::vector<Artifact>> OtherGeneric;
  /// component -> target -> artifacts, in shard order.
  std::map<std::string, std::map<std::string, std::vector<Artifact>>> Targets;
};

/// The subdirectories of Dir (symlinks followed), sorted.
Expected<std::vector<std::string>> subdirectories(StringRef Dir) {
  std::vector<std::string> Names;
  std::error_code EC;
  for (sys::fs::directory_iterator It(Dir, EC), End; It != End && !EC;
       It.increment(EC)) {
    StringRef Name = sys::path::filename(It->path());
    struct stat St;
    if (::stat(It->path().c_str(), &St) == 0 && S_ISDIR(St.st_mode))
      Names.push_back(Name.str());
  }
  if (EC)
    return makeError("cannot read directory '" + Dir + "': " + EC.message());
  llvm::sort(Names);
  return Names;
}

bool fileExists(const std::string &Path) {
  struct stat St;
  return ::stat(Path.c_str(), &St) == 0;
}

Expected<Collection> collect(const RecombineConfig &Config,
                             const RecombineOptions &Opts) {
  raw_ostream *Log = Opts.Log;
  Expected<std::vector<std::string>> Shards = subdirectories(Opts.ShardsDir);
  if (!Shards)
    return Shards.takeError();
  if (Shards->empty())
    return makeError("no shard directories in '" + Opts.ShardsDir + "'");
  if (!is_contained(*Shards, Config.PrimaryShard))
    return makeError("primary shard '" + Config.PrimaryShard +
                     "' not found in '" + Opts.ShardsDir +
                     "' (shards: " + join(*Shards, ", ") + ")");

  Collection C;
  for (const std::string &Shard : *Shards) {
    std::string ShardDir = Opts.ShardsDir + "/" + Shard;
    if (Log)
      *Log << "shard " << Shard
           << (Shard == Config.PrimaryShard ? " (primary)" : "") << "\n";
    Expected<std::vector<std::string>> Names = subdirectories(ShardDir);
    if (!Names)
      return Names.takeError();
    for (const std::string &Name : *Names) {
      Artifact A;
      A.Shard = Shard;
      A.Name = Name;
      A.Path = ShardDir + "/" + Name;
      if (!fileExists(A.Path + "/" + ArtifactManifestName.str())) {
        if (Log)
          *Log << "  skipping " << Name << ": no " << ArtifactManifestName
               << "\n";
        continue;
      }
      std::optional<std::pair<std::string, std::string>> Split =
          splitArtifactName(Name);
      if (!Split || (Split->second != "generic" &&
                     !StringRef(Split->second).starts_with("gfx"))) {
        if (Log)
          *Log << "  skipping " << Name
               << ": not <component>_generic or <component>_gfx...\n";
        continue;
      }
      A.Component = Split->first;
      A.Target = Split->second;
      // Listed prefixes without a directory are left out, as upstream's
      // recombiner skips them (TheRock lists prefixes a component has no
      // file in).
      Expected<std::vector<std::string>> Prefixes =
          readArtifactManifest(A.Path, MissingPrefix::Skip);
      if (!Prefixes)
        return makeError("shard '" + Shard + "': " +
                         toString(Prefixes.takeError()));
      A.Prefixes = std::move(*Prefixes);
      if (A.Target == "generic") {
        if (Shard == Config.PrimaryShard)
          C.Generic.emplace(A.Component, std::move(A));
        else
          C.OtherGeneric[A.Component].push_back(std::move(A));
      } else {
        std::string Component = A.Component, Target = A.Target;
        C.Targets[Component][Target].push_back(std::move(A));
      }
    }
  }
  if (C.Generic.empty())
    return makeError("no generic artifact (<component>_generic) in primary "
                     "shard '" +
                     Config.PrimaryShard + "'");
  return C;
}

//===----------------------------------------------------------------------===//
// Comparison of generic artifacts
//===----------------------------------------------------------------------===//

bool underKpackDir(StringRef RelPath) {
  SmallVector<StringRef, 8> Parts;
  RelPath.split(Parts, '/');
  return is_contained(Parts, ".kpack");
}

/// Prefixes in an order that visits a prefix before the prefixes nested in
/// it, without those nested ones (they are copied with their parent).
std::vector<std::string> outermostPrefixes(std::vector<std::string> Prefixes) {
  llvm::sort(Prefixes);
  std::vector<std::string> Out;
  for (std::string &P : Prefixes) {
    bool Nested = any_of(Out, [&](const std::string &Q) {
      return P == Q || StringRef(P).starts_with(Q + "/");
    });
    if (!Nested)
      Out.push_back(std::move(P));
  }
  return Out;
}

Expected<bool> sameBytes(const std::string &A, const std::string &B) {
  int FA = ::open(A.c_str(), O_RDONLY | O_CLOEXEC);
  if (FA < 0)
    return makeError("cannot open '" + A + "'");
  int FB = ::open(B.c_str(), O_RDONLY | O_CLOEXEC);
  if (FB < 0) {
    ::close(FA);
    return makeError("cannot open '" + B + "'");
  }
  std::vector<char> BufA(1 << 20), BufB(1 << 20);
  bool Same = true;
  for (;;) {
    ssize_t NA = ::read(FA, BufA.data(), BufA.size());
    ssize_t NB = NA > 0 ? ::read(FB, BufB.data(), NA) : 0;
    if (NA < 0 || NB < 0) {
      ::close(FA);
      ::close(FB);
      return makeError("cannot read '" + (NA < 0 ? A : B) + "'");
    }
    if (NA != NB || std::memcmp(BufA.data(), BufB.data(), NA) != 0) {
      Same = false;
      break;
    }
    if (NA == 0)
      break;
  }
  ::close(FA);
  ::close(FB);
  return Same;
}

std::string readLink(const std::string &Path) {
  std::vector<char> Buf(4096);
  ssize_t N = ::readlink(Path.c_str(), Buf.data(), Buf.size());
  return N < 0 ? std::string() : std::string(Buf.data(), N);
}

/// Every entry of artifact A outside .kpack directories, keyed by its path
/// relative to the artifact.
Expected<std::map<std::string, TreeEntry>> genericEntries(const Artifact &A) {
  std::map<std::string, TreeEntry> Out;
  for (const std::string &Prefix : outermostPrefixes(A.Prefixes)) {
    Expected<std::vector<TreeEntry>> Entries = listTree(A.Path + "/" + Prefix);
    if (!Entries)
      return Entries.takeError();
    for (TreeEntry &E : *Entries)
      if (!underKpackDir(E.RelPath)) {
        std::string Rel = Prefix + "/" + E.RelPath;
        Out.emplace(std::move(Rel), std::move(E));
      }
  }
  return Out;
}

/// verify_generic_artifacts_match: Other holds the same prefixes and the
/// same entries with the same contents as the primary's Primary.
Error compareGeneric(const Artifact &Primary, const Artifact &Other) {
  auto Differs = [&](const Twine &What) {
    return makeError("verify_generic_artifacts_match: " + Other.describe() +
                     " differs from primary " + Primary.describe() + ": " +
                     What);
  };
  std::vector<std::string> PA = Primary.Prefixes, PB = Other.Prefixes;
  llvm::sort(PA);
  llvm::sort(PB);
  if (PA != PB)
    return Differs("prefixes '" + join(PB, ", ") + "' against '" +
                   join(PA, ", ") + "'");
  Expected<std::map<std::string, TreeEntry>> EA = genericEntries(Primary);
  if (!EA)
    return EA.takeError();
  Expected<std::map<std::string, TreeEntry>> EB = genericEntries(Other);
  if (!EB)
    return EB.takeError();
  for (const auto &[Rel, B] : *EB)
    if (!EA->count(Rel))
      return Differs("'" + Other.Path + "/" + Rel +
                     "' is not in the primary shard");
  for (const auto &[Rel, A] : *EA) {
    auto It = EB->find(Rel);
    std::string PathA = Primary.Path + "/" + Rel;
    std::string PathB = Other.Path + "/" + Rel;
    if (It == EB->end())
      return Differs("'" + PathA + "' is missing from it");
    const TreeEntry &B = It->second;
    if (A.K != B.K)
      return Differs("'" + PathB + "' is not the same kind of file as '" +
                     PathA + "'");
    if (A.K == TreeEntry::Symlink) {
      if (readLink(PathA) != readLink(PathB))
        return Differs("symlink '" + PathB + "' points elsewhere than '" +
                       PathA + "'");
      continue;
    }
    if (A.K != TreeEntry::File)
      continue;
    bool Same = false;
    if (A.Size == B.Size) {
      Expected<bool> SameOr = sameBytes(PathA, PathB);
      if (!SameOr)
        return SameOr.takeError();
      Same = *SameOr;
    }
    if (!Same)
      return Differs("'" + PathB + "' has other contents than '" + PathA +
                     "'");
  }
  return Error::success();
}

//===----------------------------------------------------------------------===//
// Outputs
//===----------------------------------------------------------------------===//

/// Whether target (an artifact's target ID) belongs to a group that lists
/// Arch: the same target ID, or Arch is its bare processor.
bool groupTakes(StringRef Arch, StringRef Target) {
  return Target == Arch ||
         (!Arch.contains(':') && Target.split(':').first == Arch);
}

/// The artifact directory Dir and its manifest get the latest modification
/// time among the corresponding source directories and manifests, so that
/// the same shards give the same outputs, timestamps included.
Error stampArtifact(const std::string &Dir,
                    ArrayRef<const Artifact *> Sources) {
  for (bool Manifest : {true, false}) {
    struct timespec Latest = {0, 0};
    for (const Artifact *A : Sources) {
      std::string From =
          Manifest ? A->Path + "/" + ArtifactManifestName.str() : A->Path;
      struct stat St;
      if (::stat(From.c_str(), &St) != 0)
        return makeError("cannot stat '" + From + "'");
      if (std::make_pair(St.st_mtim.tv_sec, St.st_mtim.tv_nsec) >
          std::make_pair(Latest.tv_sec, Latest.tv_nsec))
        Latest = St.st_mtim;
    }
    std::string To = Manifest ? Dir + "/" + ArtifactManifestName.str() : Dir;
    struct timespec Times[2] = {Latest, Latest};
    if (::utimensat(AT_FDCWD, To.c_str(), Times, 0) != 0)
      return makeError("cannot set the timestamps of '" + To + "'");
  }
  return Error::success();
}

Error copyGeneric(const Artifact &A, const std::string &Out, CopyMode Mode) {
  TreeCopier Copier(Mode);
  for (const std::string &Prefix : outermostPrefixes(A.Prefixes)) {
    std::string From = A.Path + "/" + Prefix, To = Out + "/" + Prefix;
    if (Error E = Copier.makeDir(From, To))
      return E;
    std::vector<std::string> Dirs;
    Expected<std::vector<TreeEntry>> Entries = listTree(From, &Dirs);
    if (!Entries)
      return Entries.takeError();
    for (const std::string &D : Dirs)
      if (!underKpackDir(D))
        if (Error E = Copier.makeDir(From + "/" + D, To + "/" + D))
          return E;
    for (const TreeEntry &E : *Entries)
      if (!underKpackDir(E.RelPath))
        if (Error Err = Copier.copy(From + "/" + E.RelPath, E,
                                    To + "/" + E.RelPath))
          return Err;
  }
  if (Error E = Copier.finish())
    return E;
  if (Error E = writeArtifactManifest(Out, A.Prefixes))
    return E;
  return stampArtifact(Out, {&A});
}

/// One entry of a group output and where it comes from.
struct GroupEntry {
  const Artifact *From;
  std::string Prefix;
  TreeEntry Entry;
};

} // namespace

Expected<std::vector<std::string>>
kpack::recombineArtifacts(const RecombineConfig &Config,
                          const RecombineOptions &Opts) {
  raw_ostream *Log = Opts.Log;
  Expected<Collection> CollectedOr = collect(Config, Opts);
  if (!CollectedOr)
    return CollectedOr.takeError();
  Collection &C = *CollectedOr;

  std::set<std::string> Components;
  for (const auto &[Name, A] : C.Generic)
    Components.insert(Name);
  for (const auto &[Name, T] : C.Targets)
    Components.insert(Name);
  if (Opts.Component) {
    if (!Components.count(*Opts.Component))
      return makeError("component '" + *Opts.Component +
                       "' not found in the shards (components: " +
                       join(Components, ", ") + ")");
    Components = {*Opts.Component};
  }

  // Plan (and validate) everything before writing anything.
  struct GroupOutput {
    std::string Name;
    std::vector<GroupEntry> Entries;
    std::vector<std::pair<const Artifact *, std::string>> Dirs;
    std::vector<std::string> Prefixes;
    std::vector<const Artifact *> Sources;
  };
  struct ComponentPlan {
    const Artifact *Generic;
    std::vector<GroupOutput> Groups;
  };
  std::vector<ComponentPlan> Plans;
  for (const std::string &Component : Components) {
    auto GenericIt = C.Generic.find(Component);
    auto TargetsIt = C.Targets.find(Component);
    if (GenericIt == C.Generic.end()) {
      const Artifact &Some = TargetsIt->second.begin()->second.front();
      return makeError("component '" + Component +
                       "' has target artifacts (" + Some.describe() +
                       ") but no generic artifact in primary shard '" +
                       Config.PrimaryShard + "'");
    }
    ComponentPlan Plan{&GenericIt->second, {}};
    if (Log)
      *Log << Component << "_generic: from " << Plan.Generic->describe()
           << "\n";

    if (Config.VerifyGenericArtifactsMatch)
      for (const Artifact &Other : C.OtherGeneric[Component])
        if (Error E = compareGeneric(*Plan.Generic, Other))
          return E;

    if (TargetsIt == C.Targets.end()) {
      if (Log)
        *Log << "  no target artifacts: generic only\n";
      Plans.push_back(std::move(Plan));
      continue;
    }
    const std::map<std::string, std::vector<Artifact>> &Targets =
        TargetsIt->second;

    for (const ArchitectureGroup &Group : Config.Groups) {
      GroupOutput Out;
      Out.Name = Component + "_" + Group.Name;
      std::vector<const Artifact *> Sources;
      for (const std::string &Arch : Group.Architectures) {
        bool Found = false;
        for (const auto &[Target, Artifacts] : Targets)
          if (groupTakes(Arch, Target))
            Found = true;
        if (!Found) {
          if (Config.ErrorOnMissingArchitecture)
            return makeError("error_on_missing_architecture: component '" +
                             Component + "', group '" + Group.Name +
                             "': no shard has " + Component + "_" + Arch);
          if (Log)
            *Log << "  " << Out.Name << ": no shard has " << Component << "_"
                 << Arch << "\n";
        }
      }
      for (const auto &[Target, Artifacts] : Targets) {
        if (!any_of(Group.Architectures, [&, &Target = Target](const std::string &A) {
              return groupTakes(A, Target);
            }))
          continue;
        if (Artifacts.size() > 1) {
          if (Config.ErrorOnDuplicateDeviceCode)
            return makeError("error_on_duplicate_device_code: " + Component +
                             "_" + Target + " is in " +
                             Artifacts[0].describe() + " and " +
                             Artifacts[1].describe());
          if (Log)
            for (size_t I = 1; I < Artifacts.size(); ++I)
              *Log << "  " << Component << "_" << Target << ": using "
                   << Artifacts[0].describe() << ", ignoring "
                   << Artifacts[I].describe() << "\n";
        }
        Sources.push_back(&Artifacts[0]);
      }
      if (Sources.empty()) {
        if (Log)
          *Log << "  " << Out.Name << ": no target of the group: not written\n";
        continue;
      }

      std::map<std::string, const Artifact *> Taken;
      std::set<std::string> Prefixes;
      for (const Artifact *A : Sources) {
        if (Log)
          *Log << Out.Name << ": " << A->Target << " from " << A->describe()
               << "\n";
        for (const std::string &Prefix : outermostPrefixes(A->Prefixes)) {
          Prefixes.insert(Prefix);
          std::string From = A->Path + "/" + Prefix;
          std::vector<std::string> Dirs;
          Expected<std::vector<TreeEntry>> Entries = listTree(From, &Dirs);
          if (!Entries)
            return Entries.takeError();
          Out.Dirs.emplace_back(A, Prefix);
          for (const std::string &D : Dirs)
            Out.Dirs.emplace_back(A, Prefix + "/" + D);
          for (TreeEntry &E : *Entries) {
            std::string Rel = Prefix + "/" + E.RelPath;
            auto [It, New] = Taken.emplace(Rel, A);
            if (!New) {
              if (Config.ErrorOnDuplicateDeviceCode)
                return makeError("error_on_duplicate_device_code: '" + Rel +
                                 "' of " + Out.Name + " is in " +
                                 It->second->describe() + " and " +
                                 A->describe());
              if (Log)
                *Log << "  " << Rel << ": using " << It->second->describe()
                     << ", ignoring " << A->describe() << "\n";
              continue;
            }
            Out.Entries.push_back({A, Prefix, std::move(E)});
          }
        }
      }
      Out.Prefixes.assign(Prefixes.begin(), Prefixes.end());
      Out.Sources = std::move(Sources);
      Plan.Groups.push_back(std::move(Out));
    }
    Plans.push_back(std::move(Plan));
  }

  Expected<StagedOutputs> StagedOr = StagedOutputs::create(Opts.OutputDir);
  if (!StagedOr)
    return StagedOr.takeError();
  StagedOutputs &Staged = *StagedOr;
  std::vector<std::string> Written;
  for (const ComponentPlan &Plan : Plans) {
    std::string Name = Plan.Generic->Component + "_generic";
    Expected<std::string> Dir = Staged.dir(Name);
    if (!Dir)
      return Dir.takeError();
    if (Error E = copyGeneric(*Plan.Generic, *Dir, Opts.Mode))
      return E;
    Written.push_back(Name);

    for (const GroupOutput &G : Plan.Groups) {
      Expected<std::string> GDir = Staged.dir(G.Name);
      if (!GDir)
        return GDir.takeError();
      TreeCopier Copier(Opts.Mode);
      for (const auto &[A, Rel] : G.Dirs)
        if (Error E = Copier.makeDir(A->Path + "/" + Rel, *GDir + "/" + Rel))
          return E;
      for (const GroupEntry &E : G.Entries) {
        std::string Rel = E.Prefix + "/" + E.Entry.RelPath;
        if (Error Err = Copier.copy(E.From->Path + "/" + Rel, E.Entry,
                                    *GDir + "/" + Rel))
          return Err;
      }
      if (Error E = Copier.finish())
        return E;
      if (Error E = writeArtifactManifest(*GDir, G.Prefixes))
        return E;
      if (Error E = stampArtifact(*GDir, G.Sources))
        return E;
      Written.push_back(G.Name);
    }
  }
  if (Error E = Staged.commit())
    return E;
  llvm::sort(Written);
  return Written;
}
