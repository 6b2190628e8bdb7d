//===- ContentHash.cpp - A fast 64-bit content hash -----------------------===//

#include "kpack/ContentHash.h"

#include <cstring>

uint64_t kpack::contentHash(const uint8_t *Data, size_t Size) {
  constexpr uint64_t K1 = 0x9E3779B185EBCA87ULL, K2 = 0xC2B2AE3D27D4EB4FULL;
  auto Rotl = [](uint64_t V, unsigned R) { return (V << R) | (V >> (64 - R)); };
  uint64_t Lane[4] = {K1, K2, K1 ^ K2, ~K1};
  size_t I = 0;
  for (; I + 32 <= Size; I += 32)
    for (unsigned J = 0; J < 4; ++J) {
      uint64_t W;
      std::memcpy(&W, Data + I + 8 * J, 8);
      Lane[J] = Rotl(Lane[J] + W * K2, 31) * K1;
    }
  uint64_t H = static_cast<uint64_t>(Size) * K1;
  for (unsigned J = 0; J < 4; ++J)
    H = (H ^ Rotl(Lane[J], 27)) * K1 + K2;
  for (; I < Size; ++I)
    H = (H ^ Data[I]) * 0x100000001B3ULL;
  H ^= H >> 33;
  H *= 0xFF51AFD7ED558CCDULL;
  H ^= H >> 33;
  H *= 0xC4CEB9FE1A85EC53ULL;
  H ^= H >> 33;
  return H;
}
