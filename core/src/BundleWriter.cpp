//===- BundleWriter.cpp - Writes uncompressed offload bundles -------------===//

#include "kpack/BundleWriter.h"
#include "kpack/ByteOrder.h"

#include <algorithm>

namespace kpack {

using detail::alignTo;
using detail::appendLE;

BundleLayout layoutBundle(const std::vector<BundleInput> &Entries,
                          uint64_t Align) {
  // Same layout as clang-offload-bundler: header, then each payload at the
  // next multiple of Align, zero padding in between.
  uint64_t HeaderSize = OffloadBundleMagicSize + 8;
  for (const BundleInput &E : Entries)
    HeaderSize += OffloadBundleEntryFixedSize + E.Id.size();
  BundleLayout L;
  L.Header.assign(OffloadBundleMagic,
                  OffloadBundleMagic + OffloadBundleMagicSize);
  appendLE<uint64_t>(L.Header, Entries.size());
  uint64_t Cursor = HeaderSize;
  for (const BundleInput &E : Entries) {
    Cursor = alignTo(Cursor, Align);
    L.Offsets.push_back(Cursor);
    appendLE<uint64_t>(L.Header, Cursor);
    appendLE<uint64_t>(L.Header, E.Size);
    appendLE<uint64_t>(L.Header, E.Id.size());
    L.Header.insert(L.Header.end(), E.Id.begin(), E.Id.end());
    Cursor += E.Size;
  }
  L.TotalSize = std::max<uint64_t>(Cursor, L.Header.size());
  return L;
}

std::vector<uint8_t> encodeBundle(const std::vector<BundleInput> &Entries,
                                  uint64_t Align) {
  BundleLayout L = layoutBundle(Entries, Align);
  std::vector<uint8_t> Out = std::move(L.Header);
  for (size_t I = 0; I < Entries.size(); ++I) {
    if (Out.size() < L.Offsets[I])
      Out.resize(L.Offsets[I], 0);
    if (Entries[I].Size)
      Out.insert(Out.end(), Entries[I].Data, Entries[I].Data + Entries[I].Size);
  }
  return Out;
}

} // namespace kpack
