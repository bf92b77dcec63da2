// Domain patterns for proxy egress: "host", "*.suffix", each optionally ":port".
//
//   auto p = ParseDomainPattern("*.PyPI.org");     // wildcard, suffix "pypi.org", ports 80+443
//   DomainMatches(*p, "files.pypi.org", 443)        -> true
//   DomainMatches(*p, "pypi.org", 443)              -> false ("*." matches subdomains only)
//   DomainCovers(*ParseDomainPattern("*.org"), *p)  -> true (every host p admits, *.org admits)
//
// Names are compared in their ASCII (IDNA A-label) form, case-insensitively; a non-ASCII
// name is refused so that a look-alike Unicode name cannot match by accident.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

#include "base/result.h"

namespace agentbox {

struct DomainPattern {
  bool wildcard = false;         // "*.suffix": any name strictly beneath suffix
  std::string name;              // lowercase host, or the suffix when wildcard
  std::optional<uint16_t> port;  // nullopt: the default web ports, 80 and 443

  bool operator==(const DomainPattern&) const = default;
};

[[nodiscard]] Result<DomainPattern> ParseDomainPattern(std::string_view text);
[[nodiscard]] std::string FormatDomainPattern(const DomainPattern& pattern);

// True iff a connection to host:port is admitted by the pattern. host must be lowercase.
[[nodiscard]] bool DomainMatches(const DomainPattern& pattern, std::string_view host,
                                 uint16_t port);

// True iff every (host, port) that `inner` admits, `outer` admits too.
[[nodiscard]] bool DomainCovers(const DomainPattern& outer, const DomainPattern& inner);

}  // namespace agentbox
