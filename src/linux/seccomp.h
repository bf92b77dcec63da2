// seccomp: the sandbox's syscall deny list (SEC-8), compiled with libseccomp in the parent
// and installed as raw BPF in the child.
//
//   auto program = BuildSeccompProgram({});              // parent, before clone
//   if (!program) return program.error();
//   int err = InstallSeccompInChild(program->Prog());    // child, last step before execve
//   // or EmbeddedSeccompProgram(): the same filter, compiled at build time
//
// The filter allows everything except the listed syscalls, which fail with EPERM (clone3
// fails with ENOSYS so libc falls back to clone, whose flags can be inspected). Only the
// native architecture is in the filter: a syscall from any other ABI (a 32-bit `int 0x80`,
// x32) kills the process.
//
// SEC-8: InstallSeccompInChild is one-way and is the last setup step of the sandbox's pid 1
// (which then only clones the program, reaps and relays signals), so the filter need not
// allow the sandbox's own setup syscalls (mount, pivot_root, unshare, ...).
#pragma once

#include <linux/filter.h>

#include <string>
#include <vector>

#include "base/result.h"

namespace agentbox {

struct SeccompOptions {
  bool allow_host_network = false;  // reserved; today the rules do not depend on it
};

struct SeccompProgram {
  std::vector<sock_filter> filter;  // raw BPF for the native architecture

  // A view for the kernel; valid while `filter` is alive and unchanged.
  [[nodiscard]] sock_fprog Prog() const;
};

// Parent only. Compiles the deny list. Errors: kSetup naming the libseccomp call.
[[nodiscard]] Result<SeccompProgram> BuildSeccompProgram(const SeccompOptions& options);

// The same program as BuildSeccompProgram({}), compiled when agentbox was built
// (linux/seccomp_gen.cc), so that a run does not compile it again.
[[nodiscard]] const SeccompProgram& EmbeddedSeccompProgram();

// Child only, one-way. Precondition: no_new_privs is set (returns EACCES otherwise, even
// when the caller holds CAP_SYS_ADMIN). Installs `prog` with seccomp(SECCOMP_SET_MODE_FILTER,
// 0), or prctl(PR_SET_SECCOMP) on kernels without seccomp(2). Async-signal-safe, no
// allocation. Returns 0 or an errno value.
[[nodiscard]] int InstallSeccompInChild(const sock_fprog& prog) noexcept;

// What the filter denies on this architecture, for `agentbox run --explain`: a syscall name,
// followed by " (condition)" when only some of its calls are denied, e.g. "mount",
// "ioctl (TIOCSTI, TIOCLINUX)".
[[nodiscard]] std::vector<std::string> SeccompDeniedSyscalls();

}  // namespace agentbox
