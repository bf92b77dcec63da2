// The supervisor: prepares everything that can fail for a fixable reason, clones the
// sandbox's pid 1, then waits for it with a timeout, relaying output and signals.
#include <fcntl.h>
#include <poll.h>
#include <sched.h>
#include <sys/signalfd.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <chrono>
#include <climits>
#include <cstring>
#include <mutex>
#include <optional>
#include <vector>

#include "base/fd.h"
#include "base/log.h"
#include "base/scope_guard.h"
#include "executor/sandbox.h"
#include "executor/stages.h"
#include "executor/trace.h"
#include "linux/cgroup.h"
#include "linux/landlock.h"
#include "linux/seccomp.h"
#include "linux/uapi/clone3.h"
#include "net/proxy.h"

namespace agentbox {
namespace {

char* g_scrub_begin = nullptr;
char* g_scrub_end = nullptr;

struct Pipe {
  UniqueFd read;
  UniqueFd write;
};

Result<Pipe> MakePipe() {
  int fds[2];
  if (::pipe2(fds, O_CLOEXEC) != 0) return ErrnoError(ErrorCode::kSetup, "pipe2", "supervisor");
  return Pipe{UniqueFd(fds[0]), UniqueFd(fds[1])};
}

// Keeps the first and the last `limit / 2` bytes of a stream.
class Capture {
 public:
  Capture(size_t limit, const RunOptions& options, int stream)
      : half_(limit / 2), observer_(options.on_output), stream_(stream) {}
  void Append(const char* data, size_t n) {
    if (observer_) observer_(stream_, std::string_view(data, n));
    total_ += n;
    const size_t to_head = std::min(n, half_ - std::min(half_, head_.size()));
    head_.append(data, to_head);
    tail_.append(data + to_head, n - to_head);
    if (tail_.size() > 2 * half_) tail_.erase(0, tail_.size() - half_);
  }
  CapturedStream Finish() {
    if (tail_.size() > half_) tail_.erase(0, tail_.size() - half_);
    CapturedStream out;
    out.total_bytes = total_;
    out.truncated = total_ > head_.size() + tail_.size();
    out.data = head_ + tail_;
    return out;
  }

 private:
  size_t half_;
  const std::function<void(int, std::string_view)>& observer_;
  int stream_;
  uint64_t total_ = 0;
  std::string head_;
  std::string tail_;
};

// Reads what is available; returns false at EOF or error (the fd is then done).
bool Drain(int fd, Capture& capture) {
  char buf[16384];
  while (true) {
    const ssize_t n = ::read(fd, buf, sizeof(buf));
    if (n > 0) {
      capture.Append(buf, static_cast<size_t>(n));
      continue;
    }
    if (n < 0 && errno == EINTR) continue;
    return n < 0 && errno == EAGAIN;
  }
}

const Result<SeccompProgram>& CachedSeccomp() {
  // Compiled at build time: the same filter as BuildSeccompProgram({}) (linux/seccomp.h).
  static const Result<SeccompProgram> program = EmbeddedSeccompProgram();
  return program;
}

// pid 1 processes that reported their sandbox empty but had not finished exiting when their
// run returned: reaped by a later run's ReapLater, or by the kernel when this process ends.
void ReapLater(UniqueFd pidfd) {
  static std::mutex mutex;
  static std::vector<UniqueFd> exiting;
  const std::lock_guard<std::mutex> lock(mutex);
  if (pidfd) exiting.push_back(std::move(pidfd));
  std::erase_if(exiting, [](const UniqueFd& fd) {
    siginfo_t info{};
    return ::waitid(static_cast<idtype_t>(P_PIDFD), static_cast<id_t>(fd.get()), &info,
                    WEXITED | WNOHANG) != 0 ||
           info.si_pid != 0;
  });
}

const CgroupSupport& CachedCgroupSupport() {
  static const CgroupSupport support = DetectCgroupSupport();
  return support;
}

bool Required(const RunOptions& options, Layer layer) {
  return std::find(options.required.begin(), options.required.end(), layer) !=
         options.required.end();
}

std::vector<char*> PointerArray(std::vector<std::string>& strings) {
  std::vector<char*> out;
  out.reserve(strings.size() + 1);
  for (std::string& s : strings) out.push_back(s.data());
  out.push_back(nullptr);
  return out;
}

Error SetupError(const SandboxPlan& plan, const ChildReport& report) {
  std::string context = "sandbox setup failed at stage ";
  context += StageName(static_cast<Stage>(report.stage));
  if (static_cast<Stage>(report.stage) == Stage::kMounts && report.detail >= 0 &&
      static_cast<size_t>(report.detail) < plan.mounts.ops.size()) {
    const MountOp& op = plan.mounts.ops[static_cast<size_t>(report.detail)];
    context += " (";
    context += MountKindName(op.kind);
    context += " " + op.target + ")";
  }
  return Error{ErrorCode::kSetup, report.err, {}, std::move(context)};
}

Error CloneError(int err) {
  std::string hint;
  if (err == EPERM || err == ENOSPC || err == EUSERS) {
    hint = ": user namespaces are unavailable to this user (see `agentbox doctor`)";
  }
  return Error{ErrorCode::kUnavailable, err, "clone3",
               "cannot create the sandbox namespaces" + hint};
}

}  // namespace

const char* OutcomeName(Outcome outcome) {
  switch (outcome) {
    case Outcome::kExited:
      return "exited";
    case Outcome::kSignaled:
      return "signaled";
    case Outcome::kTimedOut:
      return "timed_out";
    case Outcome::kSetupFailed:
      return "setup_failed";
    case Outcome::kExecFailed:
      return "exec_failed";
    case Outcome::kCancelled:
      return "cancelled";
  }
  return "?";
}

void RememberProcessStrings(int argc, char** argv, char** envp) {
  if (argc <= 0 || argv == nullptr || argv[0] == nullptr) return;
  g_scrub_begin = argv[0];
  char* end = argv[argc - 1] + std::strlen(argv[argc - 1]) + 1;
  for (char** e = envp; e != nullptr && *e != nullptr; ++e) {
    end = std::max(end, *e + std::strlen(*e) + 1);
  }
  g_scrub_end = end;
}

int ExitCodeFor(const RunResult& result) {
  switch (result.outcome) {
    case Outcome::kExited:
      return result.exit_code;
    case Outcome::kSignaled:
      return 128 + result.signal;
    case Outcome::kTimedOut:
      return 124;
    case Outcome::kSetupFailed:
      return 125;
    case Outcome::kExecFailed:
      return result.error.err == ENOENT || result.error.err == ENOTDIR ? 127 : 126;
    case Outcome::kCancelled:
      return 128 + SIGKILL;
  }
  return 125;
}

Result<RunResult> RunSandbox(SandboxPlan& plan, const RunOptions& options) {
  RunResult result;
  Enforcement& enforcement = result.enforcement;
  RunTrace trace;  // AGENTBOX_TRACE_TIMINGS
  auto print_trace = ScopeGuard([&] { trace.Print(); });

  // Everything that can fail for a reason the user can fix fails here, before clone.
  const Result<SeccompProgram>& seccomp = CachedSeccomp();
  if (!seccomp) return seccomp.error();
  const sock_fprog seccomp_prog = seccomp->Prog();
  trace.Mark("seccomp filter ready");

  plan.landlock.abi = LandlockAbi();
  // TCP rules need ABI 4; below it the network namespace alone keeps the program in.
  if (plan.landlock.abi < 4) plan.landlock.restrict_tcp = false;
  std::optional<LandlockRuleset> ruleset;
  if (plan.landlock.abi > 0) {
    auto built = BuildLandlockRuleset(plan.landlock);
    if (!built) return built.error();
    ruleset = std::move(*built);
  } else if (Required(options, Layer::kLandlock)) {
    return MakeError(
        ErrorCode::kUnavailable,
        "Landlock is required but this kernel does not offer it (see agentbox doctor)");
  }
  trace.Mark("landlock ruleset built");

  std::optional<RunCgroup> cgroup;
  std::string cgroup_problem;  // why the run has no cgroup, for the refusal below
  const CgroupSupport& support = CachedCgroupSupport();
  trace.Mark("cgroup support detected");
  if (support.version != CgroupVersion::kNone) {
    auto created = RunCgroup::Create(support, plan.limits);
    if (created) {
      cgroup = std::move(*created);
    } else if (Required(options, Layer::kCgroup)) {
      return created.error();
    } else {
      cgroup_problem = created.error().Message();
      LogDebug("cgroup unusable, falling back to rlimits: ", cgroup_problem);
    }
  } else if (Required(options, Layer::kCgroup)) {
    return MakeError(ErrorCode::kUnavailable,
                     "a cgroup is required but none is usable: " + support.detail);
  }
  const bool cg_pids = cgroup && cgroup->limits_pids();
  // SEC-9: the process limit must hold. RLIMIT_NPROC does not bind the global root user,
  // so a run started by root needs the cgroup; without one it is refused, not weakened.
  if (!cg_pids && ::getuid() == 0) {
    return MakeError(ErrorCode::kUnavailable,
                     "cannot bound the number of processes: no usable cgroup pids controller, "
                     "and RLIMIT_NPROC does not apply to root (" +
                         (cgroup_problem.empty() ? support.detail : cgroup_problem) + ")");
  }
  const bool cg_memory = cgroup && cgroup->limits_memory();
  const RlimitPlan rlimits = BuildRlimitPlan(plan.limits, !cg_pids, !cg_memory);
  enforcement.limits =
      cg_pids ? (cgroup->version() == CgroupVersion::kV2 ? "cgroup2" : "cgroup1") : "rlimit";
  trace.Mark(cgroup ? "cgroup created" : "limits planned (rlimits, no cgroup)");

  auto status = MakePipe();
  if (!status) return status.error();
  auto lifeline = MakePipe();
  if (!lifeline) return lifeline.error();
  std::optional<Pipe> out_pipe;
  std::optional<Pipe> err_pipe;
  if (options.capture_output) {
    auto o = MakePipe();
    auto e = MakePipe();
    if (!o) return o.error();
    if (!e) return e.error();
    out_pipe = std::move(*o);
    err_pipe = std::move(*e);
  }

  // Proxy mode: pid 1 hands its bridge listeners over this socket pair to the proxy.
  std::optional<EgressRules> egress;
  UniqueFd bridge_parent, bridge_child;
  if (plan.proxy_bridge && plan.new_network_namespace) {
    auto rules = EgressRulesFor(plan.egress, plan.upstream_proxy);
    if (!rules) return rules.error();
    egress = std::move(*rules);
    int sv[2];
    if (::socketpair(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0, sv) != 0) {
      return ErrnoError(ErrorCode::kSetup, "socketpair", "egress proxy bridge");
    }
    bridge_parent.Reset(sv[0]);
    bridge_child.Reset(sv[1]);
  }

  // SEC-9, cgroup v1: pid 1 moves itself into the run cgroups with these, as its first stage.
  std::vector<UniqueFd> tasks_fds;
  std::vector<UniqueFd> leave_fds;  // pid 1 leaves by these once the sandbox is empty
  if (cgroup && cgroup->version() == CgroupVersion::kV1) {
    auto opened = cgroup->OpenTasksFiles();
    if (!opened) return opened.error();
    tasks_fds = std::move(*opened);
    auto parents = cgroup->OpenParentTasksFiles();
    if (!parents) return parents.error();
    leave_fds = std::move(*parents);
  }
  auto tasks_fd = [&](size_t i) { return i < tasks_fds.size() ? tasks_fds[i].get() : -1; };
  auto leave_fd = [&](size_t i) { return i < leave_fds.size() ? leave_fds[i].get() : -1; };

  std::vector<char*> argv = PointerArray(plan.argv);
  std::vector<char*> envp = PointerArray(plan.env);
  const ChildContext ctx{&plan,
                         argv.data(),
                         envp.data(),
                         status->write.get(),
                         lifeline->read.get(),
                         options.stdin_fd == 0 ? -1 : options.stdin_fd,
                         out_pipe ? out_pipe->write.get() : -1,
                         err_pipe ? err_pipe->write.get() : -1,
                         ruleset ? ruleset->fd.get() : -1,
                         bridge_child ? bridge_child.get() : -1,
                         ruleset ? ruleset->handled_fs : 0,
                         &seccomp_prog,
                         &rlimits,
                         g_scrub_begin,
                         g_scrub_end,
                         {tasks_fd(0), tasks_fd(1)},
                         {leave_fd(0), leave_fd(1)},
                         trace.child_slots()};

  sigset_t forwarded;
  sigemptyset(&forwarded);
  UniqueFd signal_fd;
  sigset_t old_mask;
  if (options.forward_signals) {
    for (const int sig : {SIGINT, SIGTERM, SIGHUP, SIGQUIT}) sigaddset(&forwarded, sig);
    ::pthread_sigmask(SIG_BLOCK, &forwarded, &old_mask);
    signal_fd.Reset(::signalfd(-1, &forwarded, SFD_CLOEXEC | SFD_NONBLOCK));
  }
  // Forwarded signals stay blocked (and arrive on signal_fd) until the sandbox is reaped.
  auto restore_mask = ScopeGuard([&] {});

  int pidfd = -1;
  uapi::CloneArgs args{};
  args.flags = CLONE_NEWUSER | CLONE_NEWNS | CLONE_NEWPID | CLONE_NEWIPC | CLONE_NEWUTS |
               CLONE_NEWCGROUP | uapi::kClonePidfd;
  // No CLONE_NEWNET: pid 1 has a helper make the network namespace alongside the view (SEC-31).
  if (cgroup && cgroup->version() == CgroupVersion::kV2) {
    args.flags |= uapi::kCloneIntoCgroup;  // SEC-9: limits apply from the first instruction
    args.cgroup = static_cast<uint64_t>(cgroup->v2_dir_fd());
  }
  args.pidfd = reinterpret_cast<uint64_t>(&pidfd);
  args.exit_signal = SIGCHLD;

  trace.Mark("ready to clone");
  const auto start = std::chrono::steady_clock::now();
  const long pid = uapi::Clone3(&args);
  if (pid == 0) SandboxInit(ctx);
  const int clone_errno = errno;
  if (pid < 0) return CloneError(clone_errno);
  trace.Mark("clone3");

  UniqueFd pidfd_owner(pidfd);
  bridge_child.Reset();
  std::unique_ptr<EgressProxy> proxy;
  if (egress) {
    auto started = EgressProxy::Start(std::move(bridge_parent), std::move(*egress));
    if (!started) {
      uapi::PidfdSendSignal(pidfd, SIGKILL);
      ::waitpid(static_cast<pid_t>(pid), nullptr, 0);
      return started.error();
    }
    proxy = std::move(*started);
  }
  status->write.Reset();
  lifeline->read.Reset();
  if (out_pipe) out_pipe->write.Reset();
  if (err_pipe) err_pipe->write.Reset();

  tasks_fds.clear();
  leave_fds.clear();

  auto kill_sandbox = [&] { uapi::PidfdSendSignal(pidfd, SIGKILL); };
  // Release pid 1. If it already failed a stage and exited, this write fails (EPIPE; the
  // process ignores SIGPIPE) and the wait below reads its report.
  const char go = 1;
  [[maybe_unused]] const ssize_t released = ::write(lifeline->write.get(), &go, 1);
  trace.Mark("pid 1 released");

  // Enforcement as planned; a stage that fails is reported and the result says setup_failed.
  enforcement.namespaces = true;
  enforcement.network_namespace = plan.new_network_namespace;
  enforcement.pivot_root = true;
  enforcement.landlock_abi = ruleset ? ruleset->abi : 0;
  enforcement.seccomp = true;
  enforcement.capabilities_dropped = true;
  enforcement.no_new_privs = true;

  Capture out_capture(options.capture_limit, options, 1);
  Capture err_capture(options.capture_limit, options, 2);
  if (out_pipe) ::fcntl(out_pipe->read.get(), F_SETFL, O_NONBLOCK);
  if (err_pipe) ::fcntl(err_pipe->read.get(), F_SETFL, O_NONBLOCK);
  bool out_open = out_pipe.has_value();
  bool err_open = err_pipe.has_value();
  // pid 1's reports: a setup or exec failure, then the program's end once the sandbox is empty.
  ::fcntl(status->read.get(), F_SETFL, O_NONBLOCK);
  bool status_open = true;
  std::optional<ChildReport> setup_failure;
  std::optional<ChildReport> exec_failure;
  std::optional<ChildReport> ending;
  auto read_reports = [&] {
    ChildReport report{};
    while (::read(status->read.get(), &report, sizeof(report)) == sizeof(report)) {
      switch (report.type) {
        case ChildReport::kSetupFailed:
          setup_failure = report;
          break;
        case ChildReport::kExecFailed:
          exec_failure = report;
          break;
        default:
          ending = report;
          break;
      }
    }
  };
  bool timed_out = false;
  bool cancelled = false;
  const auto deadline = start + std::chrono::milliseconds(plan.timeout_ms);
  const auto progress_every = std::chrono::milliseconds(options.progress_interval_ms);
  auto next_progress = start + progress_every;

  // SEC-15: the run ends when pid 1 reports the sandbox empty (every other process killed and
  // reaped, the run cgroups left) or when pid 1 itself is gone (its exit makes the kernel
  // kill every other process of the sandbox first): nothing the sandbox started outlives it.
  while (true) {
    pollfd fds[6];
    nfds_t n = 0;
    fds[n++] = {pidfd, POLLIN, 0};
    const nfds_t status_index = n;
    if (status_open) fds[n++] = {status->read.get(), POLLIN, 0};
    const nfds_t out_index = n;
    if (out_open) fds[n++] = {out_pipe->read.get(), POLLIN, 0};
    const nfds_t err_index = n;
    if (err_open) fds[n++] = {err_pipe->read.get(), POLLIN, 0};
    const nfds_t sig_index = n;
    if (signal_fd) fds[n++] = {signal_fd.get(), POLLIN, 0};
    const nfds_t cancel_index = n;
    const bool watch_cancel = options.cancel_fd >= 0 && !cancelled && !timed_out;
    if (watch_cancel) fds[n++] = {options.cancel_fd, POLLIN, 0};
    const auto now = std::chrono::steady_clock::now();
    int wait_ms = -1;
    if (!timed_out && !cancelled) {
      if (now >= deadline) {
        timed_out = true;  // SEC-16: the timeout kills pid 1, and with it the sandbox
        kill_sandbox();
        continue;
      }
      auto wake = deadline;
      if (options.on_progress) {
        if (now >= next_progress) {
          options.on_progress(static_cast<uint64_t>(
              std::chrono::duration_cast<std::chrono::milliseconds>(now - start).count()));
          next_progress = now + progress_every;
        }
        wake = std::min(wake, next_progress);
      }
      // Clamped: a timeout past INT_MAX ms (24.8 days) must not wrap to "wait forever".
      wait_ms = static_cast<int>(std::min<int64_t>(
          std::chrono::ceil<std::chrono::milliseconds>(wake - now).count(), INT_MAX));
    }
    const int ready = ::poll(fds, n, wait_ms);
    if (ready < 0 && errno != EINTR) break;
    if (ready <= 0) continue;
    if (out_open && fds[out_index].revents != 0)
      out_open = Drain(out_pipe->read.get(), out_capture);
    if (err_open && fds[err_index].revents != 0)
      err_open = Drain(err_pipe->read.get(), err_capture);
    if (signal_fd && fds[sig_index].revents != 0) {
      signalfd_siginfo info{};
      while (::read(signal_fd.get(), &info, sizeof(info)) == sizeof(info)) {
        uapi::PidfdSendSignal(pidfd, static_cast<int>(info.ssi_signo));
      }
    }
    if (watch_cancel && fds[cancel_index].revents != 0) {
      cancelled = true;
      kill_sandbox();
    }
    if (status_open && fds[status_index].revents != 0) {
      read_reports();
      if (ending) break;
      // Hung up without an ending: pid 1 is gone or going; the pidfd says when.
      if ((fds[status_index].revents & POLLIN) == 0) status_open = false;
    }
    if (fds[0].revents != 0) break;
  }
  read_reports();
  // Reported empty and out of the run cgroups: pid 1's own exit (the kernel tearing down its
  // namespaces) is not waited for. Otherwise (killed, a setup failure, could not leave the
  // cgroups, or a v2 cgroup, which it has no cheap way to leave) the run ends when pid 1 is
  // reaped.
  const bool pid1_can_leave = !cgroup || cgroup->version() == CgroupVersion::kV1;
  const bool sandbox_empty =
      pid1_can_leave && ending && ending->detail == 0 && !timed_out && !cancelled;
  siginfo_t info{};
  if (sandbox_empty) {
    trace.Mark("sandbox empty (pid 1 reported)");
    ReapLater(std::move(pidfd_owner));
  } else {
    ::waitid(static_cast<idtype_t>(P_PIDFD), static_cast<id_t>(pidfd), &info, WEXITED);
    read_reports();
    trace.Mark("pid 1 reaped");
  }
  result.duration_ms = static_cast<uint64_t>(std::chrono::duration_cast<std::chrono::milliseconds>(
                                                 std::chrono::steady_clock::now() - start)
                                                 .count());
  // Every writer is gone now (pid 1 closes its copies before reporting); take what is left.
  if (out_open) ::fcntl(out_pipe->read.get(), F_SETFL, 0), Drain(out_pipe->read.get(), out_capture);
  if (err_open) ::fcntl(err_pipe->read.get(), F_SETFL, 0), Drain(err_pipe->read.get(), err_capture);
  result.out = out_capture.Finish();
  result.err = err_capture.Finish();

  trace.Mark("output read");
  if (cgroup) {
    cgroup->Destroy();
    trace.Mark("cgroup removed");
  }
  if (proxy) result.connections = proxy->Stop();

  if (setup_failure) {
    result.outcome = Outcome::kSetupFailed;
    result.error = SetupError(plan, *setup_failure);
  } else if (cancelled) {
    result.outcome = Outcome::kCancelled;
    result.error = MakeError(ErrorCode::kSetup, "cancelled; the sandbox was killed");
  } else if (timed_out) {
    result.outcome = Outcome::kTimedOut;
    result.error = MakeError(ErrorCode::kTimeout,
                             "timed out after " + std::to_string(plan.timeout_ms) + " ms");
  } else if (exec_failure) {
    result.outcome = Outcome::kExecFailed;
    result.error = Error{ErrorCode::kSetup, exec_failure->err, "execve",
                         "cannot run \"" + plan.argv[0] + "\""};
  } else if (ending && ending->type == ChildReport::kSignaled) {
    result.outcome = Outcome::kSignaled;
    result.signal = ending->value;
  } else if (ending) {
    result.outcome = Outcome::kExited;
    result.exit_code = ending->value;
  } else {
    result.outcome = Outcome::kSetupFailed;
    result.error =
        MakeError(ErrorCode::kSetup, "the sandbox's pid 1 ended without a report (status " +
                                         std::to_string(info.si_status) + ")");
  }
  if (result.outcome == Outcome::kSetupFailed) enforcement = Enforcement{};
  return result;
}

}  // namespace agentbox
