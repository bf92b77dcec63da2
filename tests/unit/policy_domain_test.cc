#include <gtest/gtest.h>

#include "policy/domain.h"

namespace agentbox {
namespace {

DomainPattern D(std::string_view text) {
  auto p = ParseDomainPattern(text);
  EXPECT_TRUE(p.ok()) << text;
  return p.ok() ? *p : DomainPattern{};
}

TEST(DomainTest, ParsesHostWildcardAndPort) {
  EXPECT_EQ(D("Example.COM"), (DomainPattern{false, "example.com", std::nullopt}));
  EXPECT_EQ(D("*.pypi.org"), (DomainPattern{true, "pypi.org", std::nullopt}));
  EXPECT_EQ(D("api.example.com:8443"), (DomainPattern{false, "api.example.com", 8443}));
  EXPECT_EQ(D("example.com."), (DomainPattern{false, "example.com", std::nullopt}));
  EXPECT_EQ(FormatDomainPattern(D("*.Example.com:81")), "*.example.com:81");
}

TEST(DomainTest, RejectsMalformedEntries) {
  for (const char* bad :
       {"", "*", "*.", "a..b", "-a.com", "a-.com", "a b.com", "a.com:0", "a.com:65536",
        "a.com:", "a.com:8x", "*a.com", "a.*.com", "exämple.com", "http://a.com", "a.com/path"}) {
    EXPECT_FALSE(ParseDomainPattern(bad).ok()) << bad;
  }
}

TEST(DomainTest, WildcardMatchesSubdomainsOnly) {
  const DomainPattern p = D("*.pypi.org");
  EXPECT_TRUE(DomainMatches(p, "files.pypi.org", 443));
  EXPECT_TRUE(DomainMatches(p, "a.b.pypi.org", 80));
  EXPECT_FALSE(DomainMatches(p, "pypi.org", 443));
  EXPECT_FALSE(DomainMatches(p, "evilpypi.org", 443));
}

TEST(DomainTest, DefaultPortsAreWebPortsOnly) {
  const DomainPattern p = D("example.com");
  EXPECT_TRUE(DomainMatches(p, "example.com", 80));
  EXPECT_TRUE(DomainMatches(p, "example.com", 443));
  EXPECT_FALSE(DomainMatches(p, "example.com", 22));
  EXPECT_TRUE(DomainMatches(D("example.com:22"), "example.com", 22));
  EXPECT_FALSE(DomainMatches(D("example.com:22"), "example.com", 443));
}

TEST(DomainTest, Covers) {
  EXPECT_TRUE(DomainCovers(D("example.com"), D("EXAMPLE.com")));
  EXPECT_TRUE(DomainCovers(D("*.org"), D("pypi.org")));
  EXPECT_TRUE(DomainCovers(D("*.org"), D("*.pypi.org")));
  EXPECT_TRUE(DomainCovers(D("*.pypi.org"), D("*.pypi.org")));
  EXPECT_FALSE(DomainCovers(D("*.pypi.org"), D("pypi.org")));
  EXPECT_FALSE(DomainCovers(D("pypi.org"), D("*.pypi.org")));
  EXPECT_FALSE(DomainCovers(D("pypi.org"), D("files.pypi.org")));
  EXPECT_TRUE(DomainCovers(D("pypi.org"), D("pypi.org:443")));
  EXPECT_FALSE(DomainCovers(D("pypi.org"), D("pypi.org:8080")));
  EXPECT_FALSE(DomainCovers(D("pypi.org:443"), D("pypi.org")));
  EXPECT_TRUE(DomainCovers(D("pypi.org:8080"), D("pypi.org:8080")));
}

// SEC-26: an address entry has one spelling, the one the proxy compares against.
TEST(DomainTest, AddressesAreCanonicalAndNumericNamesRefused) {
  for (const char* spelling : {"127.1", "2130706433", "0x7f.0.0.1", "017700000001", "127.0.1"}) {
    auto p = ParseDomainPattern(spelling);
    ASSERT_TRUE(p.ok()) << spelling;
    EXPECT_EQ(p->name, "127.0.0.1") << spelling;
    EXPECT_TRUE(DomainMatches(*p, "127.0.0.1", 443)) << spelling;
  }
  EXPECT_FALSE(ParseDomainPattern("1.2.3.256").ok());
  EXPECT_FALSE(ParseDomainPattern("*.1.2.3.4").ok());
  EXPECT_TRUE(ParseDomainPattern("*.0.0.127.in-addr.arpa").ok());
}

}  // namespace
}  // namespace agentbox
