// Operator ceiling from the environment: AGENTBOX_READONLY_PATHS and
// AGENTBOX_READWRITE_PATHS (colon-separated), AGENTBOX_TIMEOUT_MS, AGENTBOX_NETWORK (with
// AGENTBOX_ALLOW_DOMAINS for proxy mode).
//
//   AGENTBOX_READONLY_PATHS=/usr/share/dict::~/data AGENTBOX_NETWORK=block
//   auto ceiling = CeilingFromEnvironment(::getenv);
//   // -> readonly {"/usr/share/dict", "~/data"}, network block, no timeout set
//
// Paths are returned as written; the policy module's clamp canonicalizes them.
#pragma once

#include <functional>
#include <optional>

#include "base/result.h"
#include "policy/policy.h"

namespace agentbox {

// `getenv_fn(name)` returns the variable's value or nullptr if it is unset (pass ::getenv,
// or a fake in tests). Returns nullopt when none of the four variables is set; otherwise a
// document with exactly the fields whose variable is set:
// - a path list splits on ':' and skips empty elements ("a::b" -> a, b; "" -> none);
// - AGENTBOX_TIMEOUT_MS: decimal digits only, >= 1, fits in 64 bits;
// - AGENTBOX_NETWORK: "block", "allow" or "proxy"; with "proxy", AGENTBOX_ALLOW_DOMAINS
//   is the comma-separated allowlist (unset or empty: no domain), and it is an error
//   without "proxy".
// A malformed value is a kPolicy error naming the variable and its value.
[[nodiscard]] Result<std::optional<PolicyDocument>> CeilingFromEnvironment(
    const std::function<const char*(const char*)>& getenv_fn);

}  // namespace agentbox
