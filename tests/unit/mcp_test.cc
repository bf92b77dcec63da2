// Tests for the MCP server's pure parts: JSON-RPC framing (mcp/jsonrpc), output sanitizing
// and capping (mcp/output), base64 (base/base64), and tool-argument validation through
// CallTool (mcp/tools) with a BeforeRun stub that records whether the audit hook was reached.
//
// The validation tests never let anything run: invalid arguments must be refused before
// BeforeRun (so nothing is audited as pending and nothing runs); the few valid-argument
// controls make BeforeRun fail, which must refuse the call too (fail closed).
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <filesystem>
#include <string>
#include <vector>

#include "base/base64.h"
#include "config/strict_json.h"
#include "fixture_tree.h"
#include "mcp/jsonrpc.h"
#include "mcp/output.h"
#include "mcp/tools.h"

namespace agentbox::mcp {
namespace {

using nlohmann::json;
using ::testing::HasSubstr;
using ::testing::Not;

// ---- Framing ---------------------------------------------------------------------------

TEST(JsonRpcParse, RequestWithIdZeroKeepsTheId) {
  const Message m = ParseMessage(R"({"jsonrpc":"2.0","id":0,"method":"ping"})");
  ASSERT_EQ(m.kind, Message::kRequest);
  EXPECT_EQ(m.id, json(0));
  EXPECT_TRUE(m.id.is_number_integer());
  EXPECT_EQ(m.method, "ping");
  EXPECT_TRUE(m.params.is_null());
  // Echoed exactly: 0, not null and not omitted.
  const json reply = json::parse(Response(m.id, json::object()));
  ASSERT_TRUE(reply.contains("id"));
  EXPECT_EQ(reply["id"], json(0));
}

TEST(JsonRpcParse, StringIdsAreKeptAsStrings) {
  for (const char* id : {"abc", "0", "", "1"}) {
    const Message m =
        ParseMessage(json({{"jsonrpc", "2.0"}, {"id", id}, {"method", "ping"}}).dump());
    ASSERT_EQ(m.kind, Message::kRequest) << id;
    EXPECT_TRUE(m.id.is_string()) << id;
    EXPECT_EQ(m.id, json(id));
    EXPECT_EQ(json::parse(Response(m.id, {}))["id"], json(id));
  }
}

TEST(JsonRpcParse, LargeAndNegativeIntegerIds) {
  for (const json& id : {json(-1), json(int64_t{1} << 53), json(uint64_t{18446744073709551615u})}) {
    const Message m = ParseMessage(json({{"jsonrpc", "2.0"}, {"id", id}, {"method", "x"}}).dump());
    ASSERT_EQ(m.kind, Message::kRequest) << id;
    EXPECT_EQ(json::parse(Response(m.id, {}))["id"], id);
  }
}

TEST(JsonRpcParse, MissingParamsIsNull) {
  const Message m = ParseMessage(R"({"jsonrpc":"2.0","id":7,"method":"tools/list"})");
  ASSERT_EQ(m.kind, Message::kRequest);
  EXPECT_EQ(m.method, "tools/list");
  EXPECT_TRUE(m.params.is_null());
}

TEST(JsonRpcParse, NullParamsIsAccepted) {
  const Message m = ParseMessage(R"({"jsonrpc":"2.0","id":7,"method":"tools/list","params":null})");
  ASSERT_EQ(m.kind, Message::kRequest);
  EXPECT_TRUE(m.params.is_null());
}

TEST(JsonRpcParse, ObjectParamsAreKept) {
  const Message m = ParseMessage(
      R"({"jsonrpc":"2.0","id":"a","method":"tools/call","params":{"name":"run_code","arguments":{"argv":["true"]}}})");
  ASSERT_EQ(m.kind, Message::kRequest);
  EXPECT_EQ(m.params["name"], "run_code");
  EXPECT_EQ(m.params["arguments"]["argv"][0], "true");
}

TEST(JsonRpcParse, BatchesAreInvalidRequests) {
  for (const char* line : {R"([{"jsonrpc":"2.0","id":1,"method":"ping"}])", "[]", "[1,2]"}) {
    const Message m = ParseMessage(line);
    EXPECT_EQ(m.kind, Message::kInvalid) << line;
    EXPECT_EQ(m.error_code, kInvalidRequest) << line;
    EXPECT_TRUE(m.id.is_null()) << line;
  }
}

TEST(JsonRpcParse, NonObjectsAreInvalidRequests) {
  for (const char* line : {"1", "\"ping\"", "null", "true"}) {
    const Message m = ParseMessage(line);
    EXPECT_EQ(m.kind, Message::kInvalid) << line;
    EXPECT_EQ(m.error_code, kInvalidRequest) << line;
  }
}

TEST(JsonRpcParse, BadJsonrpcVersionKeepsTheIdForTheError) {
  for (const char* line :
       {R"({"jsonrpc":"1.0","id":3,"method":"ping"})", R"({"jsonrpc":2.0,"id":3,"method":"ping"})",
        R"({"id":3,"method":"ping"})"}) {
    const Message m = ParseMessage(line);
    EXPECT_EQ(m.kind, Message::kInvalid) << line;
    EXPECT_EQ(m.error_code, kInvalidRequest) << line;
    EXPECT_EQ(m.id, json(3)) << line;
  }
}

TEST(JsonRpcParse, InvalidIdTypesAreInvalidRequests) {
  for (const char* line : {R"({"jsonrpc":"2.0","id":1.5,"method":"ping"})",
                           R"({"jsonrpc":"2.0","id":true,"method":"ping"})",
                           R"({"jsonrpc":"2.0","id":{},"method":"ping"})",
                           R"({"jsonrpc":"2.0","id":[1],"method":"ping"})"}) {
    const Message m = ParseMessage(line);
    EXPECT_EQ(m.kind, Message::kInvalid) << line;
    EXPECT_EQ(m.error_code, kInvalidRequest) << line;
    EXPECT_TRUE(m.id.is_null()) << line;
  }
}

TEST(JsonRpcParse, NotificationHasNoId) {
  const Message m = ParseMessage(R"({"jsonrpc":"2.0","method":"notifications/initialized"})");
  EXPECT_EQ(m.kind, Message::kNotification);
  EXPECT_TRUE(m.id.is_null());
  EXPECT_EQ(m.method, "notifications/initialized");
}

TEST(JsonRpcParse, NullIdIsARequestNotANotification) {
  // "id": null is present, though discouraged; it is not a notification.
  const Message m = ParseMessage(R"({"jsonrpc":"2.0","id":null,"method":"ping"})");
  EXPECT_NE(m.kind, Message::kNotification);
}

TEST(JsonRpcParse, CancelNotificationKeepsParams) {
  const Message m = ParseMessage(
      R"({"jsonrpc":"2.0","method":"notifications/cancelled","params":{"requestId":0,"reason":"x"}})");
  ASSERT_EQ(m.kind, Message::kNotification);
  EXPECT_EQ(m.params["requestId"], json(0));
}

TEST(JsonRpcParse, ResponsesFromTheClientAreRecognised) {
  Message m = ParseMessage(R"({"jsonrpc":"2.0","id":5,"result":{}})");
  EXPECT_EQ(m.kind, Message::kResponse);
  EXPECT_EQ(m.id, json(5));
  m = ParseMessage(R"({"jsonrpc":"2.0","id":"x","error":{"code":-1,"message":"m"}})");
  EXPECT_EQ(m.kind, Message::kResponse);
}

TEST(JsonRpcParse, MissingMethodIsInvalidRequest) {
  const Message m = ParseMessage(R"({"jsonrpc":"2.0","id":9})");
  EXPECT_EQ(m.kind, Message::kInvalid);
  EXPECT_EQ(m.error_code, kInvalidRequest);
  EXPECT_EQ(m.id, json(9));
}

TEST(JsonRpcParse, NonStringMethodIsInvalidRequest) {
  const Message m = ParseMessage(R"({"jsonrpc":"2.0","id":9,"method":5})");
  EXPECT_EQ(m.kind, Message::kInvalid);
  EXPECT_EQ(m.error_code, kInvalidRequest);
  EXPECT_EQ(m.id, json(9));
}

TEST(JsonRpcParse, ParseErrorHasNoId) {
  for (const char* line : {"{", "not json", R"({"jsonrpc":"2.0","id":1,"method":"ping"} x)",
                           R"({"jsonrpc":"2.0","id":1,"id":2,"method":"ping"})", "\xff\xfe"}) {
    const Message m = ParseMessage(line);
    EXPECT_EQ(m.kind, Message::kInvalid) << line;
    EXPECT_EQ(m.error_code, kParseError) << line;
    EXPECT_TRUE(m.id.is_null()) << line;
    const json reply = json::parse(ErrorResponse(m.id, m.error_code, m.error_message));
    EXPECT_FALSE(reply.contains("id")) << reply.dump();
    EXPECT_EQ(reply["error"]["code"], kParseError);
    EXPECT_EQ(reply["jsonrpc"], "2.0");
  }
}

TEST(JsonRpcParse, ParamsThatAreNotAnObject) {
  for (const char* params : {"[1,2]", "\"x\"", "3", "true"}) {
    const std::string request =
        std::string(R"({"jsonrpc":"2.0","id":4,"method":"tools/list","params":)") + params + "}";
    Message m = ParseMessage(request);
    EXPECT_EQ(m.kind, Message::kInvalid) << params;
    EXPECT_EQ(m.error_code, kInvalidParams) << params;
    EXPECT_EQ(m.id, json(4)) << params;
  }
}

TEST(JsonRpcParse, OversizedLineIsInvalidRequest) {
  const std::string line(kMaxLineBytes + 1, ' ');
  const Message m = ParseMessage(line);
  EXPECT_EQ(m.kind, Message::kInvalid);
  EXPECT_EQ(m.error_code, kInvalidRequest);
}

TEST(JsonRpcWrite, ResponsesAreSingleLines) {
  const std::string r = Response(json(1), {{"text", "a\nb\r\nc"}});
  ASSERT_FALSE(r.empty());
  EXPECT_EQ(r.back(), '\n');
  EXPECT_EQ(r.find('\n'), r.size() - 1);
  const json j = json::parse(r);
  EXPECT_EQ(j["jsonrpc"], "2.0");
  EXPECT_EQ(j["result"]["text"], "a\nb\r\nc");

  const std::string e = ErrorResponse(json("x"), kMethodNotFound, "method not found: a\nb");
  EXPECT_EQ(e.find('\n'), e.size() - 1);
  const json ej = json::parse(e);
  EXPECT_EQ(ej["id"], "x");
  EXPECT_EQ(ej["error"]["code"], kMethodNotFound);
  EXPECT_FALSE(ej.contains("result"));

  const std::string n = Notification("notifications/progress", {{"progress", 1}});
  EXPECT_EQ(n.find('\n'), n.size() - 1);
  const json nj = json::parse(n);
  EXPECT_FALSE(nj.contains("id"));
  EXPECT_EQ(nj["method"], "notifications/progress");
}

TEST(JsonRpcWrite, InvalidUtf8InAResultStillGivesValidJson) {
  const std::string r = Response(json(1), {{"text", std::string("a\xff\xfe") + "b"}});
  EXPECT_EQ(r.find('\n'), r.size() - 1);
  const json parsed = json::parse(r, nullptr, /*allow_exceptions=*/false);
  EXPECT_FALSE(parsed.is_discarded()) << r;
}

// ---- Sanitizing ------------------------------------------------------------------------

TEST(StripControlSequences, CsiColoursAndCursorMoves) {
  EXPECT_EQ(StripControlSequences("\x1b[31mred\x1b[0m plain"), "red plain");
  EXPECT_EQ(StripControlSequences("\x1b[1;32;40mx\x1b[m"), "x");
  EXPECT_EQ(StripControlSequences("a\x1b[2Jb\x1b[10;5Hc\x1b[Kd\x1b[?25le"), "abcde");
  EXPECT_EQ(StripControlSequences("up\x1b[3Adown\x1b[2B"), "updown");
}

TEST(StripControlSequences, OscTitleWithBelAndWithSt) {
  EXPECT_EQ(StripControlSequences("a\x1b]0;evil title\x07z"), "az");
  EXPECT_EQ(StripControlSequences("a\x1b]2;evil title\x1b\\z"), "az");
  // Hyperlinks (OSC 8) are removed but their visible text is kept.
  EXPECT_EQ(StripControlSequences("\x1b]8;;http://x\x1b\\link\x1b]8;;\x1b\\"), "link");
  // DCS and APC too.
  EXPECT_EQ(StripControlSequences("a\x1bPq#0;2;0;0;0\x1b\\b"), "ab");
  EXPECT_EQ(StripControlSequences("a\x1b_payload\x1b\\b"), "ab");
}

TEST(StripControlSequences, TwoByteEscapes) {
  EXPECT_EQ(StripControlSequences("a\x1b"
                                  "7b\x1b"
                                  "8c"),
            "abc");
  EXPECT_EQ(StripControlSequences("a\x1b(Bb"), "ab");  // charset designation
}

TEST(StripControlSequences, C1ControlsAsUtf8) {
  EXPECT_EQ(StripControlSequences("a\xc2\x9b"
                                  "31mb"),
            "a31mb");  // CSI as C1: intro removed
  EXPECT_EQ(StripControlSequences("a\xc2\x80z\xc2\x9fy"), "azy");
  // U+00A0 (C2 A0) is not a control and stays.
  EXPECT_EQ(StripControlSequences("a\xc2\xa0z"), "a\xc2\xa0z");
}

TEST(StripControlSequences, C0ControlsDelAndNulRemoved) {
  const std::string raw = std::string("a\0b", 3) + "\x01\x07\x08\x0b\x0c\r\x7f" + "c";
  EXPECT_EQ(StripControlSequences(raw), "abc");
}

TEST(StripControlSequences, NewlineAndTabKept) {
  EXPECT_EQ(StripControlSequences("a\tb\nc\n"), "a\tb\nc\n");
}

TEST(StripControlSequences, Utf8Kept) {
  const std::string text = "h\xc3\xa9llo \xe2\x82\xac \xf0\x9f\x98\x80 \xe4\xb8\xad\xe6\x96\x87";
  EXPECT_EQ(StripControlSequences(text), text);
}

TEST(StripControlSequences, UnterminatedSequencesDoNotLeakOrCrash) {
  EXPECT_EQ(StripControlSequences("a\x1b"), "a");
  EXPECT_EQ(StripControlSequences("a\x1b["), "a");
  EXPECT_EQ(StripControlSequences("a\x1b[12;"), "a");
  EXPECT_EQ(StripControlSequences("a\x1b]0;title"), "a");
  EXPECT_EQ(StripControlSequences("a\x1b]0;title\x1b"), "a");
}

TEST(StripControlSequences, OutputHasNoControlBytesLeft) {
  std::string all;
  for (int c = 0; c < 256; ++c) all.push_back(static_cast<char>(c));
  const std::string out = StripControlSequences(all + all);
  for (const char ch : out) {
    const auto c = static_cast<unsigned char>(ch);
    EXPECT_TRUE(c >= 0x20 || c == '\n' || c == '\t') << static_cast<int>(c);
    EXPECT_NE(c, 0x7F);
    EXPECT_NE(c, 0x1B);
  }
}

// ---- Capping ---------------------------------------------------------------------------

TEST(CapText, ShortTextUnchanged) {
  const CappedText t = CapText("hello", 10);
  EXPECT_EQ(t.text, "hello");
  EXPECT_FALSE(t.truncated);
  EXPECT_FALSE(CapText(std::string(10, 'x'), 10).truncated);
}

TEST(CapText, HeadAndTailKeptWithMarkerAndFlag) {
  std::string text = "HEAD" + std::string(10000, 'm') + "TAIL";
  const CappedText t = CapText(text, 1000);
  EXPECT_TRUE(t.truncated);
  EXPECT_EQ(t.text.substr(0, 4), "HEAD");
  EXPECT_EQ(t.text.substr(t.text.size() - 4), "TAIL");
  EXPECT_THAT(t.text, HasSubstr("bytes omitted"));
  // The omitted count is what was left out.
  EXPECT_THAT(t.text, HasSubstr("[... " + std::to_string(text.size() - 1000) + " bytes omitted"));
  // Bounded: the limit plus a short marker line.
  EXPECT_LE(t.text.size(), 1000u + 64u);
}

TEST(CapText, NeverSplitsAUtf8Character) {
  const std::string euro = "\xe2\x82\xac";       // 3 bytes
  const std::string emoji = "\xf0\x9f\x98\x80";  // 4 bytes
  for (const std::string& ch : {euro, emoji, std::string("\xc3\xa9")}) {
    std::string text;
    while (text.size() < 5000) text += ch;
    for (size_t limit = 256; limit < 280; ++limit) {
      const CappedText t = CapText(text, limit);
      ASSERT_TRUE(t.truncated);
      EXPECT_TRUE(IsValidUtf8(t.text)) << "limit " << limit << " char size " << ch.size();
      EXPECT_LE(t.text.size(), limit + 64);
    }
  }
}

TEST(CapText, SanitizeThenCap) {
  std::string raw;
  for (int i = 0; i < 2000; ++i) raw += "\x1b[31mline\x1b[0m\n";
  const CappedText t = SanitizeAndCap(raw, 512);
  EXPECT_TRUE(t.truncated);
  EXPECT_THAT(t.text, Not(HasSubstr("\x1b")));
  EXPECT_EQ(t.text.substr(0, 5), "line\n");
}

// ---- IsValidUtf8 -----------------------------------------------------------------------

TEST(IsValidUtf8, Accepts) {
  EXPECT_TRUE(IsValidUtf8(""));
  EXPECT_TRUE(IsValidUtf8("plain ascii\n"));
  EXPECT_TRUE(IsValidUtf8(std::string("nul\0inside", 10)));
  EXPECT_TRUE(IsValidUtf8("\xc3\xa9\xe2\x82\xac\xf0\x9f\x98\x80"));
  EXPECT_TRUE(IsValidUtf8("\xf4\x8f\xbf\xbf"));  // U+10FFFF
  EXPECT_TRUE(IsValidUtf8("\xed\x9f\xbf"));      // U+D7FF
  EXPECT_TRUE(IsValidUtf8("\xee\x80\x80"));      // U+E000
}

TEST(IsValidUtf8, Rejects) {
  EXPECT_FALSE(IsValidUtf8("\xff"));
  EXPECT_FALSE(IsValidUtf8("\x80"));              // lone continuation
  EXPECT_FALSE(IsValidUtf8("\xc3"));              // truncated
  EXPECT_FALSE(IsValidUtf8("a\xe2\x82"));         // truncated at the end
  EXPECT_FALSE(IsValidUtf8("\xc0\xaf"));          // overlong '/'
  EXPECT_FALSE(IsValidUtf8("\xe0\x80\xaf"));      // overlong
  EXPECT_FALSE(IsValidUtf8("\xf0\x80\x80\xaf"));  // overlong
  EXPECT_FALSE(IsValidUtf8("\xed\xa0\x80"));      // surrogate U+D800
  EXPECT_FALSE(IsValidUtf8("\xed\xbf\xbf"));      // surrogate U+DFFF
  EXPECT_FALSE(IsValidUtf8("\xf4\x90\x80\x80"));  // U+110000
  EXPECT_FALSE(IsValidUtf8("\xf8\x88\x80\x80\x80"));
  EXPECT_FALSE(IsValidUtf8("\xc3\x28"));  // bad continuation
}

// ---- base64 ----------------------------------------------------------------------------

TEST(Base64, KnownVectors) {
  // RFC 4648 §10.
  const std::vector<std::pair<std::string, std::string>> vectors = {{"", ""},
                                                                    {"f", "Zg=="},
                                                                    {"fo", "Zm8="},
                                                                    {"foo", "Zm9v"},
                                                                    {"foob", "Zm9vYg=="},
                                                                    {"fooba", "Zm9vYmE="},
                                                                    {"foobar", "Zm9vYmFy"}};
  for (const auto& [plain, encoded] : vectors) {
    EXPECT_EQ(Base64Encode(plain), encoded);
    auto decoded = Base64Decode(encoded);
    ASSERT_TRUE(decoded.has_value()) << encoded;
    EXPECT_EQ(*decoded, plain);
  }
}

TEST(Base64, RoundTripsEveryByteAndLength) {
  std::string bytes;
  for (int i = 0; i < 256; ++i) bytes.push_back(static_cast<char>(i));
  for (size_t n = 0; n <= bytes.size(); n += 1) {
    const std::string in = bytes.substr(bytes.size() - n);
    auto out = Base64Decode(Base64Encode(in));
    ASSERT_TRUE(out.has_value()) << n;
    EXPECT_EQ(*out, in) << n;
  }
}

TEST(Base64, StrictRejects) {
  for (const char* bad :
       {"Zg", "Zg=", "Zm9", "Zg===", "====", "Z===", "Zm9v\n", " Zm9v", "Zm9v YmFy", "Zm=v",
        "Zg==Zg==", "Zm9-", "Zm9_", "Zh==", "Zm9=", "Zm8", "*m9v"}) {
    EXPECT_FALSE(Base64Decode(bad).has_value()) << bad;
  }
}

// ---- Tool argument validation through CallTool -----------------------------------------

// A project directory as the ceiling's read-write entry, and a BeforeRun that records calls.
class ToolValidation : public ::testing::Test {
 protected:
  void SetUp() override {
    project_ = tree_.Dir("project");
    tree_.File("project/file.txt", "hello\n");
    tc_.ceiling.doc.filesystem.readwrite = {project_};
    tc_.paths = PathContext{tree_.Dir("home"), project_};
    tc_.self_exe = std::filesystem::canonical("/proc/self/exe").string();
  }

  // Calls the tool with a BeforeRun that records its call and refuses (so nothing runs even
  // if validation wrongly lets the call through).
  ToolOutcome Call(const std::string& tool, const json& arguments) {
    // As on the wire: the arguments went through JSON text (integers parse as unsigned).
    ToolCall call{tool, json::parse(arguments.dump()), -1, nullptr};
    return CallTool(tc_, call, [this](const json& policy, const json& decisions) {
      before_run_calls_.push_back({policy, decisions});
      return Result<std::string>(MakeError(ErrorCode::kSetup, "test: audit refused"));
    });
  }

  // The call must be refused as invalid, before BeforeRun.
  void ExpectInvalid(const std::string& tool, const json& arguments,
                     const std::string& message_part = "") {
    SCOPED_TRACE(tool + " " + arguments.dump());
    before_run_calls_.clear();
    const ToolOutcome out = Call(tool, arguments);
    EXPECT_TRUE(out.is_error);
    EXPECT_TRUE(out.refused);
    EXPECT_TRUE(out.audit_id.empty());
    EXPECT_TRUE(out.structured.is_null()) << out.structured.dump();
    EXPECT_FALSE(out.message.empty());
    EXPECT_THAT(out.message, Not(HasSubstr("audit log")));
    if (!message_part.empty()) {
      EXPECT_THAT(out.message, HasSubstr(message_part));
    }
    EXPECT_TRUE(before_run_calls_.empty()) << "BeforeRun was called for invalid arguments";
  }

  // The arguments are valid: BeforeRun is reached (and, refusing, stops the call).
  void ExpectReachesBeforeRun(const std::string& tool, const json& arguments) {
    SCOPED_TRACE(tool + " " + arguments.dump());
    before_run_calls_.clear();
    const ToolOutcome out = Call(tool, arguments);
    EXPECT_EQ(before_run_calls_.size(), 1u) << out.message;
    EXPECT_TRUE(out.is_error);
    EXPECT_TRUE(out.refused);
    EXPECT_THAT(out.message, HasSubstr("audit log"));
  }

  agentbox::testing::FixtureTree tree_;
  std::string project_;
  ToolContext tc_;
  std::vector<std::pair<json, json>> before_run_calls_;
};

TEST_F(ToolValidation, RunCodeValidArgumentsReachBeforeRun) {
  ExpectReachesBeforeRun("run_code", {{"argv", {"true"}}});
  ExpectReachesBeforeRun("run_code", {{"argv", {"sh", "-c", "exit 3"}},
                                      {"cwd", project_},
                                      {"stdin", "x"},
                                      {"env", {{"FOO", "bar"}, {"_X1", ""}}},
                                      {"network", "block"},
                                      {"timeout_ms", 1000}});
  ExpectReachesBeforeRun("run_code",
                         {{"argv", {"true"}}, {"network", {{"allow_domains", {"example.com"}}}}});
  // null means "not given" (models often send it).
  ExpectReachesBeforeRun("run_code", {{"argv", {"true"}}, {"cwd", nullptr}, {"env", nullptr}});
}

TEST_F(ToolValidation, RunCodePolicyAndDecisionsAreGivenToBeforeRun) {
  ExpectReachesBeforeRun("run_code", {{"argv", {"true"}}, {"readwrite_paths", {project_}}});
  ASSERT_EQ(before_run_calls_.size(), 1u);
  const json& policy = before_run_calls_[0].first;
  EXPECT_TRUE(policy.is_object()) << policy.dump();
  EXPECT_THAT(DumpJson(policy), HasSubstr(project_));
  EXPECT_TRUE(before_run_calls_[0].second.is_array());
}

TEST_F(ToolValidation, RunCodeBeforeRunFailingMeansNothingRuns) {
  const std::string marker = project_ + "/ran";
  ExpectReachesBeforeRun("run_code", {{"argv", {"/bin/sh", "-c", "touch " + marker}}});
  EXPECT_FALSE(std::filesystem::exists(marker));
}

TEST_F(ToolValidation, RunCodeUnknownFields) {
  ExpectInvalid("run_code", {{"argv", {"true"}}, {"shell", true}}, "unknown field");
  ExpectInvalid("run_code", {{"argv", {"true"}}, {"timeout", 5}}, "unknown field");
  ExpectInvalid("run_code", {{"command", "ls"}});
}

TEST_F(ToolValidation, RunCodeWrongTypes) {
  ExpectInvalid("run_code", json::object(), "argv");
  ExpectInvalid("run_code", nullptr, "argv");
  ExpectInvalid("run_code", {{"argv", "ls -l"}}, "argv");
  ExpectInvalid("run_code", {{"argv", {"ls", 1}}}, "argv");
  ExpectInvalid("run_code", {{"argv", {{"ls"}}}});
  ExpectInvalid("run_code", {{"argv", {"true"}}, {"cwd", 5}}, "cwd");
  ExpectInvalid("run_code", {{"argv", {"true"}}, {"stdin", {1, 2}}}, "stdin");
  ExpectInvalid("run_code", {{"argv", {"true"}}, {"env", {"A=1"}}}, "env");
  ExpectInvalid("run_code", {{"argv", {"true"}}, {"env", {{"A", 1}}}}, "env");
  ExpectInvalid("run_code", {{"argv", {"true"}}, {"env", {{"A", nullptr}}}}, "env");
  ExpectInvalid("run_code", {{"argv", {"true"}}, {"readonly_paths", "/tmp"}}, "readonly_paths");
  ExpectInvalid("run_code", {{"argv", {"true"}}, {"readwrite_paths", {1}}}, "readwrite_paths");
  ExpectInvalid("run_code", {{"argv", {"true"}}, {"timeout_ms", "5"}}, "timeout_ms");
  ExpectInvalid("run_code", {{"argv", {"true"}}, {"timeout_ms", -1}}, "timeout_ms");
  ExpectInvalid("run_code", {{"argv", {"true"}}, {"timeout_ms", 1.5}}, "timeout_ms");
  ExpectInvalid("run_code", {{"argv", {"true"}}, {"timeout_ms", true}}, "timeout_ms");
}

TEST_F(ToolValidation, RunCodeEmptyArgv) {
  ExpectInvalid("run_code", {{"argv", json::array()}}, "argv");
  ExpectInvalid("run_code", {{"argv", {""}}}, "argv");
}

TEST_F(ToolValidation, RunCodeNulInArgv) {
  ExpectInvalid("run_code", {{"argv", {"echo", std::string("a\0b", 3)}}}, "NUL");
}

TEST_F(ToolValidation, RunCodeBadEnvNames) {
  for (const char* name : {"", "1ABC", "A-B", "A=B", "A B", "A.B", "\xc3\xa9", "A\nB"}) {
    ExpectInvalid("run_code", {{"argv", {"true"}}, {"env", {{name, "v"}}}}, "env");
  }
  ExpectInvalid("run_code", {{"argv", {"true"}}, {"env", {{"A", std::string("x\0y", 3)}}}}, "env");
}

TEST_F(ToolValidation, RunCodeTimeoutZero) {
  ExpectInvalid("run_code", {{"argv", {"true"}}, {"timeout_ms", 0}}, "timeout_ms");
}

TEST_F(ToolValidation, RunCodeBadNetwork) {
  ExpectInvalid("run_code", {{"argv", {"true"}}, {"network", "proxy"}}, "network");
  ExpectInvalid("run_code", {{"argv", {"true"}}, {"network", true}}, "network");
  ExpectInvalid("run_code", {{"argv", {"true"}}, {"network", {{"allow_domains", "x.com"}}}},
                "allow_domains");
  ExpectInvalid("run_code", {{"argv", {"true"}}, {"network", {{"allowDomains", {"x.com"}}}}},
                "network");
  ExpectInvalid("run_code", {{"argv", {"true"}}, {"network", {{"allow_domains", {"a"}}, {"x", 1}}}},
                "network");
}

TEST_F(ToolValidation, RunCodeMissingCwdIsRefusedBeforeRun) {
  ExpectInvalid("run_code", {{"argv", {"true"}}, {"cwd", project_ + "/does-not-exist"}});
}

TEST_F(ToolValidation, ReadLocalFileValidArgumentsReachBeforeRun) {
  ExpectReachesBeforeRun("read_local_file", {{"path", project_ + "/file.txt"}});
  ExpectReachesBeforeRun("read_local_file",
                         {{"path", "file.txt"}, {"offset", 1}, {"max_bytes", 2}});
}

TEST_F(ToolValidation, ReadLocalFileBadArguments) {
  ExpectInvalid("read_local_file", json::object(), "path");
  ExpectInvalid("read_local_file", {{"path", 3}}, "path");
  ExpectInvalid("read_local_file", {{"path", "file.txt"}, {"offset", -1}}, "offset");
  ExpectInvalid("read_local_file", {{"path", "file.txt"}, {"offset", "1"}}, "offset");
  ExpectInvalid("read_local_file", {{"path", "file.txt"}, {"max_bytes", 1.5}}, "max_bytes");
  ExpectInvalid("read_local_file", {{"path", "file.txt"}, {"encoding", "base64"}}, "unknown field");
  ExpectInvalid("read_local_file", {{"path", "file.txt"}, {"extra", 1}}, "unknown field");
  ExpectInvalid("read_local_file", {{"path", project_ + "/missing"}});
  ExpectInvalid("read_local_file", {{"path", ""}});
}

TEST_F(ToolValidation, WriteLocalFileValidArgumentsReachBeforeRun) {
  ExpectReachesBeforeRun("write_local_file", {{"path", project_ + "/new.txt"}, {"content", "x"}});
  ExpectReachesBeforeRun(
      "write_local_file",
      {{"path", "new.bin"}, {"content", "AAEC"}, {"encoding", "base64"}, {"mode", "create"}});
  ExpectReachesBeforeRun("write_local_file",
                         {{"path", "file.txt"}, {"content", ""}, {"mode", "append"}});
  EXPECT_FALSE(std::filesystem::exists(project_ + "/new.txt"));
  EXPECT_FALSE(std::filesystem::exists(project_ + "/new.bin"));
}

TEST_F(ToolValidation, WriteLocalFileBadArguments) {
  ExpectInvalid("write_local_file", {{"path", "a.txt"}}, "content");
  ExpectInvalid("write_local_file", {{"content", "x"}}, "path");
  ExpectInvalid("write_local_file", {{"path", 1}, {"content", "x"}}, "path");
  ExpectInvalid("write_local_file", {{"path", "a.txt"}, {"content", 5}}, "content");
  ExpectInvalid("write_local_file", {{"path", "a.txt"}, {"content", "x"}, {"encoding", "hex"}},
                "encoding");
  ExpectInvalid("write_local_file", {{"path", "a.txt"}, {"content", "x"}, {"encoding", 1}});
  ExpectInvalid("write_local_file", {{"path", "a.txt"}, {"content", "x"}, {"mode", "truncate"}},
                "mode");
  ExpectInvalid("write_local_file", {{"path", "a.txt"}, {"content", "x"}, {"mode", true}});
  ExpectInvalid("write_local_file",
                {{"path", "a.txt"}, {"content", "not base64!"}, {"encoding", "base64"}}, "base64");
  ExpectInvalid("write_local_file", {{"path", "a.txt"}, {"content", "Zg"}, {"encoding", "base64"}},
                "base64");
  ExpectInvalid("write_local_file", {{"path", "a.txt"}, {"content", "x"}, {"perm", "0777"}},
                "unknown field");
  ExpectInvalid("write_local_file", {{"path", project_ + "/"}, {"content", "x"}}, "path");
  ExpectInvalid("write_local_file", {{"path", project_ + "/.."}, {"content", "x"}}, "path");
  ExpectInvalid("write_local_file", {{"path", project_ + "/nodir/a.txt"}, {"content", "x"}});
  EXPECT_FALSE(std::filesystem::exists(project_ + "/a.txt"));
}

TEST_F(ToolValidation, UnknownToolIsRefusedBeforeRun) {
  ExpectInvalid("delete_everything", {{"argv", {"true"}}}, "unknown tool");
}

// ---- Tool list -------------------------------------------------------------------------

TEST(ToolList, SchemasAndAnnotations) {
  ToolContext tc;
  tc.ceiling.doc.filesystem.readwrite = {"/tmp"};
  const json list = ToolList(tc);
  ASSERT_TRUE(list.is_array());
  std::vector<std::string> names;
  for (const json& tool : list) {
    const std::string name = tool["name"];
    names.push_back(name);
    EXPECT_TRUE(IsKnownTool(name));
    EXPECT_TRUE(tool["title"].is_string());
    EXPECT_EQ(tool["inputSchema"]["type"], "object") << name;
    EXPECT_EQ(tool["outputSchema"]["type"], "object") << name;
    EXPECT_THAT(tool["description"].get<std::string>(), HasSubstr("/tmp")) << name;
    EXPECT_THAT(tool["description"].get<std::string>(), HasSubstr("local")) << name;
    const json& a = tool["annotations"];
    EXPECT_EQ(a["readOnlyHint"], name == "read_local_file") << name;
    EXPECT_EQ(a["destructiveHint"], name != "read_local_file") << name;
  }
  EXPECT_EQ(names, (std::vector<std::string>{"run_code", "read_local_file", "write_local_file"}));
  EXPECT_FALSE(IsKnownTool("run"));
  EXPECT_FALSE(ServerInstructions().empty());
}

}  // namespace
}  // namespace agentbox::mcp
