#include "linux/landlock.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <cerrno>
#include <cstddef>
#include <string>
#include <utility>

#include "base/log.h"
#include "linux/uapi/landlock.h"

namespace agentbox {
namespace {

using namespace uapi;  // NOLINT(google-build-using-namespace): kLandlock* constants only

constexpr uint64_t kAbi1Fs =
    kLandlockAccessFsExecute | kLandlockAccessFsWriteFile | kLandlockAccessFsReadFile |
    kLandlockAccessFsReadDir | kLandlockAccessFsRemoveDir | kLandlockAccessFsRemoveFile |
    kLandlockAccessFsMakeChar | kLandlockAccessFsMakeDir | kLandlockAccessFsMakeReg |
    kLandlockAccessFsMakeSock | kLandlockAccessFsMakeFifo | kLandlockAccessFsMakeBlock |
    kLandlockAccessFsMakeSym;

constexpr uint64_t kReadOnlyFs =
    kLandlockAccessFsExecute | kLandlockAccessFsReadFile | kLandlockAccessFsReadDir;

// The only rights the kernel accepts on a rule whose fd is not a directory.
constexpr uint64_t kFileFs = kLandlockAccessFsExecute | kLandlockAccessFsWriteFile |
                             kLandlockAccessFsReadFile | kLandlockAccessFsTruncate |
                             kLandlockAccessFsIoctlDev;

constexpr uint64_t kTcpNet = kLandlockAccessNetBindTcp | kLandlockAccessNetConnectTcp;
constexpr uint64_t kScopes = kLandlockScopeAbstractUnixSocket | kLandlockScopeSignal;

constexpr int kFirstNetAbi = 4;
constexpr int kFirstScopeAbi = 6;

// Every filesystem right the given ABI knows.
constexpr uint64_t HandledFsForAbi(int abi) {
  if (abi < 1) return 0;
  uint64_t fs = kAbi1Fs;
  if (abi >= 2) fs |= kLandlockAccessFsRefer;
  if (abi >= 3) fs |= kLandlockAccessFsTruncate;
  if (abi >= 5) fs |= kLandlockAccessFsIoctlDev;
  return fs;
}

constexpr uint64_t RuleAccess(uint64_t handled_fs, bool writable, bool is_directory) {
  uint64_t access = writable ? handled_fs : (handled_fs & kReadOnlyFs);
  if (!is_directory) access &= kFileFs;
  return access;
}

// The part of agentbox_landlock_ruleset_attr the ABI knows; the kernel wants no more.
constexpr size_t RulesetAttrSize(int abi) {
  if (abi >= kFirstScopeAbi) return sizeof(agentbox_landlock_ruleset_attr);
  if (abi >= kFirstNetAbi) return offsetof(agentbox_landlock_ruleset_attr, scoped);
  return offsetof(agentbox_landlock_ruleset_attr, handled_access_net);
}

std::string RuleContext(const std::string& path) { return "landlock rule for " + path; }

// Adds a rule for one host path: O_PATH fd, then a path-beneath rule on its inode.
Status AllowHostPath(int ruleset_fd, uint64_t handled_fs, const LandlockPathRule& rule) {
  UniqueFd fd(::open(rule.path.c_str(), O_PATH | O_CLOEXEC));
  if (!fd) return ErrnoError(ErrorCode::kSetup, "open", RuleContext(rule.path));
  struct stat st {};
  if (::fstat(fd.get(), &st) != 0) {
    return ErrnoError(ErrorCode::kSetup, "fstat", RuleContext(rule.path));
  }
  const int err =
      LandlockAllowFdInChild(ruleset_fd, fd.get(), handled_fs, rule.writable, S_ISDIR(st.st_mode));
  if (err != 0) return Error{ErrorCode::kSetup, err, "landlock_add_rule", RuleContext(rule.path)};
  return {};
}

Status AllowTcpConnect(int ruleset_fd, uint16_t port) {
  const agentbox_landlock_net_port_attr attr{.allowed_access = kLandlockAccessNetConnectTcp,
                                             .port = port};
  if (::syscall(__NR_landlock_add_rule, ruleset_fd, kLandlockRuleNetPort, &attr, 0U) != 0) {
    return ErrnoError(ErrorCode::kSetup, "landlock_add_rule",
                      "landlock TCP connect rule for port " + std::to_string(port));
  }
  return {};
}

}  // namespace

int LandlockAbi() {
  const long abi =
      ::syscall(__NR_landlock_create_ruleset, nullptr, size_t{0}, kLandlockCreateRulesetVersion);
  return abi > 0 ? static_cast<int>(abi) : 0;
}

Result<LandlockRuleset> BuildLandlockRuleset(const LandlockPlan& plan) {
  if (plan.abi <= 0) {
    return MakeError(ErrorCode::kUnavailable,
                     "landlock: not available on this kernel (not built in or disabled at boot)");
  }
  if (plan.restrict_tcp && plan.abi < kFirstNetAbi) {
    return MakeError(ErrorCode::kUnsupported,
                     "landlock: restricting TCP ports needs ABI >= 4, the kernel has ABI " +
                         std::to_string(plan.abi));
  }

  LandlockRuleset out;
  out.abi = plan.abi;
  out.handled_fs = HandledFsForAbi(plan.abi);
  // SEC-7: abstract unix sockets and signals are scoped to the sandbox's own domain
  // whenever the kernel can: the program cannot reach a host service listening on an
  // abstract socket (even with the host network shared) nor signal a process outside.
  out.scoped = plan.abi >= kFirstScopeAbi;

  agentbox_landlock_ruleset_attr attr{};
  attr.handled_access_fs = out.handled_fs;
  attr.handled_access_net = plan.restrict_tcp ? kTcpNet : 0;
  attr.scoped = out.scoped ? kScopes : 0;
  const long fd = ::syscall(__NR_landlock_create_ruleset, &attr, RulesetAttrSize(plan.abi), 0U);
  if (fd < 0) {
    return ErrnoError(ErrorCode::kSetup, "landlock_create_ruleset",
                      "landlock: creating the ruleset for ABI " + std::to_string(plan.abi));
  }
  out.fd = UniqueFd(static_cast<int>(fd));

  for (const LandlockPathRule& rule : plan.paths) {
    if (Status s = AllowHostPath(out.fd.get(), out.handled_fs, rule); !s) return s.error();
  }
  if (plan.restrict_tcp) {
    for (const uint16_t port : plan.tcp_connect_ports) {
      if (Status s = AllowTcpConnect(out.fd.get(), port); !s) return s.error();
    }
  }
  LogDebug("landlock: ABI ", out.abi, ", ", plan.paths.size(), " path rules, tcp ",
           plan.restrict_tcp ? "restricted" : "not handled", ", scoped ", out.scoped);
  return out;
}

int LandlockAllowFdInChild(int ruleset_fd, int path_fd, uint64_t handled_fs, bool writable,
                           bool is_directory) noexcept {
  const agentbox_landlock_path_beneath_attr attr{
      .allowed_access = RuleAccess(handled_fs, writable, is_directory), .parent_fd = path_fd};
  if (::syscall(__NR_landlock_add_rule, ruleset_fd, kLandlockRulePathBeneath, &attr, 0U) != 0) {
    return errno;
  }
  return 0;
}

int LandlockAllowListingInChild(int ruleset_fd, int dir_fd) noexcept {
  const agentbox_landlock_path_beneath_attr attr{.allowed_access = kLandlockAccessFsReadDir,
                                                 .parent_fd = dir_fd};
  if (::syscall(__NR_landlock_add_rule, ruleset_fd, kLandlockRulePathBeneath, &attr, 0U) != 0) {
    return errno;
  }
  return 0;
}

int LandlockRestrictSelfInChild(int ruleset_fd) noexcept {
  // SEC-7: Landlock enforces the same read / read-write grants as the mount view, on the
  // inodes themselves, so a mistake in the mount plan alone (a bind too wide, a mask
  // missing) does not expose a host path that no Landlock rule allows.
  if (::syscall(__NR_landlock_restrict_self, ruleset_fd, 0U) != 0) return errno;
  return 0;
}

}  // namespace agentbox
