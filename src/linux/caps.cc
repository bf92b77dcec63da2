#include "linux/caps.h"

#include <linux/capability.h>
#include <linux/securebits.h>
#include <sys/prctl.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <cerrno>

namespace agentbox {

int DropCapabilitiesInChild() noexcept {
  // SEC-10: securebits first (needs CAP_SETPCAP, still held): a uid-0 sandbox (started by
  // root) must not regain capabilities through execve or setuid.
  constexpr unsigned long kBits =
      (1UL << SECURE_NOROOT) | (1UL << SECURE_NOROOT_LOCKED) | (1UL << SECURE_NO_SETUID_FIXUP) |
      (1UL << SECURE_NO_SETUID_FIXUP_LOCKED) | (1UL << SECURE_KEEP_CAPS_LOCKED) |
      (1UL << SECURE_NO_CAP_AMBIENT_RAISE) | (1UL << SECURE_NO_CAP_AMBIENT_RAISE_LOCKED);
  if (::prctl(PR_SET_SECUREBITS, kBits, 0, 0, 0) != 0) return errno;
  for (unsigned long cap = 0;; ++cap) {
    if (::prctl(PR_CAPBSET_DROP, cap, 0, 0, 0) != 0) {
      if (errno == EINVAL) break;  // past the last capability this kernel knows
      return errno;
    }
  }
  if (::prctl(PR_CAP_AMBIENT, PR_CAP_AMBIENT_CLEAR_ALL, 0, 0, 0) != 0) return errno;
  __user_cap_header_struct header{_LINUX_CAPABILITY_VERSION_3, 0};
  __user_cap_data_struct data[_LINUX_CAPABILITY_U32S_3] = {};
  if (::syscall(SYS_capset, &header, data) != 0) return errno;
  return 0;
}

}  // namespace agentbox
