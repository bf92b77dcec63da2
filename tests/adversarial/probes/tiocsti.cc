// tiocsti: on fd 0, which must be a terminal, becomes a session leader (setsid), takes the
// terminal as controlling terminal (TIOCSCTTY), then pushes "X" into its input queue
// (TIOCSTI), as an escape into the caller's shell would. Prints
// "setsid=R sctty=R sti=R", each R being "OK" or an errno name.
//
// With the terminal as controlling terminal the kernel allows TIOCSTI (when
// dev.tty.legacy_tiocsti is 1), so EPERM for sti together with OK for sctty pins the denial
// on the sandbox's seccomp filter.
#include <sys/ioctl.h>
#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <cstring>

namespace {

const char* Outcome(int rc) { return rc < 0 ? strerrorname_np(errno) : "OK"; }

}  // namespace

int main() {
  const char* setsid_result = Outcome(setsid() < 0 ? -1 : 0);  // EPERM: already a leader
  const char* sctty_result = Outcome(ioctl(0, TIOCSCTTY, 0));
  const char byte = 'X';
  const char* sti_result = Outcome(ioctl(0, TIOCSTI, &byte));
  std::printf("setsid=%s sctty=%s sti=%s\n", setsid_result, sctty_result, sti_result);
  return 0;
}
