#include "audit/digest.h"

#include <openssl/evp.h>

#include <array>
#include <cstdlib>

namespace agentbox {
namespace {

std::string Hex(const unsigned char* data, unsigned int size) {
  static constexpr char kHex[] = "0123456789abcdef";
  std::string out;
  out.reserve(size_t{size} * 2);
  for (unsigned int i = 0; i < size; ++i) {
    out += kHex[data[i] >> 4];
    out += kHex[data[i] & 0xf];
  }
  return out;
}

// OpenSSL fails here only on allocation failure or a broken library; an audit hash that
// silently came out wrong would be worse than stopping.
[[noreturn]] void DigestFailed() { std::abort(); }

}  // namespace

struct Sha256Stream::Ctx {
  EVP_MD_CTX* md = nullptr;
  Ctx() : md(EVP_MD_CTX_new()) {
    if (md == nullptr || EVP_DigestInit_ex(md, EVP_sha256(), nullptr) != 1) DigestFailed();
  }
  ~Ctx() { EVP_MD_CTX_free(md); }
  Ctx(const Ctx&) = delete;
  Ctx& operator=(const Ctx&) = delete;
};

std::string Sha256Hex(std::string_view bytes) {
  std::array<unsigned char, EVP_MAX_MD_SIZE> md{};
  unsigned int size = 0;
  if (EVP_Digest(bytes.data(), bytes.size(), md.data(), &size, EVP_sha256(), nullptr) != 1) {
    DigestFailed();
  }
  return Hex(md.data(), size);
}

nlohmann::json ContentDigest(std::string_view bytes) {
  return {{"bytes", bytes.size()}, {"sha256", Sha256Hex(bytes)}};
}

Sha256Stream::Sha256Stream() : ctx_(std::make_unique<Ctx>()) {}
Sha256Stream::~Sha256Stream() = default;
Sha256Stream::Sha256Stream(Sha256Stream&&) noexcept = default;
Sha256Stream& Sha256Stream::operator=(Sha256Stream&&) noexcept = default;

void Sha256Stream::Update(std::string_view bytes) {
  if (!ctx_) ctx_ = std::make_unique<Ctx>();  // used after a move
  if (EVP_DigestUpdate(ctx_->md, bytes.data(), bytes.size()) != 1) DigestFailed();
  bytes_ += bytes.size();
}

std::string Sha256Stream::FinalHex() {
  if (!ctx_) ctx_ = std::make_unique<Ctx>();
  std::array<unsigned char, EVP_MAX_MD_SIZE> md{};
  unsigned int size = 0;
  if (EVP_DigestFinal_ex(ctx_->md, md.data(), &size) != 1) DigestFailed();
  if (EVP_DigestInit_ex(ctx_->md, EVP_sha256(), nullptr) != 1) DigestFailed();
  bytes_ = 0;
  return Hex(md.data(), size);
}

nlohmann::json Sha256Stream::FinalDigest() {
  const uint64_t n = bytes_;
  std::string hex = FinalHex();
  return {{"bytes", n}, {"sha256", std::move(hex)}};
}

}  // namespace agentbox
