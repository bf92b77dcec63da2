// Policy types: what an operator allows (Ceiling), what an agent asks (Request), and what a
// run gets (Policy, the effective policy), plus the Decisions that explain every narrowing.
//
// The same document shape serves ceilings and requests (see config/policy_json.h):
//   {"filesystem": {"readonly": [...], "readwrite": [...], "denied": [...]},
//    "network": "block" | "allow" |
//               {"proxy": {"allowDomains": [...], "denyDomains": [...],
//                          "allowCidrs": [...], "resolve": {"name": "ip", ...}}},
//    "timeoutMs": N, "limits": {"pids": N, "memoryBytes": N, "cpuSeconds": N}}
//
// Paths in a PolicyDocument are as written (may be relative or start with ~); paths in a
// Policy are canonical (absolute, symlinks resolved), produced by Clamp() in clamp.h.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

namespace agentbox {

// Ordered from most to least restrictive: the clamp only ever moves a request down.
enum class NetworkMode { kBlock = 0, kProxy = 1, kAllow = 2 };

struct Network {
  NetworkMode mode = NetworkMode::kBlock;
  // Only meaningful in kProxy mode. Entries: "host", "*.suffix", optionally ":port".
  std::vector<std::string> allow_domains;
  std::vector<std::string> deny_domains;
  // Address ranges the proxy may reach although they are loopback, private, link-local...
  // (refused by default), and IP literals it may reach at all: "10.0.0.0/8", "::1/128".
  std::vector<std::string> allow_cidrs;
  // Names the proxy resolves to a fixed address instead of asking DNS: "name=ip" (as curl's
  // --resolve). The address still has to pass the range checks above.
  std::vector<std::string> resolve;

  bool operator==(const Network&) const = default;
};

inline Network NetworkWithMode(NetworkMode mode) {
  Network network;
  network.mode = mode;
  return network;
}

struct Limits {
  std::optional<uint64_t> pids;
  std::optional<uint64_t> memory_bytes;
  std::optional<uint64_t> cpu_seconds;

  bool operator==(const Limits&) const = default;
};

struct FilesystemRules {
  std::vector<std::string> readonly;
  std::vector<std::string> readwrite;
  std::vector<std::string> denied;

  bool operator==(const FilesystemRules&) const = default;
};

// A parsed policy file or environment ceiling, before canonicalization. Absent fields are
// distinguishable from present ones so that defaults are applied in one place (clamp.cc).
struct PolicyDocument {
  FilesystemRules filesystem;
  std::optional<Network> network;
  std::optional<uint64_t> timeout_ms;
  Limits limits;

  bool operator==(const PolicyDocument&) const = default;
};

// The operator's upper bound, and the agent's request: same shape, different role.
struct Ceiling {
  PolicyDocument doc;
};
struct Request {
  PolicyDocument doc;
};

inline constexpr uint64_t kDefaultTimeoutMs = 30'000;

// The effective policy of one run. Every path is canonical and absolute. For the sandbox,
// the most specific path wins across the three lists (a denied child of a read-write
// parent is hidden; a read-only child of a read-write parent is read-only).
struct Policy {
  FilesystemRules filesystem;
  Network network;
  uint64_t timeout_ms = kDefaultTimeoutMs;
  Limits limits;

  bool operator==(const Policy&) const = default;
};

enum class Access { kNone, kReadOnly, kReadWrite };

// Why the clamp narrowed or dropped something. kind tells what `subject` names.
enum class DecisionKind { kPath, kNetwork, kDomain, kTimeout, kLimit };

struct Decision {
  DecisionKind kind = DecisionKind::kPath;
  std::string subject;  // canonical path (or the path as written if it never resolved),
                        // "network", a domain entry, "timeoutMs", "limits.pids", ...
  std::string asked;    // e.g. "readwrite", "allow", "60000"
  std::string granted;  // e.g. "readonly", "none", "block", "30000"
  std::string reason;   // one sentence a person or a model can act on

  bool operator==(const Decision&) const = default;
};

struct ClampResult {
  Policy policy;
  std::vector<Decision> decisions;
};

const char* AccessName(Access access);          // "none" | "readonly" | "readwrite"
const char* NetworkModeName(NetworkMode mode);  // "block" | "proxy" | "allow"
const char* DecisionKindName(DecisionKind kind);

}  // namespace agentbox
