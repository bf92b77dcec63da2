// IP addresses for the egress proxy: literals, CIDR ranges, and the special-purpose ranges
// that are never public (loopback, private, link-local, cloud metadata, ...).
//
//   auto ip = ParseIpLiteral("0x7f.1");                 // 127.0.0.1: inet_aton accepts it
//   SpecialRange(*ip)                                    -> "loopback"
//   auto net = ParseCidr("10.0.0.0/8");
//   CidrContains(*net, *ParseIpLiteral("10.1.2.3"))      -> true
//   SpecialRange(*ParseIpLiteral("::ffff:169.254.169.254"))
//                                                        -> "IPv4-mapped link-local (cloud
//                                                        metadata)"
//
// The proxy refuses every address for which SpecialRange is not nullptr, and every address
// of the host itself (HostAddresses), unless the operator allowed it by CIDR.
//
// Pure except HostAddresses (getifaddrs).
#pragma once

#include <netinet/in.h>
#include <sys/socket.h>

#include <array>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "base/result.h"

namespace agentbox::net {

// An IPv4 or IPv6 address. AF_INET uses bytes[0..3] (network order) and keeps bytes[4..15]
// zero, so == compares addresses. An IPv4-mapped IPv6 address (::ffff:a.b.c.d) stays AF_INET6:
// it is a different address from a.b.c.d for CidrContains (fail closed: only a v6 CIDR such
// as ::ffff:10.0.0.0/104 admits it).
struct IpAddress {
  int family = AF_UNSPEC;  // AF_INET or AF_INET6; AF_UNSPEC only for a default-made value
  std::array<uint8_t, 16> bytes{};

  bool operator==(const IpAddress&) const = default;
};

// "a.b.c.d" for IPv4, inet_ntop's canonical (RFC 5952) form for IPv6 ("::1",
// "::ffff:1.2.3.4", "2001:db8::1"), never bracketed. "invalid" for another family.
[[nodiscard]] std::string FormatIp(const IpAddress& ip);

// A sockaddr_in / sockaddr_in6 for connect(2); *len receives its size. Precondition:
// ip.family is AF_INET or AF_INET6 (otherwise an AF_UNSPEC storage and *len = 0).
[[nodiscard]] sockaddr_storage ToSockaddr(const IpAddress& ip, uint16_t port, socklen_t* len);

// The address in a sockaddr_in / sockaddr_in6 (the port and scope id are dropped); a
// default IpAddress (AF_UNSPEC) for null or any other family.
[[nodiscard]] IpAddress FromSockaddr(const sockaddr* addr);

// Every spelling the C library's resolver treats as an address, so that nothing which IS an
// address can pass for a host name (the proxy treats anything inet_aton accepts as an IP
// literal, and an IP literal must be allowlisted by CIDR, never by a domain pattern):
// - IPv4 in every inet_aton form: "a.b.c.d", "a.b.c" (c 16 bits), "a.b" (b 24 bits), "a"
//   (32 bits), each part decimal, octal (leading 0) or hex (0x): "127.1", "0x7f.0.0.1",
//   "017700000001", "2130706433". Exact: no surrounding whitespace, no trailing dot.
// - IPv6 as inet_pton(AF_INET6) accepts it, optionally in [brackets].
// An IPv6 zone id ("fe80::1%eth0") is not accepted: nullopt. That cannot let an address pass
// as a name, since ':' and '%' are not name characters (NormalizeHost refuses it).
[[nodiscard]] std::optional<IpAddress> ParseIpLiteral(std::string_view text);

struct Cidr {
  IpAddress base;  // host bits zero
  int prefix = 0;  // 0..32 for AF_INET, 0..128 for AF_INET6

  bool operator==(const Cidr&) const = default;
};

// "10.0.0.0/8", "::1/128", "fd00::/8"; a bare address is /32 or /128. Strict, since it is
// written by the operator: IPv4 only as a dotted quad of decimal parts without leading zeros,
// IPv6 without brackets, the prefix in decimal. Set host bits are an error naming the range
// that was probably meant ("10.1.0.0/8: host bits set (did you mean 10.0.0.0/8?)").
[[nodiscard]] Result<Cidr> ParseCidr(std::string_view text);
[[nodiscard]] std::string FormatCidr(const Cidr& cidr);

// True iff ip lies in cidr (same family and the first `prefix` bits equal).
[[nodiscard]] bool CidrContains(const Cidr& cidr, const IpAddress& ip);

// True iff every address of `inner` lies in `outer`.
[[nodiscard]] bool CidrCovers(const Cidr& outer, const Cidr& inner);

// nullptr for a public unicast address; otherwise a short static name of the range that makes
// it not public: "unspecified", "loopback", "private", "carrier-grade NAT", "link-local",
// "link-local (cloud metadata)" (169.254.169.254 exactly), "unique-local",
// "unique-local (cloud metadata)" (fd00:ec2::254), "site-local", "multicast", "broadcast",
// "reserved", "documentation", "benchmarking", "IETF protocol assignments".
// IPv6 forms that embed an IPv4 address are judged by that address, and the name says so:
// "IPv4-mapped loopback" (::ffff:0:0/96), "IPv4-compatible private" (::/96),
// "NAT64 link-local" (64:ff9b::/96), "6to4 private" (2002::/16). The deprecated ::/96 form is
// refused even around a public IPv4 address ("IPv4-compatible (deprecated)"). IPv6 outside
// 2000::/3, the only block IANA allocates for global unicast, is "reserved" unless named above.
[[nodiscard]] const char* SpecialRange(const IpAddress& ip);

// Every IPv4 and IPv6 address configured on the host's interfaces (getifaddrs), without
// duplicates, so the proxy can refuse the host's own addresses. An error if getifaddrs fails
// (fail closed: the caller must not proceed as if the host had no addresses).
[[nodiscard]] Result<std::vector<IpAddress>> HostAddresses();

}  // namespace agentbox::net
