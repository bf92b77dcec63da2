// Tests for audit/: the hash-chained log (open checks, chain, verify, concurrency, fail
// closed) and redaction. Runs as root and as uid 65534; nothing here needs privileges.
#include <fcntl.h>
#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <signal.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <initializer_list>
#include <map>
#include <set>
#include <sstream>
#include <string>
#include <thread>
#include <vector>

#include "audit/log.h"
#include "audit/redact.h"
#include "config/strict_json.h"
#include "fixture_tree.h"

namespace agentbox {
namespace {

using ::testing::HasSubstr;
using ::testing::Not;
using json = nlohmann::json;

std::string ReadAll(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  std::ostringstream out;
  out << in.rdbuf();
  return out.str();
}

void WriteAll(const std::string& path, const std::string& text) {
  std::ofstream(path, std::ios::binary | std::ios::trunc) << text;
}

std::vector<std::string> Lines(const std::string& text) {
  std::vector<std::string> out;
  std::istringstream in(text);
  for (std::string line; std::getline(in, line);) out.push_back(line);
  return out;
}

std::string Join(const std::vector<std::string>& lines) {
  std::string out;
  for (const std::string& line : lines) out += line + "\n";
  return out;
}

mode_t ModeOf(const std::string& path) {
  struct stat st {};
  EXPECT_EQ(::lstat(path.c_str(), &st), 0) << path;
  return st.st_mode & 07777;
}

json Record(const std::string& type, const std::string& tool = "run_code") {
  return {{"type", type}, {"tool", tool}};
}

// A log in a fresh 0700 directory holding `n` records.
class AuditLogTest : public ::testing::Test {
 protected:
  void SetUp() override {
    ASSERT_EQ(::chmod(tree_.Path().c_str(), 0700), 0);
    path_ = tree_.Path("state/agentbox/audit.jsonl");
  }
  void Fill(int n) {
    auto log = AuditLog::Open(path_);
    ASSERT_TRUE(log.ok()) << log.error().Message();
    for (int i = 0; i < n; ++i) {
      auto id = log->Append(Record(i % 2 == 0 ? "pending" : "completed"));
      ASSERT_TRUE(id.ok()) << id.error().Message();
    }
  }
  VerifyReport Verify() {
    auto report = VerifyAuditLog(path_);
    EXPECT_TRUE(report.ok()) << report.error().Message();
    return report.ok() ? *report : VerifyReport{};
  }

  testing::FixtureTree tree_;
  std::string path_;
};

TEST(AuditPath, XdgStateHomeThenHome) {
  auto fake = [](std::map<std::string, std::string> env) {
    return [env](const char* name) -> const char* {
      const auto it = env.find(name);
      return it == env.end() ? nullptr : it->second.c_str();
    };
  };
  EXPECT_EQ(*DefaultAuditLogPath(fake({{"XDG_STATE_HOME", "/s"}, {"HOME", "/h"}})),
            "/s/agentbox/audit.jsonl");
  EXPECT_EQ(*DefaultAuditLogPath(fake({{"HOME", "/h"}})), "/h/.local/state/agentbox/audit.jsonl");
  // A relative or empty XDG_STATE_HOME is ignored, as the XDG spec says.
  EXPECT_EQ(*DefaultAuditLogPath(fake({{"XDG_STATE_HOME", "rel"}, {"HOME", "/h"}})),
            "/h/.local/state/agentbox/audit.jsonl");
  EXPECT_EQ(*DefaultAuditLogPath(fake({{"XDG_STATE_HOME", ""}, {"HOME", "/h"}})),
            "/h/.local/state/agentbox/audit.jsonl");
  auto none = DefaultAuditLogPath(fake({{"HOME", "relative"}}));
  ASSERT_FALSE(none.ok());
  EXPECT_THAT(none.error().Message(), HasSubstr("--audit-log"));
}

TEST(AuditId, RandomHex128) {
  std::set<std::string> seen;
  for (int i = 0; i < 100; ++i) {
    auto id = NewAuditId();
    ASSERT_TRUE(id.ok());
    EXPECT_THAT(*id, ::testing::MatchesRegex("[0-9a-f]{32}"));
    seen.insert(*id);
  }
  EXPECT_EQ(seen.size(), 100u);
}

TEST(AuditTime, Rfc3339UtcMillis) {
  EXPECT_THAT(AuditTimestamp(),
              ::testing::MatchesRegex("20[0-9]{2}-[01][0-9]-[0-3][0-9]T[0-2][0-9]:[0-5][0-9]:[0-6]"
                                      "[0-9]\\.[0-9]{3}Z"));
}

TEST_F(AuditLogTest, ThreeAppendsFormAVerifiedChain) {
  auto log = AuditLog::Open(path_);
  ASSERT_TRUE(log.ok()) << log.error().Message();
  auto first = log->Append(Record("pending"));
  ASSERT_TRUE(first.ok()) << first.error().Message();
  EXPECT_THAT(*first, ::testing::MatchesRegex("[0-9a-f]{32}"));
  json done = Record("completed");
  done["id"] = *first;
  auto second = log->Append(done);
  ASSERT_TRUE(second.ok());
  EXPECT_EQ(*second, *first);  // a given id is kept
  ASSERT_TRUE(log->Append(Record("refused")).ok());

  const std::vector<std::string> lines = Lines(ReadAll(path_));
  ASSERT_EQ(lines.size(), 3u);
  std::string prev(kAuditGenesisHash);
  for (size_t i = 0; i < lines.size(); ++i) {
    auto record = ParseStrictJson(lines[i], "line");
    ASSERT_TRUE(record.ok());
    EXPECT_EQ((*record)["seq"], i + 1);
    EXPECT_EQ((*record)["prev"], prev);
    EXPECT_TRUE((*record)["time"].is_string());
    prev = Sha256Hex(lines[i]);
  }
  const VerifyReport report = Verify();
  EXPECT_TRUE(report.intact) << report.reason;
  EXPECT_EQ(report.lines, 3u);
  EXPECT_EQ(report.head_sha256, prev);
  EXPECT_EQ(report.problem, AuditProblem::kNone);
}

TEST_F(AuditLogTest, EmptyLogIsIntact) {
  Fill(0);
  const VerifyReport report = Verify();
  EXPECT_TRUE(report.intact);
  EXPECT_EQ(report.lines, 0u);
  EXPECT_EQ(report.head_sha256, kAuditGenesisHash);
}

TEST_F(AuditLogTest, RecordMustBeAnObjectWithAType) {
  auto log = AuditLog::Open(path_);
  ASSERT_TRUE(log.ok());
  EXPECT_FALSE(log->Append(json::array()).ok());
  EXPECT_FALSE(log->Append({{"tool", "x"}}).ok());
  EXPECT_FALSE(log->Append({{"type", "pending"}, {"id", 7}}).ok());
  json deep = "x";
  for (int i = 0; i < 100; ++i) deep = json::array({deep});
  auto too_deep = log->Append({{"type", "pending"}, {"request", deep}});
  ASSERT_FALSE(too_deep.ok());  // verify could not read it back
  EXPECT_THAT(too_deep.error().Message(), HasSubstr("deep"));
  EXPECT_EQ(ReadAll(path_), "");
}

TEST_F(AuditLogTest, EditedByteInLine2IsCaught) {
  Fill(3);
  std::vector<std::string> lines = Lines(ReadAll(path_));
  const size_t at = lines[1].find("run_code");
  ASSERT_NE(at, std::string::npos);
  lines[1][at] = 'f';  // "fun_code": still valid JSON, same seq and prev
  WriteAll(path_, Join(lines));
  const VerifyReport report = Verify();
  EXPECT_FALSE(report.intact);
  EXPECT_EQ(report.bad_line, 3u);
  EXPECT_EQ(report.problem, AuditProblem::kPrevMismatch);
  EXPECT_THAT(report.reason, HasSubstr("line 2 was edited"));
}

TEST_F(AuditLogTest, EditThatBreaksJsonIsCaughtOnThatLine) {
  Fill(3);
  std::vector<std::string> lines = Lines(ReadAll(path_));
  lines[1][0] = '[';
  WriteAll(path_, Join(lines));
  const VerifyReport report = Verify();
  EXPECT_EQ(report.bad_line, 2u);
  EXPECT_EQ(report.problem, AuditProblem::kUnparseable);
}

TEST_F(AuditLogTest, DeletedMiddleLineIsCaught) {
  Fill(3);
  std::vector<std::string> lines = Lines(ReadAll(path_));
  lines.erase(lines.begin() + 1);
  WriteAll(path_, Join(lines));
  const VerifyReport report = Verify();
  EXPECT_FALSE(report.intact);
  EXPECT_EQ(report.bad_line, 2u);
  EXPECT_EQ(report.problem, AuditProblem::kSeqMismatch);
  EXPECT_THAT(report.reason, HasSubstr("deleted"));
}

TEST_F(AuditLogTest, DeletedFirstLineIsCaught) {
  Fill(3);
  std::vector<std::string> lines = Lines(ReadAll(path_));
  lines.erase(lines.begin());
  WriteAll(path_, Join(lines));
  const VerifyReport report = Verify();
  EXPECT_EQ(report.bad_line, 1u);
  EXPECT_EQ(report.problem, AuditProblem::kSeqMismatch);
}

TEST_F(AuditLogTest, DeletionWithRenumberingIsCaughtByTheHash) {
  Fill(3);
  std::vector<std::string> lines = Lines(ReadAll(path_));
  lines.erase(lines.begin() + 1);
  const size_t at = lines[1].find("\"seq\":3");
  ASSERT_NE(at, std::string::npos);
  lines[1].replace(at, 7, "\"seq\":2");
  WriteAll(path_, Join(lines));
  const VerifyReport report = Verify();
  EXPECT_EQ(report.bad_line, 2u);
  EXPECT_EQ(report.problem, AuditProblem::kPrevMismatch);
}

TEST_F(AuditLogTest, ReorderedLinesAreCaught) {
  Fill(3);
  std::vector<std::string> lines = Lines(ReadAll(path_));
  std::swap(lines[1], lines[2]);
  WriteAll(path_, Join(lines));
  const VerifyReport report = Verify();
  EXPECT_EQ(report.bad_line, 2u);
  EXPECT_EQ(report.problem, AuditProblem::kSeqMismatch);
}

TEST_F(AuditLogTest, TruncationInsideTheLastLineIsCaught) {
  Fill(3);
  const std::string text = ReadAll(path_);
  WriteAll(path_, text.substr(0, text.size() - 5));
  const VerifyReport report = Verify();
  EXPECT_EQ(report.bad_line, 3u);
  EXPECT_EQ(report.problem, AuditProblem::kTornLine);
}

// The documented limit: whole lines cut from the end leave a valid chain; the head hash
// kept elsewhere is what shows it.
TEST_F(AuditLogTest, TruncationAtALineBoundaryChangesOnlyTheHead) {
  Fill(3);
  const std::string before = Verify().head_sha256;
  std::vector<std::string> lines = Lines(ReadAll(path_));
  lines.pop_back();
  WriteAll(path_, Join(lines));
  const VerifyReport report = Verify();
  EXPECT_TRUE(report.intact);
  EXPECT_EQ(report.lines, 2u);
  EXPECT_NE(report.head_sha256, before);
}

TEST_F(AuditLogTest, AppendRefusesToExtendABrokenTail) {
  Fill(2);
  const std::string text = ReadAll(path_);
  WriteAll(path_, text.substr(0, text.size() - 1));  // torn: no final newline
  {
    auto log = AuditLog::Open(path_);
    ASSERT_TRUE(log.ok());
    auto appended = log->Append(Record("pending"));
    ASSERT_FALSE(appended.ok());
    EXPECT_THAT(appended.error().Message(), HasSubstr("no newline"));
    EXPECT_THAT(appended.error().Message(), HasSubstr(path_));
  }
  WriteAll(path_, text + "garbage\n");
  auto log = AuditLog::Open(path_);
  ASSERT_TRUE(log.ok());
  EXPECT_FALSE(log->Append(Record("pending")).ok());
}

TEST_F(AuditLogTest, ModesAreExactWhateverTheUmask) {
  for (const mode_t mask : {mode_t{0}, mode_t{022}, mode_t{0277}}) {
    std::string top = "m";  // (appends, not "m" + ...: GCC 12's -Wrestrict false positive)
    top += std::to_string(mask);
    const std::string dir = tree_.Path(top + "/a/b");
    const mode_t old = ::umask(mask);
    auto log = AuditLog::Open(dir + "/audit.jsonl");
    ::umask(old);
    ASSERT_TRUE(log.ok()) << log.error().Message();
    ASSERT_TRUE(log->Append(Record("pending")).ok());
    EXPECT_EQ(ModeOf(dir), 0700u) << "umask " << mask;
    EXPECT_EQ(ModeOf(dir + "/audit.jsonl"), 0600u) << "umask " << mask;
    EXPECT_EQ(ModeOf(tree_.Path(top + "/a")), 0700u);
  }
}

TEST_F(AuditLogTest, RefusesASymlinkedLogFile) {
  const std::string dir = tree_.Dir("private");
  ASSERT_EQ(::chmod(dir.c_str(), 0700), 0);
  const std::string target = tree_.File("private/elsewhere", "");
  ASSERT_EQ(::chmod(target.c_str(), 0600), 0);
  tree_.Link("private/audit.jsonl", target);
  auto log = AuditLog::Open(dir + "/audit.jsonl");
  ASSERT_FALSE(log.ok());
  EXPECT_THAT(log.error().Message(), HasSubstr("symlink"));
  EXPECT_THAT(log.error().Message(), HasSubstr(dir + "/audit.jsonl"));
  EXPECT_EQ(ReadAll(target), "");
}

TEST_F(AuditLogTest, RefusesASymlinkedDirectory) {
  const std::string real = tree_.Dir("real");
  ASSERT_EQ(::chmod(real.c_str(), 0700), 0);
  tree_.Link("linked", real);
  auto log = AuditLog::Open(tree_.Path("linked/audit.jsonl"));
  ASSERT_FALSE(log.ok());
  EXPECT_THAT(log.error().Message(), HasSubstr("symlink"));
}

TEST_F(AuditLogTest, RefusesAWorldWritableDirectory) {
  const std::string dir = tree_.Dir("open");
  ASSERT_EQ(::chmod(dir.c_str(), 0777), 0);
  auto log = AuditLog::Open(dir + "/audit.jsonl");
  ASSERT_FALSE(log.ok());
  EXPECT_THAT(log.error().Message(), HasSubstr("accessible to group or others (mode 0777)"));
  EXPECT_FALSE(std::filesystem::exists(dir + "/audit.jsonl"));
}

TEST_F(AuditLogTest, RefusesAGroupReadableFile) {
  Fill(1);
  ASSERT_EQ(::chmod(path_.c_str(), 0640), 0);
  auto log = AuditLog::Open(path_);
  ASSERT_FALSE(log.ok());
  EXPECT_THAT(log.error().Message(), HasSubstr("mode 0640"));
}

TEST_F(AuditLogTest, RefusesANonRegularFile) {
  const std::string dir = tree_.Dir("fifo");
  ASSERT_EQ(::chmod(dir.c_str(), 0700), 0);
  ASSERT_EQ(::mkfifo((dir + "/audit.jsonl").c_str(), 0600), 0);
  auto log = AuditLog::Open(dir + "/audit.jsonl");
  ASSERT_FALSE(log.ok());
  EXPECT_THAT(log.error().Message(), HasSubstr("not a regular file"));
}

TEST_F(AuditLogTest, RefusesALogOwnedBySomeoneElse) {
  if (::geteuid() == 0) {
    Fill(1);
    ASSERT_EQ(::chown(path_.c_str(), 65534, 65534), 0);
    auto log = AuditLog::Open(path_);
    ASSERT_FALSE(log.ok());
    EXPECT_THAT(log.error().Message(), HasSubstr("owned by uid 65534"));
    return;
  }
  // Not root: a directory someone else owns, such as /tmp.
  struct stat st {};
  if (::stat("/tmp", &st) != 0 || st.st_uid == ::geteuid()) GTEST_SKIP() << "/tmp is ours";
  const std::string path = "/tmp/agentbox-audit-test-" + std::to_string(::getpid()) + ".jsonl";
  auto log = AuditLog::Open(path);
  ASSERT_FALSE(log.ok());
  EXPECT_THAT(log.error().Message(), HasSubstr("owned by uid " + std::to_string(st.st_uid)));
  EXPECT_FALSE(std::filesystem::exists(path));
}

// /tmp is root's and world-writable: not a place for a log, even for root.
TEST_F(AuditLogTest, RefusesASharedTmpDirectory) {
  const std::string path = "/tmp/agentbox-audit-test-" + std::to_string(::getpid()) + ".jsonl";
  auto log = AuditLog::Open(path);
  ASSERT_FALSE(log.ok());
  EXPECT_THAT(log.error().Message(), HasSubstr("audit log directory /tmp"));
  EXPECT_FALSE(std::filesystem::exists(path));
}

// Fail closed: paths that cannot hold a log fail for root too, naming the path and syscall.
TEST_F(AuditLogTest, OpenUnderARegularFileFailsNamingThePath) {
  const std::string file = tree_.File("plainfile");
  auto log = AuditLog::Open(file + "/agentbox/audit.jsonl");
  ASSERT_FALSE(log.ok());
  EXPECT_THAT(log.error().Message(), HasSubstr(file));
  EXPECT_THAT(log.error().Message(), HasSubstr(": open: Not a directory"));
}

TEST_F(AuditLogTest, FailedWriteLeavesNoTraceAndSaysWhy) {
  Fill(2);
  const std::string before = ReadAll(path_);
  auto log = AuditLog::Open(path_);
  ASSERT_TRUE(log.ok());
  // RLIMIT_FSIZE binds root too; a child, since the limit is per process.
  const pid_t pid = ::fork();
  ASSERT_GE(pid, 0);
  if (pid == 0) {
    ::signal(SIGXFSZ, SIG_IGN);
    const rlim_t limit = before.size() + 10;  // room for part of the line only
    const rlimit rl{limit, limit};
    if (::setrlimit(RLIMIT_FSIZE, &rl) != 0) ::_exit(2);
    auto id = log->Append(Record("pending"));
    if (id.ok()) ::_exit(3);
    const std::string message = id.error().Message();
    if (message.find("write") == std::string::npos) ::_exit(4);
    if (message.find(path_) == std::string::npos) ::_exit(5);
    if (message.find("too large") == std::string::npos) ::_exit(6);  // EFBIG
    ::_exit(0);
  }
  int status = 0;
  ASSERT_EQ(::waitpid(pid, &status, 0), pid);
  ASSERT_TRUE(WIFEXITED(status));
  EXPECT_EQ(WEXITSTATUS(status), 0);
  EXPECT_EQ(ReadAll(path_), before);  // the partial line was truncated away
  EXPECT_TRUE(Verify().intact);
  ASSERT_TRUE(log->Append(Record("pending")).ok());  // and the log goes on
  EXPECT_EQ(Verify().lines, 3u);
}

TEST_F(AuditLogTest, TwoProcessesAppendingKeepOneChain) {
  Fill(0);
  constexpr int kPerProcess = 50;
  std::vector<pid_t> children;
  for (int p = 0; p < 2; ++p) {
    const pid_t pid = ::fork();
    ASSERT_GE(pid, 0);
    if (pid == 0) {
      auto log = AuditLog::Open(path_);
      if (!log.ok()) ::_exit(2);
      for (int i = 0; i < kPerProcess; ++i) {
        if (!log->Append(Record("pending", std::to_string(p))).ok()) ::_exit(3);
      }
      ::_exit(0);
    }
    children.push_back(pid);
  }
  for (const pid_t pid : children) {
    int status = 0;
    ASSERT_EQ(::waitpid(pid, &status, 0), pid);
    EXPECT_TRUE(WIFEXITED(status) && WEXITSTATUS(status) == 0) << status;
  }
  const VerifyReport report = Verify();
  EXPECT_TRUE(report.intact) << report.reason;
  EXPECT_EQ(report.lines, 2u * kPerProcess);
}

TEST_F(AuditLogTest, ThreadsAndTwoHandlesKeepOneChain) {
  auto a = AuditLog::Open(path_);
  auto b = AuditLog::Open(path_);  // its own open file description: only flock orders it
  ASSERT_TRUE(a.ok() && b.ok());
  std::vector<std::thread> threads;
  for (int t = 0; t < 4; ++t) {
    AuditLog* log = t % 2 == 0 ? &*a : &*b;
    threads.emplace_back([log] {
      for (int i = 0; i < 25; ++i) EXPECT_TRUE(log->Append(Record("pending")).ok());
    });
  }
  for (std::thread& t : threads) t.join();
  const VerifyReport report = Verify();
  EXPECT_TRUE(report.intact) << report.reason;
  EXPECT_EQ(report.lines, 100u);
}

TEST_F(AuditLogTest, ReadLastLines) {
  Fill(5);
  auto last = ReadLastAuditLines(path_, 2);
  ASSERT_TRUE(last.ok());
  ASSERT_EQ(last->size(), 2u);
  EXPECT_EQ((*ParseStrictJson((*last)[0], "l"))["seq"], 4);
  EXPECT_EQ((*ParseStrictJson((*last)[1], "l"))["seq"], 5);
  auto all = ReadLastAuditLines(path_, 100);
  ASSERT_TRUE(all.ok());
  EXPECT_EQ(all->size(), 5u);
  WriteAll(path_, ReadAll(path_) + "{\"torn");
  auto torn = ReadLastAuditLines(path_, 1);
  ASSERT_TRUE(torn.ok());
  ASSERT_EQ(torn->size(), 1u);
  EXPECT_EQ((*ParseStrictJson((*torn)[0], "l"))["seq"], 5);
}

TEST_F(AuditLogTest, VerifyOfAMissingLogIsAnError) {
  auto report = VerifyAuditLog(tree_.Path("nope.jsonl"));
  ASSERT_FALSE(report.ok());
  EXPECT_THAT(report.error().Message(), HasSubstr("nope.jsonl"));
}

// ---- redaction --------------------------------------------------------------------------

void ExpectRedacted(const std::string& input, const std::string& secret) {
  const std::string out = RedactText(input);
  EXPECT_THAT(out, Not(HasSubstr(secret))) << input;
  EXPECT_THAT(out, HasSubstr(std::string(kRedacted))) << input;
  EXPECT_EQ(RedactText(out), out) << "not idempotent: " << input;
}

TEST(Redact, TokenShapes) {
  ExpectRedacted("token ghp_16C7e42F292c6912E7710c838347Ae178B4a here", "16C7e42F292c6912E");
  ExpectRedacted("gho_16C7e42F292c6912E7710c838347Ae178B4a", "16C7e42F292c6912E");
  ExpectRedacted("github_pat_11ABCDEFG0123456789_abcdefghijklmnopqrstuvwxyz", "11ABCDEFG0123");
  ExpectRedacted("OPENAI=sk-proj-Abc123Def456Ghi789Jkl0", "Abc123Def456");
  ExpectRedacted("key: sk-ant-api03-AbCdEfGhIjKlMnOpQrStUvWx-0123456789", "AbCdEfGhIjKl");
  ExpectRedacted("slack xoxb-123456789012-1234567890123-AbCdEfGhIjKl", "1234567890123");
  ExpectRedacted("xoxp-1234-5678-abcdefghij", "5678-abcdefghij");
  ExpectRedacted("id AKIAIOSFODNN7EXAMPLE,", "IOSFODNN7EXAMPLE");
  ExpectRedacted("ASIAIOSFODNN7EXAMPLE", "IOSFODNN7EXAMPLE");
  ExpectRedacted(
      "jwt=eyJhbGciOiJIUzI1NiIsInR5cCI6IkpXVCJ9.eyJzdWIiOiIxMjM0NTY3ODkwIn0."
      "dozjgNryP4J3jVmNHl0w5N_XgL0n3I9PlFUP0THsR8U;",
      "eyJzdWIiOiIxMjM0NTY3ODkwIn0");
  ExpectRedacted("curl -H 'Authorization: Bearer abc.DEF-123_xyz=' x", "abc.DEF-123_xyz");
  EXPECT_EQ(RedactText("Authorization: Bearer abc.DEF-123_xyz"),
            "Authorization: Bearer [REDACTED]");
}

TEST(Redact, PemPrivateKeyBlocks) {
  const std::string pem =
      "before\n-----BEGIN RSA PRIVATE KEY-----\nMIIEowIBAAKCAQEA7\nabcdef==\n"
      "-----END RSA PRIVATE KEY-----\nafter";
  EXPECT_EQ(RedactText(pem), "before\n[REDACTED]\nafter");
  ExpectRedacted("-----BEGIN OPENSSH PRIVATE KEY-----\nb3BlbnNzaC1rZXktdjEAAAAA\n", "b3BlbnNz");
  // A public certificate is not a secret.
  const std::string cert = "-----BEGIN CERTIFICATE-----\nMIIB\n-----END CERTIFICATE-----";
  EXPECT_EQ(RedactText(cert), cert);
}

TEST(Redact, SecretNamedAssignments) {
  EXPECT_EQ(RedactText("GITHUB_TOKEN=abc123"), "GITHUB_TOKEN=[REDACTED]");
  EXPECT_EQ(RedactText("export DB_PASSWORD='hunter 2' && run"),
            "export DB_PASSWORD='[REDACTED]' && run");
  EXPECT_EQ(RedactText("--api-key=s3cr3t"), "--api-key=[REDACTED]");
  EXPECT_EQ(RedactText("--token=abc"), "--token=[REDACTED]");
  EXPECT_EQ(RedactText("https://h/x?access_token=abc&page=2"),
            "https://h/x?access_token=[REDACTED]&page=2");
  EXPECT_EQ(RedactText("PGPASSWORD=x psql"), "PGPASSWORD=[REDACTED] psql");
  EXPECT_EQ(RedactText("AWS_SECRET_ACCESS_KEY=wJalrXUtnFEMI/K7MDENG"),
            "AWS_SECRET_ACCESS_KEY=[REDACTED]");
  EXPECT_EQ(RedactText(R"({"password": "hunter2", "user": "bob"})"),
            R"({"password": "[REDACTED]", "user": "bob"})");
  EXPECT_EQ(RedactText("{'api_key':'abc'}"), "{'api_key':'[REDACTED]'}");
}

TEST(Redact, UrlCredentials) {
  EXPECT_EQ(RedactText("git clone https://bob:hunter2@github.com/o/r.git"),
            "git clone https://bob:[REDACTED]@github.com/o/r.git");
  EXPECT_EQ(RedactText("postgres://u:p@ss@db:5432/x"), "postgres://u:[REDACTED]@db:5432/x");
  EXPECT_EQ(RedactText("ssh://git@github.com/o/r"), "ssh://git@github.com/o/r");
}

TEST(Redact, InnocentTextIsLeftAlone) {
  for (const char* innocent : {"skeleton",
                               "monkey=banana",
                               "https://example.com/path",
                               "KEYBOARD=us",
                               "PWD=/home/u",
                               "TOKENIZERS_PARALLELISM=false",
                               "task-1234567890abcdefghijk",
                               "desk-sk-short",
                               "Bearer",
                               "the bearer of news",
                               "ghp_short",
                               "AKIAshort",
                               "x=1&y=2",
                               "a == b",
                               "eyJust a word",
                               "-----BEGIN CERTIFICATE-----",
                               "ssh://git@host",
                               "sk-learn",
                               "user@example.com",
                               "key",
                               "password"}) {
    EXPECT_EQ(RedactText(innocent), innocent);
  }
  const json innocent = {{"argv", {"ls", "-la", "--key-file", "/etc/k", "skeleton"}},
                         {"cwd", "/home/u/monkey"},
                         {"env", {{"PATH", "/usr/bin"}, {"KEYBOARD", "us"}}},
                         {"timeout_ms", 1000}};
  EXPECT_EQ(RedactJson(innocent), innocent);
}

TEST(Redact, JsonRequest) {
  const json request = {
      {"argv", {"deploy", "--password", "hunter2", "--api-key=abc", "--verbose", "GH_TOKEN=x"}},
      {"env", {{"GITHUB_TOKEN", "ghp_x"}, {"OPENAI_API_KEY", "y"}, {"HOME", "/h"}}},
      {"stdin", "login with https://me:pw@host"},
      {"credentials", {{"user", "u"}, {"pin", 1234}}},
      {"timeout_ms", 5}};
  const json expected = {
      {"argv",
       {"deploy", "--password", "[REDACTED]", "--api-key=[REDACTED]", "--verbose",
        "GH_TOKEN=[REDACTED]"}},
      {"env", {{"GITHUB_TOKEN", "[REDACTED]"}, {"OPENAI_API_KEY", "[REDACTED]"}, {"HOME", "/h"}}},
      {"stdin", "login with https://me:[REDACTED]@host"},
      {"credentials", {{"user", "[REDACTED]"}, {"pin", "[REDACTED]"}}},
      {"timeout_ms", 5}};
  EXPECT_EQ(RedactJson(request), expected);
  // A secret in a key is redacted too.
  const json keyed = {{"ghp_16C7e42F292c6912E7710c838347Ae178B4a", 1}};
  EXPECT_EQ(RedactJson(keyed), json({{"[REDACTED]", 1}}));
}

TEST(Redact, SecretNames) {
  for (const char* name : {"GITHUB_TOKEN", "token", "HF_TOKEN", "PGPASSWORD", "db_passwd",
                           "api-key", "--api-key", "apiKey", "APIKey", "AWS_SECRET_ACCESS_KEY",
                           "SECRET_KEY_BASE", "GOOGLE_APPLICATION_CREDENTIALS", "MY_APIKEY",
                           "ssh.privateKey", "gpg_passphrase", "PASS"}) {
    EXPECT_TRUE(IsSecretName(name)) << name;
  }
  for (const char* name : {"monkey", "KEYBOARD", "PWD", "TOKENIZERS_PARALLELISM", "max_tokens",
                           "HOME", "PATH", "passenger", "keystroke", "", "--"}) {
    EXPECT_FALSE(IsSecretName(name)) << name;
  }
}

TEST(Redact, ContentDigest) {
  EXPECT_EQ(ContentDigest("abc"),
            json({{"bytes", 3},
                  {"sha256", "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad"}}));
  Sha256Stream stream;
  stream.Update("a");
  stream.Update("bc");
  EXPECT_EQ(stream.FinalDigest(), ContentDigest("abc"));
  EXPECT_EQ(stream.FinalHex(), Sha256Hex(""));
}

// The in-tree SHA-256 (audit/digest.cc) against FIPS 180-4 / NIST CAVP vectors, at every
// padding boundary, and streamed in chunks that straddle blocks.
TEST(Digest, Sha256KnownAnswers) {
  EXPECT_EQ(Sha256Hex(""), "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855");
  EXPECT_EQ(Sha256Hex("abc"), "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad");
  EXPECT_EQ(Sha256Hex("abcdbcdecdefdefgefghfghighijhijkijkljklmklmnlmnomnopnopq"),
            "248d6a61d20638b8e5c026930c3e6039a33ce45964ff2167f6ecedd419db06c1");
  EXPECT_EQ(
      Sha256Hex("abcdefghbcdefghicdefghijdefghijkefghijklfghijklmghijklmnhijklmnoijklmnopjklmn"
                "opqklmnopqrlmnopqrsmnopqrstnopqrstu"),
      "cf5b16a778af8380036ce59e7b0492370b249b11e8f07a51afac45037afee9d1");
  EXPECT_EQ(Sha256Hex(std::string(1000000, 'a')),
            "cdc76e5c9914fb9281a1c7e284d73e67f1809a48a497200e046d39ccc7112cd0");
  // 55, 56 and 64 bytes: the length fits in the last block, just does not, one full block.
  EXPECT_EQ(Sha256Hex(std::string(55, 'a')),
            "9f4390f8d30c2dd92ec9f095b65e2b9ae9b0a925a5258e241c9f1e910f734318");
  EXPECT_EQ(Sha256Hex(std::string(56, 'a')),
            "b35439a4ac6f0948b6d6f9e3c6af0f5f590ce20f1bde7090ef7970686ec6738a");
  EXPECT_EQ(Sha256Hex(std::string(64, 'a')),
            "ffe054fe7ae0cb6dc65c3af9b61d5209f439851db43d0ba5997337df154668eb");
}

TEST(Digest, Sha256StreamMatchesOneShotForEveryChunking) {
  std::string data;
  for (int i = 0; i < 300; ++i) data += static_cast<char>((i * 131 + 7) & 0xff);
  for (const size_t len :
       std::initializer_list<size_t>{0, 1, 55, 56, 63, 64, 65, 127, 128, 129, 300}) {
    const std::string_view input(data.data(), len);
    const std::string expected = Sha256Hex(input);
    for (const size_t chunk : std::initializer_list<size_t>{1, 3, 63, 64, 65, 200}) {
      Sha256Stream stream;
      for (size_t at = 0; at < len; at += chunk) stream.Update(input.substr(at, chunk));
      EXPECT_EQ(stream.bytes(), len);
      EXPECT_EQ(stream.FinalHex(), expected) << len << " in chunks of " << chunk;
    }
  }
}

}  // namespace
}  // namespace agentbox
