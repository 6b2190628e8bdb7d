//===- ArchiveReader.cpp - Lazy .kpack archive reader ---------------------===//

#include "kpack/ArchiveReader.h"

#include "ByteSource.h"
#include "kpack/ByteOrder.h"

#define MSGPACK_NO_BOOST
#include <msgpack.hpp>
#define ZSTD_STATIC_LINKING_ONLY // ZSTD_decompressBound
#include <zstd.h>

#include <algorithm>
#include <cstdint>
#include <cstring>
#include <mutex>
#include <new>
#include <tuple>

namespace kpack {

using detail::readLE;

namespace {

constexpr char Magic[4] = {'K', 'P', 'A', 'K'};
/// Version 1: FORMAT.md §1; version 2: "zstd-shared-segments"
/// (docs/format-extensions.md).
constexpr uint32_t MaxSupportedVersion = 2;
constexpr uint64_t HeaderSize = 16;
constexpr const char *SharedSegmentsName = "zstd-shared-segments";
/// A frame larger than this has its first bytes (size word, zstd header)
/// read and checked before a buffer of its size is allocated and filled:
/// a frame_offset or segment size pointing into garbage (or into the zeros
/// of a sparse file) fails after reading a few bytes, not gigabytes.
constexpr uint64_t LargeFrameBytes = uint64_t(1) << 20;

Status invalid(std::string Message) {
  return Status(KPACK_ERROR_INVALID_FORMAT, std::move(Message));
}

/// An integer field of the wrong msgpack type: upstream reports it as a
/// msgpack parse failure (its conversion throws), and so does this reader.
Status wrongType(std::string Message) {
  return Status(KPACK_ERROR_MSGPACK_PARSE_FAILED, std::move(Message));
}

// Typed views of msgpack objects: each returns false on a type mismatch.
bool asString(const msgpack::object &O, std::string &Out) {
  if (O.type != msgpack::type::STR)
    return false;
  Out.assign(O.via.str.ptr, O.via.str.size);
  return true;
}

bool asUInt(const msgpack::object &O, uint64_t &Out) {
  if (O.type != msgpack::type::POSITIVE_INTEGER)
    return false;
  Out = O.via.u64;
  return true;
}

bool keyIs(const msgpack::object_kv &KV, std::string_view Name) {
  return KV.key.type == msgpack::type::STR &&
         std::string_view(KV.key.via.str.ptr, KV.key.via.str.size) == Name;
}

const msgpack::object *lookup(const msgpack::object &Map,
                              std::string_view Name) {
  for (uint32_t I = 0; I < Map.via.map.size; ++I)
    if (keyIs(Map.via.map.ptr[I], Name))
      return &Map.via.map.ptr[I].val;
  return nullptr;
}

/// What an exception other than std::bad_alloc becomes: nothing but
/// malformed input is expected to raise one, and none leaves the reader.
Status unexpected(const std::exception &Ex) {
  return invalid(std::string("malformed archive: ") + Ex.what());
}

Status requireString(const msgpack::object &Map, const char *Name,
                       bool Required, std::string &Out) {
  const msgpack::object *O = lookup(Map, Name);
  if (!O)
    return Required ? invalid(std::string("TOC lacks '") + Name + "'")
                    : Status::ok();
  if (!asString(*O, Out))
    return invalid(std::string("TOC '") + Name + "' is not a string");
  return Status::ok();
}

Status requireUInt(const msgpack::object &Map, const char *Name,
                     const std::string &Where, uint64_t &Out) {
  const msgpack::object *O = lookup(Map, Name);
  if (!O)
    return invalid(Where + " lacks '" + Name + "'");
  if (!asUInt(*O, Out))
    return wrongType(Where + " '" + Name + "' is not an unsigned integer");
  return Status::ok();
}

} // namespace

/// Frame locations found by walking the u32 size chain of a zstd blob.
struct ArchiveReader::FrameChain {
  std::once_flag Once;
  Status Result;
  std::vector<FrameLocation> Frames;
};

namespace {
/// Scratch memory kept between loads and overwritten whole by each: left
/// uninitialized, and grown at least twofold, since fresh pages cost about
/// as much as reading into them (a first load in a process should not pay
/// for them at every larger frame).
class ScratchBuffer {
public:
  unsigned char *get(size_t N) {
    if (N > Capacity) {
      const size_t Grown = std::max(N, Capacity * 2);
      Data.reset(new unsigned char[Grown]);
      Capacity = Grown;
    }
    return Data.get();
  }
  size_t capacity() const { return Capacity; }
  void release() {
    Data.reset();
    Capacity = 0;
  }

private:
  std::unique_ptr<unsigned char[]> Data;
  size_t Capacity = 0;
};
} // namespace

/// Reusable decompression state: a zstd context and a buffer for the
/// compressed frame, so that steady-state loads allocate only their output.
struct ArchiveReader::Decoder {
  ZSTD_DCtx *Context = nullptr;
  ScratchBuffer Frame;
  /// A frame's prefix when it has several segments.
  ScratchBuffer Prefix;
  ~Decoder() { ZSTD_freeDCtx(Context); }
};

/// Decoded shared segments. A segment is decoded by the first load that
/// needs it (loads of other segments proceed in parallel; a second load of
/// the same one waits for it) and kept until the cache exceeds its limit,
/// when the least recently used others are dropped; a load holds the ones
/// it uses until it is done. Each segment is an allocation of its own, so
/// that Bytes, the sum of the kept segments' sizes, is the memory the cache
/// keeps alive, never more than Limit: a segment larger than Limit is not
/// kept at all.
struct ArchiveReader::SegmentCache {
  /// The segment index, read once (segmentIndex()).
  std::once_flag Once;
  Status IndexResult;
  SegmentIndex Index;

  struct Slot {
    std::mutex Load; ///< held while the segment is being decoded
    std::shared_ptr<const unsigned char> Data; ///< under Mutex
    uint64_t Size = 0;                         ///< under Mutex
    uint64_t LastUse = 0;                      ///< under Mutex
  };
  std::unique_ptr<Slot[]> Slots;
  size_t Count = 0;
  std::mutex Mutex;
  uint64_t Bytes = 0, Clock = 0;      ///< under Mutex
  uint64_t Limit = SegmentCacheBytes; ///< under Mutex

  std::shared_ptr<const unsigned char> cached(Slot &S) {
    std::lock_guard<std::mutex> Lock(Mutex);
    if (S.Data)
      S.LastUse = ++Clock;
    return S.Data;
  }
  /// Keeps D unless it alone exceeds the limit (then only its load uses it).
  void insert(Slot &S, std::shared_ptr<const unsigned char> D, uint64_t Size) {
    std::lock_guard<std::mutex> Lock(Mutex);
    if (Size > Limit)
      return;
    Bytes += Size;
    S.Data = std::move(D);
    S.Size = Size;
    S.LastUse = ++Clock;
    trim(&S);
  }
  /// Drops least recently used segments other than Keep while over the
  /// limit. Called with Mutex held.
  void trim(const Slot *Keep) {
    while (Bytes > Limit) {
      Slot *Oldest = nullptr;
      for (size_t I = 0; I < Count; ++I)
        if (&Slots[I] != Keep && Slots[I].Data &&
            (!Oldest || Slots[I].LastUse < Oldest->LastUse))
          Oldest = &Slots[I];
      if (!Oldest)
        break;
      Bytes -= Oldest->Size;
      Oldest->Data.reset();
    }
  }
};

/// Idle decoders, taken and returned under a short lock that is never held
/// across reading or decompression, so loads run in parallel.
struct ArchiveReader::DecoderPool {
  /// Frame buffers above this size are not kept between loads.
  static constexpr size_t MaxRetainedFrame = size_t(16) << 20;

  std::mutex Mutex;
  std::vector<std::unique_ptr<Decoder>> Idle;

  std::unique_ptr<Decoder> acquire() {
    {
      std::lock_guard<std::mutex> Lock(Mutex);
      if (!Idle.empty()) {
        std::unique_ptr<Decoder> D = std::move(Idle.back());
        Idle.pop_back();
        return D;
      }
    }
    auto D = std::make_unique<Decoder>();
    D->Context = ZSTD_createDCtx();
    if (!D->Context)
      throw std::bad_alloc();
    return D;
  }
  void release(std::unique_ptr<Decoder> D) {
    if (D->Frame.capacity() > MaxRetainedFrame)
      D->Frame.release();
    if (D->Prefix.capacity() > MaxRetainedFrame)
      D->Prefix.release();
    std::lock_guard<std::mutex> Lock(Mutex);
    try {
      Idle.push_back(std::move(D));
    } catch (const std::bad_alloc &) {
      // Not pooled; D frees the decoder.
    }
  }
};


ArchiveReader::ArchiveReader()
    : Chain(std::make_unique<FrameChain>()),
      Decoders(std::make_unique<DecoderPool>()),
      SegmentData(std::make_unique<SegmentCache>()) {}
ArchiveReader::~ArchiveReader() = default;

void ArchiveReader::setSegmentCacheLimit(uint64_t Bytes) {
  std::lock_guard<std::mutex> Lock(SegmentData->Mutex);
  SegmentData->Limit = Bytes;
  SegmentData->trim(nullptr);
}

uint64_t ArchiveReader::cachedSegmentBytes() const {
  std::lock_guard<std::mutex> Lock(SegmentData->Mutex);
  return SegmentData->Bytes;
}

const char *ArchiveReader::schemeName(Scheme S) {
  switch (S) {
  case Scheme::None:
    return "none";
  case Scheme::ZstdPerKernel:
    return "zstd-per-kernel";
  case Scheme::ZstdSharedSegments:
    return SharedSegmentsName;
  }
  return "none";
}

uint64_t ArchiveReader::fileSize() const { return Source->size(); }

Status ArchiveReader::open(const std::string &Path,
                             std::unique_ptr<ArchiveReader> &Out) {
  try {
    std::unique_ptr<ArchiveReader> R(new ArchiveReader());
    if (Status E = ByteSource::openFile(Path, R->Source))
      return E;
    if (Status E = R->parse())
      return E;
    Out = std::move(R);
    return Status::ok();
  } catch (const std::bad_alloc &) {
    return Status(KPACK_ERROR_OUT_OF_MEMORY, "out of memory opening " + Path);
  } catch (const std::exception &Ex) {
    return unexpected(Ex);
  }
}

Status ArchiveReader::openBytes(const void *Data, size_t Size,
                                  std::unique_ptr<ArchiveReader> &Out) {
  try {
    std::unique_ptr<ArchiveReader> R(new ArchiveReader());
    R->Source = ByteSource::fromBytes(Data, Size);
    if (Status E = R->parse())
      return E;
    Out = std::move(R);
    return Status::ok();
  } catch (const std::bad_alloc &) {
    return Status(KPACK_ERROR_OUT_OF_MEMORY, "out of memory");
  } catch (const std::exception &Ex) {
    return unexpected(Ex);
  }
}

Status ArchiveReader::parse() {
  const uint64_t FileSize = Source->size();
  if (FileSize < HeaderSize)
    return invalid("file too small for a kpack header");
  unsigned char Header[HeaderSize];
  if (Status E = Source->readAt(0, Header, HeaderSize))
    return E;
  if (std::memcmp(Header, Magic, sizeof(Magic)) != 0)
    return invalid("bad magic (not a kpack archive)");
  uint32_t Version = readLE<uint32_t>(Header + 4);
  if (Version < 1 || Version > MaxSupportedVersion)
    return Status(KPACK_ERROR_UNSUPPORTED_VERSION,
                    "unsupported archive version " + std::to_string(Version));
  FormatVersion = Version;
  uint64_t TocOffset = readLE<uint64_t>(Header + 8);
  if (TocOffset < HeaderSize || TocOffset >= FileSize)
    return invalid("TOC offset " + std::to_string(TocOffset) +
                   " outside the file");
  // The TOC runs to the end of the file, whatever its size: a sparse file
  // of a terabyte behind a 16-byte header would be read whole. It is
  // bounded before anything is allocated; the TOC then bounds every
  // allocation of the parse.
  if (FileSize - TocOffset > MaxTocBytes)
    return invalid("TOC of " + std::to_string(FileSize - TocOffset) +
                   " bytes exceeds the limit of " +
                   std::to_string(MaxTocBytes) + " bytes");
  std::vector<char> Toc(FileSize - TocOffset);
  if (Status E = Source->readAt(TocOffset, Toc.data(), Toc.size()))
    return E;
  return parseToc(Toc.data(), Toc.size());
}

Status ArchiveReader::parseToc(const char *Data, size_t Size) {
  // Every element takes at least one byte, so limits of Size keep msgpack
  // from reserving space for counts the TOC cannot hold.
  msgpack::unpack_limit Limit(Size, Size / 2 + 1, Size, Size, Size, 64);
  msgpack::object_handle Handle;
  try {
    Handle = msgpack::unpack(Data, Size, nullptr, nullptr, Limit);
  } catch (const std::bad_alloc &) {
    throw;
  } catch (const std::exception &Ex) {
    return Status(KPACK_ERROR_MSGPACK_PARSE_FAILED,
                    std::string("TOC is not valid msgpack: ") + Ex.what());
  }
  const msgpack::object &Root = Handle.get();
  if (Root.type != msgpack::type::MAP)
    return invalid("TOC is not a map");

  if (const msgpack::object *V = lookup(Root, "format_version")) {
    uint64_t TocVersion;
    if (!asUInt(*V, TocVersion))
      return wrongType("TOC 'format_version' is not an unsigned integer");
    if (TocVersion != FormatVersion)
      return Status(KPACK_ERROR_UNSUPPORTED_VERSION,
                    "unsupported TOC format_version " +
                        std::to_string(TocVersion) + " in a version " +
                        std::to_string(FormatVersion) + " archive");
  }
  if (Status E = requireString(Root, "group_name", false, GroupName))
    return E;
  if (Status E = requireString(Root, "gfx_arch_family", false, GfxArchFamily))
    return E;

  std::string SchemeName;
  if (Status E = requireString(Root, "compression_scheme", true, SchemeName))
    return E;
  std::vector<std::pair<uint64_t, uint64_t>> Blobs; // "none": offset, size
  const uint64_t FileSize = Source->size();
  if (SchemeName == "none") {
    CompressionScheme = Scheme::None;
    const msgpack::object *B = lookup(Root, "blobs");
    if (!B)
      return invalid("TOC lacks 'blobs'");
    if (B->type != msgpack::type::ARRAY)
      return invalid("TOC 'blobs' is not an array");
    for (uint32_t I = 0; I < B->via.array.size; ++I) {
      const msgpack::object &Blob = B->via.array.ptr[I];
      std::string Where = "blob " + std::to_string(I);
      if (Blob.type != msgpack::type::MAP)
        return invalid(Where + " is not a map");
      uint64_t Offset, Length;
      if (Status E = requireUInt(Blob, "offset", Where, Offset))
        return E;
      if (Status E = requireUInt(Blob, "size", Where, Length))
        return E;
      if (!rangeWithin(Offset, Length, FileSize))
        return invalid(Where + " lies outside the file");
      Blobs.emplace_back(Offset, Length);
    }
  } else if (SchemeName == "zstd-per-kernel" ||
             SchemeName == SharedSegmentsName) {
    CompressionScheme = SchemeName == "zstd-per-kernel"
                            ? Scheme::ZstdPerKernel
                            : Scheme::ZstdSharedSegments;
    if (Status E = requireUInt(Root, "zstd_offset", "TOC", ZstdOffset))
      return E;
    if (Status E = requireUInt(Root, "zstd_size", "TOC", ZstdSize))
      return E;
    if (ZstdSize < 4)
      return invalid("zstd blob too small for its kernel count");
    if (!rangeWithin(ZstdOffset, ZstdSize, FileSize))
      return invalid("zstd blob lies outside the file");
  } else {
    return invalid("unknown compression scheme '" + SchemeName + "'");
  }
  // An upstream reader would take a version-2 scheme for "none" (FORMAT.md
  // §1.5), so it only ever comes with header version 2, and only it does.
  const bool Shared = CompressionScheme == Scheme::ZstdSharedSegments;
  if (Shared != (FormatVersion == 2))
    return invalid("compression scheme '" + SchemeName + "' in a version " +
                   std::to_string(FormatVersion) + " archive");
  if (Shared) {
    // docs/format-extensions.md: the segment blob and its frames.
    if (Status E = requireUInt(Root, "shared_offset", "TOC", SharedOffset))
      return E;
    if (Status E = requireUInt(Root, "shared_size", "TOC", SharedSize))
      return E;
    if (Status E = requireUInt(Root, "shared_index_offset", "TOC",
                               SharedIndexOffset))
      return E;
    if (Status E =
            requireUInt(Root, "shared_index_size", "TOC", SharedIndexSize))
      return E;
    if (!rangeWithin(SharedOffset, SharedSize, FileSize))
      return invalid("shared segment blob lies outside the file");
    if (SharedIndexSize < 12 ||
        !rangeWithin(SharedIndexOffset, SharedIndexSize, FileSize))
      return invalid("shared segment index lies outside the file");
    // Read whole by the first load: bounded like the TOC.
    if (SharedIndexSize > MaxTocBytes)
      return invalid("shared segment index of " +
                     std::to_string(SharedIndexSize) +
                     " bytes exceeds the limit of " +
                     std::to_string(MaxTocBytes) + " bytes");
    // The index is read by the first load that needs it.
  }

  const msgpack::object *Toc = lookup(Root, "toc");
  if (!Toc)
    return invalid("TOC lacks 'toc'");
  if (Toc->type != msgpack::type::MAP)
    return invalid("TOC 'toc' is not a map");
  for (uint32_t I = 0; I < Toc->via.map.size; ++I) {
    const msgpack::object_kv &Binary = Toc->via.map.ptr[I];
    std::string Key;
    if (!asString(Binary.key, Key))
      return invalid("TOC binary key is not a string");
    if (Binary.val.type != msgpack::type::MAP)
      return invalid("TOC entry for '" + Key + "' is not a map");
    for (uint32_t J = 0; J < Binary.val.via.map.size; ++J) {
      const msgpack::object_kv &ArchKV = Binary.val.via.map.ptr[J];
      Entry E;
      E.Key = Key;
      if (!asString(ArchKV.key, E.Arch))
        return invalid("architecture of '" + Key + "' is not a string");
      const std::string Where = "entry " + Key + "/" + E.Arch;
      const msgpack::object &Fields = ArchKV.val;
      if (Fields.type != msgpack::type::MAP)
        return invalid(Where + " is not a map");
      if (const msgpack::object *Type = lookup(Fields, "type")) {
        std::string Ignored;
        if (!asString(*Type, Ignored))
          return invalid(Where + " 'type' is not a string");
      }
      if (Status Err = requireUInt(Fields, "ordinal", Where, E.Ordinal))
        return Err;
      if (Status Err =
              requireUInt(Fields, "original_size", Where, E.OriginalSize))
        return Err;
      if (const msgpack::object *Meta = lookup(Fields, "metadata");
          Meta && Meta->type == msgpack::type::MAP)
        for (uint32_t K = 0; K < Meta->via.map.size; ++K) {
          std::string Name, Value;
          if (asString(Meta->via.map.ptr[K].key, Name) &&
              asString(Meta->via.map.ptr[K].val, Value))
            E.Metadata.emplace_back(std::move(Name), std::move(Value));
        }
      if (CompressionScheme == Scheme::None) {
        if (E.Ordinal >= Blobs.size())
          return invalid(Where + " ordinal has no blob");
        E.HasDataOffset = E.HasStoredSize = true;
        E.DataOffset = Blobs[E.Ordinal].first;
        E.StoredSize = Blobs[E.Ordinal].second;
      } else {
        // Optional extension (docs/runtime.md): where frame N starts.
        bool HasOffset = lookup(Fields, "frame_offset") != nullptr;
        bool HasSize = lookup(Fields, "frame_size") != nullptr;
        if (HasOffset != HasSize)
          return invalid(Where + " has only one of frame_offset/frame_size");
        if (HasOffset) {
          if (Status Err =
                  requireUInt(Fields, "frame_offset", Where, E.DataOffset))
            return Err;
          if (Status Err =
                  requireUInt(Fields, "frame_size", Where, E.StoredSize))
            return Err;
          const uint64_t BlobEnd = ZstdOffset + ZstdSize;
          // The frame's size word is a u32: a larger frame_size cannot be
          // its size (and is not allocated for).
          if (E.StoredSize > UINT32_MAX)
            return invalid(Where + " frame_size exceeds a u32");
          if (E.DataOffset < ZstdOffset + 4 ||
              !rangeWithin(E.DataOffset, E.StoredSize, BlobEnd) ||
              BlobEnd - E.DataOffset - E.StoredSize < 4)
            return invalid(Where + " frame lies outside the zstd blob");
          E.HasDataOffset = E.HasStoredSize = true;
        }
      }
      Entries.push_back(std::move(E));
    }
  }

  auto ByKeyArch = [](const Entry &A, const Entry &B) {
    return std::tie(A.Key, A.Arch) < std::tie(B.Key, B.Arch);
  };
  std::sort(Entries.begin(), Entries.end(), ByKeyArch);
  // gfx_arches after the layout and the entries, so that a wrongly typed
  // integer is reported as upstream reports it, whatever else is missing.
  const msgpack::object *Arches = lookup(Root, "gfx_arches");
  if (!Arches)
    return invalid("TOC lacks 'gfx_arches'");
  if (Arches->type != msgpack::type::ARRAY)
    return invalid("TOC 'gfx_arches' is not an array");
  for (uint32_t I = 0; I < Arches->via.array.size; ++I) {
    std::string Arch;
    if (!asString(Arches->via.array.ptr[I], Arch))
      return invalid("TOC 'gfx_arches' holds a non-string");
    GfxArches.push_back(std::move(Arch));
  }

  for (size_t I = 0; I < Entries.size(); ++I) {
    if (I > 0 && Entries[I - 1].Key == Entries[I].Key &&
        Entries[I - 1].Arch == Entries[I].Arch)
      return invalid("duplicate entry " + Entries[I].Key + "/" +
                     Entries[I].Arch);
    if (BinaryNames.empty() || BinaryNames.back() != Entries[I].Key)
      BinaryNames.push_back(Entries[I].Key);
  }
  return Status::ok();
}

const ArchiveReader::Entry *ArchiveReader::find(std::string_view Key,
                                                std::string_view Arch) const {
  auto It = std::lower_bound(
      Entries.begin(), Entries.end(), std::make_pair(Key, Arch),
      [](const Entry &E,
         const std::pair<std::string_view, std::string_view> &P) {
        return std::make_pair(std::string_view(E.Key),
                              std::string_view(E.Arch)) < P;
      });
  if (It == Entries.end() || It->Key != Key || It->Arch != Arch)
    return nullptr;
  return &*It;
}

Status ArchiveReader::walkFrameChain() const {
  std::call_once(Chain->Once, [this] {
    try {
      unsigned char Word[4];
      if ((Chain->Result = Source->readAt(ZstdOffset, Word, 4)))
        return;
      const uint64_t Count = readLE<uint32_t>(Word);
      const uint64_t End = ZstdOffset + ZstdSize;
      // Each frame needs at least its 4-byte size prefix.
      if (Count > (ZstdSize - 4) / 4) {
        Chain->Result = invalid("zstd kernel count exceeds the blob");
        return;
      }
      // Every writer stores at most one frame per TOC entry (upstream one
      // each, this project's writer one per distinct code object), so no
      // entry's ordinal is past the entry count: the walk stops there, and
      // a count of 2^32 - 1 over a sparse blob of zero-sized "frames" costs
      // neither that many reads nor 64 GiB of locations.
      const uint64_t Walked = std::min<uint64_t>(Count, Entries.size());
      std::vector<FrameLocation> Frames;
      Frames.reserve(Walked);
      uint64_t Pos = ZstdOffset + 4;
      for (uint64_t I = 0; I < Walked; ++I) {
        if (!rangeWithin(Pos, 4, End)) {
          Chain->Result = invalid("zstd frame chain runs past the blob");
          return;
        }
        if ((Chain->Result = Source->readAt(Pos, Word, 4)))
          return;
        uint64_t FrameSize = readLE<uint32_t>(Word);
        if (!rangeWithin(Pos + 4, FrameSize, End)) {
          Chain->Result = invalid("zstd frame " + std::to_string(I) +
                                  " runs past the blob");
          return;
        }
        Frames.push_back({Pos, FrameSize});
        Pos += 4 + FrameSize;
      }
      Chain->Frames = std::move(Frames);
    } catch (const std::bad_alloc &) {
      Chain->Result = Status(KPACK_ERROR_OUT_OF_MEMORY, "out of memory");
    } catch (const std::exception &Ex) {
      Chain->Result = unexpected(Ex);
    }
  });
  return Chain->Result;
}

Status ArchiveReader::locateFrame(const Entry &E, FrameLocation &Loc) const {
  if (E.HasDataOffset) {
    Loc = {E.DataOffset, E.StoredSize};
    return Status::ok();
  }
  if (Status Err = walkFrameChain())
    return Err;
  if (E.Ordinal >= Chain->Frames.size())
    return invalid("entry " + E.Key + "/" + E.Arch + " ordinal " +
                   std::to_string(E.Ordinal) + " has no zstd frame");
  Loc = Chain->Frames[E.Ordinal];
  return Status::ok();
}

Status ArchiveReader::compressedSize(const Entry &E, uint64_t &Size) const {
  if (E.HasStoredSize) {
    Size = E.StoredSize;
    return Status::ok();
  }
  FrameLocation Loc;
  if (Status Err = locateFrame(E, Loc))
    return Err;
  Size = Loc.Size;
  return Status::ok();
}

Status
ArchiveReader::read(const Entry &E,
                    const std::function<void *(size_t)> &Allocate) const {
  // No exception leaves the reader (the C++ API's callers, kpack ls/verify
  // and the shim, call it directly).
  try {
    return readEntry(E, Allocate);
  } catch (const std::bad_alloc &) {
    return Status(KPACK_ERROR_OUT_OF_MEMORY,
                  "out of memory reading " + E.Key + "/" + E.Arch);
  } catch (const std::exception &Ex) {
    return unexpected(Ex);
  }
}

Status
ArchiveReader::readEntry(const Entry &E,
                         const std::function<void *(size_t)> &Allocate) const {
  if (CompressionScheme == Scheme::None) {
    if (E.StoredSize != E.OriginalSize)
      return Status(KPACK_ERROR_DECOMPRESSION_FAILED,
                      E.Key + "/" + E.Arch +
                          ": blob size differs from original_size");
    void *Buffer = Allocate(static_cast<size_t>(E.OriginalSize));
    if (!Buffer)
      return Status(KPACK_ERROR_OUT_OF_MEMORY, "out of memory");
    return Source->readAt(E.DataOffset, Buffer, E.StoredSize);
  }

  FrameLocation Loc;
  if (Status Err = locateFrame(E, Loc))
    return Err;
  std::unique_ptr<Decoder> D = Decoders->acquire();
  const unsigned char *Prefix = nullptr;
  size_t PrefixSize = 0;
  // The entry's segments, held until its frame is decoded.
  std::vector<std::shared_ptr<const unsigned char>> Held;
  std::vector<uint32_t> List;
  Status Err = entrySegments(E, List);
  if (!Err && !List.empty())
    Err = prefixOf(List, *D, Held, Prefix, PrefixSize);
  if (!Err)
    Err = decompressFrame(E, Loc, *D, Allocate, Prefix, PrefixSize);
  Decoders->release(std::move(D));
  return Err;
}

Status ArchiveReader::segmentIndex(const SegmentIndex *&Out) const {
  SegmentCache &C = *SegmentData;
  std::call_once(C.Once, [&] {
    if (CompressionScheme != Scheme::ZstdSharedSegments)
      return;
    try {
      // docs/format-extensions.md: u32 segment count S, u32 code-object
      // count N, S x (u32 frame size, u32 original size), (N + 1) x u32
      // list start, then the lists of segment numbers.
      std::vector<unsigned char> Bytes(SharedIndexSize); // within the file
      if ((C.IndexResult =
               Source->readAt(SharedIndexOffset, Bytes.data(), Bytes.size())))
        return;
      const uint64_t S = readLE<uint32_t>(&Bytes[0]);
      const uint64_t N = readLE<uint32_t>(&Bytes[4]);
      const uint64_t Fixed = 8 + 8 * S + 4 * (N + 1);
      if (Fixed > Bytes.size()) {
        C.IndexResult = invalid("shared segment index too small for its counts");
        return;
      }
      SegmentIndex Index;
      Index.Segments.resize(S);
      uint64_t Pos = SharedOffset;
      for (uint64_t I = 0; I < S; ++I) {
        Segment &Seg = Index.Segments[I];
        Seg.Offset = Pos;
        Seg.Size = readLE<uint32_t>(&Bytes[8 + 8 * I]);
        Seg.OriginalSize = readLE<uint32_t>(&Bytes[12 + 8 * I]);
        Pos += Seg.Size;
      }
      if (Pos != SharedOffset + SharedSize) {
        C.IndexResult = invalid("shared segment frames do not fill their blob");
        return;
      }
      const unsigned char *Starts = &Bytes[8 + 8 * S];
      Index.ListStart.resize(N + 1);
      for (uint64_t I = 0; I <= N; ++I) {
        Index.ListStart[I] = readLE<uint32_t>(Starts + 4 * I);
        if ((I == 0 && Index.ListStart[0] != 0) ||
            (I > 0 && Index.ListStart[I] < Index.ListStart[I - 1])) {
          C.IndexResult = invalid("shared segment lists out of order");
          return;
        }
      }
      if (Fixed + 4 * uint64_t(Index.ListStart[N]) != Bytes.size()) {
        C.IndexResult = invalid("shared segment lists do not fill the index");
        return;
      }
      Index.Lists.resize(Index.ListStart[N]);
      for (uint64_t O = 0; O < N; ++O)
        for (uint64_t K = Index.ListStart[O]; K < Index.ListStart[O + 1];
             ++K) {
          uint32_t Seg = readLE<uint32_t>(&Bytes[Fixed + 4 * K]);
          // Each segment once, ascending: the prefix is one concatenation,
          // bounded by the segments' total size.
          if (Seg >= S ||
              (K > Index.ListStart[O] && Seg <= Index.Lists[K - 1])) {
            C.IndexResult = invalid(
                "shared segment list of code object " + std::to_string(O) +
                " holds an invalid segment number");
            return;
          }
          Index.Lists[K] = Seg;
        }
      C.Slots.reset(new SegmentCache::Slot[S]);
      C.Count = S;
      C.Index = std::move(Index);
    } catch (const std::bad_alloc &) {
      C.IndexResult = Status(KPACK_ERROR_OUT_OF_MEMORY, "out of memory");
    } catch (const std::exception &Ex) {
      C.IndexResult = unexpected(Ex);
    }
  });
  Out = &C.Index;
  return C.IndexResult;
}

Status ArchiveReader::entrySegments(const Entry &E,
                                    std::vector<uint32_t> &Out) const {
  Out.clear();
  if (CompressionScheme != Scheme::ZstdSharedSegments)
    return Status::ok();
  const SegmentIndex *Index = nullptr;
  if (Status Err = segmentIndex(Index))
    return Err;
  // ListStart has one element more than there are ordinals (at least one):
  // no arithmetic on the ordinal, which the TOC sets to any 64-bit value.
  if (E.Ordinal >= Index->ListStart.size() - 1)
    return invalid("entry " + E.Key + "/" + E.Arch + " ordinal " +
                   std::to_string(E.Ordinal) +
                   " is past the shared segment index");
  try {
    Out.assign(Index->Lists.begin() + Index->ListStart[E.Ordinal],
               Index->Lists.begin() + Index->ListStart[E.Ordinal + 1]);
  } catch (const std::bad_alloc &) {
    return Status(KPACK_ERROR_OUT_OF_MEMORY, "out of memory");
  }
  return Status::ok();
}

Status ArchiveReader::readSegmentFrame(uint32_t Index, const Segment &S,
                                       std::vector<unsigned char> &Frame) const {
  const std::string Where = "shared segment " + std::to_string(Index);
  auto Corrupt = [&] {
    return Status(KPACK_ERROR_DECOMPRESSION_FAILED,
                  Where + ": corrupt zstd frame or wrong original size");
  };
  auto HeaderAgrees = [&](const unsigned char *Head, size_t Size) {
    unsigned long long Content = ZSTD_getFrameContentSize(Head, Size);
    return Content != ZSTD_CONTENTSIZE_ERROR &&
           (Content == ZSTD_CONTENTSIZE_UNKNOWN || Content == S.OriginalSize);
  };
  if (S.Size > LargeFrameBytes) {
    unsigned char Head[ZSTD_FRAMEHEADERSIZE_MAX];
    if (Status Err = Source->readAt(S.Offset, Head, sizeof(Head)))
      return Err;
    if (!HeaderAgrees(Head, sizeof(Head)))
      return Corrupt();
  }
  Frame.resize(S.Size);
  if (Status Err = Source->readAt(S.Offset, Frame.data(), Frame.size()))
    return Err;
  // Refuse before allocating if the frame cannot expand to its size.
  unsigned long long Bound = ZSTD_decompressBound(Frame.data(), S.Size);
  if (!HeaderAgrees(Frame.data(), S.Size) || Bound == ZSTD_CONTENTSIZE_ERROR ||
      Bound < S.OriginalSize)
    return Corrupt();
  return Status::ok();
}

Status ArchiveReader::prefixOf(
    const std::vector<uint32_t> &List, Decoder &D,
    std::vector<std::shared_ptr<const unsigned char>> &Held,
    const unsigned char *&Prefix, size_t &PrefixSize) const {
  const SegmentIndex *Index = nullptr;
  if (Status Err = segmentIndex(Index))
    return Err;
  const std::vector<Segment> &Segs = Index->Segments;
  // Each segment's load lock, in ascending order (the list is ascending, so
  // concurrent loads never wait on each other in a cycle).
  std::vector<std::unique_lock<std::mutex>> Locks;
  Held.assign(List.size(), nullptr);
  std::vector<std::vector<unsigned char>> Frames(List.size());
  uint64_t Total = 0;
  for (size_t I = 0; I < List.size(); ++I) {
    const uint32_t Index = List[I];
    SegmentCache::Slot &Slot = SegmentData->Slots[Index];
    Locks.emplace_back(Slot.Load);
    Held[I] = SegmentData->cached(Slot);
    if (!Held[I]) {
      // Read and checked before anything is allocated for it.
      if (Status Err = readSegmentFrame(Index, Segs[Index], Frames[I]))
        return Err;
    }
    Total += Segs[Index].OriginalSize; // < 2^32 segments of < 2^32 bytes
  }
  if (Total > SIZE_MAX / 2)
    return Status(KPACK_ERROR_OUT_OF_MEMORY, "shared segments too large");
  PrefixSize = static_cast<size_t>(Total);
  // Each missing segment is decoded into an allocation of its own, so that
  // dropping it from the cache frees it (the cache's bound is the memory it
  // holds).
  for (size_t I = 0; I < List.size(); ++I) {
    if (Held[I])
      continue;
    const uint32_t Index = List[I];
    const size_t N = static_cast<size_t>(Segs[Index].OriginalSize);
    std::shared_ptr<unsigned char> Buffer(new unsigned char[N ? N : 1],
                                          std::default_delete<unsigned char[]>());
    size_t Result = ZSTD_decompressDCtx(D.Context, Buffer.get(), N,
                                        Frames[I].data(), Frames[I].size());
    const std::string Where = "shared segment " + std::to_string(Index);
    if (ZSTD_isError(Result))
      return Status(KPACK_ERROR_DECOMPRESSION_FAILED,
                    Where + ": " + ZSTD_getErrorName(Result));
    if (Result != N)
      return Status(KPACK_ERROR_DECOMPRESSION_FAILED,
                    Where + ": decompressed size differs from its original "
                            "size");
    Frames[I] = {}; // the compressed frame is no longer needed
    Held[I] = std::move(Buffer);
    SegmentData->insert(SegmentData->Slots[Index], Held[I], N);
  }
  if (List.size() == 1) { // the segment is the prefix
    Prefix = Held.front().get();
    return Status::ok();
  }
  // Several: concatenated in the decoder's buffer.
  unsigned char *Out = D.Prefix.get(PrefixSize);
  size_t At = 0;
  for (size_t I = 0; I < List.size(); ++I) {
    const size_t N = static_cast<size_t>(Segs[List[I]].OriginalSize);
    if (N)
      std::memcpy(Out + At, Held[I].get(), N);
    At += N;
  }
  Prefix = Out;
  return Status::ok();
}

Status ArchiveReader::decompressFrame(
    const Entry &E, const FrameLocation &Loc, Decoder &D,
    const std::function<void *(size_t)> &Allocate,
    const unsigned char *Prefix, size_t PrefixSize) const {
  const std::string Where = E.Key + "/" + E.Arch;
  // The size word and the zstd header of Size bytes at Head.
  auto CheckHead = [&](const unsigned char *Head, size_t Size) -> Status {
    if (readLE<uint32_t>(Head) != Loc.Size)
      return invalid(Where + ": frame_offset does not point at its frame");
    unsigned long long Content = ZSTD_getFrameContentSize(Head + 4, Size - 4);
    if (Content == ZSTD_CONTENTSIZE_ERROR)
      return Status(KPACK_ERROR_DECOMPRESSION_FAILED,
                    Where + ": not a zstd frame");
    if (Content != ZSTD_CONTENTSIZE_UNKNOWN && Content != E.OriginalSize)
      return Status(KPACK_ERROR_DECOMPRESSION_FAILED,
                    Where + ": frame content size differs from original_size");
    return Status::ok();
  };
  if (Loc.Size > LargeFrameBytes) {
    unsigned char Head[4 + ZSTD_FRAMEHEADERSIZE_MAX];
    if (Status Err = Source->readAt(Loc.Offset, Head, sizeof(Head)))
      return Err;
    if (Status Err = CheckHead(Head, sizeof(Head)))
      return Err;
  }
  unsigned char *Frame = D.Frame.get(4 + Loc.Size);
  if (Status Err = Source->readAt(Loc.Offset, Frame, 4 + Loc.Size))
    return Err;
  if (Status Err = CheckHead(Frame, 4 + Loc.Size))
    return Err;
  const unsigned char *Src = Frame + 4;
  // Refuse before allocating if the frame cannot expand to original_size.
  unsigned long long Bound = ZSTD_decompressBound(Src, Loc.Size);
  if (Bound == ZSTD_CONTENTSIZE_ERROR || Bound < E.OriginalSize)
    return Status(KPACK_ERROR_DECOMPRESSION_FAILED,
                    Where + ": corrupt zstd frame");
  void *Buffer = Allocate(static_cast<size_t>(E.OriginalSize));
  if (!Buffer)
    return Status(KPACK_ERROR_OUT_OF_MEMORY, "out of memory");
  // The prefix applies to the next frame only: set it just before it.
  if (PrefixSize) {
    size_t Ref = ZSTD_DCtx_refPrefix(D.Context, Prefix, PrefixSize);
    if (ZSTD_isError(Ref))
      return Status(KPACK_ERROR_DECOMPRESSION_FAILED,
                    Where + ": " + ZSTD_getErrorName(Ref));
  }
  size_t Result =
      ZSTD_decompressDCtx(D.Context, Buffer, E.OriginalSize, Src, Loc.Size);
  if (ZSTD_isError(Result))
    return Status(KPACK_ERROR_DECOMPRESSION_FAILED,
                    Where + ": " + ZSTD_getErrorName(Result));
  if (Result != E.OriginalSize)
    return Status(KPACK_ERROR_DECOMPRESSION_FAILED,
                    Where + ": decompressed size differs from original_size");
  return Status::ok();
}

Status ArchiveReader::read(const Entry &E, std::vector<uint8_t> &Out) const {
  return read(E, [&Out](size_t N) -> void * {
    try {
      Out.resize(N);
    } catch (const std::bad_alloc &) {
      return nullptr;
    }
    return N ? Out.data() : static_cast<void *>(&Out);
  });
}

} // namespace kpack
