//===- BundleLayoutTest.cpp - A bundle's layout without its payloads -----===//
//
// kpack::layoutBundle (core/), from which the shim writes a lazy bundle's
// header: the same header, offsets and size as encodeBundle's bundle.
//
//===----------------------------------------------------------------------===//

#include "kpack/BundleWriter.h"

#include <gtest/gtest.h>

#include <algorithm>

using namespace kpack;

TEST(ShimBundleLayout, MatchesEncodeBundle) {
  std::vector<uint8_t> A(5000, 0xaa), B(4096, 0xbb), C(1, 0xcc);
  std::vector<BundleInput> Entries = {
      {HostEntryId, nullptr, 0},
      {std::string(HipDeviceEntryPrefix) + "gfx1100", A.data(), A.size()},
      {std::string(HipDeviceEntryPrefix) + "gfx90a:xnack+", B.data(), B.size()},
      {std::string(HipDeviceEntryPrefix) + "gfx942", C.data(), C.size()}};
  const std::vector<uint8_t> Full = encodeBundle(Entries);
  // Ids and sizes only: the payloads are not read.
  std::vector<BundleInput> NoData = Entries;
  for (BundleInput &E : NoData)
    E.Data = nullptr;
  const BundleLayout L = layoutBundle(NoData);
  EXPECT_EQ(L.TotalSize, Full.size());
  ASSERT_LE(L.Header.size(), Full.size());
  EXPECT_TRUE(std::equal(L.Header.begin(), L.Header.end(), Full.begin()));
  ASSERT_EQ(L.Offsets.size(), Entries.size());
  EXPECT_EQ(L.Offsets[0], 4096u); // the host entry, empty
  for (size_t I = 1; I < Entries.size(); ++I) {
    EXPECT_EQ(L.Offsets[I] % 4096, 0u);
    EXPECT_GE(L.Offsets[I], L.Header.size());
    EXPECT_TRUE(std::equal(Entries[I].Data, Entries[I].Data + Entries[I].Size,
                           Full.begin() + L.Offsets[I]));
  }
  // Every byte between the header and the first payload is padding.
  EXPECT_TRUE(std::all_of(Full.begin() + L.Header.size(),
                          Full.begin() + L.Offsets[1],
                          [](uint8_t V) { return V == 0; }));
}
