// openat2(2) for headers that lack it (Linux 5.6+).
#pragma once

#include <sys/syscall.h>
#include <unistd.h>

#include <cstdint>

#ifndef SYS_openat2
#define SYS_openat2 437
#endif

namespace agentbox::uapi {

struct OpenHow {
  uint64_t flags;
  uint64_t mode;
  uint64_t resolve;
};
inline constexpr uint64_t kResolveNoSymlinks = 0x04;

inline int OpenAt2(int dirfd, const char* path, OpenHow* how) {
  return static_cast<int>(::syscall(SYS_openat2, dirfd, path, how, sizeof(*how)));
}

}  // namespace agentbox::uapi
