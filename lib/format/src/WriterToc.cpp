//===- WriterToc.cpp - The archive's TOC and segment index ----------------===//

#include "WriterInternals.h"

#include "kpack/ByteOrder.h"

#include <msgpack.hpp>

using namespace kpack;
using kpack::detail::writeLE;

namespace {

template <typename Packer> void packStr(Packer &P, const std::string &S) {
  P.pack_str(static_cast<uint32_t>(S.size()));
  P.pack_str_body(S.data(), static_cast<uint32_t>(S.size()));
}

} // namespace

/// The segment index (docs/format-extensions.md), after the code objects,
/// once their ordinals and segment lists are known.
Status ArchiveWriter::Output::writeSegmentIndex() {
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
