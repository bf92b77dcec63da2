#include "linux/mount.h"

#include <fcntl.h>
#include <sys/mount.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <cerrno>

#include "linux/child_util.h"
#include "linux/uapi/mount.h"
#include "linux/uapi/openat2.h"

namespace agentbox {
namespace {

// The host directory over which the new root is assembled before pivot_root. Its own
// contents are never used: every host source is opened (by fd) before it is covered.
constexpr const char kStaging[] = "/tmp";

bool NeedsSource(MountKind kind) {
  switch (kind) {
    case MountKind::kBindReadOnly:
    case MountKind::kBindReadWrite:
    case MountKind::kMaskFile:
    case MountKind::kDevNode:
      return true;
    case MountKind::kMaskDirectory:
    case MountKind::kTmpfs:
    case MountKind::kProc:
    case MountKind::kDevpts:
    case MountKind::kSymlink:
    case MountKind::kReadOnlyRemount:
      return false;
  }
  return false;
}

int SetAttr(const char* target, uint64_t attrs, bool recursive) {
  uapi::MountAttr attr{attrs, 0, 0, 0};
  if (uapi::MountSetattr(AT_FDCWD, target, recursive ? uapi::kAtRecursive : 0, &attr) != 0) {
    return errno;
  }
  return 0;
}

// Creates what the op mounts onto. Targets inside a bind already exist on the host (the
// plan only lists existing paths there), so nothing is ever created on the host.
int MakeMountPoint(const MountOp& op, const char* target) {
  if (op.kind == MountKind::kReadOnlyRemount) return 0;
  if (op.kind == MountKind::kSymlink) {
    child::PathBuf parent;
    if (!parent.Append(target)) return ENAMETOOLONG;
    size_t slash = parent.size();
    while (slash > 1 && parent.c_str()[slash - 1] != '/') --slash;
    parent.Truncate(slash > 1 ? slash - 1 : 1);
    return child::MakeDirs(parent.c_str(), 0755);
  }
  return op.directory ? child::MakeDirs(target, 0755) : child::MakeFile(target);
}

// SEC-5: a bind is a clone of the fd opened without following any symlink (open_tree on
// the fd itself), so a path swapped for a link after the plan was checked cannot redirect
// it. Its flags are set while it is still detached, then it is attached at `target`.
int BindFd(int source_fd, const char* target, bool recursive, uint64_t attrs) {
  const unsigned rec = recursive ? uapi::kAtRecursive : 0;
  const int tree = uapi::OpenTree(
      source_fd, "", uapi::kOpenTreeClone | uapi::kOpenTreeCloexec | uapi::kAtEmptyPath | rec);
  if (tree < 0) return errno;
  uapi::MountAttr attr{attrs, 0, 0, 0};
  int err = 0;
  if (uapi::MountSetattr(tree, "", uapi::kAtEmptyPath | rec, &attr) != 0 ||
      uapi::MoveMount(tree, "", AT_FDCWD, target, uapi::kMoveMountFEmptyPath) != 0) {
    err = errno;
  }
  ::close(tree);
  return err;
}

int Perform(const MountOp& op, int source_fd, const char* target) {
  constexpr unsigned long kNoSuidDev = MS_NOSUID | MS_NODEV;
  if (NeedsSource(op.kind) && source_fd < 0) return EBADF;
  if (const int err = MakeMountPoint(op, target); err != 0) return err;
  switch (op.kind) {
    case MountKind::kBindReadOnly:
    case MountKind::kBindReadWrite:
    case MountKind::kMaskFile: {
      const bool ro = op.kind != MountKind::kBindReadWrite;
      // SEC-6: read-only applies to every mount beneath the bind too (recursive), so a
      // submount of a read-only grant is not writable.
      return BindFd(
          source_fd, target, /*recursive=*/true,
          (ro ? uapi::kMountAttrRdonly : 0) | uapi::kMountAttrNosuid | uapi::kMountAttrNodev);
    }
    case MountKind::kDevNode:
      return BindFd(source_fd, target, /*recursive=*/false, uapi::kMountAttrNosuid);
    case MountKind::kMaskDirectory:
      if (::mount("tmpfs", target, "tmpfs", MS_RDONLY | kNoSuidDev | MS_NOEXEC, "mode=0555") != 0) {
        return errno;
      }
      return 0;
    case MountKind::kTmpfs:
      if (::mount("tmpfs", target, "tmpfs", kNoSuidDev, op.source.c_str()) != 0) return errno;
      return 0;
    case MountKind::kProc:
      if (::mount("proc", target, "proc", kNoSuidDev | MS_NOEXEC, nullptr) != 0) return errno;
      return 0;
    case MountKind::kDevpts:
      if (::mount("devpts", target, "devpts", MS_NOSUID | MS_NOEXEC,
                  "newinstance,ptmxmode=0666,mode=620") != 0) {
        return errno;
      }
      return 0;
    case MountKind::kSymlink:
      if (::symlink(op.source.c_str(), target) != 0 && errno != EEXIST) return errno;
      return 0;
    case MountKind::kReadOnlyRemount:
      return SetAttr(target, uapi::kMountAttrRdonly | uapi::kMountAttrNosuid, false);
  }
  return EINVAL;
}

}  // namespace

const char* MountKindName(MountKind kind) {
  switch (kind) {
    case MountKind::kBindReadOnly:
      return "bind-ro";
    case MountKind::kBindReadWrite:
      return "bind-rw";
    case MountKind::kMaskDirectory:
      return "mask-dir";
    case MountKind::kMaskFile:
      return "mask-file";
    case MountKind::kTmpfs:
      return "tmpfs";
    case MountKind::kProc:
      return "proc";
    case MountKind::kDevpts:
      return "devpts";
    case MountKind::kDevNode:
      return "dev";
    case MountKind::kSymlink:
      return "symlink";
    case MountKind::kReadOnlyRemount:
      return "remount-ro";
  }
  return "?";
}

MountFailure ApplyMountPlanInChild(MountPlan& plan) noexcept {
  // Nothing we mount may propagate back to the host.
  if (::mount(nullptr, "/", nullptr, MS_REC | MS_PRIVATE, nullptr) != 0) {
    return {-1, errno, "make / private"};
  }
  for (size_t i = 0; i < plan.ops.size(); ++i) {
    const MountOp& op = plan.ops[i];
    plan.source_fds[i] = -1;
    if (!NeedsSource(op.kind)) continue;
    uapi::OpenHow how{O_PATH | O_CLOEXEC, 0, uapi::kResolveNoSymlinks};
    const int fd = uapi::OpenAt2(AT_FDCWD, op.source.c_str(), &how);
    if (fd < 0) return {static_cast<int>(i), errno, "open bind source"};
    struct stat st {};
    if (::fstat(fd, &st) != 0) return {static_cast<int>(i), errno, "stat bind source"};
    const bool is_dir = S_ISDIR(st.st_mode);
    if (op.kind != MountKind::kDevNode && op.kind != MountKind::kMaskFile &&
        is_dir != op.directory) {
      return {static_cast<int>(i), ENOTDIR, "bind source changed type since it was checked"};
    }
    plan.source_fds[i] = fd;
  }
  if (::mount("tmpfs", kStaging, "tmpfs", MS_NOSUID | MS_NODEV, "mode=0755") != 0) {
    return {-1, errno, "mount the new root"};
  }
  for (size_t i = 0; i < plan.ops.size(); ++i) {
    child::PathBuf target;
    if (!target.Append(kStaging) || !target.Append(plan.ops[i].target.c_str())) {
      return {static_cast<int>(i), ENAMETOOLONG, "mount target"};
    }
    if (const int err = Perform(plan.ops[i], plan.source_fds[i], target.c_str()); err != 0) {
      return {static_cast<int>(i), err, MountKindName(plan.ops[i].kind)};
    }
    if (plan.source_fds[i] >= 0) {
      ::close(plan.source_fds[i]);
      plan.source_fds[i] = -1;
    }
  }
  // SEC-4: pivot_root, then detach the old root: nothing of the host tree stays reachable
  // except what was bound above.
  if (::chdir(kStaging) != 0) return {-1, errno, "chdir to the new root"};
  if (::syscall(SYS_pivot_root, ".", ".") != 0) return {-1, errno, "pivot_root"};
  if (::umount2(".", MNT_DETACH) != 0) return {-1, errno, "detach the old root"};
  if (::chdir("/") != 0) return {-1, errno, "chdir /"};
  // The root itself is read-only: the sandbox cannot create top-level entries.
  if (const int err = SetAttr(
          "/", uapi::kMountAttrRdonly | uapi::kMountAttrNosuid | uapi::kMountAttrNodev, false);
      err != 0) {
    return {-1, err, "make / read-only"};
  }
  return {};
}

}  // namespace agentbox
