//===- ConvertHostBinary.cpp - Legacy fat binary -> kpack conversion ------===//

#include "kpack/Convert.h"

#include "kpack/ArchivePaths.h"
#include "kpack/AtomicFile.h"
#include "kpack/LLVMError.h"

#include "llvm/Support/FileSystem.h"
#include "llvm/Support/Path.h"

using namespace llvm;
using namespace kpack;

Expected<ConvertResult> kpack::convertHostBinary(const ConvertOptions &Opts) {
  auto Progress = [&](const std::string &Phase) {
    if (Opts.Progress)
      Opts.Progress(Phase);
  };
  if (Opts.Input.empty() || Opts.Output.empty())
    return makeError("an input and an output file are required");
  if (Opts.KpackOutput.empty() == Opts.KpackDir.empty())
    return makeError("exactly one of --kpack-output and --kpack-dir is "
                     "required");
  // Errors about the input as a whole name it; those about one code object
  // name it through its origin (ArchiveSet).
  auto AboutInput = [&](Error E) {
    return makeError(Opts.Input + ": " + toString(std::move(E)));
  };

  Progress("analyzing");
  auto Fat = FatHostBinary::open(Opts.Input);
  if (!Fat)
    return AboutInput(Fat.takeError());
  const HostBinary &Host = Fat->analysis();
  ConvertResult Result;
  if (std::error_code EC = sys::fs::file_size(Opts.Input, Result.InputBytes))
    return AboutInput(errorCodeToError(EC));
  if (Host.Kind == HostFileKind::Relocatable)
    return AboutInput(makeError("'" + Opts.Input +
                                "' is a relocatable object; convert the "
                                "linked binary"));
  if (Host.hasHIPK()) {
    Result.Outcome = ConvertOutcome::AlreadyConverted;
    return Result;
  }
  if (!Fat->isConvertible()) {
    Result.Outcome = ConvertOutcome::NoDeviceCode;
    return Result;
  }
  Result.Bundles = Host.Bundles.size();
  Result.Wrappers = Host.Wrappers.size();

  const std::string OutputAbs = absolutePath(Opts.Output);
  std::string Name = Opts.KernelName.empty()
                         ? sys::path::filename(OutputAbs).str()
                         : Opts.KernelName;
  if (Name.empty())
    return AboutInput(makeError("the kpack name is empty"));

  // Archive layout and the search paths that find the archives.
  ArchiveLayout Layout;
  std::vector<std::string> SearchPaths = Opts.SearchPaths;
  if (!Opts.KpackDir.empty()) {
    Layout.Dir = absolutePath(Opts.KpackDir);
    Layout.Name = Name;
    if (SearchPaths.empty())
      SearchPaths.push_back(searchPathFromBinary(
          OutputAbs, perTargetArchivePath(Layout.Dir, Name, "@GFXARCH@")));
  } else {
    Layout.ArchivePath = absolutePath(Opts.KpackOutput);
    if (SearchPaths.empty())
      SearchPaths.push_back(searchPathFromBinary(OutputAbs, Layout.ArchivePath));
    if (Layout.ArchivePath == OutputAbs ||
        Layout.ArchivePath == absolutePath(Opts.Input))
      return AboutInput(makeError("the archive would overwrite a host binary"));
  }
  Layout.GroupName = Opts.GroupName.empty() ? Name : Opts.GroupName;
  Layout.Family = Opts.Family;
  Layout.Compression = Opts.Compression;
  Layout.Threads = Opts.Threads;

  Layout.LinkIdentity = true;

  // The archives first (every code object is checked as it is read), as
  // the host binary's metadata carries their link identity; then the host
  // binary, verified before anything is committed. They are committed
  // together at the end: a failure anywhere (or an interrupt) leaves the
  // old outputs, no new archive beside an old binary, and no directory made
  // for them.
  Progress("writing archives");
  ArchiveSet Archives(std::move(Layout));
  auto Objects = Fat->codeObjects();
  if (!Objects)
    return AboutInput(Objects.takeError());
  if (Error E = Archives.addAll(Name, *Objects))
    return E;
  auto Prepared = Archives.prepare();
  if (!Prepared)
    return Prepared.takeError();
  for (const WrittenArchive &W : Prepared->Archives) {
    Result.CodeObjects += W.Stats.Entries;
    Result.Archives.push_back({W.Path, W.Stats.Entries, W.Stats.OriginalBytes,
                               W.Stats.FileBytes, W.Deduplicated});
  }

  auto MetaBytes = encodeMetadata(Name, SearchPaths, Prepared->LinkIds[Name]);
  if (!MetaBytes)
    return AboutInput(MetaBytes.takeError());
  Progress("rewriting the host binary");
  auto NewImage = Fat->rewrite(*MetaBytes);
  if (!NewImage)
    return AboutInput(NewImage.takeError());

  Progress("writing " + Opts.Output);
  std::string OutDir = sys::path::parent_path(OutputAbs).str();
  if (Status S = Prepared->Dirs->create(OutDir))
    return makeError(S.message());
  AtomicFileOptions FileOpts;
  FileOpts.ModeFrom = Opts.Input;
  AtomicFile HostFile;
  Status S = HostFile.open(Opts.Output, FileOpts);
  if (!S)
    S = HostFile.write(NewImage->data(), NewImage->size());
  if (S)
    return makeError("cannot write '" + Opts.Output + "': " + S.message());
  std::vector<AtomicFile *> Files;
  for (std::unique_ptr<AtomicFile> &F : Prepared->Files)
    Files.push_back(F.get());
  Files.push_back(&HostFile); // last: the binary never names a missing archive
  if (Status C = commitTogether(Files))
    return makeError("cannot write '" + Opts.Output + "': " + C.message());
  Prepared->Dirs->keep();
  Result.OutputBytes = NewImage->size();
  return Result;
}
