//===- ArchiveWriter.cpp - Writes .kpack archives -------------------------===//

#include "kpack/ArchiveWriter.h"

#include "kpack/ByteOrder.h"
#include "kpack/AtomicFile.h"
#include "kpack/ContentHash.h"

#include "llvm/ADT/ScopeExit.h"
#include "llvm/Support/ThreadPool.h"
#include "llvm/Support/Threading.h"

#include <msgpack.hpp>
#include <zstd.h>

#include <algorithm>
#include <atomic>
#include <cerrno>
#include <cstring>
#include <fcntl.h>
#include <memory>
#include <mutex>
#include <new>
#include <set>
#include <unordered_map>
#include <unistd.h>

using namespace kpack;
using kpack::detail::writeLE;

namespace {

constexpr char ArchiveMagic[4] = {'K', 'P', 'A', 'K'};
constexpr uint64_t BlobStart = 64;
/// Batching charge for a callback source that gave no size hint.
constexpr uint64_t UnknownSizeCharge = uint64_t(1) << 20;
constexpr size_t MaxBatchEntries = 1024;

Status readFileRange(const std::string &Path, uint64_t Offset, uint64_t Size,
                     llvm::SmallVectorImpl<uint8_t> &Out) {
  int Fd = ::open(Path.c_str(), O_RDONLY | O_CLOEXEC);
  if (Fd < 0)
    return Status::error("cannot open '" + Path + "': " + std::strerror(errno));
  Status Result = Status::ok();
  const size_t Old = Out.size(); // the bytes are appended
  try {
    Out.resize_for_overwrite(Old + Size); // pread writes every byte
  } catch (const std::bad_alloc &) {
    ::close(Fd);
    return Status::error("out of memory reading " + std::to_string(Size) +
                         " bytes of '" + Path + "'");
  }
  uint64_t Done = 0;
  while (Done < Size) {
    ssize_t N = ::pread(Fd, Out.data() + Old + Done, Size - Done,
                        static_cast<off_t>(Offset + Done));
    if (N < 0 && errno == EINTR)
      continue;
    if (N < 0) {
      Result = Status::error("cannot read '" + Path + "': " +
                             std::strerror(errno));
      break;
    }
    if (N == 0) {
      Result = Status::error("'" + Path + "' ends before byte " +
                             std::to_string(Offset + Size));
      break;
    }
    Done += static_cast<uint64_t>(N);
  }
  ::close(Fd);
  if (Result)
    Out.truncate(Old);
  return Result;
}

template <typename Packer> void packStr(Packer &P, const std::string &S) {
  P.pack_str(static_cast<uint32_t>(S.size()));
  P.pack_str_body(S.data(), static_cast<uint32_t>(S.size()));
}

/// The writer's byte buffers: not zero-filled when resized for overwrite.
using Bytes = llvm::SmallVector<uint8_t, 0>;

/// What one of the writer's threads keeps from one batch to the next, so
/// that a long write reuses a few buffers instead of allocating (and, for
/// large ones, mapping and unmapping) one or two per entry: its zstd
/// context, its read buffers, and this batch's frames and kept raw bytes,
/// back to back (items refer to them by offset).
struct WorkerState {
  ZSTD_CCtx *Ctx = nullptr;
  ReadBuffers Bufs; ///< Bufs.Range: this batch's kept raw bytes, then the
                    ///< entry being read
  Bytes Frames;     ///< this batch's frames, each after its u32 size
  std::vector<uint8_t> Prefix;
  /// Bytes of this thread's buffers (or of sources' views) that the
  /// in-order pass gave a place in an archive: the thread writes them there
  /// before it reuses its buffers for the next batch, while the other
  /// threads compress.
  struct PendingWrite {
    const AtomicFile *File;
    uint64_t At;
    const uint8_t *Data;
    size_t Size;
  };
  std::vector<PendingWrite> Pending;
  Status WriteErr = Status::ok();

  /// Writes the pending bytes and empties the buffers for a new batch.
  Status flushPending() {
    Status Result = Status::ok();
    for (const PendingWrite &P : Pending)
      if (!Result)
        Result = P.File->writeReserved(P.At, P.Data, P.Size);
    Pending.clear();
    Bufs.Range.clear();
    Frames.clear();
    return Result;
  }

  WorkerState() = default;
  WorkerState(const WorkerState &) = delete;
  WorkerState &operator=(const WorkerState &) = delete;
  ~WorkerState() { ZSTD_freeCCtx(Ctx); }
};

} // namespace

const char *kpack::compressionSchemeName(ArchiveCompression C) {
  switch (C) {
  case ArchiveCompression::None:
    return "none";
  case ArchiveCompression::ZstdPerKernel:
  case ArchiveCompression::ZstdPerKernelLong:
    return "zstd-per-kernel";
  case ArchiveCompression::ZstdSharedSegments:
    return "zstd-shared-segments";
  }
  return "none";
}

uint32_t kpack::archiveFormatVersion(ArchiveCompression C) {
  return C == ArchiveCompression::ZstdSharedSegments ? 2 : 1;
}

int kpack::defaultZstdLevel(ArchiveCompression C) {
  switch (C) {
  case ArchiveCompression::None:
    return 0;
  case ArchiveCompression::ZstdPerKernel:
    return DefaultZstdLevel;
  case ArchiveCompression::ZstdPerKernelLong:
    return ReleaseZstdLevel;
  case ArchiveCompression::ZstdSharedSegments:
    return SharedSegmentsZstdLevel;
  }
  return DefaultZstdLevel;
}

//===----------------------------------------------------------------------===//
// EntrySource
//===----------------------------------------------------------------------===//

EntrySource EntrySource::fromBytes(const uint8_t *Data, size_t Size) {
  EntrySource S;
  S.K = Kind::View;
  S.Data = Data;
  S.Size = Size;
  return S;
}

EntrySource EntrySource::fromOwnedBytes(std::vector<uint8_t> Bytes) {
  EntrySource S;
  S.K = Kind::Owned;
  S.Size = Bytes.size();
  S.Owned = std::make_shared<const std::vector<uint8_t>>(std::move(Bytes));
  return S;
}

EntrySource EntrySource::fromFileRange(std::string Path, uint64_t Offset,
                                       uint64_t Size) {
  EntrySource S;
  S.K = Kind::FileRange;
  S.Path = std::move(Path);
  S.Offset = Offset;
  S.Size = Size;
  return S;
}

EntrySource EntrySource::fromCallback(Producer P, uint64_t SizeHint,
                                      std::function<void()> WillRead) {
  EntrySource S;
  S.K = Kind::Callback;
  S.Make = std::move(P);
  S.Size = SizeHint;
  S.WillRead = std::move(WillRead);
  return S;
}

EntrySource EntrySource::checkedBy(Check C, std::string Origin) const {
  EntrySource S = *this;
  if (!Origin.empty())
    S.Origin = S.Origin.empty() ? std::move(Origin)
                                : std::move(Origin) + ": " + S.Origin;
  if (!Checked) {
    S.Checked = std::move(C);
    return S;
  }
  S.Checked = [First = Checked, Then = std::move(C)](const uint8_t *D,
                                                      size_t N) {
    if (Status St = First(D, N))
      return St;
    return Then(D, N);
  };
  return S;
}

Status EntrySource::read(ReadBuffers &Bufs, const uint8_t *&View,
                         size_t &ViewSize) const {
  Status S = produce(Bufs, View, ViewSize);
  if (!S && Checked)
    S = Checked(View, ViewSize);
  if (S && !Origin.empty())
    return Status::error(Origin + ": " + S.message());
  return S;
}

Status EntrySource::produce(ReadBuffers &Bufs, const uint8_t *&View,
                            size_t &ViewSize) const {
  switch (K) {
  case Kind::View:
    View = Data;
    ViewSize = Size;
    break;
  case Kind::Owned:
    View = Owned->data();
    ViewSize = Owned->size();
    break;
  case Kind::FileRange: {
    const size_t Old = Bufs.Range.size();
    if (Status S = readFileRange(Path, Offset, Size, Bufs.Range))
      return S;
    View = Bufs.Range.data() + Old;
    ViewSize = Size;
    break;
  }
  case Kind::Callback:
    Bufs.Produced.clear();
    if (!Make)
      return Status::error("entry source has no producer");
    if (Status S = Make(Bufs.Produced))
      return S;
    View = Bufs.Produced.data();
    ViewSize = Bufs.Produced.size();
    break;
  }
  return Status::ok();
}

//===----------------------------------------------------------------------===//
// ArchiveWriter
//===----------------------------------------------------------------------===//

ArchiveWriter::ArchiveWriter(ArchiveWriterOptions O) : Opts(std::move(O)) {}

Status ArchiveWriter::addEntry(const std::string &Key, const std::string &Arch,
                               EntrySource Source,
                               EntryMetadata Metadata) {
  if (Key.empty())
    return Status::error("archive entry with an empty key");
  if (Arch.empty())
    return Status::error("archive entry '" + Key + "' has an empty arch");
  auto [It, Inserted] = KeyIndex.emplace(Key, KeyEntries.size());
  if (Inserted)
    KeyEntries.emplace_back();
  for (size_t I : KeyEntries[It->second])
    if (Entries[I].Arch == Arch)
      return Status::error("duplicate archive entry '" + Key + "' for " + Arch);
  KeyEntries[It->second].push_back(Entries.size());
  Entries.push_back(
      Entry{Key, Arch, std::move(Source), std::move(Metadata), 0, 0});
  return Status::ok();
}

namespace {

/// How one frame is compressed.
struct FrameParams {
  int Level = DefaultZstdLevel;
  /// Window over the whole input (prefix included) and long-distance
  /// matching; otherwise the level's defaults, as upstream's writer.
  bool Long = false;
  /// Set the window to cover prefix and input (shared segments).
  bool WholeWindow = false;
  /// Raw-content prefix the frame is compressed against (shared segments).
  const uint8_t *Prefix = nullptr;
  size_t PrefixSize = 0;
};

/// The largest window any frame gets: 2^27 (128 MiB), what zstd's
/// streaming decoders accept by default (ZSTD_WINDOWLOG_LIMIT_DEFAULT), so
/// that every decoder reads release-grade frames; single-pass decoders such
/// as upstream's ZSTD_decompressDCtx accept any window.
constexpr int MaxWindowLog = 27;
constexpr int MinWindowLog = 10; // ZSTD_WINDOWLOG_MIN

int windowLogFor(uint64_t Bytes) {
  int Log = MinWindowLog;
  while (Log < MaxWindowLog && (uint64_t(1) << Log) < Bytes)
    ++Log;
  return Log;
}

Status zstdStatus(size_t Code) {
  return ZSTD_isError(Code)
             ? Status::error(std::string("zstd: ") + ZSTD_getErrorName(Code))
             : Status::ok();
}

Status compressFrame(ZSTD_CCtx *Ctx, const uint8_t *Data, size_t Size,
                     const FrameParams &FP, Bytes &Frame) {
  if (!Ctx)
    return Status::error("zstd: cannot create a context");
  // Appended to Frame, compressed in place (not zero-filled first).
  const size_t Old = Frame.size();
  size_t Bound = ZSTD_compressBound(Size);
  Frame.resize_for_overwrite(Old + Bound);
  uint8_t *Dst = Frame.data() + Old;
  size_t Got;
  if (!FP.Long && !FP.WholeWindow && !FP.PrefixSize) {
    // Upstream's call: the same bytes as its writer for the same level.
    // ZSTD_compressCCtx records the content size in the frame header, which
    // upstream's reader relies on.
    Got = ZSTD_compressCCtx(Ctx, Dst, Bound, Data, Size, FP.Level);
  } else {
    // ZSTD_compress2 records the content size too (ZSTD_c_contentSizeFlag
    // is on by default). The prefix is raw content (ZSTD_dct_rawContent).
    ZSTD_CCtx_reset(Ctx, ZSTD_reset_session_and_parameters);
    int Window = windowLogFor(uint64_t(FP.PrefixSize) + Size);
    if (Status S = zstdStatus(ZSTD_CCtx_setParameter(
            Ctx, ZSTD_c_compressionLevel, FP.Level)))
      return S;
    if (Status S = zstdStatus(
            ZSTD_CCtx_setParameter(Ctx, ZSTD_c_windowLog, Window)))
      return S;
    if (FP.Long)
      if (Status S = zstdStatus(ZSTD_CCtx_setParameter(
              Ctx, ZSTD_c_enableLongDistanceMatching, 1)))
        return S;
    if (FP.PrefixSize)
      if (Status S = zstdStatus(
              ZSTD_CCtx_refPrefix(Ctx, FP.Prefix, FP.PrefixSize)))
        return S;
    Got = ZSTD_compress2(Ctx, Dst, Bound, Data, Size);
  }
  if (Status S = zstdStatus(Got))
    return S;
  Frame.truncate(Old + Got);
  return Status::ok();
}

/// Decodes a frame the writer made (deduplication compares content).
Status decompressFrame(const uint8_t *Frame, size_t FrameSize,
                       const std::vector<uint8_t> &Prefix, uint64_t Original,
                       std::vector<uint8_t> &Out) {
  std::unique_ptr<ZSTD_DCtx, size_t (*)(ZSTD_DCtx *)> Ctx(ZSTD_createDCtx(),
                                                         ZSTD_freeDCtx);
  if (!Ctx)
    return Status::error("zstd: cannot create a context");
  Out.resize(Original);
  if (!Prefix.empty())
    if (Status S = zstdStatus(
            ZSTD_DCtx_refPrefix(Ctx.get(), Prefix.data(), Prefix.size())))
      return S;
  size_t Got =
      ZSTD_decompressDCtx(Ctx.get(), Out.data(), Out.size(), Frame, FrameSize);
  if (ZSTD_isError(Got) || Got != Original)
    return Status::error("internal error: a written zstd frame does not "
                         "decompress");
  return Status::ok();
}

/// A source's failure as the options want it worded.
Status sourceError(const ArchiveWriterOptions &O, const std::string &Key,
                   const std::string &Arch, Status S) {
  return O.NameEntriesInErrors
             ? Status::error(Key + " (" + Arch + "): " + S.message())
             : std::move(S);
}

/// The thread count of a write: the option, or the threads this process
/// may run on (CPU affinity), not the machine's cores.
unsigned threadsFor(const ArchiveWriterOptions &O) {
  if (O.Threads)
    return O.Threads;
  return std::max(1u, llvm::hardware_concurrency().compute_thread_count());
}

/// Runs Work on up to MaxThreads threads of a pool (this one waits); Work
/// takes its items from a shared counter. An exception escaping Work (an
/// allocation failure) stops that worker and becomes the error returned;
/// the items it did not finish must then not be used.
template <typename Fn>
Status runOnWorkers(size_t Items, unsigned MaxThreads, Fn &&Work) {
  std::mutex M;
  Status Failure = Status::ok();
  auto Fail = [&](std::string Message) {
    std::lock_guard<std::mutex> Lock(M);
    if (!Failure)
      Failure = Status::error(std::move(Message));
  };
  auto Guarded = [&] {
    try {
      Work();
    } catch (const std::bad_alloc &) {
      Fail("out of memory while writing archives");
    } catch (const std::exception &E) {
      Fail(std::string("internal error while writing archives: ") + E.what());
    } catch (...) {
      Fail("internal error while writing archives");
    }
  };
  unsigned Workers = static_cast<unsigned>(std::min<size_t>(MaxThreads, Items));
  if (Workers <= 1) {
    Guarded();
    return Failure;
  }
  llvm::DefaultThreadPool Pool(llvm::hardware_concurrency(Workers));
  for (unsigned T = 0; T < Workers; ++T)
    Pool.async(Guarded);
  Pool.wait();
  return Failure;
}

/// The end of the batch of Sequence that starts at Begin: consecutive
/// entries within the byte budget (at least one). Charge(I) is entry I's.
template <typename ChargeFn>
size_t batchEnd(size_t Begin, size_t Count, uint64_t Budget,
                ChargeFn &&Charge) {
  size_t End = Begin;
  uint64_t Charged = 0;
  while (End < Count && End - Begin < MaxBatchEntries) {
    uint64_t Hint = Charge(End);
    uint64_t C = Hint ? Hint : UnknownSizeCharge;
    if (End > Begin && Charged + C > Budget)
      break;
    Charged += C;
    ++End;
  }
  return End;
}

} // namespace

/// One archive being written by writeArchives().
struct ArchiveWriter::Output {
  ArchiveWriter *W = nullptr;
  bool Zstd = false;
  bool Shared = false; ///< "zstd-shared-segments"
  FrameParams Params;  ///< of every zstd frame (Prefix set per frame)
  std::unique_ptr<AtomicFile> File = std::make_unique<AtomicFile>();
  AtomicFile &F = *File;
  std::vector<Blob> Blobs;
  /// Shared segments: their content and the ones each entry uses (until
  /// the entries are written), where their frames are, and the index.
  SharedSegments Segments;
  std::vector<Blob> SegmentFrames;
  uint64_t SharedStart = 0, SharedEnd = 0;
  uint64_t IndexStart = 0, IndexEnd = 0;
  /// Where the u32 frame count and the frames of the code objects start.
  uint64_t KernelStart = BlobStart;
  /// Content hash -> ordinals of the blobs with that hash (Deduplicate).
  std::unordered_multimap<uint64_t, uint64_t> ByHash;
  /// Deduplicate: how many entries have each size hint (a copy has the
  /// size of its original), and whether some entry gave none.
  std::unordered_map<uint64_t, uint32_t> HintCount;
  bool SomeHintMissing = false;

  /// Whether an entry of hint Hint that read Size bytes may have a copy in
  /// this archive: only those are hashed. An entry whose exact size no
  /// other entry announced has none (a wrong hint only costs a copy that
  /// is stored twice; the output still does not depend on timing).
  bool mayHaveCopy(uint64_t Hint, uint64_t Size) const {
    if (SomeHintMissing || Hint != Size)
      return true;
    auto It = HintCount.find(Hint);
    return It == HintCount.end() || It->second > 1;
  }
  uint64_t Deduplicated = 0;
  /// Blobs placed but not written yet (their threads write them during the
  /// next batch): ordinal -> the frame (zstd) or the bytes, in memory.
  std::unordered_map<uint64_t, const uint8_t *> Unwritten;

  /// The segment index (docs/format-extensions.md), after the code objects,
  /// once their ordinals and segment lists are known.
  Status writeSegmentIndex() {
    uint64_t References = 0;
    for (const Blob &B : Blobs)
      References += B.Segments.size();
    if (Blobs.size() >= UINT32_MAX || References > UINT32_MAX / 4)
      return Status::error("too many shared segment references");
    std::vector<uint8_t> Index(8 + 8 * SegmentFrames.size() +
                               4 * (Blobs.size() + 1));
    writeLE<uint32_t>(&Index[0], static_cast<uint32_t>(SegmentFrames.size()));
    writeLE<uint32_t>(&Index[4], static_cast<uint32_t>(Blobs.size()));
    size_t At = 8;
    for (const Blob &S : SegmentFrames) {
      writeLE<uint32_t>(&Index[At], static_cast<uint32_t>(S.Size));
      writeLE<uint32_t>(&Index[At + 4], static_cast<uint32_t>(S.OriginalSize));
      At += 8;
    }
    uint64_t Start = 0;
    for (size_t O = 0; O <= Blobs.size(); ++O) {
      writeLE<uint32_t>(&Index[At], static_cast<uint32_t>(Start));
      At += 4;
      if (O < Blobs.size())
        Start += Blobs[O].Segments.size();
    }
    for (const Blob &B : Blobs)
      for (uint32_t S : B.Segments) {
        uint8_t Word[4];
        writeLE<uint32_t>(Word, S);
        Index.insert(Index.end(), Word, Word + 4);
      }
    IndexStart = F.offset();
    if (Status S = F.write(Index))
      return S;
    IndexEnd = F.offset();
    return Status::ok();
  }

  /// The original bytes of stored blob Ordinal, read back from the file.
  Status storedContent(uint64_t Ordinal, std::vector<uint8_t> &Out) {
    const Blob &B = Blobs[Ordinal];
    auto Mem = Unwritten.find(Ordinal);
    const uint8_t *InMemory = Mem == Unwritten.end() ? nullptr : Mem->second;
    if (!Zstd) {
      Out.resize(B.Size);
      if (InMemory) {
        if (B.Size)
          std::memcpy(Out.data(), InMemory, B.Size);
        return Status::ok();
      }
      return F.readAt(B.Offset, Out.data(), Out.size());
    }
    std::vector<uint8_t> Frame, Prefix;
    if (!InMemory) {
      Frame.resize(B.Size);
      if (Status S = F.readAt(B.Offset + 4, Frame.data(), Frame.size()))
        return S;
      InMemory = Frame.data();
    }
    Segments.concatenate(B.Segments, Prefix);
    return decompressFrame(InMemory, B.Size, Prefix, B.OriginalSize, Out);
  }
};

Status ArchiveWriter::write(const std::string &Path, ArchiveWriteStats *Stats) {
  std::vector<Job> Jobs{{this, Path, {}}};
  if (Status S = writeArchives(Jobs))
    return S;
  if (Stats)
    *Stats = Jobs.front().Stats;
  return Status::ok();
}

Status ArchiveWriter::writeArchives(
    std::vector<Job> &Jobs, const std::vector<std::pair<size_t, size_t>> &Order,
    std::vector<std::unique_ptr<AtomicFile>> *Uncommitted) {
  if (Jobs.empty())
    return Status::ok();
  std::vector<std::pair<size_t, size_t>> Sequence = Order;
  size_t Total = 0;
  for (const Job &J : Jobs)
    Total += J.Writer->Entries.size();
  if (Sequence.empty())
    for (size_t J = 0; J < Jobs.size(); ++J)
      for (size_t I = 0; I < Jobs[J].Writer->Entries.size(); ++I)
        Sequence.emplace_back(J, I);
  if (Sequence.size() != Total)
    return Status::error("internal error: the write order does not name "
                         "every entry once");
  for (const auto &[J, I] : Sequence)
    if (J >= Jobs.size() || I >= Jobs[J].Writer->Entries.size())
      return Status::error("internal error: the write order names no entry");

  std::vector<std::unique_ptr<Output>> Outs;
  for (Job &J : Jobs) {
    const ArchiveWriterOptions &O = J.Writer->Opts;
    bool Zstd = O.Compression != ArchiveCompression::None;
    if (Zstd && (O.ZstdLevel < ZSTD_minCLevel() || O.ZstdLevel > ZSTD_maxCLevel()))
      return Status::error("zstd level " + std::to_string(O.ZstdLevel) +
                           " is outside [" + std::to_string(ZSTD_minCLevel()) +
                           ", " + std::to_string(ZSTD_maxCLevel()) + "]");
    if (Zstd && J.Writer->Entries.size() > UINT32_MAX)
      return Status::error("too many entries for a zstd-per-kernel archive");
    auto Out = std::make_unique<Output>();
    Out->W = J.Writer;
    Out->Zstd = Zstd;
    Out->Shared = O.Compression == ArchiveCompression::ZstdSharedSegments;
    Out->Params.Level = O.ZstdLevel;
    Out->Params.Long = O.Compression == ArchiveCompression::ZstdPerKernelLong;
    Out->Params.WholeWindow = Out->Shared;
    if (Status S = Out->F.open(J.Path))
      return S;
    uint8_t Header[BlobStart] = {};
    std::memcpy(Header, ArchiveMagic, sizeof(ArchiveMagic));
    writeLE<uint32_t>(Header + 4, archiveFormatVersion(O.Compression));
    if (Status S = Out->F.write(Header, sizeof(Header)))
      return S;
    Outs.push_back(std::move(Out));
  }
  // Shared segments precede the frames of the code objects.
  if (Status S = writeSharedSegments(Jobs, Sequence, Outs))
    return S;
  // The pass below reads every source once.
  for (const auto &[J, I] : Sequence) {
    const EntrySource &Src = Jobs[J].Writer->Entries[I].Source;
    Src.willRead();
    Output &O = *Outs[J];
    if (Src.sizeHint() == 0)
      O.SomeHintMissing = true;
    else
      ++O.HintCount[Src.sizeHint()];
  }
  for (std::unique_ptr<Output> &Out : Outs)
    if (Out->Zstd) {
      Out->KernelStart = Out->F.offset();
      uint8_t Count[4] = {}; // the stored frame count, patched at the end
      if (Status S = Out->F.write(Count, sizeof(Count)))
        return S;
    }

  const ArchiveWriterOptions &First = Jobs.front().Writer->Opts;
  const unsigned MaxThreads = threadsFor(First);
  // The sequential phase compresses likely duplicates that turn out not to
  // be, with its own context.
  std::unique_ptr<ZSTD_CCtx, size_t (*)(ZSTD_CCtx *)> SerialCtx(nullptr,
                                                              ZSTD_freeCCtx);
  std::vector<uint8_t> Theirs, Ours;
  Bytes SerialFrame;
  std::vector<std::unique_ptr<WorkerState>> States(MaxThreads);
  for (auto &St : States)
    St = std::make_unique<WorkerState>();

  struct Item {
    Status Err;
    uint64_t Hash = 0;
    /// A blob with the same hash and size exists already: the bytes are kept
    /// unencoded until the comparison.
    bool Likely = false;
    bool Hashed = false; ///< Hash is set (a copy of it may exist)
    bool Encoded = false;
    unsigned Worker = 0;           ///< whose buffers hold what is kept
    bool RawInRange = false;       ///< raw bytes at RawAt in Bufs.Range
    const uint8_t *Raw = nullptr;  ///< raw bytes, when kept elsewhere
    uint64_t RawAt = 0;
    size_t Size = 0;
    /// In Frames, when Encoded: the u32 size at FrameAt, then the frame.
    uint64_t FrameAt = 0, FrameSize = 0;
    const uint8_t *raw(const std::vector<std::unique_ptr<WorkerState>> &S)
        const {
      return RawInRange ? S[Worker]->Bufs.Range.data() + RawAt : Raw;
    }
  };

  for (size_t Begin = 0; Begin < Sequence.size();) {
    size_t End = batchEnd(Begin, Sequence.size(), First.BatchBytes,
                          [&](size_t K) {
                            const auto &[J, I] = Sequence[K];
                            return Jobs[J].Writer->Entries[I].Source.sizeHint();
                          });

    size_t N = End - Begin;
    std::vector<Item> Items(N);
    std::atomic<size_t> Next{0};
    std::atomic<unsigned> NextWorker{0};
    // The previous batch's blobs are written by the threads that hold them
    // as they start on this batch; the states no thread takes this time,
    // here.
    for (std::unique_ptr<Output> &Out : Outs)
      Out->Unwritten.clear();
    for (size_t T = std::min<size_t>(MaxThreads, N); T < States.size(); ++T)
      if (Status S = States[T]->flushPending())
        return S;
    // The threads take the largest entries first, so that the batch does
    // not end with one thread compressing a large entry while the others
    // wait (bench/therock/schedule.py); results still go out in order.
    std::vector<size_t> Pick(N);
    for (size_t I = 0; I < N; ++I)
      Pick[I] = I;
    std::sort(Pick.begin(), Pick.end(), [&](size_t A, size_t B) {
      auto Hint = [&](size_t I) {
        const auto &[J, EI] = Sequence[Begin + I];
        return Jobs[J].Writer->Entries[EI].Source.sizeHint();
      };
      uint64_t HA = Hint(A), HB = Hint(B);
      return HA != HB ? HA > HB : A < B;
    });
    // Reads (and compresses) in parallel; nothing here depends on timing:
    // the blob index consulted is the one of the previous batches.
    auto Work = [&] {
      const unsigned Me = NextWorker.fetch_add(1);
      WorkerState &St = *States[Me];
      if (Status S = St.flushPending()) {
        St.WriteErr = std::move(S);
        return;
      }
      ReadBuffers &Bufs = St.Bufs;
      for (size_t K; (K = Next.fetch_add(1)) < N;) {
        size_t I = Pick[K];
        Item &It = Items[I];
        Output &O = *Outs[Sequence[Begin + I].first];
        const Entry &E = O.W->Entries[Sequence[Begin + I].second];
        const ArchiveWriterOptions &EO = O.W->Opts;
        const uint8_t *Data = nullptr;
        size_t Size = 0;
        It.Worker = Me;
        // Range holds the bytes this thread kept; a file range read lands
        // after them and is dropped again unless kept.
        const size_t Kept = Bufs.Range.size();
        llvm::scope_exit Drop([&] {
          if (!It.RawInRange)
            Bufs.Range.truncate(Kept);
        });
        if (Status S = E.Source.read(Bufs, Data, Size)) {
          It.Err = sourceError(EO, E.Key, E.Arch, std::move(S));
          continue;
        }
        It.Size = Size;
        It.Hashed = EO.Deduplicate && O.mayHaveCopy(E.Source.sizeHint(), Size);
        if (It.Hashed) {
          It.Hash = contentHash(Data, Size);
          auto [B, BEnd] = O.ByHash.equal_range(It.Hash);
          for (; B != BEnd && !It.Likely; ++B)
            It.Likely = O.Blobs[B->second].OriginalSize == Size;
        }
        if (!O.Zstd || It.Likely) {
          // Keep the raw bytes: a view stays valid until write() returns;
          // bytes read into Bufs stay in (or are appended to) Range.
          if (Size && Data == Bufs.Produced.data()) {
            Bufs.Range.append(Data, Data + Size);
            Data = Bufs.Range.data() + Bufs.Range.size() - Size;
          }
          if (Size && Data >= Bufs.Range.data() &&
              Data < Bufs.Range.data() + Bufs.Range.size()) {
            It.RawInRange = true;
            It.RawAt = static_cast<uint64_t>(Data - Bufs.Range.data());
          } else {
            It.Raw = Data;
          }
          It.Encoded = !O.Zstd;
          continue;
        }
        if (!St.Ctx)
          St.Ctx = ZSTD_createCCtx();
        FrameParams FP = O.Params;
        if (O.Shared) {
          O.Segments.concatenate(
              O.Segments.itemSegments(Sequence[Begin + I].second),
              St.Prefix);
          FP.Prefix = St.Prefix.data();
          FP.PrefixSize = St.Prefix.size();
        }
        It.FrameAt = St.Frames.size();
        St.Frames.resize_for_overwrite(It.FrameAt + 4); // the size, below
        if (Status S = compressFrame(St.Ctx, Data, Size, FP, St.Frames)) {
          It.Err = std::move(S);
          continue;
        }
        It.FrameSize = St.Frames.size() - It.FrameAt - 4;
        writeLE<uint32_t>(St.Frames.data() + It.FrameAt,
                          static_cast<uint32_t>(It.FrameSize));
        It.Encoded = true;
      }
    };
    if (Status S = runOnWorkers(N, MaxThreads, Work))
      return S;
    for (auto &St : States)
      if (St->WriteErr)
        return St->WriteErr;

    // Results go out in order, so the bytes never depend on timing.
    for (size_t I = 0; I < N; ++I) {
      Item &It = Items[I];
      if (It.Err)
        return It.Err;
      Output &O = *Outs[Sequence[Begin + I].first];
      Entry &E = O.W->Entries[Sequence[Begin + I].second];
      E.OriginalSize = It.Size;
      const uint8_t *Raw = It.raw(States);
      const uint8_t *Frame =
          States[It.Worker]->Frames.data() + It.FrameAt + 4;
      uint64_t FrameSize = It.FrameSize;
      const std::vector<uint32_t> NoSegments;
      const std::vector<uint32_t> &EntrySegments =
          O.Shared ? O.Segments.itemSegments(Sequence[Begin + I].second)
                   : NoSegments;

      if (It.Hashed) {
        bool Found = false;
        auto [B, BEnd] = O.ByHash.equal_range(It.Hash);
        for (; B != BEnd && !Found; ++B) {
          if (O.Blobs[B->second].OriginalSize != It.Size)
            continue;
          const uint8_t *Mine = Raw;
          if (!Mine) { // encoded in this batch: compare the decoded frame
            std::vector<uint8_t> Prefix;
            O.Segments.concatenate(EntrySegments, Prefix);
            if (Status S = decompressFrame(Frame, FrameSize, Prefix, It.Size,
                                           Ours))
              return S;
            Mine = Ours.data();
          }
          if (Status S = O.storedContent(B->second, Theirs))
            return S;
          if (It.Size == 0 || std::memcmp(Theirs.data(), Mine, It.Size) == 0) {
            E.Ordinal = B->second;
            ++O.Deduplicated;
            Found = true;
          }
        }
        if (Found)
          continue;
      }

      if (!It.Encoded) { // a likely duplicate that was not one
        if (!SerialCtx)
          SerialCtx.reset(ZSTD_createCCtx());
        std::vector<uint8_t> Prefix;
        O.Segments.concatenate(EntrySegments, Prefix);
        FrameParams FP = O.Params;
        FP.Prefix = Prefix.data();
        FP.PrefixSize = Prefix.size();
        SerialFrame.clear();
        if (Status S = compressFrame(SerialCtx.get(), Raw, It.Size, FP,
                                     SerialFrame))
          return S;
        Frame = SerialFrame.data();
        FrameSize = SerialFrame.size();
      }
      // The blob gets its place now; the thread holding its bytes writes
      // them there (a frame made here is written at once).
      Blob B;
      B.OriginalSize = It.Size;
      B.Segments = EntrySegments;
      E.Ordinal = O.Blobs.size();
      if (O.Zstd) {
        if (FrameSize > UINT32_MAX)
          return Status::error(E.Key + " (" + E.Arch +
                               "): compressed frame exceeds 4 GiB");
        if (Status S = O.F.reserve(4 + FrameSize, B.Offset))
          return S;
        B.Size = FrameSize;
        if (!It.Encoded) {
          uint8_t SizeField[4];
          writeLE<uint32_t>(SizeField, static_cast<uint32_t>(FrameSize));
          if (Status S = O.F.writeReserved(B.Offset, SizeField, 4))
            return S;
          if (Status S = O.F.writeReserved(B.Offset + 4, Frame, FrameSize))
            return S;
        } else {
          States[It.Worker]->Pending.push_back(
              {&O.F, B.Offset, Frame - 4, 4 + FrameSize});
          O.Unwritten.emplace(E.Ordinal, Frame);
        }
      } else {
        if (Status S = O.F.reserve(It.Size, B.Offset))
          return S;
        B.Size = It.Size;
        if (It.Size) {
          States[It.Worker]->Pending.push_back(
              {&O.F, B.Offset, Raw, It.Size});
          O.Unwritten.emplace(E.Ordinal, Raw);
        }
      }
      if (It.Hashed)
        O.ByHash.emplace(It.Hash, E.Ordinal);
      O.Blobs.push_back(B);
    }
    Begin = End;
  }
  // The last batch's blobs, each thread writing its own.
  {
    std::atomic<unsigned> NextWorker{0};
    if (Status S = runOnWorkers(States.size(), MaxThreads, [&] {
          WorkerState &St = *States[NextWorker.fetch_add(1)];
          St.WriteErr = St.flushPending();
        }))
      return S;
    for (auto &St : States)
      if (St->WriteErr)
        return St->WriteErr;
  }

  std::vector<uint64_t> FileBytes(Outs.size());
  for (size_t J = 0; J < Outs.size(); ++J) {
    Output &O = *Outs[J];
    O.Segments.releaseContent();
    uint64_t KernelEnd = O.F.offset();
    if (O.Shared)
      if (Status S = O.writeSegmentIndex())
        return S;
    uint64_t TocOffset = O.F.offset();
    if (Status S = O.F.write(O.W->buildToc(O, KernelEnd)))
      return S;
    uint8_t TocField[8];
    writeLE<uint64_t>(TocField, TocOffset);
    if (Status S = O.F.writeAt(8, TocField, sizeof(TocField)))
      return S;
    if (O.Zstd) {
      uint8_t Count[4];
      writeLE<uint32_t>(Count, static_cast<uint32_t>(O.Blobs.size()));
      if (Status S = O.F.writeAt(O.KernelStart, Count, sizeof(Count)))
        return S;
    }
    FileBytes[J] = O.F.offset();
  }
  std::vector<AtomicFile *> Files;
  for (size_t J = 0; J < Outs.size(); ++J) {
    Files.push_back(Outs[J]->File.get());
    ArchiveWriteStats &St = Jobs[J].Stats;
    St = ArchiveWriteStats();
    St.Entries = Outs[J]->W->Entries.size();
    for (const Entry &E : Outs[J]->W->Entries)
      St.OriginalBytes += E.OriginalSize;
    St.FileBytes = FileBytes[J];
    St.Deduplicated = Outs[J]->Deduplicated;
    St.SharedSegments = Outs[J]->SegmentFrames.size();
    for (const Blob &B : Outs[J]->SegmentFrames) {
      St.SharedBytes += B.OriginalSize;
      St.SharedStoredBytes += B.Size;
    }
  }
  if (Uncommitted) {
    for (std::unique_ptr<Output> &O : Outs) {
      if (Status S = O->F.finishContents())
        return S;
      Uncommitted->push_back(std::move(O->File));
    }
    return Status::ok();
  }
  return commitTogether(Files);
}

std::vector<std::string> ArchiveWriter::arches() const {
  std::set<std::string> Unique;
  for (const Entry &E : Entries)
    Unique.insert(E.Arch);
  return std::vector<std::string>(Unique.begin(), Unique.end());
}

std::string kpack::defaultArchFamily(const std::vector<std::string> &Arches) {
  return Arches.size() == 1 ? Arches.front() : std::string("multi");
}

std::vector<uint8_t>
ArchiveWriter::buildToc(const Output &O, uint64_t KernelEnd) const {
  const bool Zstd = O.Zstd, Shared = O.Shared;
  const std::vector<Blob> &Blobs = O.Blobs;
  std::vector<std::string> Arches = arches();

  // Key order matches upstream's writer, so upstream-shaped tooling that
  // compares TOCs sees the same layout; version 2 adds its keys at the end.
  msgpack::sbuffer Buf;
  msgpack::packer<msgpack::sbuffer> P(Buf);
  P.pack_map(Shared ? 12 : Zstd ? 8 : 7);
  packStr(P, "format_version");
  P.pack_uint32(archiveFormatVersion(Opts.Compression));
  packStr(P, "group_name");
  packStr(P, Opts.GroupName);
  packStr(P, "gfx_arch_family");
  packStr(P, Opts.GfxArchFamily.empty() ? defaultArchFamily(Arches)
                                        : Opts.GfxArchFamily);
  packStr(P, "gfx_arches");
  P.pack_array(static_cast<uint32_t>(Arches.size()));
  for (const std::string &A : Arches)
    packStr(P, A);

  packStr(P, "toc");
  // KeyIndex is sorted by key; the TOC lists keys in first-use order.
  std::vector<const std::string *> KeyNames(KeyEntries.size());
  for (const auto &[Key, Index] : KeyIndex)
    KeyNames[Index] = &Key;
  P.pack_map(static_cast<uint32_t>(KeyEntries.size()));
  for (size_t K = 0; K < KeyEntries.size(); ++K) {
    packStr(P, *KeyNames[K]);
    P.pack_map(static_cast<uint32_t>(KeyEntries[K].size()));
    for (size_t I : KeyEntries[K]) {
      const Entry &E = Entries[I];
      const Blob &B = Blobs[E.Ordinal];
      packStr(P, E.Arch);
      // Version 2 readers rely on the frame location.
      bool Frames = Zstd && (Opts.FrameOffsets || Shared);
      P.pack_map(3 + (Frames ? 2 : 0) + (E.Metadata.empty() ? 0 : 1));
      packStr(P, "type");
      packStr(P, "hsaco");
      packStr(P, "ordinal");
      P.pack_uint64(E.Ordinal);
      packStr(P, "original_size");
      P.pack_uint64(E.OriginalSize);
      if (!E.Metadata.empty()) {
        packStr(P, "metadata");
        P.pack_map(static_cast<uint32_t>(E.Metadata.size()));
        for (const auto &[Name, Value] : E.Metadata) {
          packStr(P, Name);
          packStr(P, Value);
        }
      }
      if (Frames) {
        packStr(P, "frame_offset");
        P.pack_uint64(B.Offset);
        packStr(P, "frame_size");
        P.pack_uint64(B.Size);
      }
    }
  }

  packStr(P, "compression_scheme");
  packStr(P, compressionSchemeName(Opts.Compression));
  if (Zstd) {
    packStr(P, "zstd_offset");
    P.pack_uint64(O.KernelStart);
    packStr(P, "zstd_size");
    P.pack_uint64(KernelEnd - O.KernelStart);
    if (Shared) {
      packStr(P, "shared_offset");
      P.pack_uint64(O.SharedStart);
      packStr(P, "shared_size");
      P.pack_uint64(O.SharedEnd - O.SharedStart);
      packStr(P, "shared_index_offset");
      P.pack_uint64(O.IndexStart);
      packStr(P, "shared_index_size");
      P.pack_uint64(O.IndexEnd - O.IndexStart);
    }
  } else {
    packStr(P, "blobs");
    P.pack_array(static_cast<uint32_t>(Blobs.size()));
    for (const Blob &B : Blobs) {
      P.pack_map(2);
      packStr(P, "offset");
      P.pack_uint64(B.Offset);
      packStr(P, "size");
      P.pack_uint64(B.Size);
    }
  }
  return std::vector<uint8_t>(Buf.data(), Buf.data() + Buf.size());
}

//===----------------------------------------------------------------------===//
// Shared segments (format version 2, docs/format-extensions.md)
//===----------------------------------------------------------------------===//

Status ArchiveWriter::writeSharedSegments(
    std::vector<Job> &Jobs,
    const std::vector<std::pair<size_t, size_t>> &Sequence,
    std::vector<std::unique_ptr<Output>> &Outs) {
  // Positions in Sequence of the entries of shared-segments archives.
  std::vector<size_t> Analysed;
  for (size_t K = 0; K < Sequence.size(); ++K)
    if (Outs[Sequence[K].first]->Shared)
      Analysed.push_back(K);
  std::vector<std::unique_ptr<SharedContentIndex>> Index(Outs.size());
  for (size_t J = 0; J < Outs.size(); ++J)
    if (Outs[J]->Shared)
      Index[J] = std::make_unique<SharedContentIndex>(
          Outs[J]->W->Opts.SharedLimits);
  const ArchiveWriterOptions &First = Jobs.front().Writer->Opts;
  const unsigned MaxThreads = threadsFor(First);

  // Pass 1: every source read, chunked in parallel, indexed in order. With
  // deduplication, a second copy of a code object is left out: it is stored
  // as an alias and would only make its whole content look shared.
  std::vector<std::set<std::pair<uint64_t, uint64_t>>> Seen(Outs.size());
  struct Item {
    Status Err;
    ReadBuffers Owned;
    const uint8_t *Data = nullptr;
    size_t Size = 0;
    uint64_t Hash = 0;
    std::vector<ContentChunk> Chunks;
  };
  for (size_t K : Analysed) {
    const auto &[J, I] = Sequence[K];
    Jobs[J].Writer->Entries[I].Source.willRead();
  }
  for (size_t Begin = 0; Begin < Analysed.size();) {
    size_t End = batchEnd(Begin, Analysed.size(), First.BatchBytes,
                          [&](size_t K) {
                            const auto &[J, I] = Sequence[Analysed[K]];
                            return Jobs[J].Writer->Entries[I].Source.sizeHint();
                          });
    size_t N = End - Begin;
    std::vector<Item> Items(N);
    std::atomic<size_t> Next{0};
    if (Status S = runOnWorkers(N, MaxThreads, [&] {
      ReadBuffers Bufs;
      for (size_t I; (I = Next.fetch_add(1)) < N;) {
        Item &It = Items[I];
        const auto &[J, EI] = Sequence[Analysed[Begin + I]];
        const ArchiveWriterOptions &EO = Outs[J]->W->Opts;
        const Entry &E = Outs[J]->W->Entries[EI];
        Bufs.Range.clear(); // what it held was not kept
        if (Status S = E.Source.read(Bufs, It.Data, It.Size)) {
          It.Err = sourceError(EO, E.Key, E.Arch, std::move(S));
          continue;
        }
        if (It.Size && Bufs.holds(It.Data))
          It.Owned.swap(Bufs);
        if (EO.Deduplicate)
          It.Hash = contentHash(It.Data, It.Size);
        It.Chunks = chunkContent(It.Data, It.Size);
      }
    }))
      return S;
    for (size_t I = 0; I < N; ++I) {
      Item &It = Items[I];
      if (It.Err)
        return It.Err;
      const auto &[J, EI] = Sequence[Analysed[Begin + I]];
      if (!Outs[J]->W->Opts.Deduplicate ||
          Seen[J].emplace(It.Hash, It.Size).second)
        Index[J]->add(static_cast<uint32_t>(EI), It.Data, It.Chunks);
      It = Item();
    }
    Begin = End;
  }

  // The segments of each archive, compressed in parallel, their frames
  // written back to back (the index follows the code objects).
  for (size_t J = 0; J < Outs.size(); ++J) {
    Output &O = *Outs[J];
    if (!O.Shared)
      continue;
    O.Segments = Index[J]->finish(O.W->Entries.size());
    Index[J].reset();
    const size_t Count = O.Segments.size();
    if (Count > UINT32_MAX)
      return Status::error("too many shared segments");
    for (uint32_t I = 0; I < Count; ++I)
      if (O.Segments.segmentSize(I) > UINT32_MAX)
        return Status::error("a shared segment exceeds 4 GiB");
    std::vector<Bytes> Frames(Count);
    std::vector<Status> Errors(Count);
    std::atomic<size_t> Next{0};
    if (Status S = runOnWorkers(Count, MaxThreads, [&] {
      ZSTD_CCtx *Ctx = ZSTD_createCCtx();
      llvm::scope_exit FreeCtx([&] { ZSTD_freeCCtx(Ctx); });
      std::vector<uint8_t> Segment;
      for (size_t I; (I = Next.fetch_add(1)) < Count;) {
        O.Segments.segment(static_cast<uint32_t>(I), Segment);
        Errors[I] = compressFrame(Ctx, Segment.data(), Segment.size(),
                                  O.Params, Frames[I]);
      }
    }))
      return S;
    O.SharedStart = O.F.offset();
    for (size_t I = 0; I < Count; ++I) {
      if (Errors[I])
        return Errors[I];
      if (Frames[I].size() > UINT32_MAX)
        return Status::error("a shared segment's frame exceeds 4 GiB");
      Blob B;
      B.Offset = O.F.offset();
      B.Size = Frames[I].size();
      B.OriginalSize = O.Segments.segmentSize(static_cast<uint32_t>(I));
      if (Status S = O.F.write(Frames[I].data(), Frames[I].size()))
        return S;
      Frames[I] = Bytes();
      O.SegmentFrames.push_back(std::move(B));
    }
    O.SharedEnd = O.F.offset();
  }
  return Status::ok();
}
