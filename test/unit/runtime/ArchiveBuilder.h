//===- ArchiveBuilder.h - Test-only .kpack writer ---------------*- C++ -*-===//
//
// Builds archives for the runtime's tests, fuzz seeds and benchmarks. The TOC
// is kept as an editable tree (TocValue) so that tests can corrupt any field
// before serializing. Not the project's writer (lib/format owns that).
//
//===----------------------------------------------------------------------===//
#ifndef KPACK_TEST_ARCHIVEBUILDER_H
#define KPACK_TEST_ARCHIVEBUILDER_H

#define MSGPACK_NO_BOOST
#include <msgpack.hpp>
#ifndef ZSTD_STATIC_LINKING_ONLY
#define ZSTD_STATIC_LINKING_ONLY // ZSTD_frameHeaderSize, for corrupting frames
#endif
#include <zstd.h>

#include <algorithm>
#include <cstdint>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <stdexcept>
#include <string>
#include <utility>
#include <vector>

namespace kpack_test {

using Bytes = std::vector<uint8_t>;

/// A msgpack value: enough of the data model to write any TOC or metadata.
struct TocValue {
  enum Kind { Nil, UInt, Int, Str, Bin, Bool, Array, Map } K = Nil;
  uint64_t U = 0;
  int64_t I = 0;
  std::string S;
  std::vector<TocValue> A;
  std::vector<std::pair<TocValue, TocValue>> M;

  TocValue() = default;
  TocValue(uint64_t V) : K(UInt), U(V) {}
  TocValue(int V) : K(V < 0 ? Int : UInt), U(uint64_t(V)), I(V) {}
  TocValue(const char *V) : K(Str), S(V) {}
  TocValue(std::string V) : K(Str), S(std::move(V)) {}
  static TocValue array(std::vector<TocValue> Items = {}) {
    TocValue V;
    V.K = Array;
    V.A = std::move(Items);
    return V;
  }
  static TocValue map() {
    TocValue V;
    V.K = Map;
    return V;
  }
  static TocValue boolean(bool B) {
    TocValue V;
    V.K = Bool;
    V.U = B;
    return V;
  }
  static TocValue binary(std::string Data) {
    TocValue V;
    V.K = Bin;
    V.S = std::move(Data);
    return V;
  }
  /// Map access by string key, appending the key when absent (a Nil value
  /// becomes an empty map first).
  TocValue &operator[](const std::string &Key) {
    if (K == Nil)
      K = Map;
    for (auto &KV : M)
      if (KV.first.K == Str && KV.first.S == Key)
        return KV.second;
    M.emplace_back(TocValue(Key), TocValue());
    return M.back().second;
  }
  void erase(const std::string &Key) {
    for (size_t I = 0; I < M.size(); ++I)
      if (M[I].first.K == Str && M[I].first.S == Key) {
        M.erase(M.begin() + I);
        return;
      }
  }
};

inline void packValue(msgpack::packer<msgpack::sbuffer> &P, const TocValue &V) {
  switch (V.K) {
  case TocValue::Nil:
    P.pack_nil();
    break;
  case TocValue::UInt:
    P.pack_uint64(V.U);
    break;
  case TocValue::Int:
    P.pack_int64(V.I);
    break;
  case TocValue::Str:
    P.pack_str(uint32_t(V.S.size()));
    P.pack_str_body(V.S.data(), uint32_t(V.S.size()));
    break;
  case TocValue::Bin:
    P.pack_bin(uint32_t(V.S.size()));
    P.pack_bin_body(V.S.data(), uint32_t(V.S.size()));
    break;
  case TocValue::Bool:
    V.U ? P.pack_true() : P.pack_false();
    break;
  case TocValue::Array:
    P.pack_array(uint32_t(V.A.size()));
    for (const TocValue &E : V.A)
      packValue(P, E);
    break;
  case TocValue::Map:
    P.pack_map(uint32_t(V.M.size()));
    for (const auto &KV : V.M) {
      packValue(P, KV.first);
      packValue(P, KV.second);
    }
    break;
  }
}

inline Bytes packToBytes(const TocValue &V) {
  msgpack::sbuffer Buffer;
  msgpack::packer<msgpack::sbuffer> P(Buffer);
  packValue(P, V);
  return Bytes(Buffer.data(), Buffer.data() + Buffer.size());
}

struct TestEntry {
  std::string Key;
  std::string Arch;
  Bytes Data;
};

struct ArchiveSpec {
  /// "zstd-per-kernel", "none", or "zstd-shared-segments" (format version
  /// 2, docs/format-extensions.md).
  std::string Scheme = "zstd-per-kernel";
  std::string GroupName = "test";
  std::string Family = "gfx110X";
  std::vector<std::string> Arches = {"gfx1100", "gfx1101"};
  std::vector<TestEntry> Entries;
  bool FrameExtension = false; // write entry fields frame_offset/frame_size
  int ZstdLevel = 3;
  /// "zstd-shared-segments": the shared segments, and per entry (by index)
  /// the ones its frame is compressed against (none if absent).
  std::vector<Bytes> Segments;
  std::vector<std::vector<uint32_t>> EntrySegments;
};

/// An archive before serialization: blob bytes (placed at offset 64) and TOC.
struct ArchiveParts {
  uint32_t Version = 1;
  Bytes Blob;
  TocValue Toc;
  /// Overrides the header's toc_offset when non-zero.
  uint64_t TocOffsetOverride = 0;
};

constexpr uint64_t BlobStart = 64;

inline void appendLE32(Bytes &Out, uint32_t V) {
  for (int I = 0; I < 4; ++I)
    Out.push_back(uint8_t(V >> (8 * I)));
}

/// One zstd frame of Data at Level, against a raw-content Prefix if given.
inline Bytes zstdFrame(const Bytes &Data, int Level, const Bytes &Prefix = {}) {
  Bytes Frame(ZSTD_compressBound(Data.size()));
  ZSTD_CCtx *C = ZSTD_createCCtx();
  ZSTD_CCtx_setParameter(C, ZSTD_c_compressionLevel, Level);
  if (!Prefix.empty())
    ZSTD_CCtx_refPrefix(C, Prefix.data(), Prefix.size());
  size_t N =
      ZSTD_compress2(C, Frame.data(), Frame.size(), Data.data(), Data.size());
  ZSTD_freeCCtx(C);
  if (ZSTD_isError(N))
    throw std::runtime_error("ZSTD_compress2 failed");
  Frame.resize(N);
  return Frame;
}

inline ArchiveParts buildParts(const ArchiveSpec &Spec) {
  const bool Shared = Spec.Scheme == "zstd-shared-segments";
  const bool Zstd = Spec.Scheme == "zstd-per-kernel" || Shared;
  ArchiveParts Parts;
  Parts.Version = Shared ? 2 : 1;
  TocValue &Toc = Parts.Toc;
  Toc = TocValue::map();
  Toc["format_version"] = Shared ? 2 : 1;
  Toc["group_name"] = Spec.GroupName;
  Toc["gfx_arch_family"] = Spec.Family;
  TocValue Arches = TocValue::array();
  for (const std::string &A : Spec.Arches)
    Arches.A.emplace_back(A);
  Toc["gfx_arches"] = Arches;
  Toc["compression_scheme"] = Spec.Scheme;
  TocValue Index = TocValue::map();
  TocValue Blobs = TocValue::array();
  // Version 2: the segment frames first; their index follows the code
  // objects.
  Bytes SegmentIndex;
  if (Shared) {
    appendLE32(SegmentIndex, uint32_t(Spec.Segments.size()));
    appendLE32(SegmentIndex, uint32_t(Spec.Entries.size()));
    for (const Bytes &S : Spec.Segments) {
      Bytes Frame = zstdFrame(S, Spec.ZstdLevel);
      appendLE32(SegmentIndex, uint32_t(Frame.size()));
      appendLE32(SegmentIndex, uint32_t(S.size()));
      Parts.Blob.insert(Parts.Blob.end(), Frame.begin(), Frame.end());
    }
    Bytes Lists;
    uint32_t Start = 0;
    for (size_t O = 0; O <= Spec.Entries.size(); ++O) {
      appendLE32(SegmentIndex, Start);
      if (O < Spec.EntrySegments.size() && O < Spec.Entries.size())
        for (uint32_t S : Spec.EntrySegments[O]) {
          appendLE32(Lists, S);
          ++Start;
        }
    }
    SegmentIndex.insert(SegmentIndex.end(), Lists.begin(), Lists.end());
    Toc["shared_offset"] = BlobStart;
    Toc["shared_size"] = uint64_t(Parts.Blob.size());
  }
  const uint64_t KernelStart = BlobStart + Parts.Blob.size();
  if (Zstd)
    appendLE32(Parts.Blob, uint32_t(Spec.Entries.size()));
  for (size_t Ordinal = 0; Ordinal < Spec.Entries.size(); ++Ordinal) {
    const TestEntry &E = Spec.Entries[Ordinal];
    TocValue Fields = TocValue::map();
    Fields["type"] = "hsaco";
    Fields["ordinal"] = uint64_t(Ordinal);
    Fields["original_size"] = uint64_t(E.Data.size());
    if (Shared) {
      Bytes Prefix;
      if (Ordinal < Spec.EntrySegments.size())
        for (uint32_t S : Spec.EntrySegments[Ordinal])
          Prefix.insert(Prefix.end(), Spec.Segments[S].begin(),
                        Spec.Segments[S].end());
      Bytes Frame = zstdFrame(E.Data, Spec.ZstdLevel, Prefix);
      Fields["frame_offset"] = uint64_t(BlobStart + Parts.Blob.size());
      Fields["frame_size"] = uint64_t(Frame.size());
      appendLE32(Parts.Blob, uint32_t(Frame.size()));
      Parts.Blob.insert(Parts.Blob.end(), Frame.begin(), Frame.end());
    } else if (Zstd) {
      Bytes Frame(ZSTD_compressBound(E.Data.size()));
      size_t N = ZSTD_compress(Frame.data(), Frame.size(), E.Data.data(),
                               E.Data.size(), Spec.ZstdLevel);
      if (ZSTD_isError(N))
        throw std::runtime_error("ZSTD_compress failed");
      uint64_t FrameOffset = BlobStart + Parts.Blob.size();
      appendLE32(Parts.Blob, uint32_t(N));
      Parts.Blob.insert(Parts.Blob.end(), Frame.begin(), Frame.begin() + N);
      if (Spec.FrameExtension) {
        Fields["frame_offset"] = FrameOffset;
        Fields["frame_size"] = uint64_t(N);
      }
    } else {
      TocValue Blob = TocValue::map();
      Blob["offset"] = uint64_t(BlobStart + Parts.Blob.size());
      Blob["size"] = uint64_t(E.Data.size());
      Blobs.A.push_back(Blob);
      Parts.Blob.insert(Parts.Blob.end(), E.Data.begin(), E.Data.end());
    }
    Index[E.Key][E.Arch] = Fields;
  }
  if (Zstd) {
    Toc["zstd_offset"] = KernelStart;
    Toc["zstd_size"] = uint64_t(BlobStart + Parts.Blob.size() - KernelStart);
  }
  if (Shared) {
    Toc["shared_index_offset"] = uint64_t(BlobStart + Parts.Blob.size());
    Toc["shared_index_size"] = uint64_t(SegmentIndex.size());
    Parts.Blob.insert(Parts.Blob.end(), SegmentIndex.begin(),
                      SegmentIndex.end());
  }
  if (!Zstd) {
    Toc["blobs"] = Blobs;
  }
  Toc["toc"] = Index;
  return Parts;
}

inline Bytes serialize(const ArchiveParts &Parts) {
  Bytes Out = {'K', 'P', 'A', 'K'};
  appendLE32(Out, Parts.Version);
  uint64_t TocOffset = Parts.TocOffsetOverride ? Parts.TocOffsetOverride
                                               : BlobStart + Parts.Blob.size();
  for (int I = 0; I < 8; ++I)
    Out.push_back(uint8_t(TocOffset >> (8 * I)));
  Out.resize(BlobStart, 0);
  Out.insert(Out.end(), Parts.Blob.begin(), Parts.Blob.end());
  Bytes Toc = packToBytes(Parts.Toc);
  Out.insert(Out.end(), Toc.begin(), Toc.end());
  return Out;
}

inline Bytes buildArchive(const ArchiveSpec &Spec) {
  return serialize(buildParts(Spec));
}

/// Deterministic pseudo-random payload that compresses moderately.
inline Bytes payload(const std::string &Tag, size_t Size) {
  Bytes Out(Size);
  uint32_t X = 2166136261u;
  for (char C : Tag)
    X = (X ^ uint8_t(C)) * 16777619u;
  for (size_t I = 0; I < Size; ++I) {
    X ^= X << 13;
    X ^= X >> 17;
    X ^= X << 5;
    Out[I] = (I % 4 == 0) ? uint8_t(X) : uint8_t('A' + (X % 4));
  }
  std::memcpy(Out.data(), Tag.data(), std::min(Tag.size(), Size));
  return Out;
}

/// Writes Data to Path (UTF-8, also on Windows).
inline bool writeFile(const std::string &Path, const Bytes &Data) {
  std::ofstream F(std::filesystem::u8path(Path),
                  std::ios::binary | std::ios::trunc);
  if (!F)
    return false;
  F.write(reinterpret_cast<const char *>(Data.data()),
          static_cast<std::streamsize>(Data.size()));
  F.close();
  return !F.fail();
}

/// HIPK metadata: {"kernel_name": Name, "kpack_search_paths": Paths}.
inline Bytes hipkMetadata(const std::string &Name,
                          const std::vector<std::string> &Paths) {
  TocValue M = TocValue::map();
  M["kernel_name"] = Name;
  TocValue P = TocValue::array();
  for (const std::string &S : Paths)
    P.A.emplace_back(S);
  M["kpack_search_paths"] = P;
  return packToBytes(M);
}

} // namespace kpack_test

#endif
