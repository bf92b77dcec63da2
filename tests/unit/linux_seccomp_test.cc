// SEC-8: the seccomp deny list. Installing a filter is one-way, so every test that installs
// one does it in a forked child, which reports through its exit status.
#include <fcntl.h>
#include <gtest/gtest.h>
#include <linux/netlink.h>
#include <netinet/in.h>
#include <sched.h>
#include <seccomp.h>
#include <sys/ioctl.h>
#include <sys/personality.h>
#include <sys/prctl.h>
#include <sys/ptrace.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <cstring>
#include <string>
#include <system_error>
#include <thread>

#include "linux/seccomp.h"

namespace agentbox {
namespace {

constexpr int kInstallFailed = 100;
constexpr unsigned long kHighBit = 1UL << 32;  // ignored by the kernel for int arguments

constexpr int kChildThrew = 101;

// Runs `body` in a forked child, which _exits with body's return value; returns the wait
// status, or -1 if fork or waitpid failed. The child never returns into the test framework.
template <typename F>
int RunInChild(F body) {
  std::fflush(nullptr);
  const pid_t pid = fork();
  if (pid == 0) {
    int code = kChildThrew;
    try {
      code = body();
    } catch (...) {
    }
    _exit(code);
  }
  int status = 0;
  if (pid < 0 || waitpid(pid, &status, 0) != pid) return -1;
  return status;
}

std::string Describe(int status) {
  if (status == -1) return "fork or waitpid failed";
  if (WIFEXITED(status)) return "exited with " + std::to_string(WEXITSTATUS(status));
  if (WIFSIGNALED(status)) return std::string("killed by ") + strsignal(WTERMSIG(status));
  return "status " + std::to_string(status);
}

bool KilledBySigsys(int status) {
  return status != -1 && WIFSIGNALED(status) && WTERMSIG(status) == SIGSYS;
}

// In the child: turns off core dumps (some tests end in SIGSYS), sets no_new_privs and
// installs the filter, or exits with kInstallFailed.
void InstallOrExit(const SeccompProgram& program) {
  const rlimit no_core{0, 0};
  if (setrlimit(RLIMIT_CORE, &no_core) != 0) {
    std::perror("setrlimit(RLIMIT_CORE)");
    _exit(kInstallFailed);
  }
  if (prctl(PR_SET_NO_NEW_PRIVS, 1UL, 0UL, 0UL, 0UL) != 0) {
    std::perror("prctl(PR_SET_NO_NEW_PRIVS)");
    _exit(kInstallFailed);
  }
  if (const int err = InstallSeccompInChild(program.Prog()); err != 0) {
    std::fprintf(stderr, "InstallSeccompInChild: %s\n", std::strerror(err));
    _exit(kInstallFailed);
  }
}

SeccompProgram BuildOrDie() {
  auto program = BuildSeccompProgram({});
  if (!program) {
    ADD_FAILURE() << program.error().Message();
    return {};
  }
  return std::move(*program);
}

// ioctl on a fresh pipe: the kernel says ENOTTY to terminal requests there, the filter EPERM.
long IoctlOnPipe(unsigned long request) {
  int p[2];
  if (pipe2(p, O_CLOEXEC) != 0) return -2;
  char c = 'x';
  const long r = syscall(SYS_ioctl, p[0], request, &c);
  const int saved = errno;
  close(p[0]);
  close(p[1]);
  errno = saved;
  return r;
}

long Socket(unsigned long domain, int type, int protocol) {
  const long fd = syscall(SYS_socket, domain, type, protocol);
  if (fd >= 0) close(static_cast<int>(fd));
  return fd;
}

// clone with one namespace flag; CLONE_THREAD without CLONE_SIGHAND makes the kernel refuse
// with EINVAL, so nothing is ever created, with or without the filter.
long CloneWith(int ns_flag) {
  return syscall(SYS_clone, static_cast<unsigned long>(ns_flag | CLONE_THREAD), 0UL, 0UL, 0UL, 0UL);
}

const char* const kBad = reinterpret_cast<const char*>(1);  // faults if the kernel reads it

struct DeniedProbe {
  const char* what;
  long (*call)();
  int filter_errno;     // what the filter answers
  bool kernel_differs;  // without the filter, the kernel never answers filter_errno here
};

const DeniedProbe kDeniedProbes[] = {
    {"unshare(CLONE_NEWUSER)", [] { return syscall(SYS_unshare, CLONE_NEWUSER); }, EPERM, false},
    {"mount(bad pointers)", [] { return syscall(SYS_mount, kBad, kBad, kBad, 0UL, nullptr); },
     EPERM, true},
    {"umount2", [] { return syscall(SYS_umount2, kBad, 0); }, EPERM, false},
    {"chroot(bad pointer)", [] { return syscall(SYS_chroot, kBad); }, EPERM, true},
    {"setns(-1, 0)", [] { return syscall(SYS_setns, -1, 0); }, EPERM, true},
    {"clone(CLONE_NEWNS)", [] { return CloneWith(CLONE_NEWNS); }, EPERM, true},
    {"clone(CLONE_NEWUSER)", [] { return CloneWith(CLONE_NEWUSER); }, EPERM, true},
    {"clone(CLONE_NEWPID)", [] { return CloneWith(CLONE_NEWPID); }, EPERM, true},
    {"clone(CLONE_NEWNET)", [] { return CloneWith(CLONE_NEWNET); }, EPERM, true},
    {"clone(CLONE_NEWIPC)", [] { return CloneWith(CLONE_NEWIPC); }, EPERM, true},
    {"clone(CLONE_NEWUTS)", [] { return CloneWith(CLONE_NEWUTS); }, EPERM, true},
    {"clone(CLONE_NEWCGROUP)", [] { return CloneWith(CLONE_NEWCGROUP); }, EPERM, true},
    {"clone(CLONE_NEWTIME)", [] { return CloneWith(CLONE_NEWTIME); }, EPERM, true},
    {"clone3(NULL, 0)", [] { return syscall(SYS_clone3, nullptr, 0UL); }, ENOSYS, true},
    {"keyctl(invalid operation)", [] { return syscall(SYS_keyctl, 0x7fff, 0, 0, 0, 0); }, EPERM,
     true},
    {"add_key(bad pointers)", [] { return syscall(SYS_add_key, kBad, kBad, nullptr, 0, 0); }, EPERM,
     true},
    {"request_key(bad pointers)", [] { return syscall(SYS_request_key, kBad, kBad, nullptr, 0); },
     EPERM, true},
    {"io_uring_setup(1, params)",
     [] {
       alignas(8) unsigned char params[120] = {};
       return syscall(SYS_io_uring_setup, 1, params);
     },
     EPERM, false},
    {"ptrace(PTRACE_TRACEME)", [] { return ptrace(PTRACE_TRACEME, 0, nullptr, nullptr); }, EPERM,
     false},
    {"process_vm_readv(self, nothing)",
     [] { return syscall(SYS_process_vm_readv, getpid(), nullptr, 0, nullptr, 0, 0); }, EPERM,
     true},
    {"bpf(BPF_MAP_CREATE, NULL, 0)", [] { return syscall(SYS_bpf, 0, nullptr, 0); }, EPERM, false},
    {"perf_event_open(NULL)", [] { return syscall(SYS_perf_event_open, nullptr, 0, -1, -1, 0); },
     EPERM, true},
    {"userfaultfd(0)", [] { return syscall(SYS_userfaultfd, 0); }, EPERM, false},
    {"open_by_handle_at(-1, NULL, 0)",
     [] { return syscall(SYS_open_by_handle_at, -1, nullptr, 0); }, EPERM, false},
    {"init_module(NULL)", [] { return syscall(SYS_init_module, nullptr, 0, ""); }, EPERM, false},
    {"reboot(bad magic)", [] { return syscall(SYS_reboot, 0, 0, 0, nullptr); }, EPERM, false},
    {"socket(AF_PACKET, SOCK_RAW)", [] { return Socket(AF_PACKET, SOCK_RAW, 0); }, EPERM, false},
    {"socket(AF_PACKET with a high bit set)",
     [] { return Socket(kHighBit | AF_PACKET, SOCK_RAW, 0); }, EPERM, false},
    {"socket(AF_INET, SOCK_RAW | SOCK_CLOEXEC)",
     [] { return Socket(AF_INET, SOCK_RAW | SOCK_CLOEXEC, IPPROTO_ICMP); }, EPERM, false},
    {"socket(AF_INET6, SOCK_RAW)", [] { return Socket(AF_INET6, SOCK_RAW, IPPROTO_ICMPV6); }, EPERM,
     false},
    {"socket(AF_INET, SOCK_PACKET)", [] { return Socket(AF_INET, SOCK_PACKET, 0); }, EPERM, false},
    {"ioctl(pipe, TIOCSTI)", [] { return IoctlOnPipe(TIOCSTI); }, EPERM, true},
    {"ioctl(pipe, TIOCLINUX)", [] { return IoctlOnPipe(TIOCLINUX); }, EPERM, true},
    {"ioctl(pipe, TIOCSTI with a high bit set)", [] { return IoctlOnPipe(kHighBit | TIOCSTI); },
     EPERM, true},
    {"personality(PER_LINUX32)", [] { return syscall(SYS_personality, PER_LINUX32); }, EPERM, true},
    {"personality(ADDR_NO_RANDOMIZE)", [] { return syscall(SYS_personality, ADDR_NO_RANDOMIZE); },
     EPERM, true},
};

// Runs the probes (all, or only those where the kernel's own answer differs) and returns how
// many did not fail with the filter's errno (want_filter) or did (!want_filter).
int RunDeniedProbes(bool want_filter) {
  int failures = 0;
  for (const DeniedProbe& probe : kDeniedProbes) {
    if (!want_filter && !probe.kernel_differs) continue;
    errno = 0;
    const long r = probe.call();
    const int err = errno;
    const bool filtered = r == -1 && err == probe.filter_errno;
    if (filtered != want_filter) {
      std::fprintf(stderr, "%s: returned %ld, errno %s\n", probe.what, r, std::strerror(err));
      ++failures;
    }
  }
  return std::min(failures, 99);
}

struct AllowedProbe {
  const char* what;
  bool (*ok)();
};

const AllowedProbe kAllowedProbes[] = {
    {"getpid", [] { return getpid() > 0; }},
    {"fork and wait",
     [] {
       const pid_t pid = fork();
       if (pid == 0) _exit(7);
       int status = 0;
       return pid > 0 && waitpid(pid, &status, 0) == pid && WIFEXITED(status) &&
              WEXITSTATUS(status) == 7;
     }},
    {"std::thread (clone3 falls back to clone)",
     [] {
       bool ran = false;
       try {
         std::thread([&ran] { ran = true; }).join();
       } catch (const std::system_error& e) {
         errno = e.code().value();
       }
       return ran;
     }},
    {"socket(AF_INET, SOCK_STREAM)",
     [] { return Socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0) >= 0; }},
    {"socket(AF_INET, SOCK_DGRAM)",
     [] { return Socket(AF_INET, SOCK_DGRAM | SOCK_CLOEXEC, 0) >= 0; }},
    {"socket(AF_UNIX, SOCK_STREAM)",
     [] { return Socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0) >= 0; }},
    {"socket(AF_NETLINK, SOCK_RAW)",
     [] { return Socket(AF_NETLINK, SOCK_RAW | SOCK_CLOEXEC, NETLINK_ROUTE) >= 0; }},
    {"ioctl(pipe, FIONREAD)", [] { return IoctlOnPipe(FIONREAD) == 0; }},
    {"personality(0xffffffff)", [] { return syscall(SYS_personality, 0xffffffffUL) != -1; }},
    {"personality(PER_LINUX)", [] { return syscall(SYS_personality, PER_LINUX) != -1; }},
};

TEST(BuildSeccompProgram, ProducesANativeOnlyFilter) {
  auto program = BuildSeccompProgram({});
  ASSERT_TRUE(program.ok()) << program.error().Message();
  const auto& filter = program->filter;
  ASSERT_GE(filter.size(), 2U);
  EXPECT_LE(filter.size(), static_cast<size_t>(BPF_MAXINSNS));
  // The first thing the filter does is compare the architecture with the native one.
  EXPECT_EQ(filter[0].code, static_cast<uint16_t>(BPF_LD | BPF_W | BPF_ABS));
  EXPECT_EQ(filter[0].k, offsetof(seccomp_data, arch));
  EXPECT_EQ(filter[1].code, static_cast<uint16_t>(BPF_JMP | BPF_JEQ | BPF_K));
  EXPECT_EQ(filter[1].k, seccomp_arch_native());

  const sock_fprog prog = program->Prog();
  EXPECT_EQ(prog.len, filter.size());
  EXPECT_EQ(prog.filter, filter.data());
}

// The filter a run installs was compiled at build time; it must be the one this code builds.
TEST(BuildSeccompProgram, EmbeddedProgramIsTheSameFilter) {
  auto program = BuildSeccompProgram({});
  ASSERT_TRUE(program.ok()) << program.error().Message();
  const std::vector<sock_filter>& embedded = EmbeddedSeccompProgram().filter;
  ASSERT_EQ(embedded.size(), program->filter.size());
  for (size_t i = 0; i < embedded.size(); ++i) {
    EXPECT_EQ(embedded[i].code, program->filter[i].code) << i;
    EXPECT_EQ(embedded[i].jt, program->filter[i].jt) << i;
    EXPECT_EQ(embedded[i].jf, program->filter[i].jf) << i;
    EXPECT_EQ(embedded[i].k, program->filter[i].k) << i;
  }
}

TEST(InstallSeccompInChild, RejectsAnEmptyProgram) {
  EXPECT_EQ(InstallSeccompInChild(SeccompProgram{}.Prog()), EINVAL);
}

TEST(InstallSeccompInChild, RefusesWithoutNoNewPrivs) {
  if (prctl(PR_GET_NO_NEW_PRIVS, 0UL, 0UL, 0UL, 0UL) == 1) {
    GTEST_SKIP() << "the test process already has no_new_privs";
  }
  const SeccompProgram program = BuildOrDie();
  const int status = RunInChild([&] {
    if (InstallSeccompInChild(program.Prog()) != EACCES) return 1;
    return prctl(PR_GET_SECCOMP, 0UL, 0UL, 0UL, 0UL) == 0 ? 0 : 2;
  });
  EXPECT_TRUE(WIFEXITED(status) && WEXITSTATUS(status) == 0) << Describe(status);
}

TEST(SeccompFilter, DeniesTheListedCalls) {
  const SeccompProgram program = BuildOrDie();
  const int status = RunInChild([&] {
    InstallOrExit(program);
    return RunDeniedProbes(/*want_filter=*/true);
  });
  EXPECT_TRUE(WIFEXITED(status) && WEXITSTATUS(status) == 0)
      << Describe(status) << " (the exit code counts the probes not denied; see stderr)";
}

// Pins the errno on the filter: without it, the kernel answers these probes differently.
TEST(SeccompFilter, KernelAnswersDifferentlyWithoutTheFilter) {
  const int status = RunInChild([] { return RunDeniedProbes(/*want_filter=*/false); });
  EXPECT_TRUE(WIFEXITED(status) && WEXITSTATUS(status) == 0)
      << Describe(status) << " (the exit code counts the probes answered as the filter would)";
}

TEST(SeccompFilter, AllowsOrdinaryCalls) {
  const SeccompProgram program = BuildOrDie();
  const int status = RunInChild([&] {
    InstallOrExit(program);
    int failures = 0;
    for (const AllowedProbe& probe : kAllowedProbes) {
      errno = 0;
      if (!probe.ok()) {
        std::fprintf(stderr, "%s failed: %s\n", probe.what, std::strerror(errno));
        ++failures;
      }
    }
    return failures;
  });
  EXPECT_TRUE(WIFEXITED(status) && WEXITSTATUS(status) == 0)
      << Describe(status) << " (the exit code counts the calls that failed; see stderr)";
}

TEST(SeccompDeniedSyscalls, NamesTheDeniedCalls) {
  const auto names = SeccompDeniedSyscalls();
  const auto has = [&](const char* name) {
    return std::find(names.begin(), names.end(), name) != names.end();
  };
  EXPECT_TRUE(has("mount"));
  EXPECT_TRUE(has("ptrace"));
  EXPECT_TRUE(has("io_uring_setup"));
  EXPECT_FALSE(has("kcmp"));
  EXPECT_FALSE(has("clone"));  // only listed with its condition
}

#if defined(__x86_64__)
// getpid through the 32-bit entry point (i386 __NR_getpid is 20). The filter sees
// AUDIT_ARCH_I386, which is not in it.
long Int80Getpid() {
  long ret = 20;
  asm volatile("int $0x80" : "+a"(ret) : : "r8", "r9", "r10", "r11", "memory", "cc");
  return ret;
}

constexpr long kX32SyscallBit = 0x40000000;  // __X32_SYSCALL_BIT

TEST(SeccompFilter, KillsA32BitSyscall) {
  const SeccompProgram program = BuildOrDie();
  const int status = RunInChild([&] {
    InstallOrExit(program);
    Int80Getpid();
    return 0;
  });
  EXPECT_TRUE(KilledBySigsys(status)) << Describe(status);
}

TEST(SeccompFilter, A32BitSyscallWithoutTheFilterIsNotSigsys) {
  const int status = RunInChild([] {
    Int80Getpid();
    return 0;
  });
  ASSERT_NE(status, -1);
  EXPECT_FALSE(KilledBySigsys(status)) << Describe(status);
}

TEST(SeccompFilter, KillsAnX32Syscall) {
  const SeccompProgram program = BuildOrDie();
  const int status = RunInChild([&] {
    InstallOrExit(program);
    syscall(kX32SyscallBit | SYS_getpid);
    return 0;
  });
  EXPECT_TRUE(KilledBySigsys(status)) << Describe(status);
}

TEST(SeccompFilter, AnX32SyscallWithoutTheFilterIsNotSigsys) {
  const int status = RunInChild([] {
    syscall(kX32SyscallBit | SYS_getpid);
    return 0;
  });
  ASSERT_NE(status, -1);
  EXPECT_FALSE(KilledBySigsys(status)) << Describe(status);
}
#endif  // __x86_64__

}  // namespace
}  // namespace agentbox
