// Landlock: the kernel's unprivileged access control, the sandbox's second filesystem
// wall behind the mount namespace (DESIGN.md §3). Plan in the parent, apply in the child.
//
// The parent builds a ruleset holding the host paths: rules attach to inodes, so a rule
// made from an O_PATH fd on the host path still matches once that path is bind-mounted
// into the sandbox, at the same place or another. The child adds rules for the sandbox's
// own fresh mounts (/tmp, /dev nodes) by fd, then restricts itself:
//
//   // parent, before clone
//   LandlockPlan plan{.abi = LandlockAbi(), .paths = {{"/usr", false}, {"/work", true}}};
//   auto ruleset = BuildLandlockRuleset(plan);
//   if (!ruleset) return ruleset.error();
//   int rfd = ruleset->fd.get();
//   uint64_t handled = ruleset->handled_fs;
//   // child, after clone and after prctl(PR_SET_NO_NEW_PRIVS)
//   int tmp = open("/tmp", O_PATH | O_CLOEXEC | O_DIRECTORY);
//   if (int e = LandlockAllowFdInChild(rfd, tmp, handled, true, true)) report(e);
//   if (int e = LandlockRestrictSelfInChild(rfd)) report(e);   // one-way
//
// One-way: LandlockRestrictSelfInChild. Once it returns 0, the calling thread (and every
// process it later creates) stays restricted for good; nothing can lift it.
//
// Rights per ABI: every filesystem right the running ABI knows is handled (denied unless a
// rule allows it). A read-only rule allows execute, read_file, read_dir; a writable rule
// allows every handled right, masked to the rights a regular file can take when the rule is
// on a file. TCP bind/connect are handled only when the plan asks (restrict_tcp, ABI >= 4);
// abstract unix sockets and signals are scoped whenever the ABI has scopes (ABI >= 6).
// UDP and other protocols are not covered by Landlock; the network namespace handles them.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "base/fd.h"
#include "base/result.h"

namespace agentbox {

// The Landlock ABI the running kernel offers, probed with
// landlock_create_ruleset(NULL, 0, LANDLOCK_CREATE_RULESET_VERSION).
// 0 when Landlock is unavailable (not built in, disabled at boot, or ENOSYS/EOPNOTSUPP).
[[nodiscard]] int LandlockAbi();

struct LandlockPathRule {
  std::string path;  // host path, must exist; canonical (a symlink is followed)
  bool writable = false;
};

struct LandlockPlan {
  int abi = 0;                                // normally LandlockAbi()
  std::vector<LandlockPathRule> paths{};      // host paths, must exist
  bool restrict_tcp = false;                  // ABI >= 4 only
  std::vector<uint16_t> tcp_connect_ports{};  // allowed connect ports when restrict_tcp
};

struct LandlockRuleset {
  UniqueFd fd;  // the ruleset (O_CLOEXEC); keep it open until the child restricts
  int abi = 0;
  uint64_t handled_fs = 0;  // for child-side rules
  bool scoped = false;      // abstract unix sockets + signals scoped (ABI >= 6)
};

// Parent: creates the ruleset and adds a rule for every path of the plan.
// Errors: kUnavailable when plan.abi is 0; kUnsupported when restrict_tcp needs ABI >= 4
// and the plan's ABI is lower; kSetup naming the path and the failing syscall otherwise.
// With restrict_tcp, TCP bind is denied outright and connect is allowed only to the
// listed ports (an empty list: no TCP connect at all).
[[nodiscard]] Result<LandlockRuleset> BuildLandlockRuleset(const LandlockPlan& plan);

// Child: adds a rule for path_fd (an fd the child opened itself, preferably O_PATH).
// Read-only allows execute|read_file|read_dir; writable allows all of handled_fs.
// is_directory must be true only for a directory (a directory right on a file is EINVAL).
// Returns 0 or an errno. Raw syscalls only, no allocation: safe after clone.
[[nodiscard]] int LandlockAllowFdInChild(int ruleset_fd, int path_fd, uint64_t handled_fs,
                                         bool writable, bool is_directory) noexcept;

// Child: allows listing the directory dir_fd and those beneath it, nothing else (used for
// the sandbox root, whose names reveal nothing the mount view does not already show).
// Returns 0 or an errno. No allocation.
[[nodiscard]] int LandlockAllowListingInChild(int ruleset_fd, int dir_fd) noexcept;

// Child: restricts the calling thread to the ruleset. ONE-WAY. Precondition: no_new_privs
// is set (or the caller has CAP_SYS_ADMIN in its user namespace), else EPERM.
// Returns 0 or an errno. Raw syscall only, no allocation: safe after clone.
[[nodiscard]] int LandlockRestrictSelfInChild(int ruleset_fd) noexcept;

}  // namespace agentbox
