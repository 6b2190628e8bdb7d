//===- MalformedInputTest.cpp - Corpus of broken archives and metadata ----===//
//
// Each case builds one malformed input and asserts the specific error code:
// at open, or (when the damage is only visible there) when loading entry
// "k#0"/gfx1100. Every case runs both from a file and from memory.
//
//===----------------------------------------------------------------------===//

#include "TestSupport.h"

#include "kpack/ArchiveReader.h"
#include "kpack/LoaderCache.h"
#include "rocm_kpack/kpack.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <cstdlib>
#include <functional>
#ifdef _WIN32
#include <windows.h>
#else
#include <sys/resource.h>
#endif

using namespace kpack_test;
using kpack::ArchiveReader;

namespace {

ArchiveParts base(const char *Scheme = "zstd-per-kernel", bool Ext = false) {
  ArchiveSpec Spec;
  Spec.Scheme = Scheme;
  Spec.FrameExtension = Ext;
  Spec.Entries = {{"k#0", "gfx1100", payload("k0-1100", 3000)},
                  {"k#0", "gfx1101", payload("k0-1101", 2000)},
                  {"k#1", "gfx1100", payload("k1-1100", 1000)}};
  return buildParts(Spec);
}

Bytes withParts(const std::function<void(ArchiveParts &)> &Edit,
                const char *Scheme = "zstd-per-kernel", bool Ext = false) {
  ArchiveParts P = base(Scheme, Ext);
  Edit(P);
  return serialize(P);
}

Bytes withBytes(const std::function<void(Bytes &)> &Edit) {
  Bytes B = serialize(base());
  Edit(B);
  return B;
}

/// Format version 2 ("zstd-shared-segments"): k#0/gfx1100 is compressed
/// against segments 0 and 1, k#0/gfx1101 against segment 0, k#1 alone;
/// segment 2 has segment 1's size and other bytes.
ArchiveSpec sharedSpec() {
  ArchiveSpec Spec;
  Spec.Scheme = "zstd-shared-segments";
  Bytes A = payload("seg-a", 2000), B = payload("seg-b", 1500);
  auto Cat = [](std::initializer_list<Bytes> Parts) {
    Bytes Out;
    for (const Bytes &P : Parts)
      Out.insert(Out.end(), P.begin(), P.end());
    return Out;
  };
  Spec.Segments = {A, B, payload("seg-c", 1500)};
  Spec.Entries = {{"k#0", "gfx1100", Cat({A, payload("k0-1100", 800), B})},
                  {"k#0", "gfx1101", Cat({payload("k0-1101", 500), A})},
                  {"k#1", "gfx1100", payload("k1-1100", 1000)}};
  Spec.EntrySegments = {{0, 1}, {0}, {}};
  return Spec;
}

Bytes withShared(const std::function<void(ArchiveParts &)> &Edit) {
  ArchiveParts P = buildParts(sharedSpec());
  Edit(P);
  return serialize(P);
}

// sharedSpec()'s segment frames start at 64; its index (three segments,
// three code objects) is: counts, the (frame size, original size) table,
// four list starts, then the lists {0, 1}, {0}.
constexpr size_t SegFrame0At = 64;
constexpr size_t IndexTable = 8, IndexStarts = 8 + 3 * 8,
                 IndexLists = IndexStarts + 4 * 4;

/// The shared archive's bytes, edited given the file offset of its index.
Bytes withSharedBytes(const std::function<void(Bytes &, size_t)> &Edit) {
  ArchiveParts P = buildParts(sharedSpec());
  size_t Index = size_t(P.Toc["shared_index_offset"].U);
  Bytes B = serialize(P);
  Edit(B, Index);
  return B;
}

uint32_t getLE32(const Bytes &B, size_t At) {
  return B[At] | B[At + 1] << 8 | B[At + 2] << 16 | uint32_t(B[At + 3]) << 24;
}

TocValue &entry(ArchiveParts &P, const char *Key = "k#0",
                const char *Arch = "gfx1100") {
  return P.Toc["toc"][Key][Arch];
}

void putLE32(Bytes &B, size_t At, uint32_t V) {
  for (int I = 0; I < 4; ++I)
    B[At + I] = uint8_t(V >> (8 * I));
}

void putLE64(Bytes &B, size_t At, uint64_t V) {
  for (int I = 0; I < 8; ++I)
    B[At + I] = uint8_t(V >> (8 * I));
}

uint64_t tocOffset(const Bytes &B) {
  uint64_t V = 0;
  for (int I = 0; I < 8; ++I)
    V |= uint64_t(B[8 + I]) << (8 * I);
  return V;
}

// Zstd blob layout of base(): count @64, frame 0 size @68, frame 0 @72.
constexpr size_t Frame0SizeAt = 68, Frame0At = 72;

struct MalformedArchive {
  const char *Name;
  std::function<Bytes()> Make;
  kpack_error_t AtOpen;
  kpack_error_t AtLoad = KPACK_SUCCESS; // when AtOpen is KPACK_SUCCESS
};

const kpack_error_t Invalid = KPACK_ERROR_INVALID_FORMAT;
// Also an integer field of the wrong msgpack type, as upstream reports it
// (upstream's test_kpack_api.cpp, InvalidNumericTocFieldTest).
const kpack_error_t Parse = KPACK_ERROR_MSGPACK_PARSE_FAILED;
const kpack_error_t Version = KPACK_ERROR_UNSUPPORTED_VERSION;
const kpack_error_t Decompress = KPACK_ERROR_DECOMPRESSION_FAILED;
const kpack_error_t Ok = KPACK_SUCCESS;

std::vector<MalformedArchive> malformedArchives() {
  std::vector<MalformedArchive> C;
  // Header, truncated at every field boundary.
  for (size_t Cut : {0, 3, 4, 7, 8, 15})
    C.push_back(
        {"truncated_header",
         [Cut] { return withBytes([Cut](Bytes &B) { B.resize(Cut); }); },
         Invalid});
  C.push_back({"truncated_at_blob",
               [] { return withBytes([](Bytes &B) { B.resize(64); }); },
               Invalid});
  C.push_back(
      {"truncated_in_toc",
       [] { return withBytes([](Bytes &B) { B.resize(tocOffset(B) + 20); }); },
       Parse});
  C.push_back({"truncated_last_byte",
               [] { return withBytes([](Bytes &B) { B.pop_back(); }); },
               Parse});
  C.push_back({"bad_magic",
               [] { return withBytes([](Bytes &B) { B[0] = 'X'; }); },
               Invalid});
  C.push_back({"version_0",
               [] { return withParts([](ArchiveParts &P) { P.Version = 0; }); },
               Version});
  C.push_back({"version_2",
               [] { return withParts([](ArchiveParts &P) { P.Version = 2; }); },
               Version});
  C.push_back({"toc_offset_zero",
               [] { return withBytes([](Bytes &B) { putLE64(B, 8, 0); }); },
               Invalid});
  C.push_back(
      {"toc_offset_at_eof",
       [] { return withBytes([](Bytes &B) { putLE64(B, 8, B.size()); }); },
       Invalid});
  C.push_back(
      {"toc_offset_huge",
       [] { return withBytes([](Bytes &B) { putLE64(B, 8, ~uint64_t(0)); }); },
       Invalid});
  C.push_back(
      {"toc_offset_into_blob",
       [] { return withBytes([](Bytes &B) { putLE64(B, 8, Frame0At); }); },
       Invalid});
  // TOC structure.
  C.push_back(
      {"toc_never_used_byte",
       [] { return withBytes([](Bytes &B) { B[tocOffset(B)] = 0xc1; }); },
       Parse});
  C.push_back({"toc_array_count_huge",
               [] {
                 return withBytes([](Bytes &B) {
                   size_t T = tocOffset(B);
                   B.resize(T);
                   for (uint8_t X : {0xdd, 0xff, 0xff, 0xff, 0xff})
                     B.push_back(X);
                 });
               },
               Parse});
  C.push_back({"toc_map_count_huge",
               [] {
                 return withBytes([](Bytes &B) {
                   size_t T = tocOffset(B);
                   B.resize(T);
                   for (uint8_t X : {0xdf, 0xff, 0xff, 0xff, 0xff, 0xa1, 0x61})
                     B.push_back(X);
                 });
               },
               Parse});
  C.push_back({"toc_str_length_huge",
               [] {
                 return withBytes([](Bytes &B) {
                   size_t T = tocOffset(B);
                   B.resize(T);
                   for (uint8_t X : {0x81, 0xdb, 0xff, 0xff, 0xff, 0xf0})
                     B.push_back(X);
                 });
               },
               Parse});
  C.push_back({"toc_is_array",
               [] {
                 return withParts([](ArchiveParts &P) {
                   P.Toc = TocValue::array({1, 2});
                 });
               },
               Invalid});
  C.push_back({"format_version_2",
               [] {
                 return withParts(
                     [](ArchiveParts &P) { P.Toc["format_version"] = 2; });
               },
               Version});
  C.push_back({"format_version_string",
               [] {
                 return withParts(
                     [](ArchiveParts &P) { P.Toc["format_version"] = "1"; });
               },
               Parse});
  C.push_back({"group_name_int",
               [] {
                 return withParts(
                     [](ArchiveParts &P) { P.Toc["group_name"] = 7; });
               },
               Invalid});
  C.push_back({"family_array",
               [] {
                 return withParts([](ArchiveParts &P) {
                   P.Toc["gfx_arch_family"] = TocValue::array();
                 });
               },
               Invalid});
  C.push_back({"gfx_arches_missing",
               [] {
                 return withParts(
                     [](ArchiveParts &P) { P.Toc.erase("gfx_arches"); });
               },
               Invalid});
  C.push_back({"gfx_arches_string",
               [] {
                 return withParts(
                     [](ArchiveParts &P) { P.Toc["gfx_arches"] = "gfx1100"; });
               },
               Invalid});
  C.push_back({"gfx_arches_int_item",
               [] {
                 return withParts([](ArchiveParts &P) {
                   P.Toc["gfx_arches"].A.push_back(1100);
                 });
               },
               Invalid});
  C.push_back({"scheme_missing",
               [] {
                 return withParts([](ArchiveParts &P) {
                   P.Toc.erase("compression_scheme");
                 });
               },
               Invalid});
  C.push_back({"scheme_int",
               [] {
                 return withParts(
                     [](ArchiveParts &P) { P.Toc["compression_scheme"] = 1; });
               },
               Invalid});
  C.push_back({"scheme_unknown",
               [] {
                 return withParts([](ArchiveParts &P) {
                   P.Toc["compression_scheme"] = "lz4-dict";
                 });
               },
               Invalid});
  C.push_back(
      {"toc_missing",
       [] { return withParts([](ArchiveParts &P) { P.Toc.erase("toc"); }); },
       Invalid});
  C.push_back({"toc_index_array",
               [] {
                 return withParts(
                     [](ArchiveParts &P) { P.Toc["toc"] = TocValue::array(); });
               },
               Invalid});
  C.push_back({"binary_key_int",
               [] {
                 return withParts([](ArchiveParts &P) {
                   P.Toc["toc"].M.emplace_back(TocValue(5), TocValue::map());
                 });
               },
               Invalid});
  C.push_back({"binary_value_string",
               [] {
                 return withParts(
                     [](ArchiveParts &P) { P.Toc["toc"]["k#0"] = "gfx1100"; });
               },
               Invalid});
  C.push_back({"entry_not_map",
               [] {
                 return withParts(
                     [](ArchiveParts &P) { entry(P) = TocValue::array(); });
               },
               Invalid});
  C.push_back({"arch_key_binary",
               [] {
                 return withParts([](ArchiveParts &P) {
                   P.Toc["toc"]["k#0"].M.emplace_back(TocValue::binary("gfx9"),
                                                      TocValue::map());
                 });
               },
               Invalid});
  C.push_back({"ordinal_missing",
               [] {
                 return withParts(
                     [](ArchiveParts &P) { entry(P).erase("ordinal"); });
               },
               Invalid});
  C.push_back({"ordinal_string",
               [] {
                 return withParts(
                     [](ArchiveParts &P) { entry(P)["ordinal"] = "0"; });
               },
               Parse});
  C.push_back({"ordinal_negative",
               [] {
                 return withParts(
                     [](ArchiveParts &P) { entry(P)["ordinal"] = -1; });
               },
               Parse});
  C.push_back({"original_size_missing",
               [] {
                 return withParts(
                     [](ArchiveParts &P) { entry(P).erase("original_size"); });
               },
               Invalid});
  C.push_back({"original_size_bool",
               [] {
                 return withParts([](ArchiveParts &P) {
                   entry(P)["original_size"] = TocValue::boolean(true);
                 });
               },
               Parse});
  C.push_back(
      {"entry_type_int",
       [] { return withParts([](ArchiveParts &P) { entry(P)["type"] = 1; }); },
       Invalid});
  C.push_back({"duplicate_entry",
               [] {
                 return withParts([](ArchiveParts &P) {
                   P.Toc["toc"]["k#0"].M.push_back(P.Toc["toc"]["k#0"].M[0]);
                 });
               },
               Invalid});
  // Scheme "none".
  C.push_back({"none_blobs_missing",
               [] {
                 return withParts([](ArchiveParts &P) { P.Toc.erase("blobs"); },
                                  "none");
               },
               Invalid});
  C.push_back({"none_blobs_map",
               [] {
                 return withParts(
                     [](ArchiveParts &P) { P.Toc["blobs"] = TocValue::map(); },
                     "none");
               },
               Invalid});
  C.push_back({"none_blob_offset_past_eof",
               [] {
                 return withParts(
                     [](ArchiveParts &P) {
                       P.Toc["blobs"].A[0]["offset"] = uint64_t(1) << 40;
                     },
                     "none");
               },
               Invalid});
  C.push_back({"none_blob_size_wraps",
               [] {
                 return withParts(
                     [](ArchiveParts &P) {
                       P.Toc["blobs"].A[0]["size"] = ~uint64_t(0) - 10;
                     },
                     "none");
               },
               Invalid});
  C.push_back({"none_blob_size_string",
               [] {
                 return withParts(
                     [](ArchiveParts &P) { P.Toc["blobs"].A[0]["size"] = "9"; },
                     "none");
               },
               Parse});
  C.push_back({"none_ordinal_without_blob",
               [] {
                 return withParts(
                     [](ArchiveParts &P) { entry(P)["ordinal"] = 3; }, "none");
               },
               Invalid});
  C.push_back({"none_original_size_mismatch",
               [] {
                 return withParts(
                     [](ArchiveParts &P) { entry(P)["original_size"] = 2999; },
                     "none");
               },
               Ok, Decompress});
  // Scheme "zstd-per-kernel".
  C.push_back({"zstd_offset_missing",
               [] {
                 return withParts(
                     [](ArchiveParts &P) { P.Toc.erase("zstd_offset"); });
               },
               Invalid});
  C.push_back({"zstd_offset_past_eof",
               [] {
                 return withParts([](ArchiveParts &P) {
                   P.Toc["zstd_offset"] = uint64_t(1) << 33;
                 });
               },
               Invalid});
  C.push_back({"zstd_size_huge",
               [] {
                 return withParts([](ArchiveParts &P) {
                   P.Toc["zstd_size"] = ~uint64_t(0);
                 });
               },
               Invalid});
  C.push_back({"zstd_size_below_count",
               [] {
                 return withParts(
                     [](ArchiveParts &P) { P.Toc["zstd_size"] = 3; });
               },
               Invalid});
  C.push_back(
      {"zstd_count_huge",
       [] { return withBytes([](Bytes &B) { putLE32(B, 64, 0xffffffff); }); },
       Ok, Invalid});
  C.push_back({"zstd_count_too_small",
               [] {
                 return withParts(
                     [](ArchiveParts &P) { entry(P)["ordinal"] = 7; });
               },
               Ok, Invalid});
  C.push_back({"zstd_frame_size_past_blob",
               [] {
                 return withBytes(
                     [](Bytes &B) { putLE32(B, Frame0SizeAt, 0x7fffffff); });
               },
               Ok, Invalid});
  C.push_back({"zstd_frame_size_breaks_chain",
               [] {
                 return withBytes([](Bytes &B) {
                   uint32_t N = B[Frame0SizeAt] | B[Frame0SizeAt + 1] << 8;
                   putLE32(B, Frame0SizeAt, N / 2);
                 });
               },
               Ok, Invalid});
  C.push_back({"zstd_frame_truncated",
               [] {
                 // The only frame ends early; the chain itself stays
                 // consistent.
                 ArchiveSpec Spec;
                 Spec.Entries = {{"k#0", "gfx1100", payload("k0-1100", 3000)}};
                 Bytes B = buildArchive(Spec);
                 uint32_t N = B[Frame0SizeAt] | B[Frame0SizeAt + 1] << 8;
                 putLE32(B, Frame0SizeAt, N / 2);
                 return B;
               },
               Ok, Decompress});
  C.push_back({"zstd_frame_bad_magic",
               [] { return withBytes([](Bytes &B) { B[Frame0At] ^= 0xff; }); },
               Ok, Decompress});
  C.push_back({"zstd_frame_bad_block_type",
               [] {
                 return withBytes([](Bytes &B) {
                   // Block type 3 is reserved; the first block header follows
                   // the frame header.
                   B[Frame0At + ZSTD_frameHeaderSize(
                                    &B[Frame0At], B.size() - Frame0At)] |= 0x06;
                 });
               },
               Ok, Decompress});
  C.push_back({"zstd_original_size_larger",
               [] {
                 return withParts(
                     [](ArchiveParts &P) { entry(P)["original_size"] = 3001; });
               },
               Ok, Decompress});
  C.push_back({"zstd_original_size_smaller",
               [] {
                 return withParts(
                     [](ArchiveParts &P) { entry(P)["original_size"] = 100; });
               },
               Ok, Decompress});
  C.push_back({"zstd_original_size_terabyte",
               [] {
                 return withParts([](ArchiveParts &P) {
                   entry(P)["original_size"] = uint64_t(1) << 40;
                 });
               },
               Ok, Decompress});
  C.push_back({"ext_only_frame_offset",
               [] {
                 return withParts(
                     [](ArchiveParts &P) { entry(P).erase("frame_size"); },
                     "zstd-per-kernel", true);
               },
               Invalid});
  C.push_back({"ext_frame_offset_before_blob",
               [] {
                 return withParts(
                     [](ArchiveParts &P) { entry(P)["frame_offset"] = 64; },
                     "zstd-per-kernel", true);
               },
               Invalid});
  C.push_back({"ext_frame_past_blob",
               [] {
                 return withParts(
                     [](ArchiveParts &P) { entry(P)["frame_size"] = 1 << 20; },
                     "zstd-per-kernel", true);
               },
               Invalid});
  C.push_back(
      {"ext_frame_offset_misplaced",
       [] {
         return withParts(
             [](ArchiveParts &P) { entry(P)["frame_offset"] = Frame0At; },
             "zstd-per-kernel", true);
       },
       Ok, Invalid});
  // Format version 2, scheme "zstd-shared-segments": the scheme and the
  // header version go together (an upstream reader would read the scheme as
  // "none").
  C.push_back({"v2_scheme_in_version_1",
               [] {
                 return withShared([](ArchiveParts &P) {
                   P.Version = 1;
                   P.Toc["format_version"] = 1;
                 });
               },
               Invalid});
  C.push_back({"v1_scheme_in_version_2",
               [] {
                 return withParts([](ArchiveParts &P) {
                   P.Version = 2;
                   P.Toc["format_version"] = 2;
                 });
               },
               Invalid});
  C.push_back({"v2_toc_format_version_1",
               [] {
                 return withShared(
                     [](ArchiveParts &P) { P.Toc["format_version"] = 1; });
               },
               Version});
  C.push_back({"version_3",
               [] { return withShared([](ArchiveParts &P) { P.Version = 3; }); },
               Version});
  C.push_back({"v2_shared_offset_missing",
               [] {
                 return withShared(
                     [](ArchiveParts &P) { P.Toc.erase("shared_offset"); });
               },
               Invalid});
  C.push_back({"v2_shared_blob_past_eof",
               [] {
                 return withShared([](ArchiveParts &P) {
                   P.Toc["shared_offset"] = uint64_t(1) << 33;
                 });
               },
               Invalid});
  C.push_back({"v2_shared_size_string",
               [] {
                 return withShared(
                     [](ArchiveParts &P) { P.Toc["shared_size"] = "40"; });
               },
               Parse});
  C.push_back({"v2_index_offset_missing",
               [] {
                 return withShared([](ArchiveParts &P) {
                   P.Toc.erase("shared_index_offset");
                 });
               },
               Invalid});
  C.push_back({"v2_index_past_eof",
               [] {
                 return withShared([](ArchiveParts &P) {
                   P.Toc["shared_index_size"] = uint64_t(1) << 20;
                 });
               },
               Invalid});
  C.push_back({"v2_index_below_counts",
               [] {
                 return withShared(
                     [](ArchiveParts &P) { P.Toc["shared_index_size"] = 8; });
               },
               Invalid});
  // The index, read by the first load that needs it.
  C.push_back({"v2_index_segment_count_huge",
               [] {
                 return withSharedBytes([](Bytes &B, size_t Index) {
                   putLE32(B, Index, 0xffffffff);
                 });
               },
               Ok, Invalid});
  C.push_back({"v2_index_code_object_count_huge",
               [] {
                 return withSharedBytes([](Bytes &B, size_t Index) {
                   putLE32(B, Index + 4, 0x7fffffff);
                 });
               },
               Ok, Invalid});
  C.push_back({"v2_index_size_too_large",
               [] {
                 // The lists no longer end the index.
                 return withShared([](ArchiveParts &P) {
                   P.Toc["shared_index_size"].U += 4;
                 });
               },
               Ok, Invalid});
  C.push_back({"v2_frames_short_of_blob",
               [] {
                 return withShared(
                     [](ArchiveParts &P) { P.Toc["shared_size"].U += 1; });
               },
               Ok, Invalid});
  C.push_back({"v2_frame_past_blob",
               [] {
                 return withSharedBytes([](Bytes &B, size_t Index) {
                   putLE32(B, Index + IndexTable, 0x7fffffff);
                 });
               },
               Ok, Invalid});
  C.push_back({"v2_list_starts_out_of_order",
               [] {
                 return withSharedBytes([](Bytes &B, size_t Index) {
                   putLE32(B, Index + IndexStarts + 4, 3); // 0, 3, 3, 3
                 });
               },
               Ok, Invalid});
  C.push_back({"v2_list_first_start_not_zero",
               [] {
                 return withSharedBytes([](Bytes &B, size_t Index) {
                   putLE32(B, Index + IndexStarts, 1);
                 });
               },
               Ok, Invalid});
  C.push_back({"v2_list_descending",
               [] {
                 return withSharedBytes([](Bytes &B, size_t Index) {
                   putLE32(B, Index + IndexLists, 1);
                   putLE32(B, Index + IndexLists + 4, 0);
                 });
               },
               Ok, Invalid});
  C.push_back({"v2_list_repeated",
               [] {
                 return withSharedBytes([](Bytes &B, size_t Index) {
                   putLE32(B, Index + IndexLists + 4, 0);
                 });
               },
               Ok, Invalid});
  C.push_back({"v2_list_segment_past_count",
               [] {
                 return withSharedBytes([](Bytes &B, size_t Index) {
                   putLE32(B, Index + IndexLists + 4, 3);
                 });
               },
               Ok, Invalid});
  C.push_back({"v2_ordinal_past_index",
               [] {
                 return withShared(
                     [](ArchiveParts &P) { entry(P)["ordinal"] = 3; });
               },
               Ok, Invalid});
  // An ordinal of 2^64 - 1: ordinal + 1 wraps to 0 (issue 18, item 1).
  C.push_back({"v2_ordinal_max",
               [] {
                 return withShared([](ArchiveParts &P) {
                   entry(P)["ordinal"] = ~uint64_t(0);
                 });
               },
               Ok, Invalid});
  C.push_back({"zstd_ordinal_max",
               [] {
                 return withParts(
                     [](ArchiveParts &P) { entry(P)["ordinal"] = ~uint64_t(0); });
               },
               Ok, Invalid});
  C.push_back({"none_ordinal_max",
               [] {
                 return withParts(
                     [](ArchiveParts &P) { entry(P)["ordinal"] = ~uint64_t(0); },
                     "none");
               },
               Invalid});
  // Frames and prefixes that disagree. The lists are {0, 1}, {0}, {} at
  // starts 0, 2, 3, 3; the edits keep three list words.
  C.push_back({"v2_list_dropped",
               [] {
                 // k#0/gfx1100 without its prefix: {}, {0}, {0, 1}.
                 return withSharedBytes([](Bytes &B, size_t Index) {
                   putLE32(B, Index + IndexStarts + 4, 0);
                   putLE32(B, Index + IndexStarts + 8, 1);
                   putLE32(B, Index + IndexLists, 0);
                   putLE32(B, Index + IndexLists + 4, 0);
                   putLE32(B, Index + IndexLists + 8, 1);
                 });
               },
               Ok, Decompress});
  C.push_back({"v2_list_shortened",
               [] {
                 // k#0/gfx1100 against segment 0 only: {0}, {0}, {1}; its
                 // frame refers past the shorter prefix.
                 return withSharedBytes([](Bytes &B, size_t Index) {
                   putLE32(B, Index + IndexStarts + 4, 1);
                   putLE32(B, Index + IndexStarts + 8, 2);
                   putLE32(B, Index + IndexLists + 4, 0);
                   putLE32(B, Index + IndexLists + 8, 1);
                 });
               },
               Ok, Decompress});
  C.push_back({"v2_segment_frame_size_shrunk",
               [] {
                 return withSharedBytes([](Bytes &B, size_t Index) {
                   // Segment 0 one byte shorter, segment 1 one longer: the
                   // frames still fill the blob.
                   putLE32(B, Index + IndexTable,
                           getLE32(B, Index + IndexTable) - 1);
                   putLE32(B, Index + IndexTable + 8,
                           getLE32(B, Index + IndexTable + 8) + 1);
                 });
               },
               Ok, Decompress});
  C.push_back({"v2_segment_original_size_larger",
               [] {
                 return withSharedBytes([](Bytes &B, size_t Index) {
                   putLE32(B, Index + IndexTable + 4,
                           getLE32(B, Index + IndexTable + 4) + 1);
                 });
               },
               Ok, Decompress});
  C.push_back({"v2_segment_original_size_huge",
               [] {
                 return withSharedBytes([](Bytes &B, size_t Index) {
                   putLE32(B, Index + IndexTable + 12, 0xffffffff);
                 });
               },
               Ok, Decompress});
  C.push_back({"v2_segment_frame_bad_magic",
               [] {
                 return withSharedBytes(
                     [](Bytes &B, size_t) { B[SegFrame0At] ^= 0xff; });
               },
               Ok, Decompress});
  return C;
}

class MalformedArchiveTest : public ::testing::TestWithParam<MalformedArchive> {
};

TEST_P(MalformedArchiveTest, FailsWithSpecificError) {
  const MalformedArchive &Case = GetParam();
  Bytes Image = Case.Make();
  TempDir Dir;
  std::string Path = Dir.write("bad.kpack", Image);

  kpack_archive_t A = nullptr;
  ASSERT_EQ(kpack_open(Path.c_str(), &A), Case.AtOpen)
      << kpack::errorCodeName(Case.AtOpen);
  std::unique_ptr<ArchiveReader> FromMemory;
  kpack::Status MemErr =
      ArchiveReader::openBytes(Image.data(), Image.size(), FromMemory);
  EXPECT_EQ(MemErr.code(), Case.AtOpen) << MemErr.message();
  if (Case.AtOpen != KPACK_SUCCESS) {
    EXPECT_FALSE(MemErr.message().empty());
    return;
  }
  void *Data = nullptr;
  size_t Size = 0;
  EXPECT_EQ(kpack_get_kernel(A, "k#0", "gfx1100", &Data, &Size), Case.AtLoad)
      << kpack::errorCodeName(Case.AtLoad);
  EXPECT_EQ(Data, nullptr);
  kpack_close(A);
}

INSTANTIATE_TEST_SUITE_P(Corpus, MalformedArchiveTest,
                         ::testing::ValuesIn(malformedArchives()),
                         [](const auto &Info) {
                           return std::string(Info.param.Name) + "_" +
                                  std::to_string(Info.index);
                         });

TEST(MalformedArchive, CorpusIsLarge) {
  EXPECT_GE(malformedArchives().size(), 30u);
}

// The corpus's version-2 base is itself valid: every entry reads back.
TEST(MalformedArchive, SharedBaseIsValid) {
  ArchiveSpec Spec = sharedSpec();
  Bytes Image = buildArchive(Spec);
  std::unique_ptr<ArchiveReader> R;
  ASSERT_FALSE(ArchiveReader::openBytes(Image.data(), Image.size(), R));
  for (const TestEntry &E : Spec.Entries) {
    const ArchiveReader::Entry *Found = R->find(E.Key, E.Arch);
    ASSERT_NE(Found, nullptr);
    Bytes Out;
    ASSERT_FALSE(R->read(*Found, Out)) << E.Key << " " << E.Arch;
    EXPECT_EQ(Out, E.Data);
  }
}

#if defined(__has_feature)
#if __has_feature(address_sanitizer) || __has_feature(thread_sanitizer)
#define KPACK_TEST_SANITIZED 1
#endif
#endif

// Counts near 2^32 in a tiny TOC or a 1 TiB original_size must fail without
// trying to allocate: run the open and load under a 256 MiB address-space
// limit in a child process. (Sanitizers reserve terabytes of shadow memory,
// so the limit cannot be applied to them.)
#ifndef KPACK_TEST_SANITIZED
/// Limits the process (the death test's child) to 256 MiB: RLIMIT_AS on
/// Linux, a job object's process memory limit on Windows.
void limitMemory() {
  const size_t Bytes = size_t(256) << 20;
#ifdef _WIN32
  HANDLE Job = CreateJobObjectW(nullptr, nullptr);
  JOBOBJECT_EXTENDED_LIMIT_INFORMATION Info{};
  Info.BasicLimitInformation.LimitFlags = JOB_OBJECT_LIMIT_PROCESS_MEMORY;
  Info.ProcessMemoryLimit = Bytes;
  if (Job && SetInformationJobObject(Job, JobObjectExtendedLimitInformation,
                                     &Info, sizeof(Info)))
    AssignProcessToJobObject(Job, GetCurrentProcess());
#else
  struct rlimit Limit = {rlim_t(Bytes), rlim_t(Bytes)};
  setrlimit(RLIMIT_AS, &Limit);
#endif
}

[[noreturn]] void openAndLoadUnderLimit(const std::string &Path) {
  limitMemory();
  kpack_archive_t A = nullptr;
  kpack_error_t Err = kpack_open(Path.c_str(), &A);
  if (Err == KPACK_SUCCESS) {
    void *Data = nullptr;
    size_t Size = 0;
    Err = kpack_get_kernel(A, "k#0", "gfx1100", &Data, &Size);
  }
  std::_Exit(int(Err));
}
#endif

TEST(MalformedArchiveDeathTest, HugeCountsDoNotAllocate) {
#ifdef KPACK_TEST_SANITIZED
  GTEST_SKIP() << "address-space limit is incompatible with sanitizers";
#else
  std::vector<MalformedArchive> Cases = malformedArchives();
  TempDir Dir;
  for (const char *Name :
       {"toc_array_count_huge", "toc_map_count_huge", "toc_str_length_huge",
        "zstd_count_huge", "zstd_original_size_terabyte",
        "v2_segment_original_size_huge"}) {
    auto It = std::find_if(
        Cases.begin(), Cases.end(),
        [&](const MalformedArchive &C) { return std::string(C.Name) == Name; });
    ASSERT_NE(It, Cases.end()) << Name;
    std::string Path = Dir.write(std::string(Name) + ".kpack", It->Make());
    kpack_error_t Expected =
        It->AtOpen != KPACK_SUCCESS ? It->AtOpen : It->AtLoad;
    EXPECT_EXIT(openAndLoadUnderLimit(Path),
                ::testing::ExitedWithCode(int(Expected)), "")
        << Name;
  }
#endif
}

#if !defined(KPACK_TEST_SANITIZED) && !defined(_WIN32)
/// A sparse archive: Parts' header and blob at 0 (toc_offset TocOffset),
/// its TOC at TocOffset, zeros (no disk space) in between.
std::vector<std::pair<uint64_t, Bytes>> sparseParts(ArchiveParts P,
                                                    uint64_t TocOffset) {
  P.TocOffsetOverride = TocOffset;
  Bytes Image = serialize(P);
  Bytes Head(Image.begin(), Image.begin() + BlobStart + P.Blob.size());
  return {{0, Head}, {TocOffset, packToBytes(P.Toc)}};
}

struct SparseArchive {
  const char *Name;
  uint64_t Size;
  std::vector<std::pair<uint64_t, Bytes>> Pieces;
  kpack_error_t Expected; ///< of kpack_open, else of loading k#0/gfx1100
};

/// Issue 25, item 6: sizes from the file that drove an allocation of that
/// size before anything checked them, each in a sparse file where it costs
/// no disk space (and, read, gigabytes of zeros).
std::vector<SparseArchive> sparseArchives() {
  constexpr uint64_t GiB = uint64_t(1) << 30;
  std::vector<SparseArchive> C;
  // A 16-byte header whose TOC is the rest of the file: 3 GiB, 1 TiB.
  Bytes Header = {'K', 'P', 'A', 'K', 1, 0, 0, 0, 16, 0, 0, 0, 0, 0, 0, 0};
  C.push_back({"toc_3gib", 3 * GiB, {{0, Header}}, Invalid});
  C.push_back({"toc_1tib", GiB << 10, {{0, Header}}, Invalid});
  {
    // frame_size beyond a u32 (the frame's size word), within the blob.
    ArchiveParts P = base("zstd-per-kernel", true);
    entry(P)["frame_size"] = (uint64_t(1) << 32) + 100;
    P.Toc["zstd_size"] = 5 * GiB - BlobStart;
    auto Pieces = sparseParts(P, 5 * GiB);
    C.push_back({"frame_size_over_u32", 5 * GiB + Pieces[1].second.size(),
                 Pieces, Invalid});
  }
  {
    // A kernel count of 2^32 - 1 over a 16 GiB blob of zeros after the
    // three real frames: only the TOC's entries' frames are walked.
    ArchiveParts P = base();
    putLE32(P.Blob, 0, 0xffffffff);
    P.Toc["zstd_size"] = 16 * GiB;
    auto Pieces = sparseParts(P, BlobStart + 16 * GiB);
    C.push_back({"chain_count_max",
                 BlobStart + 16 * GiB + Pieces[1].second.size(), Pieces, Ok});
  }
  {
    // frame_offset into the zeros, frame_size 2 GiB.
    ArchiveParts P = base("zstd-per-kernel", true);
    entry(P)["frame_offset"] = GiB;
    entry(P)["frame_size"] = 2 * GiB;
    P.Toc["zstd_size"] = 4 * GiB - BlobStart;
    auto Pieces = sparseParts(P, 4 * GiB);
    C.push_back({"frame_in_zeros", 4 * GiB + Pieces[1].second.size(), Pieces,
                 Invalid});
  }
  {
    // A version-2 segment index of 1 GiB of zeros.
    ArchiveParts P = buildParts(sharedSpec());
    P.Toc["shared_index_offset"] = GiB;
    P.Toc["shared_index_size"] = GiB;
    auto Pieces = sparseParts(P, 2 * GiB);
    C.push_back({"v2_index_1gib", 2 * GiB + Pieces[1].second.size(), Pieces,
                 Invalid});
  }
  {
    // One 2 GiB segment of zeros, which k#0/gfx1100 needs.
    ArchiveParts P = buildParts(sharedSpec());
    Bytes Index;
    for (uint32_t V : {1u, 3u, uint32_t(2 * GiB), 2000u, 0u, 1u, 1u, 1u, 0u})
      appendLE32(Index, V);
    P.Toc["shared_offset"] = GiB;
    P.Toc["shared_size"] = 2 * GiB;
    P.Toc["shared_index_offset"] = 3 * GiB;
    P.Toc["shared_index_size"] = uint64_t(Index.size());
    auto Pieces = sparseParts(P, 3 * GiB + Index.size());
    Pieces.push_back({3 * GiB, Index});
    C.push_back({"v2_segment_in_zeros",
                 3 * GiB + Index.size() + Pieces[1].second.size(), Pieces,
                 Decompress});
  }
  return C;
}
#endif

// Sparse files are made with ftruncate (POSIX only).
#ifndef _WIN32
TEST(MalformedArchiveDeathTest, SparseFilesDoNotAllocate) {
#ifdef KPACK_TEST_SANITIZED
  GTEST_SKIP() << "address-space limit is incompatible with sanitizers";
#else
  TempDir Dir;
  for (const SparseArchive &C : sparseArchives()) {
    const std::string Path = Dir.file(std::string(C.Name) + ".kpack");
    ASSERT_TRUE(writeSparse(Path, C.Size, C.Pieces)) << C.Name;
    EXPECT_EXIT(openAndLoadUnderLimit(Path),
                ::testing::ExitedWithCode(int(C.Expected)), "")
        << C.Name;
  }
#endif
}
#endif

// Issue 18, item 1: with every ordinal 2^64 - 1, no entry of a version-2
// archive reads (k#1 has no segments, so a wrapped ordinal that found an
// empty list would load it), and its segment list is refused.
TEST(MalformedArchive, V2OrdinalMaxLoadsNoEntry) {
  Bytes Image = withShared([](ArchiveParts &P) {
    for (auto &Binary : P.Toc["toc"].M)
      for (auto &Arch : Binary.second.M)
        Arch.second["ordinal"] = ~uint64_t(0);
  });
  std::unique_ptr<ArchiveReader> R;
  ASSERT_FALSE(ArchiveReader::openBytes(Image.data(), Image.size(), R));
  TempDir Dir;
  const std::string Path = Dir.write("max.kpack", Image);
  kpack_archive_t A = nullptr;
  ASSERT_EQ(kpack_open(Path.c_str(), &A), KPACK_SUCCESS);
  for (const ArchiveReader::Entry &E : R->entries()) {
    std::vector<uint32_t> List;
    EXPECT_EQ(R->entrySegments(E, List).code(), KPACK_ERROR_INVALID_FORMAT)
        << E.Key << " " << E.Arch;
    std::vector<uint8_t> Out;
    EXPECT_EQ(R->read(E, Out).code(), KPACK_ERROR_INVALID_FORMAT)
        << E.Key << " " << E.Arch;
    void *Data = nullptr;
    size_t Size = 0;
    EXPECT_EQ(kpack_get_kernel(A, E.Key.c_str(), E.Arch.c_str(), &Data, &Size),
              KPACK_ERROR_INVALID_FORMAT)
        << E.Key << " " << E.Arch;
    EXPECT_EQ(Data, nullptr);
    kpack_free_kernel(Data);
  }
  kpack_close(A);
}

TEST(MalformedArchive, MissingFileAndDirectory) {
  TempDir Dir;
  kpack_archive_t A = nullptr;
  EXPECT_EQ(kpack_open(Dir.file("absent.kpack").c_str(), &A),
            KPACK_ERROR_FILE_NOT_FOUND);
  EXPECT_EQ(kpack_open(Dir.file("no/such/dir.kpack").c_str(), &A),
            KPACK_ERROR_FILE_NOT_FOUND);
  EXPECT_EQ(kpack_open(Dir.path().c_str(), &A), KPACK_ERROR_IO_ERROR);
  EXPECT_EQ(A, nullptr);
}

// HIPK metadata: every problem is KPACK_ERROR_INVALID_METADATA.
struct MalformedMetadata {
  const char *Name;
  std::function<Bytes()> Make;
};

Bytes metadataWith(const std::function<void(TocValue &)> &Edit) {
  TocValue M = TocValue::map();
  M["kernel_name"] = "lib/libfoo.so";
  M["kpack_search_paths"] = TocValue::array({"../.kpack/foo_@GFXARCH@.kpack"});
  Edit(M);
  return packToBytes(M);
}

std::vector<MalformedMetadata> malformedMetadata() {
  return {
      {"empty", [] { return Bytes(); }},
      {"never_used_byte", [] { return Bytes{0xc1}; }},
      {"not_a_map", [] { return packToBytes(TocValue::array({"a"})); }},
      {"kernel_name_missing",
       [] {
         return metadataWith([](TocValue &M) { M.erase("kernel_name"); });
       }},
      {"kernel_name_int",
       [] { return metadataWith([](TocValue &M) { M["kernel_name"] = 3; }); }},
      {"kernel_name_empty",
       [] { return metadataWith([](TocValue &M) { M["kernel_name"] = ""; }); }},
      {"paths_missing",
       [] {
         return metadataWith(
             [](TocValue &M) { M.erase("kpack_search_paths"); });
       }},
      {"paths_string",
       [] {
         return metadataWith(
             [](TocValue &M) { M["kpack_search_paths"] = "a.kpack"; });
       }},
      {"paths_empty",
       [] {
         return metadataWith(
             [](TocValue &M) { M["kpack_search_paths"] = TocValue::array(); });
       }},
      {"path_item_int",
       [] {
         return metadataWith(
             [](TocValue &M) { M["kpack_search_paths"].A.push_back(4); });
       }},
      {"path_item_empty",
       [] {
         return metadataWith(
             [](TocValue &M) { M["kpack_search_paths"].A.push_back(""); });
       }},
      {"truncated",
       [] {
         Bytes B = metadataWith([](TocValue &) {});
         B.resize(B.size() - 5);
         return B;
       }},
      {"array_count_huge",
       [] {
         return Bytes{0x82, 0xab, 'k', 'e', 'r',  'n',  'e',  'l',  '_',
                      'n',  'a',  'm', 'e', 0xdd, 0xff, 0xff, 0xff, 0xff};
       }},
  };
}

class MalformedMetadataTest
    : public ::testing::TestWithParam<MalformedMetadata> {};

TEST_P(MalformedMetadataTest, IsInvalidMetadata) {
  Bytes Meta = GetParam().Make();
  kpack::KpackMetadata Ref;
  kpack::Status Err =
      kpack::decodeKpackMetadata(Meta.data(), Meta.size(), Ref, kpack::MetadataMode::Loader);
  EXPECT_EQ(Err.code(), KPACK_ERROR_INVALID_METADATA) << Err.message();
}

INSTANTIATE_TEST_SUITE_P(Corpus, MalformedMetadataTest,
                         ::testing::ValuesIn(malformedMetadata()),
                         [](const auto &Info) {
                           return std::string(Info.param.Name);
                         });

TEST(MalformedMetadata, ValidMetadataParses) {
  Bytes Meta = metadataWith([](TocValue &M) { M["extra"] = 1; });
  Meta.resize(Meta.size() + 100, 0xc1); // bytes after the map are not read
  kpack::KpackMetadata Ref;
  ASSERT_FALSE(kpack::decodeKpackMetadata(Meta.data(), Meta.size(), Ref, kpack::MetadataMode::Loader));
  EXPECT_EQ(Ref.KernelName, "lib/libfoo.so");
  EXPECT_EQ(Ref.SearchPaths,
            (std::vector<std::string>{"../.kpack/foo_@GFXARCH@.kpack"}));
}

} // namespace
