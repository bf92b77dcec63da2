// The three MCP tools: run_code, read_local_file, write_local_file. Each request is clamped
// to the operator's ceiling and runs in a sandbox; file operations run inside the sandbox too
// (file_helper.h), with the narrowest grant, so the kernel decides.
//
//   ToolContext tc{.ceiling = ..., .paths = HostPathContext(), .self_exe = "/usr/bin/agentbox"};
//   nlohmann::json list = ToolList(tc);
//   ToolOutcome out = CallTool(tc, call, before_run);   // before_run writes the audit record
#pragma once

#include <cstdint>
#include <functional>
#include <nlohmann/json.hpp>
#include <string>

#include "base/result.h"
#include "policy/canonicalize.h"
#include "policy/policy.h"

namespace agentbox::mcp {

struct ToolContext {
  Ceiling ceiling;
  PathContext paths;
  std::string self_exe;  // this binary, bound read-only into file-operation sandboxes
  size_t output_limit = size_t{10} * 1024;  // bytes kept per output stream
};

struct ToolCall {
  std::string name;
  nlohmann::json arguments;  // object (null: none given)
  int cancel_fd = -1;
  std::function<void(uint64_t elapsed_ms)> on_progress;
};

// Called once the request is clamped and before anything runs, with the effective policy
// and decisions. Returns the audit id; an error refuses the call (fail closed).
using BeforeRun = std::function<Result<std::string>(const nlohmann::json& policy,
                                                    const nlohmann::json& decisions)>;

struct ToolOutcome {
  bool is_error = false;
  std::string message;        // is_error: what the model should know
  nlohmann::json structured;  // success: the structuredContent
  std::string audit_id;       // empty if the call was refused before the audit record
  nlohmann::json audit;       // outcome facts for the audit log (sizes and digests only)
  bool refused = false;       // refused before running (bad arguments, policy, audit)
};

[[nodiscard]] bool IsKnownTool(std::string_view name);
[[nodiscard]] nlohmann::json ToolList(const ToolContext& tc);
// The server's `instructions` and a one-line summary of the ceiling for descriptions.
[[nodiscard]] std::string ServerInstructions();
[[nodiscard]] std::string CeilingSummary(const Ceiling& ceiling);

[[nodiscard]] ToolOutcome CallTool(const ToolContext& tc, const ToolCall& call,
                                   const BeforeRun& before_run);

}  // namespace agentbox::mcp
