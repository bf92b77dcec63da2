// Strict JSON: parse untrusted JSON text and read typed fields from it, with errors that name
// the source and the JSON-pointer location of the offending value. Shared by the policy,
// MXC config and JSON-RPC parsers.
//
//   auto json = ParseStrictJson(text, "policy.json");   // duplicate keys are errors
//   if (!json) return json.error();
//   auto root = StrictObject::Open(*json, "", {"timeoutMs", "network"});
//   if (!root) return WithSource(root.error(), "policy.json");
//   auto timeout = root->OptionalUint64("timeoutMs");    // nullopt if absent
//   // errors read e.g. "/timeoutMs: expected a non-negative integer, got string"
//
// Every error has code kPolicy. Nothing here throws (allocation failure aside).
#pragma once

#include <cstddef>
#include <cstdint>
#include <initializer_list>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "base/result.h"

namespace agentbox {

inline constexpr size_t kMaxJsonBytes = size_t{4} << 20;  // 4 MiB
inline constexpr size_t kMaxJsonDepth = 64;               // nested objects/arrays

// Parses `text` as exactly one JSON value. Errors (kPolicy, context starting with
// "<source>: "): invalid syntax ("invalid JSON at byte N: ..."), a key repeated in one
// object at any depth ("duplicate key \"k\" at /a/b"), nesting deeper than kMaxJsonDepth,
// input larger than kMaxJsonBytes.
[[nodiscard]] Result<nlohmann::json> ParseStrictJson(std::string_view text,
                                                     std::string_view source);

// Serializes without throwing: invalid UTF-8 (e.g. a non-UTF-8 canonical path) is replaced
// by U+FFFD. indent < 0 gives one line.
[[nodiscard]] std::string DumpJson(const nlohmann::json& value, int indent = -1);

// `s` in double quotes with quotes, backslashes and every byte outside printable ASCII
// escaped, so any user-supplied text is safe to put in an error message.
[[nodiscard]] std::string QuoteForMessage(std::string_view s);

// JSON-pointer locations (RFC 6901): ChildLocation("/fs", "a/b") == "/fs/a~1b",
// ChildLocation("/fs/readonly", 2) == "/fs/readonly/2". The root is "".
[[nodiscard]] std::string ChildLocation(std::string_view parent, std::string_view key);
[[nodiscard]] std::string ChildLocation(std::string_view parent, size_t index);
// How a location reads in a message: the pointer itself, or "top level" for the root.
[[nodiscard]] std::string LocationName(std::string_view location);

// Prefixes an error's context with "<source>: ".
[[nodiscard]] Error WithSource(Error error, std::string_view source);

// Typed readers of one value at `location`. Errors read "<location>: expected ..., got ...".
[[nodiscard]] Result<std::string> ReadString(const nlohmann::json& value,
                                             std::string_view location);
// A string that is not empty and holds no NUL byte (paths, domains, names).
[[nodiscard]] Result<std::string> ReadNonEmptyString(const nlohmann::json& value,
                                                     std::string_view location);
// An integer in [0, UINT64_MAX] written without fraction or exponent; floats, negatives,
// booleans and numbers too large for 64 bits are errors.
[[nodiscard]] Result<uint64_t> ReadUint64(const nlohmann::json& value, std::string_view location);
[[nodiscard]] Result<bool> ReadBool(const nlohmann::json& value, std::string_view location);
// An array of strings; an element error names its index ("/fs/readonly/2: ...").
[[nodiscard]] Result<std::vector<std::string>> ReadStringArray(const nlohmann::json& value,
                                                               std::string_view location);
// Like ReadStringArray, each element checked as ReadNonEmptyString.
[[nodiscard]] Result<std::vector<std::string>> ReadNonEmptyStringArray(const nlohmann::json& value,
                                                                       std::string_view location);

// A JSON object checked against a fixed set of field names. Borrows the json value: it must
// outlive the StrictObject.
class StrictObject {
 public:
  // Fails unless `value` is an object whose every key is in `allowed`
  // ("/filesystem: unknown field \"x\" (expected one of: readonly, readwrite, denied)").
  [[nodiscard]] static Result<StrictObject> Open(const nlohmann::json& value, std::string location,
                                                 std::initializer_list<std::string_view> allowed);

  [[nodiscard]] const std::string& location() const { return location_; }
  [[nodiscard]] std::string FieldLocation(std::string_view key) const {
    return ChildLocation(location_, key);
  }
  // The member, or nullptr if absent. A present null is returned (and is a type error for
  // every typed getter below).
  [[nodiscard]] const nlohmann::json* Find(std::string_view key) const;
  [[nodiscard]] bool Has(std::string_view key) const { return Find(key) != nullptr; }
  // The member, or an error "<location>: missing required field \"key\"".
  [[nodiscard]] Result<const nlohmann::json*> Require(std::string_view key) const;

  // Typed members. The plain forms require the field; Optional* give nullopt if absent.
  [[nodiscard]] Result<std::string> String(std::string_view key) const;
  [[nodiscard]] Result<std::optional<std::string>> OptionalString(std::string_view key) const;
  [[nodiscard]] Result<uint64_t> Uint64(std::string_view key) const;
  [[nodiscard]] Result<std::optional<uint64_t>> OptionalUint64(std::string_view key) const;
  [[nodiscard]] Result<std::optional<bool>> OptionalBool(std::string_view key) const;
  [[nodiscard]] Result<std::vector<std::string>> StringArray(std::string_view key) const;
  // Absent gives an empty vector.
  [[nodiscard]] Result<std::vector<std::string>> OptionalStringArray(std::string_view key) const;

 private:
  StrictObject(const nlohmann::json* value, std::string location)
      : value_(value), location_(std::move(location)) {}

  const nlohmann::json* value_;
  std::string location_;
};

}  // namespace agentbox
