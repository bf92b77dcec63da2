/* bench/floor.c: the namespace floor, a reference for bench/compare (not a sandbox).
 *
 * Does only what any sandbox built from Linux namespaces must: clone3 into new user, mount,
 * pid, net, ipc, uts and cgroup namespaces; map the caller's uid/gid to themselves; a tmpfs
 * root with /usr and /etc bound read-only, the host's top-level symlinks (bin -> usr/bin, ...),
 * /proc, a tmpfs /dev with /dev/null, a tmpfs /tmp; pivot_root; then fork + exec the program
 * and wait for it. No Landlock, seccomp, cgroup, capability drop, loopback or supervisor.
 *
 * usage: floor PROGRAM [ARG...]   exits with the program's status; 125 if a step fails. */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <linux/sched.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mount.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

static void die(const char *what) {
  fprintf(stderr, "floor: %s: %s\n", what, strerror(errno));
  _exit(125);
}

static void check(int ok, const char *what) {
  if (!ok) die(what);
}

static void write_file(const char *path, const char *text) {
  int fd = open(path, O_WRONLY | O_CLOEXEC);
  check(fd >= 0, path);
  check(write(fd, text, strlen(text)) == (ssize_t)strlen(text), path);
  check(close(fd) == 0, path);
}

static void bind_ro(const char *src, const char *dst) {
  check(mkdir(dst, 0755) == 0, dst);
  check(mount(src, dst, NULL, MS_BIND | MS_REC, NULL) == 0, src);
  check(mount(NULL, dst, NULL, MS_REMOUNT | MS_BIND | MS_RDONLY | MS_NOSUID | MS_NODEV, NULL) == 0,
        dst);
}

/* Waits for pid and returns its status as an exit code (128 + signal if killed). */
static int wait_status(pid_t pid) {
  int status;
  while (waitpid(pid, &status, 0) < 0)
    check(errno == EINTR, "waitpid");
  return WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
}

static int sandbox(const char *root, uid_t uid, gid_t gid, char **argv) {
  char map[64];
  write_file("/proc/self/setgroups", "deny");
  snprintf(map, sizeof map, "%u %u 1\n", (unsigned)uid, (unsigned)uid);
  write_file("/proc/self/uid_map", map);
  snprintf(map, sizeof map, "%u %u 1\n", (unsigned)gid, (unsigned)gid);
  write_file("/proc/self/gid_map", map);
  check(mount(NULL, "/", NULL, MS_REC | MS_PRIVATE, NULL) == 0, "make / rprivate");
  check(mount("tmpfs", root, "tmpfs", MS_NOSUID | MS_NODEV, "mode=0755") == 0, "tmpfs root");
  check(chdir(root) == 0, "chdir to the new root");
  bind_ro("/usr", "usr");
  bind_ro("/etc", "etc");
  static const char *const links[] = {"bin", "sbin", "lib", "lib32", "lib64", "libx32"};
  for (size_t i = 0; i < sizeof links / sizeof links[0]; i++) {
    char host[16], target[4096];
    snprintf(host, sizeof host, "/%s", links[i]);
    ssize_t n = readlink(host, target, sizeof target - 1);
    if (n < 0 && (errno == EINVAL || errno == ENOENT)) continue; /* not a symlink here */
    check(n >= 0, host);
    target[n] = '\0';
    check(symlink(target, links[i]) == 0, links[i]);
  }
  check(mkdir("proc", 0555) == 0, "mkdir proc");
  check(mount("proc", "proc", "proc", MS_NOSUID | MS_NODEV | MS_NOEXEC, NULL) == 0, "mount proc");
  check(mkdir("dev", 0755) == 0, "mkdir dev");
  check(mount("tmpfs", "dev", "tmpfs", MS_NOSUID | MS_NOEXEC, "mode=0755") == 0, "tmpfs /dev");
  int fd = open("dev/null", O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0666);
  check(fd >= 0 && close(fd) == 0, "create dev/null");
  check(mount("/dev/null", "dev/null", NULL, MS_BIND, NULL) == 0, "bind /dev/null");
  check(mkdir("tmp", 01777) == 0, "mkdir tmp");
  check(mount("tmpfs", "tmp", "tmpfs", MS_NOSUID | MS_NODEV, "mode=1777") == 0, "tmpfs /tmp");
  check(syscall(SYS_pivot_root, ".", ".") == 0, "pivot_root");
  check(umount2(".", MNT_DETACH) == 0, "detach the old root");
  check(chdir("/") == 0, "chdir /");
  pid_t pid = fork();
  check(pid >= 0, "fork");
  if (pid == 0) {
    execv(argv[0], argv);
    die(argv[0]);
  }
  return wait_status(pid);
}

int main(int argc, char **argv) {
  if (argc < 2) {
    fprintf(stderr, "usage: floor PROGRAM [ARG...]\n");
    return 125;
  }
  char root[] = "/tmp/floor.XXXXXX";
  check(mkdtemp(root) != NULL, "mkdtemp");
  uid_t uid = getuid();
  gid_t gid = getgid();
  struct clone_args args = {
      .flags = CLONE_NEWUSER | CLONE_NEWNS | CLONE_NEWPID | CLONE_NEWNET | CLONE_NEWIPC |
               CLONE_NEWUTS | CLONE_NEWCGROUP,
      .exit_signal = SIGCHLD,
  };
  long pid = syscall(SYS_clone3, &args, sizeof args);
  if (pid == 0) _exit(sandbox(root, uid, gid, argv + 1));
  int saved = errno;
  int status = pid > 0 ? wait_status((pid_t)pid) : 125;
  check(rmdir(root) == 0, "rmdir the temporary root");
  errno = saved;
  check(pid > 0, "clone3");
  return status;
}
