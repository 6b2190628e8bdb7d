//===- kpack/BundleWriter.h - Writes uncompressed offload bundles -*- C++ -*-===//
//
// The uncompressed clang offload bundle of docs/FORMAT.md §2.1, as the
// registration shim hands it to a stock HIP runtime and the tools write it.
// Reading bundles (and CCOB) is lib/format's BundleCodec.
//
//===----------------------------------------------------------------------===//
#ifndef KPACK_BUNDLEWRITER_H
#define KPACK_BUNDLEWRITER_H

#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

namespace kpack {

/// The first bytes of an uncompressed bundle.
constexpr char OffloadBundleMagic[] = "__CLANG_OFFLOAD_BUNDLE__";
constexpr size_t OffloadBundleMagicSize = sizeof(OffloadBundleMagic) - 1;
/// Per entry: offset, size, id length (u64 each), then the id.
constexpr size_t OffloadBundleEntryFixedSize = 24;
/// The entry id prefix of HIP device code objects, before the target ID.
constexpr char HipDeviceEntryPrefix[] = "hipv4-amdgcn-amd-amdhsa--";
/// clang's host entry: empty payload, present in every bundle it writes.
constexpr char HostEntryId[] = "host-x86_64-unknown-linux-gnu-";

/// Input to encodeBundle.
struct BundleInput {
  std::string Id;
  const uint8_t *Data = nullptr;
  size_t Size = 0;
};

/// Where encodeBundle puts things: its header bytes (magic, count, entry
/// table; zero padding up to the first payload not included), each entry's
/// payload offset, and the bundle's total size.
struct BundleLayout {
  std::vector<uint8_t> Header;
  std::vector<uint64_t> Offsets;
  uint64_t TotalSize = 0;
};

/// The layout of encodeBundle(Entries, Align) from the entries' ids and
/// sizes alone (Data is not read): for a bundle whose payloads are written
/// later (the registration shim's lazy bundles).
BundleLayout layoutBundle(const std::vector<BundleInput> &Entries,
                          uint64_t Align = 4096);

/// Writes an uncompressed bundle, payloads aligned to Align from bundle start
/// (clang uses 4096), entries in the given order. Deterministic. Throws only
/// std::bad_alloc.
std::vector<uint8_t> encodeBundle(const std::vector<BundleInput> &Entries,
                                  uint64_t Align = 4096);

} // namespace kpack

#endif
