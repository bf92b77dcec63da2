// AGENTBOX_TRACE_TIMINGS=1: where a run's start-up time goes. The supervisor records each of
// its steps, the sandbox's pid 1 each of its stages (into a small MAP_SHARED array, no
// allocation, no syscall but the vDSO clock), and after the run the supervisor prints them
// to stderr in microseconds since the supervisor process started. With the variable unset
// or "0", nothing is mapped, recorded or printed.
//
//   RunTrace trace;                       // maps the shared array only when enabled
//   trace.Mark("clone3");                 // supervisor side; no-op when disabled
//   ctx.stage_times = trace.child_slots();  // pid 1 writes StageTimes into it (may be null)
//   ...
//   trace.Print();                        // after the run
#pragma once

#include <array>
#include <cstddef>
#include <cstdint>

#include "executor/stages.h"

namespace agentbox {

// CLOCK_MONOTONIC in nanoseconds; async-signal-safe (vDSO), usable in the child.
[[nodiscard]] int64_t MonotonicNanos() noexcept;

// Whether AGENTBOX_TRACE_TIMINGS is set to something other than "" or "0" (read once).
[[nodiscard]] bool TraceTimingsEnabled();

class RunTrace {
 public:
  RunTrace();
  ~RunTrace();
  RunTrace(const RunTrace&) = delete;
  RunTrace& operator=(const RunTrace&) = delete;

  [[nodiscard]] bool enabled() const { return slots_ != nullptr; }
  // Records that the supervisor finished `step` now (a string literal). At most kMaxMarks.
  void Mark(const char* step) noexcept;
  // The array pid 1 fills (StageTimes layout, see stages.h), or null when disabled.
  [[nodiscard]] StageTimes* child_slots() const { return slots_; }
  // Every mark and every stage pid 1 reached, in time order, to stderr.
  void Print() const;

 private:
  static constexpr size_t kMaxMarks = 32;
  struct Mark_ {
    const char* step;
    int64_t at;
  };
  std::array<Mark_, kMaxMarks> marks_{};
  size_t count_ = 0;
  StageTimes* slots_ = nullptr;
};

}  // namespace agentbox
