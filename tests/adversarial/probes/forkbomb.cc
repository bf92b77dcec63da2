// forkbomb MAX: forks children that stay alive until this process exits, until fork fails
// or MAX children exist. Prints "forked=N error=E", E being the failing fork's errno name
// or "none" when MAX was reached, then exits; the children see EOF on a pipe and exit too,
// so the probe leaves nothing behind even outside a sandbox.
#include <sys/types.h>
#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <cstdlib>
#include <cstring>

int main(int argc, char** argv) {
  if (argc != 2) {
    std::fprintf(stderr, "usage: forkbomb MAX\n");
    return 2;
  }
  const long max = std::atol(argv[1]);
  int hold[2];
  if (pipe(hold) != 0) return 2;
  long forked = 0;
  const char* error = "none";
  while (forked < max) {
    const pid_t pid = fork();
    if (pid < 0) {
      error = strerrorname_np(errno);
      break;
    }
    if (pid == 0) {
      close(hold[1]);
      char c;
      while (read(hold[0], &c, 1) < 0 && errno == EINTR) {
      }
      _exit(0);
    }
    ++forked;
  }
  std::printf("forked=%ld error=%s\n", forked, error);
  return 0;
}
