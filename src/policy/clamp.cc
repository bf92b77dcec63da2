#include "policy/clamp.h"

#include <algorithm>
#include <set>

#include "net/address.h"
#include "net/proxy_protocol.h"
#include "policy/domain.h"
#include "policy/protected_paths.h"

namespace agentbox {
namespace {

struct Entry {
  std::string path;  // canonical
  Access access;
  std::string written;  // as the policy wrote it, for messages
};

std::string Prefixed(std::string_view who, const Error& error) {
  std::string out(who);
  out += ": ";
  out += error.Message();
  return out;
}

// SEC-21: refuses grants that would let the sandbox rewrite the whole system or the
// user's home (and so every rc file and credential in it), in ceilings and requests alike.
Status CheckWritable(const Entry& entry, const std::string& home, std::string_view who) {
  std::string why;
  if (entry.path == "/") {
    why = "a writable / is refused";
  } else if (!home.empty() && IsWithin(home, entry.path)) {
    why = entry.path == home ? "a writable home directory is refused; grant a project directory"
                             : "a writable ancestor of the home directory is refused";
  } else {
    return {};
  }
  std::string context(who);
  context += ": readwrite \"";
  context += entry.written;
  context += "\": ";
  context += why;
  return MakeError(ErrorCode::kPolicy, std::move(context));
}

// Canonical entries of one document. SEC-1: nothing is compared before this.
Result<std::vector<Entry>> Resolve(const FilesystemRules& rules, const PathContext& ctx,
                                   const std::string& home, std::string_view who) {
  std::vector<Entry> out;
  auto add = [&](const std::vector<std::string>& paths, Access access) -> Status {
    for (const std::string& written : paths) {
      auto canonical = access == Access::kNone ? CanonicalizeMaybeMissing(written, ctx)
                                               : Canonicalize(written, ctx);
      if (!canonical) {
        return MakeError(ErrorCode::kPolicy, Prefixed(who, canonical.error()));
      }
      Entry entry{*canonical, access, written};
      if (access == Access::kReadWrite) {
        if (Status s = CheckWritable(entry, home, who); !s) return s;
      }
      out.push_back(std::move(entry));
    }
    return {};
  };
  if (Status s = add(rules.readonly, Access::kReadOnly); !s) return s.error();
  if (Status s = add(rules.readwrite, Access::kReadWrite); !s) return s.error();
  if (Status s = add(rules.denied, Access::kNone); !s) return s.error();
  return out;
}

// The entry that decides access at `path`: the most specific one at or above it, the most
// restrictive if one path is listed twice. nullptr if none.
const Entry* Governing(const std::vector<Entry>& entries, const std::string& path) {
  const Entry* best = nullptr;
  for (const Entry& e : entries) {
    if (!IsWithin(path, e.path)) continue;
    if (best == nullptr || e.path.size() > best->path.size() ||
        (e.path.size() == best->path.size() && e.access < best->access)) {
      best = &e;
    }
  }
  return best;
}

Access AccessAt(const std::vector<Entry>& entries, const std::string& path) {
  const Entry* e = Governing(entries, path);
  return e == nullptr ? Access::kNone : e->access;
}

std::string CeilingReason(const Entry* governing, Access granted) {
  if (governing == nullptr) return "outside the operator's ceiling";
  if (governing->access == Access::kNone) {
    return "denied by the operator's ceiling (" + governing->path + ")";
  }
  if (granted == Access::kReadOnly) {
    return "the operator's ceiling allows this path read-only (" + governing->path + ")";
  }
  return "outside the operator's ceiling";
}

// Drops entries that repeat the access of their nearest ancestor (or that deny a path no
// grant reaches), then splits into the three lists. `entries` maps path -> access.
FilesystemRules Flatten(std::vector<Entry> entries) {
  std::sort(entries.begin(), entries.end(),
            [](const Entry& a, const Entry& b) { return PathLess(a.path, b.path); });
  FilesystemRules out;
  std::vector<const Entry*> ancestors;
  for (const Entry& e : entries) {
    while (!ancestors.empty() && !IsWithin(e.path, ancestors.back()->path)) ancestors.pop_back();
    const Access inherited = ancestors.empty() ? Access::kNone : ancestors.back()->access;
    ancestors.push_back(&e);
    if (e.access == inherited) continue;
    switch (e.access) {
      case Access::kNone:
        out.denied.push_back(e.path);
        break;
      case Access::kReadOnly:
        out.readonly.push_back(e.path);
        break;
      case Access::kReadWrite:
        out.readwrite.push_back(e.path);
        break;
    }
  }
  return out;
}

Result<std::vector<DomainPattern>> ParseDomains(const std::vector<std::string>& domains,
                                                std::string_view who) {
  std::vector<DomainPattern> out;
  for (const std::string& d : domains) {
    auto pattern = ParseDomainPattern(d);
    if (!pattern) return MakeError(ErrorCode::kPolicy, Prefixed(who, pattern.error()));
    out.push_back(*pattern);
  }
  return out;
}

std::string NetworkLabel(const Network& n) { return NetworkModeName(n.mode); }

Result<std::vector<net::Cidr>> ParseCidrs(const std::vector<std::string>& cidrs,
                                          std::string_view who) {
  std::vector<net::Cidr> out;
  for (const std::string& c : cidrs) {
    auto cidr = net::ParseCidr(c);
    if (!cidr) return MakeError(ErrorCode::kPolicy, Prefixed(who, cidr.error()));
    out.push_back(*cidr);
  }
  return out;
}

// "name=address" pins, canonical: lowercase name, the address in its standard spelling.
Result<std::set<std::string>> ParsePins(const std::vector<std::string>& pins,
                                        std::string_view who) {
  std::set<std::string> out;
  for (const std::string& pin : pins) {
    auto parsed = net::ParseResolvePin(pin);
    if (!parsed) return MakeError(ErrorCode::kPolicy, Prefixed(who, parsed.error()));
    out.insert(parsed->name + "=" + net::FormatIp(parsed->address));
  }
  return out;
}

// SEC-3 for the network: the mode only goes down (block < proxy < allow) and a proxy
// request keeps only the domains some ceiling entry covers; deny lists add up.
Result<Network> ClampNetwork(const std::optional<Network>& ceiling_net,
                             const std::optional<Network>& request_net,
                             std::vector<Decision>& decisions) {
  const Network ceiling = ceiling_net.value_or(Network{});
  const Network request = request_net.value_or(Network{});  // unmentioned: blocked
  // The request first: without --ceiling it is its own ceiling, and its errors should say
  // "request".
  auto request_allow = ParseDomains(request.allow_domains, "request");
  if (!request_allow) return request_allow.error();
  auto request_deny = ParseDomains(request.deny_domains, "request");
  if (!request_deny) return request_deny.error();
  auto request_cidrs = ParseCidrs(request.allow_cidrs, "request");
  if (!request_cidrs) return request_cidrs.error();
  auto request_pins = ParsePins(request.resolve, "request");
  if (!request_pins) return request_pins.error();
  auto ceiling_allow = ParseDomains(ceiling.allow_domains, "ceiling");
  if (!ceiling_allow) return ceiling_allow.error();
  auto ceiling_deny = ParseDomains(ceiling.deny_domains, "ceiling");
  if (!ceiling_deny) return ceiling_deny.error();
  auto ceiling_cidrs = ParseCidrs(ceiling.allow_cidrs, "ceiling");
  if (!ceiling_cidrs) return ceiling_cidrs.error();
  auto ceiling_pins = ParsePins(ceiling.resolve, "ceiling");
  if (!ceiling_pins) return ceiling_pins.error();

  Network out;
  if (request.mode <= ceiling.mode && request.mode != NetworkMode::kProxy) {
    out.mode = request.mode;
    return out;
  }
  if (ceiling.mode == NetworkMode::kBlock) {
    decisions.push_back({DecisionKind::kNetwork, "network", NetworkLabel(request), "block",
                         "the operator's ceiling blocks the network"});
    out.mode = NetworkMode::kBlock;
    return out;
  }
  out.mode = NetworkMode::kProxy;
  std::set<std::string> deny;
  for (const DomainPattern& d : *request_deny) deny.insert(FormatDomainPattern(d));
  if (ceiling.mode == NetworkMode::kProxy) {
    for (const DomainPattern& d : *ceiling_deny) deny.insert(FormatDomainPattern(d));
  }
  out.deny_domains.assign(deny.begin(), deny.end());

  if (request.mode == NetworkMode::kAllow) {  // ceiling is proxy: narrowed to its domains
    decisions.push_back({DecisionKind::kNetwork, "network", "allow", "proxy",
                         "the operator's ceiling allows only its proxy domains"});
    for (const DomainPattern& d : *ceiling_allow)
      out.allow_domains.push_back(FormatDomainPattern(d));
    for (const net::Cidr& c : *ceiling_cidrs) out.allow_cidrs.push_back(net::FormatCidr(c));
    out.resolve.assign(ceiling_pins->begin(), ceiling_pins->end());
    return out;
  }
  // SEC-28: address ranges the proxy would otherwise refuse (loopback, private, ...): the
  // operator's apply to every request, as its pins do (an internal mirror it allowed by
  // name, pin and range stays reachable to a request that names only the domain); a
  // request adds only ranges inside the operator's.
  std::set<std::string> cidrs;
  if (ceiling.mode == NetworkMode::kProxy) {
    for (const net::Cidr& c : *ceiling_cidrs) cidrs.insert(net::FormatCidr(c));
  }
  for (const net::Cidr& c : *request_cidrs) {
    const bool covered = ceiling.mode == NetworkMode::kAllow ||
                         std::any_of(ceiling_cidrs->begin(), ceiling_cidrs->end(),
                                     [&](const net::Cidr& o) { return net::CidrCovers(o, c); });
    if (covered) {
      cidrs.insert(net::FormatCidr(c));
    } else {
      decisions.push_back({DecisionKind::kDomain, net::FormatCidr(c), "allow", "none",
                           "not inside the operator's allowed address ranges"});
    }
  }
  out.allow_cidrs.assign(cidrs.begin(), cidrs.end());
  // SEC-28: pins decide where an allowed name goes, so only the operator's own count; a pin
  // the operator did not make could send an allowed name to any public address.
  std::set<std::string> pins =
      ceiling.mode == NetworkMode::kAllow ? std::set<std::string>{} : *ceiling_pins;
  for (const std::string& pin : *request_pins) {
    if (ceiling.mode == NetworkMode::kAllow || ceiling_pins->count(pin) != 0) {
      pins.insert(pin);
    } else {
      decisions.push_back({DecisionKind::kDomain, pin, "resolve", "none",
                           "not among the operator's resolve entries"});
    }
  }
  out.resolve.assign(pins.begin(), pins.end());
  for (const DomainPattern& d : *request_allow) {
    const bool covered = ceiling.mode == NetworkMode::kAllow ||
                         std::any_of(ceiling_allow->begin(), ceiling_allow->end(),
                                     [&](const DomainPattern& c) { return DomainCovers(c, d); });
    if (covered) {
      out.allow_domains.push_back(FormatDomainPattern(d));
    } else {
      decisions.push_back({DecisionKind::kDomain, FormatDomainPattern(d), "allow", "none",
                           "not among the operator's allowed domains"});
    }
  }
  return out;
}

std::optional<uint64_t> ClampLimit(std::optional<uint64_t> ceiling, std::optional<uint64_t> request,
                                   const char* name, std::vector<Decision>& decisions) {
  if (!ceiling) return request;
  if (!request) return ceiling;
  if (*request <= *ceiling) return request;
  decisions.push_back({DecisionKind::kLimit, name, std::to_string(*request),
                       std::to_string(*ceiling), "the operator's ceiling is lower"});
  return ceiling;
}

}  // namespace

Ceiling DefaultCeiling(const std::string& cwd) {
  Ceiling ceiling;
  ceiling.doc.filesystem.readwrite.push_back(cwd);
  ceiling.doc.network = Network{};
  ceiling.doc.timeout_ms = kDefaultTimeoutMs;
  return ceiling;
}

Result<ClampResult> Clamp(const Ceiling& ceiling, const Request& request, const PathContext& ctx) {
  std::string home;
  if (!ctx.home.empty()) {
    auto canonical_home = CanonicalizeMaybeMissing(ctx.home, ctx);
    if (!canonical_home) return canonical_home.error();
    home = *canonical_home;
  }
  auto ceiling_entries = Resolve(ceiling.doc.filesystem, ctx, home, "ceiling");
  if (!ceiling_entries) return ceiling_entries.error();
  auto request_entries = Resolve(request.doc.filesystem, ctx, home, "request");
  if (!request_entries) return request_entries.error();

  ClampResult result;
  std::vector<Decision>& decisions = result.decisions;

  // SEC-3: at every path either side names, the effective access is the lower of the two.
  std::vector<Entry> effective;
  for (const auto* side : {&*ceiling_entries, &*request_entries}) {
    for (const Entry& e : *side) {
      if (std::any_of(effective.begin(), effective.end(),
                      [&](const Entry& x) { return x.path == e.path; })) {
        continue;
      }
      const Access access =
          std::min(AccessAt(*request_entries, e.path), AccessAt(*ceiling_entries, e.path));
      effective.push_back({e.path, access, e.written});
    }
  }
  for (const Entry& asked : *request_entries) {
    if (asked.access == Access::kNone) continue;
    const Access by_request = AccessAt(*request_entries, asked.path);
    const Entry* governing = Governing(*ceiling_entries, asked.path);
    const Access by_ceiling = governing == nullptr ? Access::kNone : governing->access;
    const Access granted = std::min(by_request, by_ceiling);
    if (granted >= asked.access) continue;
    const std::string reason = by_ceiling < asked.access
                                   ? CeilingReason(governing, granted)
                                   : "the request also lists this path more restrictively";
    decisions.push_back(
        {DecisionKind::kPath, asked.path, AccessName(asked.access), AccessName(granted), reason});
  }

  // SEC-2: protected paths inside the grants are capped, unless the ceiling names the
  // protected path itself (read-only or read-write).
  std::vector<std::string> grants;
  for (const Entry& e : effective) {
    if (e.access != Access::kNone) grants.push_back(e.path);
  }
  for (const ProtectedPath& p : FindProtectedPaths(grants, home)) {
    const bool lifted =
        std::any_of(ceiling_entries->begin(), ceiling_entries->end(),
                    [&](const Entry& c) { return c.path == p.path && c.access != Access::kNone; });
    if (lifted) continue;
    const Access before = AccessAt(effective, p.path);
    if (before > p.cap) {
      decisions.push_back({DecisionKind::kPath, p.path, AccessName(before), AccessName(p.cap),
                           "protected: " + p.reason});
    }
    for (Entry& e : effective) {  // entries inside the protected path are capped too
      if (e.path != p.path && IsWithin(e.path, p.path) && e.access > p.cap) {
        decisions.push_back({DecisionKind::kPath, e.path, AccessName(e.access), AccessName(p.cap),
                             "protected: inside " + p.path});
        e.access = p.cap;
      }
    }
    auto existing = std::find_if(effective.begin(), effective.end(),
                                 [&](const Entry& e) { return e.path == p.path; });
    if (existing != effective.end()) {
      existing->access = std::min(existing->access, p.cap);
    } else {
      effective.push_back({p.path, std::min(before, p.cap), p.path});
    }
  }
  result.policy.filesystem = Flatten(std::move(effective));

  auto network = ClampNetwork(ceiling.doc.network, request.doc.network, decisions);
  if (!network) return network.error();
  result.policy.network = std::move(*network);

  const uint64_t ceiling_timeout = ceiling.doc.timeout_ms.value_or(kDefaultTimeoutMs);
  const uint64_t asked_timeout = request.doc.timeout_ms.value_or(ceiling_timeout);
  result.policy.timeout_ms = std::min(asked_timeout, ceiling_timeout);
  if (asked_timeout > ceiling_timeout) {
    decisions.push_back({DecisionKind::kTimeout, "timeoutMs", std::to_string(asked_timeout),
                         std::to_string(ceiling_timeout), "the operator's ceiling is lower"});
  }

  const Limits& cl = ceiling.doc.limits;
  const Limits& rl = request.doc.limits;
  result.policy.limits.pids = ClampLimit(cl.pids, rl.pids, "limits.pids", decisions);
  result.policy.limits.memory_bytes =
      ClampLimit(cl.memory_bytes, rl.memory_bytes, "limits.memoryBytes", decisions);
  result.policy.limits.cpu_seconds =
      ClampLimit(cl.cpu_seconds, rl.cpu_seconds, "limits.cpuSeconds", decisions);
  return result;
}

}  // namespace agentbox
