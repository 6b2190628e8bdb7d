//===- Convert.cpp - Legacy fat binary -> kpack conversion ----------------===//

#include "kpack/Convert.h"

#include "kpack/ArchivePaths.h"
#include "kpack/AtomicFile.h"
#include "kpack/CodeObjectCheck.h"
#include "kpack/HostBinary.h"
#include "kpack/LLVMError.h"
#include "kpack/Metadata.h"
#include "kpack/Quote.h"

#include "llvm/ADT/SmallString.h"
#include "llvm/ADT/StringExtras.h"
#include "llvm/Support/FileSystem.h"
#include "llvm/Support/MathExtras.h"
#include "llvm/Support/MemoryBuffer.h"
#include "llvm/Support/Path.h"
#include "llvm/Support/Process.h"

#include <sys/mman.h>

#include <map>
#include <memory>
#include <set>

using namespace llvm;
using namespace kpack;

namespace {

Error writeOrError(ArchiveWriter &W, const std::string &Path,
                   ConvertedArchive &Info) {
  ArchiveWriteStats Stats;
  if (Status S = W.write(Path, &Stats))
    return makeError("cannot write archive '" + Path + "': " + S.message());
  Info.Path = Path;
  Info.Entries = Stats.Entries;
  Info.OriginalBytes = Stats.OriginalBytes;
  Info.FileBytes = Stats.FileBytes;
  return Error::success();
}

/// Drops the whole pages of [Offset, Offset + Size) of a read-only mapped
/// Image from this process (they stay in the page cache).
void releasePages(MemoryBufferRef Image, uint64_t Offset, uint64_t Size) {
  const uint64_t Page = sys::Process::getPageSizeEstimate();
  uintptr_t Begin =
      reinterpret_cast<uintptr_t>(Image.getBufferStart()) + Offset;
  uintptr_t End = Begin + Size;
  Begin = alignTo(Begin, Page);
  End = alignDown(End, Page);
  if (Begin < End)
    ::madvise(reinterpret_cast<void *>(Begin), End - Begin, MADV_DONTNEED);
}

} // namespace

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

  auto Buf = MemoryBuffer::getFile(Opts.Input, /*IsText=*/false,
                                   /*RequiresNullTerminator=*/false);
  if (!Buf)
    return makeError(Buf.getError().message());
  MemoryBufferRef Image = (*Buf)->getMemBufferRef();

  ConvertResult Result;
  Result.InputBytes = Image.getBufferSize();
  Progress("analyzing");
  // Pages of a mapped input are dropped once read, so that resident memory
  // does not grow with the size of .hip_fatbin.
  AnalyzeOptions AO;
  if ((*Buf)->getBufferKind() == MemoryBuffer::MemoryBuffer_MMap)
    AO.BundleScanned = [&](uint64_t Offset, uint64_t Size) {
      releasePages(Image, Offset, Size);
    };
  auto Host = analyzeHostBinary(Image, AO);
  if (!Host)
    return Host.takeError();
  if (Host->Kind == HostFileKind::Relocatable)
    return makeError("'" + Opts.Input +
                     "' is a relocatable object; convert the linked binary");
  if (Host->hasHIPK()) {
    Result.Outcome = ConvertOutcome::AlreadyConverted;
    return Result;
  }
  if (!Host->hasDeviceCode() || Host->Wrappers.empty()) {
    Result.Outcome = ConvertOutcome::NoDeviceCode;
    return Result;
  }
  Result.Bundles = Host->Bundles.size();
  Result.Wrappers = Host->Wrappers.size();

  const std::string OutputAbs = absolutePath(Opts.Output);
  std::string Name = Opts.KernelName.empty()
                         ? sys::path::filename(OutputAbs).str()
                         : Opts.KernelName;
  if (Name.empty())
    return makeError("the kpack name is empty");

  // Every code object, checked before anything is written: compressed
  // bundles are decoded once here and their payloads kept for the archives.
  Progress("checking code objects");
  std::vector<std::unique_ptr<Bundle>> Decoded(Host->Bundles.size());
  std::set<std::string> Targets;
  for (size_t I = 0; I < Host->Bundles.size(); ++I) {
    const BundleInfo &B = Host->Bundles[I];
    if (B.Compression != BundleCompression::None) {
      Decoded[I] = std::make_unique<Bundle>();
      if (Error E = decodeBundleAt(Image, B, *Decoded[I]))
        return E;
    }
    for (const BundleEntry &E : Decoded[I] ? Decoded[I]->Entries : B.Entries) {
      if (!E.isDevice())
        continue;
      ArrayRef<uint8_t> Payload =
          Decoded[I] ? ArrayRef<uint8_t>(Decoded[I]->payload(E), E.Size)
                     : arrayRefFromStringRef(Image.getBuffer().substr(
                           B.FileOffset + E.Offset, E.Size));
      if (Error Err = checkArchiveEntry(E.TargetId, Payload,
                                        OpaqueEntries::Reject)
                          .takeError())
        return makeError("bundle " + Twine(I) + " (.hip_fatbin offset 0x" +
                         Twine::utohexstr(B.SectionOffset) + "), entry " +
                         quoteInput(E.Id) + ": " + toString(std::move(Err)));
      Targets.insert(E.TargetId);
    }
  }

  // Archive paths and the search paths that find them.
  std::map<std::string, std::string> ArchiveFor; // target ID -> path
  std::vector<std::string> SearchPaths = Opts.SearchPaths;
  // Created once the rewrite has succeeded: bad input leaves no trace.
  std::vector<std::string> Dirs;
  if (!Opts.KpackDir.empty()) {
    std::string Dir = absolutePath(Opts.KpackDir);
    for (const std::string &T : Targets)
      ArchiveFor[T] = perTargetArchivePath(Dir, Name, T);
    if (SearchPaths.empty())
      SearchPaths.push_back(searchPathFromBinary(
          OutputAbs, perTargetArchivePath(Dir, Name, "@GFXARCH@")));
    Dirs.push_back(Dir);
  } else {
    std::string Path = absolutePath(Opts.KpackOutput);
    if (SearchPaths.empty())
      SearchPaths.push_back(searchPathFromBinary(OutputAbs, Path));
    if (Path == OutputAbs || Path == absolutePath(Opts.Input))
      return makeError("the archive would overwrite a host binary");
    Dirs.push_back(sys::path::parent_path(Path).str());
  }
  Dirs.push_back(sys::path::parent_path(OutputAbs).str());

  KpackMetadata Meta{Name, SearchPaths};
  std::vector<uint8_t> MetaBytes;
  if (Status S = encodeKpackMetadata(Meta, MetaBytes))
    return makeError("kpack metadata: " + S.message());

  // The host binary first: it is verified before anything is written.
  Progress("rewriting the host binary");
  auto NewImage = rewriteHostBinary(Image, *Host, MetaBytes);
  if (!NewImage)
    return NewImage.takeError();
  for (const std::string &Dir : Dirs)
    if (std::error_code EC = sys::fs::create_directories(Dir))
      return makeError("cannot create directory '" + Dir +
                       "': " + EC.message());

  // Archive entries: code objects of uncompressed bundles are read straight
  // from the input file; compressed bundles are decoded once.
  auto Writer = [&](const std::string &Family) {
    ArchiveWriterOptions WO;
    WO.GroupName = Opts.GroupName.empty() ? Name : Opts.GroupName;
    WO.GfxArchFamily = Opts.Family.empty() ? Family : Opts.Family;
    WO.Compression = Opts.Compression;
    WO.ZstdLevel = Opts.Level;
    WO.Threads = Opts.Threads;
    return std::make_unique<ArchiveWriter>(WO);
  };
  std::map<std::string, std::unique_ptr<ArchiveWriter>> Writers;
  if (!Opts.KpackDir.empty())
    for (const std::string &T : Targets)
      Writers[T] = Writer(T);
  else
    Writers[""] = Writer("");

  Progress("collecting code objects");
  for (size_t I = 0; I < Host->Bundles.size(); ++I) {
    const BundleInfo &B = Host->Bundles[I];
    const Bundle *Payloads = Decoded[I].get();
    const std::string Key = Name + "#" + std::to_string(I);
    const auto &Entries = Payloads ? Payloads->Entries : B.Entries;
    for (const BundleEntry &E : Entries) {
      if (!E.isDevice())
        continue;
      EntrySource Src =
          Payloads ? EntrySource::fromBytes(Payloads->payload(E), E.Size)
                   : EntrySource::fromFileRange(
                         Opts.Input, B.FileOffset + E.Offset, E.Size);
      ArchiveWriter &W = *Writers[Opts.KpackDir.empty() ? "" : E.TargetId];
      if (Status S = W.addEntry(Key, E.TargetId, std::move(Src)))
        return makeError("bundle " + Twine(I) + ": " + S.message());
      ++Result.CodeObjects;
    }
  }

  for (auto &[Target, W] : Writers) {
    std::string Path =
        Target.empty() ? absolutePath(Opts.KpackOutput) : ArchiveFor[Target];
    Progress("writing " + Path);
    ConvertedArchive Info;
    if (Error E = writeOrError(*W, Path, Info))
      return E;
    Result.Archives.push_back(std::move(Info));
  }

  Progress("writing " + Opts.Output);
  AtomicFileOptions FileOpts;
  FileOpts.ModeFrom = Opts.Input;
  if (Status S = writeFileAtomically(Opts.Output, NewImage->data(),
                                     NewImage->size(), FileOpts))
    return makeError("cannot write '" + Opts.Output + "': " + S.message());
  Result.OutputBytes = NewImage->size();
  return Result;
}
