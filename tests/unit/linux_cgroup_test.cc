// SEC-9: cgroup and rlimit limits. The parsers run anywhere; the tests that create cgroups
// or user namespaces run each sandbox step in a forked child and skip without the
// privilege they need (root for cgroups).
#include <fcntl.h>
#include <gmock/gmock.h>
#include <grp.h>
#include <gtest/gtest.h>
#include <sched.h>
#include <signal.h>
#include <sys/prctl.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <cstring>
#include <optional>
#include <string>
#include <type_traits>
#include <vector>

#include "base/scope_guard.h"
#include "linux/cgroup.h"
#include "linux/rlimit.h"

namespace agentbox {
namespace {

using ::testing::ElementsAre;
using ::testing::HasSubstr;
using ::testing::IsEmpty;

// ---- pure parsers ----

constexpr char kHybridMountinfo[] =
    "31 23 0:28 / /sys/fs/cgroup rw,relatime - tmpfs tmpfs rw,mode=755\n"
    "32 31 0:29 / /sys/fs/cgroup/cpu,cpuacct rw,relatime shared:9 - cgroup cgroup rw,cpu,cpuacct\n"
    "35 31 0:32 / /sys/fs/cgroup/memory rw,relatime - cgroup cgroup rw,memory\n"
    "39 31 0:36 / /sys/fs/cgroup/pids rw,relatime - cgroup cgroup rw,pids\n"
    "40 31 0:37 / /sys/fs/cgroup/systemd rw,relatime - cgroup cgroup rw,xattr,name=systemd\n"
    "41 31 0:38 / /sys/fs/cgroup/unified rw,relatime - cgroup2 cgroup2 rw\n"
    "42 23 0:39 / /proc rw - proc proc rw\n";

// Leftover run directories of supervisors killed before cleaning up are swept, and nothing
// else: not a live supervisor's, not one still holding something, not other names.
TEST(CgroupStaleRunDirs, OnlyDeadSupervisorsEmptyDirsGoAndOnlyPastTheThreshold) {
  char tmpl[] = "/tmp/agentbox-stale.XXXXXX";
  ASSERT_NE(::mkdtemp(tmpl), nullptr);
  const std::string parent = tmpl;
  const pid_t dead = ::fork();
  ASSERT_GE(dead, 0);
  if (dead == 0) ::_exit(0);
  ASSERT_EQ(::waitpid(dead, nullptr, 0), dead);  // reaped: the pid names no process now
  const std::string d = std::to_string(dead);
  const std::string own = std::to_string(::getpid());
  const std::vector<std::string> dirs = {"run-" + d + "-0",
                                         "run-" + d + "-1",
                                         "run-" + d + "-2",
                                         "run-" + own + "-0",
                                         "run-" + d,
                                         "run-x-0",
                                         "other"};
  for (const std::string& name : dirs) ASSERT_EQ(::mkdir((parent + "/" + name).c_str(), 0755), 0);
  // Not empty: stands for a cgroup that still holds a process (rmdir fails, EBUSY there).
  const std::string busy_file = parent + "/run-" + d + "-2/f";
  ::close(::open(busy_file.c_str(), O_CREAT | O_WRONLY | O_CLOEXEC, 0644));
  auto exists = [&](const std::string& name) {
    struct stat st {};
    return ::stat((parent + "/" + name).c_str(), &st) == 0;
  };

  EXPECT_EQ(RemoveStaleRunDirs(parent, 100), 0);  // 7 directories: below the threshold
  for (const std::string& name : dirs) EXPECT_TRUE(exists(name)) << name;

  EXPECT_EQ(RemoveStaleRunDirs(parent, 0), 2);
  EXPECT_FALSE(exists("run-" + d + "-0"));
  EXPECT_FALSE(exists("run-" + d + "-1"));
  EXPECT_TRUE(exists("run-" + d + "-2"));    // not empty
  EXPECT_TRUE(exists("run-" + own + "-0"));  // a live supervisor's
  EXPECT_TRUE(exists("run-" + d));           // not a run directory's name
  EXPECT_TRUE(exists("run-x-0"));
  EXPECT_TRUE(exists("other"));

  ::unlink(busy_file.c_str());
  for (const std::string& name : dirs) ::rmdir((parent + "/" + name).c_str());
  ::rmdir(parent.c_str());
}

TEST(CgroupParseTest, HybridMountinfoListsV1HierarchiesAndTheV2Mount) {
  const std::vector<CgroupMount> mounts = ParseCgroupMounts(kHybridMountinfo);
  ASSERT_EQ(mounts.size(), 5u);  // tmpfs and proc are not cgroup mounts
  EXPECT_EQ(mounts[0].mount_point, "/sys/fs/cgroup/cpu,cpuacct");
  EXPECT_THAT(mounts[0].options, ElementsAre("rw", "cpu", "cpuacct"));
  EXPECT_FALSE(mounts[0].v2);
  EXPECT_EQ(mounts[2].mount_point, "/sys/fs/cgroup/pids");
  EXPECT_EQ(mounts[2].root, "/");
  EXPECT_THAT(mounts[2].options, ElementsAre("rw", "pids"));
  EXPECT_EQ(mounts[4].mount_point, "/sys/fs/cgroup/unified");
  EXPECT_TRUE(mounts[4].v2);
}

TEST(CgroupParseTest, PureV2MountinfoWithOptionalFields) {
  const std::vector<CgroupMount> mounts = ParseCgroupMounts(
      "29 23 0:26 / /sys/fs/cgroup rw,nosuid,nodev,noexec,relatime shared:4 master:1 - "
      "cgroup2 cgroup2 rw,nsdelegate,memory_recursiveprot\n");
  ASSERT_EQ(mounts.size(), 1u);
  EXPECT_TRUE(mounts[0].v2);
  EXPECT_EQ(mounts[0].mount_point, "/sys/fs/cgroup");
  EXPECT_EQ(mounts[0].root, "/");
  EXPECT_THAT(mounts[0].options, ElementsAre("rw", "nsdelegate", "memory_recursiveprot"));
}

TEST(CgroupParseTest, MountinfoUnescapesPathsAndKeepsANonRootMountRoot) {
  const std::vector<CgroupMount> mounts = ParseCgroupMounts(
      "50 23 0:40 /docker/abc /mnt/my\\040cgroups ro - cgroup2 cgroup rw\n"
      "garbage line\n");
  ASSERT_EQ(mounts.size(), 1u);
  EXPECT_EQ(mounts[0].mount_point, "/mnt/my cgroups");
  EXPECT_EQ(mounts[0].root, "/docker/abc");
}

TEST(CgroupParseTest, ProcCgroupHybrid) {
  const ProcCgroup self = ParseProcCgroup(
      "9:name=systemd:/\n8:pids:/\n4:memory:/process_api/afca\n1:cpu,cpuacct:/c\n0::/\n");
  ASSERT_TRUE(self.v2_path.has_value());
  EXPECT_EQ(*self.v2_path, "/");
  EXPECT_EQ(self.v1_paths.at("pids"), "/");
  EXPECT_EQ(self.v1_paths.at("memory"), "/process_api/afca");
  EXPECT_EQ(self.v1_paths.at("cpu"), "/c");
  EXPECT_EQ(self.v1_paths.at("cpuacct"), "/c");
  EXPECT_EQ(self.v1_paths.at("name=systemd"), "/");
}

TEST(CgroupParseTest, ProcCgroupPureV2) {
  const ProcCgroup self =
      ParseProcCgroup("0::/user.slice/user-1000.slice/user@1000.service/app.slice/a:b.scope\n");
  ASSERT_TRUE(self.v2_path.has_value());
  EXPECT_EQ(*self.v2_path, "/user.slice/user-1000.slice/user@1000.service/app.slice/a:b.scope");
  EXPECT_THAT(self.v1_paths, IsEmpty());
}

TEST(CgroupParseTest, ProcCgroupPureV1HasNoV2Path) {
  const ProcCgroup self = ParseProcCgroup("3:pids:/user.slice\n2:memory:/user.slice\n");
  EXPECT_FALSE(self.v2_path.has_value());
  EXPECT_EQ(self.v1_paths.at("pids"), "/user.slice");
}

TEST(CgroupParseTest, CgroupDirMapsPathsUnderTheMountRootOnly) {
  CgroupMount host{"/sys/fs/cgroup/pids", "/", false, {"rw", "pids"}};
  EXPECT_EQ(CgroupDir(host, "/"), "/sys/fs/cgroup/pids");
  EXPECT_EQ(CgroupDir(host, "/a/b"), "/sys/fs/cgroup/pids/a/b");
  CgroupMount sub{"/sys/fs/cgroup", "/docker/abc", true, {"rw"}};
  EXPECT_EQ(CgroupDir(sub, "/docker/abc"), "/sys/fs/cgroup");
  EXPECT_EQ(CgroupDir(sub, "/docker/abc/x"), "/sys/fs/cgroup/x");
  EXPECT_EQ(CgroupDir(sub, "/docker/abcd"), std::nullopt);
  EXPECT_EQ(CgroupDir(sub, "/other"), std::nullopt);
}

TEST(CgroupDetectTest, ResultIsConsistent) {
  const CgroupSupport support = DetectCgroupSupport();
  EXPECT_FALSE(support.detail.empty());
  EXPECT_EQ(support.version == CgroupVersion::kNone, !support.pids && !support.memory);
  if (support.version == CgroupVersion::kV2) {
    EXPECT_FALSE(support.v2_root.empty());
  }
  if (support.version == CgroupVersion::kV1) {
    EXPECT_EQ(support.pids, !support.v1_pids_dir.empty());
    EXPECT_EQ(support.memory, !support.v1_memory_dir.empty());
  }
}

// ---- rlimit plan ----

const RlimitPlan::Item* Find(const RlimitPlan& plan, int resource) {
  for (const RlimitPlan::Item& item : plan.items) {
    if (item.resource == resource) return &item;
  }
  return nullptr;
}

rlim_t CurrentHard(int resource) {
  struct rlimit r {};
  EXPECT_EQ(getrlimit(resource, &r), 0);
  return r.rlim_max;
}

TEST(RlimitPlanTest, AlwaysCoreFsizeNofileAndOnlyTheFallbacksAsked) {
  LimitRequest req;
  req.memory_bytes = 1ULL << 30;
  const RlimitPlan plan = BuildRlimitPlan(req, false, false);
  ASSERT_NE(Find(plan, RLIMIT_CORE), nullptr);
  EXPECT_EQ(Find(plan, RLIMIT_CORE)->soft, 0u);
  EXPECT_EQ(Find(plan, RLIMIT_CORE)->hard, 0u);
  ASSERT_NE(Find(plan, RLIMIT_FSIZE), nullptr);
  EXPECT_EQ(Find(plan, RLIMIT_FSIZE)->hard,
            std::min<rlim_t>(1ULL << 34, CurrentHard(RLIMIT_FSIZE)));
  ASSERT_NE(Find(plan, RLIMIT_NOFILE), nullptr);
  EXPECT_EQ(Find(plan, RLIMIT_CPU), nullptr);
  EXPECT_EQ(Find(plan, RLIMIT_NPROC), nullptr);
  EXPECT_EQ(Find(plan, RLIMIT_AS), nullptr);

  const RlimitPlan with = BuildRlimitPlan(req, true, true);
  ASSERT_NE(Find(with, RLIMIT_NPROC), nullptr);
  EXPECT_EQ(Find(with, RLIMIT_NPROC)->soft, std::min<rlim_t>(256, CurrentHard(RLIMIT_NPROC)));
  ASSERT_NE(Find(with, RLIMIT_AS), nullptr);
  EXPECT_EQ(Find(with, RLIMIT_AS)->hard, std::min<rlim_t>(1ULL << 30, CurrentHard(RLIMIT_AS)));
}

TEST(RlimitPlanTest, CpuHardIsOneSecondAboveSoft) {
  LimitRequest req;
  req.cpu_seconds = 7;
  const RlimitPlan plan = BuildRlimitPlan(req, false, false);
  ASSERT_NE(Find(plan, RLIMIT_CPU), nullptr);
  if (CurrentHard(RLIMIT_CPU) < 8) GTEST_SKIP() << "RLIMIT_CPU hard limit below 8 s";
  EXPECT_EQ(Find(plan, RLIMIT_CPU)->soft, 7u);
  EXPECT_EQ(Find(plan, RLIMIT_CPU)->hard, 8u);
}

TEST(RlimitPlanTest, NofileIsClampedToTheCurrentHardLimit) {
  LimitRequest req;
  req.open_files = 1ULL << 40;
  const RlimitPlan plan = BuildRlimitPlan(req, false, false);
  ASSERT_NE(Find(plan, RLIMIT_NOFILE), nullptr);
  EXPECT_EQ(Find(plan, RLIMIT_NOFILE)->hard, CurrentHard(RLIMIT_NOFILE));
  EXPECT_EQ(Find(plan, RLIMIT_NOFILE)->soft, CurrentHard(RLIMIT_NOFILE));
  // The plan is always applicable without privilege because of the clamp.
  struct rlimit r {};
  ASSERT_EQ(getrlimit(RLIMIT_NOFILE, &r), 0);
  EXPECT_LE(Find(plan, RLIMIT_NOFILE)->hard, r.rlim_max);
}

// ---- helpers for tests that fork ----

// Runs `fn` in a forked child and returns what it reported (a trivially copyable value),
// or nullopt if the child died without reporting.
template <typename T, typename F>
std::optional<T> RunInChild(F fn) {
  static_assert(std::is_trivially_copyable_v<T>);
  int fds[2];
  if (pipe2(fds, O_CLOEXEC) != 0) return std::nullopt;
  const pid_t pid = fork();
  if (pid == 0) {
    close(fds[0]);
    const T report = fn();
    (void)!write(fds[1], &report, sizeof report);
    _exit(0);
  }
  close(fds[1]);
  T report{};
  const ssize_t n = read(fds[0], &report, sizeof report);
  close(fds[0]);
  int status = 0;
  waitpid(pid, &status, 0);
  if (n != static_cast<ssize_t>(sizeof report)) return std::nullopt;
  return report;
}

struct ForkReport {
  int setup_errno = 0;  // a step before the fork loop failed with this errno
  int forks_ok = 0;     // successful forks
  int fork_errno = 0;   // errno of the first failed fork
};

// Forks `n` children that wait to be killed (or for their parent to die) and counts the
// successes in `report`. Returns their pids.
std::vector<pid_t> ForkMany(int n, ForkReport& report) {
  std::vector<pid_t> children;
  for (int i = 0; i < n; ++i) {
    const pid_t pid = fork();
    if (pid == 0) {
      prctl(PR_SET_PDEATHSIG, SIGKILL);
      pause();
      _exit(0);
    }
    if (pid < 0) {
      if (report.fork_errno == 0) report.fork_errno = errno;
      continue;
    }
    ++report.forks_ok;
    children.push_back(pid);
  }
  return children;
}

void KillAndReap(const std::vector<pid_t>& children) {
  for (pid_t pid : children) kill(pid, SIGKILL);
  for (pid_t pid : children) waitpid(pid, nullptr, 0);
}

int WriteText(const char* path, const std::string& text) {
  const int fd = open(path, O_WRONLY | O_CLOEXEC);
  if (fd < 0) return errno;
  const ssize_t n = write(fd, text.data(), text.size());
  const int err = n < 0 ? errno : 0;
  close(fd);
  return err;
}

// unshare(CLONE_NEWUSER), mapping the current uid and gid to themselves.
int EnterUserNamespace() {
  const std::string uid = std::to_string(geteuid());
  const std::string gid = std::to_string(getegid());
  if (unshare(CLONE_NEWUSER) != 0) return errno;
  if (int err = WriteText("/proc/self/setgroups", "deny"); err != 0) return err;
  if (int err = WriteText("/proc/self/uid_map", uid + " " + uid + " 1"); err != 0) return err;
  return WriteText("/proc/self/gid_map", gid + " " + gid + " 1");
}

RlimitPlan NprocPlan(uint64_t pids) {
  LimitRequest req;
  req.pids = pids;
  return BuildRlimitPlan(req, /*pids_by_rlimit=*/true, /*memory_by_rlimit=*/false);
}

bool UserNamespacesUnavailable(int err) { return err == EPERM || err == ENOSPC || err == EINVAL; }

constexpr uid_t kNobody = 65534;

// ---- rlimits applied in a child ----

// RLIMIT_NPROC is counted per user namespace (Linux >= 5.14): set after CLONE_NEWUSER, it
// counts the sandbox's own processes only, not other processes of the same uid outside.
TEST(RlimitChildTest, NprocInAFreshUserNamespaceCountsOnlyTheSandbox) {
  const std::optional<ForkReport> report = RunInChild<ForkReport>([] {
    ForkReport r;
    if (getuid() == 0) {  // global root is exempt from RLIMIT_NPROC (next test): be nobody
      if (setgroups(0, nullptr) != 0 || setresgid(kNobody, kNobody, kNobody) != 0 ||
          setresuid(kNobody, kNobody, kNobody) != 0) {
        r.setup_errno = errno;
        return r;
      }
      prctl(PR_SET_DUMPABLE, 1);  // cleared by the uid change; writing *_map needs it
    }
    // Eight processes of the same uid outside the new namespace: they must not count.
    ForkReport outside_report;
    const std::vector<pid_t> outside = ForkMany(8, outside_report);
    if (outside_report.forks_ok != 8) {
      r.setup_errno = outside_report.fork_errno;
    } else if (int err = EnterUserNamespace(); err != 0) {
      r.setup_errno = err;
    } else if (int apply_err = ApplyRlimitsInChild(NprocPlan(5)); apply_err != 0) {
      r.setup_errno = apply_err;
    } else {
      KillAndReap(ForkMany(10, r));
    }
    KillAndReap(outside);
    return r;
  });
  ASSERT_TRUE(report.has_value());
  if (UserNamespacesUnavailable(report->setup_errno)) {
    GTEST_SKIP() << "no user namespace: " << std::strerror(report->setup_errno);
  }
  ASSERT_EQ(report->setup_errno, 0) << std::strerror(report->setup_errno);
  EXPECT_EQ(report->forks_ok, 4);  // RLIMIT_NPROC 5 = this process + 4 children
  EXPECT_EQ(report->fork_errno, EAGAIN);
}

// Observed kernel behaviour, which the enforcement report relies on: a process whose real
// uid is global root (INIT_USER) is exempt from RLIMIT_NPROC, even inside a user namespace
// where it has no capability over the initial namespace. Root needs a cgroup for pids.
TEST(RlimitChildTest, NprocDoesNotBindGlobalRootEvenInAUserNamespace) {
  if (getuid() != 0) GTEST_SKIP() << "checks the root exemption";
  const std::optional<ForkReport> report = RunInChild<ForkReport>([] {
    ForkReport r;
    if (int err = EnterUserNamespace(); err != 0) {
      r.setup_errno = err;
    } else if (int apply_err = ApplyRlimitsInChild(NprocPlan(5)); apply_err != 0) {
      r.setup_errno = apply_err;
    } else {
      KillAndReap(ForkMany(10, r));
    }
    return r;
  });
  ASSERT_TRUE(report.has_value());
  ASSERT_EQ(report->setup_errno, 0) << std::strerror(report->setup_errno);
  EXPECT_EQ(report->forks_ok, 10);
  EXPECT_EQ(report->fork_errno, 0);
}

struct FileReport {
  int setup_errno = 0;
  rlim_t core_soft = 1;
  rlim_t core_hard = 1;
  ssize_t first_write = 0;   // 8 KiB asked with a 4 KiB RLIMIT_FSIZE
  ssize_t second_write = 0;  // at the limit
  int second_errno = 0;
};

TEST(RlimitChildTest, NoCoreDumpsAndFileSizeIsEnforced) {
  const std::optional<FileReport> report = RunInChild<FileReport>([] {
    FileReport r;
    LimitRequest req;
    req.file_size_bytes = 4096;
    if (int err = ApplyRlimitsInChild(BuildRlimitPlan(req, false, false)); err != 0) {
      r.setup_errno = err;
      return r;
    }
    struct rlimit core {};
    getrlimit(RLIMIT_CORE, &core);
    r.core_soft = core.rlim_cur;
    r.core_hard = core.rlim_max;
    signal(SIGXFSZ, SIG_IGN);  // else SIGXFSZ kills us before write returns EFBIG
    char path[] = "/tmp/agentbox-fsize-XXXXXX";
    const int fd = mkstemp(path);
    if (fd < 0) {
      r.setup_errno = errno;
      return r;
    }
    unlink(path);
    static char buf[8192];
    r.first_write = write(fd, buf, sizeof buf);
    r.second_write = write(fd, buf, 1);
    r.second_errno = errno;
    close(fd);
    return r;
  });
  ASSERT_TRUE(report.has_value());
  ASSERT_EQ(report->setup_errno, 0) << std::strerror(report->setup_errno);
  EXPECT_EQ(report->core_soft, 0u);
  EXPECT_EQ(report->core_hard, 0u);
  EXPECT_EQ(report->first_write, 4096);
  EXPECT_EQ(report->second_write, -1);
  EXPECT_EQ(report->second_errno, EFBIG);
}

TEST(RlimitChildTest, ApplyReturnsTheErrnoOfTheFailingItem) {
  RlimitPlan plan;
  plan.items.push_back({RLIMIT_CORE, 0, 0});
  plan.items.push_back({12345, 1, 1});  // no such resource
  const std::optional<int> err = RunInChild<int>([&] { return ApplyRlimitsInChild(plan); });
  ASSERT_TRUE(err.has_value());
  EXPECT_EQ(*err, EINVAL);
}

// ---- run cgroups (root only) ----

std::optional<CgroupSupport> RootCgroupSupport(std::string* why) {
  if (geteuid() != 0) {
    *why = "creating cgroups needs root here";
    return std::nullopt;
  }
  CgroupSupport support = DetectCgroupSupport();
  if (!support.pids) {
    *why = "no usable pids controller: " + support.detail;
    return std::nullopt;
  }
  return support;
}

TEST(RunCgroupTest, PidsLimitStopsAForkBombAndDestroyKillsAndRemovesEverything) {
  std::string why;
  const std::optional<CgroupSupport> support = RootCgroupSupport(&why);
  if (!support) GTEST_SKIP() << why;
  LimitRequest limits;
  limits.pids = 5;
  Result<RunCgroup> cg = RunCgroup::Create(*support, limits);
  ASSERT_TRUE(cg.ok()) << cg.error().Message();
  EXPECT_TRUE(cg->limits_pids());
  EXPECT_EQ(cg->version(), support->version);
  EXPECT_EQ(cg->v2_dir_fd() >= 0, support->version == CgroupVersion::kV2);
  const std::vector<std::string> dirs = cg->dirs();
  ASSERT_FALSE(dirs.empty());

  int go[2];
  int out[2];
  ASSERT_EQ(pipe2(go, O_CLOEXEC), 0);
  ASSERT_EQ(pipe2(out, O_CLOEXEC), 0);
  const pid_t child = fork();
  ASSERT_GE(child, 0);
  if (child == 0) {
    char c;
    if (read(go[0], &c, 1) != 1) _exit(1);
    ForkReport r;
    (void)ForkMany(10, r);  // left running: Destroy must kill them
    (void)!write(out[1], &r, sizeof r);
    pause();
    _exit(0);
  }
  close(go[0]);
  close(out[1]);
  bool reaped = false;
  ScopeGuard reap([&] {
    if (!reaped) {
      kill(child, SIGKILL);
      waitpid(child, nullptr, 0);
    }
  });
  // SEC-9: attached before the child is released.
  const Status attached = cg->Attach(child);
  ASSERT_TRUE(attached.ok()) << attached.error().Message();
  ASSERT_EQ(write(go[1], "x", 1), 1);
  ForkReport r;
  ASSERT_EQ(read(out[0], &r, sizeof r), static_cast<ssize_t>(sizeof r));
  close(go[1]);
  close(out[0]);
  EXPECT_EQ(r.forks_ok, 4);  // pids.max 5 = the child + 4
  EXPECT_EQ(r.fork_errno, EAGAIN);

  cg->Destroy();
  EXPECT_THAT(cg->dirs(), IsEmpty());
  for (const std::string& dir : dirs) {
    EXPECT_NE(access(dir.c_str(), F_OK), 0) << dir;
    EXPECT_EQ(errno, ENOENT) << dir;
  }
  int status = 0;
  ASSERT_EQ(waitpid(child, &status, 0), child);
  reaped = true;
  EXPECT_TRUE(WIFSIGNALED(status));
  EXPECT_EQ(WTERMSIG(status), SIGKILL);
}

std::string ReadText(const std::string& path) {
  std::string out;
  if (FILE* f = std::fopen(path.c_str(), "re")) {
    char buf[256];
    const size_t n = std::fread(buf, 1, sizeof buf, f);
    out.assign(buf, n);
    std::fclose(f);
  }
  return out;
}

// cgroup v1, as the sandbox's pid 1 does it: the supervisor opens the `tasks` files, the
// child (in a new user namespace, as after clone3) moves itself in, then forks.
TEST(RunCgroupTest, V1ChildAttachesItselfThroughTasksFilesOpenedByTheParent) {
  std::string why;
  const std::optional<CgroupSupport> support = RootCgroupSupport(&why);
  if (!support) GTEST_SKIP() << why;
  if (support->version != CgroupVersion::kV1) GTEST_SKIP() << "cgroup v1 only";
  LimitRequest limits;
  limits.pids = 5;
  limits.memory_bytes = 64ULL << 20;
  Result<RunCgroup> cg = RunCgroup::Create(*support, limits);
  ASSERT_TRUE(cg.ok()) << cg.error().Message();
  Result<std::vector<UniqueFd>> tasks = cg->OpenTasksFiles();
  ASSERT_TRUE(tasks.ok()) << tasks.error().Message();
  ASSERT_EQ(tasks->size(), cg->dirs().size());
  int fds[2] = {-1, -1};
  for (size_t i = 0; i < tasks->size() && i < 2; ++i) fds[i] = (*tasks)[i].get();
  struct Report {
    int attach_errno = -1;
    int user_ns_errno = -1;
    ForkReport forks;
  };
  const std::optional<Report> report = RunInChild<Report>([&] {
    Report r;
    r.user_ns_errno = EnterUserNamespace();
    r.attach_errno = AttachSelfInChild(fds, 2);
    if (r.attach_errno == 0) KillAndReap(ForkMany(10, r.forks));
    return r;
  });
  ASSERT_TRUE(report.has_value());
  ASSERT_EQ(report->user_ns_errno, 0) << std::strerror(report->user_ns_errno);
  ASSERT_EQ(report->attach_errno, 0) << std::strerror(report->attach_errno);
  EXPECT_EQ(report->forks.forks_ok, 4);  // pids.max 5 = the child + 4
  EXPECT_EQ(report->forks.fork_errno, EAGAIN);

  // A failed write is reported, and the fds are closed either way.
  const int bad[2] = {-1, open("/dev/null", O_RDONLY | O_CLOEXEC)};
  ASSERT_GE(bad[1], 0);
  EXPECT_EQ(AttachSelfInChild(bad, 2), EBADF);
  EXPECT_EQ(fcntl(bad[1], F_GETFD), -1);
  cg->Destroy();
  Result<std::vector<UniqueFd>> after = cg->OpenTasksFiles();
  ASSERT_TRUE(after.ok());
  EXPECT_THAT(*after, IsEmpty());
}

TEST(RunCgroupTest, WritesPidsAndMemoryLimits) {
  std::string why;
  const std::optional<CgroupSupport> support = RootCgroupSupport(&why);
  if (!support) GTEST_SKIP() << why;
  if (!support->memory) GTEST_SKIP() << "no usable memory controller: " << support->detail;
  LimitRequest limits;
  limits.pids = 7;
  limits.memory_bytes = 64ULL << 20;
  Result<RunCgroup> cg = RunCgroup::Create(*support, limits);
  ASSERT_TRUE(cg.ok()) << cg.error().Message();
  EXPECT_TRUE(cg->limits_memory());
  const std::vector<std::string> dirs = cg->dirs();
  if (support->version == CgroupVersion::kV2) {
    ASSERT_EQ(dirs.size(), 1u);
    EXPECT_EQ(ReadText(dirs[0] + "/pids.max"), "7\n");
    EXPECT_EQ(ReadText(dirs[0] + "/memory.max"), "67108864\n");
  } else {
    ASSERT_EQ(dirs.size(), 2u);  // pids, then memory
    EXPECT_THAT(dirs[0], HasSubstr(support->v1_pids_dir + "/agentbox/run-"));
    EXPECT_THAT(dirs[1], HasSubstr(support->v1_memory_dir + "/agentbox/run-"));
    EXPECT_EQ(ReadText(dirs[0] + "/pids.max"), "7\n");
    EXPECT_EQ(ReadText(dirs[1] + "/memory.limit_in_bytes"), "67108864\n");
  }
  RunCgroup moved = std::move(*cg);  // the moved-from object must not remove anything
  cg->Destroy();
  for (const std::string& dir : dirs) EXPECT_EQ(access(dir.c_str(), F_OK), 0) << dir;
  moved.Destroy();
  for (const std::string& dir : dirs) EXPECT_NE(access(dir.c_str(), F_OK), 0) << dir;
}

TEST(RunCgroupTest, CreateWithoutSupportFailsAsUnsupported) {
  const Result<RunCgroup> cg = RunCgroup::Create(CgroupSupport{}, LimitRequest{});
  ASSERT_FALSE(cg.ok());
  EXPECT_EQ(cg.error().code, ErrorCode::kUnsupported);
}

}  // namespace
}  // namespace agentbox
