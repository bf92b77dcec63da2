// The filesystem view of a sandbox: a list of mount operations built in the parent and
// performed by the child in its own mount namespace, ending in pivot_root.
//
//   MountPlan plan;                       // usually built by BuildSandboxPlan (plan.h)
//   plan.ops.push_back({MountKind::kBindReadOnly, "/usr/bin", "/usr/bin"});
//   ... in the child, after CLONE_NEWNS:
//   ChildFailure f = ApplyMountPlanInChild(plan);   // one-way: the host tree is gone after
//
// The new root is a tmpfs; host paths reach it only through the binds listed here.
#pragma once

#include <string>
#include <vector>

namespace agentbox {

enum class MountKind {
  kBindReadOnly,     // host `source` at `target`, read-only, nosuid, nodev (recursively)
  kBindReadWrite,    // host `source` at `target`, nosuid, nodev (recursively)
  kMaskDirectory,    // an empty read-only tmpfs over `target`
  kMaskFile,         // /dev/null over `target` (a file)
  kTmpfs,            // a fresh writable tmpfs at `target`
  kProc,             // a fresh procfs for the sandbox's pid namespace at `target`
  kDevpts,           // a fresh devpts instance at `target`
  kDevNode,          // host device node `source` bound at `target`
  kSymlink,          // a symlink at `target` whose content is `source`
  kReadOnlyRemount,  // make the (tmpfs) mount at `target` read-only; e.g. /dev once filled
};

struct MountOp {
  MountKind kind;
  std::string source;     // host path, or symlink content; empty otherwise
  std::string target;     // absolute path inside the sandbox
  bool directory = true;  // for binds and masks: whether the target is a directory
};

struct MountPlan {
  std::vector<MountOp> ops;  // performed in order; a parent always comes before its children
  // One slot per op, filled by the child with the O_PATH fd of a bind source (-1 otherwise).
  // Sized by the parent so the child never allocates.
  std::vector<int> source_fds;
};

// Why a child step failed: the op index (or -1) and errno.
struct MountFailure {
  int op = -1;
  int err = 0;
  const char* step = "";  // static string naming the step, e.g. "pivot_root"
};

// Child only, after CLONE_NEWUSER|CLONE_NEWNS and the id maps: builds the view and enters
// it. Async-signal-safe, no allocation. Returns err == 0 on success.
[[nodiscard]] MountFailure ApplyMountPlanInChild(MountPlan& plan) noexcept;

const char* MountKindName(MountKind kind);

}  // namespace agentbox
