#include "linux/seccomp.h"

#include <sched.h>
#include <seccomp.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <sys/prctl.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <cerrno>
#include <cstdint>
#include <initializer_list>
#include <iterator>
#include <memory>
#include <string>

#include "base/fd.h"

namespace agentbox {
namespace {

constexpr uint32_t kDeny = SCMP_ACT_ERRNO(EPERM);

// SEC-8: seccomp deny list. These fail with EPERM whatever their arguments.
// clang-format off
constexpr const char* kDeniedSyscalls[] = {
    // SEC-8: the mount tree and namespaces are fixed before exec: no new ones, no way out.
    "mount", "umount2", "pivot_root", "chroot", "unshare", "setns",
    "move_mount", "open_tree", "fsopen", "fsconfig", "fsmount", "fspick", "mount_setattr",
    // SEC-8: large kernel attack surface that ordinary programs do not need.
    "bpf", "perf_event_open", "userfaultfd",
    "io_uring_setup", "io_uring_enter", "io_uring_register",
    // SEC-8: loading code into the kernel.
    "kexec_load", "kexec_file_load", "init_module", "finit_module", "delete_module",
    // SEC-8: kernel keyrings are not namespaced, so keys could cross the sandbox boundary.
    "keyctl", "add_key", "request_key",
    // SEC-8: file handles open by inode, bypassing the mount view and Landlock.
    "open_by_handle_at", "name_to_handle_at",
    // SEC-8: reading or steering another process's memory or file descriptors.
    "ptrace", "process_vm_readv", "process_vm_writev", "pidfd_getfd",
    // SEC-8: host-wide state: accounting, swap, power, kernel log, quotas, the tty, I/O ports,
    // clocks, filesystem-wide notification.
    "acct", "swapon", "swapoff", "reboot", "syslog", "quotactl", "quotactl_fd",
    "lookup_dcookie", "vhangup", "iopl", "ioperm",
    "clock_settime", "settimeofday", "adjtimex", "clock_adjtime", "fanotify_init",
};
// clang-format on

// What AddConditionalRules denies, for SeccompDeniedSyscalls; keep the two in step.
constexpr const char* kPartlyDenied[] = {
    "clone (namespace flags)",
    "clone3 (fails with ENOSYS, so libc falls back to clone)",
    "ioctl (TIOCSTI, TIOCLINUX)",
    "personality (all but 0 and the 0xffffffff query)",
    "socket (AF_PACKET; SOCK_RAW on AF_INET, AF_INET6)",
};

// int and unsigned int arguments: the kernel ignores the upper half of the register, so the
// filter must too, or setting a high bit would slip past an equality test.
constexpr uint64_t kLow32 = 0xffffffff;
constexpr uint64_t kSockTypeMask = 0xf;  // the kernel's SOCK_TYPE_MASK, below SOCK_CLOEXEC

// clone's flags are its first argument, except on s390 where the first two are swapped.
#if defined(__s390__)
constexpr unsigned kCloneFlagsArg = 1;
#else
constexpr unsigned kCloneFlagsArg = 0;
#endif

constexpr scmp_arg_cmp MaskedEq(unsigned arg, uint64_t mask, uint64_t value) {
  return scmp_arg_cmp{arg, SCMP_CMP_MASKED_EQ, mask, value};
}

Error LibseccompError(const char* call, int rc, const std::string& what) {
  return Error{ErrorCode::kSetup, -rc, call, "seccomp: " + what};
}

// One rule; the comparisons are ANDed, separate rules for one syscall are ORed. A name that
// is not a syscall on this architecture is skipped: there is nothing to deny.
Status AddRule(scmp_filter_ctx ctx, uint32_t action, const char* name,
               std::initializer_list<scmp_arg_cmp> cmps) {
  const int nr = seccomp_syscall_resolve_name(name);
  if (nr < 0) return {};  // __NR_SCMP_ERROR, or a pseudo-number for another arch's syscall
  const int rc =
      seccomp_rule_add_array(ctx, action, nr, static_cast<unsigned>(cmps.size()), cmps.begin());
  if (rc != 0) return LibseccompError("seccomp_rule_add", rc, std::string("deny ") + name);
  return {};
}

Status AddConditionalRules(scmp_filter_ctx ctx) {
  // SEC-8: clone may not create namespaces: one rule per flag, so any one of them denies.
  for (const int flag : {CLONE_NEWNS, CLONE_NEWUSER, CLONE_NEWPID, CLONE_NEWNET, CLONE_NEWIPC,
                         CLONE_NEWUTS, CLONE_NEWCGROUP, CLONE_NEWTIME}) {
    const auto bit = static_cast<uint64_t>(flag);
    if (Status s = AddRule(ctx, kDeny, "clone", {MaskedEq(kCloneFlagsArg, bit, bit)}); !s) return s;
  }
  // SEC-8: clone3 passes its flags in memory the filter cannot read; ENOSYS makes libc fall
  // back to clone, whose flags the rules above check.
  if (Status s = AddRule(ctx, SCMP_ACT_ERRNO(ENOSYS), "clone3", {}); !s) return s;

  // SEC-8: TIOCSTI and TIOCLINUX push input into a terminal that may belong to the host.
  for (const int request : {TIOCSTI, TIOCLINUX}) {
    const auto req = static_cast<uint64_t>(request);
    if (Status s = AddRule(ctx, kDeny, "ioctl", {MaskedEq(1, kLow32, req)}); !s) return s;
  }

  // SEC-8: personality can turn off ASLR (ADDR_NO_RANDOMIZE) or change the ABI; only 0 and
  // the 0xffffffff query pass. libseccomp takes one comparison per argument, so "the low 32
  // bits are neither all 0 nor all 1" is written as "some bit i is set and bit i+1 (mod 32)
  // is clear", which is the same set of values.
  for (unsigned i = 0; i < 32; ++i) {
    const uint64_t bit = uint64_t{1} << i;
    const uint64_t next = uint64_t{1} << ((i + 1) % 32);
    if (Status s = AddRule(ctx, kDeny, "personality", {MaskedEq(0, bit | next, bit)}); !s) {
      return s;
    }
  }

  // SEC-8: no packet sockets: link-layer access to the network, and a frequent source of
  // kernel bugs. SOCK_PACKET on AF_INET is the legacy spelling of AF_PACKET.
  if (Status s = AddRule(ctx, kDeny, "socket", {MaskedEq(0, kLow32, AF_PACKET)}); !s) return s;
  if (Status s = AddRule(ctx, kDeny, "socket",
                         {MaskedEq(0, kLow32, AF_INET), MaskedEq(1, kSockTypeMask, SOCK_PACKET)});
      !s) {
    return s;
  }
  // SEC-8: no raw IP sockets: forged packets past the proxy and the network namespace rules.
  for (const int domain : {AF_INET, AF_INET6}) {
    if (Status s = AddRule(ctx, kDeny, "socket",
                           {MaskedEq(0, kLow32, static_cast<uint64_t>(domain)),
                            MaskedEq(1, kSockTypeMask, SOCK_RAW)});
        !s) {
      return s;
    }
  }
  return {};
}

// libseccomp 2.5 exports only to a file descriptor: write to a memfd and read it back.
Result<SeccompProgram> ExportBpf(scmp_filter_ctx ctx) {
  UniqueFd mem(memfd_create("agentbox-seccomp", MFD_CLOEXEC));
  if (!mem) return ErrnoError(ErrorCode::kSetup, "memfd_create", "seccomp: export the filter");
  if (const int rc = seccomp_export_bpf(ctx, mem.get()); rc != 0) {
    return LibseccompError("seccomp_export_bpf", rc, "export the filter");
  }
  struct stat st {};
  if (fstat(mem.get(), &st) != 0) {
    return ErrnoError(ErrorCode::kSetup, "fstat", "seccomp: export the filter");
  }
  const auto bytes = static_cast<size_t>(st.st_size > 0 ? st.st_size : 0);
  if (bytes == 0 || bytes % sizeof(sock_filter) != 0 ||
      bytes / sizeof(sock_filter) > BPF_MAXINSNS) {
    return MakeError(ErrorCode::kSetup, "seccomp: the exported filter has an invalid size (" +
                                            std::to_string(bytes) + " bytes)");
  }
  SeccompProgram program;
  program.filter.resize(bytes / sizeof(sock_filter));
  auto* out = reinterpret_cast<char*>(program.filter.data());
  for (size_t done = 0; done < bytes;) {
    const ssize_t n = pread(mem.get(), out + done, bytes - done, static_cast<off_t>(done));
    if (n < 0 && errno == EINTR) continue;
    if (n < 0) return ErrnoError(ErrorCode::kSetup, "pread", "seccomp: read back the filter");
    if (n == 0) return MakeError(ErrorCode::kSetup, "seccomp: short read of the filter");
    done += static_cast<size_t>(n);
  }
  return program;
}

}  // namespace

sock_fprog SeccompProgram::Prog() const {
  // The kernel only reads the filter; sock_fprog just has no const member.
  return sock_fprog{static_cast<unsigned short>(filter.size()),
                    const_cast<sock_filter*>(filter.data())};
}

Result<SeccompProgram> BuildSeccompProgram([[maybe_unused]] const SeccompOptions& options) {
  // SEC-8: default ALLOW, so the deny list is what the sandbox gives up; EPERM on denial.
  std::unique_ptr<void, decltype(&seccomp_release)> ctx(seccomp_init(SCMP_ACT_ALLOW),
                                                        &seccomp_release);
  if (!ctx) return Error{ErrorCode::kSetup, 0, "seccomp_init", "seccomp: create the filter"};

  // SEC-8: seccomp_init adds only the native arch and we add no other, so a syscall through
  // another ABI (32-bit int 0x80, x32), which the rules would not match, kills the process.
  if (const int rc = seccomp_attr_set(ctx.get(), SCMP_FLTATR_ACT_BADARCH, SCMP_ACT_KILL_PROCESS);
      rc != 0) {
    return LibseccompError("seccomp_attr_set", rc, "kill foreign architectures");
  }
  // A binary tree of syscall numbers instead of a linear list: the kernel checks a filter at
  // load time once per syscall number (to cache the ones it always allows), so a shorter
  // path per number halves the sandbox's seccomp stage (~170 -> ~90 us), and each syscall
  // that is not cached walks a few comparisons instead of up to ~70.
  if (const int rc = seccomp_attr_set(ctx.get(), SCMP_FLTATR_CTL_OPTIMIZE, 2); rc != 0) {
    return LibseccompError("seccomp_attr_set", rc, "binary tree optimization");
  }
  for (const char* name : kDeniedSyscalls) {
    if (Status s = AddRule(ctx.get(), kDeny, name, {}); !s) return s.error();
  }
  if (Status s = AddConditionalRules(ctx.get()); !s) return s.error();
  return ExportBpf(ctx.get());
}

int InstallSeccompInChild(const sock_fprog& prog) noexcept {
  if (prog.len == 0 || prog.filter == nullptr) return EINVAL;
  // SEC-8: a filter without no_new_privs could make a setuid program fail in ways it does not
  // expect; refuse even where the kernel would accept (CAP_SYS_ADMIN in our user namespace).
  if (prctl(PR_GET_NO_NEW_PRIVS, 0UL, 0UL, 0UL, 0UL) != 1) return EACCES;
  if (syscall(SYS_seccomp, static_cast<unsigned long>(SECCOMP_SET_MODE_FILTER), 0UL, &prog) == 0) {
    return 0;
  }
  if (errno != ENOSYS) return errno;
  if (prctl(PR_SET_SECCOMP, static_cast<unsigned long>(SECCOMP_MODE_FILTER), &prog, 0UL, 0UL) ==
      0) {
    return 0;
  }
  return errno;
}

std::vector<std::string> SeccompDeniedSyscalls() {
  std::vector<std::string> names;
  for (const char* name : kDeniedSyscalls) {
    if (seccomp_syscall_resolve_name(name) >= 0) names.emplace_back(name);
  }
  names.insert(names.end(), std::begin(kPartlyDenied), std::end(kPartlyDenied));
  return names;
}

}  // namespace agentbox
