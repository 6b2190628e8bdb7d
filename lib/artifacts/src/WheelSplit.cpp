//===- WheelSplit.cpp - Host and device wheels ----------------------------===//
//
// split: every entry of the fat wheel is read once (checked against RECORD,
// ELF files extracted to a scratch directory), fat binaries are converted
// through the emission library into one archive per target, and the host
// and device wheels are written in `wheel`'s order with fresh RECORDs.
// Unchanged entries are copied as stored (same compressed bytes and
// method). recombine: the same for a host wheel plus device wheels.
//
//===----------------------------------------------------------------------===//

#include "kpack/WheelSplit.h"

#include "kpack/AtomicFile.h"
#include "kpack/DatabaseHandlers.h"
#include "kpack/LLVMError.h"
#include "kpack/Quote.h"
#include "kpack/TargetId.h"
#include "kpack/Wheel.h"
#include "kpack/Zip.h"

#include "llvm/ADT/STLExtras.h"
#include "llvm/ADT/StringExtras.h"
#include "llvm/ADT/StringSet.h"
#include "llvm/Support/Endian.h"
#include "llvm/Support/FileSystem.h"
#include "llvm/Support/Path.h"
#include "llvm/Support/raw_ostream.h"

#include <map>
#include <memory>
#include <set>

using namespace llvm;
using namespace kpack;

namespace {

/// A scratch directory removed with everything in it when destroyed or
/// when the process is interrupted (OutputDirectories, kpack/AtomicFile.h).
class ScratchDir {
public:
  static Expected<ScratchDir> create(StringRef Parent) {
    ScratchDir S;
    S.Dirs = std::make_unique<OutputDirectories>();
    if (Status St = S.Dirs->createTree(Parent.str(), ".kpack-wheel-scratch-",
                                       S.Path))
      return makeError("cannot create a scratch directory in '" + Parent +
                       "': " + St.message());
    return S;
  }
  const std::string &path() const { return Path; }

private:
  ScratchDir() = default;
  std::string Path;
  std::unique_ptr<OutputDirectories> Dirs;
};

/// Recognises x86-64 ELF executables and shared objects from their first
/// bytes as they stream, and copies such a file to a scratch file.
class ElfExtractor {
public:
  explicit ElfExtractor(std::string Path) : Path(std::move(Path)) {}
  Error feed(ArrayRef<uint8_t> Chunk) {
    if (State == Rejected)
      return Error::success();
    if (State == Sniffing) {
      size_t N = std::min(Chunk.size(), Head.size() - HeadLen);
      std::copy_n(Chunk.begin(), N, Head.begin() + HeadLen);
      HeadLen += N;
      if (HeadLen < Head.size())
        return Error::success();
      if (!isHostElf()) {
        State = Rejected;
        return Error::success();
      }
      State = Copying;
      if (Error E = toError(Out.open(Path)))
        return E;
      if (Error E = toError(Out.write(Head.data(), Head.size())))
        return E;
      Chunk = Chunk.drop_front(N);
    }
    return toError(Out.write(Chunk.data(), Chunk.size()));
  }
  /// True if the whole file was an x86-64 ELF executable or shared object,
  /// now in the scratch file.
  Expected<bool> finish() {
    if (State != Copying)
      return false;
    if (Error E = toError(Out.commit()))
      return E;
    return true;
  }

private:
  bool isHostElf() const {
    using namespace support::endian;
    if (Head[0] != 0x7f || Head[1] != 'E' || Head[2] != 'L' || Head[3] != 'F')
      return false;
    if (Head[4] != 2 /*ELFCLASS64*/ || Head[5] != 1 /*ELFDATA2LSB*/)
      return false;
    uint16_t Type = read16le(&Head[16]), Machine = read16le(&Head[18]);
    return (Type == 2 /*ET_EXEC*/ || Type == 3 /*ET_DYN*/) &&
           Machine == 62 /*EM_X86_64*/;
  }

  enum { Sniffing, Rejected, Copying } State = Sniffing;
  std::array<uint8_t, 20> Head{};
  size_t HeadLen = 0;
  std::string Path;
  AtomicFile Out;
};

/// The canonical text of a target ID, or an error naming Where.
Expected<std::string> canonicalTarget(StringRef Text, const Twine &Where) {
  std::optional<TargetId> T = parseTargetId(Text.str());
  if (!T)
    return makeError(Where + ": " + quoteInput(Text) + " is not a target ID");
  return T->str();
}

/// "Name==Version" of a Requires-Dist value without markers, or none.
std::optional<std::pair<std::string, std::string>>
pinnedRequirement(StringRef Value) {
  StringRef Req = Value.split(';').first.trim();
  auto [Name, Version] = Req.split("==");
  if (Version.empty())
    return std::nullopt;
  return std::make_pair(Name.trim().str(), Version.trim().str());
}

/// Metadata-Version as (major, minor); (0, 0) if unreadable.
std::pair<unsigned, unsigned> metadataVersion(const WheelHeaderFile &M) {
  std::string V = M.get("Metadata-Version").value_or("");
  auto [Major, Minor] = StringRef(V).trim().split('.');
  unsigned A = 0, B = 0;
  if (Major.getAsInteger(10, A) || (!Minor.empty() && Minor.getAsInteger(10, B)))
    return {0, 0};
  return {A, B};
}

/// One entry of an output wheel.
struct OutEntry {
  std::string Name;
  enum { Raw, Bytes, File } Kind = Raw;
  const ZipReader *From = nullptr;
  const ZipEntry *Entry = nullptr;
  std::vector<uint8_t> Data; ///< Bytes
  std::string Path;          ///< File
  ZipMethod Method = ZipMethod::Deflated;
  uint32_t Mode = ZipDefaultFileMode;
  RecordEntry Row; ///< computed for Bytes; given for Raw; File: on write
};

/// A wheel under construction: entries are collected, then written in
/// `wheel`'s order with RECORD last. Nothing is visible before commit().
class WheelBuilder {
public:
  WheelBuilder(std::string Path, std::string DistInfo, ZipMethod RecordMethod)
      : Path(std::move(Path)), DistInfo(std::move(DistInfo)),
        RecordMethod(RecordMethod) {}

  void addRaw(std::string Name, const ZipReader &From, const ZipEntry &E,
              RecordEntry Row) {
    OutEntry O;
    O.Name = std::move(Name);
    O.Kind = OutEntry::Raw;
    O.From = &From;
    O.Entry = &E;
    O.Method = E.Method;
    O.Mode = zipFileMode(E.unixMode());
    Row.Path = O.Name;
    O.Row = std::move(Row);
    Entries.push_back(std::move(O));
  }
  void addBytes(std::string Name, std::vector<uint8_t> Data, ZipMethod Method,
                uint32_t Mode) {
    OutEntry O;
    O.Name = std::move(Name);
    O.Kind = OutEntry::Bytes;
    O.Row = recordEntryFor(O.Name, Data);
    O.Data = std::move(Data);
    O.Method = Method;
    O.Mode = Mode;
    Entries.push_back(std::move(O));
  }
  void addText(std::string Name, StringRef Text, ZipMethod Method) {
    addBytes(std::move(Name), std::vector<uint8_t>(Text.begin(), Text.end()),
             Method, ZipDefaultFileMode);
  }
  void addFile(std::string Name, std::string FilePath, ZipMethod Method,
               uint32_t Mode) {
    OutEntry O;
    O.Name = std::move(Name);
    O.Kind = OutEntry::File;
    O.Path = std::move(FilePath);
    O.Method = Method;
    O.Mode = Mode;
    Entries.push_back(std::move(O));
  }

  /// Writes everything but does not commit.
  Error write() {
    StringSet<> Seen;
    for (const OutEntry &O : Entries)
      if (!Seen.insert(O.Name).second)
        return makeError("'" + Path + "' would hold " + quoteInput(O.Name) +
                         " twice");
    // Names are unique, so the order is total.
    llvm::sort(Entries, [&](const OutEntry &A, const OutEntry &B) {
      return wheelEntryLess(A.Name, B.Name, DistInfo);
    });
    Expected<ZipWriter> Z = ZipWriter::create(Path);
    if (!Z)
      return Z.takeError();
    Zip.emplace(std::move(*Z));
    std::vector<RecordEntry> Rows;
    for (OutEntry &O : Entries) {
      switch (O.Kind) {
      case OutEntry::Raw:
        if (Error E = Zip->addRaw(O.Name, *O.From, *O.Entry, O.Mode))
          return E;
        break;
      case OutEntry::Bytes:
        if (Error E = Zip->add(O.Name, O.Data, O.Method, O.Mode))
          return E;
        O.Data = {};
        break;
      case OutEntry::File: {
        if (Error E = Zip->addFile(O.Name, O.Path, O.Method, O.Mode))
          return E;
        Expected<RecordEntry> Row = hashFile(O.Path, O.Name);
        if (!Row)
          return Row.takeError();
        O.Row = std::move(*Row);
        break;
      }
      }
      Rows.push_back(O.Row);
    }
    std::string RecordPath = DistInfo + "/RECORD";
    Rows.push_back({RecordPath, "", ""});
    std::string Record = writeRecord(Rows);
    if (Error E = Zip->add(RecordPath, arrayRefFromStringRef(Record),
                           RecordMethod, 0100644))
      return E;
    Files = Rows.size();
    return Error::success();
  }

  Expected<WrittenWheel> commit(std::string TargetId) {
    if (Error E = Zip->commit())
      return E;
    return WrittenWheel{Path, std::move(TargetId), Zip->size(), Files};
  }

private:
  static Expected<RecordEntry> hashFile(StringRef FilePath, StringRef Name) {
    ErrorOr<std::unique_ptr<MemoryBuffer>> Buf = MemoryBuffer::getFile(
        FilePath, /*IsText=*/false, /*RequiresNullTerminator=*/false);
    if (!Buf)
      return makeError("cannot read '" + FilePath +
                       "': " + Buf.getError().message());
    RecordHasher H;
    ArrayRef<uint8_t> Bytes = arrayRefFromStringRef((*Buf)->getBuffer());
    while (!Bytes.empty()) {
      ArrayRef<uint8_t> Chunk = Bytes.take_front(size_t(1) << 24);
      H.update(Chunk);
      Bytes = Bytes.drop_front(Chunk.size());
    }
    return H.finish(Name);
  }

  std::string Path, DistInfo;
  ZipMethod RecordMethod;
  std::vector<OutEntry> Entries;
  std::optional<ZipWriter> Zip;
  unsigned Files = 0;
};

/// Where an entry installs relative to the wheel's root (purelib or
/// platlib, whichever Root-Is-Purelib names): the entry's own path, or its
/// path below <name>.data/<root scheme>/; empty for entries that install
/// elsewhere (.data/scripts, .data/headers, .data/data, the other scheme).
std::string installedPath(const WheelFile &W, StringRef Name) {
  std::string Data = W.dataDir() + "/";
  if (!Name.consume_front(Data))
    return Name.str();
  auto [Scheme, Rest] = Name.split('/');
  if (Scheme == (W.rootIsPurelib() ? "purelib" : "platlib"))
    return Rest.str();
  return "";
}

bool inDistInfo(const WheelFile &W, StringRef Name) {
  return Name.consume_front(W.distInfoDir()) && Name.starts_with("/");
}

/// The search path from a binary at InstalledPath (relative to the root) to
/// the archives: "../" per directory level, then the kpack directory.
std::string searchPathFor(StringRef InstalledPath, StringRef Dist) {
  std::string Up;
  for (char C : InstalledPath)
    if (C == '/')
      Up += "../";
  return Up + kpackDirectoryName(Dist) + "/" + Dist.str() + "_@GFXARCH@.kpack";
}

/// Fails if Output names the same file as one of Inputs.
Error checkNotAnInput(StringRef Output, ArrayRef<std::string> Inputs) {
  for (const std::string &In : Inputs)
    if (sys::fs::equivalent(Output, In))
      return makeError("output '" + Output + "' is the input '" + In +
                       "': inputs are never overwritten");
  return Error::success();
}

} // namespace

std::string kpack::deviceDistributionName(StringRef Dist, StringRef TargetId) {
  return Dist.str() + "_device_" + targetIdNamePart(TargetId, '_');
}

std::string kpack::deviceExtraName(StringRef TargetId) {
  return targetIdNamePart(TargetId, '-');
}

std::string kpack::kpackDirectoryName(StringRef Dist) {
  return "_" + Dist.str() + "_kpack";
}

Expected<WheelSplitResult> kpack::splitWheel(StringRef FatPath,
                                             const WheelSplitOptions &Opts) {
  Expected<WheelFile> Opened = WheelFile::open(FatPath);
  if (!Opened)
    return Opened.takeError();
  const WheelFile &W = *Opened;
  const ZipReader &Zip = W.zip();
  auto Fail = [&](const Twine &Msg) {
    return makeError("'" + FatPath + "': " + Msg);
  };

  Expected<std::vector<const DatabaseHandler *>> Handlers =
      databaseHandlersNamed(Opts.DatabaseHandlers);
  if (!Handlers)
    return Handlers.takeError();
  std::vector<std::string> Requested;
  for (const std::string &T : Opts.Targets) {
    Expected<std::string> C = canonicalTarget(T, "--targets");
    if (!C)
      return C.takeError();
    Requested.push_back(*C);
  }
  std::set<std::string> RequestedSet(Requested.begin(), Requested.end());

  const std::string Dist = wheelFileDistributionName(W.projectName());
  const std::string KpackDir = kpackDirectoryName(Dist);
  const std::string DevicePrefix = normalizeDistributionName(Dist) + "-device-";
  for (const ZipEntry &E : Zip.entries())
    if (StringRef(installedPath(W, E.Name)).starts_with(KpackDir + "/"))
      return Fail("already split: it holds " + quoteInput(E.Name));
  for (const std::string &Req : W.metadata().getAll("Requires-Dist"))
    if (auto Pin = pinnedRequirement(Req))
      if (StringRef(normalizeDistributionName(Pin->first))
              .starts_with(DevicePrefix))
        return Fail("already split: METADATA requires " + quoteInput(Pin->first));

  if (std::error_code EC = sys::fs::create_directories(Opts.OutputDir))
    return makeError("cannot create '" + Opts.OutputDir +
                     "': " + EC.message());
  std::string HostPath = Opts.OutputDir + "/" + W.name().fileName();
  if (Error E = checkNotAnInput(HostPath, {FatPath.str()}))
    return E;
  Expected<ScratchDir> Scratch = ScratchDir::create(Opts.OutputDir);
  if (!Scratch)
    return Scratch.takeError();

  // Read every entry once: checked against RECORD, classified, x86-64 ELF
  // files extracted.
  struct Item {
    const ZipEntry *E;
    RecordEntry Row;
    std::string Installed;
    std::string DatabaseTarget; ///< set: a database file of that target
    int Binary = -1;            ///< index into Bins: a converted fat binary
  };
  std::vector<Item> Items;
  std::vector<FatHostBinary> Bins;
  std::vector<size_t> BinItem;
  std::set<std::string> Found;
  for (const ZipEntry &E : Zip.entries()) {
    if (E.isDirectory() || W.isRecordFile(E.Name))
      continue; // wheel writes no directory entries; RECORD is rewritten
    Item It{&E, {}, installedPath(W, E.Name), "", -1};
    bool Meta = inDistInfo(W, E.Name);
    if (!Meta && !It.Installed.empty())
      if (std::optional<DatabaseFile> DB =
              matchDatabaseFile(*Handlers, It.Installed);
          DB && !DB->TargetId.empty()) {
        Expected<std::string> T = canonicalTarget(
            DB->TargetId, "'" + FatPath + "': database file " + quoteInput(E.Name));
        if (!T)
          return T.takeError();
        It.DatabaseTarget = *T;
        Found.insert(*T);
      }
    std::string Extracted =
        Scratch->path() + "/entry-" + std::to_string(Items.size());
    ElfExtractor Elf(Extracted);
    bool Sniff = !Meta && It.DatabaseTarget.empty();
    Expected<RecordEntry> Row = W.readVerified(E, [&](ArrayRef<uint8_t> C) {
      return Sniff ? Elf.feed(C) : Error::success();
    });
    if (!Row)
      return Row.takeError();
    It.Row = std::move(*Row);
    Expected<bool> IsElf = Elf.finish();
    if (!IsElf)
      return IsElf.takeError();
    if (*IsElf) {
      Expected<FatHostBinary> Bin = FatHostBinary::open(Extracted);
      if (!Bin)
        return Fail(quoteInput(E.Name) + ": " + toString(Bin.takeError()));
      if (Bin->isConvertible()) {
        if (It.Installed.empty())
          return Fail(quoteInput(E.Name) + " is a fat binary that installs "
                      "outside the wheel's root (" +
                      (W.rootIsPurelib() ? "purelib" : "platlib") +
                      "): the archives could not be found from it");
        It.Binary = static_cast<int>(Bins.size());
        Bins.push_back(std::move(*Bin));
        BinItem.push_back(Items.size());
      } else {
        sys::fs::remove(Extracted);
      }
    }
    Items.push_back(std::move(It));
  }

  // The code objects, and the targets the wheel holds.
  std::vector<std::vector<CodeObjectRef>> Objects;
  for (size_t B = 0; B < Bins.size(); ++B) {
    Expected<std::vector<CodeObjectRef>> Objs = Bins[B].codeObjects();
    if (!Objs)
      return Fail(quoteInput(Items[BinItem[B]].E->Name) + ": " +
                  toString(Objs.takeError()));
    for (const CodeObjectRef &C : *Objs)
      Found.insert(C.TargetId);
    Objects.push_back(std::move(*Objs));
  }
  for (const std::string &T : Requested)
    if (!Found.count(T))
      return Fail("no code object or database file for target " + quoteInput(T) +
                  " (the wheel has: " +
                  join(std::vector<std::string>(Found.begin(), Found.end()),
                       ", ") +
                  ")");
  std::vector<std::string> Selected =
      Requested.empty() ? std::vector<std::string>(Found.begin(), Found.end())
                        : std::vector<std::string>(RequestedSet.begin(),
                                                   RequestedSet.end());
  std::set<std::string> SelectedSet(Selected.begin(), Selected.end());

  // One archive per target, keys <installed path>#N.
  ArchiveLayout Layout;
  std::string ArchiveRoot = Scratch->path() + "/archives";
  Layout.PathForTarget = [&](StringRef T) {
    return ArchiveRoot + "/" + T.str() + "/" + Dist + "_" + T.str() + ".kpack";
  };
  Layout.GroupName = Dist;
  Layout.Compression = Opts.Compression;
  Layout.Threads = Opts.Threads;
  ArchiveSet Archives(std::move(Layout));
  for (size_t B = 0; B < Bins.size(); ++B) {
    const std::string &Key = Items[BinItem[B]].Installed;
    for (const CodeObjectRef &C : Objects[B])
      if (SelectedSet.count(C.TargetId))
        if (Error E = Archives.add(Key + "#" + std::to_string(C.Index), C,
                                   {{"target", C.EntryId}}))
          return E;
  }
  std::map<std::string, std::string> ArchiveOf; // target -> file
  if (!Archives.empty()) {
    Expected<std::vector<WrittenArchive>> Written = Archives.write();
    if (!Written)
      return Written.takeError();
    for (const WrittenArchive &A : *Written)
      ArchiveOf[A.TargetId] = A.Path;
  }

  // The host wheel.
  const ZipEntry *MetadataEntry = Zip.find(W.distInfoDir().str() + "/METADATA");
  ZipMethod TextMethod = MetadataEntry->Method;
  ZipMethod BinaryMethod = ZipMethod::Deflated;
  if (!BinItem.empty())
    BinaryMethod = Items[BinItem.front()].E->Method;
  WheelSplitResult Result;
  WheelBuilder Host(HostPath, W.distInfoDir().str(), TextMethod);
  std::map<std::string, std::vector<const Item *>> DatabaseItems;
  for (const Item &It : Items) {
    const ZipEntry &E = *It.E;
    if (!It.DatabaseTarget.empty()) {
      if (SelectedSet.count(It.DatabaseTarget)) {
        DatabaseItems[It.DatabaseTarget].push_back(&It);
        ++Result.DatabaseFiles;
      } else {
        ++Result.DroppedFiles;
      }
      continue;
    }
    if (It.Binary >= 0) {
      const FatHostBinary &Bin = Bins[It.Binary];
      Expected<std::vector<uint8_t>> Meta = encodeMetadata(
          It.Installed, {searchPathFor(It.Installed, Dist)});
      if (!Meta)
        return Meta.takeError();
      Expected<std::vector<uint8_t>> Image = Bin.rewrite(*Meta);
      if (!Image)
        return Fail(quoteInput(E.Name) + ": " + toString(Image.takeError()));
      Host.addBytes(E.Name, std::move(*Image), E.Method,
                    zipFileMode(E.unixMode()));
      ++Result.ConvertedBinaries;
      continue;
    }
    if (&E == MetadataEntry)
      continue;
    Host.addRaw(E.Name, Zip, E, It.Row);
  }

  // METADATA: one extra per device wheel (core metadata 2.1 has
  // Provides-Extra).
  WheelHeaderFile Metadata = W.metadata();
  if (metadataVersion(Metadata) < std::make_pair(2u, 1u))
    Metadata.set("Metadata-Version", "2.1");
  StringSet<> Extras;
  for (const std::string &X : Metadata.getAll("Provides-Extra"))
    Extras.insert(normalizeDistributionName(StringRef(X).trim()));
  for (const std::string &T : Selected) {
    std::string Extra = deviceExtraName(T);
    if (Extras.insert(normalizeDistributionName(Extra)).second)
      Metadata.append("Provides-Extra", Extra);
    Metadata.append("Requires-Dist", deviceDistributionName(Dist, T) +
                                         "==" + W.version().str() +
                                         "; extra == \"" + Extra + "\"");
  }
  Host.addText(MetadataEntry->Name, Metadata.str(), TextMethod);
  if (Error E = Host.write())
    return E;

  // One device wheel per target.
  std::vector<std::pair<std::string, std::unique_ptr<WheelBuilder>>> Devices;
  for (const std::string &T : Selected) {
    WheelName DevName = W.name();
    DevName.Distribution = deviceDistributionName(Dist, T);
    std::string DevDistInfo = DevName.distInfoDir();
    auto Dev = std::make_unique<WheelBuilder>(
        Opts.OutputDir + "/" + DevName.fileName(), DevDistInfo, TextMethod);
    auto A = ArchiveOf.find(T);
    if (A != ArchiveOf.end())
      Dev->addFile(KpackDir + "/" + Dist + "_" + T + ".kpack", A->second,
                   Opts.Compression.Scheme == ArchiveCompression::None
                       ? BinaryMethod
                       : ZipMethod::Stored,
                   ZipDefaultFileMode);
    std::string HostData = W.dataDir() + "/";
    for (const Item *It : DatabaseItems[T]) {
      StringRef Name = It->E->Name;
      std::string DevPath = Name.consume_front(HostData)
                                ? DevName.dataDir() + "/" + Name.str()
                                : Name.str();
      Dev->addRaw(DevPath, Zip, *It->E, It->Row);
    }
    std::string WheelText = "Wheel-Version: 1.0\nGenerator: kpack split-wheel\n"
                            "Root-Is-Purelib: " +
                            std::string(W.rootIsPurelib() ? "true" : "false") +
                            "\n";
    for (const std::string &Tag : W.tags())
      WheelText += "Tag: " + Tag + "\n";
    if (std::optional<std::string> Build = W.wheelFile().get("Build"))
      WheelText += "Build: " + *Build + "\n";
    Dev->addText(DevDistInfo + "/WHEEL", WheelText, TextMethod);
    std::string MetadataText =
        "Metadata-Version: 2.1\nName: " + DevName.Distribution +
        "\nVersion: " + W.version().str() + "\nSummary: " + T +
        " device code of " + W.projectName().str() + " " + W.version().str() +
        " (kpack archive)\nRequires-Dist: " + W.projectName().str() +
        "==" + W.version().str() + "\n";
    Dev->addText(DevDistInfo + "/METADATA", MetadataText, TextMethod);
    if (Error E = Dev->write())
      return E;
    Devices.emplace_back(T, std::move(Dev));
  }

  // Everything is written: make it visible.
  Expected<WrittenWheel> HostDone = Host.commit("");
  if (!HostDone)
    return HostDone.takeError();
  Result.Host = std::move(*HostDone);
  for (auto &[T, Dev] : Devices) {
    Expected<WrittenWheel> Done = Dev->commit(T);
    if (!Done)
      return Done.takeError();
    Result.Devices.push_back(std::move(*Done));
  }
  return Result;
}

Expected<WrittenWheel> kpack::recombineWheels(StringRef HostPath,
                                              ArrayRef<std::string> DevicePaths,
                                              StringRef Output) {
  Expected<WheelFile> HostOpened = WheelFile::open(HostPath);
  if (!HostOpened)
    return HostOpened.takeError();
  const WheelFile &H = *HostOpened;
  Expected<WheelName> OutName = WheelName::parse(Output);
  if (!OutName)
    return OutName.takeError();
  if (normalizeDistributionName(OutName->Distribution) !=
          normalizeDistributionName(H.name().Distribution) ||
      OutName->Version != H.name().Version ||
      OutName->tags() != H.name().tags())
    return makeError("output '" + Output + "' must be named like the host "
                     "wheel '" + H.name().fileName() +
                     "' (same distribution, version and tags; the build "
                     "tag may differ)");
  std::vector<std::string> Inputs{HostPath.str()};
  Inputs.insert(Inputs.end(), DevicePaths.begin(), DevicePaths.end());
  if (sys::fs::exists(Output))
    if (Error E = checkNotAnInput(Output, Inputs))
      return E;

  const std::string Dist = wheelFileDistributionName(H.projectName());
  const std::string DevicePrefix = normalizeDistributionName(Dist) + "-device-";
  const ZipEntry *MetadataEntry =
      H.zip().find(H.distInfoDir().str() + "/METADATA");
  const ZipEntry *WheelEntry = H.zip().find(H.distInfoDir().str() + "/WHEEL");
  bool RewriteWheel = OutName->Build != H.name().Build;
  WheelBuilder Out(Output.str(), H.distInfoDir().str(), MetadataEntry->Method);
  std::map<std::string, std::string> Owner; // entry -> wheel holding it
  auto Claim = [&](const std::string &Name, StringRef Wheel) -> Error {
    auto [It, New] = Owner.try_emplace(Name, Wheel.str());
    if (!New)
      return makeError(quoteInput(Name) + " is in both '" + It->second +
                       "' and '" + Wheel + "'");
    return Error::success();
  };

  for (const ZipEntry &E : H.zip().entries()) {
    if (E.isDirectory() || H.isRecordFile(E.Name))
      continue;
    Expected<RecordEntry> Row = H.readVerified(E, nullptr);
    if (!Row)
      return Row.takeError();
    if (Error Err = Claim(E.Name, HostPath))
      return Err;
    if (&E != MetadataEntry && !(RewriteWheel && &E == WheelEntry))
      Out.addRaw(E.Name, H.zip(), E, std::move(*Row));
  }

  std::vector<WheelFile> Devices;
  StringSet<> Included; // normalised device distribution names
  for (const std::string &DevPath : DevicePaths) {
    Expected<WheelFile> D = WheelFile::open(DevPath);
    if (!D)
      return D.takeError();
    auto Fail = [&](const Twine &Msg) {
      return makeError("'" + DevPath + "': " + Msg);
    };
    std::string DevNorm = normalizeDistributionName(D->projectName());
    if (!StringRef(DevNorm).starts_with(DevicePrefix))
      return Fail("not a device wheel of " + quoteInput(H.projectName()) +
                  " (its distribution is " + quoteInput(D->projectName()) + ")");
    bool Pinned = false;
    for (const std::string &Req : D->metadata().getAll("Requires-Dist"))
      if (auto Pin = pinnedRequirement(Req))
        if (normalizeDistributionName(Pin->first) ==
                normalizeDistributionName(H.projectName()) &&
            Pin->second == H.version())
          Pinned = true;
    if (!Pinned)
      return Fail("does not require " + quoteInput(H.projectName()) + "==" +
                  quoteInput(H.version()) + " (split from another version?)");
    if (D->name().tags() != H.name().tags())
      return Fail("tags " + D->name().tags() + " differ from the host "
                  "wheel's " + H.name().tags());
    if (D->rootIsPurelib() != H.rootIsPurelib())
      return Fail("Root-Is-Purelib differs from the host wheel's");
    if (!Included.insert(DevNorm).second)
      return Fail("a device wheel of the same distribution was given before");
    Devices.push_back(std::move(*D));
  }
  for (const WheelFile &D : Devices) {
    std::string DevData = D.dataDir() + "/";
    for (const ZipEntry &E : D.zip().entries()) {
      if (E.isDirectory() || inDistInfo(D, E.Name) || D.isRecordFile(E.Name))
        continue;
      Expected<RecordEntry> Row = D.readVerified(E, nullptr);
      if (!Row)
        return Row.takeError();
      StringRef Name = E.Name;
      std::string OutPath = Name.consume_front(DevData)
                                ? H.dataDir() + "/" + Name.str()
                                : Name.str();
      if (Error Err = Claim(OutPath, D.path()))
        return Err;
      Out.addRaw(OutPath, D.zip(), E, std::move(*Row));
    }
  }

  // METADATA: the included device wheels are no longer requirements (their
  // extras stay, so `pkg[gfx942]` still resolves).
  WheelHeaderFile Metadata = H.metadata();
  Metadata.removeIf([&](StringRef Field, StringRef Value) {
    if (!Field.equals_insensitive("Requires-Dist"))
      return false;
    auto Pin = pinnedRequirement(Value);
    return Pin && Included.count(normalizeDistributionName(Pin->first));
  });
  Out.addText(MetadataEntry->Name, Metadata.str(), MetadataEntry->Method);
  if (RewriteWheel) {
    // WHEEL's Build field follows the file name's build tag.
    WheelHeaderFile Wheel = H.wheelFile();
    if (OutName->Build.empty())
      Wheel.removeIf(
          [](StringRef F, StringRef) { return F.equals_insensitive("Build"); });
    else
      Wheel.set("Build", OutName->Build);
    Out.addText(WheelEntry->Name, Wheel.str(), WheelEntry->Method);
  }
  // Everything checked: the output directory may appear now.
  StringRef OutDir = sys::path::parent_path(Output);
  if (!OutDir.empty())
    if (std::error_code EC = sys::fs::create_directories(OutDir))
      return makeError("cannot create '" + OutDir + "': " + EC.message());
  if (Error E = Out.write())
    return E;
  return Out.commit("");
}
