#include "net/egress.h"

#include <algorithm>

#include "net/proxy_protocol.h"

namespace agentbox {
namespace {

bool InAllowedRange(const EgressRules& rules, const net::IpAddress& address) {
  return std::any_of(rules.allow_cidrs.begin(), rules.allow_cidrs.end(),
                     [&](const net::Cidr& c) { return net::CidrContains(c, address); });
}

// A deny entry without a port refuses the host on every port (an allow entry without one
// admits only 80 and 443).
bool Denied(const DomainPattern& deny, const std::string& host, uint16_t port) {
  DomainPattern any_port = deny;
  if (!any_port.port) any_port.port = port;
  return DomainMatches(any_port, host, port);
}

}  // namespace

Result<EgressRules> EgressRulesFor(const Network& network, std::string upstream) {
  EgressRules rules;
  rules.upstream = std::move(upstream);
  for (const auto& [list, out] : {std::pair{&network.allow_domains, &rules.allow},
                                  std::pair{&network.deny_domains, &rules.deny}}) {
    for (const std::string& entry : *list) {
      auto pattern = ParseDomainPattern(entry);
      if (!pattern) return pattern.error();
      out->push_back(*pattern);
    }
  }
  for (const std::string& entry : network.allow_cidrs) {
    auto cidr = net::ParseCidr(entry);
    if (!cidr) return cidr.error();
    rules.allow_cidrs.push_back(*cidr);
  }
  for (const std::string& pin : network.resolve) {
    auto parsed = net::ParseResolvePin(pin);
    if (!parsed) return parsed.error();
    rules.pins[parsed->name] = parsed->address;
  }
  if (!rules.upstream.empty()) {
    const size_t colon = rules.upstream.rfind(':');
    std::string_view host = std::string_view(rules.upstream).substr(0, colon);
    if (host.size() >= 2 && host.front() == '[' && host.back() == ']') {
      host = host.substr(1, host.size() - 2);
    }
    auto name = net::NormalizeHost(host);
    unsigned long port = 0;
    const std::string port_text =
        colon == std::string::npos ? "" : rules.upstream.substr(colon + 1);
    const bool port_ok = !port_text.empty() && port_text.size() <= 5 &&
                         port_text.find_first_not_of("0123456789") == std::string::npos &&
                         (port = std::stoul(port_text)) >= 1 && port <= 65535;
    if (!name || !port_ok) {
      return MakeError(ErrorCode::kPolicy,
                       "upstream proxy \"" + rules.upstream + "\" is not HOST:PORT");
    }
    rules.upstream_host = *name;
    rules.upstream_port = static_cast<uint16_t>(port);
  }
  rules.any_host = !rules.upstream.empty() && rules.allow.empty() && rules.allow_cidrs.empty();
  auto host_addresses = net::HostAddresses();
  if (!host_addresses) return host_addresses.error();  // the check needs them: fail closed
  rules.host_addresses = std::move(*host_addresses);
  return rules;
}

std::string CheckDestination(const EgressRules& rules, const std::string& host, uint16_t port) {
  const std::string where = host + ":" + std::to_string(port);
  for (const DomainPattern& d : rules.deny) {
    if (Denied(d, host, port)) return "denied by --deny-domain " + FormatDomainPattern(d);
  }
  if (rules.any_host) return {};
  if (const auto literal = net::ParseIpLiteral(host)) {
    // SEC-26: an address is reached only if it was named as such: a wildcard entry is about
    // names, and "*.3.4" must not admit 1.2.3.4.
    const bool named = std::any_of(rules.allow.begin(), rules.allow.end(), [&](auto& d) {
      return !d.wildcard && DomainMatches(d, host, port);
    });
    if (named || InAllowedRange(rules, *literal)) return {};
    return "the IP address " + host + " is not allowed (only names on the allowlist are; " +
           "allow an address with --allow-cidr)";
  }
  if (std::any_of(rules.allow.begin(), rules.allow.end(),
                  [&](const DomainPattern& d) { return DomainMatches(d, host, port); })) {
    return {};
  }
  const bool other_port = std::any_of(rules.allow.begin(), rules.allow.end(), [&](auto& d) {
    DomainPattern any_port = d;
    any_port.port = port;
    return DomainMatches(any_port, host, port);
  });
  if (other_port) {
    return "port " + std::to_string(port) + " of " + host +
           " is not allowed (an entry without :port allows 80 and 443)";
  }
  return where + " is not on the allowlist (--allow-domain)";
}

std::string CheckAddress(const EgressRules& rules, const net::IpAddress& address) {
  // SEC-27: after resolution, whatever the name: no loopback, link-local (the cloud
  // metadata service), private, unique-local, multicast or host address unless the
  // operator allowed that range.
  if (InAllowedRange(rules, address)) return {};
  const std::string text = net::FormatIp(address);
  if (const char* range = net::SpecialRange(address)) {
    return "resolves to " + text + ", a " + range + " address (allow it with --allow-cidr)";
  }
  if (std::find(rules.host_addresses.begin(), rules.host_addresses.end(), address) !=
      rules.host_addresses.end()) {
    return "resolves to " + text + ", an address of this host (allow it with --allow-cidr)";
  }
  return {};
}

}  // namespace agentbox
