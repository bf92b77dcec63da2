// The clamp: an agent's request, narrowed to the operator's ceiling.
//
//   PathContext ctx{.home = "/home/u", .cwd = "/home/u/proj"};
//   auto result = Clamp(ceiling, request, ctx);
//   if (!result) ...;                  // kPolicy: invalid path or value, naming it
//   result->policy;                    // the effective policy, canonical paths only
//   result->decisions;                 // one per narrowed or dropped item
//
// Rules (DESIGN.md §4): paths are canonicalized first (SEC-1); the access at a path is that
// of the most specific entry above or at it, the most restrictive when one path is listed
// twice; the effective access is the lower of what was asked and what the ceiling allows
// (SEC-3); protected paths are then capped (SEC-2); timeout and limits are the minimum;
// network only becomes stricter, and proxy domains only a subset of the ceiling's.
#pragma once

#include "base/result.h"
#include "policy/canonicalize.h"
#include "policy/policy.h"

namespace agentbox {

// The ceiling when the operator gave none: the working directory read-write, network
// blocked, 30 s.
[[nodiscard]] Ceiling DefaultCeiling(const std::string& cwd);

[[nodiscard]] Result<ClampResult> Clamp(const Ceiling& ceiling, const Request& request,
                                        const PathContext& ctx);

}  // namespace agentbox
