//===- Finalize.cpp - Post-link step of ld.kpack --------------------------===//

#include "Finalize.h"

#include "kpack/ArchivePaths.h"
#include "kpack/ArchiveWriter.h"
#include "kpack/AtomicFile.h"
#include "kpack/BundleCodec.h"
#include "kpack/CodeObjectCheck.h"
#include "kpack/HostBinary.h"
#include "kpack/KpackReady.h"
#include "kpack/LLVMError.h"
#include "kpack/Metadata.h"
#include "kpack/Quote.h"
#include "kpack/WrapperPatcher.h"

#include "llvm/ADT/DenseMap.h"
#include "llvm/ADT/MapVector.h"
#include "llvm/Support/FileSystem.h"
#include "llvm/Support/MemoryBuffer.h"
#include "llvm/Support/Path.h"

#include <map>

using namespace llvm;

namespace kpack {
namespace link {

Expected<EmitPlan> planEmission(const KpackOptions &Opts,
                                StringRef OutputPath) {
  EmitPlan Plan;
  Plan.KernelName = Opts.KernelName.empty()
                        ? sys::path::filename(OutputPath).str()
                        : Opts.KernelName;
  if (Plan.KernelName.empty())
    return createStringError("cannot derive a kernel name from output '%s'",
                             OutputPath.str().c_str());
  std::string Archive;
  if (!Opts.OutputArchive.empty()) {
    Plan.ArchivePath = Opts.OutputArchive;
    if (absolutePath(Plan.ArchivePath) == absolutePath(OutputPath))
      return createStringError("--kpack-output names the linker output");
    Archive = Plan.ArchivePath;
  } else {
    Plan.ArchiveDir = Opts.OutputDir;
    Archive = perTargetArchivePath(Plan.ArchiveDir, Plan.KernelName,
                                   "@GFXARCH@");
  }
  Plan.SearchPaths = Opts.SearchPaths;
  if (Plan.SearchPaths.empty())
    Plan.SearchPaths.push_back(searchPathFromBinary(OutputPath, Archive));
  return Plan;
}

Expected<std::vector<uint8_t>> encodePlanMetadata(const EmitPlan &Plan) {
  KpackMetadata Meta{Plan.KernelName, Plan.SearchPaths};
  std::vector<uint8_t> Bytes;
  if (Error E = toError(encodeKpackMetadata(Meta, Bytes)))
    return E;
  return Bytes;
}

namespace {

/// The archives: one writer for --kpack-output, one per target ID for
/// --kpack-dir (created in first-seen order; the order does not affect any
/// file's bytes).
class ArchiveSet {
public:
  ArchiveSet(const KpackOptions &Opts, const EmitPlan &Plan)
      : Opts(Opts), Plan(Plan) {}

  /// Adds the device entries of bundle N, each checked as `kpack verify`
  /// would check it; Origin names the input it came from.
  Error add(uint32_t N, const Bundle &B, const Twine &Origin) {
    std::string Key = Plan.KernelName + "#" + std::to_string(N);
    for (const BundleEntry *E : B.deviceEntries()) {
      ArrayRef<uint8_t> Payload(B.payload(*E), E->Size);
      if (Error Err = checkArchiveEntry(E->TargetId, Payload,
                                        OpaqueEntries::Reject)
                          .takeError())
        return createStringError(
            (Origin + ": offload bundle entry " + quoteInput(E->Id) + ": " +
             toString(std::move(Err)))
                .str());
      ArchiveWriter &W = writerFor(E->TargetId);
      if (Status S = W.addEntry(Key, E->TargetId,
                                EntrySource::fromBytes(B.payload(*E), E->Size)))
        return createStringError("%s", S.message().c_str());
    }
    return Error::success();
  }

  /// Writes every archive. With --kpack-output an archive is written even
  /// when nothing is live, so build rules always find their output.
  Error write() {
    if (!Plan.ArchivePath.empty())
      writerFor("");
    for (auto &[Target, W] : Writers) {
      std::string Path = Plan.ArchivePath;
      if (Path.empty()) {
        if (std::error_code EC = sys::fs::create_directories(Plan.ArchiveDir))
          return createStringError(EC, "cannot create directory '%s': %s",
                                   Plan.ArchiveDir.c_str(),
                                   EC.message().c_str());
        Path = perTargetArchivePath(Plan.ArchiveDir, Plan.KernelName, Target);
      }
      if (Status S = W->write(Path))
        return createStringError("cannot write '%s': %s", Path.c_str(),
                                 S.message().c_str());
    }
    return Error::success();
  }

private:
  ArchiveWriter &writerFor(const std::string &TargetId) {
    std::string Slot = Plan.ArchivePath.empty() ? TargetId : std::string();
    auto &W = Writers[Slot];
    if (!W) {
      ArchiveWriterOptions O;
      O.GroupName = Opts.Group.empty() ? Plan.KernelName : Opts.Group;
      O.GfxArchFamily = Opts.Family; // empty: defaultArchFamily()
      int Level = Opts.CompressionLevel.value_or(3);
      O.Compression = Level == 0 ? ArchiveCompression::None
                                 : ArchiveCompression::ZstdPerKernel;
      O.ZstdLevel = Level == 0 ? 3 : Level;
      W = std::make_unique<ArchiveWriter>(O);
    }
    return *W;
  }

  const KpackOptions &Opts;
  const EmitPlan &Plan;
  std::map<std::string, std::unique_ptr<ArchiveWriter>> Writers;
};

} // namespace

Error finalizeOutput(StringRef LinkedPath, StringRef OutputPath,
                     const KpackOptions &Opts, const EmitPlan &Plan,
                     const PayloadStore &Payloads) {
  auto BufOrErr = MemoryBuffer::getFile(LinkedPath, /*IsText=*/false,
                                        /*RequiresNullTerminator=*/false);
  if (!BufOrErr)
    return createFileError(LinkedPath, errorCodeToError(BufOrErr.getError()));
  std::vector<uint8_t> Image((*BufOrErr)->getBuffer().bytes_begin(),
                             (*BufOrErr)->getBuffer().bytes_end());
  BufOrErr->reset();
  MemoryBufferRef ImageRef(
      StringRef(reinterpret_cast<const char *>(Image.data()), Image.size()),
      OutputPath);

  auto Host = analyzeHostBinary(ImageRef);
  if (!Host)
    return createFileError(OutputPath, Host.takeError());
  if (Host->Fatbin)
    return createStringError(
        "%s: the output still has %s from an input ld.kpack could not "
        "rewrite (an input named by a linker script?)",
        OutputPath.str().c_str(), ready::FatbinSectionName.data());

  ArchiveSet Archives(Opts, Plan);
  if (!Host->Wrappers.empty()) {
    if (!Host->KpackRefSection)
      return createStringError("%s: wrappers but no %s section",
                               OutputPath.str().c_str(),
                               ready::KeySectionName.data());
    const SectionSpan &Ref = *Host->KpackRefSection;

    // Code-object indices: first-seen order of distinct keys over the
    // wrappers in address order (Host->Wrappers is in section order).
    MapVector<uint64_t, uint32_t> IndexOfKey;
    std::vector<uint32_t> WrapperIndex;
    for (const WrapperInfo &W : Host->Wrappers) {
      if (W.Target < Ref.Address || W.Target + ready::KeySlotSize > Ref.Address + Ref.Size)
        return createStringError(
            "%s: wrapper at 0x%llx points at 0x%llx, outside %s",
            OutputPath.str().c_str(), (unsigned long long)W.Address,
            (unsigned long long)W.Target, ready::KeySectionName.data());
      uint64_t Off = Ref.FileOffset + (W.Target - Ref.Address);
      auto Rec = ready::parseKeyRecord(
          ArrayRef<uint8_t>(Image).slice(Off, ready::KeySlotSize));
      if (!Rec)
        return createFileError(OutputPath, Rec.takeError());
      auto [It, New] =
          IndexOfKey.insert({Rec->Key, uint32_t(IndexOfKey.size())});
      (void)New;
      WrapperIndex.push_back(It->second);
    }

    // The archives, from the collected payloads of the live keys.
    std::vector<Bundle> Bundles(IndexOfKey.size());
    for (auto &[Key, N] : IndexOfKey) {
      const ArrayRef<uint8_t> *Bytes = Payloads.find(Key);
      if (!Bytes)
        return createStringError("%s: no input carries the device code for "
                                 "content key 0x%016llx",
                                 OutputPath.str().c_str(),
                                 (unsigned long long)Key);
      std::string Origin = (Payloads.origin(Key) + ": offload bundle 0x" +
                            Twine::utohexstr(Key))
                               .str();
      if (Status S = decodeBundle(Bytes->data(), Bytes->size(), Bundles[N]))
        return createStringError("%s: %s", Origin.c_str(),
                                 S.message().c_str());
      if (Error E = Archives.add(N, Bundles[N], Origin))
        return E;
    }

    // One metadata record over the whole key-record area.
    auto MetaBytes = encodePlanMetadata(Plan);
    if (!MetaBytes)
      return MetaBytes.takeError();
    // ld.kpack added room before linking; this only fails if a linker script
    // discarded it.
    if (MetaBytes->size() > Ref.Size)
      return createStringError(
          "kpack metadata (%zu bytes) does not fit in %s (%llu bytes)",
          MetaBytes->size(), ready::KeySectionName.data(),
          (unsigned long long)Ref.Size);
    for (size_t I = 0; I < Host->Wrappers.size(); ++I)
      if (Error E = patchWrapperToHIPK(
              Image, WrapperLocation::of(Host->Wrappers[I]), Ref.Address,
              WrapperIndex[I]))
        return createFileError(OutputPath, std::move(E));
    std::fill_n(Image.begin() + Ref.FileOffset, Ref.Size, 0);
    std::copy(MetaBytes->begin(), MetaBytes->end(),
              Image.begin() + Ref.FileOffset);

    if (Error E = Archives.write())
      return E;
  } else if (Error E = Archives.write()) {
    return E;
  }

  AtomicFileOptions AO;
  AO.ModeFrom = LinkedPath.str();
  return toError(writeFileAtomically(OutputPath.str(), Image.data(),
                                     Image.size(), AO));
}

} // namespace link
} // namespace kpack
