#include "config/mxc_config.h"

#include <arpa/inet.h>

#include <algorithm>
#include <array>
#include <charconv>
#include <cstring>
#include <initializer_list>
#include <map>
#include <utility>

#include "config/strict_json.h"
#include "net/address.h"
#include "net/proxy_protocol.h"
#include "policy/domain.h"

namespace agentbox {
namespace {

using nlohmann::json;

Error ParseError(std::string_view location, std::string_view message) {
  std::string context = LocationName(location);
  context += ": ";
  context += message;
  return MakeError(ErrorCode::kPolicy, std::move(context));
}

// "got string \"x\"", "got number -1": what a value of the wrong type or range was.
std::string Got(const json& value) {
  std::string out = "got ";
  out += value.type_name();
  if (value.is_number() || value.is_boolean()) {
    out += ' ';
    out += DumpJson(value);
  } else if (value.is_string()) {
    out += ' ';
    out += QuoteForMessage(value.get_ref<const json::string_t&>());
  }
  return out;
}

// The member `key`, or nullptr when it is absent or null (MXC accepts null for every
// optional field).
const json* Member(const StrictObject& object, std::string_view key) {
  const json* member = object.Find(key);
  return member == nullptr || member->is_null() ? nullptr : member;
}

Result<std::optional<std::string>> OptString(const StrictObject& object, std::string_view key) {
  const json* member = Member(object, key);
  if (member == nullptr) return std::optional<std::string>();
  auto s = ReadString(*member, object.FieldLocation(key));
  if (!s) return s.error();
  return std::optional<std::string>(std::move(*s));
}

Result<std::optional<bool>> OptBool(const StrictObject& object, std::string_view key) {
  const json* member = Member(object, key);
  if (member == nullptr) return std::optional<bool>();
  auto b = ReadBool(*member, object.FieldLocation(key));
  if (!b) return b.error();
  return std::optional<bool>(*b);
}

Result<std::optional<std::vector<std::string>>> OptStrings(const StrictObject& object,
                                                           std::string_view key) {
  const json* member = Member(object, key);
  if (member == nullptr) return std::optional<std::vector<std::string>>();
  auto list = ReadStringArray(*member, object.FieldLocation(key));
  if (!list) return list.error();
  return std::optional<std::vector<std::string>>(std::move(*list));
}

// An integer in [min, max] written without fraction or exponent.
Result<uint64_t> ReadRanged(const json& value, std::string_view location, uint64_t min,
                            uint64_t max) {
  const std::string range = "an integer from " + std::to_string(min) + " to " + std::to_string(max);
  if (!value.is_number_unsigned())
    return ParseError(location, "expected " + range + ", " + Got(value));
  const auto n = value.get<uint64_t>();
  if (n < min || n > max) return ParseError(location, "expected " + range + ", " + Got(value));
  return n;
}

Result<std::optional<uint64_t>> OptRanged(const StrictObject& object, std::string_view key,
                                          uint64_t min, uint64_t max) {
  const json* member = Member(object, key);
  if (member == nullptr) return std::optional<uint64_t>();
  auto n = ReadRanged(*member, object.FieldLocation(key), min, max);
  if (!n) return n.error();
  return std::optional<uint64_t>(*n);
}

// Wire spellings of an enum: {"allow", MxcNetAction::kAllow}, ...
template <typename E>
using EnumSpelling = std::pair<std::string_view, E>;

template <typename E, size_t N>
Result<std::optional<E>> OptEnum(const StrictObject& object, std::string_view key,
                                 const EnumSpelling<E> (&names)[N]) {
  const json* member = Member(object, key);
  if (member == nullptr) return std::optional<E>();
  const std::string location = object.FieldLocation(key);
  auto s = ReadString(*member, location);
  if (!s) return s.error();
  std::string expected;
  for (const auto& [name, value] : names) {
    if (name == *s) return std::optional<E>(value);
    if (!expected.empty()) expected += ", ";
    expected += name;
  }
  return ParseError(
      location, "unknown value " + QuoteForMessage(*s) + " (expected one of: " + expected + ")");
}

template <typename E, size_t N>
std::string_view EnumName(E value, const EnumSpelling<E> (&names)[N]) {
  for (const auto& [name, v] : names) {
    if (v == value) return name;
  }
  return "?";
}

constexpr EnumSpelling<MxcContainment> kContainmentNames[] = {
    {"process", MxcContainment::kProcess},
    {"bubblewrap", MxcContainment::kBubblewrap},
    {"lxc", MxcContainment::kLxc},
    {"processcontainer", MxcContainment::kProcessContainer},
    {"appcontainer", MxcContainment::kAppContainer},
    {"seatbelt", MxcContainment::kSeatbelt},
    {"macos_sandbox", MxcContainment::kMacosSandbox},
    {"vm", MxcContainment::kVm},
    {"windows_sandbox", MxcContainment::kWindowsSandbox},
    {"wslc", MxcContainment::kWslc},
    {"isolation_session", MxcContainment::kIsolationSession},
    {"microvm", MxcContainment::kMicrovm},
    {"hyperlight", MxcContainment::kHyperlight}};
constexpr EnumSpelling<MxcNetPolicy> kNetPolicyNames[] = {{"allow", MxcNetPolicy::kAllow},
                                                          {"block", MxcNetPolicy::kBlock}};
constexpr EnumSpelling<MxcEnforcement> kEnforcementNames[] = {
    {"capabilities", MxcEnforcement::kCapabilities},
    {"firewall", MxcEnforcement::kFirewall},
    {"both", MxcEnforcement::kBoth}};
constexpr EnumSpelling<MxcNetAction> kActionNames[] = {{"allow", MxcNetAction::kAllow},
                                                       {"deny", MxcNetAction::kDeny}};
constexpr EnumSpelling<MxcProtocol> kProtocolNames[] = {{"tcp", MxcProtocol::kTcp},
                                                        {"udp", MxcProtocol::kUdp},
                                                        {"icmp", MxcProtocol::kIcmp},
                                                        {"any", MxcProtocol::kAny}};
// Values of fields that MxcConfig does not keep; checked for strictness only.
enum class Tag { kTag };
constexpr EnumSpelling<Tag> kClipboardNames[] = {
    {"none", Tag::kTag}, {"read", Tag::kTag}, {"write", Tag::kTag}, {"all", Tag::kTag}};
constexpr EnumSpelling<Tag> kUiIsolationNames[] = {
    {"desktop", Tag::kTag}, {"handles", Tag::kTag}, {"atoms", Tag::kTag}, {"container", Tag::kTag}};
constexpr EnumSpelling<Tag> kLaunchMethodNames[] = {{"exec", Tag::kTag}, {"open", Tag::kTag}};
constexpr EnumSpelling<Tag> kCaptureModeNames[] = {{"block", Tag::kTag}, {"allow", Tag::kTag}};

// --- Value checks shared by the parser and CheckMxcInvariants --------------------------------

// Filesystem paths: non-empty, no NUL, no '"' (MXC's executors quote paths into profiles).
std::optional<std::string> PathProblem(std::string_view path) {
  if (path.empty()) return "must not be empty";
  if (path.find('\0') != std::string_view::npos) return "must not contain a NUL byte";
  if (path.find('"') != std::string_view::npos) return "must not contain '\"'";
  return std::nullopt;
}

std::optional<std::string> TextProblem(std::string_view text) {
  if (text.empty()) return "must not be empty";
  if (text.find('\0') != std::string_view::npos) return "must not contain a NUL byte";
  return std::nullopt;
}

std::optional<std::string> EnvProblem(std::string_view entry) {
  if (entry.find('\0') != std::string_view::npos) return "must not contain a NUL byte";
  if (!entry.empty() && entry[0] == '=') return "has an empty variable name";
  return std::nullopt;
}

bool ParseDecimal(std::string_view text, uint64_t max, uint64_t* out) {
  if (text.empty() || text.size() > 20) return false;
  for (const char c : text) {
    if (c < '0' || c > '9') return false;
  }
  uint64_t value = 0;
  const auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), value);
  if (ec != std::errc() || end != text.data() + text.size() || value > max) return false;
  *out = value;
  return true;
}

// An IPv4 or IPv6 address, optionally with "/prefix".
bool ValidCidr(std::string_view text) {
  if (text.empty() || text.size() > 64 || text.find('\0') != std::string_view::npos) return false;
  const size_t slash = text.find('/');
  const std::string address(text.substr(0, slash));
  std::array<unsigned char, 16> buf{};
  int max_prefix = 0;
  if (::inet_pton(AF_INET, address.c_str(), buf.data()) == 1) {
    max_prefix = 32;
  } else if (::inet_pton(AF_INET6, address.c_str(), buf.data()) == 1) {
    max_prefix = 128;
  } else {
    return false;
  }
  if (slash == std::string_view::npos) return true;
  uint64_t prefix = 0;
  const std::string_view digits = text.substr(slash + 1);
  return digits.size() <= 3 && ParseDecimal(digits, static_cast<uint64_t>(max_prefix), &prefix);
}

// "http://host:port[/...]" or https; a DNS name, IPv4 address or [IPv6] host; a port (as
// lxc-exec requires); no credentials. The problem, or nullopt. Never echoes the URL (it may
// carry a password).
std::optional<std::string> ProxyUrlProblem(std::string_view url) {
  for (const char c : url) {
    const auto byte = static_cast<unsigned char>(c);
    if (byte <= 0x20 || byte >= 0x7f) {
      return "must be a URL without spaces, control or non-ASCII characters";
    }
  }
  std::string_view rest;
  if (url.starts_with("http://")) {
    rest = url.substr(7);
  } else if (url.starts_with("https://")) {
    rest = url.substr(8);
  } else {
    return "must be an http:// or https:// URL (e.g. http://127.0.0.1:3128)";
  }
  const std::string_view authority = rest.substr(0, rest.find_first_of("/?#"));
  if (authority.find('@') != std::string_view::npos) {
    return "must not carry credentials (user:password@); give them to the proxy itself";
  }
  std::string_view host = authority;
  std::string_view port;
  if (host.starts_with('[')) {
    const size_t close = host.find(']');
    if (close == std::string_view::npos) return "has an unterminated [IPv6] host";
    const std::string v6(host.substr(1, close - 1));
    std::array<unsigned char, 16> buf{};
    if (::inet_pton(AF_INET6, v6.c_str(), buf.data()) != 1) return "has an invalid IPv6 host";
    const std::string_view after = host.substr(close + 1);
    if (!after.empty()) {
      if (after[0] != ':') return "has characters after the [IPv6] host";
      port = after.substr(1);
      if (port.empty()) return "has an empty port";
    }
    host = host.substr(0, close + 1);
  } else {
    const size_t colon = host.find(':');
    if (colon != std::string_view::npos) {
      port = host.substr(colon + 1);
      host = host.substr(0, colon);
      if (port.empty()) return "has an empty port";
    }
    if (host.empty()) return "has no host";
    for (const char c : host) {
      const bool ok = (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') ||
                      c == '.' || c == '-' || c == '_';
      if (!ok) return "has an invalid host name";
    }
  }
  if (port.empty()) return "must include a port (e.g. http://127.0.0.1:3128)";
  uint64_t port_number = 0;
  if (!ParseDecimal(port, 65535, &port_number) || port_number == 0) {
    return "has an invalid port (expected 1 to 65535)";
  }
  return std::nullopt;
}

// "host:port" ("[v6]:port") of a URL ProxyUrlProblem accepts: where the proxy listens.
std::string_view ProxyUrlAuthority(std::string_view url) {
  const std::string_view rest = url.substr(url.find("://") + 3);
  return rest.substr(0, rest.find_first_of("/?#"));
}

// runtimeConfig.networkProxy: a proxy URL on this host's loopback, as lxc-exec requires.
std::optional<std::string> NetworkProxyProblem(std::string_view url) {
  if (auto problem = ProxyUrlProblem(url)) return problem;
  const std::string_view authority = ProxyUrlAuthority(url);
  std::string host(authority.substr(0, authority.rfind(':')));
  std::transform(host.begin(), host.end(), host.begin(),
                 [](char c) { return c >= 'A' && c <= 'Z' ? static_cast<char>(c + 32) : c; });
  if (host != "localhost" && host != "127.0.0.1" && host != "[::1]") {
    return "must use localhost, 127.0.0.1 or [::1] (a proxy on this host's loopback)";
  }
  return std::nullopt;
}

bool IsDirectional(const std::optional<MxcNetwork>& network) {
  return network && (network->egress || network->ingress);
}

bool HasLegacyNetworkFields(const MxcNetwork& n) {
  return n.default_policy || n.allow_local_network || n.allowed_hosts || n.blocked_hosts ||
         n.enforcement_mode || n.proxy;
}

bool AtLeast08(const std::optional<MxcVersion>& version) {
  return version && (version->major > 0 || version->minor >= 8);
}

bool NonEmpty(const std::optional<std::vector<std::string>>& list) {
  return list && !list->empty();
}

// lxc-exec 0.8's parse-time rules for an external proxy (localhost or url), kept so that
// agentbox is lenient nowhere lxc-exec is strict — except for allowedHosts/blockedHosts, which
// agentbox's own proxy enforces before forwarding (lxc-exec refuses them). defaultPolicy block
// lets through only what allowedHosts name, so without them nothing would pass.
std::optional<std::string> ExternalProxyProblem(const MxcNetwork& n) {
  if (!n.proxy || n.proxy->kind == MxcProxy::Kind::kBuiltinTestServer) return std::nullopt;
  if (n.enforcement_mode && *n.enforcement_mode != MxcEnforcement::kCapabilities) {
    return "network.proxy cannot be combined with enforcementMode \"firewall\" or \"both\": "
           "host rules are enforced at the proxy, not by a firewall";
  }
  if (n.default_policy.value_or(MxcNetPolicy::kBlock) == MxcNetPolicy::kBlock &&
      !NonEmpty(n.allowed_hosts)) {
    return "network.proxy with defaultPolicy \"block\" (the default) and no allowedHosts would "
           "let nothing through: set defaultPolicy \"allow\" to reach every host through the "
           "proxy, or list the hosts it may reach in allowedHosts";
  }
  return std::nullopt;
}

// runtimeConfig.networkProxy is the only way out, as lxc-exec 0.8 requires: egress denied
// with no direct rules.
std::optional<std::string> RuntimeProxyProblem(const MxcConfig& c) {
  if (!c.runtime_network_proxy || !c.network || !c.network->egress) return std::nullopt;
  const MxcEgress& e = *c.network->egress;
  if (e.default_action.value_or(MxcNetAction::kDeny) == MxcNetAction::kAllow || !e.allow.empty() ||
      !e.deny.empty()) {
    return "runtimeConfig.networkProxy requires network.egress.default \"deny\" with no direct "
           "allow or deny rules: the proxy is the sandbox's only way out";
  }
  return std::nullopt;
}

bool SectionMatches(MxcBackendSection section, MxcContainment containment) {
  switch (section) {
    case MxcBackendSection::kLxc:
      return containment == MxcContainment::kLxc;
    case MxcBackendSection::kProcessContainer:
    case MxcBackendSection::kAppContainer:
      return containment == MxcContainment::kProcessContainer ||
             containment == MxcContainment::kAppContainer;
    case MxcBackendSection::kSeatbelt:
      return containment == MxcContainment::kSeatbelt ||
             containment == MxcContainment::kMacosSandbox;
  }
  return false;
}

// --- Parser ----------------------------------------------------------------------------------

Result<std::vector<std::string>> ReadPathList(const StrictObject& object, std::string_view key) {
  auto list = OptStrings(object, key);
  if (!list) return list.error();
  if (!*list) return std::vector<std::string>();
  for (size_t i = 0; i < (*list)->size(); ++i) {
    if (auto problem = PathProblem((**list)[i])) {
      return ParseError(ChildLocation(object.FieldLocation(key), i), *problem);
    }
  }
  return std::move(**list);
}

Status ParseProcess(const json& value, MxcConfig& config) {
  auto process = StrictObject::Open(value, "/process", {"commandLine", "cwd", "env", "timeout"});
  if (!process) return process.error();

  const json* command = Member(*process, "commandLine");
  if (command == nullptr) {
    return ParseError("/process", "missing required field \"commandLine\"");
  }
  auto command_line = ReadString(*command, "/process/commandLine");
  if (!command_line) return command_line.error();
  if (auto problem = TextProblem(*command_line)) {
    return ParseError("/process/commandLine", *problem);
  }
  config.command_line = std::move(*command_line);

  auto cwd = OptString(*process, "cwd");
  if (!cwd) return cwd.error();
  if (*cwd && (*cwd)->empty()) cwd->reset();  // "" means unset, as in lxc-exec
  if (*cwd) {
    if (auto problem = TextProblem(**cwd)) return ParseError("/process/cwd", *problem);
  }
  config.cwd = std::move(*cwd);

  auto env = OptStrings(*process, "env");
  if (!env) return env.error();
  if (*env) {
    for (size_t i = 0; i < (*env)->size(); ++i) {
      if (auto problem = EnvProblem((**env)[i])) {
        return ParseError(ChildLocation("/process/env", i), *problem);
      }
    }
    config.env = std::move(**env);
  }

  auto timeout = OptRanged(*process, "timeout", 0, UINT32_MAX);
  if (!timeout) return timeout.error();
  config.timeout_ms = static_cast<uint32_t>(timeout->value_or(0));
  return {};
}

Status ParseFilesystem(const json& value, MxcConfig& config) {
  auto fs =
      StrictObject::Open(value, "/filesystem", {"readwritePaths", "readonlyPaths", "deniedPaths"});
  if (!fs) return fs.error();
  auto rw = ReadPathList(*fs, "readwritePaths");
  if (!rw) return rw.error();
  auto ro = ReadPathList(*fs, "readonlyPaths");
  if (!ro) return ro.error();
  auto denied = ReadPathList(*fs, "deniedPaths");
  if (!denied) return denied.error();
  config.readwrite_paths = std::move(*rw);
  config.readonly_paths = std::move(*ro);
  config.denied_paths = std::move(*denied);
  return {};
}

Result<MxcProxy> ParseProxy(const json& value, const std::string& location) {
  auto proxy = StrictObject::Open(value, location, {"localhost", "url", "builtinTestServer"});
  if (!proxy) return proxy.error();
  auto port = OptRanged(*proxy, "localhost", 1, 65535);
  if (!port) return port.error();
  auto url = OptString(*proxy, "url");
  if (!url) return url.error();
  auto builtin = OptBool(*proxy, "builtinTestServer");
  if (!builtin) return builtin.error();
  const int variants = (*port ? 1 : 0) + (*url ? 1 : 0) + (builtin->value_or(false) ? 1 : 0);
  if (variants != 1) {
    return ParseError(location, variants == 0
                                    ? "must specify one of localhost, url, builtinTestServer"
                                    : "must specify exactly one of localhost, url, "
                                      "builtinTestServer");
  }
  MxcProxy out;
  if (*port) {
    out.kind = MxcProxy::Kind::kLocalhost;
    out.port = static_cast<uint16_t>(**port);
  } else if (*url) {
    if (auto problem = ProxyUrlProblem(**url)) {
      return ParseError(proxy->FieldLocation("url"), *problem);
    }
    out.kind = MxcProxy::Kind::kUrl;
    out.url = std::move(**url);
  } else {
    out.kind = MxcProxy::Kind::kBuiltinTestServer;
  }
  return out;
}

Result<MxcPeer> ParsePeer(const json& value, const std::string& location) {
  auto peer = StrictObject::Open(value, location, {"cidr", "except"});
  if (!peer) return peer.error();
  const json* cidr = Member(*peer, "cidr");
  if (cidr == nullptr) return ParseError(location, "missing required field \"cidr\"");
  auto text = ReadString(*cidr, peer->FieldLocation("cidr"));
  if (!text) return text.error();
  if (!ValidCidr(*text)) {
    return ParseError(peer->FieldLocation("cidr"),
                      "expected an IPv4 or IPv6 CIDR (e.g. 10.0.0.0/8), " + Got(*cidr));
  }
  auto except = OptStrings(*peer, "except");
  if (!except) return except.error();
  MxcPeer out{std::move(*text), {}};
  if (*except) {
    for (size_t i = 0; i < (*except)->size(); ++i) {
      if (!ValidCidr((**except)[i])) {
        return ParseError(ChildLocation(peer->FieldLocation("except"), i),
                          "expected an IPv4 or IPv6 CIDR (e.g. 10.0.0.0/8)");
      }
    }
    out.except = std::move(**except);
  }
  return out;
}

Result<MxcPort> ParsePort(const json& value, const std::string& location) {
  auto port = StrictObject::Open(value, location, {"port", "endPort", "protocol"});
  if (!port) return port.error();
  auto number = OptRanged(*port, "port", 1, 65535);
  if (!number) return number.error();
  auto end = OptRanged(*port, "endPort", 1, 65535);
  if (!end) return end.error();
  auto protocol = OptEnum(*port, "protocol", kProtocolNames);
  if (!protocol) return protocol.error();
  if (*end && !*number) return ParseError(port->FieldLocation("endPort"), "requires \"port\"");
  if (*end && **end < **number) {
    return ParseError(port->FieldLocation("endPort"), "must not be below \"port\"");
  }
  MxcPort out;
  if (*number) out.port = static_cast<uint16_t>(**number);
  if (*end) out.end_port = static_cast<uint16_t>(**end);
  out.protocol = *protocol;
  return out;
}

// A non-empty array (minItems 1), each element parsed by `parse`.
template <typename T, typename Parse>
Result<std::optional<std::vector<T>>> OptNonEmptyList(const StrictObject& object,
                                                      std::string_view key, Parse parse) {
  const json* member = Member(object, key);
  if (member == nullptr) return std::optional<std::vector<T>>();
  const std::string location = object.FieldLocation(key);
  if (!member->is_array()) return ParseError(location, "expected an array, " + Got(*member));
  if (member->empty()) return ParseError(location, "must not be empty (omit it instead)");
  std::vector<T> out;
  for (size_t i = 0; i < member->size(); ++i) {
    auto element = parse((*member)[i], ChildLocation(location, i));
    if (!element) return element.error();
    out.push_back(std::move(*element));
  }
  return std::optional<std::vector<T>>(std::move(out));
}

Result<MxcRule> ParseRule(const json& value, const std::string& location) {
  auto rule = StrictObject::Open(value, location, {"to", "ports"});
  if (!rule) return rule.error();
  auto to = OptNonEmptyList<MxcPeer>(*rule, "to", ParsePeer);
  if (!to) return to.error();
  auto ports = OptNonEmptyList<MxcPort>(*rule, "ports", ParsePort);
  if (!ports) return ports.error();
  return MxcRule{std::move(*to), std::move(*ports)};
}

Result<std::vector<MxcRule>> ParseRules(const StrictObject& object, std::string_view key) {
  const json* member = Member(object, key);
  if (member == nullptr) return std::vector<MxcRule>();
  const std::string location = object.FieldLocation(key);
  if (!member->is_array()) return ParseError(location, "expected an array, " + Got(*member));
  std::vector<MxcRule> out;
  for (size_t i = 0; i < member->size(); ++i) {
    auto rule = ParseRule((*member)[i], ChildLocation(location, i));
    if (!rule) return rule.error();
    out.push_back(std::move(*rule));
  }
  return out;
}

Result<MxcNetwork> ParseNetwork(const json& value) {
  auto net = StrictObject::Open(value, "/network",
                                {"defaultPolicy", "allowLocalNetwork", "allowedHosts",
                                 "blockedHosts", "enforcementMode", "proxy", "egress", "ingress"});
  if (!net) return net.error();
  MxcNetwork out;
  auto policy = OptEnum(*net, "defaultPolicy", kNetPolicyNames);
  if (!policy) return policy.error();
  out.default_policy = *policy;
  auto local = OptBool(*net, "allowLocalNetwork");
  if (!local) return local.error();
  out.allow_local_network = *local;
  for (const auto& [key, field] : {std::pair{"allowedHosts", &out.allowed_hosts},
                                   std::pair{"blockedHosts", &out.blocked_hosts}}) {
    auto hosts = OptStrings(*net, key);
    if (!hosts) return hosts.error();
    if (*hosts) {
      for (size_t i = 0; i < (*hosts)->size(); ++i) {
        if (auto problem = TextProblem((**hosts)[i])) {
          return ParseError(ChildLocation(net->FieldLocation(key), i), *problem);
        }
      }
    }
    *field = std::move(*hosts);
  }
  auto mode = OptEnum(*net, "enforcementMode", kEnforcementNames);
  if (!mode) return mode.error();
  out.enforcement_mode = *mode;
  if (const json* proxy = Member(*net, "proxy")) {
    auto parsed = ParseProxy(*proxy, net->FieldLocation("proxy"));
    if (!parsed) return parsed.error();
    out.proxy = std::move(*parsed);
  }
  if (auto problem = ExternalProxyProblem(out)) return ParseError("/network", *problem);
  if (const json* egress = Member(*net, "egress")) {
    auto object = StrictObject::Open(*egress, "/network/egress", {"default", "allow", "deny"});
    if (!object) return object.error();
    MxcEgress e;
    auto action = OptEnum(*object, "default", kActionNames);
    if (!action) return action.error();
    e.default_action = *action;
    auto allow = ParseRules(*object, "allow");
    if (!allow) return allow.error();
    e.allow = std::move(*allow);
    auto deny = ParseRules(*object, "deny");
    if (!deny) return deny.error();
    e.deny = std::move(*deny);
    out.egress = std::move(e);
  }
  if (const json* ingress = Member(*net, "ingress")) {
    auto object = StrictObject::Open(*ingress, "/network/ingress", {"default", "hostLoopback"});
    if (!object) return object.error();
    MxcIngress i;
    auto action = OptEnum(*object, "default", kActionNames);
    if (!action) return action.error();
    i.default_action = *action;
    auto loopback = OptEnum(*object, "hostLoopback", kActionNames);
    if (!loopback) return loopback.error();
    i.host_loopback = *loopback;
    out.ingress = i;
  }
  return out;
}

// Fields that never change a one-shot Linux run: checked for shape, then dropped.
Status CheckBoolFields(const json& value, const std::string& location,
                       std::initializer_list<std::string_view> fields) {
  auto object = StrictObject::Open(value, location, fields);
  if (!object) return object.error();
  for (const std::string_view field : fields) {
    auto b = OptBool(*object, field);
    if (!b) return b.error();
  }
  return {};
}

Status CheckUi(const json& value) {
  auto ui = StrictObject::Open(value, "/ui", {"disable", "clipboard", "injection"});
  if (!ui) return ui.error();
  for (const char* field : {"disable", "injection"}) {
    auto b = OptBool(*ui, field);
    if (!b) return b.error();
  }
  auto clipboard = OptEnum(*ui, "clipboard", kClipboardNames);
  if (!clipboard) return clipboard.error();
  return {};
}

Status CheckLxc(const json& value, const std::string& location) {
  auto lxc = StrictObject::Open(value, location, {"distribution", "release"});
  if (!lxc) return lxc.error();
  for (const char* field : {"distribution", "release"}) {
    auto s = OptString(*lxc, field);
    if (!s) return s.error();
  }
  return {};
}

// processContainer (or its alias appContainer). Sets *has_network for the 0.8-only block.
Status CheckProcessContainer(const json& value, const std::string& location, bool* has_network) {
  auto pc = StrictObject::Open(
      value, location,
      {"leastPrivilege", "capabilities", "ui", "learningMode", "captureDenials", "network"});
  if (!pc) return pc.error();
  for (const char* field : {"leastPrivilege", "learningMode"}) {
    auto b = OptBool(*pc, field);
    if (!b) return b.error();
  }
  auto capabilities = OptStrings(*pc, "capabilities");
  if (!capabilities) return capabilities.error();
  if (const json* ui = Member(*pc, "ui")) {
    auto object =
        StrictObject::Open(*ui, pc->FieldLocation("ui"),
                           {"isolation", "desktopSystemControl", "systemSettings", "ime"});
    if (!object) return object.error();
    auto isolation = OptEnum(*object, "isolation", kUiIsolationNames);
    if (!isolation) return isolation.error();
    for (const char* field : {"desktopSystemControl", "ime"}) {
      auto b = OptBool(*object, field);
      if (!b) return b.error();
    }
    auto settings = OptString(*object, "systemSettings");
    if (!settings) return settings.error();
  }
  if (const json* capture = Member(*pc, "captureDenials")) {
    auto object = StrictObject::Open(*capture, pc->FieldLocation("captureDenials"),
                                     {"mode", "outputPath", "retainEtl"});
    if (!object) return object.error();
    auto mode = OptEnum(*object, "mode", kCaptureModeNames);
    if (!mode) return mode.error();
    auto path = OptString(*object, "outputPath");
    if (!path) return path.error();
    auto retain = OptBool(*object, "retainEtl");
    if (!retain) return retain.error();
  }
  if (const json* network = Member(*pc, "network")) {
    auto object = StrictObject::Open(*network, pc->FieldLocation("network"), {"allowedProxyPeer"});
    if (!object) return object.error();
    auto peer = OptString(*object, "allowedProxyPeer");
    if (!peer) return peer.error();
    *has_network = true;
  }
  return {};
}

Status CheckSeatbelt(const json& value, const std::string& location) {
  auto sb = StrictObject::Open(value, location,
                               {"profileOverride", "guiAccess", "launchMethod", "nestedPty",
                                "keychainAccess", "extraMachLookups"});
  if (!sb) return sb.error();
  auto profile = OptString(*sb, "profileOverride");
  if (!profile) return profile.error();
  for (const char* field : {"guiAccess", "nestedPty", "keychainAccess"}) {
    auto b = OptBool(*sb, field);
    if (!b) return b.error();
  }
  auto method = OptEnum(*sb, "launchMethod", kLaunchMethodNames);
  if (!method) return method.error();
  auto lookups = OptStrings(*sb, "extraMachLookups");
  if (!lookups) return lookups.error();
  return {};
}

constexpr std::string_view kDirectionalRule =
    "network.egress, network.ingress, runtimeConfig and processContainer.network need "
    "\"version\" 0.8 or later";
constexpr std::string_view kMixedForms =
    "cannot mix the legacy network fields (defaultPolicy, enforcementMode, allowLocalNetwork, "
    "allowedHosts, blockedHosts, proxy) with network.egress, network.ingress, runtimeConfig or "
    "processContainer.network";

Result<MxcConfig> ParseRoot(const json& value) {
  // State-aware requests share the wire model; their fields have no place in a one-shot run.
  for (const char* field : {"phase", "sandboxId", "correlationVector"}) {
    if (value.is_object() && value.contains(field)) {
      return ParseError(ChildLocation("", field),
                        std::string("\"") + field +
                            "\" belongs to state-aware lifecycle requests; a one-shot config "
                            "must not have it");
    }
  }
  auto root =
      StrictObject::Open(value, "",
                         {"version", "$schema", "_comment", "containerId", "containment", "process",
                          "filesystem", "network", "runtimeConfig", "lifecycle", "fallback", "ui",
                          "lxc", "processContainer", "appContainer", "seatbelt"});
  if (!root) return root.error();
  MxcConfig config;

  auto version = OptString(*root, "version");
  if (!version) return version.error();
  if (*version) {
    auto parsed = ParseMxcVersion(**version);
    if (!parsed) return ParseError("/version", parsed.error().context);
    config.version = std::move(*parsed);
  }
  auto schema = OptString(*root, "$schema");  // ignored, but a string if present
  if (!schema) return schema.error();
  auto container_id = OptString(*root, "containerId");
  if (!container_id) return container_id.error();
  config.container_id = std::move(*container_id);

  auto containment = OptEnum(*root, "containment", kContainmentNames);
  if (!containment) return containment.error();
  config.containment = containment->value_or(MxcContainment::kProcess);

  const json* process = Member(*root, "process");
  if (process == nullptr) return ParseError("", "missing required field \"process\"");
  if (Status s = ParseProcess(*process, config); !s) return s.error();

  if (const json* fs = Member(*root, "filesystem")) {
    if (Status s = ParseFilesystem(*fs, config); !s) return s.error();
  }
  if (const json* network = Member(*root, "network")) {
    auto parsed = ParseNetwork(*network);
    if (!parsed) return parsed.error();
    config.network = std::move(*parsed);
  }
  bool has_runtime_config = false;
  if (const json* runtime = Member(*root, "runtimeConfig")) {
    auto object = StrictObject::Open(*runtime, "/runtimeConfig", {"networkProxy"});
    if (!object) return object.error();
    auto proxy = OptString(*object, "networkProxy");
    if (!proxy) return proxy.error();
    if (*proxy) {
      if (auto problem = NetworkProxyProblem(**proxy)) {
        return ParseError("/runtimeConfig/networkProxy", *problem);
      }
    }
    config.runtime_network_proxy = std::move(*proxy);
    has_runtime_config = true;
  }
  if (const json* lifecycle = Member(*root, "lifecycle")) {
    if (Status s = CheckBoolFields(*lifecycle, "/lifecycle", {"destroyOnExit", "preservePolicy"});
        !s) {
      return s.error();
    }
  }
  if (const json* fallback = Member(*root, "fallback")) {
    if (Status s = CheckBoolFields(*fallback, "/fallback", {"allowDaclMutation"}); !s) {
      return s.error();
    }
  }
  if (const json* ui = Member(*root, "ui")) {
    if (Status s = CheckUi(*ui); !s) return s.error();
  }

  // Backend sections: at most one, and the one that belongs to `containment`.
  bool pc_network = false;
  std::vector<MxcBackendSection> sections;
  for (const MxcBackendSection section :
       {MxcBackendSection::kLxc, MxcBackendSection::kProcessContainer,
        MxcBackendSection::kAppContainer, MxcBackendSection::kSeatbelt}) {
    const char* key = MxcBackendSectionName(section);
    const json* member = Member(*root, key);
    if (member == nullptr) continue;
    const std::string location = root->FieldLocation(key);
    Status s;
    switch (section) {
      case MxcBackendSection::kLxc:
        s = CheckLxc(*member, location);
        break;
      case MxcBackendSection::kProcessContainer:
      case MxcBackendSection::kAppContainer:
        s = CheckProcessContainer(*member, location, &pc_network);
        break;
      case MxcBackendSection::kSeatbelt:
        s = CheckSeatbelt(*member, location);
        break;
    }
    if (!s) return s.error();
    sections.push_back(section);
  }
  if (sections.size() > 1) {
    std::string names;
    for (const MxcBackendSection s : sections) {
      if (!names.empty()) names += ", ";
      names += MxcBackendSectionName(s);
    }
    return ParseError("", "more than one backend section (" + names +
                              "); only the one matching \"containment\" is allowed");
  }
  if (sections.size() == 1) {
    if (!SectionMatches(sections[0], config.containment)) {
      return ParseError(root->FieldLocation(MxcBackendSectionName(sections[0])),
                        std::string("this backend section does not belong to containment \"") +
                            MxcContainmentName(config.containment) + "\"; remove it");
    }
    config.backend_section = sections[0];
  }

  const bool directional = IsDirectional(config.network) || has_runtime_config || pc_network;
  if (directional && !AtLeast08(config.version)) return ParseError("", kDirectionalRule);
  if (directional && config.network && HasLegacyNetworkFields(*config.network)) {
    return ParseError("/network", kMixedForms);
  }
  if (auto problem = RuntimeProxyProblem(config)) {
    return ParseError("/runtimeConfig/networkProxy", *problem);
  }
  return config;
}

}  // namespace

const char* MxcContainmentName(MxcContainment containment) {
  return EnumName(containment, kContainmentNames).data();
}

bool RunsAgentboxSandbox(MxcContainment containment) {
  return containment == MxcContainment::kProcess || containment == MxcContainment::kBubblewrap;
}

const char* MxcBackendSectionName(MxcBackendSection section) {
  switch (section) {
    case MxcBackendSection::kLxc:
      return "lxc";
    case MxcBackendSection::kProcessContainer:
      return "processContainer";
    case MxcBackendSection::kAppContainer:
      return "appContainer";
    case MxcBackendSection::kSeatbelt:
      return "seatbelt";
  }
  return "?";
}

Result<MxcVersion> ParseMxcVersion(std::string_view text) {
  const std::string shown = QuoteForMessage(text);
  auto invalid = [&] {
    return MakeError(ErrorCode::kPolicy,
                     "invalid schema version " + shown +
                         ": expected semver MAJOR.MINOR.PATCH (e.g. \"0.8.0-alpha\")");
  };
  // Core: three dot-separated decimal numbers without leading zeros.
  std::string_view rest = text;
  uint64_t parts[3] = {0, 0, 0};
  for (int i = 0; i < 3; ++i) {
    size_t n = 0;
    while (n < rest.size() && rest[n] >= '0' && rest[n] <= '9') ++n;
    if (n == 0 || (n > 1 && rest[0] == '0')) return invalid();
    if (!ParseDecimal(rest.substr(0, n), UINT64_MAX, &parts[i])) return invalid();
    rest.remove_prefix(n);
    if (i < 2) {
      if (rest.empty() || rest[0] != '.') return invalid();
      rest.remove_prefix(1);
    }
  }
  // Optional -prerelease and +build: dot-separated non-empty [0-9A-Za-z-] identifiers;
  // numeric prerelease identifiers have no leading zeros.
  auto identifiers = [](std::string_view ids, bool numeric_rule) {
    if (ids.empty()) return false;
    size_t start = 0;
    while (start <= ids.size()) {
      const size_t dot = std::min(ids.find('.', start), ids.size());
      const std::string_view id = ids.substr(start, dot - start);
      if (id.empty()) return false;
      bool numeric = true;
      for (const char c : id) {
        const bool alnum =
            (c >= '0' && c <= '9') || (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || c == '-';
        if (!alnum) return false;
        numeric = numeric && c >= '0' && c <= '9';
      }
      if (numeric_rule && numeric && id.size() > 1 && id[0] == '0') return false;
      start = dot + 1;
    }
    return true;
  };
  const size_t plus = rest.find('+');
  const std::string_view build = plus == std::string_view::npos ? "" : rest.substr(plus + 1);
  std::string_view pre = rest.substr(0, plus);
  if (!pre.empty()) {
    if (pre[0] != '-' || !identifiers(pre.substr(1), true)) return invalid();
  }
  if (plus != std::string_view::npos && !identifiers(build, false)) return invalid();

  const std::string supported = "(supported: >=0." + std::to_string(kMxcMinMinor) + ", <=0." +
                                std::to_string(kMxcMaxMinor) + ")";
  if (parts[0] == 0 && parts[1] < kMxcMinMinor) {
    return MakeError(ErrorCode::kPolicy,
                     "schema version " + shown + " is older than supported " + supported);
  }
  if (parts[0] > 0 || parts[1] > kMxcMaxMinor) {
    return MakeError(ErrorCode::kPolicy,
                     "schema version " + shown + " is newer than supported " + supported);
  }
  return MxcVersion{parts[0], parts[1], parts[2], std::string(text)};
}

Result<MxcConfig> ParseMxcConfig(std::string_view text, std::string_view source) {
  auto parsed = ParseStrictJson(text, source);
  if (!parsed) return parsed.error();
  auto config = ParseRoot(*parsed);
  if (!config) return WithSource(config.error(), source);
  return config;
}

Status CheckMxcInvariants(const MxcConfig& c) {
  auto fail = [](std::string what) { return MakeError(ErrorCode::kPolicy, std::move(what)); };
  if (c.version) {
    const MxcVersion& v = *c.version;
    if (v.major != 0 || v.minor < kMxcMinMinor || v.minor > kMxcMaxMinor || v.text.empty()) {
      return fail("version out of range");
    }
    auto reparsed = ParseMxcVersion(v.text);
    if (!reparsed || !(*reparsed == v)) return fail("version text does not match its numbers");
  }
  if (TextProblem(c.command_line)) return fail("bad commandLine");
  if (c.cwd && TextProblem(*c.cwd)) return fail("bad cwd");
  for (const std::string& e : c.env) {
    if (EnvProblem(e)) return fail("bad env entry");
  }
  for (const auto* list : {&c.readwrite_paths, &c.readonly_paths, &c.denied_paths}) {
    for (const std::string& p : *list) {
      if (PathProblem(p)) return fail("bad path");
    }
  }
  if (c.backend_section && !SectionMatches(*c.backend_section, c.containment)) {
    return fail("backend section does not match containment");
  }
  const bool directional = IsDirectional(c.network) || c.runtime_network_proxy;
  if (directional && !AtLeast08(c.version)) return fail("directional network below 0.8");
  if (IsDirectional(c.network) && HasLegacyNetworkFields(*c.network)) {
    return fail("mixed network forms");
  }
  if (c.runtime_network_proxy && NetworkProxyProblem(*c.runtime_network_proxy)) {
    return fail("bad runtimeConfig.networkProxy");
  }
  if (RuntimeProxyProblem(c)) return fail("runtimeConfig.networkProxy beside direct egress");
  if (c.network && ExternalProxyProblem(*c.network)) return fail("external proxy combination");
  if (c.network) {
    const MxcNetwork& n = *c.network;
    if (n.proxy) {
      switch (n.proxy->kind) {
        case MxcProxy::Kind::kLocalhost:
          if (n.proxy->port == 0 || !n.proxy->url.empty()) return fail("bad proxy port");
          break;
        case MxcProxy::Kind::kUrl:
          if (ProxyUrlProblem(n.proxy->url) || n.proxy->port != 0) return fail("bad proxy url");
          break;
        case MxcProxy::Kind::kBuiltinTestServer:
          if (n.proxy->port != 0 || !n.proxy->url.empty()) return fail("bad test proxy");
          break;
      }
    }
    for (const auto* hosts : {&n.allowed_hosts, &n.blocked_hosts}) {
      if (!*hosts) continue;
      for (const std::string& h : **hosts) {
        if (TextProblem(h)) return fail("bad host entry");
      }
    }
    if (n.egress) {
      for (const auto* rules : {&n.egress->allow, &n.egress->deny}) {
        for (const MxcRule& r : *rules) {
          if (r.to) {
            if (r.to->empty()) return fail("empty rule.to");
            for (const MxcPeer& p : *r.to) {
              if (!ValidCidr(p.cidr)) return fail("bad cidr");
              for (const std::string& e : p.except) {
                if (!ValidCidr(e)) return fail("bad except cidr");
              }
            }
          }
          if (r.ports) {
            if (r.ports->empty()) return fail("empty rule.ports");
            for (const MxcPort& p : *r.ports) {
              if (p.port && *p.port == 0) return fail("port 0");
              if (p.end_port && (!p.port || *p.end_port < *p.port)) return fail("bad endPort");
            }
          }
        }
      }
    }
  }
  return {};
}

nlohmann::json MxcConfigToJson(const MxcConfig& c) {
  json out = json::object();
  if (c.version) out["version"] = c.version->text;
  out["containment"] = MxcContainmentName(c.containment);
  if (c.backend_section) out[MxcBackendSectionName(*c.backend_section)] = json::object();
  if (c.container_id) out["containerId"] = *c.container_id;
  json process = {{"commandLine", c.command_line}, {"env", c.env}, {"timeout", c.timeout_ms}};
  if (c.cwd) process["cwd"] = *c.cwd;
  out["process"] = std::move(process);
  out["filesystem"] = {{"readwritePaths", c.readwrite_paths},
                       {"readonlyPaths", c.readonly_paths},
                       {"deniedPaths", c.denied_paths}};
  if (c.network) {
    const MxcNetwork& n = *c.network;
    json net = json::object();
    if (n.default_policy) net["defaultPolicy"] = EnumName(*n.default_policy, kNetPolicyNames);
    if (n.allow_local_network) net["allowLocalNetwork"] = *n.allow_local_network;
    if (n.allowed_hosts) net["allowedHosts"] = *n.allowed_hosts;
    if (n.blocked_hosts) net["blockedHosts"] = *n.blocked_hosts;
    if (n.enforcement_mode) {
      net["enforcementMode"] = EnumName(*n.enforcement_mode, kEnforcementNames);
    }
    if (n.proxy) {
      switch (n.proxy->kind) {
        case MxcProxy::Kind::kLocalhost:
          net["proxy"] = {{"localhost", n.proxy->port}};
          break;
        case MxcProxy::Kind::kUrl:
          net["proxy"] = {{"url", n.proxy->url}};
          break;
        case MxcProxy::Kind::kBuiltinTestServer:
          net["proxy"] = {{"builtinTestServer", true}};
          break;
      }
    }
    auto rules_json = [](const std::vector<MxcRule>& rules) {
      json list = json::array();
      for (const MxcRule& r : rules) {
        json rule = json::object();
        if (r.to) {
          rule["to"] = json::array();
          for (const MxcPeer& p : *r.to)
            rule["to"].push_back({{"cidr", p.cidr}, {"except", p.except}});
        }
        if (r.ports) {
          rule["ports"] = json::array();
          for (const MxcPort& p : *r.ports) {
            json port = json::object();
            if (p.port) port["port"] = *p.port;
            if (p.end_port) port["endPort"] = *p.end_port;
            if (p.protocol) port["protocol"] = EnumName(*p.protocol, kProtocolNames);
            rule["ports"].push_back(std::move(port));
          }
        }
        list.push_back(std::move(rule));
      }
      return list;
    };
    if (n.egress) {
      json egress = {{"allow", rules_json(n.egress->allow)}, {"deny", rules_json(n.egress->deny)}};
      if (n.egress->default_action) {
        egress["default"] = EnumName(*n.egress->default_action, kActionNames);
      }
      net["egress"] = std::move(egress);
    }
    if (n.ingress) {
      json ingress = json::object();
      if (n.ingress->default_action) {
        ingress["default"] = EnumName(*n.ingress->default_action, kActionNames);
      }
      if (n.ingress->host_loopback) {
        ingress["hostLoopback"] = EnumName(*n.ingress->host_loopback, kActionNames);
      }
      net["ingress"] = std::move(ingress);
    }
    out["network"] = std::move(net);
  }
  if (c.runtime_network_proxy) out["runtimeConfig"] = {{"networkProxy", *c.runtime_network_proxy}};
  return out;
}

// --- Mapping ---------------------------------------------------------------------------------

namespace {

Error Unsupported(std::string message) {
  return MakeError(ErrorCode::kUnsupported, std::move(message));
}

// What MapNetwork gives: the request's network and, when the config names its own proxy,
// the "host:port" the supervisor's proxy forwards to.
struct NetworkMapping {
  Network network;
  std::string upstream;
};

NetworkMapping Posture(NetworkMode mode) { return {NetworkWithMode(mode), {}}; }

// The upstream for a proxy URL (ProxyUrlProblem accepted it). agentbox's bridge speaks plain
// HTTP proxy protocol to the upstream, so a proxy that wants TLS to itself cannot be used.
Result<std::string> UpstreamFromUrl(std::string_view url, std::string_view field) {
  if (url.starts_with("https://")) {
    return Unsupported(std::string(field) +
                       ": an https:// proxy (TLS to the proxy itself) is not supported: "
                       "agentbox's bridge speaks plain HTTP to the proxy. Use http:// "
                       "(https requests still travel through it as encrypted CONNECT tunnels)");
  }
  const std::string_view authority = ProxyUrlAuthority(url);
  std::string_view host = authority.substr(0, authority.rfind(':'));
  if (host.starts_with('[')) host = host.substr(1, host.size() - 2);
  // The supervisor's proxy takes the host as NormalizeHost does (no '_', which URLs allow).
  if (auto name = net::NormalizeHost(host); !name) {
    return Unsupported(std::string(field) +
                       ": the proxy's host cannot be used: " + name.error().Message());
  }
  return std::string(authority);
}

// Ranges that reach this host's own loopback when agentbox's proxy (which runs on the host)
// connects to them. Inside an MXC sandbox, loopback is the sandbox's own, which agentbox's
// sandbox has too, so an allowedHosts entry must never open the host's.
bool TouchesHostLoopback(const net::Cidr& cidr) {
  for (const char* text :
       {"0.0.0.0/8", "127.0.0.0/8", "::/127", "::ffff:0.0.0.0/104", "::ffff:127.0.0.0/104"}) {
    const auto loopback = net::ParseCidr(text);
    if (loopback && (net::CidrCovers(cidr, *loopback) || net::CidrCovers(*loopback, cidr))) {
      return true;
    }
  }
  return false;
}

constexpr std::string_view kHostPatterns =
    "entries are host names (\"example.com\"), \"*.example.com\" for its subdomains, each "
    "optionally with \":port\" (without one, ports 80 and 443)";

// allowedHosts -> allow_domains (and, through agentbox's own proxy, addresses and CIDR ranges
// -> allow_cidrs, any port); blockedHosts -> deny_domains (any port).
Status MapHostLists(const MxcNetwork& n, bool upstream, Network& out) {
  const std::pair<const std::optional<std::vector<std::string>>*, bool> lists[] = {
      {&n.allowed_hosts, true}, {&n.blocked_hosts, false}};
  for (const auto& [list, allowed] : lists) {
    if (!*list) continue;
    const std::string field = allowed ? "/network/allowedHosts/" : "/network/blockedHosts/";
    for (size_t i = 0; i < (*list)->size(); ++i) {
      const std::string& entry = (**list)[i];
      const std::string where = field + std::to_string(i) + ": " + QuoteForMessage(entry) + ": ";
      // Anything the C library would take for an address (inet_aton's "127.1" included), with
      // or without ":port", is an address entry, never a name.
      const std::string_view before_port = std::string_view(entry).substr(0, entry.rfind(':'));
      if (net::ParseIpLiteral(entry) || net::ParseIpLiteral(before_port) ||
          entry.find('/') != std::string::npos) {
        if (!allowed) {
          return Unsupported(where +
                             "agentbox's proxy matches blocked hosts by name, so it cannot keep "
                             "an address from being reached under a name; list host names");
        }
        if (upstream) {
          return Unsupported(where +
                             "with network.proxy the proxy resolves names itself, so agentbox "
                             "can check only names before forwarding; list host names, or drop "
                             "network.proxy to have agentbox's own proxy enforce addresses");
        }
        auto cidr = net::ParseCidr(entry);
        if (!cidr) {
          return Unsupported(where + cidr.error().Message() +
                             " (write an IPv4 dotted quad, an IPv6 address, or a CIDR range)");
        }
        if (TouchesHostLoopback(*cidr)) {
          return Unsupported(where +
                             "the range includes loopback or unspecified addresses: agentbox's "
                             "proxy would reach this host's own loopback (the sandbox's own "
                             "loopback is always reachable); list a narrower range");
        }
        out.allow_cidrs.push_back(net::FormatCidr(*cidr));
        continue;
      }
      auto pattern = ParseDomainPattern(entry);
      if (!pattern) {
        std::string hint = entry == "*" ? "; for every host, use defaultPolicy \"allow\" with "
                                          "network.proxy"
                                        : "";
        return Unsupported(where + "not a host pattern agentbox's proxy can match; " +
                           std::string(kHostPatterns) + hint);
      }
      (allowed ? out.allow_domains : out.deny_domains).push_back(FormatDomainPattern(*pattern));
    }
  }
  return {};
}

Result<NetworkMapping> MapNetwork(const MxcConfig& c, const MxcMapOptions& options) {
  const MxcIngress ingress = c.network && c.network->ingress ? *c.network->ingress : MxcIngress{};
  const bool ingress_allowed = ingress.default_action == MxcNetAction::kAllow ||
                               ingress.host_loopback == MxcNetAction::kAllow;
  constexpr std::string_view kNoWayIn =
      "network.ingress \"allow\" with egress denied cannot be enforced: the sandbox's private "
      "network namespace has no way in. Use ingress \"deny\"";
  if (c.runtime_network_proxy) {
    // The parser made sure: version 0.8+, a loopback URL with a port, egress denied with no
    // rules, no legacy network fields.
    if (ingress_allowed) return Unsupported(std::string(kNoWayIn));
    auto upstream = UpstreamFromUrl(*c.runtime_network_proxy, "runtimeConfig.networkProxy");
    if (!upstream) return upstream.error();
    return NetworkMapping{NetworkWithMode(NetworkMode::kProxy), std::move(*upstream)};
  }
  if (!c.network) return Posture(NetworkMode::kBlock);
  const MxcNetwork& n = *c.network;
  if (n.egress || n.ingress) {
    const MxcEgress egress = n.egress.value_or(MxcEgress{});
    if (!egress.allow.empty() || !egress.deny.empty()) {
      return Unsupported(
          "network.egress allow/deny rules (CIDRs and ports) cannot be enforced by agentbox: "
          "it has no per-destination firewall. Remove the rules; egress is then all or nothing");
    }
    const MxcNetAction out_default = egress.default_action.value_or(MxcNetAction::kDeny);
    if (out_default == MxcNetAction::kDeny) {
      if (ingress_allowed) return Unsupported(std::string(kNoWayIn));
      return Posture(NetworkMode::kBlock);
    }
    if (ingress.default_action == MxcNetAction::kAllow &&
        ingress.host_loopback == MxcNetAction::kAllow) {
      return Posture(NetworkMode::kAllow);
    }
    return Unsupported(
        "network.egress default \"allow\" needs the host's network, which also lets the "
        "sandbox reach host loopback services and accept connections; acknowledge that with "
        "network.ingress {\"default\": \"allow\", \"hostLoopback\": \"allow\"}, or deny egress");
  }
  if (n.proxy && n.proxy->kind == MxcProxy::Kind::kBuiltinTestServer) {
    if (!options.allow_testing_features) {
      return Unsupported(
          "network.proxy.builtinTestServer is a testing-only feature and requires the "
          "--allow-testing-features flag; for production, point network.proxy at a real "
          "HTTP proxy via 'localhost' or 'url'");
    }
    return Unsupported("network.proxy.builtinTestServer: agentbox has no built-in test proxy");
  }
  const bool allow = n.default_policy.value_or(MxcNetPolicy::kBlock) == MxcNetPolicy::kAllow;
  if (allow && NonEmpty(n.allowed_hosts)) {
    return Unsupported(
        "network.allowedHosts take effect only with defaultPolicy \"block\" (then only they are "
        "reachable); with \"allow\" every host is reachable already. Set defaultPolicy "
        "\"block\", or remove allowedHosts");
  }
  if (n.proxy) {
    // The parser made sure: no firewall enforcementMode, and block comes with allowedHosts.
    NetworkMapping out = Posture(NetworkMode::kProxy);
    if (n.proxy->kind == MxcProxy::Kind::kLocalhost) {
      out.upstream = "127.0.0.1:" + std::to_string(n.proxy->port);
    } else {
      auto upstream = UpstreamFromUrl(n.proxy->url, "network.proxy.url");
      if (!upstream) return upstream.error();
      out.upstream = std::move(*upstream);
    }
    if (Status s = MapHostLists(n, /*upstream=*/true, out.network); !s) return s.error();
    return out;
  }
  if (!allow) {
    // blockedHosts alone change nothing: every host is blocked already.
    if (!NonEmpty(n.allowed_hosts)) return Posture(NetworkMode::kBlock);
    NetworkMapping out = Posture(NetworkMode::kProxy);
    if (Status s = MapHostLists(n, /*upstream=*/false, out.network); !s) return s.error();
    return out;
  }
  if (NonEmpty(n.blocked_hosts)) {
    return Unsupported(
        "network.blockedHosts with defaultPolicy \"allow\" and no network.proxy cannot be "
        "enforced: agentbox's own egress proxy reaches only listed hosts. Name a proxy in "
        "network.proxy (blockedHosts are then refused before it), or use defaultPolicy "
        "\"block\" with allowedHosts");
  }
  if (AtLeast08(c.version) && !n.allow_local_network.value_or(false)) {
    return Unsupported(
        "network.defaultPolicy \"allow\" shares the host's network namespace, so the sandbox "
        "can also bind, listen and accept on host-local addresses; schema 0.8 requires "
        "acknowledging that with network.allowLocalNetwork true. For an unreachable sandbox "
        "use defaultPolicy \"block\"");
  }
  return Posture(NetworkMode::kAllow);
}

// The shell takes its script from kMxcScriptVariable and unsets it first, so neither the
// program nor its children see it, and `$#`/`$@` are empty as with `sh -c SCRIPT`.
std::string ShellWrapper() {
  const std::string var(kMxcScriptVariable);
  return "set -- \"$" + var + "\"; unset " + var + "; eval \"set --;$1\"";
}

}  // namespace

Result<MxcRun> MapMxcConfig(const MxcConfig& c, const MxcMapOptions& options) {
  if (!RunsAgentboxSandbox(c.containment)) {
    return Unsupported(std::string("containment \"") + MxcContainmentName(c.containment) +
                       "\" is not available on this host: agentbox runs MXC configs in its own "
                       "Linux sandbox, with containment \"process\" (the default) or "
                       "\"bubblewrap\"");
  }
  auto network = MapNetwork(c, options);
  if (!network) return network.error();

  MxcRun run;
  PolicyDocument& doc = run.request.doc;
  const std::pair<const std::vector<std::string>*, const char*> lists[] = {
      {&c.readwrite_paths, "readwritePaths"},
      {&c.readonly_paths, "readonlyPaths"},
      {&c.denied_paths, "deniedPaths"}};
  for (const auto& [list, name] : lists) {
    for (size_t i = 0; i < list->size(); ++i) {
      const std::string& path = (*list)[i];
      if (path[0] != '/') {
        return MakeError(ErrorCode::kPolicy, "/filesystem/" + std::string(name) + "/" +
                                                 std::to_string(i) + ": " + QuoteForMessage(path) +
                                                 " is not an absolute path");
      }
    }
  }
  doc.filesystem.readwrite = c.readwrite_paths;
  doc.filesystem.readonly = c.readonly_paths;
  doc.filesystem.denied = c.denied_paths;
  doc.network = std::move(network->network);
  run.upstream_proxy = std::move(network->upstream);
  doc.timeout_ms = c.timeout_ms == 0 ? kMxcNoTimeoutMs : c.timeout_ms;

  if (c.cwd && (*c.cwd)[0] != '/') {
    return MakeError(ErrorCode::kPolicy,
                     "/process/cwd: " + QuoteForMessage(*c.cwd) + " is not an absolute path");
  }
  run.cwd = c.cwd;

  // SEC-19 as MXC has it: the environment is exactly the config's; the last duplicate wins
  // and keeps the place of the first; entries without '=' are dropped.
  std::vector<std::pair<std::string, std::string>> env;
  std::map<std::string, size_t, std::less<>> index;
  for (const std::string& entry : c.env) {
    const size_t eq = entry.find('=');
    if (eq == std::string::npos || eq == 0) continue;
    std::string name = entry.substr(0, eq);
    if (name == kMxcScriptVariable) {
      return MakeError(ErrorCode::kPolicy, "/process/env: " + name +
                                               " is reserved: agentbox hands the script to the "
                                               "shell in it");
    }
    std::string value = entry.substr(eq + 1);
    if (auto it = index.find(name); it != index.end()) {
      env[it->second].second = std::move(value);
    } else {
      index.emplace(name, env.size());
      env.emplace_back(std::move(name), std::move(value));
    }
  }
  for (auto& [name, value] : env) {
    run.env_names.push_back(name);
    run.env.push_back(name + "=" + value);
  }
  run.env.push_back(std::string(kMxcScriptVariable) + "=" + c.command_line);
  run.argv = {"sh", "-c", ShellWrapper()};
  return run;
}

}  // namespace agentbox
