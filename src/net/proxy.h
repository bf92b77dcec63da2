// The per-run egress proxy, in the supervisor (docs/network.md).
//
// The sandbox's pid 1 listens on its own loopback (127.0.0.1:3128 HTTP, :1080 SOCKS5) and
// hands the listening sockets to the supervisor over `channel`; the proxy accepts on them,
// so a sandboxed program reaches it with a plain loopback connect while the proxy's own
// connections leave from the host's network namespace. Per connection: parse the request
// (HTTP absolute-URI, CONNECT, SOCKS5 with remote resolution), CheckDestination, resolve
// (pins first), CheckAddress for every address, connect, then relay bytes both ways.
//
//   auto proxy = EgressProxy::Start(std::move(channel_parent_end), std::move(rules));
//   ... run the sandbox ...
//   std::vector<ConnectionRecord> log = proxy->Stop();   // closes everything, joins
#pragma once

#include <memory>
#include <vector>

#include "base/fd.h"
#include "base/result.h"
#include "net/egress.h"

namespace agentbox {

class EgressProxy {
 public:
  [[nodiscard]] static Result<std::unique_ptr<EgressProxy>> Start(UniqueFd channel,
                                                                  EgressRules rules);
  ~EgressProxy();
  EgressProxy(const EgressProxy&) = delete;
  EgressProxy& operator=(const EgressProxy&) = delete;

  // Stops accepting, ends every connection, waits for the proxy's threads; returns every
  // decision taken, in order. Idempotent.
  std::vector<ConnectionRecord> Stop();

  struct State;

 private:
  explicit EgressProxy(std::unique_ptr<State> state);
  std::unique_ptr<State> state_;
};

}  // namespace agentbox
