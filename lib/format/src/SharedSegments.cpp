//===- SharedSegments.cpp - Content shared across code objects ------------===//

#include "kpack/SharedSegments.h"

#include "kpack/ContentHash.h"

#include <algorithm>
#include <array>
#include <cstring>
#include <unordered_map>

using namespace kpack;

namespace {

constexpr size_t MinChunk = 64;
// Chunk sizes fit the 13 bits the index keeps of them.
constexpr size_t MaxChunk = 4096;
static_assert(MaxChunk < (1u << 13), "chunk size must fit the index key");
/// A boundary where the top 9 bits of the rolling hash are zero: one chunk
/// every 512 bytes past the minimum on average. The top bits depend on the
/// last 64 bytes, so boundaries resynchronise within 64 bytes after an edit.
constexpr uint64_t BoundaryMask = ~uint64_t(0) << (64 - 9);

/// The gear table: one pseudo-random word per byte value (splitmix64 from a
/// fixed seed), fixed so that chunking is the same in every build.
const std::array<uint64_t, 256> &gearTable() {
  static const std::array<uint64_t, 256> Table = [] {
    std::array<uint64_t, 256> T{};
    uint64_t X = 0x6b7061636b2d6373ULL; // "kpack-cs"
    for (uint64_t &G : T) {
      X += 0x9E3779B97F4A7C15ULL;
      uint64_t Z = X;
      Z = (Z ^ (Z >> 30)) * 0xBF58476D1CE4E5B9ULL;
      Z = (Z ^ (Z >> 27)) * 0x94D049BB133111EBULL;
      G = Z ^ (Z >> 31);
    }
    return T;
  }();
  return Table;
}

constexpr uint32_t NotStored = UINT32_MAX;
constexpr uint32_t NoMember = UINT32_MAX;

} // namespace

std::vector<ContentChunk> kpack::chunkContent(const uint8_t *Data,
                                              size_t Size) {
  const std::array<uint64_t, 256> &Gear = gearTable();
  std::vector<ContentChunk> Chunks;
  Chunks.reserve(Size / 512 + 1);
  auto Emit = [&](size_t Start, size_t End) {
    Chunks.push_back({contentHash(Data + Start, End - Start), Start,
                      static_cast<uint32_t>(End - Start)});
  };
  size_t Start = 0;
  uint64_t H = 0;
  for (size_t I = 0; I < Size; ++I) {
    H = (H << 1) + Gear[Data[I]];
    size_t Length = I + 1 - Start;
    if ((Length >= MinChunk && (H & BoundaryMask) == 0) || Length >= MaxChunk) {
      Emit(Start, I + 1);
      Start = I + 1;
      H = 0;
    }
  }
  if (Start < Size)
    Emit(Start, Size);
  return Chunks;
}

void SharedSegments::segment(uint32_t S, std::vector<uint8_t> &Out) const {
  Out.clear();
  concatenate({S}, Out);
}

void SharedSegments::concatenate(const std::vector<uint32_t> &List,
                                 std::vector<uint8_t> &Out) const {
  uint64_t Total = 0;
  for (uint32_t S : List)
    Total += Sizes[S];
  Out.resize(Total);
  uint8_t *At = Out.data();
  for (uint32_t S : List)
    for (const Range &R : Segments[S]) {
      std::memcpy(At, Content.data() + R.Offset, R.Size);
      At += R.Size;
    }
}

const std::vector<uint32_t> &SharedSegments::itemSegments(size_t I) const {
  static const std::vector<uint32_t> None;
  return I < ItemSegments.size() ? ItemSegments[I] : None;
}

void SharedSegments::releaseContent() { std::vector<uint8_t>().swap(Content); }

//===----------------------------------------------------------------------===//
// SharedContentIndex
//===----------------------------------------------------------------------===//

struct SharedContentIndex::Impl {
  SharedSegmentLimits Limits;

  /// One distinct chunk, 16 bytes. Key 0 marks an empty slot; real keys
  /// are never 0 since chunks are never empty.
  struct Slot {
    uint64_t Key = 0;   ///< chunkKey(): 51 bits of hash, 13 bits of size
    uint32_t Set = 0;   ///< the items containing the chunk (a SetNode)
    uint32_t Store = NotStored; ///< offset of its bytes in Store, once shared
  };
  static uint64_t chunkKey(const ContentChunk &C) {
    return (C.Hash << 13) | C.Size;
  }
  static uint32_t sizeOf(uint64_t Key) { return uint32_t(Key & 0x1FFF); }
  std::vector<Slot> Table; ///< open addressing, power-of-two size
  uint64_t Used = 0;

  /// Sets of items as a tree: a set is its parent plus one member, added in
  /// the order items were added. Node 0 is the empty set.
  struct SetNode {
    uint32_t Parent;
    uint32_t Member;
  };
  std::vector<SetNode> Sets{{0, NoMember}};
  std::unordered_map<uint64_t, uint32_t> Children; // (parent, member) -> node

  std::vector<uint8_t> Store; ///< bytes of shared chunks, in sharing order

  uint32_t extend(uint32_t Set, uint32_t Member) {
    uint64_t Key = (uint64_t(Set) << 32) | Member;
    auto [It, Inserted] =
        Children.emplace(Key, static_cast<uint32_t>(Sets.size()));
    if (Inserted)
      Sets.push_back({Set, Member});
    return It->second;
  }

  void grow() {
    std::vector<Slot> Old;
    Old.swap(Table);
    Table.assign(Old.empty() ? size_t(1) << 16 : Old.size() * 2, Slot());
    for (const Slot &S : Old)
      if (S.Key)
        *find(S.Key) = S;
  }

  /// The slot of Key, or the empty slot where it would go.
  Slot *find(uint64_t Key) {
    size_t Mask = Table.size() - 1;
    // The low 13 bits are the size: probe from the hash bits.
    for (size_t I = size_t(Key >> 13) & Mask;; I = (I + 1) & Mask)
      if (Table[I].Key == Key || Table[I].Key == 0)
        return &Table[I];
  }
};

SharedContentIndex::SharedContentIndex(SharedSegmentLimits Limits)
    : P(std::make_unique<Impl>()) {
  P->Limits = Limits;
  P->grow();
}
SharedContentIndex::~SharedContentIndex() = default;
SharedContentIndex::SharedContentIndex(SharedContentIndex &&) noexcept =
    default;
SharedContentIndex &
SharedContentIndex::operator=(SharedContentIndex &&) noexcept = default;

void SharedContentIndex::add(uint32_t Item, const uint8_t *Data,
                             const std::vector<ContentChunk> &Chunks) {
  Impl &I = *P;
  for (const ContentChunk &C : Chunks) {
    uint64_t Key = Impl::chunkKey(C);
    Impl::Slot *S = I.find(Key);
    if (!S->Key) {
      if (I.Used >= I.Limits.MaxChunks)
        continue; // full: content first seen from now on is not shared
      if ((I.Used + 1) * 4 > I.Table.size() * 3) {
        I.grow();
        S = I.find(Key);
      }
      S->Key = Key;
      S->Set = I.extend(0, Item);
      ++I.Used;
      continue;
    }
    // Two different chunks with one key only cost ratio: an item compressed
    // against bytes it does not contain still decodes.
    if (I.Sets[S->Set].Member == Item)
      continue;
    S->Set = I.extend(S->Set, Item);
    if (S->Store == NotStored &&
        I.Store.size() + C.Size <= I.Limits.MaxSharedBytes &&
        I.Store.size() + C.Size <= NotStored) {
      S->Store = static_cast<uint32_t>(I.Store.size());
      I.Store.insert(I.Store.end(), Data + C.Offset, Data + C.Offset + C.Size);
    }
  }
}

SharedSegments SharedContentIndex::finish(size_t NumItems) {
  Impl &I = *P;
  struct Stored {
    uint32_t Store, Size, Set;
  };
  std::vector<Stored> Chunks;
  for (const Impl::Slot &S : I.Table)
    if (S.Key && S.Store != NotStored)
      Chunks.push_back({S.Store, Impl::sizeOf(S.Key), S.Set});
  std::vector<Impl::Slot>().swap(I.Table);
  // Store order is the order in which chunks became shared: deterministic,
  // and it keeps content that was adjacent in a code object together.
  std::sort(Chunks.begin(), Chunks.end(),
            [](const Stored &A, const Stored &B) { return A.Store < B.Store; });

  // One group per set of items, in order of first appearance.
  struct Group {
    uint32_t Set;
    uint64_t Bytes = 0;
    std::vector<const Stored *> Chunks;
  };
  std::vector<Group> Groups;
  std::unordered_map<uint32_t, size_t> GroupOfSet;
  for (const Stored &C : Chunks) {
    auto [It, Inserted] = GroupOfSet.emplace(C.Set, Groups.size());
    if (Inserted)
      Groups.push_back({C.Set, 0, {}});
    Groups[It->second].Bytes += C.Size;
    Groups[It->second].Chunks.push_back(&C);
  }

  SharedSegments Result;
  Result.ItemSegments.resize(NumItems);
  std::vector<uint32_t> Members;
  for (const Group &G : Groups) {
    if (G.Bytes < I.Limits.MinSegmentBytes)
      continue;
    Members.clear();
    for (uint32_t N = G.Set; N != 0; N = I.Sets[N].Parent)
      Members.push_back(I.Sets[N].Member);
    // Pieces of at most MaxSegmentBytes, cut at chunk boundaries; chunks
    // adjacent in the store form one range.
    for (size_t C = 0; C < G.Chunks.size();) {
      std::vector<SharedSegments::Range> Ranges;
      uint64_t Size = 0;
      do {
        const Stored &S = *G.Chunks[C++];
        if (!Ranges.empty() &&
            Ranges.back().Offset + Ranges.back().Size == S.Store)
          Ranges.back().Size += S.Size;
        else
          Ranges.push_back({S.Store, S.Size});
        Size += S.Size;
      } while (C < G.Chunks.size() &&
               Size + G.Chunks[C]->Size <= I.Limits.MaxSegmentBytes);
      uint32_t Index = static_cast<uint32_t>(Result.Segments.size());
      Result.Segments.push_back(std::move(Ranges));
      Result.Sizes.push_back(Size);
      for (uint32_t M : Members)
        if (M < NumItems)
          Result.ItemSegments[M].push_back(Index);
    }
  }
  Result.Content.swap(I.Store);
  return Result;
}
