// agentbox mcp: an MCP server over stdio (protocol revisions 2025-11-25 and 2025-06-18)
// offering run_code, read_local_file and write_local_file (tools.h).
//
//   ServerOptions options{.tools = ..., .audit_log_path = ...};
//   return Serve(options, STDIN_FILENO, STDOUT_FILENO);   // until EOF, SIGINT or SIGTERM
//
// Every tool call is audited before anything runs (a `pending` record, then `completed`,
// `failed` or `refused`); if the pending record cannot be written, the call is refused.
#pragma once

#include <cstddef>
#include <string>

#include "mcp/tools.h"

namespace agentbox::mcp {

struct ServerOptions {
  ToolContext tools;
  std::string audit_log_path;
  std::string agent_id;  // AGENTBOX_AGENT_ID, recorded with every call
  size_t max_concurrent_calls = 8;
  size_t max_queued_calls = 64;  // beyond running + queued, calls are answered "busy"
};

// Serves until stdin closes or SIGINT/SIGTERM/SIGHUP arrives; then kills running sandboxes,
// waits for their calls to finish auditing, and returns 0.
int Serve(const ServerOptions& options, int in_fd, int out_fd);

}  // namespace agentbox::mcp
