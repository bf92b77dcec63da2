// Per-run cgroups: detect which cgroup controllers this process may use, then give each
// sandbox run its own cgroup with a pids limit (and a memory limit when asked), and kill
// and remove it at the end. cgroup v2 when usable, cgroup v1 pids/memory otherwise; when
// neither is, the caller falls back to rlimits (linux/rlimit.h).
//
//   CgroupSupport support = DetectCgroupSupport();     // once; support.detail for `doctor`
//   Result<RunCgroup> cg = RunCgroup::Create(support, limits);   // before clone
//   v2: clone3 with CLONE_INTO_CGROUP cg->v2_dir_fd();
//   v1: auto fds = cg->OpenTasksFiles(); clone; the child, first thing:
//       if (int err = AttachSelfInChild(fds, n); err != 0) ...   // before it forks anything
//   ... run ...
//   cg->Destroy();                                    // kills what is left, removes the dirs
#pragma once

#include <sys/types.h>

#include <functional>
#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "base/fd.h"
#include "base/result.h"
#include "linux/rlimit.h"

namespace agentbox {

enum class CgroupVersion { kNone, kV1, kV2 };

struct CgroupSupport {
  CgroupVersion version = CgroupVersion::kNone;
  bool pids = false;    // the pids controller can be used
  bool memory = false;  // the memory controller can be used
  bool cpu = false;     // the cpu controller is available (reported only; not used yet)
  std::string detail;   // human text for `doctor`: what was found, what is writable

  // Where Create() makes run cgroups. v2: the hierarchy root, runs go in <root>/agentbox/.
  // v1: this process's own cgroup in each hierarchy, runs go in <dir>/agentbox/, so the
  // limits of the cgroup we run in still apply to the sandbox.
  std::string v2_root;
  std::string v1_pids_dir;
  std::string v1_memory_dir;
};

// Pure detection, changes nothing: reads /proc/self/mountinfo and /proc/self/cgroup and
// checks which directories this process's effective ids may write.
// v2 is used only from the hierarchy root (as root): a delegated v2 cgroup holding this
// very process cannot enable controllers for a child (the "no internal processes" rule,
// EBUSY), and agentbox does not move itself to work around it; `detail` says so.
[[nodiscard]] CgroupSupport DetectCgroupSupport();

// One cgroup per run (v2: one directory; v1: one per controller used). Move-only; the
// destructor calls Destroy().
class RunCgroup {
 public:
  // Creates the directories and writes the limits: pids.max always (when support.pids),
  // memory when limits.memory_bytes is set (and support.memory). Fails with the file named.
  [[nodiscard]] static Result<RunCgroup> Create(const CgroupSupport& support,
                                                const LimitRequest& limits);

  RunCgroup(RunCgroup&& other) noexcept;
  RunCgroup& operator=(RunCgroup&& other) noexcept;
  RunCgroup(const RunCgroup&) = delete;
  RunCgroup& operator=(const RunCgroup&) = delete;
  ~RunCgroup();

  // Moves process `pid` (with all its threads) into the run cgroup(s) via cgroup.procs.
  // On cgroup v1 this takes the kernel's global cgroup_threadgroup_rwsem for writing, which
  // waits for an RCU grace period (milliseconds); the sandbox uses OpenTasksFiles instead.
  [[nodiscard]] Status Attach(pid_t pid);

  // v1: each run directory's `tasks` file, opened for writing (O_CLOEXEC), in the order of
  // dirs(). The sandbox's pid 1 moves itself with AttachSelfInChild: a single thread that
  // writes "0" to `tasks` moves only itself, and the kernel then skips the global
  // threadgroup lock (kernel/cgroup/cgroup.c, cgroup_procs_write_start). The write is
  // checked against the opener's permission to write the file, so opening it here, before
  // clone, is what grants it. Empty on v2 (CLONE_INTO_CGROUP) or after Destroy().
  [[nodiscard]] Result<std::vector<UniqueFd>> OpenTasksFiles() const;

  // v1: the `tasks` file of each run directory's parent (the agentbox/ directory), in the
  // same order. Once the sandbox is empty its pid 1 moves itself there with
  // AttachSelfInChild, so Destroy() can remove the run directories without waiting for
  // pid 1's own exit (the kernel's teardown of its namespaces). Empty on v2.
  [[nodiscard]] Result<std::vector<UniqueFd>> OpenParentTasksFiles() const;

  // v2: an O_DIRECTORY fd of the run cgroup, owned by this object, for clone3
  // CLONE_INTO_CGROUP. -1 on v1 or after Destroy().
  [[nodiscard]] int v2_dir_fd() const { return dir_fd_.get(); }
  [[nodiscard]] CgroupVersion version() const { return version_; }
  [[nodiscard]] bool limits_pids() const { return limits_pids_; }
  [[nodiscard]] bool limits_memory() const { return limits_memory_; }
  // The run directories (one on v2, one per controller on v1); empty after Destroy().
  [[nodiscard]] const std::vector<std::string>& dirs() const { return dirs_; }

  // SIGKILLs every process left in the run cgroup(s) (v2: cgroup.kill when present) and
  // removes the directories. Idempotent; failures are logged, not returned.
  void Destroy();

 private:
  RunCgroup() = default;

  CgroupVersion version_ = CgroupVersion::kNone;
  std::vector<std::string> dirs_;
  UniqueFd dir_fd_;
  bool limits_pids_ = false;
  bool limits_memory_ = false;
};

// Child side, no allocation: moves the calling thread (the single-threaded sandbox pid 1)
// into the cgroup of each `tasks` fd from OpenTasksFiles by writing "0", then closes every
// fd (also after a failure). Returns 0, or the errno of the first write that failed (EIO
// for a short write).
// SEC-9: pid 1 runs this before any other stage and before it forks the program, so the
// limits hold from the program's first instruction; a failure stops the run.
[[nodiscard]] int AttachSelfInChild(const int* tasks_fds, size_t count) noexcept;

// Removes run directories under `parent` (an agentbox/ directory) left by supervisors that
// were killed before cleaning up: `run-<pid>-<n>` whose <pid> no longer exists, and only if
// empty (rmdir fails on a cgroup that holds a process). It lists `parent` only when it holds
// more than `sweep_above` directories, so a run pays one stat. Returns how many it removed.
int RemoveStaleRunDirs(const std::string& parent, int sweep_above);

// Pure helpers, exposed for tests.

// One cgroup filesystem mount from /proc/self/mountinfo.
struct CgroupMount {
  std::string mount_point;           // e.g. /sys/fs/cgroup/pids
  std::string root;                  // cgroup path mounted there, usually "/"
  bool v2 = false;                   // fstype cgroup2
  std::vector<std::string> options;  // v1: super options, e.g. {"rw", "pids"}
};
[[nodiscard]] std::vector<CgroupMount> ParseCgroupMounts(std::string_view mountinfo);

// /proc/self/cgroup: the v2 path ("0::/x") and each v1 controller's path ("4:memory:/y";
// "2:cpu,cpuacct:/z" gives both; "1:name=systemd:/" gives "name=systemd").
struct ProcCgroup {
  std::optional<std::string> v2_path;
  std::map<std::string, std::string, std::less<>> v1_paths;
};
[[nodiscard]] ProcCgroup ParseProcCgroup(std::string_view text);

// The directory of cgroup `path` under `mount`; nullopt when the path is not inside the
// mounted subtree (e.g. a host mount seen from another cgroup namespace).
[[nodiscard]] std::optional<std::string> CgroupDir(const CgroupMount& mount, std::string_view path);

}  // namespace agentbox
