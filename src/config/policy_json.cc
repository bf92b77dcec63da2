#include "config/policy_json.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <exception>
#include <optional>
#include <utility>

#include "base/fd.h"
#include "config/strict_json.h"

namespace agentbox {
namespace {

using nlohmann::json;

Error PolicyError(std::string context) { return MakeError(ErrorCode::kPolicy, std::move(context)); }

// An optional integer field that, when present, must be at least 1.
Result<std::optional<uint64_t>> OptionalPositive(const StrictObject& object, std::string_view key) {
  auto value = object.OptionalUint64(key);
  if (value && *value && **value == 0) {
    return PolicyError(object.FieldLocation(key) + ": " + std::string(key) + " must be at least 1");
  }
  return value;
}

Status ParseFilesystem(const json& value, FilesystemRules& out) {
  auto fs = StrictObject::Open(value, "/filesystem", {"readonly", "readwrite", "denied"});
  if (!fs) return fs.error();
  struct List {
    const char* key;
    std::vector<std::string>* out;
  };
  for (const List& list : {List{"readonly", &out.readonly}, List{"readwrite", &out.readwrite},
                           List{"denied", &out.denied}}) {
    const json* member = fs->Find(list.key);
    if (member == nullptr) continue;
    auto paths = ReadNonEmptyStringArray(*member, fs->FieldLocation(list.key));
    if (!paths) return paths.error();
    *list.out = std::move(*paths);
  }
  return Status();
}

Result<Network> ParseNetwork(const json& value) {
  static constexpr std::string_view kLocation = "/network";
  if (value.is_string()) {
    const auto& mode = value.get_ref<const json::string_t&>();
    if (mode == "block") return NetworkWithMode(NetworkMode::kBlock);
    if (mode == "allow") return NetworkWithMode(NetworkMode::kAllow);
    return PolicyError(
        std::string(kLocation) + ": unknown network mode " + QuoteForMessage(mode) +
        " (expected \"block\", \"allow\" or {\"proxy\": {\"allowDomains\": [...]}})");
  }
  if (!value.is_object()) {
    return PolicyError(std::string(kLocation) +
                       ": expected \"block\", \"allow\" or {\"proxy\": {...}}, got " +
                       value.type_name());
  }
  auto network = StrictObject::Open(value, std::string(kLocation), {"proxy"});
  if (!network) return network.error();
  auto proxy_value = network->Require("proxy");
  if (!proxy_value) return proxy_value.error();
  auto proxy = StrictObject::Open(**proxy_value, network->FieldLocation("proxy"),
                                  {"allowDomains", "denyDomains", "allowCidrs", "resolve"});
  if (!proxy) return proxy.error();

  Network out = NetworkWithMode(NetworkMode::kProxy);
  auto allow = proxy->Require("allowDomains");
  if (!allow) return allow.error();
  auto allow_domains = ReadNonEmptyStringArray(**allow, proxy->FieldLocation("allowDomains"));
  if (!allow_domains) return allow_domains.error();
  out.allow_domains = std::move(*allow_domains);
  if (const json* deny = proxy->Find("denyDomains")) {
    auto deny_domains = ReadNonEmptyStringArray(*deny, proxy->FieldLocation("denyDomains"));
    if (!deny_domains) return deny_domains.error();
    out.deny_domains = std::move(*deny_domains);
  }
  if (const json* cidrs = proxy->Find("allowCidrs")) {
    auto list = ReadNonEmptyStringArray(*cidrs, proxy->FieldLocation("allowCidrs"));
    if (!list) return list.error();
    out.allow_cidrs = std::move(*list);
  }
  // {"name": "ip"}: kept as "name=ip", the form of --resolve; checked by the clamp.
  if (const json* resolve = proxy->Find("resolve")) {
    const std::string location = proxy->FieldLocation("resolve");
    if (!resolve->is_object()) {
      return PolicyError(location + ": expected an object {\"name\": \"address\"}, got " +
                         resolve->type_name());
    }
    for (const auto& [name, address] : resolve->items()) {
      if (!address.is_string() || name.empty()) {
        return PolicyError(location + ": each entry maps a name to an address string");
      }
      out.resolve.push_back(name + "=" + address.get<std::string>());
    }
  }
  return out;
}

Status ParseLimits(const json& value, Limits& out) {
  auto limits = StrictObject::Open(value, "/limits", {"pids", "memoryBytes", "cpuSeconds"});
  if (!limits) return limits.error();
  struct Field {
    const char* key;
    std::optional<uint64_t>* out;
  };
  for (const Field& field : {Field{"pids", &out.pids}, Field{"memoryBytes", &out.memory_bytes},
                             Field{"cpuSeconds", &out.cpu_seconds}}) {
    auto n = OptionalPositive(*limits, field.key);
    if (!n) return n.error();
    *field.out = *n;
  }
  return Status();
}

Result<PolicyDocument> ParseDocument(const json& value) {
  auto root = StrictObject::Open(value, "", {"filesystem", "network", "timeoutMs", "limits"});
  if (!root) return root.error();
  PolicyDocument doc;
  if (const json* fs = root->Find("filesystem")) {
    if (auto status = ParseFilesystem(*fs, doc.filesystem); !status) return status.error();
  }
  if (const json* network = root->Find("network")) {
    auto parsed = ParseNetwork(*network);
    if (!parsed) return parsed.error();
    doc.network = std::move(*parsed);
  }
  auto timeout = OptionalPositive(*root, "timeoutMs");
  if (!timeout) return timeout.error();
  doc.timeout_ms = *timeout;
  if (const json* limits = root->Find("limits")) {
    if (auto status = ParseLimits(*limits, doc.limits); !status) return status.error();
  }
  return doc;
}

json FilesystemToJson(const FilesystemRules& fs) {
  return json{{"readonly", fs.readonly}, {"readwrite", fs.readwrite}, {"denied", fs.denied}};
}

json NetworkToJson(const Network& network) {
  switch (network.mode) {
    case NetworkMode::kBlock:
      return "block";
    case NetworkMode::kAllow:
      return "allow";
    case NetworkMode::kProxy:
      break;
  }
  json proxy = {{"allowDomains", network.allow_domains}, {"denyDomains", network.deny_domains}};
  if (!network.allow_cidrs.empty()) proxy["allowCidrs"] = network.allow_cidrs;
  if (!network.resolve.empty()) {
    json resolve = json::object();
    for (const std::string& pin : network.resolve) {
      const size_t eq = pin.find('=');
      resolve[pin.substr(0, eq)] = eq == std::string::npos ? "" : pin.substr(eq + 1);
    }
    proxy["resolve"] = std::move(resolve);
  }
  return json{{"proxy", std::move(proxy)}};
}

json LimitsToJson(const Limits& limits) {
  json out = json::object();
  if (limits.pids) out["pids"] = *limits.pids;
  if (limits.memory_bytes) out["memoryBytes"] = *limits.memory_bytes;
  if (limits.cpu_seconds) out["cpuSeconds"] = *limits.cpu_seconds;
  return out;
}

}  // namespace

Result<PolicyDocument> ParsePolicyDocument(std::string_view text, std::string_view source) {
  try {
    auto value = ParseStrictJson(text, source);
    if (!value) return value.error();
    auto doc = ParseDocument(*value);
    if (!doc) return WithSource(doc.error(), source);
    return doc;
  } catch (const std::exception& e) {
    // Not expected: the readers check types before every access.
    return WithSource(PolicyError(std::string("invalid policy: ") + e.what()), source);
  }
}

Result<PolicyDocument> LoadPolicyFile(const std::string& path) {
  const std::string what = "policy file " + path;
  // O_NONBLOCK: opening a FIFO must not hang; it is refused as not a regular file below.
  UniqueFd fd(::open(path.c_str(), O_RDONLY | O_CLOEXEC | O_NOCTTY | O_NONBLOCK));
  if (!fd) return ErrnoError(ErrorCode::kPolicy, "open", what);
  struct stat st {};
  if (::fstat(fd.get(), &st) != 0) return ErrnoError(ErrorCode::kPolicy, "fstat", what);
  if (!S_ISREG(st.st_mode)) return PolicyError(what + ": not a regular file");
  if (st.st_size < 0 || static_cast<uint64_t>(st.st_size) > kMaxJsonBytes) {
    return PolicyError(what + ": larger than " + std::to_string(kMaxJsonBytes) + " bytes");
  }
  std::string text;
  // One byte more than the limit, so a file that grew since fstat is caught.
  text.resize(kMaxJsonBytes + 1);
  size_t used = 0;
  while (used < text.size()) {
    const ssize_t n = ::read(fd.get(), text.data() + used, text.size() - used);
    if (n < 0 && errno == EINTR) continue;
    if (n < 0) return ErrnoError(ErrorCode::kPolicy, "read", what);
    if (n == 0) break;
    used += static_cast<size_t>(n);
  }
  if (used > kMaxJsonBytes) {
    return PolicyError(what + ": larger than " + std::to_string(kMaxJsonBytes) + " bytes");
  }
  text.resize(used);
  return ParsePolicyDocument(text, path);
}

json PolicyDocumentToJson(const PolicyDocument& doc) {
  json out = json::object();
  out["filesystem"] = FilesystemToJson(doc.filesystem);
  if (doc.network) out["network"] = NetworkToJson(*doc.network);
  if (doc.timeout_ms) out["timeoutMs"] = *doc.timeout_ms;
  json limits = LimitsToJson(doc.limits);
  if (!limits.empty()) out["limits"] = std::move(limits);
  return out;
}

json PolicyToJson(const Policy& policy) {
  return json{{"filesystem", FilesystemToJson(policy.filesystem)},
              {"network", NetworkToJson(policy.network)},
              {"timeoutMs", policy.timeout_ms},
              {"limits", LimitsToJson(policy.limits)}};
}

json DecisionToJson(const Decision& decision) {
  return json{{"kind", DecisionKindName(decision.kind)},
              {"path", decision.subject},
              {"asked", decision.asked},
              {"granted", decision.granted},
              {"reason", decision.reason}};
}

json ClampResultToJson(const ClampResult& result) {
  json decisions = json::array();
  for (const Decision& decision : result.decisions) decisions.push_back(DecisionToJson(decision));
  return json{{"policy", PolicyToJson(result.policy)}, {"decisions", std::move(decisions)}};
}

json ConnectionsToJson(const std::vector<ConnectionRecord>& records) {
  json list = json::array();
  for (const ConnectionRecord& r : records) {
    json entry = {
        {"protocol", r.protocol}, {"host", r.host}, {"port", r.port}, {"allowed", r.allowed}};
    if (!r.reason.empty()) entry["reason"] = r.reason;
    if (!r.address.empty()) entry["address"] = r.address;
    list.push_back(std::move(entry));
  }
  return {{"connections", std::move(list)}};
}

}  // namespace agentbox
