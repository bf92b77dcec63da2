// agentbox mcp: the MCP stdio server (mcp/server.h). stdout carries protocol messages only.
#include <unistd.h>

#include <climits>
#include <cstdio>
#include <cstdlib>

#include "audit/log.h"
#include "cli/commands.h"
#include "cli/flags.h"
#include "mcp/server.h"

namespace agentbox {

int McpCommand(std::span<char* const> args) {
  std::optional<std::string> ceiling_file;
  std::optional<std::string> audit_log;
  std::optional<uint64_t> max_calls;
  std::optional<uint64_t> max_output;
  Flags flags("agentbox mcp");
  flags.Value("--ceiling", &ceiling_file, "FILE",
              "operator ceiling (default: AGENTBOX_* variables, else the working directory "
              "read-write, network blocked, 30 s)");
  flags.Value("--audit-log", &audit_log, "PATH",
              "audit log (default: $XDG_STATE_HOME/agentbox/audit.jsonl)");
  flags.Number("--max-concurrent", &max_calls, "N", "tool calls run at once (default 8)");
  flags.Number("--max-output", &max_output, "BYTES",
               "bytes kept per output stream (default 10240)");
  auto positional = flags.Parse(args, /*allow_positional=*/false);
  if (!positional) return Fail(positional.error());
  if (flags.HelpRequested()) {
    std::fputs(flags.Usage("[--ceiling FILE] [--audit-log PATH]").c_str(), stdout);
    return 0;
  }
  if ((max_calls && *max_calls == 0) || (max_output && *max_output < 256)) {
    return Fail(MakeError(ErrorCode::kUsage,
                          "--max-concurrent must be at least 1 and --max-output at least 256"));
  }

  mcp::ServerOptions options;
  options.tools.paths = HostPathContext();
  auto ceiling = LoadOperatorCeiling(ceiling_file, options.tools.paths);
  if (!ceiling) return Fail(ceiling.error());
  options.tools.ceiling = std::move(*ceiling);
  char exe[PATH_MAX];
  const ssize_t n = ::readlink("/proc/self/exe", exe, sizeof(exe) - 1);
  if (n <= 0) return Fail(ErrnoError(ErrorCode::kSetup, "readlink", "/proc/self/exe"));
  options.tools.self_exe.assign(exe, static_cast<size_t>(n));
  if (max_output) options.tools.output_limit = *max_output;
  if (max_calls) options.max_concurrent_calls = *max_calls;
  if (audit_log) {
    options.audit_log_path = *audit_log;
  } else {
    auto path = DefaultAuditLogPath([](const char* name) { return std::getenv(name); });
    if (!path) return Fail(path.error());
    options.audit_log_path = *path;
  }
  if (const char* agent = std::getenv("AGENTBOX_AGENT_ID")) options.agent_id = agent;
  if (options.audit_log_path[0] != '/') {
    options.audit_log_path = options.tools.paths.cwd + "/" + options.audit_log_path;
  }
  // SEC-23: the audit log is hidden from every sandbox, even one whose grant contains it
  // (masked, so it can be neither read, rewritten, renamed nor removed from inside).
  options.tools.ceiling.doc.filesystem.denied.push_back(options.audit_log_path);
  return mcp::Serve(options, STDIN_FILENO, STDOUT_FILENO);
}

}  // namespace agentbox
