#include "executor/trace.h"

#include <sys/mman.h>
#include <unistd.h>

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <ctime>
#include <new>
#include <string>

namespace agentbox {
namespace {

// Time zero: the first of this process's static initialisers, right after the dynamic
// loader (priority 101 runs before the C++ library's and ours).
int64_t g_process_start = 0;
[[gnu::constructor(101)]] void RecordProcessStart() { g_process_start = MonotonicNanos(); }

}  // namespace

int64_t MonotonicNanos() noexcept {
  timespec ts{};
  ::clock_gettime(CLOCK_MONOTONIC, &ts);
  return static_cast<int64_t>(ts.tv_sec) * 1000000000 + ts.tv_nsec;
}

bool TraceTimingsEnabled() {
  static const bool enabled = [] {
    const char* value = std::getenv("AGENTBOX_TRACE_TIMINGS");
    return value != nullptr && value[0] != '\0' && std::strcmp(value, "0") != 0;
  }();
  return enabled;
}

RunTrace::RunTrace() {
  if (!TraceTimingsEnabled()) return;
  void* mem = ::mmap(nullptr, sizeof(StageTimes), PROT_READ | PROT_WRITE,
                     MAP_SHARED | MAP_ANONYMOUS, -1, 0);
  if (mem == MAP_FAILED) return;  // tracing is best effort
  slots_ = new (mem) StageTimes{};
  Mark("run start");
}

RunTrace::~RunTrace() {
  if (slots_ != nullptr) ::munmap(slots_, sizeof(StageTimes));
}

void RunTrace::Mark(const char* step) noexcept {
  if (slots_ == nullptr || count_ == kMaxMarks) return;
  marks_[count_++] = {step, MonotonicNanos()};
}

void RunTrace::Print() const {
  if (slots_ == nullptr) return;
  struct Event {
    int64_t at;
    const char* who;
    const char* what;
  };
  constexpr size_t kStages = static_cast<size_t>(Stage::kCount);
  std::array<Event, kMaxMarks + kStages + 2> events{};
  size_t n = 0;
  for (size_t i = 0; i < count_; ++i) events[n++] = {marks_[i].at, "supervisor", marks_[i].step};
  // Copied once: pid 1 is gone by now, but read the shared page only once anyway.
  const StageTimes child = *slots_;
  if (child.started != 0) events[n++] = {child.started, "pid 1", "started"};
  for (size_t i = 0; i < kStages; ++i) {
    if (child.done[i] == 0) continue;
    const Stage stage = static_cast<Stage>(i);
    const char* who = stage == Stage::kExec ? "program" : "pid 1";
    const char* what = stage == Stage::kSpawn  ? "program spawned (its execve done)"
                       : stage == Stage::kExec ? "execve"
                                               : StageName(stage);
    events[n++] = {child.done[i], who, what};
  }
  if (child.program_ended != 0) events[n++] = {child.program_ended, "pid 1", "program reaped"};
  std::stable_sort(events.begin(), events.begin() + static_cast<std::ptrdiff_t>(n),
                   [](const Event& a, const Event& b) { return a.at < b.at; });
  // One write, so that printing does not stretch the run's end for whoever reads stderr.
  std::string text;
  char line[256];
  std::snprintf(line, sizeof(line),
                "agentbox: trace: when each step ended, in us since the supervisor started at "
                "CLOCK_MONOTONIC %lld.%09lld s (+us since the line before)\n",
                static_cast<long long>(g_process_start / 1000000000),
                static_cast<long long>(g_process_start % 1000000000));
  text += line;
  int64_t previous = events[0].at;
  for (size_t i = 0; i < n; ++i) {
    const Event& e = events[i];
    std::snprintf(line, sizeof(line), "agentbox: trace: %9.1f (+%7.1f)  %-10s %s\n",
                  static_cast<double>(e.at - g_process_start) / 1000.0,
                  static_cast<double>(e.at - previous) / 1000.0, e.who, e.what);
    text += line;
    previous = e.at;
  }
  for (size_t done = 0; done < text.size();) {
    const ssize_t w = ::write(STDERR_FILENO, text.data() + done, text.size() - done);
    if (w <= 0) break;  // best effort
    done += static_cast<size_t>(w);
  }
}

}  // namespace agentbox
