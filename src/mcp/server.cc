#include "mcp/server.h"

#include <poll.h>
#include <sys/eventfd.h>
#include <sys/signalfd.h>
#include <unistd.h>

#include <cerrno>
#include <condition_variable>
#include <csignal>
#include <list>
#include <map>
#include <mutex>
#include <optional>
#include <thread>

#include "audit/digest.h"
#include "audit/log.h"
#include "audit/redact.h"
#include "base/fd.h"
#include "base/log.h"
#include "config/strict_json.h"
#include "mcp/jsonrpc.h"

namespace agentbox::mcp {
namespace {

using nlohmann::json;

constexpr const char* kLatestProtocol = "2025-11-25";
constexpr const char* kProtocols[] = {"2025-11-25", "2025-06-18"};

// What the audit log keeps of a call's arguments: secrets redacted, and file content and
// stdin as size + SHA-256 only.
json AuditedRequest(const json& arguments) {
  json out = RedactJson(arguments);
  for (const char* field : {"content", "stdin"}) {
    if (arguments.is_object() && arguments.contains(field) && arguments[field].is_string()) {
      out[field] = ContentDigest(arguments[field].get<std::string>());
    }
  }
  return out;
}

class Server {
 public:
  Server(const ServerOptions& options, int out_fd) : options_(options), out_fd_(out_fd) {
    auto session = NewAuditId();
    session_id_ = session ? *session : "unknown";
    // Open (and create) the log now, so it exists, and is masked, from the first sandbox on.
    std::lock_guard lock(audit_mu_);
    if (auto opened = AuditLog::Open(options_.audit_log_path)) {
      audit_.emplace(std::move(*opened));
    } else {
      LogWarning("audit log: ", opened.error().Message(), "; every call is refused until it opens");
    }
  }

  // Returns false when the client is gone (stdout closed).
  bool Handle(std::string_view line) {
    Message m = ParseMessage(line);
    switch (m.kind) {
      case Message::kInvalid:
        return Send(ErrorResponse(m.id, m.error_code, m.error_message));
      case Message::kResponse:
        return true;  // we send no requests; nothing to match
      case Message::kNotification:
        if (m.method == "notifications/cancelled" && m.params.is_object() &&
            m.params.contains("requestId")) {
          Cancel(m.params["requestId"]);
        }
        return true;  // notifications never get a reply
      case Message::kRequest:
        return HandleRequest(m);
    }
    return true;
  }

  // Kills every running sandbox, waits until each call has finished (and audited), and
  // joins every worker thread, so none outlives the server.
  void Shutdown() {
    std::list<std::thread> workers;
    {
      std::unique_lock lock(mu_);
      shutting_down_ = true;
      for (const auto& [key, fd] : cancel_fds_) Signal(fd);
      slot_free_.notify_all();
      all_done_.wait(lock, [&] { return calls_ == 0; });
      workers.swap(workers_);
    }
    for (std::thread& t : workers) t.join();
  }

 private:
  bool HandleRequest(const Message& m) {
    if (m.method == "initialize") return Send(Response(m.id, Initialize(m.params)));
    if (m.method == "ping") return Send(Response(m.id, json::object()));
    if (m.method == "tools/list")
      return Send(Response(m.id, {{"tools", ToolList(options_.tools)}}));
    if (m.method == "tools/call") return StartCall(m);
    return Send(ErrorResponse(m.id, kMethodNotFound, "method not found: " + m.method));
  }

  json Initialize(const json& params) {
    std::string version = kLatestProtocol;
    if (params.is_object() && params.contains("protocolVersion") &&
        params["protocolVersion"].is_string()) {
      const std::string asked = params["protocolVersion"].get<std::string>();
      for (const char* supported : kProtocols) {
        if (asked == supported) version = asked;
      }
    }
    if (params.is_object() && params.contains("clientInfo") && params["clientInfo"].is_object()) {
      std::lock_guard lock(mu_);
      client_info_ = RedactJson(params["clientInfo"]);
    }
    return {{"protocolVersion", version},
            {"capabilities", {{"tools", {{"listChanged", false}}}}},
            {"serverInfo",
             {{"name", "agentbox"}, {"title", "agentbox sandbox"}, {"version", AGENTBOX_VERSION}}},
            {"instructions", ServerInstructions()}};
  }

  bool StartCall(const Message& m) {
    const json& p = m.params;
    if (!p.is_object() || !p.contains("name") || !p["name"].is_string()) {
      return Send(ErrorResponse(m.id, kInvalidParams, "tools/call needs params.name"));
    }
    const std::string name = p["name"].get<std::string>();
    if (!IsKnownTool(name))
      return Send(ErrorResponse(m.id, kInvalidParams, "unknown tool: " + name));
    if (p.contains("arguments") && !p["arguments"].is_object() && !p["arguments"].is_null()) {
      return Send(ErrorResponse(m.id, kInvalidParams, "arguments must be an object"));
    }
    json progress_token;
    if (p.contains("_meta") && p["_meta"].is_object() && p["_meta"].contains("progressToken")) {
      progress_token = p["_meta"]["progressToken"];
    }
    {
      std::lock_guard lock(mu_);
      if (shutting_down_) return true;
      if (calls_ >= options_.max_concurrent_calls + options_.max_queued_calls) {
        return Send(ErrorResponse(m.id, kInternalError, "busy: too many calls in flight"));
      }
      ++calls_;
    }
    std::lock_guard lock(mu_);
    JoinFinishedLocked();
    workers_.emplace_back(
        [this, id = m.id, name, arguments = p.value("arguments", json::object()), progress_token] {
          RunCall(id, name, arguments, progress_token);
          std::lock_guard done(mu_);
          finished_.push_back(std::this_thread::get_id());
        });
    return true;
  }

  void RunCall(const json& id, const std::string& name, const json& arguments,
               const json& progress_token) {
    UniqueFd cancel(::eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK));
    const std::string key = DumpJson(id);
    bool cancelled_while_queued = false;
    {
      std::unique_lock lock(mu_);
      if (cancel) cancel_fds_[key] = cancel.get();  // cancellable while it waits, too
      slot_free_.wait(lock,
                      [&] { return shutting_down_ || running_ < options_.max_concurrent_calls; });
      if (shutting_down_) {
        cancel_fds_.erase(key);
        FinishCall(lock);
        return;
      }
      uint64_t count = 0;
      cancelled_while_queued = cancel && ::read(cancel.get(), &count, sizeof(count)) > 0;
      if (!cancelled_while_queued) ++running_;
    }
    if (cancelled_while_queued) {
      Send(Response(
          id, {{"content", json::array({{{"type", "text"}, {"text", "cancelled before it ran"}}})},
               {"isError", true}}));
      std::unique_lock lock(mu_);
      cancel_fds_.erase(key);
      FinishCall(lock);
      return;
    }
    ToolCall call{name, arguments, cancel.get(), nullptr};
    if (!progress_token.is_null()) {
      call.on_progress = [this, progress_token](uint64_t elapsed_ms) {
        Send(
            Notification("notifications/progress",
                         {{"progressToken", progress_token},
                          {"progress", static_cast<double>(elapsed_ms) / 1000.0},
                          {"message", "running for " + std::to_string(elapsed_ms / 1000) + " s"}}));
      };
    }
    const json request = AuditedRequest(arguments);
    const ToolOutcome outcome =
        CallTool(options_.tools, call, [&](const json& policy, const json& decisions) {
          return Audit({{"type", kAuditPending},
                        {"tool", name},
                        {"request", request},
                        {"policy", policy},
                        {"decisions", decisions}});
        });
    if (outcome.audit_id.empty()) {
      // Refused before the pending record: record the refusal on its own.
      if (auto r = Audit({{"type", kAuditRefused},
                          {"tool", name},
                          {"request", request},
                          {"reason", RedactText(outcome.message)}});
          !r) {
        LogError("audit: ", r.error().Message());
      }
    } else {
      json record = {{"type", outcome.is_error ? kAuditFailed : kAuditCompleted},
                     {"id", outcome.audit_id},
                     {"tool", name},
                     {"outcome", outcome.audit}};
      if (outcome.is_error) record["reason"] = RedactText(outcome.message);
      if (auto r = Audit(std::move(record)); !r) LogError("audit: ", r.error().Message());
    }
    json result;
    if (outcome.is_error) {
      result = {{"content", json::array({{{"type", "text"}, {"text", outcome.message}}})},
                {"isError", true}};
    } else {
      result = {
          {"content", json::array({{{"type", "text"}, {"text", DumpJson(outcome.structured)}}})},
          {"structuredContent", outcome.structured}};
    }
    Send(Response(id, result));
    std::unique_lock lock(mu_);
    cancel_fds_.erase(key);
    --running_;
    slot_free_.notify_one();
    FinishCall(lock);
  }

  // Joins the workers that have finished (their ids are in finished_). mu_ must be held.
  void JoinFinishedLocked() {
    for (const std::thread::id done : finished_) {
      for (auto it = workers_.begin(); it != workers_.end(); ++it) {
        if (it->get_id() == done) {
          it->join();  // it has only the lock release left to do
          workers_.erase(it);
          break;
        }
      }
    }
    finished_.clear();
  }

  void FinishCall(std::unique_lock<std::mutex>& /*held*/) {
    if (--calls_ == 0) all_done_.notify_all();
  }

  // Appends one audit record with the session's identity; opens the log on first use (and
  // again after a failure, so a fixed problem recovers).
  Result<std::string> Audit(json record) {
    std::lock_guard lock(audit_mu_);
    if (!audit_) {
      auto opened = AuditLog::Open(options_.audit_log_path);
      if (!opened) return opened.error();
      audit_.emplace(std::move(*opened));
    }
    record["session"] = session_id_;
    json agent = {{"client", nullptr}};
    {
      std::lock_guard state(mu_);
      agent["client"] = client_info_;
    }
    if (!options_.agent_id.empty()) agent["id"] = options_.agent_id;
    record["agent"] = std::move(agent);
    return audit_->Append(std::move(record));
  }

  void Cancel(const json& request_id) {
    std::lock_guard lock(mu_);
    if (auto it = cancel_fds_.find(DumpJson(request_id)); it != cancel_fds_.end())
      Signal(it->second);
  }

  static void Signal(int eventfd) {
    const uint64_t one = 1;
    [[maybe_unused]] const ssize_t n = ::write(eventfd, &one, sizeof(one));
  }

  bool Send(const std::string& line) {
    std::lock_guard lock(out_mu_);
    size_t done = 0;
    while (done < line.size()) {
      const ssize_t n = ::write(out_fd_, line.data() + done, line.size() - done);
      if (n < 0 && errno == EINTR) continue;
      if (n <= 0) return false;
      done += static_cast<size_t>(n);
    }
    return true;
  }

  const ServerOptions& options_;
  const int out_fd_;
  std::string session_id_;

  std::mutex out_mu_;
  std::mutex audit_mu_;
  std::optional<AuditLog> audit_;

  std::mutex mu_;  // guards everything below
  std::condition_variable slot_free_;
  std::condition_variable all_done_;
  size_t calls_ = 0;  // running or waiting for a slot
  size_t running_ = 0;
  bool shutting_down_ = false;
  std::map<std::string, int> cancel_fds_;
  json client_info_;
  std::list<std::thread> workers_;
  std::vector<std::thread::id> finished_;
};

}  // namespace

int Serve(const ServerOptions& options, int in_fd, int out_fd) {
  // Signals are taken from a signalfd in the loop below; worker threads inherit the mask.
  sigset_t stop;
  sigemptyset(&stop);
  for (const int sig : {SIGINT, SIGTERM, SIGHUP}) sigaddset(&stop, sig);
  ::pthread_sigmask(SIG_BLOCK, &stop, nullptr);
  UniqueFd signal_fd(::signalfd(-1, &stop, SFD_CLOEXEC));

  Server server(options, out_fd);
  std::string buffer;
  char chunk[65536];
  bool open = true;
  bool skipping = false;  // inside a line longer than kMaxLineBytes
  while (open) {
    pollfd fds[2] = {{in_fd, POLLIN, 0}, {signal_fd.get(), POLLIN, 0}};
    if (::poll(fds, signal_fd ? 2 : 1, -1) < 0) {
      if (errno == EINTR) continue;
      break;
    }
    if (signal_fd && fds[1].revents != 0) break;
    if (fds[0].revents == 0) continue;
    const ssize_t n = ::read(in_fd, chunk, sizeof(chunk));
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) break;  // EOF: the client is gone
    buffer.append(chunk, static_cast<size_t>(n));
    size_t start = 0;
    for (size_t nl; (nl = buffer.find('\n', start)) != std::string::npos; start = nl + 1) {
      std::string_view line(buffer.data() + start, nl - start);
      if (!line.empty() && line.back() == '\r') line.remove_suffix(1);
      if (skipping) {
        skipping = false;
        continue;
      }
      if (line.find_first_not_of(" \t") == std::string_view::npos) continue;
      if (!server.Handle(line)) {
        open = false;
        break;
      }
    }
    buffer.erase(0, start);
    if (buffer.size() > kMaxLineBytes) {
      open = open && server.Handle(buffer);  // answered as too large
      buffer.clear();
      skipping = true;
    }
  }
  server.Shutdown();
  return 0;
}

}  // namespace agentbox::mcp
