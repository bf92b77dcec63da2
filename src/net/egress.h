// Egress rules: what the per-run proxy lets out of a sandbox in proxy mode, and the record
// of every decision it took (docs/network.md).
//
//   auto rules = EgressRulesFor(policy.network, "");    // parsed once, before the run
//   if (auto why = CheckDestination(*rules, "files.pypi.org", 443); !why.empty()) refuse(why);
//   for (const net::IpAddress& a : resolved)
//     if (CheckAddress(*rules, a).empty()) connect(a);
//
// Order (SEC-26, SEC-27): the name is checked before it is resolved (deny wins over allow;
// an IP literal must itself be allowed), then every address it resolves to is checked, so
// an allowed name that resolves to 169.254.169.254 or 127.0.0.1 goes nowhere.
#pragma once

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "base/result.h"
#include "net/address.h"
#include "policy/domain.h"
#include "policy/policy.h"

namespace agentbox {

struct EgressRules {
  std::vector<DomainPattern> allow;
  std::vector<DomainPattern> deny;
  std::vector<net::Cidr> allow_cidrs;
  std::map<std::string, net::IpAddress> pins;  // --resolve: lowercase name -> address
  std::vector<net::IpAddress> host_addresses;  // this host's own, refused like loopback
  // MXC configs that name their own proxy: allowed requests go, unchanged, to this
  // "host:port", which resolves and connects. Without allow entries every host is allowed.
  std::string upstream;  // as given, for messages
  std::string upstream_host;
  uint16_t upstream_port = 0;
  bool any_host = false;
};

// Parses a proxy-mode Network (already clamped, so already valid) and snapshots the host's
// addresses. upstream: "" or "host:port" ("[v6]:port"). Errors: kPolicy for an entry that
// does not parse.
[[nodiscard]] Result<EgressRules> EgressRulesFor(const Network& network, std::string upstream);

// Empty when host:port may be contacted (before resolution); else why not, one sentence.
// host is normalized (lowercase, no trailing dot; an IP literal in canonical form).
[[nodiscard]] std::string CheckDestination(const EgressRules& rules, const std::string& host,
                                           uint16_t port);

// Empty when the resolved address may be contacted; else why not.
[[nodiscard]] std::string CheckAddress(const EgressRules& rules, const net::IpAddress& address);

// One decision of the proxy, in the order taken.
struct ConnectionRecord {
  std::string protocol;  // "http" | "connect" | "socks5" | "upstream"
  std::string host;      // as the program asked for it (normalized); empty if unparsable
  uint16_t port = 0;
  bool allowed = false;
  std::string reason;   // why refused, or what failed after the allow (empty: connected)
  std::string address;  // the address connected to, if any
};

}  // namespace agentbox
