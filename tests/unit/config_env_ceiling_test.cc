// Tests for config/env_ceiling: the operator ceiling read from AGENTBOX_* variables.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <map>
#include <string>

#include "config/env_ceiling.h"

namespace agentbox {
namespace {

using ::testing::ElementsAre;
using ::testing::HasSubstr;
using ::testing::IsEmpty;

using Env = std::map<std::string, std::string>;

Result<std::optional<PolicyDocument>> FromEnv(const Env& env) {
  return CeilingFromEnvironment([&env](const char* name) -> const char* {
    const auto it = env.find(name);
    return it == env.end() ? nullptr : it->second.c_str();
  });
}

PolicyDocument Accept(const Env& env) {
  auto doc = FromEnv(env);
  EXPECT_TRUE(doc.ok()) << doc.error().Message();
  if (!doc.ok()) return {};
  EXPECT_TRUE(doc->has_value());
  return doc->value_or(PolicyDocument{});
}

std::string RejectMessage(const Env& env) {
  auto doc = FromEnv(env);
  EXPECT_FALSE(doc.ok());
  if (doc.ok()) return "";
  EXPECT_EQ(doc.error().code, ErrorCode::kPolicy);
  return doc.error().Message();
}

TEST(EnvCeiling, NoneSetGivesNullopt) {
  auto doc = FromEnv({{"HOME", "/home/u"}, {"AGENTBOX_OTHER", "x"}});
  ASSERT_TRUE(doc.ok());
  EXPECT_FALSE(doc->has_value());
}

TEST(EnvCeiling, ReadonlyPaths) {
  const PolicyDocument doc = Accept({{"AGENTBOX_READONLY_PATHS", "/usr/share:~/data"}});
  EXPECT_EQ(doc.filesystem.readonly, (std::vector<std::string>{"/usr/share", "~/data"}));
  EXPECT_TRUE(doc.filesystem.readwrite.empty());
  EXPECT_FALSE(doc.network.has_value());
  EXPECT_FALSE(doc.timeout_ms.has_value());
}

TEST(EnvCeiling, ReadwritePathsAsWritten) {
  const PolicyDocument doc = Accept({{"AGENTBOX_READWRITE_PATHS", "rel/dir:/tmp/../tmp"}});
  EXPECT_EQ(doc.filesystem.readwrite, (std::vector<std::string>{"rel/dir", "/tmp/../tmp"}));
  EXPECT_TRUE(doc.filesystem.readonly.empty());
}

TEST(EnvCeiling, EmptyElementsSkipped) {
  const PolicyDocument doc = Accept({{"AGENTBOX_READONLY_PATHS", ":a::b:"}});
  EXPECT_EQ(doc.filesystem.readonly, (std::vector<std::string>{"a", "b"}));
  EXPECT_TRUE(Accept({{"AGENTBOX_READONLY_PATHS", ":::"}}).filesystem.readonly.empty());
}

TEST(EnvCeiling, SetButEmptyListIsAPresentEmptyCeiling) {
  auto doc = FromEnv({{"AGENTBOX_READWRITE_PATHS", ""}});
  ASSERT_TRUE(doc.ok());
  ASSERT_TRUE(doc->has_value());
  EXPECT_EQ(**doc, PolicyDocument{});
}

TEST(EnvCeiling, Timeout) {
  EXPECT_EQ(Accept({{"AGENTBOX_TIMEOUT_MS", "1500"}}).timeout_ms, 1500u);
  EXPECT_EQ(Accept({{"AGENTBOX_TIMEOUT_MS", "1"}}).timeout_ms, 1u);
  EXPECT_EQ(Accept({{"AGENTBOX_TIMEOUT_MS", "18446744073709551615"}}).timeout_ms, UINT64_MAX);
}

TEST(EnvCeiling, BadTimeouts) {
  for (const char* bad : {"", "-1", "+5", "1x", " 5", "5 ", "0", "00", "1.5", "0x10",
                          "18446744073709551616", "99999999999999999999999"}) {
    const std::string msg = RejectMessage({{"AGENTBOX_TIMEOUT_MS", bad}});
    EXPECT_THAT(msg, HasSubstr("AGENTBOX_TIMEOUT_MS=\"" + std::string(bad) + "\"")) << bad;
  }
  EXPECT_THAT(RejectMessage({{"AGENTBOX_TIMEOUT_MS", "99999999999999999999999"}}),
              HasSubstr("fits in 64 bits"));
  EXPECT_THAT(RejectMessage({{"AGENTBOX_TIMEOUT_MS", "0"}}), HasSubstr("at least 1"));
}

TEST(EnvCeiling, Network) {
  EXPECT_EQ(Accept({{"AGENTBOX_NETWORK", "block"}}).network,
            (NetworkWithMode(NetworkMode::kBlock)));
  EXPECT_EQ(Accept({{"AGENTBOX_NETWORK", "allow"}}).network,
            (NetworkWithMode(NetworkMode::kAllow)));
}

TEST(EnvCeiling, ProxyWithDomains) {
  const PolicyDocument doc = Accept(
      {{"AGENTBOX_NETWORK", "proxy"}, {"AGENTBOX_ALLOW_DOMAINS", "pypi.org,,*.pythonhosted.org"}});
  ASSERT_TRUE(doc.network.has_value());
  EXPECT_EQ(doc.network->mode, NetworkMode::kProxy);
  EXPECT_THAT(doc.network->allow_domains, ElementsAre("pypi.org", "*.pythonhosted.org"));
  EXPECT_THAT(Accept({{"AGENTBOX_NETWORK", "proxy"}}).network->allow_domains, IsEmpty());
  // Domains without proxy mode would silently mean nothing: refused.
  EXPECT_THAT(RejectMessage({{"AGENTBOX_ALLOW_DOMAINS", "pypi.org"}}),
              HasSubstr("AGENTBOX_NETWORK=proxy"));
  EXPECT_THAT(
      RejectMessage({{"AGENTBOX_NETWORK", "allow"}, {"AGENTBOX_ALLOW_DOMAINS", "pypi.org"}}),
      HasSubstr("AGENTBOX_NETWORK=proxy"));
}

TEST(EnvCeiling, BadNetwork) {
  for (const char* bad : {"", "Proxy", "Allow", "allow ", "none"}) {
    const std::string msg = RejectMessage({{"AGENTBOX_NETWORK", bad}});
    EXPECT_THAT(msg, HasSubstr("AGENTBOX_NETWORK=\"" + std::string(bad) + "\"")) << bad;
    EXPECT_THAT(msg, HasSubstr("\"block\", \"proxy\" or \"allow\"")) << bad;
  }
}

TEST(EnvCeiling, ValueInMessageIsEscaped) {
  EXPECT_THAT(RejectMessage({{"AGENTBOX_NETWORK", "a\x1b[2Jb"}}),
              HasSubstr("AGENTBOX_NETWORK=\"a\\x1b[2Jb\""));
}

TEST(EnvCeiling, AllTogether) {
  const PolicyDocument doc = Accept({{"AGENTBOX_READONLY_PATHS", "/usr"},
                                     {"AGENTBOX_READWRITE_PATHS", "/tmp:/work"},
                                     {"AGENTBOX_TIMEOUT_MS", "30000"},
                                     {"AGENTBOX_NETWORK", "block"}});
  PolicyDocument expected;
  expected.filesystem.readonly = {"/usr"};
  expected.filesystem.readwrite = {"/tmp", "/work"};
  expected.timeout_ms = 30000;
  expected.network = NetworkWithMode(NetworkMode::kBlock);
  EXPECT_EQ(doc, expected);
}

TEST(EnvCeiling, OneBadVariableFailsTheWholeCeiling) {
  EXPECT_THAT(RejectMessage({{"AGENTBOX_READONLY_PATHS", "/usr"}, {"AGENTBOX_TIMEOUT_MS", "soon"}}),
              HasSubstr("AGENTBOX_TIMEOUT_MS"));
}

}  // namespace
}  // namespace agentbox
