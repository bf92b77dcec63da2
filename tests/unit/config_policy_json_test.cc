// Tests for config/policy_json and the strict JSON layer beneath it.
#include <fcntl.h>
#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cstdio>
#include <cstdlib>
#include <string>

#include "config/policy_json.h"
#include "config/strict_json.h"

namespace agentbox {
namespace {

using ::testing::HasSubstr;
using ::testing::StartsWith;

// The error message of a document that must be rejected (empty if it was accepted).
std::string RejectMessage(std::string_view text) {
  auto doc = ParsePolicyDocument(text, "test.json");
  EXPECT_FALSE(doc.ok()) << "accepted: " << text;
  if (doc.ok()) return "";
  EXPECT_EQ(doc.error().code, ErrorCode::kPolicy);
  EXPECT_THAT(doc.error().Message(), StartsWith("test.json: "));
  return doc.error().Message();
}

PolicyDocument Accept(std::string_view text) {
  auto doc = ParsePolicyDocument(text, "test.json");
  EXPECT_TRUE(doc.ok()) << text << ": " << (doc.ok() ? "" : doc.error().Message());
  return doc.ok() ? *doc : PolicyDocument{};
}

// --- valid documents ---

TEST(PolicyJson, EveryFieldValid) {
  const PolicyDocument doc = Accept(R"({
    "filesystem": {"readonly": ["~/src", "/usr/share"], "readwrite": ["/tmp/out"],
                   "denied": ["~/src/.env"]},
    "network": {"proxy": {"allowDomains": ["pypi.org", "*.github.com:443"],
                          "denyDomains": ["evil.github.com"]}},
    "timeoutMs": 60000,
    "limits": {"pids": 256, "memoryBytes": 1073741824, "cpuSeconds": 30}
  })");
  EXPECT_EQ(doc.filesystem.readonly, (std::vector<std::string>{"~/src", "/usr/share"}));
  EXPECT_EQ(doc.filesystem.readwrite, (std::vector<std::string>{"/tmp/out"}));
  EXPECT_EQ(doc.filesystem.denied, (std::vector<std::string>{"~/src/.env"}));
  ASSERT_TRUE(doc.network.has_value());
  EXPECT_EQ(doc.network->mode, NetworkMode::kProxy);
  EXPECT_EQ(doc.network->allow_domains, (std::vector<std::string>{"pypi.org", "*.github.com:443"}));
  EXPECT_EQ(doc.network->deny_domains, (std::vector<std::string>{"evil.github.com"}));
  EXPECT_EQ(doc.timeout_ms, 60000u);
  EXPECT_EQ(doc.limits.pids, 256u);
  EXPECT_EQ(doc.limits.memory_bytes, 1073741824u);
  EXPECT_EQ(doc.limits.cpu_seconds, 30u);
}

TEST(PolicyJson, EmptyObjectLeavesEverythingAbsent) {
  EXPECT_EQ(Accept("{}"), PolicyDocument{});
  EXPECT_EQ(Accept(R"({"filesystem": {}, "limits": {}})"), PolicyDocument{});
}

TEST(PolicyJson, NetworkModes) {
  EXPECT_EQ(Accept(R"({"network": "block"})").network, (NetworkWithMode(NetworkMode::kBlock)));
  EXPECT_EQ(Accept(R"({"network": "allow"})").network, (NetworkWithMode(NetworkMode::kAllow)));
  EXPECT_EQ(Accept(R"({"network": {"proxy": {"allowDomains": []}}})").network,
            (NetworkWithMode(NetworkMode::kProxy)));
}

TEST(PolicyJson, LargestIntegerAccepted) {
  EXPECT_EQ(Accept(R"({"timeoutMs": 18446744073709551615})").timeout_ms, UINT64_MAX);
  EXPECT_EQ(Accept(R"({"timeoutMs": 1})").timeout_ms, 1u);
}

// --- unknown fields ---

TEST(PolicyJson, UnknownFieldTopLevel) {
  const std::string msg = RejectMessage(R"({"timeoutMs": 5, "timeout": 5})");
  EXPECT_THAT(msg, HasSubstr("unknown field \"timeout\""));
  EXPECT_THAT(msg, HasSubstr("top level"));
  EXPECT_THAT(msg, HasSubstr("timeoutMs"));  // the valid names are listed
}

TEST(PolicyJson, UnknownFieldInFilesystem) {
  EXPECT_THAT(RejectMessage(R"({"filesystem": {"readOnly": []}})"),
              HasSubstr("/filesystem: unknown field \"readOnly\""));
}

TEST(PolicyJson, UnknownFieldInLimits) {
  EXPECT_THAT(RejectMessage(R"({"limits": {"pids": 5, "files": 10}})"),
              HasSubstr("/limits: unknown field \"files\""));
}

TEST(PolicyJson, UnknownFieldInProxy) {
  EXPECT_THAT(RejectMessage(R"({"network": {"proxy": {"allowDomains": [], "port": 8080}}})"),
              HasSubstr("/network/proxy: unknown field \"port\""));
  EXPECT_THAT(RejectMessage(R"({"network": {"proxy": {"allowDomains": []}, "mode": "x"}})"),
              HasSubstr("/network: unknown field \"mode\""));
}

// --- duplicate keys ---

TEST(PolicyJson, DuplicateKeyTopLevel) {
  const std::string msg = RejectMessage(R"({"network": "block", "network": "allow"})");
  EXPECT_THAT(msg, HasSubstr("duplicate key \"network\" at top level"));
}

TEST(PolicyJson, DuplicateKeyNested) {
  EXPECT_THAT(RejectMessage(R"({"filesystem": {"readonly": ["/a"], "readonly": ["/"]}})"),
              HasSubstr("duplicate key \"readonly\" at /filesystem"));
  EXPECT_THAT(
      RejectMessage(R"({"network": {"proxy": {"allowDomains": ["a"], "allowDomains": ["b"]}}})"),
      HasSubstr("duplicate key \"allowDomains\" at /network/proxy"));
}

TEST(PolicyJson, DuplicateKeyInsideArrayElementObject) {
  // Not a valid policy either way, but the duplicate is found first, wherever it is.
  EXPECT_THAT(RejectMessage(R"({"filesystem": {"readonly": [{"a": 1, "a": 2}]}})"),
              HasSubstr("duplicate key \"a\" at /filesystem/readonly/0"));
}

TEST(PolicyJson, SameKeyInDifferentObjectsIsFine) {
  auto json = ParseStrictJson(R"({"a": {"a": 1}, "b": {"a": 2}})", "x");
  ASSERT_TRUE(json.ok()) << json.error().Message();
  EXPECT_EQ((*json)["b"]["a"], 2);
}

// --- wrong types ---

TEST(PolicyJson, StringWhereArrayExpected) {
  EXPECT_THAT(RejectMessage(R"({"filesystem": {"readonly": "/usr"}})"),
              HasSubstr("/filesystem/readonly: expected an array of strings, got string"));
}

TEST(PolicyJson, NumberWhereStringExpected) {
  EXPECT_THAT(RejectMessage(R"({"filesystem": {"denied": ["/a", "/b", 3]}})"),
              HasSubstr("/filesystem/denied/2: expected a string, got number 3"));
  EXPECT_THAT(RejectMessage(R"({"network": {"proxy": {"allowDomains": [true]}}})"),
              HasSubstr("/network/proxy/allowDomains/0: expected a string, got boolean"));
}

TEST(PolicyJson, ObjectsOfWrongType) {
  EXPECT_THAT(RejectMessage(R"({"filesystem": ["/a"]})"),
              HasSubstr("/filesystem: expected an object, got array"));
  EXPECT_THAT(RejectMessage(R"({"limits": 5})"),
              HasSubstr("/limits: expected an object, got number"));
  EXPECT_THAT(RejectMessage(R"({"network": {"proxy": ["a"]}})"),
              HasSubstr("/network/proxy: expected an object, got array"));
  EXPECT_THAT(RejectMessage(R"({"network": 1})"), HasSubstr("/network: expected \"block\""));
}

TEST(PolicyJson, IntegersMustBeNonNegativeWholeNumbers) {
  EXPECT_THAT(RejectMessage(R"({"timeoutMs": 1.5})"),
              HasSubstr("/timeoutMs: expected a non-negative integer"));
  EXPECT_THAT(RejectMessage(R"({"timeoutMs": 1000.0})"), HasSubstr("/timeoutMs: expected"));
  EXPECT_THAT(RejectMessage(R"({"timeoutMs": 1e3})"), HasSubstr("/timeoutMs: expected"));
  EXPECT_THAT(RejectMessage(R"({"timeoutMs": -1})"), HasSubstr("got number -1"));
  EXPECT_THAT(RejectMessage(R"({"timeoutMs": -0})"), HasSubstr("got number -0"));
  EXPECT_THAT(RejectMessage(R"({"timeoutMs": true})"), HasSubstr("got boolean true"));
  EXPECT_THAT(RejectMessage(R"({"timeoutMs": "100"})"), HasSubstr("got string"));
  EXPECT_THAT(RejectMessage(R"({"timeoutMs": 18446744073709551616})"),
              HasSubstr("/timeoutMs: expected a non-negative integer"));
  EXPECT_THAT(RejectMessage(R"({"limits": {"memoryBytes": 99999999999999999999999}})"),
              HasSubstr("/limits/memoryBytes: expected a non-negative integer"));
  EXPECT_THAT(RejectMessage(R"({"limits": {"cpuSeconds": -3}})"),
              HasSubstr("/limits/cpuSeconds: expected a non-negative integer"));
}

TEST(PolicyJson, NullIsNotAbsent) {
  EXPECT_THAT(RejectMessage(R"({"timeoutMs": null})"), HasSubstr("/timeoutMs: expected"));
  EXPECT_THAT(RejectMessage(R"({"network": null})"), HasSubstr("/network: expected"));
  EXPECT_THAT(RejectMessage(R"({"filesystem": null})"),
              HasSubstr("/filesystem: expected an object, got null"));
  EXPECT_THAT(RejectMessage(R"({"filesystem": {"readwrite": null}})"),
              HasSubstr("/filesystem/readwrite: expected an array of strings, got null"));
  EXPECT_THAT(RejectMessage(R"({"limits": {"pids": null}})"),
              HasSubstr("/limits/pids: expected a non-negative integer"));
}

// --- values out of range ---

TEST(PolicyJson, TimeoutZeroRejected) {
  EXPECT_THAT(RejectMessage(R"({"timeoutMs": 0})"),
              HasSubstr("/timeoutMs: timeoutMs must be at least 1"));
}

TEST(PolicyJson, LimitZeroRejected) {
  EXPECT_THAT(RejectMessage(R"({"limits": {"pids": 0}})"),
              HasSubstr("/limits/pids: pids must be at least 1"));
  EXPECT_THAT(RejectMessage(R"({"limits": {"memoryBytes": 0}})"),
              HasSubstr("/limits/memoryBytes: memoryBytes must be at least 1"));
}

TEST(PolicyJson, EmptyPathRejected) {
  EXPECT_THAT(RejectMessage(R"({"filesystem": {"readwrite": ["/tmp", ""]}})"),
              HasSubstr("/filesystem/readwrite/1: must not be empty"));
}

TEST(PolicyJson, PathWithNulRejected) {
  EXPECT_THAT(RejectMessage(R"({"filesystem": {"readonly": ["/ok", "a\u0000b"]}})"),
              HasSubstr("/filesystem/readonly/1: must not contain a NUL byte"));
}

TEST(PolicyJson, EmptyDomainRejected) {
  EXPECT_THAT(RejectMessage(R"({"network": {"proxy": {"allowDomains": ["a.org"],
                                                       "denyDomains": [""]}}})"),
              HasSubstr("/network/proxy/denyDomains/0: must not be empty"));
}

TEST(PolicyJson, BadNetworkString) {
  const std::string msg = RejectMessage(R"({"network": "proxy"})");
  EXPECT_THAT(msg, HasSubstr("/network: unknown network mode \"proxy\""));
  EXPECT_THAT(msg, HasSubstr("\"block\", \"allow\""));
  EXPECT_THAT(RejectMessage(R"({"network": "Block"})"), HasSubstr("\"Block\""));
}

TEST(PolicyJson, ProxyNeedsAllowDomains) {
  EXPECT_THAT(RejectMessage(R"({"network": {"proxy": {"denyDomains": ["a"]}}})"),
              HasSubstr("/network/proxy: missing required field \"allowDomains\""));
  EXPECT_THAT(RejectMessage(R"({"network": {}})"),
              HasSubstr("/network: missing required field \"proxy\""));
}

// --- not JSON, or not an object ---

TEST(PolicyJson, InvalidJson) {
  EXPECT_THAT(RejectMessage(R"({"timeoutMs": 5,})"), HasSubstr("invalid JSON at byte"));
  EXPECT_THAT(RejectMessage(""), HasSubstr("invalid JSON"));
  EXPECT_THAT(RejectMessage(R"({"timeoutMs": 5} {})"), HasSubstr("invalid JSON"));
  EXPECT_THAT(RejectMessage("{\"a\": \"\xff\"}"), HasSubstr("invalid JSON"));
  EXPECT_THAT(RejectMessage("{'a': 1}"), HasSubstr("invalid JSON"));
  EXPECT_THAT(RejectMessage("{\"timeoutMs\": 5 // comment\n}"), HasSubstr("invalid JSON"));
}

TEST(PolicyJson, InvalidJsonMessageIsPrintable) {
  const std::string msg = RejectMessage("{\"a\": \x01\xfe}");
  for (const char c : msg) {
    const auto byte = static_cast<unsigned char>(c);
    EXPECT_TRUE(byte >= 0x20 && byte < 0x7f) << "byte " << int{byte} << " in " << msg;
  }
}

TEST(PolicyJson, TopLevelMustBeAnObject) {
  EXPECT_THAT(RejectMessage("[]"), HasSubstr("top level: expected an object, got array"));
  EXPECT_THAT(RejectMessage("\"block\""), HasSubstr("top level: expected an object, got string"));
  EXPECT_THAT(RejectMessage("null"), HasSubstr("top level: expected an object, got null"));
  EXPECT_THAT(RejectMessage("42"), HasSubstr("top level: expected an object, got number"));
}

// --- strict JSON limits ---

TEST(StrictJson, NestingLimit) {
  const std::string ok = std::string(kMaxJsonDepth, '[') + std::string(kMaxJsonDepth, ']');
  EXPECT_TRUE(ParseStrictJson(ok, "x").ok());
  const std::string deep =
      std::string(kMaxJsonDepth + 1, '[') + std::string(kMaxJsonDepth + 1, ']');
  auto too_deep = ParseStrictJson(deep, "x");
  ASSERT_FALSE(too_deep.ok());
  EXPECT_THAT(too_deep.error().Message(), HasSubstr("nesting deeper than 64"));
  // A huge nesting is refused without building it.
  auto huge = ParseStrictJson(std::string(1'000'000, '['), "x");
  ASSERT_FALSE(huge.ok());
  EXPECT_THAT(huge.error().Message(), HasSubstr("nesting deeper than 64"));
}

TEST(StrictJson, SizeLimit) {
  std::string big = "\"" + std::string(kMaxJsonBytes, 'a') + "\"";
  auto parsed = ParseStrictJson(big, "big.json");
  ASSERT_FALSE(parsed.ok());
  EXPECT_EQ(parsed.error().code, ErrorCode::kPolicy);
  EXPECT_THAT(parsed.error().Message(), HasSubstr("big.json: input is"));
  big.resize(kMaxJsonBytes - 1);
  big += "\"";
  EXPECT_TRUE(ParseStrictJson(big, "big.json").ok());
}

TEST(StrictJson, LocationsEscapePointerCharacters) {
  EXPECT_EQ(ChildLocation("/a", "b/c~d"), "/a/b~1c~0d");
  EXPECT_EQ(ChildLocation("", size_t{3}), "/3");
  EXPECT_EQ(LocationName(""), "top level");
}

TEST(StrictJson, QuoteForMessageEscapesUnprintable) {
  EXPECT_EQ(QuoteForMessage(std::string("a\"\\\n\0\xff", 6)), R"("a\"\\\x0a\x00\xff")");
}

TEST(StrictJson, StrictObjectTypedGetters) {
  auto json = ParseStrictJson(R"({"s": "x", "n": 7, "b": false, "l": ["p"]})", "x");
  ASSERT_TRUE(json.ok());
  auto object = StrictObject::Open(*json, "/cfg", {"s", "n", "b", "l", "absent"});
  ASSERT_TRUE(object.ok()) << object.error().Message();
  EXPECT_EQ(*object->String("s"), "x");
  EXPECT_EQ(*object->Uint64("n"), 7u);
  EXPECT_EQ(*object->OptionalBool("b"), std::optional<bool>(false));
  EXPECT_EQ(*object->StringArray("l"), std::vector<std::string>{"p"});
  EXPECT_EQ(*object->OptionalString("absent"), std::nullopt);
  EXPECT_EQ(*object->OptionalUint64("absent"), std::nullopt);
  EXPECT_TRUE(object->OptionalStringArray("absent")->empty());
  auto missing = object->String("absent");
  ASSERT_FALSE(missing.ok());
  EXPECT_EQ(missing.error().Message(), "/cfg: missing required field \"absent\"");
  auto wrong = object->Uint64("s");
  ASSERT_FALSE(wrong.ok());
  EXPECT_THAT(wrong.error().Message(), StartsWith("/cfg/s: expected a non-negative integer"));
  auto not_bool = object->OptionalBool("n");
  ASSERT_FALSE(not_bool.ok());
  EXPECT_EQ(not_bool.error().Message(), "/cfg/n: expected true or false, got number 7");
}

TEST(StrictJson, StrictObjectWithNoAllowedFields) {
  auto json = ParseStrictJson(R"({"x": 1})", "x");
  ASSERT_TRUE(json.ok());
  auto object = StrictObject::Open(*json, "/params", {});
  ASSERT_FALSE(object.ok());
  EXPECT_EQ(object.error().Message(), "/params: unknown field \"x\" (expected no fields)");
}

// --- round trip and output ---

TEST(PolicyJson, RoundTrip) {
  const char* docs[] = {
      "{}",
      R"({"network": "block"})",
      R"({"network": "allow", "timeoutMs": 1})",
      R"({"network": {"proxy": {"allowDomains": []}}})",
      R"({"filesystem": {"readonly": ["a", "~/b"], "denied": ["/c"]},
          "network": {"proxy": {"allowDomains": ["x.org"], "denyDomains": ["y.x.org"]}},
          "timeoutMs": 18446744073709551615,
          "limits": {"pids": 1, "cpuSeconds": 2}})",
      R"({"filesystem": {"readwrite": ["/t\u00e9st", "a\nb"]}, "limits": {"memoryBytes": 9}})",
  };
  for (const char* text : docs) {
    const PolicyDocument doc = Accept(text);
    const std::string dumped = DumpJson(PolicyDocumentToJson(doc));
    auto again = ParsePolicyDocument(dumped, "dumped");
    ASSERT_TRUE(again.ok()) << dumped << ": " << again.error().Message();
    EXPECT_EQ(*again, doc) << text << " -> " << dumped;
  }
}

TEST(PolicyJson, PolicyDocumentToJsonOmitsAbsentFields) {
  PolicyDocument doc;
  doc.timeout_ms = 5;
  EXPECT_EQ(PolicyDocumentToJson(doc),
            nlohmann::json::parse(R"({"filesystem": {"readonly": [], "readwrite": [],
                                                     "denied": []}, "timeoutMs": 5})"));
}

TEST(PolicyJson, PolicyToJson) {
  Policy policy;
  policy.filesystem.readonly = {"/usr"};
  policy.filesystem.readwrite = {"/tmp/x"};
  policy.network = NetworkWithMode(NetworkMode::kProxy);
  policy.network.allow_domains = {"a.org"};
  policy.network.deny_domains = {"b.a.org"};
  policy.timeout_ms = 1000;
  policy.limits.pids = 64;
  EXPECT_EQ(PolicyToJson(policy), nlohmann::json::parse(R"({
    "filesystem": {"readonly": ["/usr"], "readwrite": ["/tmp/x"], "denied": []},
    "network": {"proxy": {"allowDomains": ["a.org"], "denyDomains": ["b.a.org"]}},
    "timeoutMs": 1000,
    "limits": {"pids": 64}})"));
  policy.network = Network{};
  policy.limits = Limits{};
  const nlohmann::json blocked = PolicyToJson(policy);
  EXPECT_EQ(blocked["network"], "block");
  EXPECT_EQ(blocked["limits"], nlohmann::json::object());
}

TEST(PolicyJson, DecisionAndClampResultToJson) {
  const Decision decision{DecisionKind::kPath, "/home/u/.ssh", "readonly", "none",
                          "credentials are never granted"};
  EXPECT_EQ(DecisionToJson(decision), nlohmann::json::parse(R"({
    "kind": "path", "path": "/home/u/.ssh", "asked": "readonly", "granted": "none",
    "reason": "credentials are never granted"})"));
  ClampResult result;
  result.decisions = {decision};
  const nlohmann::json out = ClampResultToJson(result);
  EXPECT_EQ(out["policy"], PolicyToJson(result.policy));
  ASSERT_EQ(out["decisions"].size(), 1u);
  EXPECT_EQ(out["decisions"][0]["kind"], "path");
  EXPECT_EQ(ClampResultToJson(ClampResult{})["decisions"], nlohmann::json::array());
}

TEST(PolicyJson, DumpJsonReplacesInvalidUtf8) {
  Policy policy;
  policy.filesystem.readonly = {"/data/\xff"};
  const std::string dumped = DumpJson(PolicyToJson(policy));
  EXPECT_THAT(dumped, HasSubstr("/data/\xef\xbf\xbd"));  // U+FFFD
}

// --- files ---

class PolicyFileTest : public ::testing::Test {
 protected:
  void SetUp() override {
    char tmpl[] = "/tmp/agentbox-policy-test-XXXXXX";
    ASSERT_NE(::mkdtemp(tmpl), nullptr);
    dir_ = tmpl;
  }
  void TearDown() override {
    for (const std::string& path : created_) ::unlink(path.c_str());
    ::rmdir(dir_.c_str());
  }
  std::string Write(const std::string& name, const std::string& content) {
    const std::string path = dir_ + "/" + name;
    std::FILE* f = std::fopen(path.c_str(), "wb");
    EXPECT_NE(f, nullptr);
    if (f == nullptr) return path;
    EXPECT_EQ(std::fwrite(content.data(), 1, content.size(), f), content.size());
    std::fclose(f);
    created_.push_back(path);
    return path;
  }

  std::string dir_;
  std::vector<std::string> created_;
};

TEST_F(PolicyFileTest, LoadsValidFile) {
  const std::string path = Write("ok.json", R"({"timeoutMs": 42, "network": "allow"})");
  auto doc = LoadPolicyFile(path);
  ASSERT_TRUE(doc.ok()) << doc.error().Message();
  EXPECT_EQ(doc->timeout_ms, 42u);
  EXPECT_EQ(doc->network->mode, NetworkMode::kAllow);
}

TEST_F(PolicyFileTest, ParseErrorNamesThePath) {
  const std::string path = Write("bad.json", R"({"timeoutMs": 0})");
  auto doc = LoadPolicyFile(path);
  ASSERT_FALSE(doc.ok());
  EXPECT_EQ(doc.error().code, ErrorCode::kPolicy);
  EXPECT_THAT(doc.error().Message(), StartsWith(path + ": /timeoutMs:"));
}

TEST_F(PolicyFileTest, MissingFile) {
  const std::string path = dir_ + "/absent.json";
  auto doc = LoadPolicyFile(path);
  ASSERT_FALSE(doc.ok());
  EXPECT_EQ(doc.error().code, ErrorCode::kPolicy);
  EXPECT_THAT(doc.error().Message(), HasSubstr(path));
  EXPECT_THAT(doc.error().Message(), HasSubstr("No such file or directory"));
}

TEST_F(PolicyFileTest, DirectoryAndFifoAreNotRegularFiles) {
  auto doc = LoadPolicyFile(dir_);
  ASSERT_FALSE(doc.ok());
  EXPECT_THAT(doc.error().Message(), HasSubstr("not a regular file"));

  const std::string fifo = dir_ + "/fifo";
  ASSERT_EQ(::mkfifo(fifo.c_str(), 0600), 0);
  created_.push_back(fifo);
  auto from_fifo = LoadPolicyFile(fifo);  // must not block waiting for a writer
  ASSERT_FALSE(from_fifo.ok());
  EXPECT_THAT(from_fifo.error().Message(), HasSubstr("not a regular file"));
}

TEST_F(PolicyFileTest, TooLarge) {
  const std::string path = Write("big.json", std::string(kMaxJsonBytes + 1, ' '));
  auto doc = LoadPolicyFile(path);
  ASSERT_FALSE(doc.ok());
  EXPECT_THAT(doc.error().Message(), HasSubstr(path));
  EXPECT_THAT(doc.error().Message(), HasSubstr("larger than"));
}

}  // namespace
}  // namespace agentbox
