#include "net/proxy.h"

#include <fcntl.h>
#include <netdb.h>
#include <poll.h>
#include <sys/eventfd.h>
#include <sys/socket.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <cerrno>
#include <chrono>
#include <condition_variable>
#include <cstring>
#include <limits>
#include <list>
#include <mutex>
#include <optional>
#include <thread>

#include "base/log.h"
#include "net/proxy_protocol.h"

namespace agentbox {
namespace {

constexpr int kMaxConnections = 64;        // in flight at once; more are refused
constexpr int kRequestTimeoutMs = 30'000;  // for the request head (HTTP) or handshake (SOCKS5)
constexpr int kConnectTimeoutMs = 10'000;
constexpr size_t kRelayBuffer = size_t{64} * 1024;

enum class Listener { kHttp, kSocks };

}  // namespace

struct EgressProxy::State {
  UniqueFd channel;
  EgressRules rules;
  UniqueFd stop;  // an eventfd, readable (for good) once Stop() begins
  std::atomic<bool> stopping{false};
  std::thread acceptor;

  struct Worker {
    std::thread thread;
    std::atomic<bool> done{false};
  };
  std::mutex mu;
  std::vector<ConnectionRecord> records;  // guarded by mu
  std::list<Worker> workers;              // guarded by mu
  int active = 0;                         // guarded by mu

  // Bounded, so a program opening connections in a loop cannot grow the report (or the
  // supervisor's memory) without end; the overflow is counted.
  static constexpr size_t kMaxRecords = 1000;
  size_t unrecorded = 0;  // guarded by mu

  void Record(ConnectionRecord record) {
    if (!record.allowed || !record.reason.empty()) {
      LogDebug("proxy: ", record.host, ":", record.port, " ", record.reason);
    }
    std::lock_guard lock(mu);
    if (records.size() < kMaxRecords) {
      records.push_back(std::move(record));
    } else {
      ++unrecorded;
    }
  }
};

namespace {

using State = EgressProxy::State;
using Clock = std::chrono::steady_clock;

// A poll() timeout: -1 (none) for time_point::max(), else the milliseconds left, within int
// (narrowing the ~292-year span to max() would wrap, to a value that depends on the uptime).
int MsUntil(Clock::time_point deadline) {
  if (deadline == Clock::time_point::max()) return -1;
  const auto left = std::chrono::duration_cast<std::chrono::milliseconds>(deadline - Clock::now());
  return static_cast<int>(std::clamp<int64_t>(left.count(), 0, std::numeric_limits<int>::max()));
}

// Waits until fd has `events`; false on stop, timeout or error.
bool WaitFor(const State& s, int fd, short events, Clock::time_point deadline) {
  while (true) {
    pollfd fds[2] = {{fd, events, 0}, {s.stop.get(), POLLIN, 0}};
    const int n = ::poll(fds, 2, MsUntil(deadline));
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0 || fds[1].revents != 0) return false;
    return true;
  }
}

// Appends what arrives to buf; false at EOF, error, timeout or stop.
bool ReadMore(const State& s, int fd, std::string& buf, Clock::time_point deadline) {
  char chunk[4096];
  while (WaitFor(s, fd, POLLIN, deadline)) {
    const ssize_t n = ::read(fd, chunk, sizeof(chunk));
    if (n > 0) {
      buf.append(chunk, static_cast<size_t>(n));
      return true;
    }
    if (n == 0 || (errno != EAGAIN && errno != EINTR)) return false;
  }
  return false;
}

bool WriteAll(const State& s, int fd, std::string_view data) {
  const auto deadline = Clock::now() + std::chrono::milliseconds(kRequestTimeoutMs);
  while (!data.empty()) {
    const ssize_t n = ::send(fd, data.data(), data.size(), MSG_NOSIGNAL);
    if (n > 0) {
      data.remove_prefix(static_cast<size_t>(n));
      continue;
    }
    if (n < 0 && errno != EAGAIN && errno != EINTR) return false;
    if (!WaitFor(s, fd, POLLOUT, deadline)) return false;
  }
  return true;
}

// getaddrinfo cannot be interrupted, so it runs on a thread of its own that nobody waits
// for: Stop() never hangs on a slow resolver.
struct Lookup {
  std::mutex mu;
  std::condition_variable cv;
  bool done = false;
  int rc = 0;
  std::vector<net::IpAddress> addresses;
};

std::vector<net::IpAddress> Resolve(const State& s, const std::string& host, std::string& why) {
  if (auto pin = s.rules.pins.find(host); pin != s.rules.pins.end()) return {pin->second};
  if (auto literal = net::ParseIpLiteral(host)) return {*literal};
  auto lookup = std::make_shared<Lookup>();
  try {
    std::thread([lookup, host] {
      addrinfo hints{};
      hints.ai_family = AF_UNSPEC;
      hints.ai_socktype = SOCK_STREAM;
      addrinfo* list = nullptr;
      const int rc = ::getaddrinfo(host.c_str(), nullptr, &hints, &list);
      std::vector<net::IpAddress> found;
      for (const addrinfo* a = list; rc == 0 && a != nullptr; a = a->ai_next) {
        if (a->ai_family == AF_INET || a->ai_family == AF_INET6) {
          found.push_back(net::FromSockaddr(a->ai_addr));
        }
      }
      if (list != nullptr) ::freeaddrinfo(list);
      std::lock_guard lock(lookup->mu);
      lookup->rc = rc;
      lookup->addresses = std::move(found);
      lookup->done = true;
      lookup->cv.notify_all();
    }).detach();
  } catch (const std::system_error&) {
    why = "cannot resolve " + host + ": no thread for the lookup";
    return {};
  }
  std::unique_lock lock(lookup->mu);
  while (!lookup->done && !s.stopping) lookup->cv.wait_for(lock, std::chrono::milliseconds(50));
  if (!lookup->done) {
    why = "the run ended while resolving " + host;
    return {};
  }
  if (lookup->rc != 0 || lookup->addresses.empty()) {
    why = "cannot resolve " + host + ": " +
          (lookup->rc != 0 ? ::gai_strerror(lookup->rc) : "no IPv4 or IPv6 address");
  }
  return lookup->addresses;
}

UniqueFd ConnectTo(const State& s, const net::IpAddress& address, uint16_t port, int& err) {
  socklen_t len = 0;
  const sockaddr_storage sa = net::ToSockaddr(address, port, &len);
  UniqueFd fd(::socket(sa.ss_family, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0));
  if (!fd) {
    err = errno;
    return {};
  }
  if (::connect(fd.get(), reinterpret_cast<const sockaddr*>(&sa), len) == 0) return fd;
  if (errno != EINPROGRESS) {
    err = errno;
    return {};
  }
  const auto deadline = Clock::now() + std::chrono::milliseconds(kConnectTimeoutMs);
  if (!WaitFor(s, fd.get(), POLLOUT, deadline)) {
    err = s.stopping ? ECANCELED : ETIMEDOUT;
    return {};
  }
  socklen_t err_len = sizeof(err);
  if (::getsockopt(fd.get(), SOL_SOCKET, SO_ERROR, &err, &err_len) != 0) err = errno;
  if (err != 0) return {};
  return fd;
}

// Resolves host, checks every address (SEC-27) and connects to the first that passes and
// answers. On failure `record` says why, and `refused` whether the rules refused it.
UniqueFd Open(const State& s, ConnectionRecord& record, bool check_addresses, bool& refused) {
  refused = false;
  std::string why;
  const std::vector<net::IpAddress> addresses = Resolve(s, record.host, why);
  if (addresses.empty()) {
    record.reason = why;
    return {};
  }
  std::string first_refusal;
  int err = 0;
  for (const net::IpAddress& address : addresses) {
    if (check_addresses) {
      std::string refusal = CheckAddress(s.rules, address);
      if (!refusal.empty()) {
        if (first_refusal.empty()) first_refusal = std::move(refusal);
        continue;
      }
    }
    UniqueFd fd = ConnectTo(s, address, record.port, err);
    if (fd) {
      record.address = net::FormatIp(address);
      return fd;
    }
  }
  if (err == 0 && !first_refusal.empty()) {
    refused = true;
    record.allowed = false;
    record.reason = first_refusal;
  } else {
    record.reason = std::string("cannot connect: ") + std::strerror(err);
  }
  return {};
}

// Copies bytes both ways until both directions have ended; a direction that ends is
// passed on as a half-close. `to_b` is sent to b first. With `a_limit`, a may send b only
// that many more bytes: one more ends the relay (a second request must not ride along).
void Relay(const State& s, int a, int b, std::string to_b,
           std::optional<uint64_t> a_limit = std::nullopt) {
  struct Direction {
    int from, to;
    std::string buf;
    bool eof = false;
    bool shut = false;
  };
  Direction dirs[2] = {{a, b, std::move(to_b)}, {b, a, {}}};
  char chunk[16384];
  while (!(dirs[0].shut && dirs[1].shut)) {
    pollfd fds[3] = {{a, 0, 0}, {b, 0, 0}, {s.stop.get(), POLLIN, 0}};
    for (Direction& d : dirs) {
      pollfd& from = fds[d.from == a ? 0 : 1];
      pollfd& to = fds[d.to == a ? 0 : 1];
      if (!d.eof && d.buf.size() < kRelayBuffer) from.events |= POLLIN;
      if (!d.buf.empty()) to.events |= POLLOUT;
    }
    if (::poll(fds, 3, -1) < 0) {
      if (errno == EINTR) continue;
      return;
    }
    if (fds[2].revents != 0) return;
    for (Direction& d : dirs) {
      const short from_ready = fds[d.from == a ? 0 : 1].revents;
      if (!d.eof && (from_ready & (POLLIN | POLLHUP | POLLERR)) != 0) {
        const ssize_t n = ::read(d.from, chunk, sizeof(chunk));
        if (n > 0 && d.from == a && a_limit) {
          if (static_cast<uint64_t>(n) > *a_limit) return;
          *a_limit -= static_cast<uint64_t>(n);
        }
        if (n > 0) {
          d.buf.append(chunk, static_cast<size_t>(n));
        } else if (n == 0 || (errno != EAGAIN && errno != EINTR)) {
          d.eof = true;
        }
      }
      if (!d.buf.empty()) {
        const ssize_t n = ::send(d.to, d.buf.data(), d.buf.size(), MSG_NOSIGNAL);
        if (n > 0) {
          d.buf.erase(0, static_cast<size_t>(n));
        } else if (n < 0 && errno != EAGAIN && errno != EINTR) {
          return;  // the receiving side is gone: nothing more can be delivered either way
        }
      }
      if (d.eof && d.buf.empty() && !d.shut) {
        ::shutdown(d.to, SHUT_WR);
        d.shut = true;
      }
    }
  }
}

std::string HttpRefusal(int status, const char* phrase, const ConnectionRecord& r) {
  std::string body = "agentbox egress proxy: ";
  body += r.host.empty() ? std::string("request") : r.host + ":" + std::to_string(r.port);
  body += status == 403 ? " refused: " : " failed: ";
  body += r.reason + "\n";
  return net::HttpErrorResponse(status, phrase, body);
}

// Upstream mode (MXC configs that name their own proxy): the request goes unchanged to that
// endpoint, which resolves and connects; the configuration named it, so no address check.
UniqueFd OpenUpstream(const State& s, ConnectionRecord& r) {
  ConnectionRecord hop{r.protocol, s.rules.upstream_host, s.rules.upstream_port, true, {}, {}};
  bool refused = false;
  UniqueFd fd = Open(s, hop, /*check_addresses=*/false, refused);
  r.address = "upstream proxy " + s.rules.upstream;
  if (!fd) r.reason = "upstream proxy " + s.rules.upstream + ": " + hop.reason;
  return fd;
}

// The upstream proxy routes each request by its own URL, so exactly the request that was
// checked may reach it: a CONNECT tunnel (to the checked host), or one request whose head
// asks the upstream to close afterwards and whose body is framed by Content-Length. Bytes
// past that end the connection; the client retries on a new one, which is checked again.
void ServeViaUpstream(State& s, int client, const net::HttpRequestHead& head, std::string buf,
                      ConnectionRecord& r) {
  if (!head.is_connect && head.chunked) {
    r.allowed = false;
    r.reason = "a chunked request body cannot go through the configured upstream proxy";
    s.Record(r);
    WriteAll(s, client, HttpRefusal(411, "Length Required", r));
    return;
  }
  UniqueFd server = OpenUpstream(s, r);
  s.Record(r);
  if (!server) {
    WriteAll(s, client, HttpRefusal(502, "Bad Gateway", r));
    return;
  }
  if (head.is_connect) {
    Relay(s, client, server.get(), std::move(buf));
    return;
  }
  // The checked request line (absolute-form, as a proxy wants it) over the rebuilt headers
  // (no Proxy-* or hop-by-hop headers, "Connection: close").
  const std::string request_line = buf.substr(0, buf.find("\r\n"));
  std::string out = request_line + head.forward_head.substr(head.forward_head.find("\r\n"));
  const std::string_view rest = std::string_view(buf).substr(head.consumed);
  const uint64_t body_here = std::min<uint64_t>(rest.size(), head.content_length);
  out.append(rest.substr(0, body_here));
  if (rest.size() > body_here) return;  // a pipelined second request: not forwarded
  Relay(s, client, server.get(), std::move(out), head.content_length - body_here);
}

// Each decision is recorded before the program gets its answer, so the report lists them in
// the order the program saw them.
//
// SEC-29: the request is bytes from the sandbox; the parser is strict and bounded (16 KiB
// head, smuggling shapes refused) and the origin gets a rebuilt head without Proxy-* or
// hop-by-hop headers, its Host taken from the checked URL.
void ServeHttp(State& s, int client) {
  const auto deadline = Clock::now() + std::chrono::milliseconds(kRequestTimeoutMs);
  std::string buf;
  net::HttpParse parse;
  while (true) {
    parse = net::ParseHttpRequestHead(buf);
    if (parse.status != net::ParseStatus::kIncomplete) break;
    if (!ReadMore(s, client, buf, deadline)) return;  // nothing asked, nothing to record
  }
  ConnectionRecord r{"http", {}, 0, false, {}, {}};
  if (parse.status == net::ParseStatus::kInvalid) {
    r.reason = "bad proxy request: " + parse.error;
    s.Record(r);
    WriteAll(s, client, HttpRefusal(400, "Bad Request", r));
    return;
  }
  const net::HttpRequestHead& head = parse.head;
  r.protocol = head.is_connect ? "connect" : "http";
  r.host = head.host;
  r.port = head.port;
  r.reason = CheckDestination(s.rules, r.host, r.port);
  if (!r.reason.empty()) {
    s.Record(r);
    WriteAll(s, client, HttpRefusal(403, "Forbidden", r));
    return;
  }
  r.allowed = true;
  if (!s.rules.upstream.empty()) {
    ServeViaUpstream(s, client, head, std::move(buf), r);
    return;
  }
  bool refused = false;
  UniqueFd server = Open(s, r, /*check_addresses=*/true, refused);
  s.Record(r);
  if (!server) {
    WriteAll(s, client,
             refused ? HttpRefusal(403, "Forbidden", r) : HttpRefusal(502, "Bad Gateway", r));
    return;
  }
  std::string rest = buf.substr(head.consumed);
  if (head.is_connect) {
    if (!WriteAll(s, client, "HTTP/1.1 200 Connection established\r\n\r\n")) return;
    Relay(s, client, server.get(), std::move(rest));
  } else {
    Relay(s, client, server.get(), head.forward_head + rest);
  }
}

void ServeSocks(State& s, int client) {
  const auto deadline = Clock::now() + std::chrono::milliseconds(kRequestTimeoutMs);
  std::string buf;
  net::Socks5Greeting greeting;
  while ((greeting = net::ParseSocks5Greeting(buf)).status == net::ParseStatus::kIncomplete) {
    if (!ReadMore(s, client, buf, deadline)) return;
  }
  ConnectionRecord r{"socks5", {}, 0, false, {}, {}};
  if (greeting.status == net::ParseStatus::kInvalid || !greeting.no_auth_offered) {
    r.reason = greeting.status == net::ParseStatus::kInvalid
                   ? "bad SOCKS5 greeting"
                   : "the client offers no SOCKS5 method without authentication";
    s.Record(std::move(r));
    if (greeting.status == net::ParseStatus::kDone) WriteAll(s, client, std::string("\x05\xff", 2));
    return;
  }
  if (!WriteAll(s, client, std::string("\x05\x00", 2))) return;
  buf.erase(0, greeting.consumed);
  net::Socks5Request request;
  while ((request = net::ParseSocks5Request(buf)).status == net::ParseStatus::kIncomplete) {
    if (!ReadMore(s, client, buf, deadline)) return;
  }
  if (request.status == net::ParseStatus::kInvalid) {
    r.reason = "bad SOCKS5 request: " + request.error;
    s.Record(std::move(r));
    WriteAll(s, client, net::Socks5Reply(request.reply_code));
    return;
  }
  r.host = request.host;
  r.port = request.port;
  r.reason = CheckDestination(s.rules, r.host, r.port);
  if (!r.reason.empty()) {
    s.Record(std::move(r));
    WriteAll(s, client, net::Socks5Reply(0x02));  // connection not allowed by ruleset
    return;
  }
  r.allowed = true;
  bool refused = false;
  UniqueFd server = Open(s, r, /*check_addresses=*/true, refused);
  s.Record(r);
  if (!server) {
    WriteAll(s, client, net::Socks5Reply(refused ? 0x02 : 0x05));
    return;
  }
  if (!WriteAll(s, client, net::Socks5Reply(0x00))) return;
  Relay(s, client, server.get(), buf.substr(request.consumed));
}

void Serve(State& s, UniqueFd client, Listener kind) {
  if (kind == Listener::kHttp) {
    ServeHttp(s, client.get());
  } else if (!s.rules.upstream.empty()) {
    s.Record({"socks5",
              {},
              0,
              false,
              "SOCKS5 is not offered when the configuration names its own proxy (use "
              "HTTP_PROXY)",
              {}});
  } else {
    ServeSocks(s, client.get());
  }
}

// Receives the bridge listeners from pid 1; false if pid 1 ended (or Stop() came) first.
bool ReceiveListeners(State& s, UniqueFd& http, UniqueFd& socks) {
  const auto forever = Clock::time_point::max();
  if (!WaitFor(s, s.channel.get(), POLLIN, forever)) return false;
  char byte = 0;
  iovec iov{&byte, 1};
  alignas(cmsghdr) char control[CMSG_SPACE(sizeof(int) * 2)] = {};
  msghdr msg{};
  msg.msg_iov = &iov;
  msg.msg_iovlen = 1;
  msg.msg_control = control;
  msg.msg_controllen = sizeof(control);
  if (::recvmsg(s.channel.get(), &msg, MSG_CMSG_CLOEXEC) != 1) return false;
  const cmsghdr* cmsg = CMSG_FIRSTHDR(&msg);
  if (cmsg == nullptr || cmsg->cmsg_type != SCM_RIGHTS ||
      cmsg->cmsg_len != CMSG_LEN(sizeof(int) * 2)) {
    return false;
  }
  int fds[2];
  std::memcpy(fds, CMSG_DATA(cmsg), sizeof(fds));
  http.Reset(fds[0]);
  socks.Reset(fds[1]);
  return true;
}

void AcceptLoop(State& s) {
  UniqueFd http, socks;
  if (!ReceiveListeners(s, http, socks)) return;
  s.channel.Reset();
  while (true) {
    pollfd fds[3] = {{http.get(), POLLIN, 0}, {socks.get(), POLLIN, 0}, {s.stop.get(), POLLIN, 0}};
    if (::poll(fds, 3, -1) < 0) {
      if (errno == EINTR) continue;
      return;
    }
    if (fds[2].revents != 0) return;
    for (int i = 0; i < 2; ++i) {
      if (fds[i].revents == 0) continue;
      UniqueFd client(::accept4(fds[i].fd, nullptr, nullptr, SOCK_NONBLOCK | SOCK_CLOEXEC));
      if (!client) continue;
      const Listener kind = i == 0 ? Listener::kHttp : Listener::kSocks;
      std::lock_guard lock(s.mu);
      s.workers.remove_if([](State::Worker& w) {
        if (!w.done) return false;
        w.thread.join();
        return true;
      });
      if (s.active >= kMaxConnections) {
        ++s.unrecorded;  // refused: too many at once
        continue;
      }
      State::Worker& worker = s.workers.emplace_back();
      try {
        worker.thread = std::thread([&s, &worker, kind, fd = client.Release()] {
          Serve(s, UniqueFd(fd), kind);
          std::lock_guard done_lock(s.mu);
          --s.active;
          worker.done = true;
        });
        ++s.active;
      } catch (const std::system_error&) {
        s.workers.pop_back();
      }
    }
  }
}

}  // namespace

Result<std::unique_ptr<EgressProxy>> EgressProxy::Start(UniqueFd channel, EgressRules rules) {
  auto state = std::make_unique<State>();
  state->channel = std::move(channel);
  state->rules = std::move(rules);
  state->stop.Reset(::eventfd(0, EFD_CLOEXEC));
  if (!state->stop) return ErrnoError(ErrorCode::kSetup, "eventfd", "egress proxy");
  State& s = *state;
  try {
    state->acceptor = std::thread([&s] { AcceptLoop(s); });
  } catch (const std::system_error& e) {
    return MakeError(ErrorCode::kSetup, std::string("egress proxy: no thread: ") + e.what());
  }
  return std::unique_ptr<EgressProxy>(new EgressProxy(std::move(state)));
}

EgressProxy::EgressProxy(std::unique_ptr<State> state) : state_(std::move(state)) {}

EgressProxy::~EgressProxy() { Stop(); }

std::vector<ConnectionRecord> EgressProxy::Stop() {
  State& s = *state_;
  if (s.acceptor.joinable()) {
    s.stopping = true;
    const uint64_t one = 1;
    [[maybe_unused]] const ssize_t n = ::write(s.stop.get(), &one, sizeof(one));
    s.acceptor.join();
    // Workers only take the lock briefly and never wait for the acceptor, so this list is
    // final once the acceptor is gone.
    for (State::Worker& w : s.workers) w.thread.join();
    s.workers.clear();
  }
  std::lock_guard lock(s.mu);
  std::vector<ConnectionRecord> out = s.records;
  if (s.unrecorded > 0) {
    out.push_back({"",
                   {},
                   0,
                   false,
                   std::to_string(s.unrecorded) +
                       " more connections not listed (the report keeps the first " +
                       std::to_string(State::kMaxRecords) + "; more than " +
                       std::to_string(kMaxConnections) + " at once are refused)",
                   {}});
  }
  return out;
}

}  // namespace agentbox
