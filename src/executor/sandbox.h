// Running a SandboxPlan: the supervisor (this process) clones the sandbox's pid 1 into new
// namespaces; pid 1 walks the stage table (stages.h), then starts the program and reaps.
//
//   auto plan = BuildSandboxPlan(policy, request);
//   RunOptions options{.capture_output = true};
//   auto result = RunSandbox(*plan, options);
//   if (!result) ...;                       // refused before anything ran (kUnavailable, ...)
//   result->outcome == Outcome::kExited ...
#pragma once

#include <cstdint>
#include <functional>
#include <string>
#include <vector>

#include "base/result.h"
#include "linux/plan.h"
#include "net/egress.h"

namespace agentbox {

enum class Outcome {
  kExited,       // the program exited; exit_code holds its code
  kSignaled,     // the program died of `signal`
  kTimedOut,     // the timeout killed the sandbox
  kSetupFailed,  // a sandbox stage failed; error says which, nothing ran
  kExecFailed,   // the program could not be started (not found, not executable)
  kCancelled,    // the caller cancelled the run; the sandbox was killed
};

const char* OutcomeName(Outcome outcome);

// Which layers were in force for the program.
struct Enforcement {
  bool namespaces = false;
  bool network_namespace = false;
  bool pivot_root = false;
  int landlock_abi = 0;  // 0: not applied
  bool seccomp = false;
  bool capabilities_dropped = false;
  bool no_new_privs = false;
  std::string limits;  // "cgroup2" | "cgroup1" | "rlimit"
};

// Layers that must be in force, or the run is refused before anything starts.
enum class Layer { kLandlock, kCgroup };

struct RunOptions {
  bool capture_output = false;     // else stdout/stderr pass through
  size_t capture_limit = 1 << 20;  // bytes kept per stream: head and tail halves
  bool forward_signals = false;    // forward SIGINT/SIGTERM/SIGHUP/SIGQUIT to the program
  std::vector<Layer> required;
  int stdin_fd = 0;    // the program's stdin
  int cancel_fd = -1;  // when it becomes readable, the sandbox is killed (kCancelled)
  // Called about every progress_interval_ms while the program runs (on this thread).
  std::function<void(uint64_t elapsed_ms)> on_progress;
  uint64_t progress_interval_ms = 1000;
  // With capture_output: sees every byte of stdout (stream 1) and stderr (stream 2), also
  // those the capture limit drops (for digests).
  std::function<void(int stream, std::string_view bytes)> on_output;
};

struct CapturedStream {
  std::string data;
  uint64_t total_bytes = 0;
  bool truncated = false;
};

struct RunResult {
  Outcome outcome = Outcome::kSetupFailed;
  int exit_code = 0;
  int signal = 0;
  uint64_t duration_ms = 0;
  CapturedStream out;
  CapturedStream err;
  Enforcement enforcement;
  Error error;                                // kSetupFailed / kExecFailed: what went wrong
  std::vector<ConnectionRecord> connections;  // proxy mode: every egress decision, in order
};

// Errors returned (instead of a RunResult) mean nothing was started: the host cannot
// provide a required layer, or the parent-side preparation failed.
[[nodiscard]] Result<RunResult> RunSandbox(SandboxPlan& plan, const RunOptions& options);

// The exit status `agentbox run` reports for a result (DESIGN.md §5).
[[nodiscard]] int ExitCodeFor(const RunResult& result);

// Call first thing in main(): remembers where the process's argv and environment strings
// live, so the sandbox's pid 1 (a clone of this process) can wipe them (SEC-13).
void RememberProcessStrings(int argc, char** argv, char** envp);

}  // namespace agentbox
