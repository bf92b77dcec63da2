// clone3(2) and pidfd calls for headers that lack them.
#pragma once

#include <sys/syscall.h>
#include <unistd.h>

#include <csignal>
#include <cstdint>

#ifndef SYS_clone3
#define SYS_clone3 435
#endif
#ifndef SYS_pidfd_send_signal
#define SYS_pidfd_send_signal 424
#endif

namespace agentbox::uapi {

struct CloneArgs {
  uint64_t flags;
  uint64_t pidfd;
  uint64_t child_tid;
  uint64_t parent_tid;
  uint64_t exit_signal;
  uint64_t stack;
  uint64_t stack_size;
  uint64_t tls;
  uint64_t set_tid;
  uint64_t set_tid_size;
  uint64_t cgroup;
};

inline constexpr uint64_t kClonePidfd = 0x00001000ULL;
inline constexpr uint64_t kCloneIntoCgroup = 0x200000000ULL;

inline long Clone3(CloneArgs* args) { return ::syscall(SYS_clone3, args, sizeof(*args)); }

inline int PidfdSendSignal(int pidfd, int sig) {
  return static_cast<int>(::syscall(SYS_pidfd_send_signal, pidfd, sig, nullptr, 0));
}

}  // namespace agentbox::uapi
