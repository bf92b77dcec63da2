// Mount API constants and syscalls that Debian 12's headers may lack.
#pragma once

#include <sys/syscall.h>
#include <unistd.h>

#include <cstdint>

#ifndef SYS_mount_setattr
#define SYS_mount_setattr 442
#endif

namespace agentbox::uapi {

inline constexpr uint64_t kMountAttrRdonly = 0x00000001;
inline constexpr uint64_t kMountAttrNosuid = 0x00000002;
inline constexpr uint64_t kMountAttrNodev = 0x00000004;
inline constexpr unsigned kAtRecursive = 0x8000;

struct MountAttr {
  uint64_t attr_set;
  uint64_t attr_clr;
  uint64_t propagation;
  uint64_t userns_fd;
};

inline long MountSetattr(int dfd, const char* path, unsigned flags, MountAttr* attr) {
  return ::syscall(SYS_mount_setattr, dfd, path, flags, attr, sizeof(*attr));
}

}  // namespace agentbox::uapi
