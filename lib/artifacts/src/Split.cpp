//===- Split.cpp - TheRock artifact split (kpack split) -------------------===//
//
// Phases (docs/split.md):
//   1. list every prefix's tree; database files by the handlers;
//   2. in parallel, every other regular file: an x86-64 executable or shared
//      object (ELF header) is opened; a fat binary is rewritten host-only, a
//      compiler-emitted one gets its metadata replaced in place, both
//      written straight into the staged generic artifact, and their code
//      objects recorded (not read);
//   3. in sorted (prefix, path) order, add the code objects to one
//      ArchiveSet (one archive per target ID), copy database files and the
//      rest, write the archives (bytes read, checked and compressed there,
//      a bounded batch at a time), the manifests, and commit.
//
//===----------------------------------------------------------------------===//

#include "kpack/Split.h"
#include "kpack/Wrapper.h"

#include "kpack/ArchiveReader.h"
#include "kpack/ArtifactTree.h"
#include "kpack/DatabaseHandlers.h"
#include "kpack/LLVMError.h"
#include "kpack/TargetId.h"

#include "llvm/ADT/STLExtras.h"
#include "llvm/ADT/StringSet.h"
#include "llvm/BinaryFormat/ELF.h"
#include "llvm/Support/FileSystem.h"
#include "llvm/Support/MemoryBuffer.h"
#include "llvm/Support/Parallel.h"
#include "llvm/Support/Path.h"
#include "llvm/Support/raw_ostream.h"

#include <cerrno>
#include <cstring>
#include <map>
#include <memory>
#include <optional>
#include <set>
#include <fcntl.h>
#include <sys/stat.h>

using namespace llvm;
using namespace kpack;

bool kpack::gpuTargetSelected(StringRef Arch,
                              ArrayRef<std::string> GpuTargets) {
  if (GpuTargets.empty())
    return true;
  // Upstream's rule: the bare names compared, features dropped on both
  // sides; a generic or strict processor is a name of its own.
  std::string Bare = baseArch(stripTargetTriple(Arch.str()));
  return any_of(GpuTargets,
                [&](const std::string &G) { return baseArch(G) == Bare; });
}

Expected<std::vector<BatchArtifact>>
kpack::listBatchArtifacts(StringRef Parent,
                          const std::function<void(const std::string &)> &Log) {
  std::vector<std::string> Names;
  std::error_code EC;
  for (sys::fs::directory_iterator It(Parent, EC), End; It != End && !EC;
       It.increment(EC)) {
    if (It->type() == sys::fs::file_type::directory_file)
      Names.push_back(sys::path::filename(It->path()).str());
  }
  if (EC)
    return makeError("cannot read '" + Parent + "': " + EC.message());
  if (Names.empty())
    return makeError("no subdirectories found in '" + Parent + "'");
  llvm::sort(Names);
  std::vector<BatchArtifact> Out;
  for (const std::string &Name : Names) {
    SmallString<256> Dir(Parent);
    sys::path::append(Dir, Name);
    SmallString<256> Manifest(Dir);
    sys::path::append(Manifest, ArtifactManifestName);
    if (!sys::fs::exists(Manifest)) {
      if (Log)
        Log("skipping " + Name + ": no " + ArtifactManifestName.str());
      continue;
    }
    auto Parts = splitArtifactName(Name);
    if (!Parts || Parts->first.empty() || Parts->second.empty()) {
      if (Log)
        Log("skipping " + Name + ": not <component>_<target family>");
      continue;
    }
    if (Parts->second == "generic") {
      if (Log)
        Log("skipping " + Name + ": target family is 'generic'");
      continue;
    }
    Out.push_back({Dir.str().str(), Parts->first});
  }
  return Out;
}

namespace {

/// What becomes of one input entry.
enum class Role {
  Copy,            ///< to the generic artifact unchanged
  Database,        ///< to the artifact of its target, unchanged
  Dropped,         ///< a database file of a target --gpu-targets leaves out
  Unclassified,    ///< a regular file: a binary to split, or Copy
  Fat,             ///< rewritten host-only into the generic artifact
  Emitted,         ///< metadata rewritten in place into the generic artifact
  ConsumedArchive, ///< an emitted binary's archive, merged into ours
};

struct InputFile {
  size_t Prefix = 0; ///< index into the sorted prefixes
  TreeEntry Entry;
  std::string Source; ///< path in the input artifact
  Role R = Role::Copy;
  std::string TargetId;                   ///< Database, Dropped
  const DatabaseHandler *Handler = nullptr; ///< Database, Dropped

  // Fat, Emitted: the opened binary stays alive until the archives are
  // written, since its code objects' bytes are read from it then.
  std::unique_ptr<FatHostBinary> FatBinary;
  std::unique_ptr<EmittedHostBinary> EmittedBinary;
  std::vector<CodeObjectRef> Objects; ///< selected by --gpu-targets
  unsigned Filtered = 0;              ///< left out by --gpu-targets
  std::vector<std::string> Archives;  ///< Emitted: the archives it reached
  /// Emitted: the keys of all its code objects in those archives.
  std::set<std::string> EmittedKeys;
  std::string Note;                   ///< verbose: what analysis decided
  std::string Warning;                ///< printed whatever the verbosity
  std::string Error;                  ///< analysis failure (names the file)
};

/// The key of a file in Splitter::RegularFiles: absolute, without "." and
/// ".." components (textually: the walk never follows a symlink, and an
/// emitted binary's archives are found by the same text).
std::string pathKey(StringRef Path) {
  SmallString<256> Abs(Path);
  sys::fs::make_absolute(Abs);
  sys::path::remove_dots(Abs, /*remove_dot_dot=*/true);
  return Abs.str().str();
}

class Splitter {
public:
  explicit Splitter(const SplitOptions &Opts) : Opts(Opts) {}
  Expected<SplitSummary> run();

private:
  const SplitOptions &Opts;
  std::vector<std::string> ManifestPrefixes; ///< file order, existing only
  std::vector<std::string> Prefixes;         ///< sorted
  std::vector<std::vector<std::string>> PrefixDirs;
  std::vector<InputFile> Files; ///< sorted by (prefix, relpath)
  /// The regular files of the prefixes (pathKey -> index into Files): an
  /// emitted binary's archives are adopted only if each is one of them.
  std::map<std::string, size_t> RegularFiles;
  std::string GenericName, GenericDir;
  /// The generic artifact's copier: also makes the directories of the
  /// binaries phase 2 rewrites (from several threads), so that they get
  /// their source directories' modes and times.
  TreeCopier *GenericCopier = nullptr;
  SplitSummary Summary;

  void log(const Twine &Msg) const {
    if (Opts.Log)
      Opts.Log(Msg.str());
  }
  std::string prefixPath(size_t P) const {
    SmallString<256> Path(Opts.ArtifactDir);
    sys::path::append(Path, sys::path::Style::posix, Prefixes[P]);
    return Path.str().str();
  }
  std::string outputPath(StringRef ArtifactDir, size_t P,
                         StringRef RelPath) const {
    return (ArtifactDir + "/" + Prefixes[P] + "/" + RelPath).str();
  }

  Error listInputs();
  void analyse(InputFile &F) const;
  Error analyseFat(InputFile &F, std::unique_ptr<FatHostBinary> Fat) const;
  Error analyseEmitted(InputFile &F) const;
  std::vector<CodeObjectRef> select(std::vector<CodeObjectRef> All,
                                    unsigned &Filtered) const;
  Error writeHostImage(const InputFile &F, ArrayRef<uint8_t> Image) const;
  Error markConsumedArchives();
};

} // namespace

/// Does the file at Path hold HIP device code to split: is it an x86-64
/// executable or shared object (ELF or PE) with device-code sections that
/// have file contents (hostImageHoldsDeviceCode)? Everything else goes to
/// the generic artifact as it is: text, archives and import libraries,
/// AMDGPU code objects, relocatable objects (build inputs ld.kpack handles),
/// host-only binaries, and separate debug files (objcopy --only-keep-debug),
/// whose sections are NOBITS. Only the headers are read.
static Expected<bool> holdsDeviceCode(StringRef Path, uint64_t Size) {
  if (Size < sizeof(ELF::Elf64_Ehdr))
    return false;
  ErrorOr<std::unique_ptr<MemoryBuffer>> Buf =
      MemoryBuffer::getFile(Path, /*IsText=*/false,
                            /*RequiresNullTerminator=*/false);
  if (!Buf)
    return makeError("cannot read '" + Path + "': " +
                     Buf.getError().message());
  Expected<bool> Holds = hostImageHoldsDeviceCode((*Buf)->getBuffer());
  if (!Holds)
    return makeError("'" + Path + "': " + toString(Holds.takeError()));
  return *Holds;
}

Error Splitter::listInputs() {
  Expected<std::vector<std::string>> ManifestOr =
      readArtifactManifest(Opts.ArtifactDir, MissingPrefix::Skip);
  if (!ManifestOr)
    return ManifestOr.takeError();
  std::set<std::string> Seen;
  for (const std::string &P : *ManifestOr)
    if (Seen.insert(P).second)
      ManifestPrefixes.push_back(P);
  Prefixes = ManifestPrefixes;
  llvm::sort(Prefixes);

  std::vector<std::vector<TreeEntry>> Entries(Prefixes.size());
  PrefixDirs.resize(Prefixes.size());
  for (size_t P = 0; P < Prefixes.size(); ++P) {
    Expected<std::vector<TreeEntry>> TreeOr =
        listTree(prefixPath(P), &PrefixDirs[P]);
    if (!TreeOr)
      return TreeOr.takeError();
    Entries[P] = std::move(*TreeOr);
  }
  for (size_t P = 0; P < Prefixes.size(); ++P)
    for (TreeEntry &E : Entries[P]) {
      InputFile F;
      F.Prefix = P;
      F.Source = prefixPath(P) + "/" + E.RelPath;
      F.Entry = std::move(E);
      Files.push_back(std::move(F));
    }

  // Upstream's rules: only regular files are database files (symlinks stay
  // in the generic artifact), a handler's files are never analysed as
  // binaries, and the first handler that owns a file wins.
  for (InputFile &F : Files) {
    if (F.Entry.K != TreeEntry::File)
      continue;
    if (std::optional<DatabaseFile> DB =
            matchDatabaseFile(Opts.DatabaseHandlers, F.Entry.RelPath)) {
      // The base-arch artifact, as upstream's splitter files database
      // files ("gfx90a-xnack+" -> <component>_gfx90a).
      F.Handler = DB->Handler;
      F.TargetId = DB->Artifact;
      F.R = gpuTargetSelected(F.TargetId, Opts.GpuTargets) ? Role::Database
                                                           : Role::Dropped;
      continue;
    }
    F.R = Role::Unclassified;
  }
  for (size_t I = 0; I < Files.size(); ++I)
    if (Files[I].Entry.K == TreeEntry::File)
      RegularFiles[pathKey(Files[I].Source)] = I;
  return Error::success();
}

std::vector<CodeObjectRef> Splitter::select(std::vector<CodeObjectRef> All,
                                            unsigned &Filtered) const {
  std::vector<CodeObjectRef> Kept;
  for (CodeObjectRef &C : All) {
    // An empty bundle entry holds no code for its target: no archive entry
    // (ArchiveSet skips it too), and no artifact made for it.
    if (!C.EntryId.empty() && C.Size == 0)
      continue;
    if (gpuTargetSelected(C.TargetId, Opts.GpuTargets))
      Kept.push_back(std::move(C));
    else
      ++Filtered;
  }
  return Kept;
}

/// The metadata a binary at RelPath below Prefix gets (FORMAT.md §5):
/// kernel_name "<prefix>/<relpath>" and one search path, "../" per directory
/// level below the prefix, then ".kpack/<component>_@GFXARCH@.kpack".
static Expected<std::vector<uint8_t>> splitMetadata(StringRef Prefix,
                                                    StringRef RelPath,
                                                    StringRef Component) {
  std::string Search;
  for (char C : RelPath)
    if (C == '/')
      Search += "../";
  Search += ".kpack/" + Component.str() + "_@GFXARCH@.kpack";
  return encodeMetadata((Prefix + "/" + RelPath).str(), {Search});
}

Error Splitter::writeHostImage(const InputFile &F,
                               ArrayRef<uint8_t> Image) const {
  std::string Out = outputPath(GenericDir, F.Prefix, F.Entry.RelPath);
  if (Error E = GenericCopier->makeDir(
          sys::path::parent_path(F.Source, sys::path::Style::posix),
          sys::path::parent_path(Out, sys::path::Style::posix)))
    return E;
  sys::fs::file_status St;
  if (std::error_code EC = sys::fs::status(F.Source, St, /*Follow=*/false))
    return makeError("cannot stat '" + F.Source + "': " + EC.message());
  int FD;
  if (std::error_code EC = sys::fs::openFileForWrite(
          Out, FD, sys::fs::CD_CreateNew, sys::fs::OF_None,
          St.permissions() | sys::fs::owner_write))
    return makeError("cannot create '" + Out + "': " + EC.message());
  {
    raw_fd_ostream OS(FD, /*shouldClose=*/false);
    OS.write(reinterpret_cast<const char *>(Image.data()), Image.size());
    OS.flush();
    if (OS.has_error()) {
      sys::fs::closeFile(FD);
      return makeError("cannot write '" + Out + "': " + OS.error().message());
    }
  }
  // The rewritten binary keeps its source's mode and times, like every
  // other file of the generic artifact: an overlay of the split artifacts
  // looks like the original tree, and the output does not depend on the
  // time of the run.
  std::error_code EC = sys::fs::setPermissions(FD, St.permissions());
  if (!EC)
    EC = sys::fs::setLastAccessAndModificationTime(
        FD, St.getLastAccessedTime(), St.getLastModificationTime());
  std::error_code CloseEC = sys::fs::closeFile(FD);
  if (EC || CloseEC)
    return makeError("cannot finish '" + Out +
                     "': " + (EC ? EC : CloseEC).message());
  return Error::success();
}

Error Splitter::analyseFat(InputFile &F,
                           std::unique_ptr<FatHostBinary> Fat) const {
  Expected<std::vector<CodeObjectRef>> All = Fat->codeObjects();
  if (!All)
    return All.takeError();
  if (All->empty()) {
    // Wrappers but no device code object: nothing to move (upstream leaves
    // such a binary as it is).
    F.R = Role::Copy;
    F.Note = "no device code object: copied";
    return Error::success();
  }
  size_t Total = All->size();
  F.Objects = select(std::move(*All), F.Filtered);
  Expected<std::vector<uint8_t>> Meta =
      splitMetadata(Prefixes[F.Prefix], F.Entry.RelPath, Opts.Component);
  if (!Meta)
    return Meta.takeError();
  Expected<std::vector<uint8_t>> Image = Fat->rewrite(*Meta);
  if (!Image)
    return Image.takeError();
  if (Error E = writeHostImage(F, *Image))
    return E;
  F.FatBinary = std::move(Fat);
  F.R = Role::Fat;
  F.Note = "fat binary: " + std::to_string(Total) + " code objects, " +
           std::to_string(F.Objects.size()) + " archived";
  return Error::success();
}

Error Splitter::analyseEmitted(InputFile &F) const {
  Expected<EmittedHostBinary> EmittedOr = EmittedHostBinary::open(F.Source);
  if (!EmittedOr)
    return EmittedOr.takeError();
  auto Emitted = std::make_unique<EmittedHostBinary>(std::move(*EmittedOr));
  if (Emitted->archives().empty()) {
    // Host-only already and no archive of its own in the artifact (e.g. a
    // generic artifact split again): nothing to adopt.
    F.R = Role::Copy;
    F.Note = "kpack'd binary without archives here: copied";
    return Error::success();
  }
  // Only archives that are regular files of the artifact's prefixes are
  // adopted: a search path that is absolute, climbs out with "../" or goes
  // through a symlink would merge whatever the build machine has there.
  // Such a binary is copied as it is, its archives untouched.
  for (const std::string &A : Emitted->archives())
    if (!RegularFiles.count(pathKey(A))) {
      F.R = Role::Copy;
      F.Warning = "'" + F.Source + "': a kpack search path reaches '" + A +
                  "', which is not a file of the artifact: the binary is "
                  "copied unchanged and none of its archives is adopted";
      F.Note = "kpack'd binary with archives outside the artifact: copied";
      return Error::success();
    }
  Expected<std::vector<CodeObjectRef>> All = Emitted->codeObjects();
  if (!All)
    return All.takeError();
  size_t Total = All->size();
  for (const CodeObjectRef &C : *All)
    F.EmittedKeys.insert(Emitted->metadata().KernelName + "#" +
                         std::to_string(C.Index));
  F.Objects = select(std::move(*All), F.Filtered);
  Expected<std::vector<uint8_t>> Meta =
      splitMetadata(Prefixes[F.Prefix], F.Entry.RelPath, Opts.Component);
  if (!Meta)
    return Meta.takeError();
  Expected<std::vector<uint8_t>> Image = Emitted->withMetadata(*Meta);
  if (!Image)
    return Image.takeError();
  if (Error E = writeHostImage(F, *Image))
    return E;
  F.Archives = Emitted->archives();
  F.EmittedBinary = std::move(Emitted);
  F.R = Role::Emitted;
  F.Note = "compiler-emitted binary: " + std::to_string(Total) +
           " code objects adopted from " + std::to_string(F.Archives.size()) +
           " archives";
  return Error::success();
}

void Splitter::analyse(InputFile &F) const {
  auto Fail = [&](Error E) {
    std::string Msg = toString(std::move(E));
    // Every message names the input file, whatever the layer below said.
    if (!StringRef(Msg).contains(F.Source))
      Msg = "'" + F.Source + "': " + Msg;
    F.Error = Msg;
  };
  F.R = Role::Copy;
  Expected<bool> Candidate = holdsDeviceCode(F.Source, F.Entry.Size);
  if (!Candidate)
    return Fail(Candidate.takeError());
  if (!*Candidate)
    return;
  Expected<FatHostBinary> FatOr = FatHostBinary::open(F.Source);
  if (!FatOr)
    return Fail(FatOr.takeError());
  const HostBinary &Host = FatOr->analysis();
  if (FatOr->isConvertible()) {
    if (Error E = analyseFat(F, std::make_unique<FatHostBinary>(
                                    std::move(*FatOr))))
      Fail(std::move(E));
    return;
  }
  if (Host.hasHIPK()) {
    if (Error E = analyseEmitted(F))
      Fail(std::move(E));
    return;
  }
  // No device code: copied as it is.
}

Error Splitter::markConsumedArchives() {
  // Each archive an emitted binary reached is merged into the component's
  // archives and left out of the generic artifact. All of its code objects
  // must belong to binaries of this artifact, or they would be lost. Every
  // such archive is a regular file of the artifact (analyseEmitted).
  std::map<std::string, std::set<std::string>> ClaimedKeys;
  for (const InputFile &F : Files) {
    if (F.R != Role::Emitted)
      continue;
    for (const std::string &A : F.Archives)
      ClaimedKeys[pathKey(A)].insert(F.EmittedKeys.begin(),
                                     F.EmittedKeys.end());
  }
  for (const auto &[Archive, Keys] : ClaimedKeys) {
    std::unique_ptr<ArchiveReader> Reader;
    if (Status S = ArchiveReader::open(Archive, Reader))
      return makeError("'" + Archive + "': " + S.message());
    for (const ArchiveReader::Entry &E : Reader->entries())
      if (!Keys.count(E.Key))
        return makeError("'" + Archive + "' holds '" + E.Key + "' for " +
                         E.Arch +
                         ", which no compiler-emitted binary of the artifact "
                         "names; splitting would lose it");
    auto It = RegularFiles.find(Archive);
    if (It != RegularFiles.end() && Files[It->second].R == Role::Copy)
      Files[It->second].R = Role::ConsumedArchive;
  }
  return Error::success();
}

Expected<SplitSummary> Splitter::run() {
  if (Opts.Component.empty())
    return makeError("the artifact prefix (component name) is empty");
  if (Error E = listInputs())
    return E;
  // New files and directories (archives, their .kpack directories,
  // manifests) take the input manifest's modification time, the output
  // artifacts the input artifact's: the output does not depend on the time
  // of the run.
  struct stat ManifestSt, ArtifactSt;
  std::string InputManifest =
      Opts.ArtifactDir + "/" + ArtifactManifestName.str();
  if (::stat(InputManifest.c_str(), &ManifestSt) != 0)
    return makeError("cannot stat '" + InputManifest + "'");
  if (::stat(Opts.ArtifactDir.c_str(), &ArtifactSt) != 0)
    return makeError("cannot stat '" + Opts.ArtifactDir + "'");
  auto SetTime = [](const std::string &Path,
                    const struct timespec &T) -> Error {
    struct timespec Times[2] = {T, T};
    if (::utimensat(AT_FDCWD, Path.c_str(), Times, AT_SYMLINK_NOFOLLOW) != 0)
      return makeError("cannot set the timestamps of '" + Path +
                       "': " + std::strerror(errno));
    return Error::success();
  };
  Expected<StagedOutputs> StagedOr = StagedOutputs::create(Opts.OutputDir);
  if (!StagedOr)
    return StagedOr.takeError();
  StagedOutputs &Staged = *StagedOr;
  GenericName = Opts.Component + "_generic";
  Expected<std::string> GenericOr = Staged.dir(GenericName);
  if (!GenericOr)
    return GenericOr.takeError();
  GenericDir = *GenericOr;
  std::map<std::string, std::unique_ptr<TreeCopier>> Copiers;
  auto CopierFor = [&](const std::string &Dir) -> TreeCopier & {
    std::unique_ptr<TreeCopier> &C = Copiers[Dir];
    if (!C)
      C = std::make_unique<TreeCopier>(CopyMode::Copy);
    return *C;
  };
  GenericCopier = &CopierFor(GenericDir);

  // Phase 2: binaries, in parallel; results stay in their slots.
  std::vector<size_t> Candidates;
  for (size_t I = 0; I < Files.size(); ++I)
    if (Files[I].R == Role::Unclassified)
      Candidates.push_back(I);
  parallelFor(0, Candidates.size(),
              [&](size_t I) { analyse(Files[Candidates[I]]); });
  for (InputFile &F : Files) {
    if (!F.Error.empty())
      return makeError(F.Error); // the first in (prefix, path) order
    if (!F.Note.empty())
      log(Prefixes[F.Prefix] + "/" + F.Entry.RelPath + ": " + F.Note);
    if (!F.Warning.empty())
      Summary.Warnings.push_back(F.Warning);
  }
  if (Error E = markConsumedArchives())
    return E;

  // Upstream's guard: device code exists but --gpu-targets left none of it.
  unsigned Binaries = 0, Kept = 0, Filtered = 0;
  for (const InputFile &F : Files)
    if (F.R == Role::Fat || F.R == Role::Emitted) {
      ++Binaries;
      Kept += F.Objects.size();
      Filtered += F.Filtered;
    }
  if (Binaries && !Kept && Filtered) {
    std::string Targets;
    for (const std::string &T : Opts.GpuTargets)
      Targets += (Targets.empty() ? "" : " ") + T;
    return makeError(Twine(Binaries) +
                     " binaries carry device code, but none for "
                     "--gpu-targets " +
                     Targets);
  }

  // Phase 3: archives, in sorted (prefix, path) order. The archive of a
  // target lives below the first prefix (sorted) that contributes to it.
  std::map<std::string, size_t> FirstPrefix;
  std::map<std::string, std::string> TargetDirs; // target -> staged artifact
  auto TargetDir = [&](const std::string &T) -> Expected<std::string> {
    auto It = TargetDirs.find(T);
    if (It != TargetDirs.end())
      return It->second;
    Expected<std::string> Dir = Staged.dir(Opts.Component + "_" + T);
    if (!Dir)
      return Dir.takeError();
    return TargetDirs[T] = *Dir;
  };
  ArchiveLayout Layout;
  Layout.GroupName = Opts.Component;
  Layout.Compression = Opts.Compression;
  Layout.Threads = Opts.Threads;
  // --compression none is upstream's output: every entry stored as is.
  Layout.DeduplicateIdentical =
      Opts.Compression.Scheme != ArchiveCompression::None;
  Layout.PathForTarget = [&](StringRef T) {
    return TargetDirs.at(T.str()) + "/" + Prefixes[FirstPrefix.at(T.str())] +
           "/.kpack/" + Opts.Component + "_" + T.str() + ".kpack";
  };
  ArchiveSet Archives(std::move(Layout));
  for (const InputFile &F : Files) {
    if (F.R != Role::Fat && F.R != Role::Emitted)
      continue;
    const std::string &Prefix = Prefixes[F.Prefix];
    std::string KernelName = Prefix + "/" + F.Entry.RelPath;
    for (const CodeObjectRef &C : F.Objects) {
      FirstPrefix.emplace(C.TargetId, F.Prefix);
      if (Expected<std::string> Dir = TargetDir(C.TargetId); !Dir)
        return Dir.takeError();
      std::string EntryId =
          C.EntryId.empty() ? "hipv4-amdgcn-amd-amdhsa--" + C.TargetId
                            : C.EntryId;
      if (Error E = Archives.add(KernelName + "#" + std::to_string(C.Index),
                                 C, {{"target", EntryId},
                                     {"source_prefix", Prefix}}))
        return E;
      ++Summary.CodeObjects;
    }
    Summary.FilteredCodeObjects += F.Filtered;
    ++(F.R == Role::Fat ? Summary.FatBinaries : Summary.EmittedBinaries);
  }

  // Database files, to the artifact of their target; the rest, generic.
  std::map<std::string, std::set<size_t>> HeldPrefixes; // artifact -> prefixes
  for (const auto &[T, P] : FirstPrefix)
    HeldPrefixes[TargetDirs.at(T)].insert(P);
  for (const InputFile &F : Files) {
    switch (F.R) {
    case Role::Database: {
      Expected<std::string> Dir = TargetDir(F.TargetId);
      if (!Dir)
        return Dir.takeError();
      log(Prefixes[F.Prefix] + "/" + F.Entry.RelPath + ": " +
          F.Handler->name() + " database file for " + F.TargetId);
      if (Error E = CopierFor(*Dir).copy(
              F.Source, F.Entry, outputPath(*Dir, F.Prefix, F.Entry.RelPath)))
        return E;
      HeldPrefixes[*Dir].insert(F.Prefix);
      ++Summary.DatabaseFiles;
      break;
    }
    case Role::Dropped:
      log(Prefixes[F.Prefix] + "/" + F.Entry.RelPath + ": " +
          F.Handler->name() + " database file for " + F.TargetId +
          ", not in --gpu-targets: left out");
      ++Summary.FilteredDatabaseFiles;
      break;
    case Role::Copy:
    case Role::Unclassified:
      if (Error E = CopierFor(GenericDir).copy(
              F.Source, F.Entry,
              outputPath(GenericDir, F.Prefix, F.Entry.RelPath)))
        return E;
      break;
    case Role::ConsumedArchive:
      log(Prefixes[F.Prefix] + "/" + F.Entry.RelPath +
          ": compiler-emitted archive, merged");
      break;
    case Role::Fat:
    case Role::Emitted:
      break; // written in phase 2
    }
  }
  // Every prefix of the input exists in the generic artifact, and so do
  // the directories that are empty in the input; directories that held
  // only database files or merged archives do not.
  for (size_t P = 0; P < Prefixes.size(); ++P) {
    std::string Root = GenericDir + "/" + Prefixes[P];
    if (Error E = CopierFor(GenericDir).makeDir(prefixPath(P), Root))
      return E;
    StringSet<> NonEmpty;
    for (const InputFile &F : Files)
      if (F.Prefix == P)
        for (StringRef D = sys::path::parent_path(F.Entry.RelPath,
                                                  sys::path::Style::posix);
             !D.empty(); D = sys::path::parent_path(D, sys::path::Style::posix))
          NonEmpty.insert(D);
    for (const std::string &D : PrefixDirs[P])
      for (StringRef Up = sys::path::parent_path(D, sys::path::Style::posix);
           !Up.empty(); Up = sys::path::parent_path(Up, sys::path::Style::posix))
        NonEmpty.insert(Up);
    for (const std::string &D : PrefixDirs[P]) {
      if (NonEmpty.contains(D))
        continue;
      if (Error E = CopierFor(GenericDir).makeDir(
              prefixPath(P) + "/" + D, Root + "/" + D))
        return E;
    }
  }
  // The prefix directory of each archive is the input's (its mode and
  // times); the .kpack directory in it is new.
  for (const auto &[T, P] : FirstPrefix)
    if (Error E = CopierFor(TargetDirs.at(T))
                      .makeDir(prefixPath(P),
                               TargetDirs.at(T) + "/" + Prefixes[P]))
      return E;

  Expected<std::vector<WrittenArchive>> Written = Archives.write();
  if (!Written)
    return Written.takeError();
  Summary.Archives = std::move(*Written);
  for (const WrittenArchive &A : Summary.Archives) {
    if (Error E = SetTime(A.Path, ManifestSt.st_mtim))
      return E;
    if (Error E = SetTime(sys::path::parent_path(A.Path).str(),
                          ManifestSt.st_mtim))
      return E;
  }
  // Directory modes and times last: nothing is made in them afterwards.
  for (auto &[Dir, Copier] : Copiers)
    if (Error E = Copier->finish())
      return E;
  for (const WrittenArchive &A : Summary.Archives)
    log("archive " + A.TargetId + ": " + Twine(A.Stats.Entries) +
        " code objects, " + Twine(A.Stats.OriginalBytes) + " -> " +
        Twine(A.Stats.FileBytes) + " bytes");

  // Manifests: the generic artifact lists the input's prefixes in manifest
  // order (as upstream); a target's artifact the prefixes it holds, sorted.
  if (Error E = writeArtifactManifest(GenericDir, ManifestPrefixes))
    return E;
  std::vector<std::string> OutputDirs = {GenericDir};
  Summary.Prefixes = ManifestPrefixes;
  Summary.Artifacts.push_back(GenericName);
  for (const auto &[T, Dir] : TargetDirs) {
    std::vector<std::string> Held;
    for (size_t P : HeldPrefixes[Dir])
      Held.push_back(Prefixes[P]);
    if (Error E = writeArtifactManifest(Dir, Held))
      return E;
    OutputDirs.push_back(Dir);
    Summary.Artifacts.push_back(Opts.Component + "_" + T);
  }
  for (const std::string &Dir : OutputDirs) {
    if (Error E = SetTime(Dir + "/" + ArtifactManifestName.str(),
                          ManifestSt.st_mtim))
      return E;
    if (Error E = SetTime(Dir, ArtifactSt.st_mtim))
      return E;
  }
  llvm::sort(Summary.Artifacts);
  if (Error E = Staged.commit())
    return E;
  return std::move(Summary);
}

Expected<SplitSummary> kpack::splitArtifact(const SplitOptions &Opts) {
  return Splitter(Opts).run();
}
