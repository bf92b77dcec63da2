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

// Child only: sends `err` over the unix socket channel_fd and, if err is 0, an fd for the
// caller's own network namespace with it (SIOCGSKNS: no /proc needed). Returns 0 or errno.
[[nodiscard]] int SendOwnNetnsInChild(int channel_fd, int err) noexcept;

// Child only: receives what SendOwnNetnsInChild sent. Returns 0 and sets *netns_fd, the
// sender's errno, or this side's errno (ECHILD: the sender closed without a word).
[[nodiscard]] int ReceiveNetnsInChild(int channel_fd, int* netns_fd) noexcept;

}  // namespace agentbox
