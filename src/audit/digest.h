// SHA-256 for the audit log: the hash chain and the size + digest that stands in for file
// contents and program output (which are never logged themselves).
//
//   Sha256Hex("abc")          // "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad"
//   ContentDigest(contents)   // {"bytes": 3, "sha256": "ba78..."}
//   Sha256Stream s;  s.Update(chunk1);  s.Update(chunk2);  s.FinalHex();
#pragma once

#include <cstdint>
#include <memory>
#include <nlohmann/json.hpp>
#include <string>
#include <string_view>

namespace agentbox {

// Lower-case hex of SHA-256(bytes), 64 characters.
[[nodiscard]] std::string Sha256Hex(std::string_view bytes);

// {"bytes": N, "sha256": "<hex>"}: how the audit log records content it must not contain.
[[nodiscard]] nlohmann::json ContentDigest(std::string_view bytes);

// Incremental SHA-256, for output that arrives in chunks. Move-only.
class Sha256Stream {
 public:
  Sha256Stream();
  ~Sha256Stream();
  Sha256Stream(Sha256Stream&&) noexcept;
  Sha256Stream& operator=(Sha256Stream&&) noexcept;
  Sha256Stream(const Sha256Stream&) = delete;
  Sha256Stream& operator=(const Sha256Stream&) = delete;

  void Update(std::string_view bytes);
  [[nodiscard]] uint64_t bytes() const { return bytes_; }
  // The digest of everything passed to Update; the stream then starts over, empty.
  [[nodiscard]] std::string FinalHex();
  // {"bytes": N, "sha256": hex} of everything so far; the stream then starts over, empty.
  [[nodiscard]] nlohmann::json FinalDigest();

 private:
  struct Ctx;
  std::unique_ptr<Ctx> ctx_;
  uint64_t bytes_ = 0;
};

}  // namespace agentbox
