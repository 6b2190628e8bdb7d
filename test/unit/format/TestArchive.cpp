//===- TestArchive.cpp - Independent .kpack decoder for the writer tests --===//

#include "TestArchive.h"

#include <msgpack.hpp>
#include <zstd.h>

#include <cstring>

using namespace kpack::test;

namespace {

uint64_t le(const std::vector<uint8_t> &B, size_t At, size_t N) {
  uint64_t V = 0;
  for (size_t I = 0; I < N; ++I)
    V |= uint64_t(B[At + I]) << (8 * I);
  return V;
}

std::string str(const msgpack::object &O) {
  return std::string(O.via.str.ptr, O.via.str.size);
}

const msgpack::object *field(const msgpack::object &Map, const char *Name) {
  for (uint32_t I = 0; I < Map.via.map.size; ++I)
    if (str(Map.via.map.ptr[I].key) == Name)
      return &Map.via.map.ptr[I].val;
  return nullptr;
}

} // namespace

std::string kpack::test::decodeArchive(const std::string &Path,
                                       DecodedArchive &Out) {
  std::vector<uint8_t> B = readFile(Path);
  if (B.size() < 64 || std::memcmp(B.data(), "KPAK", 4) != 0)
    return "bad magic";
  if (le(B, 4, 4) != 1)
    return "bad version";
  uint64_t TocOffset = le(B, 8, 8);
  if (TocOffset < 64 || TocOffset >= B.size())
    return "bad toc offset";
  for (size_t I = 16; I < 64; ++I)
    if (B[I])
      return "non-zero header padding";
  msgpack::object_handle H;
  try {
    size_t Off = 0;
    H = msgpack::unpack(reinterpret_cast<const char *>(B.data() + TocOffset),
                        B.size() - TocOffset, Off);
    if (Off != B.size() - TocOffset)
      return "trailing bytes after the TOC";
  } catch (const std::exception &E) {
    return E.what();
  }
  const msgpack::object &Toc = H.get();
  if (Toc.type != msgpack::type::MAP)
    return "TOC is not a map";
  for (uint32_t I = 0; I < Toc.via.map.size; ++I)
    Out.TopLevelKeys.push_back(str(Toc.via.map.ptr[I].key));
  Out.GroupName = str(*field(Toc, "group_name"));
  Out.Family = str(*field(Toc, "gfx_arch_family"));
  Out.Scheme = str(*field(Toc, "compression_scheme"));
  const msgpack::object &Arches = *field(Toc, "gfx_arches");
  for (uint32_t I = 0; I < Arches.via.array.size; ++I)
    Out.Arches.push_back(str(Arches.via.array.ptr[I]));

  // Blob locations by ordinal, found the way upstream does.
  std::vector<std::pair<uint64_t, uint64_t>> Blobs;
  bool Zstd = Out.Scheme == "zstd-per-kernel";
  if (Zstd) {
    uint64_t Pos = field(Toc, "zstd_offset")->as<uint64_t>();
    uint64_t End = Pos + field(Toc, "zstd_size")->as<uint64_t>();
    if (End > TocOffset)
      return "zstd blob overlaps the TOC";
    uint64_t Count = le(B, Pos, 4);
    Pos += 4;
    for (uint64_t I = 0; I < Count; ++I) {
      if (Pos + 4 > End)
        return "frame chain runs past the blob";
      uint64_t Size = le(B, Pos, 4);
      Blobs.push_back({Pos, Size});
      Pos += 4 + Size;
    }
    if (Pos != End)
      return "zstd_size does not match the frames";
  } else {
    const msgpack::object &Arr = *field(Toc, "blobs");
    for (uint32_t I = 0; I < Arr.via.array.size; ++I)
      Blobs.push_back({field(Arr.via.array.ptr[I], "offset")->as<uint64_t>(),
                       field(Arr.via.array.ptr[I], "size")->as<uint64_t>()});
  }

  const msgpack::object &Keys = *field(Toc, "toc");
  for (uint32_t K = 0; K < Keys.via.map.size; ++K) {
    const msgpack::object_kv &KV = Keys.via.map.ptr[K];
    for (uint32_t A = 0; A < KV.val.via.map.size; ++A) {
      const msgpack::object_kv &AE = KV.val.via.map.ptr[A];
      DecodedEntry E;
      E.Key = str(KV.key);
      E.Arch = str(AE.key);
      if (str(*field(AE.val, "type")) != "hsaco")
        return "entry type is not hsaco";
      E.Ordinal = field(AE.val, "ordinal")->as<uint64_t>();
      E.OriginalSize = field(AE.val, "original_size")->as<uint64_t>();
      if (const msgpack::object *FO = field(AE.val, "frame_offset")) {
        E.HasFrameOffset = true;
        E.FrameOffset = FO->as<uint64_t>();
        E.FrameSize = field(AE.val, "frame_size")->as<uint64_t>();
      }
      if (E.Ordinal >= Blobs.size())
        return "ordinal out of range";
      auto [Offset, Size] = Blobs[E.Ordinal];
      if (Offset + Size > B.size())
        return "blob outside the file";
      if (Zstd) {
        const uint8_t *Frame = B.data() + Offset + 4;
        unsigned long long Content = ZSTD_getFrameContentSize(Frame, Size);
        E.FrameHasContentSize = Content != ZSTD_CONTENTSIZE_UNKNOWN &&
                                Content != ZSTD_CONTENTSIZE_ERROR;
        E.Bytes.resize(E.OriginalSize);
        size_t Got = ZSTD_decompress(E.Bytes.data(), E.Bytes.size(), Frame, Size);
        if (ZSTD_isError(Got) || Got != E.OriginalSize)
          return "frame does not decompress to original_size";
        if (E.HasFrameOffset && (E.FrameOffset != Offset || E.FrameSize != Size))
          return "frame_offset/frame_size disagree with the frame chain";
      } else {
        E.Bytes.assign(B.begin() + Offset, B.begin() + Offset + Size);
        if (Size != E.OriginalSize)
          return "blob size differs from original_size";
      }
      Out.Entries.push_back(std::move(E));
    }
  }
  return "";
}

std::vector<uint8_t> kpack::test::patternBytes(size_t Size, unsigned Seed) {
  std::vector<uint8_t> B(Size);
  uint32_t X = Seed * 2654435761u + 1;
  for (size_t I = 0; I < Size; ++I) {
    if (I % 64 == 0)
      X = X * 1664525u + 1013904223u;
    B[I] = static_cast<uint8_t>((X >> 24) + (I % 7));
  }
  return B;
}
