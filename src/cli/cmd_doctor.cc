// agentbox doctor [--json]: can agentbox sandbox programs on this host, and if not, why?
//
// Each check reads the kernel's own answer (a sysctl, a syscall probe in a throwaway child)
// and reports ok / warning / fail, a one-line finding and, when not ok, a one-line fix. The
// last check runs `/bin/true` in a sandbox built exactly as `agentbox run -- /bin/true`
// builds it. Exit status 0 only when that sandbox ran and no check failed.
//
// The probes change nothing on the host: each runs in a forked child, in namespaces of its
// own that die with it.
#include <fcntl.h>
#include <sched.h>
#include <signal.h>
#include <sys/mount.h>
#include <sys/prctl.h>
#include <sys/syscall.h>
#include <sys/utsname.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <charconv>
#include <cstdint>
#include <cstdio>
#include <cstring>
#include <fstream>
#include <optional>
#include <sstream>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "base/fd.h"
#include "base/scope_guard.h"
#include "cli/commands.h"
#include "cli/flags.h"
#include "config/strict_json.h"
#include "executor/sandbox.h"
#include "linux/cgroup.h"
#include "linux/landlock.h"
#include "linux/plan.h"
#include "linux/seccomp.h"
#include "linux/uapi/mount.h"
#include "linux/userns.h"
#include "policy/clamp.h"

namespace agentbox {
namespace {

enum class CheckStatus { kOk, kWarning, kFail };

// What one check found. `fix` is empty when status is kOk.
struct Finding {
  CheckStatus status = CheckStatus::kOk;
  std::string finding;
  std::string fix;
};

Finding Ok(std::string finding) { return {CheckStatus::kOk, std::move(finding), {}}; }
Finding Warn(std::string finding, std::string fix) {
  return {CheckStatus::kWarning, std::move(finding), std::move(fix)};
}
Finding Failed(std::string finding, std::string fix) {
  return {CheckStatus::kFail, std::move(finding), std::move(fix)};
}

// Facts several checks need, gathered once.
struct Host {
  uid_t uid = 0;               // real uid: RLIMIT_NPROC does not bind uid 0
  bool cap_sys_admin = false;  // effective CAP_SYS_ADMIN: exempt from the userns sysctls
  std::string release;         // uname -r
  std::string machine;         // uname -m
  std::optional<long> apparmor_restrict_userns;   // Ubuntu's sysctl, when present
  std::optional<long> unprivileged_userns_clone;  // Debian's sysctl, when present
  bool under_seccomp = false;  // this process already runs under a seccomp filter
};

// ---- small readers -------------------------------------------------------------------------

std::optional<std::string> ReadText(const char* path) {
  std::ifstream in(path);
  if (!in) return std::nullopt;
  std::ostringstream text;
  text << in.rdbuf();
  std::string s = text.str();
  while (!s.empty() && (s.back() == '\n' || s.back() == ' ')) s.pop_back();
  return s;
}

std::optional<long> ParseLong(std::string_view text) {
  long value = 0;
  const auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), value);
  if (ec != std::errc() || end != text.data() + text.size()) return std::nullopt;
  return value;
}

// A numeric sysctl under /proc/sys; nullopt when the knob does not exist (or is unreadable).
std::optional<long> ReadSysctl(const char* path) {
  const auto text = ReadText(path);
  return text ? ParseLong(*text) : std::nullopt;
}

// The value of field `name` ("Seccomp", "CapEff") in /proc/self/status.
std::optional<std::string> ProcStatusField(std::string_view name) {
  std::ifstream in("/proc/self/status");
  for (std::string line; std::getline(in, line);) {
    if (line.size() > name.size() && line.compare(0, name.size(), name) == 0 &&
        line[name.size()] == ':') {
      const size_t start = line.find_first_not_of(" \t", name.size() + 1);
      return start == std::string::npos ? std::string() : line.substr(start);
    }
  }
  return std::nullopt;
}

bool HasEffectiveCapSysAdmin() {
  constexpr unsigned kCapSysAdmin = 21;
  const auto hex = ProcStatusField("CapEff");
  uint64_t caps = 0;
  if (!hex || std::from_chars(hex->data(), hex->data() + hex->size(), caps, 16).ec != std::errc()) {
    return false;
  }
  return ((caps >> kCapSysAdmin) & 1U) != 0;
}

// "EPERM (Operation not permitted)".
std::string ErrnoText(int err) {
  const char* name = ::strerrorname_np(err);
  return std::string(name != nullptr ? name : "errno " + std::to_string(err)) + " (" +
         std::strerror(err) + ")";
}

// "6.18.44-foo" -> {6, 18}.
std::optional<std::pair<int, int>> KernelVersion(std::string_view release) {
  int major = 0;
  int minor = 0;
  const char* end = release.data() + release.size();
  auto r = std::from_chars(release.data(), end, major);
  if (r.ec != std::errc() || r.ptr == end || *r.ptr != '.') return std::nullopt;
  r = std::from_chars(r.ptr + 1, end, minor);
  if (r.ec != std::errc()) return std::nullopt;
  return std::pair{major, minor};
}

// ---- probes in a throwaway child -----------------------------------------------------------

// What a probe child reports: err == 0 when every step passed, else the failing step's
// index and errno.
struct ProbeReport {
  int step = 0;
  int err = 0;
};

// Runs `body` in a forked child and returns its report. The body runs after fork, so it
// makes raw syscalls only; whatever it creates (namespaces, mounts) dies with the child.
template <typename Body>
Result<ProbeReport> ProbeInChild(const Body& body) {
  int fds[2];
  if (::pipe2(fds, O_CLOEXEC) != 0) return ErrnoError(ErrorCode::kSetup, "pipe2", "probe");
  UniqueFd read_end(fds[0]);
  UniqueFd write_end(fds[1]);
  const pid_t pid = ::fork();
  if (pid < 0) return ErrnoError(ErrorCode::kSetup, "fork", "probe");
  if (pid == 0) {
    const ProbeReport report = body();
    const ssize_t n = ::write(write_end.get(), &report, sizeof(report));
    ::_exit(n == static_cast<ssize_t>(sizeof(report)) ? 0 : 1);
  }
  write_end.Reset();
  ProbeReport report;
  ssize_t n;
  do {
    n = ::read(read_end.get(), &report, sizeof(report));
  } while (n < 0 && errno == EINTR);
  int wstatus = 0;
  while (::waitpid(pid, &wstatus, 0) < 0 && errno == EINTR) {
  }
  if (n != static_cast<ssize_t>(sizeof(report))) {
    return MakeError(ErrorCode::kSetup,
                     WIFSIGNALED(wstatus)
                         ? "the probe child died of signal " + std::to_string(WTERMSIG(wstatus))
                         : "the probe child exited without a report");
  }
  return report;
}

// ---- the checks ----------------------------------------------------------------------------

Finding CheckKernel(const Host& host) {
  const std::string name = "Linux " + host.release + " (" + host.machine + ")";
  const auto version = KernelVersion(host.release);
  if (!version) return Warn(name + ": cannot tell the version", "run a Linux 5.13 or later kernel");
  if (*version < std::pair{5, 13}) {
    return Warn(name + ": older than 5.13, which Landlock needs (mount_setattr needs 5.12)",
                "upgrade to Linux 5.13 or later (6.7+ for Landlock TCP rules, 6.12+ for scoping)");
  }
  return Ok(name);
}

Finding CheckMaxUserNamespaces(const Host&) {
  const auto value = ReadSysctl("/proc/sys/user/max_user_namespaces");
  if (!value) {
    return Failed("/proc/sys/user/max_user_namespaces is missing: kernel without user namespaces",
                  "use a kernel built with CONFIG_USER_NS=y");
  }
  if (*value == 0) {
    return Failed("user.max_user_namespaces is 0: nobody may create a user namespace",
                  "sysctl -w user.max_user_namespaces=15000");
  }
  return Ok("user.max_user_namespaces = " + std::to_string(*value));
}

Finding CheckUnprivilegedUsernsClone(const Host& host) {
  const auto& value = host.unprivileged_userns_clone;
  if (!value) return Ok("absent (not a Debian-patched kernel): no restriction");
  if (*value != 0) return Ok("kernel.unprivileged_userns_clone = " + std::to_string(*value));
  if (host.cap_sys_admin) {
    return Ok(
        "kernel.unprivileged_userns_clone = 0, but this process has CAP_SYS_ADMIN, which "
        "is exempt");
  }
  return Failed(
      "kernel.unprivileged_userns_clone = 0: users without CAP_SYS_ADMIN cannot create "
      "user namespaces",
      "sysctl -w kernel.unprivileged_userns_clone=1");
}

// The AppArmor confinement of this process ("unconfined", or a profile name).
std::string AppArmorLabel() {
  auto label = ReadText("/proc/self/attr/apparmor/current");
  if (!label) label = ReadText("/proc/self/attr/current");
  if (!label) return "unconfined";
  if (const size_t mode = label->find(" ("); mode != std::string::npos) label->resize(mode);
  return *label;
}

std::string SelfPath() {
  std::string path(4096, '\0');
  const ssize_t n = ::readlink("/proc/self/exe", path.data(), path.size());
  if (n <= 0) return "/usr/local/bin/agentbox";
  path.resize(static_cast<size_t>(n));
  return path;
}

std::string AppArmorFix() {
  const std::string profile =
      "abi <abi/4.0>, profile agentbox " + SelfPath() + " flags=(unconfined) { userns, }";
  return "add /etc/apparmor.d/agentbox: '" + profile +
         "', or sysctl -w kernel.apparmor_restrict_unprivileged_userns=0";
}

Finding CheckAppArmorUserns(const Host& host) {
  if (!host.apparmor_restrict_userns) return Ok("absent (no Ubuntu AppArmor restriction)");
  const std::string value = "kernel.apparmor_restrict_unprivileged_userns = " +
                            std::to_string(*host.apparmor_restrict_userns);
  if (*host.apparmor_restrict_userns == 0) return Ok(value);
  if (host.cap_sys_admin) {
    return Ok(value + ", but this process has CAP_SYS_ADMIN, which is exempt");
  }
  const std::string label = AppArmorLabel();
  if (label != "unconfined") {
    return Ok(value + ", and agentbox runs under AppArmor profile '" + label +
              "', which must grant userns (the mount_setattr probe tries it)");
  }
  return Failed(value +
                    ": an unconfined program gets a user namespace without capabilities, so "
                    "the sandbox cannot mount",
                AppArmorFix());
}

Finding CheckUserNamespaceProbe(const Host& host) {
  const auto report = ProbeInChild([] {
    return ProbeReport{0, ::unshare(CLONE_NEWUSER) == 0 ? 0 : errno};
  });
  if (!report) return Failed("could not run the probe: " + report.error().Message(), "retry");
  const int err = report->err;
  if (err == 0) return Ok("unshare(CLONE_NEWUSER) works in a child");
  const std::string finding = "unshare(CLONE_NEWUSER) failed: " + ErrnoText(err);
  switch (err) {
    case ENOSPC:
      return Failed(finding + " (limit reached)", "sysctl -w user.max_user_namespaces=15000");
    case EINVAL:
      return Failed(finding, "use a kernel built with CONFIG_USER_NS=y");
    case EUSERS:
      return Failed(finding + " (nested 32 deep)", "run agentbox from a less nested namespace");
    case EPERM:
      if (!host.cap_sys_admin && host.unprivileged_userns_clone == 0) {
        return Failed(finding, "sysctl -w kernel.unprivileged_userns_clone=1");
      }
      if (host.under_seccomp) {
        return Failed(finding + " (agentbox already runs under a seccomp filter)",
                      "let the container runtime allow unshare/clone with CLONE_NEWUSER (e.g. "
                      "docker --security-opt seccomp=<profile allowing it>)");
      }
      return Failed(finding,
                    "an LSM or container policy forbids user namespaces here: allow "
                    "them for agentbox");
    default:
      return Failed(finding, "user namespaces must work for this user: see the checks above");
  }
}

// The sandbox's own use of mount_setattr: in a new user+mount namespace, make a tmpfs
// read-only, nosuid and nodev (mount.cc's SetAttr).
Finding CheckMountSetattr(const Host& host) {
  static constexpr const char* kSteps[] = {
      "unshare(CLONE_NEWUSER|CLONE_NEWNS)", "writing uid_map/gid_map",
      "mount(MS_REC|MS_PRIVATE) of /", "mount tmpfs on /tmp", "mount_setattr"};
  constexpr int kMountSetattrStep = 4;
  const IdMaps maps = IdMapsForSelf();
  const auto report = ProbeInChild([&maps] {
    if (::unshare(CLONE_NEWUSER | CLONE_NEWNS) != 0) return ProbeReport{0, errno};
    if (const int err = WriteIdMapsInChild(maps); err != 0) return ProbeReport{1, err};
    // Private first, so nothing below can propagate to the host's mounts.
    if (::mount(nullptr, "/", nullptr, MS_REC | MS_PRIVATE, nullptr) != 0) {
      return ProbeReport{2, errno};
    }
    if (::mount("tmpfs", "/tmp", "tmpfs", MS_NOSUID | MS_NODEV, "size=16k") != 0) {
      return ProbeReport{3, errno};
    }
    uapi::MountAttr attr{uapi::kMountAttrRdonly | uapi::kMountAttrNosuid | uapi::kMountAttrNodev, 0,
                         0, 0};
    if (uapi::MountSetattr(AT_FDCWD, "/tmp", uapi::kAtRecursive, &attr) != 0) {
      return ProbeReport{kMountSetattrStep, errno};
    }
    return ProbeReport{};
  });
  if (!report) return Failed("could not run the probe: " + report.error().Message(), "retry");
  if (report->err == 0) {
    return Ok("works: a tmpfs in a new user+mount namespace was made read-only, nosuid, nodev");
  }
  const std::string step = kSteps[report->step];
  const std::string finding = step + " failed: " + ErrnoText(report->err);
  if (report->step == 0) {
    // No namespace to try it in: at least tell whether the kernel has the syscall. An
    // invalid size makes a kernel that has it answer EINVAL without doing anything.
    const bool present =
        ::syscall(SYS_mount_setattr, -1, "", 0, nullptr, 0) == 0 || errno != ENOSYS;
    if (!present) {
      return Failed("the kernel has no mount_setattr, which the sandbox requires",
                    "upgrade to Linux 5.12 or later");
    }
    return Warn("the syscall exists but could not be tried: " + finding,
                "make user namespaces work (see user_namespace)");
  }
  if (report->step == kMountSetattrStep && report->err == ENOSYS) {
    return Failed("the kernel has no mount_setattr, which the sandbox requires",
                  "upgrade to Linux 5.12 or later (or allow mount_setattr in a container's "
                  "seccomp profile)");
  }
  if (report->err == EPERM && host.apparmor_restrict_userns.value_or(0) != 0 &&
      !host.cap_sys_admin) {
    return Failed(finding + " (AppArmor withholds capabilities in user namespaces)", AppArmorFix());
  }
  return Failed(finding,
                "mounts in a user namespace must work: in a container, allow mount, "
                "unshare and mount_setattr (seccomp) and user namespaces (LSM)");
}

Finding CheckLandlock(const Host&) {
  const int abi = LandlockAbi();
  if (abi == 0) {
    auto lsm = ReadText("/sys/kernel/security/lsm");
    const std::string list = lsm && !lsm->empty() ? *lsm + ",landlock" : "...,landlock";
    return Warn("Landlock unavailable: runs without Landlock; --require landlock will refuse",
                "boot with lsm=" + list + " (kernel 5.13+ with CONFIG_SECURITY_LANDLOCK=y)");
  }
  std::string finding = "ABI " + std::to_string(abi) + ": filesystem rules";
  finding += abi >= 4 ? ", TCP bind/connect rules" : "; no TCP rules (ABI 4, Linux 6.7)";
  finding += abi >= 6 ? ", abstract unix socket and signal scoping"
                      : "; no socket/signal scoping (ABI 6, Linux 6.12)";
  return Ok(finding);
}

Finding CheckSeccomp(const Host&) {
  const auto mode = ProcStatusField("Seccomp");
  if (!mode) {
    return Failed("/proc/self/status has no Seccomp field: kernel without seccomp",
                  "use a kernel built with CONFIG_SECCOMP_FILTER=y");
  }
  if (::prctl(PR_GET_SECCOMP, 0, 0, 0, 0) < 0) {
    return Failed("prctl(PR_GET_SECCOMP) failed: " + ErrnoText(errno),
                  "use a kernel built with CONFIG_SECCOMP_FILTER=y");
  }
  const auto program = BuildSeccompProgram(SeccompOptions{});
  if (!program) {
    return Failed("cannot compile the filter: " + program.error().Message(),
                  "install a working libseccomp (2.5 or later)");
  }
  std::string finding = "filter compiles to " + std::to_string(program->filter.size()) +
                        " BPF instructions denying " +
                        std::to_string(SeccompDeniedSyscalls().size()) + " syscalls";
  if (*mode != "0") finding += "; agentbox already runs under a filter (mode " + *mode + ")";
  return Ok(finding);
}

Finding CheckCgroups(const Host& host) {
  const CgroupSupport support = DetectCgroupSupport();
  std::string detail = support.detail;
  constexpr std::string_view kSuffix = "; no usable cgroup: limits fall back to rlimits";
  if (detail.ends_with(kSuffix)) detail.resize(detail.size() - kSuffix.size());
  // SEC-9 (supervisor.cc): RLIMIT_NPROC does not bind root, so a run by root without a
  // cgroup pids controller is refused rather than left without a process limit.
  if (!support.pids && host.uid == 0) {
    return Failed(
        "no usable cgroup pids controller, and RLIMIT_NPROC does not apply to root, so runs "
        "as root are refused: " +
            detail,
        "mount cgroup2 (mount -t cgroup2 none /sys/fs/cgroup) or a v1 pids hierarchy, or run "
        "agentbox as an ordinary user");
  }
  switch (support.version) {
    case CgroupVersion::kV2:
    case CgroupVersion::kV1:
      return Ok(std::string("cgroup ") + (support.version == CgroupVersion::kV2 ? "v2" : "v1") +
                " (pids " + (support.pids ? "yes" : "no") + ", memory " +
                (support.memory ? "yes" : "no") + "): " + detail);
    case CgroupVersion::kNone:
      break;
  }
  return Warn("no usable cgroup, limits fall back to rlimits: " + detail,
              "run agentbox as root, or give uid " + std::to_string(host.uid) +
                  " a writable cgroup v1 pids hierarchy; --require cgroup refuses until then");
}

Finding CheckLegacyTiocsti(const Host&) {
  const auto value = ReadSysctl("/proc/sys/dev/tty/legacy_tiocsti");
  if (!value) {
    return Ok(
        "absent (kernel before 6.2: TIOCSTI always works outside a sandbox; agentbox "
        "blocks it with seccomp and a new session)");
  }
  if (*value == 0) return Ok("dev.tty.legacy_tiocsti = 0");
  return Warn("dev.tty.legacy_tiocsti = " + std::to_string(*value) +
                  ": terminal injection possible for unsandboxed programs; agentbox blocks "
                  "TIOCSTI with seccomp and a new session",
              "sysctl -w dev.tty.legacy_tiocsti=0");
}

std::string DescribeEnforcement(const Enforcement& e) {
  std::vector<std::string> layers;
  auto add = [&layers](bool on, std::string name) {
    layers.push_back(on ? std::move(name) : "no " + name);
  };
  add(e.namespaces, "namespaces");
  add(e.network_namespace, "netns");
  add(e.pivot_root, "pivot_root");
  layers.push_back(e.landlock_abi > 0 ? "landlock ABI " + std::to_string(e.landlock_abi)
                                      : "no landlock");
  add(e.seccomp, "seccomp");
  add(e.capabilities_dropped, "caps dropped");
  add(e.no_new_privs, "no_new_privs");
  layers.push_back("limits " + e.limits);
  std::string out;
  for (const std::string& layer : layers) out += (out.empty() ? "" : ", ") + layer;
  return out;
}

// `agentbox run -- /bin/true`, built the same way: no grants, network blocked, 30 s, the
// request clamped to itself, PATH as run sets it, output captured.
Finding CheckSandbox(const Host&) {
  const std::string fix = "fix the failing checks above; `agentbox run -- /bin/true` reproduces it";
  const PathContext ctx = HostPathContext();
  const Request request;
  auto clamped = Clamp(Ceiling{request.doc}, request, ctx);
  if (!clamped) return Failed("clamp: " + clamped.error().Message(), fix);
  const SandboxRequest sandbox_request{
      {"/bin/true"}, {"PATH=/usr/bin:/bin"}, std::nullopt, ctx.cwd, {}, {}};
  auto plan = BuildSandboxPlan(clamped->policy, sandbox_request);
  if (!plan) return Failed("plan: " + plan.error().Message(), fix);
  RunOptions options;
  options.capture_output = true;
  auto result = RunSandbox(*plan, options);
  if (!result) return Failed("refused: " + result.error().Message(), fix);
  const std::string layers = DescribeEnforcement(result->enforcement);
  switch (result->outcome) {
    case Outcome::kExited:
      if (result->exit_code == 0) {
        return Ok("/bin/true ran and exited 0 in " + std::to_string(result->duration_ms) + " ms; " +
                  layers);
      }
      return Failed("/bin/true exited " + std::to_string(result->exit_code) + "; " + layers, fix);
    case Outcome::kSignaled:
      return Failed("/bin/true died of signal " + std::to_string(result->signal) + "; " + layers,
                    fix);
    case Outcome::kTimedOut:
      return Failed("/bin/true timed out after " + std::to_string(plan->timeout_ms) + " ms", fix);
    case Outcome::kSetupFailed:
    case Outcome::kExecFailed:
    case Outcome::kCancelled:
      return Failed(result->error.Message(), fix);
  }
  return Failed("unknown outcome", fix);
}

// The checks, in the order they are reported. The sandbox comes last: the ones before it
// explain why it fails, when it does.
struct CheckDef {
  const char* name;
  Finding (*run)(const Host&);
};
constexpr CheckDef kChecks[] = {
    {"kernel", CheckKernel},
    {"max_user_namespaces", CheckMaxUserNamespaces},
    {"unprivileged_userns_clone", CheckUnprivilegedUsernsClone},
    {"apparmor_userns", CheckAppArmorUserns},
    {"user_namespace", CheckUserNamespaceProbe},
    {"mount_setattr", CheckMountSetattr},
    {"landlock", CheckLandlock},
    {"seccomp", CheckSeccomp},
    {"cgroups", CheckCgroups},
    {"legacy_tiocsti", CheckLegacyTiocsti},
    {"sandbox", CheckSandbox},
};
constexpr std::string_view kSandboxCheck = "sandbox";

struct CheckResult {
  std::string name;
  Finding finding;
};

Host GatherHost() {
  Host host;
  host.uid = ::getuid();
  host.cap_sys_admin = HasEffectiveCapSysAdmin();
  utsname uts{};
  if (::uname(&uts) == 0) {
    host.release = uts.release;
    host.machine = uts.machine;
  }
  host.apparmor_restrict_userns =
      ReadSysctl("/proc/sys/kernel/apparmor_restrict_unprivileged_userns");
  host.unprivileged_userns_clone = ReadSysctl("/proc/sys/kernel/unprivileged_userns_clone");
  host.under_seccomp = ProcStatusField("Seccomp").value_or("0") != "0";
  return host;
}

const char* StatusName(CheckStatus status) {
  switch (status) {
    case CheckStatus::kOk:
      return "ok";
    case CheckStatus::kWarning:
      return "warning";
    case CheckStatus::kFail:
      return "fail";
  }
  return "?";
}

void PrintHuman(const std::vector<CheckResult>& results, bool ok) {
  const bool color = ::isatty(STDOUT_FILENO) == 1;
  const char* reset = color ? "\033[0m" : "";
  for (const CheckResult& r : results) {
    const char* tag = "[ ok ]";
    const char* paint = color ? "\033[32m" : "";
    switch (r.finding.status) {
      case CheckStatus::kOk:
        break;
      case CheckStatus::kWarning:
        tag = "[warn]";
        paint = color ? "\033[33m" : "";
        break;
      case CheckStatus::kFail:
        tag = "[FAIL]";
        paint = color ? "\033[31m" : "";
        break;
    }
    std::printf("%s%s%s %-25s %s\n", paint, tag, reset, r.name.c_str(), r.finding.finding.c_str());
    if (!r.finding.fix.empty()) std::printf("       fix: %s\n", r.finding.fix.c_str());
  }
  std::printf(ok ? "\nagentbox can run sandboxes here.\n"
                 : "\nagentbox cannot run sandboxes here: fix the FAIL lines above.\n");
}

void PrintJson(const std::vector<CheckResult>& results, bool ok) {
  nlohmann::json checks = nlohmann::json::array();
  for (const CheckResult& r : results) {
    nlohmann::json check = {
        {"name", r.name}, {"status", StatusName(r.finding.status)}, {"finding", r.finding.finding}};
    if (r.finding.status != CheckStatus::kOk) check["fix"] = r.finding.fix;
    checks.push_back(std::move(check));
  }
  std::printf("%s\n", DumpJson({{"ok", ok}, {"checks", std::move(checks)}}).c_str());
}

}  // namespace

int DoctorCommand(std::span<char* const> args) {
  Flags flags("agentbox doctor");
  bool json = false;
  flags.Switch("--json", &json, "print one JSON object");
  auto positional = flags.Parse(args, /*allow_positional=*/false);
  if (!positional) return Fail(positional.error());
  if (flags.HelpRequested()) {
    std::fputs(flags.Usage("[--json]").c_str(), stdout);
    std::fputs(
        "\nChecks what the sandbox needs from this kernel and runs /bin/true in one.\n"
        "Exit status 0 only when that sandbox ran and no check failed.\n",
        stdout);
    return 0;
  }

  const Host host = GatherHost();
  std::vector<CheckResult> results;
  bool ok = true;
  bool sandbox_ran = false;
  for (const CheckDef& check : kChecks) {
    results.push_back({check.name, check.run(host)});
    const CheckStatus status = results.back().finding.status;
    if (status == CheckStatus::kFail) ok = false;
    if (check.name == kSandboxCheck && status != CheckStatus::kFail) sandbox_ran = true;
  }
  ok = ok && sandbox_ran;
  if (json) {
    PrintJson(results, ok);
  } else {
    PrintHuman(results, ok);
  }
  return ok ? 0 : 1;
}

}  // namespace agentbox
