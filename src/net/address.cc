#include "net/address.h"

#include <arpa/inet.h>
#include <ifaddrs.h>

#include <algorithm>
#include <array>
#include <charconv>
#include <cstring>

namespace agentbox::net {
namespace {

constexpr size_t kMaxIpv6Text = 64;  // inet_pton's longest input is 45 characters

IpAddress Ipv4(uint32_t host_order) {
  IpAddress ip;
  ip.family = AF_INET;
  ip.bytes[0] = static_cast<uint8_t>(host_order >> 24);
  ip.bytes[1] = static_cast<uint8_t>(host_order >> 16);
  ip.bytes[2] = static_cast<uint8_t>(host_order >> 8);
  ip.bytes[3] = static_cast<uint8_t>(host_order);
  return ip;
}

bool IsDigit(char c) { return c >= '0' && c <= '9'; }

int HexValue(char c) {
  if (c >= '0' && c <= '9') return c - '0';
  if (c >= 'a' && c <= 'f') return c - 'a' + 10;
  if (c >= 'A' && c <= 'F') return c - 'A' + 10;
  return -1;
}

// One part of an inet_aton address, as strtoul(part, &end, 0) reads it and inet_aton checks
// it: a digit first; "0x"/"0X" then at least one hex digit; "0" then octal digits; else
// decimal. The whole part must be consumed and fit in 32 bits.
std::optional<uint32_t> ParseAtonPart(std::string_view part) {
  if (part.empty() || !IsDigit(part[0])) return std::nullopt;
  unsigned base = 10;
  std::string_view digits = part;
  if (part.size() >= 2 && part[0] == '0' && (part[1] == 'x' || part[1] == 'X')) {
    base = 16;
    digits = part.substr(2);
    if (digits.empty()) return std::nullopt;  // strtoul stops after "0", leaving "x"
  } else if (part[0] == '0') {
    base = 8;
  }
  uint64_t value = 0;
  for (const char c : digits) {
    const int d = HexValue(c);
    if (d < 0 || static_cast<unsigned>(d) >= base) return std::nullopt;
    value = value * base + static_cast<unsigned>(d);
    if (value > 0xffffffffULL) return std::nullopt;
  }
  return static_cast<uint32_t>(value);
}

// inet_aton's grammar (glibc inet_aton_exact, musl inet_aton): 1 to 4 parts; every part but
// the last is one byte, the last fills the remaining bytes.
std::optional<IpAddress> ParseAtonIpv4(std::string_view text) {
  std::array<uint32_t, 4> parts{};
  size_t count = 0;
  size_t start = 0;
  while (true) {
    if (count == parts.size()) return std::nullopt;
    const size_t dot = text.find('.', start);
    const std::string_view part =
        text.substr(start, dot == std::string_view::npos ? std::string_view::npos : dot - start);
    const auto value = ParseAtonPart(part);
    if (!value) return std::nullopt;
    parts[count++] = *value;
    if (dot == std::string_view::npos) break;
    start = dot + 1;
  }
  static constexpr std::array<uint32_t, 4> kLastMax = {0xffffffffU, 0xffffffU, 0xffffU, 0xffU};
  uint32_t value = 0;
  for (size_t i = 0; i + 1 < count; ++i) {
    if (parts[i] > 0xff) return std::nullopt;
    value |= parts[i] << (24 - 8 * i);
  }
  if (parts[count - 1] > kLastMax[count - 1]) return std::nullopt;
  value |= parts[count - 1];
  return Ipv4(value);
}

std::optional<IpAddress> ParseIpv6(std::string_view text) {
  if (text.size() > kMaxIpv6Text) return std::nullopt;
  if (text.find('\0') != std::string_view::npos) return std::nullopt;
  const std::string copy(text);  // inet_pton needs a terminated string
  IpAddress ip;
  ip.family = AF_INET6;
  if (::inet_pton(AF_INET6, copy.c_str(), ip.bytes.data()) != 1) return std::nullopt;
  return ip;
}

// Strict operator form: four decimal parts 0..255 without leading zeros ("010" could mean 8).
std::optional<IpAddress> ParseDottedQuad(std::string_view text) {
  uint32_t value = 0;
  size_t start = 0;
  for (int i = 0; i < 4; ++i) {
    const size_t dot = i < 3 ? text.find('.', start) : text.size();
    if (dot == std::string_view::npos) return std::nullopt;
    const std::string_view part = text.substr(start, dot - start);
    if (part.empty() || part.size() > 3 || (part.size() > 1 && part[0] == '0')) {
      return std::nullopt;
    }
    if (!std::all_of(part.begin(), part.end(), IsDigit)) return std::nullopt;
    unsigned byte = 0;
    std::from_chars(part.data(), part.data() + part.size(), byte);
    if (byte > 255) return std::nullopt;
    value = (value << 8) | byte;
    start = dot + 1;
  }
  return Ipv4(value);
}

int MaxPrefix(int family) { return family == AF_INET ? 32 : 128; }

// ip with every bit after the first `prefix` cleared.
IpAddress Masked(IpAddress ip, int prefix) {
  const int max = MaxPrefix(ip.family);
  for (int bit = prefix; bit < max; ++bit) {
    ip.bytes[static_cast<size_t>(bit / 8)] &= static_cast<uint8_t>(~(0x80U >> (bit % 8)));
  }
  return ip;
}

bool PrefixEqual(const IpAddress& a, const IpAddress& b, int prefix) {
  return Masked(a, prefix) == Masked(b, prefix);
}

// The ranges an IPv4 address can be in, in the order they are tested.
enum class V4Range {
  kPublic,
  kUnspecified,
  kLoopback,
  kPrivate,
  kCarrierGradeNat,
  kCloudMetadata,
  kLinkLocal,
  kIetf,
  kDocumentation,
  kBenchmarking,
  kMulticast,
  kBroadcast,
  kReserved,
};
constexpr size_t kV4RangeCount = 13;

constexpr std::array<const char*, kV4RangeCount> kV4Names = {
    nullptr,
    "unspecified",
    "loopback",
    "private",
    "carrier-grade NAT",
    "link-local (cloud metadata)",
    "link-local",
    "IETF protocol assignments",
    "documentation",
    "benchmarking",
    "multicast",
    "broadcast",
    "reserved",
};

V4Range ClassifyV4(const uint8_t* b) {
  const uint32_t a =
      (uint32_t{b[0]} << 24) | (uint32_t{b[1]} << 16) | (uint32_t{b[2]} << 8) | uint32_t{b[3]};
  const auto in = [a](uint32_t base, int prefix) {
    const uint32_t mask = prefix == 0 ? 0 : ~uint32_t{0} << (32 - prefix);
    return (a & mask) == base;
  };
  if (in(0x00000000, 8)) return V4Range::kUnspecified;       // 0.0.0.0/8 "this network"
  if (in(0x7f000000, 8)) return V4Range::kLoopback;          // 127/8
  if (in(0x0a000000, 8)) return V4Range::kPrivate;           // 10/8
  if (in(0xac100000, 12)) return V4Range::kPrivate;          // 172.16/12
  if (in(0xc0a80000, 16)) return V4Range::kPrivate;          // 192.168/16
  if (in(0x64400000, 10)) return V4Range::kCarrierGradeNat;  // 100.64/10
  if (a == 0xa9fea9fe) return V4Range::kCloudMetadata;       // 169.254.169.254
  if (in(0xa9fe0000, 16)) return V4Range::kLinkLocal;        // 169.254/16
  if (in(0xc0000000, 24)) return V4Range::kIetf;             // 192.0.0.0/24
  if (in(0xc0000200, 24)) return V4Range::kDocumentation;    // 192.0.2/24 TEST-NET-1
  if (in(0xc6336400, 24)) return V4Range::kDocumentation;    // 198.51.100/24 TEST-NET-2
  if (in(0xcb007100, 24)) return V4Range::kDocumentation;    // 203.0.113/24 TEST-NET-3
  if (in(0xc6120000, 15)) return V4Range::kBenchmarking;     // 198.18/15
  if (in(0xe0000000, 4)) return V4Range::kMulticast;         // 224/4
  if (a == 0xffffffff) return V4Range::kBroadcast;           // 255.255.255.255
  if (in(0xf0000000, 4)) return V4Range::kReserved;          // 240/4
  return V4Range::kPublic;
}

// How an IPv6 address embeds an IPv4 one.
enum class Embedding { kMapped, kCompatible, kNat64, k6to4 };
constexpr std::array<const char*, 4> kEmbeddingNames = {"IPv4-mapped", "IPv4-compatible", "NAT64",
                                                        "6to4"};

// "IPv4-mapped loopback" etc., built once; the pointers stay valid for the program's life.
const char* EmbeddedName(Embedding how, V4Range range) {
  using Table = std::array<std::array<std::string, kV4RangeCount>, kEmbeddingNames.size()>;
  static const Table* const kTable = [] {
    auto* table = new Table();  // never freed: returned pointers outlive static destruction
    for (size_t e = 0; e < kEmbeddingNames.size(); ++e) {
      for (size_t r = 1; r < kV4RangeCount; ++r) {
        (*table)[e][r] = std::string(kEmbeddingNames[e]) + " " + kV4Names[r];
      }
    }
    return table;
  }();
  if (range == V4Range::kPublic) return nullptr;
  return (*kTable)[static_cast<size_t>(how)][static_cast<size_t>(range)].c_str();
}

bool StartsWith(const IpAddress& ip, std::initializer_list<uint8_t> prefix) {
  return std::equal(prefix.begin(), prefix.end(), ip.bytes.begin());
}

bool InV6(const IpAddress& ip, std::initializer_list<uint8_t> base_bytes, int prefix) {
  IpAddress base;
  base.family = AF_INET6;
  std::copy(base_bytes.begin(), base_bytes.end(), base.bytes.begin());
  return PrefixEqual(ip, base, prefix);
}

bool AllZero(const uint8_t* bytes, size_t n) {
  return std::all_of(bytes, bytes + n, [](uint8_t x) { return x == 0; });
}

const char* SpecialRangeV6(const IpAddress& ip) {
  const auto& b = ip.bytes;
  const bool first_80_zero = AllZero(b.data(), 10);
  if (first_80_zero && b[10] == 0 && b[11] == 0) {
    // ::/96: "::", "::1", else the deprecated IPv4-compatible form.
    if (AllZero(&b[12], 3)) {
      if (b[15] == 0) return "unspecified";
      if (b[15] == 1) return "loopback";
    }
    const V4Range range = ClassifyV4(&b[12]);
    if (range == V4Range::kPublic) return "IPv4-compatible (deprecated)";
    return EmbeddedName(Embedding::kCompatible, range);
  }
  if (first_80_zero && b[10] == 0xff && b[11] == 0xff) {  // ::ffff:0:0/96
    return EmbeddedName(Embedding::kMapped, ClassifyV4(&b[12]));
  }
  if (InV6(ip, {0x00, 0x64, 0xff, 0x9b}, 96)) {  // 64:ff9b::/96 (RFC 6052)
    return EmbeddedName(Embedding::kNat64, ClassifyV4(&b[12]));
  }
  if (StartsWith(ip, {0x20, 0x02})) {  // 2002::/16: 2002:AABB:CCDD::/48 is a.b.c.d
    return EmbeddedName(Embedding::k6to4, ClassifyV4(&b[2]));
  }
  if (InV6(ip, {0xfe, 0x80}, 10)) return "link-local";  // fe80::/10
  if (InV6(ip, {0xfe, 0xc0}, 10)) return "site-local";  // fec0::/10 (deprecated)
  if (InV6(ip, {0xfc}, 7)) {                            // fc00::/7
    IpAddress metadata;  // fd00:ec2::254, the AWS instance metadata service over IPv6
    metadata.family = AF_INET6;
    metadata.bytes = {0xfd, 0x00, 0x0e, 0xc2, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0x02, 0x54};
    if (ip == metadata) return "unique-local (cloud metadata)";
    return "unique-local";
  }
  if (b[0] == 0xff) return "multicast";                                // ff00::/8
  if (InV6(ip, {0x20, 0x01, 0x0d, 0xb8}, 32)) return "documentation";  // 2001:db8::/32
  if (InV6(ip, {0x3f, 0xff}, 20)) return "documentation";              // 3fff::/20 (RFC 9637)
  if (InV6(ip, {0x20, 0x01, 0x00, 0x00}, 23)) return "IETF protocol assignments";  // 2001::/23
  if ((b[0] & 0xe0) != 0x20) return "reserved";  // outside 2000::/3, e.g. 100::/64 discard
  return nullptr;
}

}  // namespace

std::string FormatIp(const IpAddress& ip) {
  if (ip.family != AF_INET && ip.family != AF_INET6) return "invalid";
  std::array<char, INET6_ADDRSTRLEN> text{};
  if (::inet_ntop(ip.family, ip.bytes.data(), text.data(), text.size()) == nullptr) {
    return "invalid";
  }
  return text.data();
}

sockaddr_storage ToSockaddr(const IpAddress& ip, uint16_t port, socklen_t* len) {
  sockaddr_storage storage{};
  if (ip.family == AF_INET) {
    sockaddr_in sin{};
    sin.sin_family = AF_INET;
    sin.sin_port = htons(port);
    std::memcpy(&sin.sin_addr, ip.bytes.data(), 4);
    std::memcpy(&storage, &sin, sizeof(sin));
    *len = sizeof(sin);
  } else if (ip.family == AF_INET6) {
    sockaddr_in6 sin6{};
    sin6.sin6_family = AF_INET6;
    sin6.sin6_port = htons(port);
    std::memcpy(&sin6.sin6_addr, ip.bytes.data(), 16);
    std::memcpy(&storage, &sin6, sizeof(sin6));
    *len = sizeof(sin6);
  } else {
    storage.ss_family = AF_UNSPEC;
    *len = 0;
  }
  return storage;
}

IpAddress FromSockaddr(const sockaddr* addr) {
  IpAddress ip;
  if (addr == nullptr) return ip;
  if (addr->sa_family == AF_INET) {
    sockaddr_in sin{};
    std::memcpy(&sin, addr, sizeof(sin));
    ip.family = AF_INET;
    std::memcpy(ip.bytes.data(), &sin.sin_addr, 4);
  } else if (addr->sa_family == AF_INET6) {
    sockaddr_in6 sin6{};
    std::memcpy(&sin6, addr, sizeof(sin6));
    ip.family = AF_INET6;
    std::memcpy(ip.bytes.data(), &sin6.sin6_addr, 16);
  }
  return ip;
}

std::optional<IpAddress> ParseIpLiteral(std::string_view text) {
  if (text.size() >= 2 && text.front() == '[' && text.back() == ']') {
    return ParseIpv6(text.substr(1, text.size() - 2));
  }
  if (text.find(':') != std::string_view::npos) return ParseIpv6(text);
  return ParseAtonIpv4(text);
}

Result<Cidr> ParseCidr(std::string_view text) {
  if (text.empty()) return PolicyValueError("CIDR", text, "empty");
  const size_t slash = text.find('/');
  const std::string_view address_text = text.substr(0, slash);
  Cidr cidr;
  std::optional<IpAddress> base = ParseDottedQuad(address_text);
  if (!base && address_text.find(':') != std::string_view::npos) base = ParseIpv6(address_text);
  if (!base) {
    return PolicyValueError("CIDR", text,
                            "expected an IPv4 dotted quad (no leading zeros) or an IPv6 address, "
                            "optionally followed by /prefix");
  }
  cidr.base = *base;
  const int max = MaxPrefix(cidr.base.family);
  cidr.prefix = max;
  if (slash != std::string_view::npos) {
    const std::string_view prefix_text = text.substr(slash + 1);
    int value = -1;
    const auto [end, ec] =
        std::from_chars(prefix_text.data(), prefix_text.data() + prefix_text.size(), value);
    if (prefix_text.empty() || prefix_text.size() > 3 || ec != std::errc() ||
        end != prefix_text.data() + prefix_text.size() || value < 0 || value > max ||
        (prefix_text.size() > 1 && prefix_text[0] == '0')) {
      return PolicyValueError("CIDR", text,
                              "prefix must be a number from 0 to " + std::to_string(max));
    }
    cidr.prefix = value;
  }
  const IpAddress masked = Masked(cidr.base, cidr.prefix);
  if (!(masked == cidr.base)) {
    return PolicyValueError(
        "CIDR", text,
        "host bits set (did you mean " + FormatCidr(Cidr{masked, cidr.prefix}) + "?)");
  }
  return cidr;
}

std::string FormatCidr(const Cidr& cidr) {
  return FormatIp(cidr.base) + "/" + std::to_string(cidr.prefix);
}

bool CidrContains(const Cidr& cidr, const IpAddress& ip) {
  if (ip.family != cidr.base.family) return false;
  if (cidr.prefix < 0 || cidr.prefix > MaxPrefix(ip.family)) return false;
  return PrefixEqual(cidr.base, ip, cidr.prefix);
}

bool CidrCovers(const Cidr& outer, const Cidr& inner) {
  return outer.base.family == inner.base.family && outer.prefix <= inner.prefix &&
         CidrContains(outer, inner.base);
}

const char* SpecialRange(const IpAddress& ip) {
  if (ip.family == AF_INET) {
    // cppcheck takes the std::array<const char*> element for an integer (a false positive).
    // cppcheck-suppress CastIntegerToAddressAtReturn
    return kV4Names[static_cast<size_t>(ClassifyV4(ip.bytes.data()))];
  }
  if (ip.family == AF_INET6) return SpecialRangeV6(ip);
  return "unspecified";
}

Result<std::vector<IpAddress>> HostAddresses() {
  ifaddrs* list = nullptr;
  if (::getifaddrs(&list) != 0) {
    return ErrnoError(ErrorCode::kSetup, "getifaddrs", "listing the host's addresses");
  }
  std::vector<IpAddress> out;
  for (const ifaddrs* it = list; it != nullptr; it = it->ifa_next) {
    if (it->ifa_addr == nullptr) continue;
    const int family = it->ifa_addr->sa_family;
    if (family != AF_INET && family != AF_INET6) continue;
    const IpAddress ip = FromSockaddr(it->ifa_addr);
    if (std::find(out.begin(), out.end(), ip) == out.end()) out.push_back(ip);
  }
  ::freeifaddrs(list);
  return out;
}

}  // namespace agentbox::net
