// ScopeGuard: runs a callable when the scope ends, unless dismissed.
//
//   auto cleanup = ScopeGuard([&] { unlink(tmp.c_str()); });
//   ... on success: cleanup.Dismiss();
#pragma once

#include <utility>

namespace agentbox {

template <typename F>
class [[nodiscard]] ScopeGuard {
 public:
  explicit ScopeGuard(F fn) : fn_(std::move(fn)) {}
  ~ScopeGuard() {
    if (active_) fn_();
  }
  ScopeGuard(const ScopeGuard&) = delete;
  ScopeGuard& operator=(const ScopeGuard&) = delete;
  ScopeGuard(ScopeGuard&&) = delete;
  ScopeGuard& operator=(ScopeGuard&&) = delete;

  void Dismiss() { active_ = false; }

 private:
  F fn_;
  bool active_ = true;
};

}  // namespace agentbox
