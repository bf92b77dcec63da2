// sysprobe CALL: makes one system call the sandbox's seccomp filter denies and prints the
// outcome: "OK" if the call succeeded, else the errno's name ("EPERM", "EFAULT", ...).
//
// The arguments are chosen so that the kernel itself would succeed or fail with an errno
// other than EPERM, whoever the caller is; so EPERM inside the sandbox pins the denial on
// the filter, and the same probe run outside the sandbox is the control:
//
//   CALL              kernel without the filter       sandbox
//   unshare-user      OK (a new user namespace)       EPERM
//   ptrace-traceme    OK                              EPERM
//   io-uring-setup    EFAULT (params is NULL)         EPERM
//   keyctl            EOPNOTSUPP (no operation 9999)  EPERM
//   mount             EFAULT (fstype is a bad pointer) EPERM
//   bpf               EINVAL (no command 9999)        EPERM
#include <sched.h>
#include <sys/ptrace.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <cstring>

namespace {

long Call(const char* name) {
  if (std::strcmp(name, "unshare-user") == 0) return syscall(SYS_unshare, CLONE_NEWUSER);
  if (std::strcmp(name, "ptrace-traceme") == 0) return ptrace(PTRACE_TRACEME, 0, nullptr, nullptr);
  if (std::strcmp(name, "io-uring-setup") == 0) return syscall(SYS_io_uring_setup, 1, nullptr);
  if (std::strcmp(name, "keyctl") == 0) return syscall(SYS_keyctl, 9999, 0, 0, 0, 0);
  if (std::strcmp(name, "mount") == 0) {
    const char* bad_pointer = reinterpret_cast<const char*>(1);
    return syscall(SYS_mount, "none", "/", bad_pointer, 0UL, nullptr);
  }
  if (std::strcmp(name, "bpf") == 0) return syscall(SYS_bpf, 9999, nullptr, 0);
  std::fprintf(stderr, "sysprobe: unknown call %s\n", name);
  _exit(2);
}

}  // namespace

int main(int argc, char** argv) {
  if (argc != 2) {
    std::fprintf(stderr, "usage: sysprobe CALL\n");
    return 2;
  }
  errno = 0;
  const long rc = Call(argv[1]);
  if (rc < 0) {
    std::printf("%s\n", strerrorname_np(errno));
  } else {
    std::printf("OK\n");
  }
  return 0;
}
