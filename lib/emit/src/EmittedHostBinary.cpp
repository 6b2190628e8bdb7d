//===- EmittedHostBinary.cpp - A HIPK binary and the archives it names ----===//

#include "kpack/Emission.h"

#include "kpack/ArchiveReader.h"
#include "kpack/LLVMError.h"
#include "kpack/Metadata.h"
#include "kpack/TargetId.h"

#include "llvm/ADT/StringExtras.h"
#include "llvm/Support/FileSystem.h"
#include "llvm/Support/MemoryBuffer.h"
#include "llvm/Support/Path.h"

#include <algorithm>
#include <map>
#include <set>

using namespace llvm;
using namespace kpack;

namespace {

constexpr StringLiteral ArchPattern = "@GFXARCH@";

/// The bundle entry ID an emitted code object had: the archives of ld.kpack
/// record only the target ID, and its inputs are HIP bundles ("hipv4").
std::string entryIdFor(const ArchiveReader::Entry &E) {
  for (const auto &[Name, Value] : E.Metadata)
    if (Name == "target" && !Value.empty())
      return Value;
  return "hipv4-amdgcn-amd-amdhsa--" + E.Arch;
}

/// N of "<KernelName>#N", if Key has that form.
std::optional<uint32_t> indexOfKey(StringRef Key, StringRef KernelName) {
  if (!Key.consume_front(KernelName) || !Key.consume_front("#") ||
      Key.empty() || !llvm::all_of(Key, isDigit))
    return std::nullopt;
  uint32_t N;
  if (Key.getAsInteger(10, N))
    return std::nullopt;
  return N;
}

} // namespace

struct EmittedHostBinary::Impl {
  std::string Path;
  std::unique_ptr<MemoryBuffer> Buf;
  KpackMetadata Meta;
  uint64_t MetaFileOffset = 0;
  uint64_t Room = 0;
  std::vector<std::string> Reached; ///< in search-path order
  std::vector<std::string> Archives; ///< sorted

  /// The archives SearchPath reaches from the binary's directory.
  Error reach(StringRef SearchPath, std::set<std::string> &Seen) {
    SmallString<256> Full;
    if (sys::path::is_absolute(SearchPath)) {
      Full = SearchPath;
    } else {
      Full = sys::path::parent_path(Path);
      sys::path::append(Full, SearchPath);
    }
    sys::path::remove_dots(Full, /*remove_dot_dot=*/true);
    auto Add = [&](std::string P) {
      if (Seen.insert(P).second)
        Reached.push_back(std::move(P));
    };
    StringRef Dir = sys::path::parent_path(Full);
    StringRef File = sys::path::filename(Full);
    size_t At = File.find(ArchPattern);
    if (StringRef(Dir).contains(ArchPattern))
      return makeError("search path '" + SearchPath +
                       "': @GFXARCH@ in a directory name is not supported");
    if (At == StringRef::npos) {
      if (sys::fs::is_regular_file(Full))
        Add(Full.str().str());
      return Error::success();
    }
    StringRef Prefix = File.take_front(At);
    StringRef Suffix = File.drop_front(At + ArchPattern.size());
    std::error_code EC;
    std::vector<std::string> Matches;
    for (sys::fs::directory_iterator I(Dir.empty() ? "." : Dir, EC), E;
         I != E && !EC; I.increment(EC)) {
      StringRef Name = sys::path::filename(I->path());
      if (Name.size() <= Prefix.size() + Suffix.size() ||
          !Name.starts_with(Prefix) || !Name.ends_with(Suffix))
        continue;
      StringRef Arch = Name.drop_front(Prefix.size()).drop_back(Suffix.size());
      if (!parseTargetId(Arch.str()) || !sys::fs::is_regular_file(I->path()))
        continue;
      Matches.push_back(I->path());
    }
    if (EC && EC != std::errc::no_such_file_or_directory)
      return makeError("cannot list '" + Dir + "': " + EC.message());
    llvm::sort(Matches);
    for (std::string &M : Matches)
      Add(std::move(M));
    return Error::success();
  }
};

EmittedHostBinary::EmittedHostBinary() : P(std::make_unique<Impl>()) {}
EmittedHostBinary::~EmittedHostBinary() = default;
EmittedHostBinary::EmittedHostBinary(EmittedHostBinary &&) = default;
EmittedHostBinary &EmittedHostBinary::operator=(EmittedHostBinary &&) = default;

Expected<EmittedHostBinary> EmittedHostBinary::open(StringRef Path) {
  auto BufOr = MemoryBuffer::getFile(Path, /*IsText=*/false,
                                     /*RequiresNullTerminator=*/false);
  if (!BufOr)
    return makeError(BufOr.getError().message());
  EmittedHostBinary B;
  Impl &I = *B.P;
  I.Path = Path.str();
  I.Buf = std::move(*BufOr);
  auto Host = analyzeHostBinary(I.Buf->getMemBufferRef());
  if (!Host)
    return Host.takeError();
  if (Host->Kind == HostFileKind::Relocatable)
    return makeError("a relocatable object is not an emitted host binary");
  if (Host->Wrappers.empty() || !Host->hasHIPK())
    return makeError("no HIPK wrapper: not a kpack host binary");

  // Every writer points all wrappers at one metadata record.
  const WrapperInfo &First = Host->Wrappers.front();
  for (const WrapperInfo &W : Host->Wrappers) {
    if (!W.isHIPK())
      return makeError("wrapper at 0x" + utohexstr(W.Address) +
                       " is not HIPK (a partly converted binary)");
    if (!W.Ref)
      return makeError("wrapper at 0x" + utohexstr(W.Address) +
                       ": kpack metadata: " + W.RefError);
    if (W.Target != First.Target)
      return makeError("the wrappers point at different metadata records");
  }
  I.Meta = *First.Ref;

  // The room: the file-backed bytes of the section holding the record, from
  // the record on (ld.kpack: .rocm_kpack_ref with the room it reserved;
  // `kpack convert`: what is left of .hip_fatbin, under the same name).
  const std::optional<SectionSpan> &Ref = Host->KpackRefSection;
  if (!Ref || First.Target < Ref->Address ||
      First.Target - Ref->Address >= Ref->Size)
    return makeError("the kpack metadata is not in a .rocm_kpack_ref section");
  uint64_t Delta = First.Target - Ref->Address;
  if (Ref->FileOffset > I.Buf->getBufferSize() ||
      Ref->Size > I.Buf->getBufferSize() - Ref->FileOffset)
    return makeError(".rocm_kpack_ref lies outside the file");
  I.MetaFileOffset = Ref->FileOffset + Delta;
  I.Room = Ref->Size - Delta;

  std::set<std::string> Seen;
  for (const std::string &S : I.Meta.SearchPaths)
    if (Error E = I.reach(S, Seen))
      return E;
  I.Archives = I.Reached;
  llvm::sort(I.Archives);
  return B;
}

const KpackMetadata &EmittedHostBinary::metadata() const { return P->Meta; }
uint64_t EmittedHostBinary::metadataRoom() const { return P->Room; }
const std::vector<std::string> &EmittedHostBinary::archives() const {
  return P->Archives;
}

Expected<std::vector<CodeObjectRef>> EmittedHostBinary::codeObjects() const {
  // Search-path order decides between two archives holding the same code
  // object index for one target, as it does for the loader.
  std::map<std::pair<uint32_t, std::string>, CodeObjectRef> Found;
  for (const std::string &Path : P->Reached) {
    std::unique_ptr<ArchiveReader> R;
    if (Status S = ArchiveReader::open(Path, R))
      return makeError("'" + Path + "': " + S.message());
    std::shared_ptr<const ArchiveReader> Reader(std::move(R));
    for (const ArchiveReader::Entry &E : Reader->entries()) {
      std::optional<uint32_t> N = indexOfKey(E.Key, P->Meta.KernelName);
      if (!N)
        continue;
      auto [It, New] = Found.try_emplace({*N, E.Arch});
      if (!New)
        continue;
      CodeObjectRef &C = It->second;
      C.Index = *N;
      C.TargetId = E.Arch;
      C.EntryId = entryIdFor(E);
      C.Size = E.OriginalSize;
      C.Origin = Path + ": entry '" + E.Key + "' for " + E.Arch;
      C.Source = EntrySource::fromCallback(
          [Reader, E](std::vector<uint8_t> &Out) { return Reader->read(E, Out); },
          E.OriginalSize);
    }
  }
  std::vector<CodeObjectRef> Result;
  for (auto &[Where, C] : Found)
    Result.push_back(std::move(C));
  return Result;
}

Expected<std::vector<uint8_t>>
EmittedHostBinary::withMetadata(ArrayRef<uint8_t> Metadata) const {
  if (Metadata.size() > P->Room)
    return makeError(
        "'" + P->Path + "': the new kpack metadata (" + Twine(Metadata.size()) +
        " bytes) does not fit in the " + Twine(P->Room) +
        " bytes of .rocm_kpack_ref; link it with ld.kpack "
        "--kpack-metadata-room=" + Twine(Metadata.size()) + " or more");
  StringRef Bytes = P->Buf->getBuffer();
  std::vector<uint8_t> Image(Bytes.bytes_begin(), Bytes.bytes_end());
  std::fill_n(Image.begin() + P->MetaFileOffset, P->Room, 0);
  std::copy(Metadata.begin(), Metadata.end(),
            Image.begin() + P->MetaFileOffset);
  return Image;
}

Expected<std::vector<uint8_t>>
kpack::encodeMetadata(StringRef KernelName, ArrayRef<std::string> SearchPaths,
                      StringRef LinkId) {
  KpackMetadata Meta{KernelName.str(),
                     std::vector<std::string>(SearchPaths.begin(),
                                              SearchPaths.end()),
                     LinkId.str()};
  std::vector<uint8_t> Bytes;
  if (Status S = encodeKpackMetadata(Meta, Bytes))
    return makeError("kpack metadata: " + S.message());
  return Bytes;
}
