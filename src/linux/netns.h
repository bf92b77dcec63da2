// Network namespace: a fresh one has only a loopback device, and it is down.
#pragma once

#include <cstdint>

namespace agentbox {

// Child only, in a new network namespace (before capabilities are dropped): brings lo up so
// programs can talk to themselves over 127.0.0.1. Returns 0 or errno. No allocation.
[[nodiscard]] int BringUpLoopbackInChild() noexcept;

// Child only, after BringUpLoopbackInChild: listens on 127.0.0.1:ports[i] (TCP) for each
// port and sends the listening sockets, in order, over the unix socket channel_fd in one
// SCM_RIGHTS message; then closes them and channel_fd. The supervisor accepts on them: the
// sockets belong to the sandbox's network namespace, the process accepting does not.
// Returns 0 or errno. No allocation.
[[nodiscard]] int HandOverListenersInChild(int channel_fd, const uint16_t* ports,
                                           int count) noexcept;

}  // namespace agentbox
