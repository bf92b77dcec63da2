// The proxy's rules (net/egress.h): name checks before resolution, address checks after.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "net/egress.h"

namespace agentbox {
namespace {

using ::testing::HasSubstr;
using ::testing::IsEmpty;

EgressRules Rules(std::vector<std::string> allow, std::vector<std::string> deny = {},
                  std::vector<std::string> cidrs = {}) {
  Network network = NetworkWithMode(NetworkMode::kProxy);
  network.allow_domains = std::move(allow);
  network.deny_domains = std::move(deny);
  network.allow_cidrs = std::move(cidrs);
  auto rules = EgressRulesFor(network, "");
  EXPECT_TRUE(rules.ok());
  return rules.ok() ? *rules : EgressRules{};
}

net::IpAddress Ip(const char* text) { return *net::ParseIpLiteral(text); }

TEST(NetEgressTest, AllowedNamesAndDefaultPorts) {
  const EgressRules r = Rules({"pypi.org", "*.pythonhosted.org", "api.test:8443"});
  EXPECT_THAT(CheckDestination(r, "pypi.org", 443), IsEmpty());
  EXPECT_THAT(CheckDestination(r, "pypi.org", 80), IsEmpty());
  EXPECT_THAT(CheckDestination(r, "pypi.org", 22), HasSubstr("port 22"));
  EXPECT_THAT(CheckDestination(r, "files.pythonhosted.org", 443), IsEmpty());
  EXPECT_THAT(CheckDestination(r, "pythonhosted.org", 443), HasSubstr("not on the allowlist"));
  EXPECT_THAT(CheckDestination(r, "api.test", 8443), IsEmpty());
  EXPECT_THAT(CheckDestination(r, "api.test", 443), HasSubstr("port 443"));
  EXPECT_THAT(CheckDestination(r, "evil.test", 443), HasSubstr("not on the allowlist"));
}

// SEC-26: a deny entry wins over every allow entry, on every port when it names none.
TEST(NetEgressTest, DenyWins) {
  const EgressRules r = Rules({"*.example.com"}, {"secret.example.com"});
  EXPECT_THAT(CheckDestination(r, "www.example.com", 443), IsEmpty());
  EXPECT_THAT(CheckDestination(r, "secret.example.com", 443), HasSubstr("--deny-domain"));
  EXPECT_THAT(CheckDestination(r, "secret.example.com", 8080), HasSubstr("--deny-domain"));
}

// SEC-26: an address must be allowed as an address; a wildcard about names never admits one.
TEST(NetEgressTest, IpLiteralsNeedTheirOwnEntry) {
  EXPECT_FALSE(ParseDomainPattern("*.3.4").ok());  // a wildcard over numbers is refused
  EXPECT_THAT(CheckDestination(Rules({"*.example.com"}), "1.2.3.4", 443), HasSubstr("IP address"));
  EXPECT_THAT(CheckDestination(Rules({"1.2.3.4"}), "1.2.3.4", 443), IsEmpty());
  EXPECT_THAT(CheckDestination(Rules({}, {}, {"1.2.3.0/24"}), "1.2.3.4", 9000), IsEmpty());
  EXPECT_THAT(CheckDestination(Rules({"example.com"}), "2001:db8::1", 443),
              HasSubstr("IP address"));
}

// SEC-27: whatever name led there, special-purpose and host addresses are refused.
TEST(NetEgressTest, SpecialAddressesAreRefusedUnlessAllowedByRange) {
  const EgressRules r = Rules({"a.test"});
  EXPECT_THAT(CheckAddress(r, Ip("93.184.216.34")), IsEmpty());
  EXPECT_THAT(CheckAddress(r, Ip("127.0.0.1")), HasSubstr("loopback"));
  EXPECT_THAT(CheckAddress(r, Ip("169.254.169.254")), HasSubstr("metadata"));
  EXPECT_THAT(CheckAddress(r, Ip("10.1.2.3")), HasSubstr("private"));
  EXPECT_THAT(CheckAddress(r, Ip("fd00::1")), HasSubstr("unique-local"));
  EXPECT_THAT(CheckAddress(r, Ip("::ffff:127.0.0.1")), HasSubstr("loopback"));
  EXPECT_THAT(CheckAddress(r, Ip("224.0.0.1")), HasSubstr("multicast"));
  const EgressRules lifted = Rules({"a.test"}, {}, {"127.0.0.0/8"});
  EXPECT_THAT(CheckAddress(lifted, Ip("127.0.0.1")), IsEmpty());
  EXPECT_THAT(CheckAddress(lifted, Ip("10.1.2.3")), HasSubstr("private"));
  for (const net::IpAddress& own : r.host_addresses) {
    EXPECT_FALSE(CheckAddress(r, own).empty()) << net::FormatIp(own);
  }
}

TEST(NetEgressTest, UpstreamModeWithoutAllowEntriesAdmitsAnyHostButTheDenied) {
  Network network = NetworkWithMode(NetworkMode::kProxy);
  network.deny_domains = {"blocked.test"};
  auto r = EgressRulesFor(network, "127.0.0.1:8080");
  ASSERT_TRUE(r.ok());
  EXPECT_THAT(CheckDestination(*r, "anything.test", 443), IsEmpty());
  EXPECT_THAT(CheckDestination(*r, "blocked.test", 443), HasSubstr("--deny-domain"));
}

}  // namespace
}  // namespace agentbox
