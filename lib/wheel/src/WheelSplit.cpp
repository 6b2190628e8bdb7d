//===- WheelSplit.cpp - Host and device wheels ----------------------------===//
//
// split: every entry of the fat wheel is read once (checked against RECORD,
// host images, ELF or PE, extracted to a scratch directory), fat binaries
// are converted through the emission library into one archive per target,
// and the host and device wheels are written in `wheel`'s order with fresh RECORDs.
// Unchanged entries are copied as stored (same compressed bytes and
// method). recombine: the same for a host wheel plus device wheels.
//
//===----------------------------------------------------------------------===//

#include "kpack/WheelSplit.h"

#include "kpack/AtomicFile.h"
#include "kpack/BundleKeys.h"
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

#include <sys/stat.h>
#include <unistd.h>

#include <cstring>

using namespace llvm;
using namespace kpack;

namespace {

/// The outputs of one split: everything is written into a staging tree
/// inside the output directory (scratch files too, unless --tmp-dir names
/// another place), then moved into place together (commitPathsTogether:
/// outputs of the same names already there are put back if any step fails
/// or a signal arrives). The staging and scratch trees are OutputDirectories
/// trees: removed at the end, and on SIGINT, SIGTERM and SIGHUP.
class OutputTransaction {
public:
  Error open(StringRef OutputDir, StringRef TmpDir) {
    this->OutputDir = OutputDir.str();
    if (Error E = toError(
            Trees.createTree(this->OutputDir, ".kpack-split-wheel", Staging)))
      return E;
    if (!TmpDir.empty())
      return toError(
          Trees.createTree(TmpDir.str(), ".kpack-split-wheel", Scratch));
    Scratch = Staging + "/scratch";
    if (std::error_code EC = sys::fs::create_directory(Scratch))
      return makeError("cannot create '" + Scratch + "': " + EC.message());
    return Error::success();
  }

  const std::string &scratch() const { return Scratch; }
  /// Where the output named Name is staged.
  std::string staged(StringRef Name) const { return Staging + "/" + Name.str(); }

  /// Moves the staged outputs Names into the output directory, all or none.
  Error commit(ArrayRef<std::string> Names) {
    std::vector<StagedPath> Paths;
    for (const std::string &N : Names)
      Paths.push_back({staged(N), OutputDir + "/" + N});
    return toError(commitPathsTogether(Paths));
  }

private:
  std::string OutputDir, Staging, Scratch;
  OutputDirectories Trees; ///< Staging and Scratch; undone on destruction
};

/// Recognises host images (x86-64 ELF executables and shared objects, PE32+
/// x86-64 EXEs and DLLs: hostImageFormat) from their first bytes as they
/// stream, and copies such a file to a scratch file: no more than the
/// entry's size in the central directory (Size), and only if that much is
/// free where the scratch file goes (a zip bomb's host image would fill the
/// disk). What names the entry in errors.
class HostImageExtractor {
public:
  HostImageExtractor(std::string Path, uint64_t Size, std::string What)
      : Path(std::move(Path)), What(std::move(What)), Size(Size) {}
  Error feed(ArrayRef<uint8_t> Chunk) {
    if (State == Rejected)
      return Error::success();
    if (State == Sniffing) {
      size_t N = std::min(Chunk.size(), Head.size() - HeadLen);
      std::copy_n(Chunk.begin(), N, Head.begin() + HeadLen);
      HeadLen += N;
      if (HeadLen < Head.size())
        return Error::success();
      if (Error E = decide())
        return E;
      return State == Copying ? write(Chunk.drop_front(N)) : Error::success();
    }
    return write(Chunk);
  }
  /// True if the whole file was a host image, now in the scratch file.
  Expected<bool> finish() {
    if (State == Sniffing) // shorter than the head
      if (Error E = decide())
        return E;
    if (State != Copying)
      return false;
    if (Error E = toError(Out.commit()))
      return E;
    return true;
  }

private:
  Error decide() {
    StringRef H(reinterpret_cast<const char *>(Head.data()), HeadLen);
    if (hostImageFormat(H) == HostImageFormat::None) {
      State = Rejected;
      return Error::success();
    }
    State = Copying;
    StringRef Dir = sys::path::parent_path(Path);
    ErrorOr<sys::fs::space_info> Space = sys::fs::disk_space(Dir);
    if (!Space)
      return makeError(What + ": cannot find the free space in '" + Dir +
                       "': " + Space.getError().message());
    if (Size > Space->available)
      return makeError(
          What + ": " + Twine(Size) +
          " bytes (its size in the central directory) do not fit in the " +
          Twine(Space->available) + " bytes free in '" + Dir +
          "' (--tmp-dir names another scratch directory)");
    if (Error E = toError(Out.open(Path)))
      return E;
    return write(ArrayRef<uint8_t>(Head.data(), HeadLen));
  }
  Error write(ArrayRef<uint8_t> Bytes) {
    // ZipReader::read stops at the declared size too; the scratch file
    // never holds more, whatever the reader hands out.
    if (Bytes.size() > Size - Written)
      return makeError(What +
                       ": more than its size in the central directory (" +
                       Twine(Size) + " bytes)");
    Written += Bytes.size();
    return toError(Out.write(Bytes.data(), Bytes.size()));
  }

  enum { Sniffing, Rejected, Copying } State = Sniffing;
  std::array<uint8_t, HostImageHeadSize> Head{};
  size_t HeadLen = 0;
  std::string Path, What;
  uint64_t Size, Written = 0;
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
  std::optional<Requirement> R = parseRequirement(Value);
  if (!R || R->Version.empty())
    return std::nullopt;
  return std::make_pair(R->Name, R->Version);
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

  Expected<WrittenWheel> commit(std::string BundleKey) {
    if (Error E = Zip->commit())
      return E;
    return WrittenWheel{Path, std::move(BundleKey), Zip->size(), Files};
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

/// The bundle key of database files left out (unselected targets that no
/// bundle covers); no bundle key has this form.
constexpr const char *DroppedKey = "-";

bool inDistInfo(const WheelFile &W, StringRef Name) {
  return Name.consume_front(W.distInfoDir()) && Name.starts_with("/");
}

/// The search path from a binary at RelPath (relative to the overlay root)
/// to its archives, as upstream writes it: "../" per directory level, then
/// ".kpack/<group>_@GFXARCH@.kpack".
std::string searchPathFor(StringRef RelPath, StringRef Group) {
  std::string Up;
  for (char C : RelPath)
    if (C == '/')
      Up += "../";
  return Up + ".kpack/" + Group.str() + "_@GFXARCH@.kpack";
}

/// An absolute form of Path (relative paths are taken from the current
/// directory).
std::string absolutePath(StringRef Path) {
  SmallString<256> P(Path);
  sys::fs::make_absolute(P);
  sys::path::remove_dots(P, /*remove_dot_dot=*/true);
  return P.str().str();
}

/// One GPU the split serves: what its `device-<gpu>` extra requires and
/// the archives it loads.
struct ServedGpu {
  /// Produced bundles, those of the GPU's packaging chain first (chain
  /// order), then the others holding an archive it loads (sorted).
  std::vector<std::string> Bundles;
  std::vector<std::string> TargetIds; ///< archives' target IDs it loads
};

/// The GPUs served by the bundles Keys (ArchivesOf: bundle key -> target ID
/// -> archive): a target-level bundle serves its GPU, and a bundle serves
/// every GPU that loads the target ID of one of its archives, by the
/// loader's fallback from a processor to its generic processor
/// (processorsServedBy, core's table: a gfx11-generic archive serves
/// gfx1100 ... gfx1153). Features are not told apart, as the bundle keys
/// do not tell them apart (a gfx90a:xnack+ archive serves gfx90a).
std::map<std::string, ServedGpu> servedGpus(
    const std::set<std::string> &Keys,
    const std::map<std::string, std::map<std::string, std::string>>
        &ArchivesOf) {
  std::map<std::string, std::set<std::string>> Serving;
  std::map<std::string, ServedGpu> Out;
  for (const std::string &K : Keys)
    if (lookupBundle(K)->Level == BundleLevel::Target)
      Out[K];
  for (const auto &[K, Archives] : ArchivesOf)
    for (const auto &[T, Path] : Archives)
      if (std::optional<TargetId> Id = parseTargetId(T))
        for (const std::string &Gpu : processorsServedBy(Id->Processor)) {
          Serving[Gpu].insert(K);
          Out[Gpu].TargetIds.push_back(T);
        }
  for (auto &[Gpu, S] : Out) {
    for (const PackagingBundle &B : packagingChain(Gpu))
      if (Keys.count(B.Key))
        S.Bundles.push_back(B.Key);
    for (const std::string &K : Serving[Gpu])
      if (!is_contained(S.Bundles, K))
        S.Bundles.push_back(K);
    llvm::sort(S.TargetIds);
  }
  return Out;
}

/// <dist-info>/kpack_gpus.txt of the host wheel: one line per GPU served,
/// "<gpu>" and the target IDs of the archives it loads, space-separated.
std::string gpusText(const std::map<std::string, ServedGpu> &Gpus) {
  std::string S;
  for (const auto &[Gpu, Served] : Gpus) {
    S += Gpu;
    for (const std::string &T : Served.TargetIds)
      S += " " + T;
    S += "\n";
  }
  return S;
}

/// Python's json.dumps(indent=2) of the variant metadata (FORMAT.md §6).
std::string variantJson(ArrayRef<std::string> Targets) {
  auto List = [](ArrayRef<std::string> Items, StringRef Indent) {
    if (Items.empty())
      return std::string("[]");
    std::string S = "[\n";
    for (size_t I = 0; I < Items.size(); ++I)
      S += Indent.str() + "  \"" + Items[I] + "\"" +
           (I + 1 < Items.size() ? ",\n" : "\n");
    return S + Indent.str() + "]";
  };
  std::string S = "{\n"
                  "  \"providers\": {\n"
                  "    \"amd\": {\n"
                  "      \"install-time\": true,\n"
                  "      \"plugin-api\": "
                  "\"amd_variant_provider.plugin:AMDVariantPlugin\",\n"
                  "      \"requires\": [\n"
                  "        \"amd-variant-provider >= 1.0\"\n"
                  "      ]\n"
                  "    }\n"
                  "  },\n"
                  "  \"default-priorities\": {\n"
                  "    \"namespace\": [\n"
                  "      \"amd\"\n"
                  "    ],\n"
                  "    \"property\": {\n"
                  "      \"amd\": {\n"
                  "        \"gfx_arch\": " +
                  List(Targets, "        ") +
                  "\n"
                  "      }\n"
                  "    }\n"
                  "  },\n"
                  "  \"variants\": ";
  if (Targets.empty()) {
    S += "{}";
  } else {
    S += "{\n";
    for (size_t I = 0; I < Targets.size(); ++I)
      S += "    \"" + Targets[I] + "\": {\n      \"amd\": {\n" +
           "        \"gfx_arch\": " + List({Targets[I]}, "        ") +
           "\n      }\n    }" + (I + 1 < Targets.size() ? ",\n" : "\n");
    S += "  }";
  }
  return S + "\n}\n";
}

/// Unpacks the wheel just written at WheelPath into the directory Dir as
/// pip and installer unpack a wheel: each file's permission bits (no
/// setuid, setgid or sticky: zipFileMode) less the process's umask; returns
/// the number of files.
Expected<unsigned> explodeWheel(StringRef WheelPath, StringRef Dir) {
  Expected<ZipReader> Z = ZipReader::open(WheelPath);
  if (!Z)
    return Z.takeError();
  const unsigned Umask = sys::fs::getUmask();
  unsigned Files = 0;
  for (const ZipEntry &E : Z->entries()) {
    if (E.isDirectory())
      continue;
    SmallString<256> Path(Dir);
    sys::path::append(Path, sys::path::Style::posix, E.Name);
    if (std::error_code EC =
            sys::fs::create_directories(sys::path::parent_path(Path)))
      return makeError("cannot create '" + sys::path::parent_path(Path) +
                       "': " + EC.message());
    std::error_code EC;
    raw_fd_ostream OS(Path, EC, sys::fs::OF_None);
    if (EC)
      return makeError("cannot write '" + Path + "': " + EC.message());
    if (Error Err = Z->read(E, [&](ArrayRef<uint8_t> C) {
          OS.write(reinterpret_cast<const char *>(C.data()), C.size());
          return Error::success();
        }))
      return Err;
    OS.close();
    if (OS.has_error())
      return makeError("cannot write '" + Path + "': " + OS.error().message());
    uint32_t Mode = zipFileMode(E.unixMode()) & 0777 & ~Umask;
    if (std::error_code EC =
            sys::fs::setPermissions(Path, static_cast<sys::fs::perms>(Mode)))
      return makeError("cannot set the mode of '" + Path +
                       "': " + EC.message());
    ++Files;
  }
  return Files;
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

Expected<WheelSplitResult> kpack::splitWheel(StringRef FatArg,
                                             const WheelSplitOptions &Opts) {
  const std::string FatPath = absolutePath(FatArg);
  const std::string OutputDir = absolutePath(Opts.OutputDir);
  auto Log = [&](const Twine &Line) {
    if (Opts.Log)
      Opts.Log(Line.str());
  };
  Expected<WheelFile> Opened = WheelFile::open(FatPath);
  if (!Opened)
    return Opened.takeError();
  const WheelFile &W = *Opened;
  const ZipReader &Zip = W.zip();
  auto Fail = [&](const Twine &Msg) {
    return makeError("'" + FatArg + "': " + Msg);
  };

  Expected<std::vector<const DatabaseHandler *>> Handlers =
      databaseHandlersNamed(Opts.DatabaseHandlers);
  if (!Handlers)
    return Handlers.takeError();
  bool Aotriton = llvm::any_of(*Handlers, [](const DatabaseHandler *H) {
    return H->name() == "aotriton";
  });
  std::set<std::string> Requested;
  for (const std::string &T : Opts.Targets) {
    Expected<std::string> C = canonicalTarget(T, "--targets");
    if (!C)
      return C.takeError();
    Requested.insert(*C);
  }

  // Names: the group (archive names) and the device distributions'
  // prefix, as upstream derives them.
  const std::string Name = W.projectName().str();
  const std::string Version = W.version().str();
  std::string Group = StringRef(Name).lower();
  std::replace(Group.begin(), Group.end(), '-', '_');
  const std::string Prefix =
      Opts.DevicePackagePrefix.empty()
          ? normalizeDistributionName(Name) + "-device"
          : Opts.DevicePackagePrefix;
  if (!isValidDistributionName(Prefix))
    return makeError("--device-package-prefix: " + quoteInput(Prefix) +
                     " is not a valid distribution name");

  // The overlay root: given, or top_level.txt's one name.
  std::string Overlay = StringRef(Opts.OverlayRoot).trim("/").str();
  if (Overlay.empty()) {
    const ZipEntry *Top = Zip.find(W.distInfoDir().str() + "/top_level.txt");
    Expected<std::string> Text =
        Top ? Zip.readAll(*Top, 1 << 20) : Expected<std::string>("");
    if (!Text)
      return Text.takeError();
    SmallVector<StringRef, 4> Names;
    StringRef(*Text).split(Names, '\n', -1, /*KeepEmpty=*/false);
    for (StringRef &N : Names)
      N = N.trim();
    llvm::erase_if(Names, [](StringRef N) { return N.empty(); });
    if (Names.size() != 1)
      return Fail("give --overlay-root: top_level.txt does not name exactly "
                  "one package");
    Overlay = Names.front().str();
  }
  const std::string OverlayDir = Overlay + "/";
  if (llvm::none_of(Zip.entries(), [&](const ZipEntry &E) {
        return StringRef(E.Name).starts_with(OverlayDir);
      }))
    return Fail("overlay root " + quoteInput(OverlayDir) +
                " does not exist in the wheel");

  // A wheel split before has archives under .kpack/ or device extras.
  for (const ZipEntry &E : Zip.entries())
    if (StringRef(E.Name).starts_with(OverlayDir + ".kpack/"))
      return Fail("already split: it holds " + quoteInput(E.Name));
  for (const std::string &X : W.metadata().getAll("Provides-Extra"))
    if (StringRef(X).trim() == "device-all")
      return Fail("already split: METADATA provides the extra 'device-all'");

  if (std::error_code EC = sys::fs::create_directories(OutputDir))
    return makeError("cannot create '" + Opts.OutputDir +
                     "': " + EC.message());
  if (!Opts.TmpDir.empty())
    if (std::error_code EC = sys::fs::create_directories(Opts.TmpDir))
      return makeError("cannot create '" + Opts.TmpDir + "': " + EC.message());
  const std::string HostFile = W.name().fileName();
  const std::string HostOut =
      Opts.DirectoryOutput ? StringRef(HostFile).drop_back(4).str() : HostFile;
  if (Error E = checkNotAnInput(OutputDir + "/" + HostFile, {FatPath}))
    return E;
  OutputTransaction Txn;
  if (Error E = Txn.open(OutputDir, Opts.TmpDir.empty()
                                        ? ""
                                        : absolutePath(Opts.TmpDir)))
    return E;
  const std::string Scratch = Txn.scratch();

  // Read every entry once: checked against RECORD, classified, host images
  // (x86-64 ELF, PE32+) extracted.
  struct Item {
    const ZipEntry *E;
    RecordEntry Row;
    std::string Rel;       ///< path below the overlay root; empty: outside
    std::string DatabaseKey; ///< set: a database file of that bundle
    std::string DatabaseTarget; ///< its target ID, if it names one
    int Binary = -1;       ///< index into Bins: a converted fat binary
  };
  std::vector<Item> Items;
  std::vector<FatHostBinary> Bins;
  std::vector<size_t> BinItem;
  WheelSplitResult Result;
  for (const ZipEntry &E : Zip.entries()) {
    if (E.isDirectory() || W.isRecordFile(E.Name))
      continue; // wheel writes no directory entries; RECORD is rewritten
    Item It{&E, {}, "", "", "", -1};
    StringRef Name = E.Name;
    if (Name.consume_front(OverlayDir))
      It.Rel = Name.str();
    bool Meta = inDistInfo(W, E.Name);
    if (!It.Rel.empty()) {
      if (std::optional<DatabaseFile> DB =
              matchDatabaseFile(*Handlers, It.Rel)) {
        // A handler may name no target ID for AOTriton's family
        // directories ("amd-gfx11xx"); their bundle is the directory's.
        std::optional<std::string> Key = bundleKeyFor(DB->TargetId);
        if (!Key)
          Key = aotritonFamilyBundle(It.Rel);
        std::optional<TargetId> T =
            parseTargetId(StringRef(DB->TargetId).trim().str());
        if (T)
          It.DatabaseTarget = T->str();
        if (!Key && T && !Requested.empty() && !Requested.count(T->str()))
          Key = std::string(DroppedKey); // of an unselected target
        if (!Key)
          return Fail("database file " + quoteInput(E.Name) + ": no device "
                      "wheel for target " + quoteInput(DB->TargetId) +
                      " (bundles: " + knownBundleKeys() +
                      "); leave it out with --targets");
        It.DatabaseKey = *Key;
      } else if (Aotriton) {
        if (std::optional<std::string> Key = aotritonFamilyBundle(It.Rel))
          It.DatabaseKey = *Key;
      }
    }
    std::string Extracted = Scratch + "/entry-" + std::to_string(Items.size());
    HostImageExtractor Image(Extracted, E.UncompressedSize,
                             "'" + W.path().str() + "': entry " +
                                 quoteInput(E.Name));
    bool Sniff = !Meta && It.DatabaseKey.empty();
    Expected<RecordEntry> Row = W.readVerified(E, [&](ArrayRef<uint8_t> C) {
      return Sniff ? Image.feed(C) : Error::success();
    });
    if (!Row)
      return Row.takeError();
    It.Row = std::move(*Row);
    Expected<bool> IsImage = Sniff ? Image.finish() : Expected<bool>(false);
    if (!IsImage)
      return IsImage.takeError();
    if (*IsImage) {
      Expected<FatHostBinary> Bin = FatHostBinary::open(Extracted);
      if (!Bin)
        return Fail(quoteInput(E.Name) + ": " + toString(Bin.takeError()));
      if (Bin->isConvertible() && It.Rel.empty()) {
        Result.FatOutsideOverlay.push_back(E.Name);
        sys::fs::remove(Extracted);
      } else if (Bin->isConvertible()) {
        It.Binary = static_cast<int>(Bins.size());
        Bins.push_back(std::move(*Bin));
        BinItem.push_back(Items.size());
        Log("fat binary: " + E.Name);
      } else {
        sys::fs::remove(Extracted);
      }
    }
    Items.push_back(std::move(It));
  }
  if (Bins.empty())
    return Fail("no fat binaries found under " + quoteInput(OverlayDir));

  // The code objects, and the targets the wheel holds.
  std::vector<std::vector<CodeObjectRef>> Objects;
  std::set<std::string> Found;
  for (size_t B = 0; B < Bins.size(); ++B) {
    Expected<std::vector<CodeObjectRef>> Objs = Bins[B].codeObjects();
    if (!Objs)
      return Fail(quoteInput(Items[BinItem[B]].E->Name) + ": " +
                  toString(Objs.takeError()));
    for (const CodeObjectRef &C : *Objs) {
      if (!bundleKeyFor(C.TargetId) &&
          (Requested.empty() || Requested.count(C.TargetId)))
        return Fail(quoteInput(Items[BinItem[B]].E->Name) +
                    ": no device wheel for target " + quoteInput(C.TargetId) +
                    " (bundles: " + knownBundleKeys() +
                    "); leave it out with --targets");
      Found.insert(C.TargetId);
    }
    Objects.push_back(std::move(*Objs));
  }
  for (const Item &It : Items)
    if (!It.DatabaseTarget.empty())
      Found.insert(It.DatabaseTarget);
  for (const std::string &T : Requested)
    if (!Found.count(T))
      return Fail("no code object or database file for target " + quoteInput(T) +
                  " (the wheel has: " +
                  join(std::vector<std::string>(Found.begin(), Found.end()),
                       ", ") +
                  ")");
  auto Selected = [&](StringRef T) {
    return Requested.empty() || Requested.count(T.str());
  };
  // Bundle keys kept by --targets: the selected targets' chains.
  std::set<std::string> KeptKeys;
  for (const std::string &T : Found)
    if (Selected(T))
      if (std::optional<std::string> K = bundleKeyFor(T)) {
        KeptKeys.insert(*K);
        for (const PackagingBundle &B : packagingChain(*K))
          KeptKeys.insert(B.Key);
      }
  auto KeepDatabase = [&](const Item &It) {
    if (Requested.empty())
      return true;
    if (!It.DatabaseTarget.empty())
      return Selected(It.DatabaseTarget);
    return KeptKeys.count(It.DatabaseKey) > 0;
  };

  // One archive per target ID, keys <path below the overlay root>#N.
  ArchiveLayout Layout;
  std::string ArchiveRoot = Scratch + "/archives";
  Layout.PathForTarget = [&](StringRef T) {
    return ArchiveRoot + "/" + T.str() + "/" + Group + "_" + T.str() +
           ".kpack";
  };
  Layout.GroupName = Group;
  Layout.Compression = Opts.Compression;
  Layout.Threads = Opts.Threads;
  // Each library and its entries carry their link identity.
  Layout.LinkIdentity = true;
  ArchiveSet Archives(std::move(Layout));
  for (size_t B = 0; B < Bins.size(); ++B) {
    const std::string &Key = Items[BinItem[B]].Rel;
    for (const CodeObjectRef &C : Objects[B])
      if (Selected(C.TargetId))
        if (Error E = Archives.add(Key + "#" + std::to_string(C.Index), C,
                                   {{"target", C.EntryId}}))
          return E;
  }
  // bundle key -> (target ID -> archive file)
  std::map<std::string, std::map<std::string, std::string>> ArchivesOf;
  std::map<std::string, std::string> LinkIds; // key name -> its link_id
  if (!Archives.empty()) {
    // Committed into the scratch directory, which the device wheels take
    // them from.
    Expected<ArchiveSet::Prepared> Written = Archives.prepare();
    if (!Written)
      return Written.takeError();
    if (Error E = Written->commit())
      return std::move(E);
    LinkIds = std::move(Written->LinkIds);
    for (const WrittenArchive &A : Written->Archives) {
      ArchivesOf[*bundleKeyFor(A.TargetId)][A.TargetId] = A.Path;
      Log("archive " + A.TargetId + ": " + A.Path);
    }
  }
  for (const std::string &T : Found)
    if (Selected(T))
      Result.Architectures.push_back(T);

  // The database files of each bundle.
  std::map<std::string, std::vector<const Item *>> DatabaseItems;
  for (const Item &It : Items) {
    if (It.DatabaseKey.empty())
      continue;
    if (It.DatabaseKey != DroppedKey && KeepDatabase(It)) {
      DatabaseItems[It.DatabaseKey].push_back(&It);
      ++Result.DatabaseFiles;
    } else {
      ++Result.DroppedFiles;
    }
  }
  std::set<std::string> Keys;
  for (const auto &[K, A] : ArchivesOf)
    Keys.insert(K);
  for (const auto &[K, Files] : DatabaseItems)
    Keys.insert(K);
  // One extra per GPU served (sorted).
  std::map<std::string, ServedGpu> Gpus = servedGpus(Keys, ArchivesOf);
  std::vector<std::string> GpuNames;
  for (const auto &[Gpu, Served] : Gpus)
    GpuNames.push_back(Gpu);
  Result.Gpus = GpuNames;

  // The host wheel.
  const ZipEntry *MetadataEntry = Zip.find(W.distInfoDir().str() + "/METADATA");
  ZipMethod TextMethod = MetadataEntry->Method;
  ZipMethod BinaryMethod = Items[BinItem.front()].E->Method;
  auto StageWheel = [&](const std::string &File) {
    return Txn.staged(File);
  };
  WheelBuilder Host(StageWheel(HostFile), W.distInfoDir().str(), TextMethod);
  const std::string GpusName = W.distInfoDir().str() + "/kpack_gpus.txt";
  for (const Item &It : Items) {
    const ZipEntry &E = *It.E;
    if (!It.DatabaseKey.empty())
      continue;
    if (It.Binary >= 0) {
      const FatHostBinary &Bin = Bins[It.Binary];
      auto Id = LinkIds.find(It.Rel); // none: no entry written for it
      Expected<std::vector<uint8_t>> Meta = encodeMetadata(
          It.Rel, {searchPathFor(It.Rel, Group)},
          Id == LinkIds.end() ? "" : StringRef(Id->second));
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
    if (&E == MetadataEntry || E.Name == GpusName)
      continue; // both written below
    Host.addRaw(E.Name, Zip, E, It.Row);
  }

  // Host METADATA (upstream's order): rocm-bootstrap, per GPU served an
  // extra requiring every bundle of its chain that this split produced and
  // every bundle whose archives it loads, and device-all requiring every
  // device wheel.
  WheelHeaderFile Metadata = W.metadata();
  if (metadataVersion(Metadata) < std::make_pair(2u, 1u))
    Metadata.set("Metadata-Version", "2.1");
  Metadata.append("Requires-Dist", "rocm-bootstrap");
  struct Pin {
    std::string Dist, Target;
  };
  std::vector<Pin> Pins; // extra lines, for the variant wheel
  for (const std::string &T : GpuNames) {
    Metadata.append("Provides-Extra", "device-" + T);
    for (const std::string &B : Gpus[T].Bundles) {
      Pins.push_back({deviceDistName(Prefix, B), T});
      Metadata.append("Requires-Dist", Pins.back().Dist + " == " + Version +
                                           "; extra == \"device-" + T + "\"");
    }
  }
  Metadata.append("Provides-Extra", "device-all");
  std::set<std::string> AllDists;
  for (const std::string &K : Keys)
    AllDists.insert(deviceDistName(Prefix, K));
  for (const std::string &D : AllDists)
    Metadata.append("Requires-Dist",
                    D + " == " + Version + "; extra == \"device-all\"");
  Host.addText(MetadataEntry->Name, Metadata.str(), TextMethod);
  Host.addText(GpusName, gpusText(Gpus), TextMethod);
  if (Error E = Host.write())
    return E;
  std::vector<std::pair<WrittenWheel, std::string>> Staged; // wheel, out name
  Expected<WrittenWheel> HostDone = Host.commit("");
  if (!HostDone)
    return HostDone.takeError();
  Staged.push_back({*HostDone, HostOut});

  // The variant wheel: the host wheel with variant markers and
  // variant.json.
  if (Opts.GenerateVariantWheel) {
    std::string VariantFile =
        StringRef(HostFile).drop_back(4).str() + "-" + Opts.VariantLabel +
        ".whl";
    WheelBuilder Variant(StageWheel(VariantFile), W.distInfoDir().str(),
                         TextMethod);
    Expected<WheelFile> HostWheel = WheelFile::open(HostDone->Path);
    if (!HostWheel)
      return HostWheel.takeError();
    for (const ZipEntry &E : HostWheel->zip().entries())
      if (!HostWheel->isRecordFile(E.Name) && E.Name != MetadataEntry->Name) {
        Expected<RecordEntry> Row = HostWheel->readVerified(E, nullptr);
        if (!Row)
          return Row.takeError();
        Variant.addRaw(E.Name, HostWheel->zip(), E, std::move(*Row));
      }
    WheelHeaderFile VM = W.metadata();
    if (metadataVersion(VM) < std::make_pair(2u, 1u))
      VM.set("Metadata-Version", "2.1");
    VM.append("Requires-Dist", "rocm-bootstrap");
    for (const std::string &T : GpuNames) {
      VM.append("Provides-Extra", "device-" + T);
      for (const Pin &P : Pins)
        if (P.Target == T) {
          VM.append("Requires-Dist", P.Dist + " == " + Version +
                                         "; extra == \"device-" + T + "\"");
          VM.append("Requires-Dist", P.Dist + " == " + Version +
                                         "; \"amd :: gfx_arch :: " + T +
                                         "\" in variant_properties");
        }
    }
    VM.append("Provides-Extra", "device-all");
    for (const std::string &D : AllDists)
      VM.append("Requires-Dist",
                D + " == " + Version + "; extra == \"device-all\"");
    Variant.addText(MetadataEntry->Name, VM.str(), TextMethod);
    Variant.addText(W.distInfoDir().str() + "/variant.json",
                    variantJson(GpuNames), TextMethod);
    if (Error E = Variant.write())
      return E;
    Expected<WrittenWheel> Done = Variant.commit("");
    if (!Done)
      return Done.takeError();
    Staged.push_back(
        {*Done, Opts.DirectoryOutput ? StringRef(VariantFile).drop_back(4).str()
                                     : VariantFile});
  }

  // One device wheel per bundle key.
  const std::string Tag = W.name().tags();
  for (const std::string &K : Keys) {
    PackagingBundle B = *lookupBundle(K);
    std::string Dist = deviceDistName(Prefix, K);
    std::string FileDist = Dist;
    std::replace(FileDist.begin(), FileDist.end(), '-', '_');
    std::string DevDistInfo = FileDist + "-" + Version + ".dist-info";
    std::string DevFile = FileDist + "-" + Version + "-" + Tag + ".whl";
    WheelBuilder Dev(StageWheel(DevFile), DevDistInfo, TextMethod);
    for (const auto &[T, Path] : ArchivesOf[K])
      Dev.addFile(OverlayDir + ".kpack/" + Group + "_" + T + ".kpack", Path,
                  Opts.Compression.Scheme == ArchiveCompression::None
                      ? BinaryMethod
                      : ZipMethod::Stored,
                  ZipDefaultFileMode);
    for (const Item *It : DatabaseItems[K])
      Dev.addRaw(It->E->Name, Zip, *It->E, It->Row);
    std::string WheelText = "Wheel-Version: 1.0\n"
                            "Generator: rocm-kpack-split-python-wheels\n"
                            "Root-Is-Purelib: false\n";
    for (const std::string &T : W.tags())
      WheelText += "Tag: " + T + "\n";
    Dev.addText(DevDistInfo + "/WHEEL", WheelText, TextMethod);
    std::string M = "Metadata-Version: 2.4\nName: " + Dist +
                    "\nVersion: " + Version +
                    "\nSummary: AMD device kernels (" + B.DisplayName +
                    ") for " + Name + "\nRequires-Dist: " + Name +
                    " == " + Version + "\n";
    for (const std::string &Dep : Opts.DeviceRequiresDist) {
      if (StringRef(Dep).contains("@GFXARCH@") &&
          B.Level != BundleLevel::Target)
        continue;
      std::string Expanded = Dep;
      for (size_t At; (At = Expanded.find("@GFXARCH@")) != std::string::npos;)
        Expanded.replace(At, 9, K);
      M += "Requires-Dist: " + Expanded + "\n";
    }
    if (B.Level == BundleLevel::Target) {
      // The chain is named: a view of a temporary in a range-for outlives
      // it (C++17 extends only the range expression's own temporary).
      std::vector<PackagingBundle> Chain = packagingChain(K);
      for (const PackagingBundle &Parent : ArrayRef(Chain).drop_front())
        if (Keys.count(Parent.Key))
          M += "Requires-Dist: " + deviceDistName(Prefix, Parent.Key) +
               " == " + Version + "\n";
    }
    Dev.addText(DevDistInfo + "/METADATA", M, TextMethod);
    Dev.addText(DevDistInfo + "/top_level.txt", Overlay + "\n", TextMethod);
    if (Error E = Dev.write())
      return E;
    Expected<WrittenWheel> Done = Dev.commit(K);
    if (!Done)
      return Done.takeError();
    Staged.push_back(
        {*Done,
         Opts.DirectoryOutput ? StringRef(DevFile).drop_back(4).str() : DevFile});
  }

  // Exploded directories instead of wheels, if asked.
  if (Opts.DirectoryOutput)
    for (auto &[Wheel, Out] : Staged) {
      Expected<unsigned> Files = explodeWheel(Wheel.Path, Txn.staged(Out));
      if (!Files)
        return Files.takeError();
      sys::fs::remove(Wheel.Path);
      Wheel.Files = *Files;
    }

  // Everything is written: make it visible, all at once.
  std::vector<std::string> Names;
  for (auto &[Wheel, Out] : Staged)
    Names.push_back(Out);
  if (Error E = Txn.commit(Names))
    return E;
  for (auto &[Wheel, Out] : Staged)
    Wheel.Path = OutputDir + "/" + Out;
  Result.Host = Staged.front().first;
  size_t Next = 1;
  if (Opts.GenerateVariantWheel)
    Result.Variant = Staged[Next++].first;
  for (; Next < Staged.size(); ++Next)
    Result.Devices.push_back(Staged[Next].first);
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

  const ZipEntry *MetadataEntry =
      H.zip().find(H.distInfoDir().str() + "/METADATA");
  const ZipEntry *WheelEntry = H.zip().find(H.distInfoDir().str() + "/WHEEL");
  bool RewriteWheel = OutName->Build != H.name().Build;
  OutputDirectories OutDirs; // undone after Out's staging tree is gone
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
    if (DevNorm == normalizeDistributionName(H.projectName()))
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
  // Everything checked: the output directory may appear now (and goes
  // again on failure or a signal).
  StringRef OutDir = sys::path::parent_path(Output);
  if (!OutDir.empty())
    if (Error E = toError(OutDirs.create(OutDir.str())))
      return E;
  if (Error E = Out.write())
    return E;
  Expected<WrittenWheel> Written = Out.commit("");
  if (Written)
    OutDirs.keep();
  return Written;
}
