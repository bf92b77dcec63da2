// Network namespace: a fresh one has only a loopback device, and it is down.
#pragma once

namespace agentbox {

// Child only, in a new network namespace (before capabilities are dropped): brings lo up so
// programs can talk to themselves over 127.0.0.1. Returns 0 or errno. No allocation.
[[nodiscard]] int BringUpLoopbackInChild() noexcept;

}  // namespace agentbox
