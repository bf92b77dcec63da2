// Resource limits set with setrlimit in the sandbox child: no core dumps, file size, open
// files, and the fallbacks for pids (RLIMIT_NPROC) and memory (RLIMIT_AS) when no cgroup
// controller can enforce them. The plan is built in the parent, applied in the child.
//
//   LimitRequest req;                        // pids 256, fsize 16 GiB, 1024 open files
//   req.cpu_seconds = 60;
//   RlimitPlan plan = BuildRlimitPlan(req, /*pids_by_rlimit=*/true, /*memory_by_rlimit=*/false);
//   ... in the child, after CLONE_NEWUSER, before exec:
//   if (int err = ApplyRlimitsInChild(plan); err != 0) ReportAndExit(kStageRlimits, err);
#pragma once

#include <sys/resource.h>

#include <cstdint>
#include <optional>
#include <vector>

namespace agentbox {

struct LimitRequest {
  uint64_t pids = 256;                    // processes (threads count too)
  std::optional<uint64_t> memory_bytes;   // unset: no memory limit
  std::optional<uint64_t> cpu_seconds;    // unset: no CPU-time limit
  uint64_t file_size_bytes = 1ULL << 34;  // 16 GiB
  uint64_t open_files = 1024;
};

struct RlimitPlan {
  struct Item {
    int resource;  // RLIMIT_*
    rlim_t soft;
    rlim_t hard;
  };
  std::vector<Item> items;
};

// Always: RLIMIT_CORE 0, RLIMIT_FSIZE, RLIMIT_NOFILE; RLIMIT_CPU when cpu_seconds is set
// (soft n, hard n + 1, so SIGXCPU comes before SIGKILL); RLIMIT_NPROC = pids when
// `pids_by_rlimit`; RLIMIT_AS = memory_bytes when `memory_by_rlimit` and memory is set.
// No value is ever above the caller's current hard limit (it is clamped), so the plan can
// always be applied without CAP_SYS_RESOURCE.
//
// RLIMIT_NPROC: since Linux 5.14 it is counted per user namespace (ucounts), so applied in
// the child after CLONE_NEWUSER it bounds the sandbox's own processes only, not the user's
// others. It does not bind a caller whose real uid is global root: the kernel exempts
// INIT_USER from the check even inside a user namespace (tests/unit/linux_cgroup_test.cc).
[[nodiscard]] RlimitPlan BuildRlimitPlan(const LimitRequest& req, bool pids_by_rlimit,
                                         bool memory_by_rlimit);

// Child side, async-signal-safe, no allocation: setrlimit for each item in order.
// Returns 0, or the errno of the first item that failed.
// SEC-9: limits are applied before the program starts (rlimits set in the child before
// exec; the cgroup joined by pid 1 before it forks the program), so a fork bomb is bounded
// from its first fork.
[[nodiscard]] int ApplyRlimitsInChild(const RlimitPlan& plan) noexcept;

}  // namespace agentbox
