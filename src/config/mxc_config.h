// MXC one-shot configs (Microsoft eXecution Containers, the JSON that `lxc-exec` takes):
// one strict wire model for schemas 0.6.0-alpha .. 0.8.0-alpha (0.9 and a missing version
// accepted too), parsed into a typed MxcConfig, then mapped onto agentbox's own request.
// The contract is reference/MXC-CONTRACT.md; the CLI face is cli/cmd_exec.cc.
//
//   auto config = ParseMxcConfig(text, "config.json");
//   if (!config) ...;              // exit 1: "Configuration parse error: <where and why>"
//   auto run = MapMxcConfig(*config, {});
//   if (!run) ...;                 // exit 255: valid MXC, but not enforceable here
//   Clamp(Ceiling{run->request.doc}, run->request, ctx) ... BuildSandboxPlan(...)
//
// Two error regimes, as lxc-exec has them: ParseMxcConfig fails (code kPolicy) on anything
// malformed — bad JSON, duplicate keys, unknown fields at any level, wrong types, numbers
// out of range, empty/NUL/`"` paths, an unsupported version, state-aware fields, an unknown
// containment, a second backend section, mixed network forms, and the proxy combinations
// lxc-exec 0.8 refuses while parsing (a proxy URL without a port; runtimeConfig.networkProxy
// off loopback or beside direct egress rules; an external network.proxy with
// enforcementMode firewall/both, or with defaultPolicy block and no allowedHosts, which would
// let nothing through). MapMxcConfig fails (kUnsupported or kPolicy) on well-formed configs
// that agentbox will not run: another backend, host lists it cannot enforce, CIDR egress
// rules, relative paths, a reserved environment name. Nothing is accepted and then ignored in
// a way that widens access.
#pragma once

#include <cstdint>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "base/result.h"
#include "policy/policy.h"

namespace agentbox {

// Every containment value the MXC 0.8 parser knows. kProcess and kBubblewrap run agentbox's
// sandbox; the rest are refused as not available on this host.
enum class MxcContainment {
  kProcess,
  kBubblewrap,
  kLxc,
  kProcessContainer,
  kAppContainer,
  kSeatbelt,
  kMacosSandbox,
  kVm,
  kWindowsSandbox,
  kWslc,
  kIsolationSession,
  kMicrovm,
  kHyperlight,
};
inline constexpr MxcContainment kAllMxcContainments[] = {MxcContainment::kProcess,
                                                         MxcContainment::kBubblewrap,
                                                         MxcContainment::kLxc,
                                                         MxcContainment::kProcessContainer,
                                                         MxcContainment::kAppContainer,
                                                         MxcContainment::kSeatbelt,
                                                         MxcContainment::kMacosSandbox,
                                                         MxcContainment::kVm,
                                                         MxcContainment::kWindowsSandbox,
                                                         MxcContainment::kWslc,
                                                         MxcContainment::kIsolationSession,
                                                         MxcContainment::kMicrovm,
                                                         MxcContainment::kHyperlight};
[[nodiscard]] const char* MxcContainmentName(MxcContainment containment);  // wire spelling
[[nodiscard]] bool RunsAgentboxSandbox(MxcContainment containment);

// Backend-specific top-level sections. Their contents are checked strictly but do not change
// a one-shot run on Linux.
enum class MxcBackendSection { kLxc, kProcessContainer, kAppContainer, kSeatbelt };
[[nodiscard]] const char* MxcBackendSectionName(MxcBackendSection section);  // JSON key

struct MxcVersion {
  uint64_t major = 0;
  uint64_t minor = 0;
  uint64_t patch = 0;
  std::string text;  // as written, e.g. "0.8.0-alpha"

  bool operator==(const MxcVersion&) const = default;
};
inline constexpr uint64_t kMxcMinMinor = 6;  // supported: >= 0.6, <= 0.9 (major 0)
inline constexpr uint64_t kMxcMaxMinor = 9;

enum class MxcNetPolicy { kAllow, kBlock };
enum class MxcEnforcement { kCapabilities, kFirewall, kBoth };
enum class MxcNetAction { kAllow, kDeny };
enum class MxcProtocol { kTcp, kUdp, kIcmp, kAny };

struct MxcProxy {
  enum class Kind { kLocalhost, kUrl, kBuiltinTestServer };
  Kind kind = Kind::kLocalhost;
  uint16_t port = 0;  // kLocalhost: 1..65535
  std::string url;    // kUrl: http(s)://host:port[/...], no credentials

  bool operator==(const MxcProxy&) const = default;
};

struct MxcPort {
  std::optional<uint16_t> port;      // 1..65535
  std::optional<uint16_t> end_port;  // needs port, >= port
  std::optional<MxcProtocol> protocol;

  bool operator==(const MxcPort&) const = default;
};

struct MxcPeer {
  std::string cidr;  // IPv4 or IPv6 address, optionally "/prefix"
  std::vector<std::string> except;

  bool operator==(const MxcPeer&) const = default;
};

struct MxcRule {
  std::optional<std::vector<MxcPeer>> to;     // present: at least one
  std::optional<std::vector<MxcPort>> ports;  // present: at least one

  bool operator==(const MxcRule&) const = default;
};

struct MxcEgress {
  std::optional<MxcNetAction> default_action;  // absent: deny
  std::vector<MxcRule> allow;
  std::vector<MxcRule> deny;

  bool operator==(const MxcEgress&) const = default;
};

struct MxcIngress {
  std::optional<MxcNetAction> default_action;  // absent: deny
  std::optional<MxcNetAction> host_loopback;   // absent: deny

  bool operator==(const MxcIngress&) const = default;
};

// `network`: the legacy form (every version) or the 0.8 directional form, never both.
struct MxcNetwork {
  // Legacy form.
  std::optional<MxcNetPolicy> default_policy;  // absent: block
  std::optional<bool> allow_local_network;
  std::optional<std::vector<std::string>> allowed_hosts;
  std::optional<std::vector<std::string>> blocked_hosts;
  std::optional<MxcEnforcement> enforcement_mode;
  std::optional<MxcProxy> proxy;
  // Directional form (version >= 0.8).
  std::optional<MxcEgress> egress;
  std::optional<MxcIngress> ingress;

  bool operator==(const MxcNetwork&) const = default;
};

struct MxcConfig {
  std::optional<MxcVersion> version;  // absent: pre-0.8 network rules
  MxcContainment containment = MxcContainment::kProcess;
  std::optional<MxcBackendSection> backend_section;
  std::optional<std::string> container_id;

  std::string command_line;        // non-empty, no NUL
  std::optional<std::string> cwd;  // non-empty ("" reads as unset), no NUL; used verbatim
  std::vector<std::string> env;    // as written; each has no NUL and no empty name
  uint32_t timeout_ms = 0;         // 0: none

  std::vector<std::string> readwrite_paths;  // each non-empty, no NUL, no '"'
  std::vector<std::string> readonly_paths;
  std::vector<std::string> denied_paths;

  std::optional<MxcNetwork> network;
  std::optional<std::string> runtime_network_proxy;  // runtimeConfig.networkProxy (>= 0.8)

  bool operator==(const MxcConfig&) const = default;
};

// Parses one config. Errors: code kPolicy, context "<source>: <where>: <why>", where is a
// JSON pointer ("/process/timeout") or "top level".
[[nodiscard]] Result<MxcConfig> ParseMxcConfig(std::string_view text, std::string_view source);

// The invariants every config ParseMxcConfig returns satisfies, checked on the typed value
// alone (the fuzz target's property; the parser does not call it).
[[nodiscard]] Status CheckMxcInvariants(const MxcConfig& config);

// The config as JSON that ParseMxcConfig accepts and parses back to an equal MxcConfig
// (backend sections are written empty; fields that do not reach MxcConfig are omitted).
[[nodiscard]] nlohmann::json MxcConfigToJson(const MxcConfig& config);

// Parses "version" text: semver MAJOR.MINOR.PATCH[-pre][+build], no leading zeros, in the
// supported range. Errors name the supported range.
[[nodiscard]] Result<MxcVersion> ParseMxcVersion(std::string_view text);

// --- Mapping onto agentbox -------------------------------------------------------------------

// The sandboxed shell finds its script in this variable, which it unsets before running it,
// so the script is never on any process's argv (readable by every local user in /proc).
inline constexpr std::string_view kMxcScriptVariable = "AGENTBOX_MXC_COMMAND_LINE";

// process.timeout 0 or absent: no timeout. agentbox's supervisor needs a finite deadline, so
// "none" is 100 years.
inline constexpr uint64_t kMxcNoTimeoutMs = uint64_t{100} * 365 * 24 * 3600 * 1000;

struct MxcMapOptions {
  bool allow_testing_features = false;  // --allow-testing-features
};

// What one MXC config asks of agentbox.
struct MxcRun {
  Request request;                     // filesystem lists as written (absolute), network, timeout
  std::vector<std::string> argv;       // {"sh", "-c", <wrapper>}: run as /bin/sh (see cmd_exec)
  std::vector<std::string> env;        // config env (last duplicate wins, first-seen order, no
                                       // entries without '='), then kMxcScriptVariable
  std::vector<std::string> env_names;  // the config's variable names, for diagnostics
  std::optional<std::string> cwd;      // process.cwd verbatim
  // "host:port" ("[v6]:port") of the config's own proxy (network.proxy localhost/url,
  // runtimeConfig.networkProxy), for SandboxRequest.upstream_proxy; request.doc.network is
  // then kProxy. Empty otherwise.
  std::string upstream_proxy;
};

// The network a config gets (request.doc.network, MxcRun.upstream_proxy):
// - no network section, defaultPolicy block with no allowedHosts, 0.8 egress deny with no
//   rules: kBlock (loopback only);
// - defaultPolicy allow (0.8: with allowLocalNetwork true), 0.8 egress/ingress/hostLoopback all
//   allow: kAllow (the host's network);
// - network.proxy {localhost: P} (upstream 127.0.0.1:P) or {url: "http://host:port"} (upstream
//   host:port), and runtimeConfig.networkProxy: kProxy, the sandbox reaching only that proxy
//   through agentbox's bridge. allowedHosts become allow_domains (then only they are
//   forwarded; without them, every host is), blockedHosts deny_domains;
// - defaultPolicy block with allowedHosts and no proxy: kProxy through agentbox's own proxy,
//   no upstream: names become allow_domains, IP addresses and CIDR ranges allow_cidrs,
//   blockedHosts deny_domains.
// Errors: kUnsupported (a backend other than process/bubblewrap; an https:// proxy; host lists
// that cannot be enforced: allowedHosts with defaultPolicy allow, blockedHosts with allow and
// no proxy, an entry that is neither a host pattern (policy/domain.h) nor, where addresses are
// allowed, an address or CIDR; a range touching loopback; CIDR egress rules; a network posture
// that cannot be enforced) or kPolicy (a relative path, a reserved variable name); the message
// says what to change.
[[nodiscard]] Result<MxcRun> MapMxcConfig(const MxcConfig& config, const MxcMapOptions& options);

}  // namespace agentbox
