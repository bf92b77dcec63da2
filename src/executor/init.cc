// The sandbox's pid 1. See stages.h: no allocation, raw syscalls only.
#include <fcntl.h>
#include <poll.h>
#include <sched.h>
#include <sys/prctl.h>
#include <sys/socket.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <csignal>
#include <cstdint>
#include <cstring>
#include <iterator>

#include "executor/stages.h"
#include "executor/trace.h"
#include "linux/caps.h"
#include "linux/cgroup.h"
#include "linux/child_util.h"
#include "linux/landlock.h"
#include "linux/mount.h"
#include "linux/netns.h"
#include "linux/seccomp.h"
#include "linux/userns.h"

namespace agentbox {
namespace {

void Report(const ChildContext& ctx, const ChildReport& report) {
  // A short write to a pipe of this size is atomic; nothing useful to do if it fails.
  [[maybe_unused]] const ssize_t n = ::write(ctx.status_fd, &report, sizeof(report));
}

// AGENTBOX_TRACE_TIMINGS: when `stage` ended (executor/trace.h); nothing when disabled.
void StampStage(const ChildContext& ctx, Stage stage) {
  if (ctx.stage_times != nullptr) {
    ctx.stage_times->done[static_cast<size_t>(stage)] = MonotonicNanos();
  }
}

[[noreturn]] void Fail(const ChildContext& ctx, Stage stage, int err, int detail = -1) {
  Report(ctx, {ChildReport::kSetupFailed, static_cast<int32_t>(stage), err, detail, 0});
  ::_exit(125);
}

// Closes every fd >= 3 except those in `keep` (unsorted, -1 entries ignored).
int CloseAllExcept(const int* keep, size_t n) {
  int kept[8];
  size_t k = 0;
  for (size_t i = 0; i < n && k < 8; ++i) {
    if (keep[i] >= 3) kept[k++] = keep[i];
  }
  for (size_t i = 1; i < k; ++i) {  // insertion sort, k is tiny
    for (size_t j = i; j > 0 && kept[j - 1] > kept[j]; --j) std::swap(kept[j - 1], kept[j]);
  }
  unsigned from = 3;
  for (size_t i = 0; i < k; ++i) {
    const unsigned fd = static_cast<unsigned>(kept[i]);
    if (fd > from && ::syscall(SYS_close_range, from, fd - 1, 0) != 0) return errno;
    from = fd + 1;
  }
  if (::syscall(SYS_close_range, from, ~0U, 0) != 0) return errno;
  return 0;
}

int MoveFd(int from, int to) {
  if (from < 0 || from == to) return 0;
  if (::dup2(from, to) < 0) return errno;
  return 0;
}

// execvpe without allocation: argv[0] with a slash is run as is, otherwise each PATH entry
// is tried; EACCES from any entry is reported if no entry succeeds (as execvp does).
int ExecSearch(const ChildContext& ctx) {
  const char* file = ctx.argv[0];
  if (std::strchr(file, '/') != nullptr) {
    ::execve(file, ctx.argv, ctx.envp);
    return errno;
  }
  int result = ENOENT;
  const char* path = ctx.plan->path_env.c_str();
  while (true) {
    const char* end = std::strchr(path, ':');
    const size_t len = end == nullptr ? std::strlen(path) : static_cast<size_t>(end - path);
    child::PathBuf candidate;
    char dir[4096];
    if (len > 0 && len < sizeof(dir)) {
      std::memcpy(dir, path, len);
      dir[len] = '\0';
      if (candidate.Append(dir) && candidate.Append("/") && candidate.Append(file)) {
        ::execve(candidate.c_str(), ctx.argv, ctx.envp);
        if (errno == EACCES)
          result = EACCES;
        else if (errno != ENOENT && errno != ENOTDIR)
          return errno;
      }
    }
    if (end == nullptr) return result;
    path = end + 1;
  }
}

sigset_t ForwardedSignals() {
  sigset_t set;
  sigemptyset(&set);
  for (const int sig :
       {SIGCHLD, SIGTERM, SIGINT, SIGHUP, SIGQUIT, SIGUSR1, SIGUSR2, SIGWINCH, SIGCONT, SIGALRM}) {
    sigaddset(&set, sig);
  }
  return set;
}

// The program, in pid 1's child: fresh session, clean signal state, exec. It runs on a stack
// of its own inside pid 1's memory (see SandboxInit), which AddressSanitizer would take for a
// corrupt stack and warn about on the program's stderr: not instrumented.
[[noreturn]] __attribute__((no_sanitize_address)) void StartProgram(const ChildContext& ctx) {
  // SEC-18: a new session without a controlling terminal, so the program cannot inject
  // input into the caller's terminal (TIOCSTI is also denied by seccomp, SEC-8).
  ::setsid();
  // The raw syscall: glibc's signal() refuses its own reserved real-time signals (32, 33),
  // which a caller may have set to ignored; every disposition must be the default.
  struct KernelSigaction {
    void (*handler)(int);
    unsigned long flags;
    void (*restorer)();
    uint64_t mask;
  };
  const KernelSigaction dfl{SIG_DFL, 0, nullptr, 0};
  for (int sig = 1; sig < NSIG; ++sig) {
    if (sig != SIGKILL && sig != SIGSTOP) {
      ::syscall(SYS_rt_sigaction, sig, &dfl, nullptr, sizeof(dfl.mask));
    }
  }
  sigset_t empty;
  sigemptyset(&empty);
  ::sigprocmask(SIG_SETMASK, &empty, nullptr);
  StampStage(ctx, Stage::kExec);
  const int err = ExecSearch(ctx);
  Report(ctx, {ChildReport::kExecFailed, static_cast<int32_t>(Stage::kExec), err, -1, 0});
  ::_exit(err == ENOENT || err == ENOTDIR ? 127 : 126);
}

__attribute__((no_sanitize_address)) int StartProgramEntry(void* ctx) {
  StartProgram(*static_cast<const ChildContext*>(ctx));
}

// SEC-15: the program has ended, and so does everything it started, before the supervisor
// hears of it: every other process of this pid namespace is killed (a fork racing the kill
// fails: its parent has SIGKILL pending) and reaped (orphans are pid 1's children), so when
// the report arrives the sandbox is empty. Then pid 1 leaves the run cgroups, so they can be
// removed at once: the kernel's teardown of pid 1 and its namespaces need not be waited for.
// Returns 0 if pid 1 left them (or had none to leave), else the errno.
int EmptySandbox(const ChildContext& ctx) {
  ::kill(-1, SIGKILL);
  while (::waitpid(-1, nullptr, __WALL) > 0 || errno == EINTR) {
  }
  const int left = AttachSelfInChild(ctx.cgroup_leave_fds, std::size(ctx.cgroup_leave_fds));
  for (const int fd : {0, 1, 2}) ::close(fd);  // the last writers of the program's output
  return left;
}

// Reaps orphans, forwards signals to the program's process group, and reports the
// program's end once the sandbox is empty (EmptySandbox).
[[noreturn]] void Supervise(const ChildContext& ctx, pid_t program) {
  const sigset_t set = ForwardedSignals();
  while (true) {
    siginfo_t info{};
    if (::sigwaitinfo(&set, &info) < 0) continue;
    if (info.si_signo != SIGCHLD) {
      ::kill(-program, info.si_signo);
      continue;
    }
    int status = 0;
    pid_t pid;
    while ((pid = ::waitpid(-1, &status, WNOHANG)) > 0) {
      if (pid != program) continue;
      if (ctx.stage_times != nullptr) ctx.stage_times->program_ended = MonotonicNanos();
      const int left = EmptySandbox(ctx);
      if (WIFSIGNALED(status)) {
        Report(ctx, {ChildReport::kSignaled, 0, 0, left, WTERMSIG(status)});
      } else {
        Report(ctx, {ChildReport::kExited, 0, 0, left, WEXITSTATUS(status)});
      }
      ::_exit(0);
    }
  }
}

// ---- The stages. Each returns 0 or an errno; `detail` may name a sub-step (a mount op).

int Cgroup(const ChildContext& ctx, int& /*detail*/) {
  // SEC-9: before anything else, and long before the program is forked. Writing "0" to a
  // v1 `tasks` file moves only this (single-threaded) process and skips the kernel's global
  // threadgroup lock that moving another process by pid takes (see linux/cgroup.h).
  return AttachSelfInChild(ctx.cgroup_tasks_fds, std::size(ctx.cgroup_tasks_fds));
}

int Lifeline(const ChildContext& ctx, int& /*detail*/) {
  // SEC-17: SIGKILL when the supervisor dies (even by SIGKILL); if it already died, stop
  // now. pid 1's death takes the whole sandbox with it.
  if (::prctl(PR_SET_PDEATHSIG, SIGKILL, 0, 0, 0) != 0) return errno;
  pollfd lifeline{ctx.lifeline_fd, POLLIN, 0};
  if (::poll(&lifeline, 1, 0) > 0 && (lifeline.revents & POLLHUP) != 0 &&
      (lifeline.revents & POLLIN) == 0) {
    ::_exit(125);
  }
  return 0;
}

int Stdio(const ChildContext& ctx, int& /*detail*/) {
  if (int err = MoveFd(ctx.stdin_fd, 0); err != 0) return err;
  if (int err = MoveFd(ctx.stdout_fd, 1); err != 0) return err;
  return MoveFd(ctx.stderr_fd, 2);
}

int CloseFds(const ChildContext& ctx, int& /*detail*/) {
  // SEC-14: only 0, 1 and 2 reach the program; our own pipes are CLOEXEC and the ruleset
  // fd is closed after use.
  const int keep[] = {ctx.status_fd, ctx.lifeline_fd,         ctx.ruleset_fd,
                      ctx.bridge_fd, ctx.cgroup_leave_fds[0], ctx.cgroup_leave_fds[1]};
  return CloseAllExcept(keep, std::size(keep));
}

int IdMaps(const ChildContext& ctx, int& /*detail*/) {
  if (int err = WriteIdMapsInChild(ctx.plan->id_maps); err != 0) return err;
  // SEC-22: pid 1 is not dumpable, so the program (same uid, no capabilities) cannot open
  // /proc/1/fd/* to forge a report on the status pipe, nor read /proc/1/mem. Only after the
  // id maps: a non-dumpable process's /proc files belong to root.
  return ::prctl(PR_SET_DUMPABLE, 0, 0, 0, 0) == 0 ? 0 : errno;
}

int ScrubMemory(const ChildContext& ctx, int& /*detail*/) {
  // SEC-13: pid 1 is a copy of the supervisor; wipe the caller's argv and environment
  // from its memory so /proc/1/environ and /proc/1/cmdline show nothing of the host.
  if (ctx.scrub_begin != nullptr && ctx.scrub_end > ctx.scrub_begin) {
    std::memset(ctx.scrub_begin, 0, static_cast<size_t>(ctx.scrub_end - ctx.scrub_begin));
  }
  return 0;
}

int Mounts(const ChildContext& ctx, int& detail) {
  const MountFailure f = ApplyMountPlanInChild(ctx.plan->mounts);
  detail = f.op;
  return f.err;
}

int Chdir(const ChildContext& ctx, int& /*detail*/) {
  return ::chdir(ctx.plan->cwd.c_str()) == 0 ? 0 : errno;
}

int Hostname(const ChildContext& ctx, int& /*detail*/) {
  const std::string& name = ctx.plan->hostname;
  return ::sethostname(name.data(), name.size()) == 0 ? 0 : errno;
}

// The network namespace's helper (SEC-31), as pid 1 sees it. pid 1 is a process of its own
// (no CLONE_VM), so this is pid 1's copy alone.
struct NetworkHelper {
  pid_t pid = -1;
  int channel = -1;  // the helper's result and namespace fd arrive here
};
NetworkHelper g_network_helper;

struct NetworkHelperArgs {
  const ChildContext* ctx;
  int channel;
};

// The helper: makes the namespace, brings lo up, opens the bridge listeners in it, and sends
// pid 1 an fd for the namespace (or the errno that stopped it); then it is done. It runs on
// a stack of its own in pid 1's memory (see NetworkStart): not instrumented, as StartProgram.
[[noreturn]] __attribute__((no_sanitize_address)) void NetworkHelperMain(const ChildContext& ctx,
                                                                         int channel) {
  int err = ::unshare(CLONE_NEWNET) == 0 ? 0 : errno;
  if (err == 0) err = BringUpLoopbackInChild();
  if (err == 0 && ctx.bridge_fd >= 0) {
    // SEC-30: the bridge listeners exist before the program does (it cannot take their
    // ports) and go straight to the supervisor: the program never holds them.
    const uint16_t ports[] = {kBridgeHttpPort, kBridgeSocksPort};
    err = HandOverListenersInChild(ctx.bridge_fd, ports, 2);
  }
  ::_exit(SendOwnNetnsInChild(channel, err) == 0 ? 0 : 1);
}

__attribute__((no_sanitize_address)) int NetworkHelperEntry(void* arg) {
  const auto* args = static_cast<const NetworkHelperArgs*>(arg);
  NetworkHelperMain(*args->ctx, args->channel);
}

int NetworkStart(const ChildContext& ctx, int& /*detail*/) {
  if (!ctx.plan->new_network_namespace) return 0;
  // SEC-31: creating a network namespace is the costliest step of a start (the kernel sets
  // up loopback, sysctls, IPv6), so a helper in pid 1's user namespace does it on another
  // CPU while pid 1 builds the view. It shares pid 1's memory (CLONE_VM: nothing to copy)
  // but not its fd table, and touches no memory but its own stack. errno is shared too: each
  // side reads it only right after a call of its own failed, and a failure of either fails
  // the run, so at worst a failed run names the wrong errno.
  int sv[2];
  if (::socketpair(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0, sv) != 0) return errno;
  alignas(16) static char helper_stack[64 * 1024];
  static NetworkHelperArgs args;
  args = {&ctx, sv[1]};
  const int pid =
      ::clone(NetworkHelperEntry, helper_stack + sizeof(helper_stack), CLONE_VM | SIGCHLD, &args);
  const int err = errno;
  ::close(sv[1]);
  if (pid < 0) {
    ::close(sv[0]);
    return err;
  }
  g_network_helper = {pid, sv[0]};
  return 0;
}

int NetworkJoin(const ChildContext& ctx, int& /*detail*/) {
  if (!ctx.plan->new_network_namespace) return 0;
  int netns = -1;
  if (const int err = ReceiveNetnsInChild(g_network_helper.channel, &netns); err != 0) {
    return err;
  }
  ::close(g_network_helper.channel);
  // SEC-31: pid 1 (and so the program) leaves the host's network namespace here, before
  // any capability is dropped: a run never starts in the host's namespace.
  const int err = ::setns(netns, CLONE_NEWNET) == 0 ? 0 : errno;
  ::close(netns);
  if (ctx.bridge_fd >= 0) ::close(ctx.bridge_fd);  // the helper handed the listeners over
  return err;
}

// SEC-31: the helper is gone before the program exists (it exits after sending; this waits).
int ReapNetworkHelper() {
  if (g_network_helper.pid < 0) return 0;
  while (::waitpid(g_network_helper.pid, nullptr, 0) < 0) {
    if (errno != EINTR) return errno;
  }
  return 0;
}

int Rlimits(const ChildContext& ctx, int& /*detail*/) { return ApplyRlimitsInChild(*ctx.rlimits); }

int WaitForParent(const ChildContext& ctx, int& /*detail*/) {
  char go = 0;
  if (::read(ctx.lifeline_fd, &go, 1) != 1) ::_exit(125);  // supervisor gone: nothing to run
  return 0;
}

int Capabilities(const ChildContext& /*ctx*/, int& /*detail*/) { return DropCapabilitiesInChild(); }

int NoNewPrivs(const ChildContext& /*ctx*/, int& /*detail*/) {
  return ::prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) == 0 ? 0 : errno;
}

int Landlock(const ChildContext& ctx, int& /*detail*/) {
  if (ctx.ruleset_fd < 0) return 0;
  for (const ChildLandlockRule& rule : ctx.plan->child_landlock) {
    const int fd = ::open(rule.path.c_str(), O_PATH | O_CLOEXEC | O_NOFOLLOW);
    if (fd < 0) return errno;
    const int err = LandlockAllowFdInChild(ctx.ruleset_fd, fd, ctx.landlock_handled_fs,
                                           rule.writable, rule.directory);
    ::close(fd);
    if (err != 0) return err;
  }
  const int root = ::open("/", O_PATH | O_CLOEXEC | O_DIRECTORY);
  if (root < 0) return errno;
  const int list_err = LandlockAllowListingInChild(ctx.ruleset_fd, root);
  ::close(root);
  if (list_err != 0) return list_err;
  if (int err = LandlockRestrictSelfInChild(ctx.ruleset_fd); err != 0) return err;
  ::close(ctx.ruleset_fd);
  return 0;
}

int Seccomp(const ChildContext& ctx, int& /*detail*/) {
  // Signals pid 1 forwards are blocked before the program exists, so none is lost.
  const sigset_t forwarded = ForwardedSignals();
  ::sigprocmask(SIG_BLOCK, &forwarded, nullptr);
  return InstallSeccompInChild(*ctx.seccomp);
}

struct StageStep {
  Stage stage;
  int (*run)(const ChildContext& ctx, int& detail);
};

// The order of setup lives here and nowhere else. After the last step pid 1 starts the
// program (kSpawn) and supervises it.
constexpr StageStep kStages[] = {
    {Stage::kCgroup, Cgroup},
    {Stage::kLifeline, Lifeline},
    {Stage::kStdio, Stdio},
    {Stage::kCloseFds, CloseFds},
    {Stage::kIdMaps, IdMaps},
    {Stage::kScrubMemory, ScrubMemory},
    {Stage::kNetworkStart, NetworkStart},
    {Stage::kMounts, Mounts},
    {Stage::kChdir, Chdir},
    {Stage::kHostname, Hostname},
    {Stage::kNetworkJoin, NetworkJoin},
    {Stage::kRlimits, Rlimits},
    {Stage::kWaitForParent, WaitForParent},
    {Stage::kCapabilities, Capabilities},
    {Stage::kNoNewPrivs, NoNewPrivs},
    {Stage::kLandlock, Landlock},
    {Stage::kSeccomp, Seccomp},
};

}  // namespace

[[noreturn]] void SandboxInit(const ChildContext& ctx) noexcept {
  if (ctx.stage_times != nullptr) ctx.stage_times->started = MonotonicNanos();
  for (const StageStep& step : kStages) {
    int detail = -1;
    if (const int err = step.run(ctx, detail); err != 0) Fail(ctx, step.stage, err, detail);
    StampStage(ctx, step.stage);
  }
  if (const int err = ReapNetworkHelper(); err != 0) Fail(ctx, Stage::kSpawn, err);
  // As posix_spawn does: the program's process shares pid 1's memory (CLONE_VM, on a stack of
  // its own) and pid 1 waits until it has called execve (CLONE_VFORK), so pid 1's address
  // space, a copy of the supervisor's, is not copied again and torn down at exec. The child
  // runs StartProgram only; its signal dispositions stay its own (no CLONE_SIGHAND).
  alignas(16) static char program_stack[64 * 1024];
  const int pid = ::clone(StartProgramEntry, program_stack + sizeof(program_stack),
                          CLONE_VM | CLONE_VFORK | SIGCHLD, const_cast<ChildContext*>(&ctx));
  if (pid < 0) Fail(ctx, Stage::kSpawn, errno);
  StampStage(ctx, Stage::kSpawn);
  ::close(ctx.lifeline_fd);
  Supervise(ctx, pid);
}

const char* StageName(Stage stage) {
  switch (stage) {
    case Stage::kCgroup:
      return "cgroup";
    case Stage::kLifeline:
      return "lifeline";
    case Stage::kStdio:
      return "stdio";
    case Stage::kCloseFds:
      return "close-fds";
    case Stage::kIdMaps:
      return "uid-gid-maps";
    case Stage::kScrubMemory:
      return "scrub-memory";
    case Stage::kMounts:
      return "mounts";
    case Stage::kChdir:
      return "chdir";
    case Stage::kHostname:
      return "hostname";
    case Stage::kNetworkStart:
      return "network-start";
    case Stage::kNetworkJoin:
      return "network-join";
    case Stage::kRlimits:
      return "rlimits";
    case Stage::kWaitForParent:
      return "wait-for-supervisor";
    case Stage::kCapabilities:
      return "capabilities";
    case Stage::kNoNewPrivs:
      return "no-new-privs";
    case Stage::kLandlock:
      return "landlock";
    case Stage::kSeccomp:
      return "seccomp";
    case Stage::kSpawn:
      return "spawn";
    case Stage::kExec:
      return "exec";
    case Stage::kCount:
      break;
  }
  return "?";
}

}  // namespace agentbox
