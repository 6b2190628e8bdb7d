//===- FatHostBinary.cpp - A linked host binary with device code ----------===//

#include "kpack/Emission.h"

#include "kpack/HostRewrite.h"
#include "kpack/LLVMError.h"
#include "kpack/Quote.h"

#include "llvm/ADT/ScopeExit.h"
#include "llvm/ADT/StringExtras.h"
#include "llvm/Support/MathExtras.h"
#include "llvm/Support/MemoryBuffer.h"
#include "llvm/Support/Process.h"

#include <sys/mman.h>

#include <atomic>
#include <mutex>

using namespace llvm;
using namespace kpack;

namespace {

/// Drops the whole pages of [Offset, Offset + Size) of a read-only mapped
/// buffer from this process (they stay in the page cache), so that resident
/// memory does not grow with what was read once.
void releasePages(const MemoryBuffer &Buf, uint64_t Offset, uint64_t Size) {
  if (Buf.getBufferKind() != MemoryBuffer::MemoryBuffer_MMap)
    return;
  const uint64_t Page = sys::Process::getPageSizeEstimate();
  uintptr_t Begin =
      reinterpret_cast<uintptr_t>(Buf.getBufferStart()) + Offset;
  uintptr_t End = Begin + Size;
  Begin = alignTo(Begin, Page);
  End = alignDown(End, Page);
  if (Begin < End)
    ::madvise(reinterpret_cast<void *>(Begin), End - Begin, MADV_DONTNEED);
}

/// How many compressed bundles are decoded (FatHostBinary::DecodeCounters).
struct Counters {
  std::atomic<uint64_t> Decodes{0}, Held{0}, PeakHeld{0};
  void decoded() {
    ++Decodes;
    uint64_t Now = ++Held;
    uint64_t Peak = PeakHeld.load();
    while (Now > Peak && !PeakHeld.compare_exchange_weak(Peak, Now)) {
    }
  }
  void released() { --Held; }
};

/// A compressed bundle shared by the sources of its entries: decoded when
/// the first of them is read, and released after the last read a writer
/// announced (EntrySource::willRead) for the current pass, so that only
/// the bundles being read are held in memory, however many of a bundle's
/// entries are left out (split --gpu-targets). ArchiveSet reads entries in
/// add order, across all archives, in bounded batches. A read nobody
/// announced decodes the bundle for itself.
struct SharedBundle {
  std::shared_ptr<MemoryBuffer> Buf;
  std::shared_ptr<Counters> Count;
  BundleInfo Info;
  std::mutex M;
  std::unique_ptr<Bundle> Decoded;
  size_t Pending = 0; ///< reads announced and not yet made

  ~SharedBundle() {
    if (Decoded)
      Count->released();
  }

  void willRead() {
    std::lock_guard<std::mutex> Lock(M);
    ++Pending;
  }

  Status read(size_t EntryIndex, std::vector<uint8_t> &Out) {
    std::lock_guard<std::mutex> Lock(M);
    if (!Decoded) {
      auto B = std::make_unique<Bundle>();
      if (Error E = decodeBundleAt(Buf->getMemBufferRef(), Info, *B))
        return Status::error(toString(std::move(E)));
      releasePages(*Buf, Info.FileOffset, Info.EncodedSize);
      Decoded = std::move(B);
      Count->decoded();
    }
    if (Pending)
      --Pending;
    llvm::scope_exit Release([&] {
      if (!Pending) {
        Decoded.reset();
        Count->released();
      }
    });
    if (EntryIndex >= Decoded->Entries.size() ||
        Decoded->Entries[EntryIndex].Id != Info.Entries[EntryIndex].Id ||
        Decoded->Entries[EntryIndex].Size != Info.Entries[EntryIndex].Size)
      return Status::error("bundle changed while being read");
    const BundleEntry &E = Decoded->Entries[EntryIndex];
    Out.assign(Decoded->payload(E), Decoded->payload(E) + E.Size);
    return Status::ok();
  }
};

} // namespace

struct FatHostBinary::Impl {
  std::string Path;
  std::shared_ptr<MemoryBuffer> Buf;
  HostBinary Host;
  std::shared_ptr<Counters> Count = std::make_shared<Counters>();
};

FatHostBinary::FatHostBinary() : P(std::make_unique<Impl>()) {}
FatHostBinary::~FatHostBinary() = default;
FatHostBinary::FatHostBinary(FatHostBinary &&) = default;
FatHostBinary &FatHostBinary::operator=(FatHostBinary &&) = default;

Expected<FatHostBinary> FatHostBinary::open(StringRef Path) {
  auto BufOr = MemoryBuffer::getFile(Path, /*IsText=*/false,
                                     /*RequiresNullTerminator=*/false);
  if (!BufOr)
    return makeError(BufOr.getError().message());
  FatHostBinary F;
  F.P->Path = Path.str();
  F.P->Buf = std::move(*BufOr);
  const MemoryBuffer &Buf = *F.P->Buf;
  // Pages of each bundle are dropped once scanned: the payloads are read
  // again later with pread (or decoded once, for compressed bundles).
  AnalyzeOptions AO;
  AO.BundleScanned = [&Buf](uint64_t Offset, uint64_t Size) {
    releasePages(Buf, Offset, Size);
  };
  auto Host = analyzeHostBinary(Buf.getMemBufferRef(), AO);
  if (!Host)
    return Host.takeError();
  F.P->Host = std::move(*Host);
  return F;
}

const std::string &FatHostBinary::path() const { return P->Path; }
const HostBinary &FatHostBinary::analysis() const { return P->Host; }

FatHostBinary::DecodeCounters FatHostBinary::decodeCounters() const {
  return {P->Count->Decodes.load(), P->Count->Held.load(),
          P->Count->PeakHeld.load()};
}

bool FatHostBinary::isConvertible() const {
  const HostBinary &H = P->Host;
  return H.Kind != HostFileKind::Relocatable && H.hasDeviceCode() &&
         !H.Wrappers.empty() && !H.hasHIPK();
}

Expected<std::vector<CodeObjectRef>> FatHostBinary::codeObjects() const {
  std::vector<CodeObjectRef> Result;
  const HostBinary &H = P->Host;
  for (size_t N = 0; N < H.Bundles.size(); ++N) {
    const BundleInfo &B = H.Bundles[N];
    std::string Where = P->Path + ": bundle " + std::to_string(N) +
                        " (.hip_fatbin offset 0x" +
                        utohexstr(B.SectionOffset) + ")";
    std::shared_ptr<SharedBundle> Shared;
    if (B.Compression != BundleCompression::None) {
      Shared = std::make_shared<SharedBundle>();
      Shared->Buf = P->Buf;
      Shared->Count = P->Count;
      Shared->Info = B;
    }
    for (size_t I = 0; I < B.Entries.size(); ++I) {
      const BundleEntry &E = B.Entries[I];
      if (!E.isDevice())
        continue;
      CodeObjectRef C;
      C.Index = static_cast<uint32_t>(N);
      C.TargetId = E.TargetId;
      C.EntryId = E.Id;
      C.Size = E.Size;
      C.Origin = Where + ", entry " + quoteInput(E.Id);
      if (!Shared)
        C.Source = EntrySource::fromFileRange(P->Path, B.FileOffset + E.Offset,
                                              E.Size);
      else if (E.Size == 0)
        C.Source = EntrySource::fromOwnedBytes({});
      else
        C.Source = EntrySource::fromCallback(
            [Shared, I](std::vector<uint8_t> &Out) {
              return Shared->read(I, Out);
            },
            E.Size, [Shared] { Shared->willRead(); });
      Result.push_back(std::move(C));
    }
  }
  return Result;
}

Expected<std::vector<uint8_t>>
FatHostBinary::rewrite(ArrayRef<uint8_t> Metadata) const {
  return rewriteHostBinary(P->Buf->getMemBufferRef(), P->Host, Metadata);
}
