#include "policy/domain.h"

#include <algorithm>
#include <charconv>

#include "net/address.h"

namespace agentbox {
namespace {

bool IsLabelChar(char c) { return (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') || c == '-'; }

// A hostname: dot-separated labels of [a-z0-9-], 1..63 chars, not starting or ending with
// '-', total at most 253. IP literals are accepted as names of digits and dots.
bool IsValidHostName(std::string_view name) {
  if (name.empty() || name.size() > 253) return false;
  size_t start = 0;
  while (start <= name.size()) {
    size_t dot = name.find('.', start);
    if (dot == std::string_view::npos) dot = name.size();
    const std::string_view label = name.substr(start, dot - start);
    if (label.empty() || label.size() > 63) return false;
    if (label.front() == '-' || label.back() == '-') return false;
    if (!std::all_of(label.begin(), label.end(), IsLabelChar)) return false;
    start = dot + 1;
  }
  return true;
}

bool PortAdmitted(const std::optional<uint16_t>& allowed, uint16_t port) {
  if (allowed) return *allowed == port;
  return port == 80 || port == 443;
}

// True iff `host` lies strictly beneath `suffix` ("a.b.c" beneath "b.c", not "b.c" itself).
bool StrictlyBeneath(std::string_view host, std::string_view suffix) {
  return host.size() > suffix.size() + 1 &&
         host.compare(host.size() - suffix.size(), suffix.size(), suffix) == 0 &&
         host[host.size() - suffix.size() - 1] == '.';
}

}  // namespace

Result<DomainPattern> ParseDomainPattern(std::string_view text) {
  if (text.empty()) return PolicyValueError("domain", text, "empty");
  for (const char c : text) {
    if (static_cast<unsigned char>(c) >= 0x80) {
      return PolicyValueError("domain", text, "not ASCII; write the IDNA form (xn--...)");
    }
  }
  DomainPattern pattern;
  std::string_view rest = text;
  const size_t colon = rest.rfind(':');
  if (colon != std::string_view::npos) {
    const std::string_view port_text = rest.substr(colon + 1);
    unsigned value = 0;
    const auto [end, ec] =
        std::from_chars(port_text.data(), port_text.data() + port_text.size(), value);
    if (port_text.empty() || ec != std::errc() || end != port_text.data() + port_text.size() ||
        value == 0 || value > 65535) {
      return PolicyValueError("domain", text, "port must be a number from 1 to 65535");
    }
    pattern.port = static_cast<uint16_t>(value);
    rest = rest.substr(0, colon);
  }
  if (rest.size() >= 2 && rest.substr(0, 2) == "*.") {
    pattern.wildcard = true;
    rest = rest.substr(2);
  }
  std::string name(rest);
  std::transform(name.begin(), name.end(), name.begin(), [](char c) {
    return (c >= 'A' && c <= 'Z') ? static_cast<char>(c - 'A' + 'a') : c;
  });
  if (!name.empty() && name.back() == '.') name.pop_back();  // "example.com." is absolute form
  if (!IsValidHostName(name)) {
    return PolicyValueError("domain", text,
                            "expected host, *.suffix, optionally followed by :port");
  }
  // An address is kept in the one spelling the proxy compares ("127.1" is 127.0.0.1), so
  // a deny entry cannot be sidestepped by another spelling; a name cannot end in a number.
  if (const auto address = net::ParseIpLiteral(name)) {
    if (pattern.wildcard)
      return PolicyValueError("domain", text, "a wildcard applies to names, not addresses");
    name = net::FormatIp(*address);
  } else if (const size_t dot = name.rfind('.');
             name.find_first_not_of("0123456789", dot == std::string::npos ? 0 : dot + 1) ==
             std::string::npos) {
    return PolicyValueError("domain", text,
                            "neither a host name (its last label is a number) nor an address");
  }
  pattern.name = std::move(name);
  return pattern;
}

std::string FormatDomainPattern(const DomainPattern& pattern) {
  std::string out = pattern.wildcard ? "*." : "";
  out += pattern.name;
  if (pattern.port) {
    out += ':';
    out += std::to_string(*pattern.port);
  }
  return out;
}

bool DomainMatches(const DomainPattern& pattern, std::string_view host, uint16_t port) {
  if (!PortAdmitted(pattern.port, port)) return false;
  if (pattern.wildcard) return StrictlyBeneath(host, pattern.name);
  return host == pattern.name;
}

bool DomainCovers(const DomainPattern& outer, const DomainPattern& inner) {
  // Ports: inner's admitted ports must all be admitted by outer.
  if (outer.port) {
    if (inner.port != outer.port) return false;
  } else if (inner.port && *inner.port != 80 && *inner.port != 443) {
    return false;
  }
  // Names.
  if (!outer.wildcard) return !inner.wildcard && inner.name == outer.name;
  if (inner.wildcard) return inner.name == outer.name || StrictlyBeneath(inner.name, outer.name);
  return StrictlyBeneath(inner.name, outer.name);
}

}  // namespace agentbox
