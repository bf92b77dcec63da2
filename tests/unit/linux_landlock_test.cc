// SEC-7: Landlock rules, per-ABI rights, TCP restriction and scoping.
// Tests for linux/landlock. Restricting is one-way, so every test that enforces a ruleset
// does it in a forked child; the child runs numbered checks and exits with the number of
// the first one that failed (0: all passed), after naming it on stderr.
#include <arpa/inet.h>
#include <fcntl.h>
#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <netinet/in.h>
#include <sys/prctl.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <csignal>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <functional>
#include <string>

#include "linux/landlock.h"
#include "linux/uapi/landlock.h"

namespace agentbox {
namespace {

using ::testing::HasSubstr;

// Checks run in the forked child. Each check gets the next number; the first failure
// exits the child with that number.
class ChildChecks {
 public:
  void True(bool ok, const char* what) {
    const int saved = errno;
    ++n_;
    if (ok) return;
    std::fprintf(stderr, "child check %d failed: %s (errno %d: %s)\n", n_, what, saved,
                 std::strerror(saved));
    _exit(n_);
  }
  // The call returned -1 with errno `want`.
  void FailsWith(long rc, int want, const char* what) {
    const int saved = errno;
    ++n_;
    if (rc == -1 && saved == want) return;
    std::fprintf(stderr,
                 "child check %d failed: %s: want errno %d (%s), got rc %ld errno %d (%s)\n", n_,
                 what, want, std::strerror(want), rc, saved, std::strerror(saved));
    _exit(n_);
  }
  void Zero(int err, const char* what) {
    errno = err;
    True(err == 0, what);
  }

 private:
  int n_ = 0;
};

// Runs body in a forked child; returns its exit code (128 + signal if it was killed).
int RunInChild(const std::function<void(ChildChecks&)>& body) {
  const pid_t pid = fork();
  if (pid == 0) {
    ChildChecks checks;
    body(checks);
    _exit(0);
  }
  if (pid < 0) return -1;
  int status = 0;
  while (waitpid(pid, &status, 0) < 0) {
    if (errno != EINTR) return -1;
  }
  return WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
}

void RestrictSelf(ChildChecks& c, int ruleset_fd) {
  c.True(prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) == 0, "prctl(PR_SET_NO_NEW_PRIVS)");
  c.Zero(LandlockRestrictSelfInChild(ruleset_fd), "LandlockRestrictSelfInChild");
}

long OpenFile(const std::string& path, int flags) {
  const int fd = open(path.c_str(), flags | O_CLOEXEC, 0600);
  if (fd >= 0) close(fd);
  return fd < 0 ? -1 : 0;
}

constexpr const char* kChildFailed = "the child's stderr names the failed check";

// A fresh directory tree under /tmp, removed afterwards.
class LandlockTest : public ::testing::Test {
 protected:
  void SetUp() override {
    abi_ = LandlockAbi();
    if (abi_ == 0) GTEST_SKIP() << "Landlock is not available on this kernel";
    char tmpl[] = "/tmp/agentbox-landlock-XXXXXX";
    ASSERT_NE(mkdtemp(tmpl), nullptr) << std::strerror(errno);
    root_ = tmpl;
  }
  void TearDown() override {
    if (!root_.empty()) std::filesystem::remove_all(root_);
  }

  std::string MakeDir(const std::string& name) {
    const std::string path = root_ + "/" + name;
    std::filesystem::create_directory(path);
    return path;
  }
  static void WriteFile(const std::string& path, const std::string& text) {
    std::ofstream(path) << text;
  }

  LandlockRuleset Build(const LandlockPlan& plan) {
    auto ruleset = BuildLandlockRuleset(plan);
    EXPECT_TRUE(ruleset.ok()) << ruleset.error().Message();
    if (!ruleset.ok()) return {};
    return std::move(*ruleset);
  }

  int abi_ = 0;
  std::string root_;
};

TEST(LandlockAbiTest, KernelReportsAnAbi) {
  const int abi = LandlockAbi();
  std::string lsm;
  std::getline(std::ifstream("/sys/kernel/security/lsm"), lsm);
  if (lsm.find("landlock") != std::string::npos) {
    ASSERT_GT(abi, 0) << "landlock is in the active LSM list (" << lsm << ") but ABI is 0";
  } else if (abi == 0) {
    GTEST_SKIP() << "Landlock is not enabled on this kernel (lsm list: '" << lsm << "')";
  }
  EXPECT_GE(abi, 1);
  EXPECT_EQ(LandlockAbi(), abi) << "the probe must be stable";
}

TEST_F(LandlockTest, HandledRightsFollowTheAbi) {
  using namespace uapi;  // NOLINT(google-build-using-namespace)
  const LandlockRuleset abi1 = Build({.abi = 1});
  EXPECT_EQ(abi1.handled_fs, 0x1FFFu) << "ABI 1: execute .. make_sym";
  EXPECT_FALSE(abi1.scoped);
  EXPECT_EQ(abi1.abi, 1);
  if (abi_ >= 3) {
    const LandlockRuleset abi3 = Build({.abi = 3});
    EXPECT_EQ(abi3.handled_fs, 0x1FFFu | kLandlockAccessFsRefer | kLandlockAccessFsTruncate);
  }
  const LandlockRuleset now = Build({.abi = abi_});
  ASSERT_TRUE(now.fd.valid());
  EXPECT_EQ(fcntl(now.fd.get(), F_GETFD) & FD_CLOEXEC, FD_CLOEXEC);
  EXPECT_EQ((now.handled_fs & kLandlockAccessFsIoctlDev) != 0, abi_ >= 5);
  EXPECT_EQ(now.scoped, abi_ >= 6);
}

TEST_F(LandlockTest, ReadOnlyAndWritableDirectories) {
  const std::string a = MakeDir("a");
  const std::string b = MakeDir("b");
  const std::string c = MakeDir("c");
  WriteFile(a + "/file", "hello");
  WriteFile(c + "/secret", "secret");
  const LandlockRuleset ruleset = Build({.abi = abi_, .paths = {{a, false}, {b, true}}});
  ASSERT_TRUE(ruleset.fd.valid());

  const int code = RunInChild([&](ChildChecks& ch) {
    RestrictSelf(ch, ruleset.fd.get());
    char buf[8] = {};
    const int fd = open((a + "/file").c_str(), O_RDONLY | O_CLOEXEC);
    ch.True(fd >= 0, "open(a/file, O_RDONLY)");
    ch.True(read(fd, buf, sizeof(buf)) == 5 && std::memcmp(buf, "hello", 5) == 0, "read a/file");
    ch.True(OpenFile(a, O_RDONLY | O_DIRECTORY) == 0, "list dir a");
    ch.FailsWith(OpenFile(a + "/file", O_WRONLY), EACCES, "open(a/file, O_WRONLY)");
    ch.FailsWith(OpenFile(a + "/new", O_WRONLY | O_CREAT), EACCES, "create a/new");
    ch.FailsWith(unlink((a + "/file").c_str()), EACCES, "unlink a/file");
    ch.True(OpenFile(b + "/new", O_WRONLY | O_CREAT) == 0, "create b/new");
    ch.True(mkdir((b + "/sub").c_str(), 0700) == 0, "mkdir b/sub");
    ch.True(unlink((b + "/new").c_str()) == 0, "unlink b/new");
    ch.FailsWith(OpenFile(c + "/secret", O_RDONLY), EACCES, "open(c/secret, O_RDONLY)");
    ch.FailsWith(OpenFile(c, O_RDONLY | O_DIRECTORY), EACCES, "list dir c");
    ch.FailsWith(OpenFile(root_ + "/top", O_WRONLY | O_CREAT), EACCES, "create in parent");
  });
  EXPECT_EQ(code, 0) << kChildFailed;
}

TEST_F(LandlockTest, ChildAddsRulesForItsOwnFds) {
  const std::string mine = MakeDir("mine");  // stands in for the child's fresh /tmp
  const std::string ro = MakeDir("ro");
  const std::string other = MakeDir("other");
  WriteFile(ro + "/file", "x");
  const LandlockRuleset ruleset = Build({.abi = abi_});
  ASSERT_TRUE(ruleset.fd.valid());

  const int code = RunInChild([&](ChildChecks& ch) {
    const int mine_fd = open(mine.c_str(), O_PATH | O_CLOEXEC | O_DIRECTORY);
    const int ro_fd = open(ro.c_str(), O_PATH | O_CLOEXEC | O_DIRECTORY);
    ch.True(mine_fd >= 0 && ro_fd >= 0, "open O_PATH");
    ch.Zero(LandlockAllowFdInChild(ruleset.fd.get(), mine_fd, ruleset.handled_fs, true, true),
            "writable dir rule");
    ch.Zero(LandlockAllowFdInChild(ruleset.fd.get(), ro_fd, ruleset.handled_fs, false, true),
            "read-only dir rule");
    RestrictSelf(ch, ruleset.fd.get());
    ch.True(OpenFile(mine + "/new", O_WRONLY | O_CREAT) == 0, "create mine/new");
    ch.True(OpenFile(ro + "/file", O_RDONLY) == 0, "read ro/file");
    ch.FailsWith(OpenFile(ro + "/file", O_WRONLY), EACCES, "write ro/file");
    ch.FailsWith(OpenFile(other + "/new", O_WRONLY | O_CREAT), EACCES, "create other/new");
  });
  EXPECT_EQ(code, 0) << kChildFailed;
}

TEST_F(LandlockTest, RulesOnRegularFiles) {
  const std::string dir = MakeDir("d");
  const std::string rw = dir + "/rw";
  const std::string ro = dir + "/ro";
  const std::string sibling = dir + "/sibling";
  WriteFile(rw, "0123456789");
  WriteFile(ro, "ro");
  WriteFile(sibling, "s");
  // A writable rule on a file must not carry directory rights (the kernel says EINVAL).
  auto built = BuildLandlockRuleset({.abi = abi_, .paths = {{rw, true}, {ro, false}}});
  ASSERT_TRUE(built.ok()) << built.error().Message();
  const LandlockRuleset ruleset = std::move(*built);

  const int code = RunInChild([&](ChildChecks& ch) {
    RestrictSelf(ch, ruleset.fd.get());
    const int fd = open(rw.c_str(), O_RDWR | O_CLOEXEC);
    ch.True(fd >= 0, "open(rw, O_RDWR)");
    ch.True(write(fd, "ab", 2) == 2, "write rw");
    ch.True(ftruncate(fd, 4) == 0, "ftruncate rw");
    ch.True(OpenFile(rw, O_WRONLY | O_TRUNC) == 0, "open(rw, O_TRUNC)");
    ch.True(OpenFile(ro, O_RDONLY) == 0, "open(ro, O_RDONLY)");
    ch.FailsWith(OpenFile(ro, O_WRONLY), EACCES, "open(ro, O_WRONLY)");
    ch.FailsWith(OpenFile(sibling, O_RDONLY), EACCES, "open(sibling, O_RDONLY)");
    ch.FailsWith(OpenFile(dir + "/new", O_WRONLY | O_CREAT), EACCES, "create d/new");
  });
  EXPECT_EQ(code, 0) << kChildFailed;
}

TEST_F(LandlockTest, DirectoryRightsOnAFileAreRejectedByTheKernel) {
  const std::string file = root_ + "/f";
  WriteFile(file, "f");
  const LandlockRuleset ruleset = Build({.abi = abi_});
  ASSERT_TRUE(ruleset.fd.valid());
  const int fd = open(file.c_str(), O_PATH | O_CLOEXEC);
  ASSERT_GE(fd, 0);
  EXPECT_EQ(LandlockAllowFdInChild(ruleset.fd.get(), fd, ruleset.handled_fs, true, true), EINVAL)
      << "is_directory=true on a file keeps directory rights";
  EXPECT_EQ(LandlockAllowFdInChild(ruleset.fd.get(), fd, ruleset.handled_fs, true, false), 0);
  EXPECT_EQ(LandlockAllowFdInChild(ruleset.fd.get(), fd, ruleset.handled_fs, false, false), 0);
  close(fd);
}

// A TCP listener on 127.0.0.1 with a kernel-chosen port.
struct Listener {
  int fd = -1;
  uint16_t port = 0;
  Listener() {
    fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
    sockaddr_in addr{};
    addr.sin_family = AF_INET;
    addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    socklen_t len = sizeof(addr);
    if (bind(fd, reinterpret_cast<sockaddr*>(&addr), len) != 0 || listen(fd, 8) != 0 ||
        getsockname(fd, reinterpret_cast<sockaddr*>(&addr), &len) != 0) {
      return;
    }
    port = ntohs(addr.sin_port);
  }
  ~Listener() { close(fd); }
  Listener(const Listener&) = delete;
  Listener& operator=(const Listener&) = delete;
};

long ConnectTcp(uint16_t port) {
  const int fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
  if (fd < 0) return -1;
  sockaddr_in addr{};
  addr.sin_family = AF_INET;
  addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  addr.sin_port = htons(port);
  const int rc = connect(fd, reinterpret_cast<sockaddr*>(&addr), sizeof(addr));
  const int saved = errno;
  close(fd);
  errno = saved;
  return rc;
}

long BindTcpAnyPort() {
  const int fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
  if (fd < 0) return -1;
  sockaddr_in addr{};
  addr.sin_family = AF_INET;
  addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  const int rc = bind(fd, reinterpret_cast<sockaddr*>(&addr), sizeof(addr));
  const int saved = errno;
  close(fd);
  errno = saved;
  return rc;
}

TEST_F(LandlockTest, TcpConnectOnlyToAllowedPorts) {
  if (abi_ < 4) GTEST_SKIP() << "TCP rules need Landlock ABI >= 4, kernel has " << abi_;
  const Listener allowed;
  const Listener denied;
  ASSERT_NE(allowed.port, 0);
  ASSERT_NE(denied.port, 0);
  const LandlockRuleset ruleset =
      Build({.abi = abi_, .restrict_tcp = true, .tcp_connect_ports = {allowed.port}});
  const LandlockRuleset no_ports = Build({.abi = abi_, .restrict_tcp = true});
  const LandlockRuleset tcp_not_handled = Build({.abi = abi_});
  ASSERT_TRUE(ruleset.fd.valid() && no_ports.fd.valid() && tcp_not_handled.fd.valid());

  EXPECT_EQ(RunInChild([&](ChildChecks& ch) {
              RestrictSelf(ch, ruleset.fd.get());
              ch.True(ConnectTcp(allowed.port) == 0, "connect to the allowed port");
              ch.FailsWith(ConnectTcp(denied.port), EACCES, "connect to another port");
              ch.FailsWith(BindTcpAnyPort(), EACCES, "bind a TCP port");
            }),
            0)
      << kChildFailed;
  EXPECT_EQ(RunInChild([&](ChildChecks& ch) {
              RestrictSelf(ch, no_ports.fd.get());
              ch.FailsWith(ConnectTcp(allowed.port), EACCES, "connect with no ports allowed");
            }),
            0)
      << kChildFailed;
  EXPECT_EQ(RunInChild([&](ChildChecks& ch) {
              RestrictSelf(ch, tcp_not_handled.fd.get());
              ch.True(ConnectTcp(denied.port) == 0, "connect when TCP is not handled");
            }),
            0)
      << kChildFailed;
}

long ConnectAbstract(const std::string& name) {
  const int fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
  if (fd < 0) return -1;
  sockaddr_un addr{};
  addr.sun_family = AF_UNIX;
  std::memcpy(addr.sun_path, name.data(), name.size());  // name[0] == '\0': abstract
  const auto len = static_cast<socklen_t>(offsetof(sockaddr_un, sun_path) + name.size());
  const int rc = connect(fd, reinterpret_cast<sockaddr*>(&addr), len);
  const int saved = errno;
  close(fd);
  errno = saved;
  return rc;
}

TEST_F(LandlockTest, ScopesAbstractUnixSocketsAndSignals) {
  if (abi_ < 6) GTEST_SKIP() << "scopes need Landlock ABI >= 6, kernel has " << abi_;
  const std::string name = std::string(1, '\0') + "agentbox-test-" + std::to_string(getpid());
  const int server = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
  ASSERT_GE(server, 0);
  sockaddr_un addr{};
  addr.sun_family = AF_UNIX;
  std::memcpy(addr.sun_path, name.data(), name.size());
  const auto len = static_cast<socklen_t>(offsetof(sockaddr_un, sun_path) + name.size());
  ASSERT_EQ(bind(server, reinterpret_cast<sockaddr*>(&addr), len), 0) << std::strerror(errno);
  ASSERT_EQ(listen(server, 8), 0);

  const LandlockRuleset scoped = Build({.abi = abi_});
  ASSERT_TRUE(scoped.scoped);
  const LandlockRuleset unscoped = Build({.abi = 5});
  ASSERT_FALSE(unscoped.scoped);

  EXPECT_EQ(RunInChild([&](ChildChecks& ch) {
              ch.True(kill(getppid(), 0) == 0, "unrestricted: kill(parent, 0)");
              ch.True(ConnectAbstract(name) == 0, "unrestricted: connect abstract socket");
            }),
            0)
      << kChildFailed;
  EXPECT_EQ(RunInChild([&](ChildChecks& ch) {
              RestrictSelf(ch, scoped.fd.get());
              ch.FailsWith(kill(getppid(), 0), EPERM, "scoped: kill(parent, 0)");
              ch.FailsWith(ConnectAbstract(name), EPERM, "scoped: connect abstract socket");
              ch.True(kill(getpid(), 0) == 0, "scoped: kill(self, 0)");
            }),
            0)
      << kChildFailed;
  EXPECT_EQ(RunInChild([&](ChildChecks& ch) {
              RestrictSelf(ch, unscoped.fd.get());
              ch.True(kill(getppid(), 0) == 0, "ABI 5 ruleset: kill(parent, 0)");
              ch.True(ConnectAbstract(name) == 0, "ABI 5 ruleset: connect abstract socket");
            }),
            0)
      << kChildFailed;
  close(server);
}

TEST_F(LandlockTest, MissingPathIsASetupErrorNamingThePath) {
  const std::string missing = root_ + "/does-not-exist";
  const auto ruleset =
      BuildLandlockRuleset({.abi = abi_, .paths = {{root_, false}, {missing, true}}});
  ASSERT_FALSE(ruleset.ok());
  EXPECT_EQ(ruleset.error().code, ErrorCode::kSetup);
  EXPECT_EQ(ruleset.error().err, ENOENT);
  EXPECT_EQ(ruleset.error().syscall, "open");
  EXPECT_THAT(ruleset.error().Message(), HasSubstr(missing));
}

TEST(LandlockPlanTest, AbiZeroIsUnavailable) {
  const auto ruleset = BuildLandlockRuleset({.abi = 0, .paths = {{"/usr", false}}});
  ASSERT_FALSE(ruleset.ok());
  EXPECT_EQ(ruleset.error().code, ErrorCode::kUnavailable);
  EXPECT_THAT(ruleset.error().Message(), HasSubstr("landlock"));
}

TEST(LandlockPlanTest, TcpRestrictionBelowAbi4IsUnsupported) {
  const auto ruleset =
      BuildLandlockRuleset({.abi = 3, .restrict_tcp = true, .tcp_connect_ports = {443}});
  ASSERT_FALSE(ruleset.ok());
  EXPECT_EQ(ruleset.error().code, ErrorCode::kUnsupported);
  EXPECT_THAT(ruleset.error().Message(), HasSubstr("ABI >= 4"));
  EXPECT_THAT(ruleset.error().Message(), HasSubstr("ABI 3"));
}

}  // namespace
}  // namespace agentbox
