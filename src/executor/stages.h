// The child side of a run: the fixed order in which the sandbox's pid 1 sets itself up.
// Everything here runs after clone3, possibly in a copy of a multi-threaded process: no
// allocation, no locks, only raw syscalls; failures are reported as {stage, errno} over a
// CLOEXEC pipe, then _exit.
#pragma once

#include <linux/filter.h>

#include <csignal>
#include <cstddef>
#include <cstdint>

#include "linux/plan.h"
#include "linux/rlimit.h"

namespace agentbox {

enum class Stage : int32_t {
  kCgroup,        // SEC-9: on cgroup v1, pid 1 moves itself into the run cgroups, first
  kLifeline,      // die with the supervisor
  kStdio,         // the program's stdin/stdout/stderr onto 0, 1, 2
  kCloseFds,      // SEC-14: nothing but 0, 1, 2 and our pipes crosses
  kIdMaps,        // uid/gid mapped to themselves
  kScrubMemory,   // SEC-13: the caller's argv and environment wiped from pid 1
  kNetworkStart,  // SEC-31: a helper starts making the network namespace, alongside kMounts
  kMounts,        // the view, pivot_root
  kChdir,
  kHostname,
  kNetworkJoin,  // SEC-31: pid 1 enters the helper's network namespace
  kRlimits,
  kWaitForParent,  // the supervisor is ready (its egress proxy, if any, has started)
  kCapabilities,   // SEC-10
  kNoNewPrivs,
  kLandlock,  // SEC-7
  kSeccomp,   // SEC-8: last before the program starts
  kSpawn,
  kExec,
  kCount,
};

const char* StageName(Stage stage);

// Messages from the sandbox to the supervisor.
struct ChildReport {
  enum Type : int32_t { kSetupFailed = 1, kExecFailed = 2, kExited = 3, kSignaled = 4 };
  int32_t type = 0;
  int32_t stage = 0;
  int32_t err = 0;
  int32_t detail = -1;  // kMounts: the mount op index; kExited/kSignaled: 0 once pid 1 has
                        // left the run cgroups (or had none), else the errno
  int32_t value = 0;    // exit code or signal
};

// AGENTBOX_TRACE_TIMINGS (executor/trace.h): CLOCK_MONOTONIC nanoseconds at which pid 1
// started and finished each stage (kSpawn: the program forked; kExec: the program calling
// execve), and reaped the program; 0 = not reached. Written by pid 1 only.
struct StageTimes {
  int64_t started;
  int64_t done[static_cast<size_t>(Stage::kCount)];
  int64_t program_ended;
};

struct ChildContext {
  SandboxPlan* plan;
  char* const* argv;                   // null-terminated
  char* const* envp;                   // null-terminated
  int status_fd;                       // write end, CLOEXEC
  int lifeline_fd;                     // read end: one byte = go; EOF = the supervisor is gone
  int stdin_fd, stdout_fd, stderr_fd;  // -1: keep as is
  int ruleset_fd;                      // -1: no Landlock
  int bridge_fd;                       // -1: no proxy; else where the bridge listeners go
  uint64_t landlock_handled_fs;
  const sock_fprog* seccomp;
  const RlimitPlan* rlimits;
  char* scrub_begin;
  char* scrub_end;
  int cgroup_tasks_fds[2];  // v1: the run cgroups' `tasks` files (-1: none); pid 1 closes them
  int cgroup_leave_fds[2];  // v1: their parents' `tasks` files, for pid 1 to leave by (-1: none)
  StageTimes* stage_times;  // null unless AGENTBOX_TRACE_TIMINGS; shared with the supervisor
};

// The sandbox's pid 1: runs every stage, starts the program, reaps, reports. Never returns.
[[noreturn]] void SandboxInit(const ChildContext& ctx) noexcept;

}  // namespace agentbox
