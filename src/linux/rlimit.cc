#include "linux/rlimit.h"

#include <algorithm>
#include <cerrno>
#include <limits>

namespace agentbox {
namespace {

rlim_t ToRlim(uint64_t value) {
  if (value >= std::numeric_limits<rlim_t>::max()) return RLIM_INFINITY;
  return static_cast<rlim_t>(value);
}

// Adds `resource` = soft/hard, lowered to the current hard limit: an unprivileged process
// cannot raise it, and a limit the caller already has is never loosened.
void Add(RlimitPlan& plan, int resource, rlim_t soft, rlim_t hard) {
  struct rlimit current {};
  if (getrlimit(resource, &current) == 0) hard = std::min(hard, current.rlim_max);
  plan.items.push_back({resource, std::min(soft, hard), hard});
}

}  // namespace

RlimitPlan BuildRlimitPlan(const LimitRequest& req, bool pids_by_rlimit, bool memory_by_rlimit) {
  RlimitPlan plan;
  Add(plan, RLIMIT_CORE, 0, 0);
  Add(plan, RLIMIT_FSIZE, ToRlim(req.file_size_bytes), ToRlim(req.file_size_bytes));
  Add(plan, RLIMIT_NOFILE, ToRlim(req.open_files), ToRlim(req.open_files));
  if (req.cpu_seconds) {
    const rlim_t soft = ToRlim(*req.cpu_seconds);
    Add(plan, RLIMIT_CPU, soft, soft == RLIM_INFINITY ? soft : soft + 1);
  }
  if (pids_by_rlimit) Add(plan, RLIMIT_NPROC, ToRlim(req.pids), ToRlim(req.pids));
  if (memory_by_rlimit && req.memory_bytes) {
    Add(plan, RLIMIT_AS, ToRlim(*req.memory_bytes), ToRlim(*req.memory_bytes));
  }
  return plan;
}

int ApplyRlimitsInChild(const RlimitPlan& plan) noexcept {
  for (const RlimitPlan::Item& item : plan.items) {
    const struct rlimit value = {item.soft, item.hard};
    if (setrlimit(item.resource, &value) != 0) return errno;
  }
  return 0;
}

}  // namespace agentbox
