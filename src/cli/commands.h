// Subcommands. Each takes the arguments after its own name and returns the process exit code.
#pragma once

#include <optional>
#include <span>
#include <string>

#include "base/result.h"
#include "policy/canonicalize.h"
#include "policy/policy.h"

namespace agentbox {

// Exit code for agentbox's own failures (bad input, refused, setup failed), as DESIGN.md §5.
inline constexpr int kExitRefused = 125;

int PolicyCommand(std::span<char* const> args);
int DemoCommand(std::span<char* const> args);
int RunCommand(std::span<char* const> args);
// `agentbox exec ARGS` (as_lxc_exec false) or `lxc-exec ARGS` (true): argv after the program
// or subcommand name. Exit codes are MXC's (cli/cmd_exec.cc), not kExitRefused.
int ExecCommand(std::span<char* const> args, bool as_lxc_exec);
int DoctorCommand(std::span<char* const> args);
int McpCommand(std::span<char* const> args);
int AuditCommand(std::span<char* const> args);

// The home directory and working directory of this process, for canonicalization.
[[nodiscard]] PathContext HostPathContext();

// The operator's ceiling: --ceiling FILE if given, else the AGENTBOX_* variables, else the
// default (working directory read-write, network blocked, 30 s).
[[nodiscard]] Result<Ceiling> LoadOperatorCeiling(const std::optional<std::string>& file,
                                                  const PathContext& ctx);

// Prints "agentbox: <message>" on stderr and returns kExitRefused.
int Fail(const Error& error);

}  // namespace agentbox
