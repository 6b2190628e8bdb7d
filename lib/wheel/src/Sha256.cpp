//===- Sha256.cpp - SHA-256 through OpenSSL's EVP -------------------------===//

#include "kpack/Sha256.h"

#include <openssl/evp.h>

#include <cstdio>
#include <cstdlib>

using namespace kpack;

namespace {

/// EVP fails only when memory runs out or libcrypto is broken: a program
/// error, not an input error, so it aborts with a message.
[[noreturn]] void evpFailed(const char *What) {
  std::fprintf(stderr, "kpack: OpenSSL SHA-256 %s failed\n", What);
  std::abort();
}

} // namespace

struct Sha256::Context {
  EVP_MD_CTX *Md = nullptr;
  ~Context() { EVP_MD_CTX_free(Md); }
};

Sha256::Sha256() : Ctx(std::make_unique<Context>()) {
  Ctx->Md = EVP_MD_CTX_new();
  if (!Ctx->Md || EVP_DigestInit_ex(Ctx->Md, EVP_sha256(), nullptr) != 1)
    evpFailed("initialisation");
}

Sha256::Sha256(Sha256 &&) noexcept = default;
Sha256 &Sha256::operator=(Sha256 &&) noexcept = default;
Sha256::~Sha256() = default;

void Sha256::update(llvm::ArrayRef<uint8_t> Data) {
  if (!Data.empty() &&
      EVP_DigestUpdate(Ctx->Md, Data.data(), Data.size()) != 1)
    evpFailed("update");
}

std::array<uint8_t, 32> Sha256::final() {
  std::array<uint8_t, 32> Out;
  unsigned Len = 0;
  if (EVP_DigestFinal_ex(Ctx->Md, Out.data(), &Len) != 1 || Len != Out.size())
    evpFailed("finalisation");
  return Out;
}
