//===- ArchiveSet.cpp - Code objects -> .kpack archives -------------------===//
//
// The one place where every writer's code objects become archives: the
// per-entry check, the layout (one archive or one per target ID), the family
// default, deduplication and the all-or-nothing write.
//
//===----------------------------------------------------------------------===//

#include "kpack/Emission.h"

#include "kpack/ArchivePaths.h"
#include "kpack/CodeObjectCheck.h"
#include "kpack/LLVMError.h"
#include "kpack/Quote.h"
#include "kpack/TargetId.h"

#include "llvm/ADT/StringExtras.h"
#include "llvm/Support/FileSystem.h"
#include "llvm/Support/Path.h"
#include "llvm/Support/xxhash.h"

#include <map>
#include <set>

using namespace llvm;
using namespace kpack;

struct ArchiveSet::Impl {
  ArchiveLayout Layout;
  struct Added {
    std::string Key;
    CodeObjectRef C;
    EntryMetadata Meta;
  };
  std::vector<Added> Entries; // in add order
  std::set<std::pair<std::string, std::string>> Seen; // (key, target ID)

  Error checkLayout() const {
    int Kinds = !Layout.ArchivePath.empty() +
                (!Layout.Dir.empty() || !Layout.Name.empty()) +
                static_cast<bool>(Layout.PathForTarget);
    if (Kinds != 1)
      return makeError("internal error: an archive layout needs exactly one "
                       "of an archive path, a directory and name, or a path "
                       "function");
    if (!Layout.Dir.empty() && Layout.Name.empty())
      return makeError("internal error: per-target archives need a name");
    if (Layout.ArchivePath.empty() && !Layout.PathForTarget &&
        Layout.Dir.empty())
      return makeError("internal error: per-target archives need a directory");
    return Error::success();
  }

  std::string pathFor(StringRef TargetId) const {
    if (!Layout.ArchivePath.empty())
      return Layout.ArchivePath;
    if (Layout.PathForTarget)
      return Layout.PathForTarget(TargetId);
    return perTargetArchivePath(Layout.Dir, Layout.Name, TargetId);
  }
};

namespace {

/// The kernel name of a host binary's entry key "<kernel_name>#N".
StringRef binaryOfKey(StringRef Key) { return Key.rsplit('#').first; }

/// The link identity of each binary (docs/format-extensions.md): xxh3_128
/// over its entries in TOC order (the order they were added), each as its
/// key, NUL, target ID, NUL and the xxh3_64 of its bytes (8 bytes, little
/// endian); 32 lowercase hex digits. Sets it in every entry's metadata.
Status bindLinks(ArrayRef<std::unique_ptr<ArchiveWriter>> Writers,
                 ArrayRef<std::pair<size_t, size_t>> Order,
                 std::map<std::string, std::string> &LinkIds) {
  std::map<std::string, std::vector<uint8_t>> Input;
  for (const auto &[Slot, I] : Order) {
    const ArchiveWriter &W = *Writers[Slot];
    std::vector<uint8_t> &In = Input[binaryOfKey(W.key(I)).str()];
    In.insert(In.end(), W.key(I).begin(), W.key(I).end());
    In.push_back(0);
    In.insert(In.end(), W.arch(I).begin(), W.arch(I).end());
    In.push_back(0);
    const uint64_t D = W.digest(I);
    for (int B = 0; B < 8; ++B)
      In.push_back(static_cast<uint8_t>(D >> (8 * B)));
  }
  for (const auto &[Binary, In] : Input) {
    XXH128_hash_t H = xxh3_128bits(In);
    std::string Hex = utohexstr(H.high64, /*LowerCase=*/true, 16) +
                      utohexstr(H.low64, /*LowerCase=*/true, 16);
    LinkIds[Binary] = std::move(Hex);
  }
  for (const auto &[Slot, I] : Order) {
    ArchiveWriter &W = *Writers[Slot];
    W.setMetadata(I, LinkIdKey, LinkIds[binaryOfKey(W.key(I)).str()]);
  }
  return Status::ok();
}

} // namespace

ArchiveSet::ArchiveSet(ArchiveLayout Layout) : P(std::make_unique<Impl>()) {
  P->Layout = std::move(Layout);
}
ArchiveSet::~ArchiveSet() = default;
ArchiveSet::ArchiveSet(ArchiveSet &&) = default;
ArchiveSet &ArchiveSet::operator=(ArchiveSet &&) = default;

Error ArchiveSet::add(StringRef Key, const CodeObjectRef &C,
                      EntryMetadata Meta) {
  // Empty device entries: an offload bundle entry of size 0 holds no code
  // for its target, and no archive entry can (the check below rejects empty
  // bytes). It is skipped: a loader asking for it finds no entry
  // (KPACK_ERROR_KERNEL_NOT_FOUND), as the HIP runtime found no code object
  // for that target in the fat binary. Every writer goes through here.
  if (!C.EntryId.empty() && C.Size == 0)
    return Error::success();
  if (Key.empty())
    return makeError(C.Origin + ": empty archive key");
  // Target IDs name per-target archives: checked here, before any path is
  // made from one (the same words as checkArchiveEntry).
  if (!parseTargetId(C.TargetId))
    return makeError(C.Origin + ": arch " + quoteInput(C.TargetId) +
                     " is not a target ID");
  if (!P->Seen.insert({Key.str(), C.TargetId}).second)
    return makeError(C.Origin + ": duplicate archive entry '" + Key +
                     "' for " + C.TargetId);
  P->Entries.push_back({Key.str(), C, std::move(Meta)});
  return Error::success();
}

Error ArchiveSet::addAll(StringRef KeyName, ArrayRef<CodeObjectRef> Objects,
                         const EntryMetadata &Meta) {
  for (const CodeObjectRef &C : Objects)
    if (Error E = add((KeyName + "#" + Twine(C.Index)).str(), C, Meta))
      return E;
  return Error::success();
}

std::vector<std::string> ArchiveSet::targets() const {
  std::set<std::string> T;
  for (const Impl::Added &A : P->Entries)
    T.insert(A.C.TargetId);
  return std::vector<std::string>(T.begin(), T.end());
}

bool ArchiveSet::empty() const { return P->Entries.empty(); }

Expected<std::vector<WrittenArchive>> ArchiveSet::write() {
  Expected<Prepared> Done = prepare();
  if (!Done)
    return Done.takeError();
  if (Error E = Done->commit())
    return std::move(E);
  return std::move(Done->Archives);
}

Error ArchiveSet::Prepared::commit() {
  std::vector<AtomicFile *> Ptrs;
  for (std::unique_ptr<AtomicFile> &F : Files)
    Ptrs.push_back(F.get());
  if (Status S = commitTogether(Ptrs))
    return makeError(S.message());
  Dirs->keep();
  return Error::success();
}

Expected<ArchiveSet::Prepared> ArchiveSet::prepare() {
  if (Error E = P->checkLayout())
    return E;
  const ArchiveLayout &L = P->Layout;
  const bool Single = !L.ArchivePath.empty();

  // One writer per archive: the single one, or one per target ID (sorted).
  std::vector<std::string> Slots;
  if (Single) {
    if (!P->Entries.empty() || L.WriteEmpty)
      Slots.push_back("");
  } else {
    Slots = targets();
  }
  std::map<std::string, size_t> SlotOf;
  for (size_t I = 0; I < Slots.size(); ++I)
    SlotOf[Slots[I]] = I;

  std::vector<std::unique_ptr<ArchiveWriter>> Writers;
  std::vector<ArchiveWriter::Job> Jobs;
  for (const std::string &Slot : Slots) {
    ArchiveWriterOptions O;
    O.GroupName = L.GroupName;
    // The family default: the target ID of a per-target archive;
    // defaultArchFamily() (its only target, else "multi") of a single one.
    O.GfxArchFamily = !L.Family.empty() ? L.Family : Slot;
    O.Compression = L.Compression.Scheme;
    O.ZstdLevel = L.Compression.Level;
    O.Cache = L.Compression.Cache;
    O.Threads = L.Threads;
    O.Deduplicate = L.DeduplicateIdentical;
    O.NameEntriesInErrors = false; // the sources' messages name the origin
    O.EntryDigests = L.LinkIdentity;
    Writers.push_back(std::make_unique<ArchiveWriter>(O));
    Jobs.push_back({Writers.back().get(), P->pathFor(Slot), {}});
  }

  // Entries in add order; each read once, checked as `kpack verify` checks.
  std::vector<std::pair<size_t, size_t>> Order;
  for (const Impl::Added &A : P->Entries) {
    size_t Slot = Single ? 0 : SlotOf[A.C.TargetId];
    // A bundle's device code must be a code object; other entries (kernel
    // databases, `kpack pack KEY:ARCH=FILE`) may be opaque if allowed.
    OpaqueEntries Policy = L.AllowOpaqueEntries && A.C.EntryId.empty()
                               ? OpaqueEntries::Allow
                               : OpaqueEntries::Reject;
    // The check runs on the bytes where the source put them (no copy).
    EntrySource Checked = A.C.Source.checkedBy(
        [Target = A.C.TargetId, Policy](const uint8_t *Data, size_t Size) {
          if (Error E = checkArchiveEntry(Target, ArrayRef<uint8_t>(Data, Size),
                                          Policy)
                            .takeError())
            return Status::error(toString(std::move(E)));
          return Status::ok();
        },
        A.C.Origin);
    ArchiveWriter &W = *Writers[Slot];
    Order.emplace_back(Slot, W.size());
    if (Status S = W.addEntry(A.Key, A.C.TargetId, std::move(Checked),
                              A.Meta))
      return makeError(A.C.Origin + ": " + S.message());
  }

  Prepared Result;
  Result.Dirs = std::make_unique<OutputDirectories>();
  for (const ArchiveWriter::Job &J : Jobs) {
    StringRef Parent = sys::path::parent_path(J.Path);
    if (!Parent.empty())
      if (Status S = Result.Dirs->create(Parent.str()))
        return makeError(S.message());
  }
  // Sources' messages name their code object, the writer's own name the
  // archive.
  ArchiveWriter::TocHook BindLinks;
  if (L.LinkIdentity)
    BindLinks = [&](std::vector<ArchiveWriter::Job> &) {
      return bindLinks(Writers, Order, Result.LinkIds);
    };
  if (Status S = ArchiveWriter::writeArchives(Jobs, Order, &Result.Files,
                                              BindLinks))
    return makeError(S.message());

  for (size_t I = 0; I < Jobs.size(); ++I)
    Result.Archives.push_back({Jobs[I].Path, Slots[I], Jobs[I].Stats,
                               Jobs[I].Stats.Deduplicated});
  return Result;
}
