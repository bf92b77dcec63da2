#include "audit/digest.h"

#include <algorithm>
#include <array>
#include <cstdint>
#include <cstring>

namespace agentbox {
namespace {

// SHA-256 as specified in FIPS 180-4. In-tree rather than from libcrypto: the audit log
// needs nothing else from OpenSSL, and linking libcrypto costs every run of agentbox start-up
// time (its constructors and ~17k relocations; bench/results.md). Checked against the FIPS
// 180-4 / NIST CAVP vectors in tests/unit/audit_test.cc.
constexpr std::array<uint32_t, 64> kRound = {
    0x428a2f98, 0x71374491, 0xb5c0fbcf, 0xe9b5dba5, 0x3956c25b, 0x59f111f1, 0x923f82a4, 0xab1c5ed5,
    0xd807aa98, 0x12835b01, 0x243185be, 0x550c7dc3, 0x72be5d74, 0x80deb1fe, 0x9bdc06a7, 0xc19bf174,
    0xe49b69c1, 0xefbe4786, 0x0fc19dc6, 0x240ca1cc, 0x2de92c6f, 0x4a7484aa, 0x5cb0a9dc, 0x76f988da,
    0x983e5152, 0xa831c66d, 0xb00327c8, 0xbf597fc7, 0xc6e00bf3, 0xd5a79147, 0x06ca6351, 0x14292967,
    0x27b70a85, 0x2e1b2138, 0x4d2c6dfc, 0x53380d13, 0x650a7354, 0x766a0abb, 0x81c2c92e, 0x92722c85,
    0xa2bfe8a1, 0xa81a664b, 0xc24b8b70, 0xc76c51a3, 0xd192e819, 0xd6990624, 0xf40e3585, 0x106aa070,
    0x19a4c116, 0x1e376c08, 0x2748774c, 0x34b0bcb5, 0x391c0cb3, 0x4ed8aa4a, 0x5b9cca4f, 0x682e6ff3,
    0x748f82ee, 0x78a5636f, 0x84c87814, 0x8cc70208, 0x90befffa, 0xa4506ceb, 0xbef9a3f7, 0xc67178f2};

constexpr std::array<uint32_t, 8> kInitial = {0x6a09e667, 0xbb67ae85, 0x3c6ef372, 0xa54ff53a,
                                              0x510e527f, 0x9b05688c, 0x1f83d9ab, 0x5be0cd19};

constexpr uint32_t Rotr(uint32_t x, int n) { return (x >> n) | (x << (32 - n)); }

void Compress(std::array<uint32_t, 8>& state, const unsigned char* block) {
  uint32_t w[64];
  for (size_t i = 0; i < 16; ++i) {
    w[i] = (uint32_t{block[4 * i]} << 24) | (uint32_t{block[4 * i + 1]} << 16) |
           (uint32_t{block[4 * i + 2]} << 8) | uint32_t{block[4 * i + 3]};
  }
  for (size_t i = 16; i < 64; ++i) {
    const uint32_t s0 = Rotr(w[i - 15], 7) ^ Rotr(w[i - 15], 18) ^ (w[i - 15] >> 3);
    const uint32_t s1 = Rotr(w[i - 2], 17) ^ Rotr(w[i - 2], 19) ^ (w[i - 2] >> 10);
    w[i] = w[i - 16] + s0 + w[i - 7] + s1;
  }
  uint32_t a = state[0], b = state[1], c = state[2], d = state[3];
  uint32_t e = state[4], f = state[5], g = state[6], h = state[7];
  for (size_t i = 0; i < 64; ++i) {
    const uint32_t t1 =
        h + (Rotr(e, 6) ^ Rotr(e, 11) ^ Rotr(e, 25)) + ((e & f) ^ (~e & g)) + kRound[i] + w[i];
    const uint32_t t2 = (Rotr(a, 2) ^ Rotr(a, 13) ^ Rotr(a, 22)) + ((a & b) ^ (a & c) ^ (b & c));
    h = g;
    g = f;
    f = e;
    e = d + t1;
    d = c;
    c = b;
    b = a;
    a = t1 + t2;
  }
  state[0] += a;
  state[1] += b;
  state[2] += c;
  state[3] += d;
  state[4] += e;
  state[5] += f;
  state[6] += g;
  state[7] += h;
}

std::string Hex(const std::array<unsigned char, 32>& digest) {
  static constexpr char kHex[] = "0123456789abcdef";
  std::string out;
  out.reserve(digest.size() * 2);
  for (const unsigned char byte : digest) {
    out += kHex[byte >> 4];
    out += kHex[byte & 0xf];
  }
  return out;
}

// The incremental hash: Update any number of times, then Final (which starts it over).
class Sha256 {
 public:
  void Update(const unsigned char* data, size_t n) {
    if (n == 0) return;  // data may be null
    total_ += n;
    if (used_ > 0) {
      const size_t take = std::min(n, block_.size() - used_);
      std::memcpy(block_.data() + used_, data, take);
      used_ += take;
      data += take;
      n -= take;
      if (used_ < block_.size()) return;
      Compress(state_, block_.data());
      used_ = 0;
    }
    for (; n >= block_.size(); data += block_.size(), n -= block_.size()) Compress(state_, data);
    if (n > 0) std::memcpy(block_.data(), data, n);
    used_ = n;
  }

  std::array<unsigned char, 32> Final() {
    const uint64_t bits = total_ * 8;
    block_[used_++] = 0x80;
    if (used_ > 56) {
      std::memset(block_.data() + used_, 0, block_.size() - used_);
      Compress(state_, block_.data());
      used_ = 0;
    }
    std::memset(block_.data() + used_, 0, 56 - used_);
    for (size_t i = 0; i < 8; ++i) {
      block_[56 + i] = static_cast<unsigned char>(bits >> (56 - 8 * i));
    }
    Compress(state_, block_.data());
    std::array<unsigned char, 32> out{};
    for (size_t i = 0; i < 8; ++i) {
      for (size_t j = 0; j < 4; ++j) {
        out[4 * i + j] = static_cast<unsigned char>(state_[i] >> (24 - 8 * j));
      }
    }
    *this = Sha256{};
    return out;
  }

 private:
  std::array<uint32_t, 8> state_ = kInitial;
  std::array<unsigned char, 64> block_{};
  size_t used_ = 0;     // bytes waiting in `block_`
  uint64_t total_ = 0;  // bytes hashed so far
};

const unsigned char* Bytes(std::string_view s) {
  return reinterpret_cast<const unsigned char*>(s.data());
}

}  // namespace

struct Sha256Stream::Ctx {
  Sha256 sha;
};

std::string Sha256Hex(std::string_view bytes) {
  Sha256 sha;
  sha.Update(Bytes(bytes), bytes.size());
  return Hex(sha.Final());
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
  ctx_->sha.Update(Bytes(bytes), bytes.size());
  bytes_ += bytes.size();
}

std::string Sha256Stream::FinalHex() {
  if (!ctx_) ctx_ = std::make_unique<Ctx>();
  bytes_ = 0;
  return Hex(ctx_->sha.Final());
}

nlohmann::json Sha256Stream::FinalDigest() {
  const uint64_t n = bytes_;
  std::string hex = FinalHex();
  return {{"bytes", n}, {"sha256", std::move(hex)}};
}

}  // namespace agentbox
