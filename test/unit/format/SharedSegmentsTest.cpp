//===- SharedSegmentsTest.cpp - kpack/SharedSegments.h --------------------===//

#include "kpack/SharedSegments.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <cstring>

using namespace kpack;

namespace {

std::vector<uint8_t> noise(size_t Size, uint32_t Seed) {
  std::vector<uint8_t> B(Size);
  uint32_t X = Seed * 2654435761u + 7;
  for (uint8_t &C : B) {
    X ^= X << 13;
    X ^= X >> 17;
    X ^= X << 5;
    C = static_cast<uint8_t>(X);
  }
  return B;
}

std::vector<uint8_t> cat(std::initializer_list<std::vector<uint8_t>> Parts) {
  std::vector<uint8_t> Out;
  for (const std::vector<uint8_t> &P : Parts)
    Out.insert(Out.end(), P.begin(), P.end());
  return Out;
}

/// Whether Needle occurs in Haystack.
bool contains(const std::vector<uint8_t> &Haystack,
              const std::vector<uint8_t> &Needle) {
  return std::search(Haystack.begin(), Haystack.end(), Needle.begin(),
                     Needle.end()) != Haystack.end();
}

TEST(ChunkContent, CoversTheInputInBoundedChunks) {
  std::vector<uint8_t> Data = noise(200000, 1);
  std::vector<ContentChunk> Chunks = chunkContent(Data.data(), Data.size());
  ASSERT_FALSE(Chunks.empty());
  uint64_t At = 0;
  for (size_t I = 0; I < Chunks.size(); ++I) {
    EXPECT_EQ(Chunks[I].Offset, At);
    EXPECT_LE(Chunks[I].Size, 4096u);
    if (I + 1 < Chunks.size()) {
      EXPECT_GE(Chunks[I].Size, 64u);
    }
    At += Chunks[I].Size;
  }
  EXPECT_EQ(At, Data.size());
  // About one chunk per 0.6 KiB.
  EXPECT_GT(Chunks.size(), 200000u / 2048);
  EXPECT_LT(Chunks.size(), 200000u / 256);
  EXPECT_TRUE(chunkContent(nullptr, 0).empty());
}

// Boundaries depend on the bytes only: the same content behind a different
// prefix yields the same chunks once past the first boundary.
TEST(ChunkContent, BoundariesFollowTheContent) {
  std::vector<uint8_t> Body = noise(50000, 2);
  std::vector<uint8_t> A = cat({noise(777, 3), Body}),
                       B = cat({noise(12345, 4), Body});
  auto Hashes = [](const std::vector<uint8_t> &D) {
    std::vector<uint64_t> H;
    for (const ContentChunk &C : chunkContent(D.data(), D.size()))
      H.push_back(C.Hash);
    return H;
  };
  std::vector<uint64_t> HA = Hashes(A), HB = Hashes(B);
  size_t Common = 0;
  for (uint64_t H : HA)
    Common += std::count(HB.begin(), HB.end(), H) > 0;
  EXPECT_GE(Common + 3, HA.size() - HA.size() / 20); // all but the first few
}

// Content shared by the same set of code objects forms one segment; each
// code object is compressed against exactly the segments of its content.
TEST(SharedContentIndex, OneSegmentPerSetOfCodeObjects) {
  std::vector<uint8_t> X = noise(20000, 10), Y = noise(15000, 11),
                       Z = noise(12000, 12);
  std::vector<std::vector<uint8_t>> Items = {
      cat({noise(3000, 20), X, noise(100, 21), Y}), // 0: X Y
      cat({X, noise(5000, 22), Z}),                 // 1: X Z
      cat({Z, Y}),                                  // 2: Y Z
      noise(9000, 23)};                             // 3: nothing shared
  SharedContentIndex Index;
  for (uint32_t I = 0; I < Items.size(); ++I)
    Index.add(I, Items[I].data(),
              chunkContent(Items[I].data(), Items[I].size()));
  SharedSegments S = Index.finish(5);
  ASSERT_EQ(S.size(), 3u);
  std::vector<uint8_t> Seg[3];
  for (uint32_t I = 0; I < 3; ++I)
    S.segment(I, Seg[I]);
  // In order of first sharing: X (items 0, 1), Z (1, 2), Y (0, 2); each
  // nearly whole (chunks cut by the edges stay out) and nothing else.
  EXPECT_GE(Seg[0].size(), X.size() - 2 * 4096);
  EXPECT_LE(Seg[0].size(), X.size());
  EXPECT_TRUE(contains(X, std::vector<uint8_t>(Seg[0].begin(),
                                               Seg[0].begin() + 1000)));
  EXPECT_TRUE(contains(Z, std::vector<uint8_t>(Seg[1].begin(),
                                               Seg[1].begin() + 1000)));
  EXPECT_TRUE(contains(Y, std::vector<uint8_t>(Seg[2].begin(),
                                               Seg[2].begin() + 1000)));
  EXPECT_EQ(S.itemSegments(0), (std::vector<uint32_t>{0, 2}));
  EXPECT_EQ(S.itemSegments(1), (std::vector<uint32_t>{0, 1}));
  EXPECT_EQ(S.itemSegments(2), (std::vector<uint32_t>{1, 2}));
  EXPECT_TRUE(S.itemSegments(3).empty());
  EXPECT_TRUE(S.itemSegments(4).empty());  // never added
  EXPECT_TRUE(S.itemSegments(99).empty()); // out of range
  std::vector<uint8_t> Prefix;
  S.concatenate({0, 2}, Prefix);
  EXPECT_EQ(Prefix, cat({Seg[0], Seg[2]}));
  EXPECT_EQ(S.segmentSize(1), Seg[1].size());
}

TEST(SharedContentIndex, ResultDependsOnlyOnTheSequence) {
  std::vector<uint8_t> Common = noise(30000, 30);
  std::vector<std::vector<uint8_t>> Items;
  for (uint32_t I = 0; I < 6; ++I)
    Items.push_back(I % 2 ? cat({noise(4000, 40 + I), Common})
                          : cat({Common, noise(4000, 40 + I)}));
  auto Build = [&] {
    SharedContentIndex Index;
    for (uint32_t I = 0; I < Items.size(); ++I)
      Index.add(I, Items[I].data(),
                chunkContent(Items[I].data(), Items[I].size()));
    return Index.finish(Items.size());
  };
  SharedSegments A = Build(), B = Build();
  ASSERT_EQ(A.size(), B.size());
  ASSERT_EQ(A.size(), 1u);
  std::vector<uint8_t> SA, SB;
  A.segment(0, SA);
  B.segment(0, SB);
  EXPECT_EQ(SA, SB);
  for (uint32_t I = 0; I < Items.size(); ++I)
    EXPECT_EQ(A.itemSegments(I), (std::vector<uint32_t>{0}));
}

// A code object listed twice (the same id, or the same content within one
// code object) does not make its content shared.
TEST(SharedContentIndex, RepeatsWithinOneCodeObjectAreNotShared) {
  std::vector<uint8_t> Block = noise(20000, 50);
  std::vector<uint8_t> Twice = cat({Block, Block});
  SharedContentIndex Index;
  Index.add(0, Twice.data(), chunkContent(Twice.data(), Twice.size()));
  std::vector<uint8_t> Other = noise(20000, 51);
  Index.add(1, Other.data(), chunkContent(Other.data(), Other.size()));
  EXPECT_EQ(Index.finish(2).size(), 0u);
}

TEST(SharedContentIndex, LimitsBoundTheSegments) {
  std::vector<uint8_t> Big = noise(100000, 60), Small = noise(3000, 61);
  std::vector<std::vector<uint8_t>> Items = {
      cat({Big, noise(500, 62), Small}), cat({Small, noise(700, 63), Big})};
  auto Build = [&](SharedSegmentLimits L) {
    SharedContentIndex Index(L);
    for (uint32_t I = 0; I < Items.size(); ++I)
      Index.add(I, Items[I].data(),
                chunkContent(Items[I].data(), Items[I].size()));
    return Index.finish(Items.size());
  };
  // Default: one segment for {0, 1} holding both blocks (one set).
  SharedSegments Default = Build({});
  ASSERT_EQ(Default.size(), 1u);
  EXPECT_GE(Default.segmentSize(0), 95000u);
  // Pieces of at most MaxSegmentBytes.
  SharedSegmentLimits Split;
  Split.MaxSegmentBytes = 30000;
  SharedSegments Pieces = Build(Split);
  EXPECT_GE(Pieces.size(), 4u);
  uint64_t Total = 0;
  for (uint32_t I = 0; I < Pieces.size(); ++I) {
    EXPECT_LE(Pieces.segmentSize(I), 30000u);
    Total += Pieces.segmentSize(I);
  }
  EXPECT_EQ(Total, Default.segmentSize(0));
  EXPECT_EQ(Pieces.itemSegments(0).size(), Pieces.size());
  // Nothing below MinSegmentBytes.
  SharedSegmentLimits Min;
  Min.MinSegmentBytes = 200000;
  EXPECT_EQ(Build(Min).size(), 0u);
  // Shared bytes kept, and distinct chunks indexed, are capped.
  SharedSegmentLimits Bytes;
  Bytes.MaxSharedBytes = 10000;
  SharedSegments Capped = Build(Bytes);
  ASSERT_EQ(Capped.size(), 1u);
  EXPECT_LE(Capped.segmentSize(0), 10000u);
  SharedSegmentLimits Chunks;
  Chunks.MaxChunks = 10; // the first item's first chunks only
  SharedSegments FewChunks = Build(Chunks);
  EXPECT_LE(FewChunks.size(), 1u);
  if (FewChunks.size()) {
    EXPECT_LE(FewChunks.segmentSize(0), 10u * 4096);
  }
}

} // namespace
