// Standard base64 (RFC 4648 §4, with padding).
//
//   Base64Encode("hi")        -> "aGk="
//   Base64Decode("aGk=")      -> "hi"
//   Base64Decode("aGk")       -> nullopt (strict: padding, alphabet, no whitespace)
#pragma once

#include <optional>
#include <string>
#include <string_view>

namespace agentbox {

[[nodiscard]] std::string Base64Encode(std::string_view bytes);
// Strict: the length is a multiple of 4, only the standard alphabet, '=' only as final
// padding, and the unused bits of the last character are zero.
[[nodiscard]] std::optional<std::string> Base64Decode(std::string_view text);

}  // namespace agentbox
