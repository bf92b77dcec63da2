// Mount API constants and syscalls that Debian 12's headers may lack.
#pragma once

#include <sys/syscall.h>
#include <unistd.h>

#include <cstdint>

#ifndef SYS_mount_setattr
#define SYS_mount_setattr 442
#endif
#ifndef SYS_open_tree
#define SYS_open_tree 428
#endif
#ifndef SYS_move_mount
#define SYS_move_mount 429
#endif

namespace agentbox::uapi {

inline constexpr uint64_t kMountAttrRdonly = 0x00000001;
inline constexpr uint64_t kMountAttrNosuid = 0x00000002;
inline constexpr uint64_t kMountAttrNodev = 0x00000004;
inline constexpr unsigned kAtRecursive = 0x8000;
inline constexpr unsigned kOpenTreeClone = 1;                 // OPEN_TREE_CLONE
inline constexpr unsigned kOpenTreeCloexec = 02000000;        // OPEN_TREE_CLOEXEC (O_CLOEXEC)
inline constexpr unsigned kAtEmptyPath = 0x1000;              // AT_EMPTY_PATH
inline constexpr unsigned kMoveMountFEmptyPath = 0x00000004;  // MOVE_MOUNT_F_EMPTY_PATH

struct MountAttr {
  uint64_t attr_set;
  uint64_t attr_clr;
  uint64_t propagation;
  uint64_t userns_fd;
};

inline long MountSetattr(int dfd, const char* path, unsigned flags, MountAttr* attr) {
  return ::syscall(SYS_mount_setattr, dfd, path, flags, attr, sizeof(*attr));
}

inline int OpenTree(int dfd, const char* path, unsigned flags) {
  return static_cast<int>(::syscall(SYS_open_tree, dfd, path, flags));
}

inline long MoveMount(int from_dfd, const char* from_path, int to_dfd, const char* to_path,
                      unsigned flags) {
  return ::syscall(SYS_move_mount, from_dfd, from_path, to_dfd, to_path, flags);
}

}  // namespace agentbox::uapi
