//===- Sha256.cpp - SHA-256 (FIPS 180-4) ----------------------------------===//

#include "kpack/Sha256.h"

#include "llvm/Support/Endian.h"

#include <cstring>

using namespace kpack;

namespace {

// The first 32 bits of the fractional parts of the cube roots of the first
// 64 primes (FIPS 180-4, 4.2.2).
constexpr uint32_t K[64] = {
    0x428a2f98, 0x71374491, 0xb5c0fbcf, 0xe9b5dba5, 0x3956c25b, 0x59f111f1,
    0x923f82a4, 0xab1c5ed5, 0xd807aa98, 0x12835b01, 0x243185be, 0x550c7dc3,
    0x72be5d74, 0x80deb1fe, 0x9bdc06a7, 0xc19bf174, 0xe49b69c1, 0xefbe4786,
    0x0fc19dc6, 0x240ca1cc, 0x2de92c6f, 0x4a7484aa, 0x5cb0a9dc, 0x76f988da,
    0x983e5152, 0xa831c66d, 0xb00327c8, 0xbf597fc7, 0xc6e00bf3, 0xd5a79147,
    0x06ca6351, 0x14292967, 0x27b70a85, 0x2e1b2138, 0x4d2c6dfc, 0x53380d13,
    0x650a7354, 0x766a0abb, 0x81c2c92e, 0x92722c85, 0xa2bfe8a1, 0xa81a664b,
    0xc24b8b70, 0xc76c51a3, 0xd192e819, 0xd6990624, 0xf40e3585, 0x106aa070,
    0x19a4c116, 0x1e376c08, 0x2748774c, 0x34b0bcb5, 0x391c0cb3, 0x4ed8aa4a,
    0x5b9cca4f, 0x682e6ff3, 0x748f82ee, 0x78a5636f, 0x84c87814, 0x8cc70208,
    0x90befffa, 0xa4506ceb, 0xbef9a3f7, 0xc67178f2};

inline uint32_t rotr(uint32_t X, unsigned N) { return (X >> N) | (X << (32 - N)); }

} // namespace

Sha256::Sha256()
    // The first 32 bits of the fractional parts of the square roots of the
    // first 8 primes (FIPS 180-4, 5.3.3).
    : H{0x6a09e667, 0xbb67ae85, 0x3c6ef372, 0xa54ff53a, 0x510e527f, 0x9b05688c,
        0x1f83d9ab, 0x5be0cd19} {}

void Sha256::block(const uint8_t *P) {
  uint32_t W[64];
  for (int T = 0; T < 16; ++T)
    W[T] = llvm::support::endian::read32be(P + 4 * T);
  for (int T = 16; T < 64; ++T) {
    uint32_t S0 = rotr(W[T - 15], 7) ^ rotr(W[T - 15], 18) ^ (W[T - 15] >> 3);
    uint32_t S1 = rotr(W[T - 2], 17) ^ rotr(W[T - 2], 19) ^ (W[T - 2] >> 10);
    W[T] = W[T - 16] + S0 + W[T - 7] + S1;
  }
  uint32_t A = H[0], B = H[1], C = H[2], D = H[3], E = H[4], F = H[5],
           G = H[6], Hh = H[7];
  for (int T = 0; T < 64; ++T) {
    uint32_t S1 = rotr(E, 6) ^ rotr(E, 11) ^ rotr(E, 25);
    uint32_t Ch = (E & F) ^ (~E & G);
    uint32_t T1 = Hh + S1 + Ch + K[T] + W[T];
    uint32_t S0 = rotr(A, 2) ^ rotr(A, 13) ^ rotr(A, 22);
    uint32_t Maj = (A & B) ^ (A & C) ^ (B & C);
    uint32_t T2 = S0 + Maj;
    Hh = G;
    G = F;
    F = E;
    E = D + T1;
    D = C;
    C = B;
    B = A;
    A = T1 + T2;
  }
  H[0] += A;
  H[1] += B;
  H[2] += C;
  H[3] += D;
  H[4] += E;
  H[5] += F;
  H[6] += G;
  H[7] += Hh;
}

void Sha256::update(llvm::ArrayRef<uint8_t> Data) {
  Length += Data.size();
  const uint8_t *P = Data.data();
  size_t N = Data.size();
  if (Buffered) {
    size_t Take = std::min(N, Buffer.size() - Buffered);
    std::memcpy(Buffer.data() + Buffered, P, Take);
    Buffered += Take;
    P += Take;
    N -= Take;
    if (Buffered < Buffer.size())
      return;
    block(Buffer.data());
    Buffered = 0;
  }
  for (; N >= 64; P += 64, N -= 64)
    block(P);
  std::memcpy(Buffer.data(), P, N);
  Buffered = N;
}

std::array<uint8_t, 32> Sha256::final() {
  // Padding: 0x80, zeros up to 56 mod 64, the length in bits (64-bit BE).
  uint64_t Bits = Length * 8;
  uint8_t Pad[72] = {0x80};
  size_t PadLen = (Buffered < 56 ? 56 : 120) - Buffered;
  llvm::support::endian::write64be(Pad + PadLen, Bits);
  update(llvm::ArrayRef<uint8_t>(Pad, PadLen + 8));
  std::array<uint8_t, 32> Out;
  for (int I = 0; I < 8; ++I)
    llvm::support::endian::write32be(Out.data() + 4 * I, H[I]);
  return Out;
}
