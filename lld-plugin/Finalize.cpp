//===- Finalize.cpp - Post-link step of ld.kpack --------------------------===//

#include "Finalize.h"

#include "kpack/ArchivePaths.h"
#include "kpack/AtomicFile.h"
#include "kpack/BundleCodec.h"
#include "kpack/COFF/CoffHostBinary.h"
#include "kpack/Emission.h"
#include "kpack/FrameCache.h"
#include "kpack/HostBinary.h"
#include "kpack/KpackReady.h"
#include "kpack/LLVMError.h"
#include "kpack/Metadata.h"
#include "kpack/Quote.h"
#include "kpack/WrapperPatcher.h"

#include "llvm/ADT/DenseMap.h"
#include "llvm/ADT/MapVector.h"
#include "llvm/ADT/StringExtras.h"
#include "llvm/Support/FileSystem.h"
#include "llvm/Support/MemoryBuffer.h"
#include "llvm/Support/Path.h"
#include "llvm/Support/TimeProfiler.h"

using namespace llvm;

namespace kpack {
namespace link {

Expected<CompressionSettings> compressionOf(const KpackOptions &Opts) {
  if (!Opts.Compression.empty()) {
    auto Settings =
        CompressionSettings::parse(Opts.Compression, Opts.CompressionLevel);
    if (!Settings)
      return createStringError("invalid --kpack-compression '%s': %s",
                               Opts.Compression.c_str(),
                               toString(Settings.takeError()).c_str());
    return *Settings;
  }
  if (!Opts.CompressionLevel)
    return CompressionSettings();
  int N = *Opts.CompressionLevel;
  auto Settings = N == 0 ? CompressionSettings::parse("none", std::nullopt)
                         : CompressionSettings::parse("zstd", N);
  if (!Settings)
    return createStringError("invalid --kpack-compression-level '%d' (0 for "
                             "none): %s",
                             N, toString(Settings.takeError()).c_str());
  return *Settings;
}

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
  auto Compression = compressionOf(Opts);
  if (!Compression)
    return Compression.takeError();
  Plan.Compression = *Compression;
  // The cache is pruned when the plan, the link's, goes.
  if (!Opts.CacheDir.empty())
    if (Status S = FrameCache::open(Opts.CacheDir, Opts.CachePolicy,
                                    Plan.Compression.Cache))
      return createStringError("--kpack-cache-dir: %s", S.message().c_str());
  Plan.SearchPaths = Opts.SearchPaths;
  if (Plan.SearchPaths.empty())
    Plan.SearchPaths.push_back(searchPathFromBinary(OutputPath, Archive));
  return Plan;
}

Expected<std::vector<uint8_t>> encodePlanMetadata(const EmitPlan &Plan,
                                                  StringRef LinkId) {
  return encodeMetadata(Plan.KernelName, Plan.SearchPaths, LinkId);
}

Error finalizeOutput(StringRef LinkedPath, StringRef OutputPath,
                     const KpackOptions &Opts, const EmitPlan &Plan,
                     const PayloadStore &Payloads) {
  TimeTraceScope Trace("Finalize", OutputPath);
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

  // The archives: one for --kpack-output (written even when nothing is
  // live, so build rules always find their output), else one per target ID.
  ArchiveLayout Layout;
  if (!Plan.ArchivePath.empty()) {
    Layout.ArchivePath = Plan.ArchivePath;
    Layout.WriteEmpty = true;
  } else {
    Layout.Dir = Plan.ArchiveDir;
    Layout.Name = Plan.KernelName;
  }
  Layout.GroupName = Opts.Group.empty() ? Plan.KernelName : Opts.Group;
  Layout.Family = Opts.Family;
  Layout.Compression = Plan.Compression;
  Layout.LinkIdentity = true;
  Layout.Threads = Opts.Jobs.value_or(0);
  ArchiveSet Archives(std::move(Layout));
  // The decoded bundles of the live keys, viewed by the archive entries
  // until the archives are written.
  std::vector<Bundle> Bundles;
  // The key records' section: `.kpackrf` in a PE image (FORMAT.md §3.4).
  const bool Pe = Host->Format == HostFormat::Coff;
  const char *KeySection =
      Pe ? ready::CoffKeySectionName.data() : ready::KeySectionName.data();
  std::vector<uint32_t> WrapperIndex; // N of each wrapper
  if (!Host->Wrappers.empty()) {
    if (!Host->KpackRefSection)
      return createStringError("%s: wrappers but no %s section",
                               OutputPath.str().c_str(), KeySection);
    const SectionSpan &Ref = *Host->KpackRefSection;

    // Code-object indices: first-seen order of distinct keys over the
    // wrappers in address order (Host->Wrappers is in section order).
    MapVector<uint64_t, uint32_t> IndexOfKey;
    for (const WrapperInfo &W : Host->Wrappers) {
      if (W.Target < Ref.Address || W.Target + ready::KeySlotSize > Ref.Address + Ref.Size)
        return createStringError(
            "%s: wrapper at 0x%llx points at 0x%llx, outside %s",
            OutputPath.str().c_str(), (unsigned long long)W.Address,
            (unsigned long long)W.Target, KeySection);
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

    // The archive entries: the device entries of the live keys' bundles,
    // each checked as `kpack verify` would check it when it is written. An
    // uncompressed bundle is only parsed here (its header); its code objects
    // are read from where the bundle lies, an input file or a rewritten one,
    // while the archives are written, so memory does not grow with the device
    // code. A compressed bundle (CCOB) is decoded here and held until then
    // (as is a record whose bytes are not exactly one bundle).
    Bundles.resize(IndexOfKey.size());
    for (auto &[Key, N] : IndexOfKey) {
      const PayloadBytes *Where = Payloads.find(Key);
      if (!Where)
        return createStringError("%s: no input carries the device code for "
                                 "content key 0x%016llx",
                                 OutputPath.str().c_str(),
                                 (unsigned long long)Key);
      std::string Origin = (Payloads.origin(Key) + ": offload bundle 0x" +
                            Twine::utohexstr(Key))
                               .str();
      // A file-backed bundle is mapped (not read) while its header is
      // parsed; only the pages the header spans are touched.
      std::unique_ptr<MemoryBuffer> Mapped;
      ArrayRef<uint8_t> View = Where->Bytes;
      if (Where->inFile()) {
        auto Slice = MemoryBuffer::getFileSlice(Where->File, Where->Size,
                                                Where->Offset,
                                                /*IsVolatile=*/false);
        if (!Slice)
          return createFileError(Where->File,
                                 errorCodeToError(Slice.getError()));
        Mapped = std::move(*Slice);
        View = arrayRefFromStringRef(Mapped->getBuffer());
      }
      // The header alone, when the record holds exactly one uncompressed
      // bundle; otherwise (CCOB, bytes after the bundle) decoded and held.
      std::vector<BundleExtent> Extents;
      const bool Scanned =
          !scanBundleSection(View.data(), View.size(), Extents) &&
          Extents.size() == 1 && Extents[0].SectionOffset == 0 &&
          Extents[0].Compression == BundleCompression::None;
      const bool Decoded = !Scanned;
      if (Decoded)
        if (Status S = decodeBundle(View.data(), View.size(), Bundles[N]))
          return createStringError("%s: %s", Origin.c_str(),
                                   S.message().c_str());
      const std::vector<BundleEntry> &Entries =
          Decoded ? Bundles[N].Entries : Extents[0].Entries;
      for (const BundleEntry &E : Entries) {
        if (!E.isDevice())
          continue;
        CodeObjectRef C;
        C.Index = N;
        C.TargetId = E.TargetId;
        C.EntryId = E.Id;
        C.Size = E.Size;
        if (Decoded)
          C.Source = EntrySource::fromBytes(Bundles[N].payload(E), E.Size);
        else if (Where->inFile())
          C.Source = EntrySource::fromFileRange(Where->File,
                                                Where->Offset + E.Offset,
                                                E.Size);
        else
          C.Source = EntrySource::fromBytes(View.data() + E.Offset, E.Size);
        C.Origin = Origin + ": offload bundle entry " + quoteInput(E.Id);
        if (Error Err = Archives.add(Plan.KernelName + "#" + std::to_string(N),
                                     C))
          return Err;
      }
    }
  }

  // The archives, finished but not committed: their link identity goes into
  // the metadata.
  auto Prepared = Archives.prepare();
  if (!Prepared)
    return Prepared.takeError();

  if (!Host->Wrappers.empty()) {
    const SectionSpan &Ref = *Host->KpackRefSection;
    // One metadata record over the whole key-record area.
    auto MetaBytes =
        encodePlanMetadata(Plan, Prepared->LinkIds[Plan.KernelName]);
    if (!MetaBytes)
      return MetaBytes.takeError();
    // ld.kpack added room before linking; this only fails if a linker script
    // discarded it.
    if (MetaBytes->size() > Ref.Size)
      return createStringError(
          "kpack metadata (%zu bytes) does not fit in %s (%llu bytes)",
          MetaBytes->size(), KeySection, (unsigned long long)Ref.Size);
    for (size_t I = 0; I < Host->Wrappers.size(); ++I)
      if (Error E = patchWrapperToHIPK(
              Image, WrapperLocation::of(Host->Wrappers[I]), Ref.Address,
              WrapperIndex[I]))
        return createFileError(OutputPath, std::move(E));
    std::fill_n(Image.begin() + Ref.FileOffset, Ref.Size, 0);
    std::copy(MetaBytes->begin(), MetaBytes->end(),
              Image.begin() + Ref.FileOffset);
    if (Pe)
      if (Error E = refreshPeChecksum(Image))
        return createFileError(OutputPath, std::move(E));
  }

  // What the previous link of this output wrote and this one does not, found
  // before the output is replaced (its link identity proves the archives
  // its own).
  std::vector<std::string> Written;
  for (const WrittenArchive &W : Prepared->Archives)
    Written.push_back(W.Path);
  std::vector<std::string> Stale;
  if (Plan.ArchivePath.empty())
    Stale = staleArchives(OutputPath, Plan.ArchiveDir, Plan.KernelName,
                          Written);

  AtomicFileOptions AO;
  AO.ModeFrom = LinkedPath.str();
  AtomicFile Output;
  if (Status S = Output.open(OutputPath.str(), AO))
    return toError(S);
  if (Status S = Output.write(Image.data(), Image.size()))
    return toError(S);
  std::vector<AtomicFile *> Files;
  for (std::unique_ptr<AtomicFile> &F : Prepared->Files)
    Files.push_back(F.get());
  Files.push_back(&Output); // last: the binary never names a missing archive
  if (Status S = commitTogether(Files))
    return toError(S);
  Prepared->Dirs->keep();
  return removeStaleArchives(Stale);
}

} // namespace link
} // namespace kpack
