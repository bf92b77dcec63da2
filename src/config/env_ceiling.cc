#include "config/env_ceiling.h"

#include <cstdint>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "config/strict_json.h"

namespace agentbox {
namespace {

constexpr const char* kReadonlyVar = "AGENTBOX_READONLY_PATHS";
constexpr const char* kReadwriteVar = "AGENTBOX_READWRITE_PATHS";
constexpr const char* kTimeoutVar = "AGENTBOX_TIMEOUT_MS";
constexpr const char* kNetworkVar = "AGENTBOX_NETWORK";
constexpr const char* kAllowDomainsVar = "AGENTBOX_ALLOW_DOMAINS";

Error BadValue(const char* var, std::string_view value, std::string_view expected) {
  return MakeError(ErrorCode::kPolicy, std::string(var) + "=" + QuoteForMessage(value) +
                                           ": expected " + std::string(expected));
}

std::vector<std::string> SplitList(std::string_view list, char separator) {
  std::vector<std::string> out;
  while (!list.empty()) {
    const size_t colon = list.find(separator);
    const std::string_view element = list.substr(0, colon);
    if (!element.empty()) out.emplace_back(element);
    if (colon == std::string_view::npos) break;
    list.remove_prefix(colon + 1);
  }
  return out;
}

Result<uint64_t> ParseTimeout(std::string_view value) {
  static constexpr std::string_view kExpected =
      "a decimal number of milliseconds, at least 1 (digits only)";
  if (value.empty()) return BadValue(kTimeoutVar, value, kExpected);
  uint64_t n = 0;
  for (const char c : value) {
    if (c < '0' || c > '9') return BadValue(kTimeoutVar, value, kExpected);
    const auto digit = static_cast<uint64_t>(c - '0');
    if (n > (UINT64_MAX - digit) / 10) {
      return BadValue(kTimeoutVar, value, "a number of milliseconds that fits in 64 bits");
    }
    n = n * 10 + digit;
  }
  if (n == 0) return BadValue(kTimeoutVar, value, kExpected);
  return n;
}

}  // namespace

Result<std::optional<PolicyDocument>> CeilingFromEnvironment(
    const std::function<const char*(const char*)>& getenv_fn) {
  const char* readonly = getenv_fn(kReadonlyVar);
  const char* readwrite = getenv_fn(kReadwriteVar);
  const char* timeout = getenv_fn(kTimeoutVar);
  const char* network = getenv_fn(kNetworkVar);
  if (readonly == nullptr && readwrite == nullptr && timeout == nullptr && network == nullptr &&
      getenv_fn(kAllowDomainsVar) == nullptr) {
    return std::optional<PolicyDocument>();
  }

  PolicyDocument doc;
  if (readonly != nullptr) doc.filesystem.readonly = SplitList(readonly, ':');
  if (readwrite != nullptr) doc.filesystem.readwrite = SplitList(readwrite, ':');
  if (timeout != nullptr) {
    auto ms = ParseTimeout(timeout);
    if (!ms) return ms.error();
    doc.timeout_ms = *ms;
  }
  if (network != nullptr) {
    const std::string_view mode = network;
    if (mode == "block") {
      doc.network = NetworkWithMode(NetworkMode::kBlock);
    } else if (mode == "allow") {
      doc.network = NetworkWithMode(NetworkMode::kAllow);
    } else if (mode == "proxy") {
      doc.network = NetworkWithMode(NetworkMode::kProxy);
      if (const char* domains = getenv_fn(kAllowDomainsVar)) {
        doc.network->allow_domains = SplitList(domains, ',');
      }
    } else {
      return BadValue(kNetworkVar, mode, "\"block\", \"proxy\" or \"allow\"");
    }
  }
  if (getenv_fn(kAllowDomainsVar) != nullptr &&
      (!doc.network || doc.network->mode != NetworkMode::kProxy)) {
    return MakeError(ErrorCode::kPolicy,
                     std::string(kAllowDomainsVar) + " needs " + kNetworkVar + "=proxy");
  }
  return std::optional<PolicyDocument>(std::move(doc));
}

}  // namespace agentbox
