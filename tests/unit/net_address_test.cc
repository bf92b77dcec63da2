#include <arpa/inet.h>
#include <gtest/gtest.h>

#include <cstring>
#include <string>

#include "net/address.h"

namespace agentbox::net {
namespace {

IpAddress Ip(std::string_view text) {
  auto ip = ParseIpLiteral(text);
  EXPECT_TRUE(ip.has_value()) << text;
  return ip.value_or(IpAddress{});
}

Cidr C(std::string_view text) {
  auto c = ParseCidr(text);
  EXPECT_TRUE(c.ok()) << text << ": " << (c.ok() ? "" : c.error().Message());
  return c.ok() ? *c : Cidr{};
}

std::string Range(std::string_view text) {
  const char* range = SpecialRange(Ip(text));
  return range == nullptr ? "public" : range;
}

TEST(NetAddressTest, ParsesEveryInetAtonSpellingOfIpv4) {
  for (const char* spelling :
       {"127.0.0.1", "127.1", "127.0.1", "0x7f.0.0.1", "0X7F.1", "0177.0.0.1", "017700000001",
        "2130706433", "0x7f000001", "0x7F.0x0.0x0.0x1", "127.0.0x1", "0177.1", "127.00000.0.01"}) {
    const auto ip = ParseIpLiteral(spelling);
    ASSERT_TRUE(ip.has_value()) << spelling;
    EXPECT_EQ(FormatIp(*ip), "127.0.0.1") << spelling;
    in_addr expected{};
    ASSERT_EQ(::inet_aton(spelling, &expected), 1) << spelling;  // agrees with the C library
    EXPECT_EQ(std::memcmp(&expected, ip->bytes.data(), 4), 0) << spelling;
  }
  EXPECT_EQ(FormatIp(Ip("0")), "0.0.0.0");
  EXPECT_EQ(FormatIp(Ip("4294967295")), "255.255.255.255");
  EXPECT_EQ(FormatIp(Ip("1.16777215")), "1.255.255.255");
  EXPECT_EQ(FormatIp(Ip("1.2.65535")), "1.2.255.255");
  EXPECT_EQ(FormatIp(Ip("169.254.43518")), "169.254.169.254");
}

TEST(NetAddressTest, RefusesWhatInetAtonRefuses) {
  for (const char* bad : {"",
                          ".",
                          "1.",
                          ".1",
                          "1..2",
                          "1.2.3.4.",
                          "1.2.3.4.5",
                          "256.1.1.1",
                          "1.2.3.256",
                          "1.2.65536",
                          "1.16777216",
                          "4294967296",
                          "08",
                          "0x",
                          "0x.1",
                          "0xg",
                          "1e1",
                          "+1",
                          "-1",
                          " 1.2.3.4",
                          "1.2.3.4 ",
                          "1.2.3.4\n",
                          "a.b.c.d",
                          "example.com",
                          "0x100000000",
                          "99999999999999999999"}) {
    EXPECT_FALSE(ParseIpLiteral(bad).has_value()) << bad;
  }
  EXPECT_FALSE(ParseIpLiteral(std::string_view("1.2.3.4\0", 8)).has_value());
}

TEST(NetAddressTest, ParsesIpv6WithAndWithoutBrackets) {
  EXPECT_EQ(FormatIp(Ip("::1")), "::1");
  EXPECT_EQ(FormatIp(Ip("[::1]")), "::1");
  EXPECT_EQ(FormatIp(Ip("2001:DB8:0:0:0:0:0:1")), "2001:db8::1");
  EXPECT_EQ(FormatIp(Ip("::ffff:127.0.0.1")), "::ffff:127.0.0.1");
  EXPECT_EQ(FormatIp(Ip("0:0:0:0:0:ffff:7f00:1")), "::ffff:127.0.0.1");
  EXPECT_EQ(Ip("[::1]").family, AF_INET6);
  for (const char* bad : {"fe80::1%eth0", "fe80::1%2", "[::1", "::1]", "[[::1]]", ":::1", "1::2::3",
                          "::ffff:1.2.3", "::ffff:01.2.3.4", "[1.2.3.4]", "[]", "12345::1"}) {
    EXPECT_FALSE(ParseIpLiteral(bad).has_value()) << bad;
  }
}

TEST(NetAddressTest, SockaddrRoundTrip) {
  for (const char* text : {"192.0.2.7", "2001:db8::7"}) {
    const IpAddress ip = Ip(text);
    socklen_t len = 0;
    const sockaddr_storage sa = ToSockaddr(ip, 8080, &len);
    EXPECT_EQ(sa.ss_family, ip.family);
    EXPECT_EQ(len, ip.family == AF_INET ? sizeof(sockaddr_in) : sizeof(sockaddr_in6));
    EXPECT_EQ(FromSockaddr(reinterpret_cast<const sockaddr*>(&sa)), ip) << text;
    const uint16_t port = ip.family == AF_INET
                              ? reinterpret_cast<const sockaddr_in*>(&sa)->sin_port
                              : reinterpret_cast<const sockaddr_in6*>(&sa)->sin6_port;
    EXPECT_EQ(ntohs(port), 8080);
  }
  socklen_t len = 99;
  EXPECT_EQ(ToSockaddr(IpAddress{}, 1, &len).ss_family, AF_UNSPEC);
  EXPECT_EQ(len, 0U);
  EXPECT_EQ(FromSockaddr(nullptr).family, AF_UNSPEC);
}

TEST(NetAddressTest, ParsesCidrs) {
  EXPECT_EQ(FormatCidr(C("10.0.0.0/8")), "10.0.0.0/8");
  EXPECT_EQ(FormatCidr(C("192.168.1.7")), "192.168.1.7/32");
  EXPECT_EQ(FormatCidr(C("::1")), "::1/128");
  EXPECT_EQ(FormatCidr(C("::1/128")), "::1/128");
  EXPECT_EQ(FormatCidr(C("FD00::/8")), "fd00::/8");
  EXPECT_EQ(FormatCidr(C("0.0.0.0/0")), "0.0.0.0/0");
  EXPECT_EQ(FormatCidr(C("::/0")), "::/0");
  EXPECT_EQ(C("172.16.0.0/12").prefix, 12);
}

TEST(NetAddressTest, RefusesMalformedCidrs) {
  for (const char* bad : {"",
                          "/8",
                          "10.0.0.0/",
                          "10.0.0.0/33",
                          "::/129",
                          "10.0.0.0/-1",
                          "10.0.0.0/+8",
                          "10.0.0.0/08",
                          "10.0.0.0/8/8",
                          "10.0.0.0/ 8",
                          "10/8",
                          "10.0.0/24",
                          "010.0.0.0/8",
                          "0x0a.0.0.0/8",
                          "10.0.0.00/8",
                          "256.0.0.0/8",
                          "[::1]/128",
                          "fe80::1%eth0/64",
                          "a.b/8",
                          "10.0.0.0 /8",
                          " 10.0.0.0/8"}) {
    EXPECT_FALSE(ParseCidr(bad).ok()) << bad;
  }
}

TEST(NetAddressTest, HostBitsSetNamesTheIntendedRange) {
  auto c = ParseCidr("10.1.0.0/8");
  ASSERT_FALSE(c.ok());
  EXPECT_NE(c.error().Message().find("host bits set (did you mean 10.0.0.0/8?)"), std::string::npos)
      << c.error().Message();
  auto v6 = ParseCidr("fd00::1/8");
  ASSERT_FALSE(v6.ok());
  EXPECT_NE(v6.error().Message().find("fd00::/8"), std::string::npos) << v6.error().Message();
}

TEST(NetAddressTest, ContainsAndCovers) {
  EXPECT_TRUE(CidrContains(C("10.0.0.0/8"), Ip("10.255.1.2")));
  EXPECT_FALSE(CidrContains(C("10.0.0.0/8"), Ip("11.0.0.0")));
  EXPECT_TRUE(CidrContains(C("172.16.0.0/12"), Ip("172.31.255.255")));
  EXPECT_FALSE(CidrContains(C("172.16.0.0/12"), Ip("172.32.0.0")));
  EXPECT_TRUE(CidrContains(C("0.0.0.0/0"), Ip("8.8.8.8")));
  EXPECT_FALSE(CidrContains(C("0.0.0.0/0"), Ip("::1")));  // families never mix
  EXPECT_FALSE(CidrContains(C("10.0.0.0/8"), Ip("::ffff:10.0.0.1")));
  EXPECT_TRUE(CidrContains(C("::ffff:10.0.0.0/104"), Ip("::ffff:10.0.0.1")));
  EXPECT_TRUE(CidrContains(C("192.168.1.7"), Ip("192.168.1.7")));
  EXPECT_FALSE(CidrContains(C("192.168.1.7"), Ip("192.168.1.8")));
  EXPECT_TRUE(CidrContains(C("2001:db8::/33"), Ip("2001:db8:7fff::1")));
  EXPECT_FALSE(CidrContains(C("2001:db8::/33"), Ip("2001:db8:8000::1")));

  EXPECT_TRUE(CidrCovers(C("10.0.0.0/8"), C("10.1.0.0/16")));
  EXPECT_TRUE(CidrCovers(C("10.0.0.0/8"), C("10.0.0.0/8")));
  EXPECT_FALSE(CidrCovers(C("10.1.0.0/16"), C("10.0.0.0/8")));
  EXPECT_FALSE(CidrCovers(C("10.0.0.0/8"), C("11.0.0.0/16")));
  EXPECT_TRUE(CidrCovers(C("::/0"), C("fd00::/8")));
  EXPECT_FALSE(CidrCovers(C("::/0"), C("10.0.0.0/8")));
  EXPECT_TRUE(CidrCovers(C("fc00::/7"), C("fd00::1")));
}

TEST(NetAddressTest, SpecialRangesIpv4) {
  EXPECT_EQ(Range("0.0.0.0"), "unspecified");
  EXPECT_EQ(Range("0.1.2.3"), "unspecified");
  EXPECT_EQ(Range("127.0.0.1"), "loopback");
  EXPECT_EQ(Range("127.255.255.254"), "loopback");
  EXPECT_EQ(Range("10.0.0.1"), "private");
  EXPECT_EQ(Range("172.16.0.1"), "private");
  EXPECT_EQ(Range("172.31.255.255"), "private");
  EXPECT_EQ(Range("192.168.0.1"), "private");
  EXPECT_EQ(Range("100.64.0.1"), "carrier-grade NAT");
  EXPECT_EQ(Range("100.127.255.255"), "carrier-grade NAT");
  EXPECT_EQ(Range("169.254.169.254"), "link-local (cloud metadata)");
  EXPECT_EQ(Range("169.254.0.1"), "link-local");
  EXPECT_EQ(Range("169.254.169.253"), "link-local");
  EXPECT_EQ(Range("192.0.0.8"), "IETF protocol assignments");
  EXPECT_EQ(Range("192.0.2.1"), "documentation");
  EXPECT_EQ(Range("198.51.100.1"), "documentation");
  EXPECT_EQ(Range("203.0.113.1"), "documentation");
  EXPECT_EQ(Range("198.18.0.1"), "benchmarking");
  EXPECT_EQ(Range("198.19.255.255"), "benchmarking");
  EXPECT_EQ(Range("224.0.0.1"), "multicast");
  EXPECT_EQ(Range("239.255.255.255"), "multicast");
  EXPECT_EQ(Range("240.0.0.1"), "reserved");
  EXPECT_EQ(Range("255.255.255.254"), "reserved");
  EXPECT_EQ(Range("255.255.255.255"), "broadcast");
  // Neighbours of each range are public.
  for (const char* pub :
       {"1.1.1.1",        "8.8.8.8",         "9.255.255.255", "11.0.0.0",        "100.63.255.255",
        "100.128.0.0",    "126.255.255.255", "128.0.0.0",     "169.253.255.255", "169.255.0.0",
        "172.15.255.255", "172.32.0.0",      "192.0.1.0",     "192.0.3.0",       "192.167.255.255",
        "192.169.0.0",    "198.17.255.255",  "198.20.0.0",    "198.51.99.255",   "203.0.112.255",
        "223.255.255.255"}) {
    EXPECT_EQ(Range(pub), "public") << pub;
  }
}

TEST(NetAddressTest, SpecialRangesIpv6) {
  EXPECT_EQ(Range("::"), "unspecified");
  EXPECT_EQ(Range("::1"), "loopback");
  EXPECT_EQ(Range("fe80::1"), "link-local");
  EXPECT_EQ(Range("febf:ffff::1"), "link-local");
  EXPECT_EQ(Range("fec0::1"), "site-local");
  EXPECT_EQ(Range("fc00::1"), "unique-local");
  EXPECT_EQ(Range("fd12:3456::1"), "unique-local");
  EXPECT_EQ(Range("fd00:ec2::254"), "unique-local (cloud metadata)");
  EXPECT_EQ(Range("ff02::1"), "multicast");
  EXPECT_EQ(Range("2001:db8::1"), "documentation");
  EXPECT_EQ(Range("3fff::1"), "documentation");
  EXPECT_EQ(Range("2001::1"), "IETF protocol assignments");  // Teredo and friends
  EXPECT_EQ(Range("100::1"), "reserved");                    // discard-only
  EXPECT_EQ(Range("4000::1"), "reserved");                   // outside 2000::/3
  EXPECT_EQ(Range("2606:4700::1111"), "public");
  EXPECT_EQ(Range("2001:4860:4860::8888"), "public");
  EXPECT_EQ(Range("2001:200::1"), "public");  // just past 2001::/23
}

TEST(NetAddressTest, SpecialRangesJudgeEmbeddedIpv4) {
  EXPECT_EQ(Range("::ffff:127.0.0.1"), "IPv4-mapped loopback");
  EXPECT_EQ(Range("::ffff:169.254.169.254"), "IPv4-mapped link-local (cloud metadata)");
  EXPECT_EQ(Range("::ffff:10.1.2.3"), "IPv4-mapped private");
  EXPECT_EQ(Range("::ffff:0.0.0.0"), "IPv4-mapped unspecified");
  EXPECT_EQ(Range("::ffff:8.8.8.8"), "public");
  EXPECT_EQ(Range("::127.0.0.1"), "IPv4-compatible loopback");
  EXPECT_EQ(Range("::0.0.0.2"), "IPv4-compatible unspecified");
  EXPECT_EQ(Range("::8.8.8.8"), "IPv4-compatible (deprecated)");
  EXPECT_EQ(Range("64:ff9b::192.168.0.1"), "NAT64 private");
  EXPECT_EQ(Range("64:ff9b::a9fe:a9fe"), "NAT64 link-local (cloud metadata)");
  EXPECT_EQ(Range("64:ff9b::8.8.8.8"), "public");
  EXPECT_EQ(Range("64:ff9b:1::8.8.8.8"), "reserved");  // local-use NAT64 prefix
  EXPECT_EQ(Range("2002:7f00:1::1"), "6to4 loopback");
  EXPECT_EQ(Range("2002:a9fe:a9fe::"), "6to4 link-local (cloud metadata)");
  EXPECT_EQ(Range("2002:c000:0201::1"), "6to4 documentation");
  EXPECT_EQ(Range("2002:0808:0808::1"), "public");
  // The names are stable pointers (built once).
  EXPECT_EQ(SpecialRange(Ip("::ffff:127.0.0.1")), SpecialRange(Ip("::ffff:127.0.0.2")));
}

TEST(NetAddressTest, HostAddressesIncludeLoopback) {
  auto addresses = HostAddresses();
  ASSERT_TRUE(addresses.ok()) << addresses.error().Message();
  // Every test environment has lo; it may lack an IPv6 address (disable_ipv6).
  bool loopback = false;
  for (const IpAddress& ip : *addresses) {
    EXPECT_TRUE(ip.family == AF_INET || ip.family == AF_INET6);
    if (ip == Ip("127.0.0.1")) loopback = true;
  }
  EXPECT_TRUE(loopback);
}

}  // namespace
}  // namespace agentbox::net
