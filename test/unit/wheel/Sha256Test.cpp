//===- Sha256Test.cpp - kpack::Sha256 (OpenSSL EVP) -----------------------===//

#include "kpack/Sha256.h"

#include "llvm/ADT/StringExtras.h"

#include <gtest/gtest.h>

#include <string>
#include <vector>

using namespace llvm;
using namespace kpack;

namespace {

std::string hex(Sha256 &S) { return toHex(S.final(), /*LowerCase=*/true); }

std::string hashOf(StringRef Text) {
  Sha256 S;
  S.update(arrayRefFromStringRef(Text));
  return hex(S);
}

// FIPS 180-4 examples (NIST's SHA-256 test vectors).
TEST(Sha256, KnownVectors) {
  EXPECT_EQ(hashOf(""),
            "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855");
  EXPECT_EQ(hashOf("abc"),
            "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad");
  EXPECT_EQ(hashOf("abcdbcdecdefdefgefghfghighijhijkijkljklmklmnlmnomnopnopq"),
            "248d6a61d20638b8e5c026930c3e6039a33ce45964ff2167f6ecedd419db06c1");
  EXPECT_EQ(hashOf("abcdefghbcdefghicdefghijdefghijkefghijklfghijklmghijklmn"
                   "hijklmnoijklmnopjklmnopqklmnopqrlmnopqrsmnopqrstnopqrstu"),
            "cf5b16a778af8380036ce59e7b0492370b249b11e8f07a51afac45037afee9d1");
  EXPECT_EQ(hashOf(std::string(1000000, 'a')),
            "cdc76e5c9914fb9281a1c7e284d73e67f1809a48a497200e046d39ccc7112cd0");
}

// Every split of the input into update calls gives the same digest, for
// lengths around the padding boundaries (55, 56, 63, 64 bytes).
TEST(Sha256, ChunkBoundaries) {
  std::string Text;
  for (int I = 0; I < 130; ++I)
    Text += static_cast<char>('a' + I % 26);
  for (size_t Len : {0, 1, 55, 56, 57, 63, 64, 65, 119, 120, 128, 130}) {
    std::string Whole = hashOf(StringRef(Text).take_front(Len));
    for (size_t Cut = 0; Cut <= Len; Cut += 7) {
      Sha256 S;
      S.update(arrayRefFromStringRef(StringRef(Text).take_front(Cut)));
      S.update(arrayRefFromStringRef(StringRef(Text).slice(Cut, Len)));
      EXPECT_EQ(hex(S), Whole) << Len << " cut at " << Cut;
    }
  }
}

// From 2^29 bytes on the length in bits needs more than 32 bits, where
// llvm::SHA256 (LLVM 22) goes wrong. Reference: sha256sum of 512 MiB of
// zeros.
TEST(Sha256, LongerThan512MiB) {
  std::vector<uint8_t> Zeros(size_t(1) << 24);
  Sha256 S;
  for (int I = 0; I < 32; ++I)
    S.update(Zeros);
  EXPECT_EQ(hex(S),
            "9acca8e8c22201155389f65abbf6bc9723edc7384ead80503839f49dcc56d767");
}

} // namespace
