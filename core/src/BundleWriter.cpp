//===- BundleWriter.cpp - Writes uncompressed offload bundles -------------===//

#include "kpack/BundleWriter.h"
#include "kpack/ByteOrder.h"

namespace kpack {

using detail::alignTo;
using detail::appendLE;

std::vector<uint8_t> encodeBundle(const std::vector<BundleInput> &Entries,
                                  uint64_t Align) {
  // Same layout as clang-offload-bundler: header, then each payload at the
  // next multiple of Align, zero padding in between.
  uint64_t HeaderSize = OffloadBundleMagicSize + 8;
  for (const BundleInput &E : Entries)
    HeaderSize += OffloadBundleEntryFixedSize + E.Id.size();
  std::vector<uint8_t> Out(OffloadBundleMagic,
                           OffloadBundleMagic + OffloadBundleMagicSize);
  appendLE<uint64_t>(Out, Entries.size());
  std::vector<uint64_t> Offsets;
  uint64_t Cursor = HeaderSize;
  for (const BundleInput &E : Entries) {
    Cursor = alignTo(Cursor, Align);
    Offsets.push_back(Cursor);
    appendLE<uint64_t>(Out, Cursor);
    appendLE<uint64_t>(Out, E.Size);
    appendLE<uint64_t>(Out, E.Id.size());
    Out.insert(Out.end(), E.Id.begin(), E.Id.end());
    Cursor += E.Size;
  }
  for (size_t I = 0; I < Entries.size(); ++I) {
    if (Out.size() < Offsets[I])
      Out.resize(Offsets[I], 0);
    if (Entries[I].Size)
      Out.insert(Out.end(), Entries[I].Data, Entries[I].Data + Entries[I].Size);
  }
  return Out;
}

} // namespace kpack
