// agentbox: one program, dispatched on its first argument. Each subcommand lives in its own
// file; this one only routes.
#include <unistd.h>

#include <csignal>
#include <cstdio>
#include <span>
#include <string_view>

#include "cli/commands.h"
#include "executor/sandbox.h"
#include "mcp/file_helper.h"

namespace {

constexpr std::string_view kHelp =
    "agentbox: run AI agents' code in a sandbox the kernel enforces\n"
    "\n"
    "usage: agentbox COMMAND [OPTIONS]\n"
    "\n"
    "commands:\n"
    "  run            run a command in a sandbox\n"
    "  exec           run an MXC config, as MXC's lxc-exec (also installed as lxc-exec)\n"
    "  mcp            serve the MCP tools run_code, read_local_file, write_local_file\n"
    "  audit          verify or show the audit log (audit verify | audit tail)\n"
    "  policy clamp   show how a request is narrowed to the operator's ceiling\n"
    "  demo           show agentbox at work on a throwaway fixture\n"
    "  doctor         check what this host offers the sandbox, and run one\n"
    "\n"
    "options:\n"
    "  --version      print the version\n"
    "  --help         show this help\n"
    "\n"
    "'agentbox COMMAND --help' describes each command.\n";

}  // namespace

int main(int argc, char** argv, char** envp) {
  agentbox::RememberProcessStrings(argc, argv, envp);
  // Writes to a closed pipe fail with EPIPE and are handled where they happen. The sandboxed
  // program starts with default dispositions (SEC-18).
  std::signal(SIGPIPE, SIG_IGN);
  const std::span<char* const> args(argv, static_cast<size_t>(argc));
  // Installed as lxc-exec (MXC's Linux executor, found by name): every argument is exec's.
  if (!args.empty() && args[0] != nullptr) {
    std::string_view name = args[0];
    name.remove_prefix(name.rfind('/') + 1);  // npos + 1 == 0: no directory part
    if (name == "lxc-exec") return agentbox::ExecCommand(args.subspan(1), /*as_lxc_exec=*/true);
  }
  if (args.size() < 2) {
    std::fputs(kHelp.data(), stderr);
    return agentbox::kExitRefused;
  }
  const std::string_view command = args[1];
  const auto rest = args.subspan(2);
  if (command == "--version" || command == "version") {
    std::printf("agentbox %s\n", AGENTBOX_VERSION);
    return 0;
  }
  if (command == "--help" || command == "-h" || command == "help") {
    std::fputs(kHelp.data(), stdout);
    return 0;
  }
  if (command == "run") return agentbox::RunCommand(rest);
  if (command == "exec") return agentbox::ExecCommand(rest, /*as_lxc_exec=*/false);
  if (command == "policy") return agentbox::PolicyCommand(rest);
  if (command == "demo") return agentbox::DemoCommand(rest);
  if (command == "doctor") return agentbox::DoctorCommand(rest);
  if (command == "mcp") return agentbox::McpCommand(rest);
  if (command == "audit") return agentbox::AuditCommand(rest);
  if (command == agentbox::mcp::kFileHelperCommand) {
    // Runs inside the sandbox, where seccomp denies ptrace: exit without the sanitizers'
    // at-exit leak check (which needs it) in ASan builds.
    const int rc = agentbox::mcp::FileHelperMain(rest);
    std::fflush(nullptr);
    ::_exit(rc);
  }
  std::fprintf(stderr, "agentbox: unknown command '%.*s' (see agentbox --help)\n",
               static_cast<int>(command.size()), command.data());
  return agentbox::kExitRefused;
}
