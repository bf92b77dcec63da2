// agentbox exec [OPTIONS] [CONFIG_PATH], also installed as `lxc-exec`: runs one MXC
// one-shot config (reference/MXC-CONTRACT.md) in agentbox's own sandbox. The config is
// parsed strictly (config/mxc_config.h), mapped onto a Request, clamped with the request as
// its own ceiling (as `agentbox run` without a ceiling), planned and run by RunSandbox:
// the same sandbox as every other face, not a second one.
//
// Exit status: the program's own; 128+N after signal N; 1 config parse error ("Request
// error" / "Configuration parse error: ..."); 2 usage error; 255 anything refused or failed
// after parsing (the reason, then {"error":{"code":"backend_error","message":...}}).
#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstdio>
#include <cstring>
#include <ctime>
#include <nlohmann/json.hpp>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "base/base64.h"
#include "base/fd.h"
#include "cli/commands.h"
#include "cli/flags.h"
#include "config/mxc_config.h"
#include "config/policy_json.h"
#include "config/strict_json.h"
#include "executor/sandbox.h"
#include "linux/landlock.h"
#include "linux/plan.h"
#include "policy/canonicalize.h"
#include "policy/clamp.h"

namespace agentbox {
namespace {

constexpr int kExitParse = 1;
constexpr int kExitUsage = 2;
constexpr int kExitBackend = 255;

// The supervisor sleeps at most this long between checks, whatever the timeout: it keeps
// poll()'s int timeout in range for MXC timeouts up to 2^32-1 ms and for "no timeout".
constexpr uint64_t kWakeIntervalMs = 3'600'000;

struct ExecFlags {
  std::optional<std::string> config;
  std::optional<std::string> config_base64;
  std::optional<std::string> log_file;
  bool dry_run = false;
  bool debug = false;
  bool experimental = false;
  bool allow_testing_features = false;
  bool available_backends = false;
  bool version = false;
  bool short_help = false;
};

std::string HelpText(std::string_view program) {
  std::string out =
      "Run an MXC one-shot config in agentbox's sandbox (a drop-in for MXC's lxc-exec)\n\n"
      "Usage: ";
  out += program;
  out +=
      " [OPTIONS] [CONFIG_PATH]\n\n"
      "Arguments:\n"
      "  [CONFIG_PATH]  Path to config JSON file, or - to read it from stdin\n\n"
      "Options:\n"
      "      --config <CONFIG>                Path to config JSON file\n"
      "      --config-base64 <CONFIG_BASE64>  Base64-encoded JSON config (standard, padded)\n"
      "      --debug                          Diagnostics on stderr (never on stdout)\n"
      "      --experimental                   Accepted for compatibility; enables nothing\n"
      "      --allow-testing-features         Allow testing-only features "
      "(network.proxy.builtinTestServer, which agentbox does not have)\n"
      "      --dry-run                        Make every check a run makes, then exit without "
      "executing\n"
      "      --log-file <LOG_FILE>            Append diagnostics to this file (created if "
      "missing)\n"
      "      --available-backends             Print the containment backends as JSON\n"
      "      --version                        Print the version\n"
      "  -h, --help                           Print help\n\n"
      "Precedence: --config-base64, then --config, then CONFIG_PATH.\n"
      "Exit status: the program's own; 128+N if it died of signal N; 1 config parse error;\n"
      "2 usage error; 255 refused, failed or timed out (reason and a JSON error line on "
      "stderr).\n";
  return out;
}

int UsageError(std::string_view program, std::string_view message) {
  std::fprintf(stderr,
               "error: %.*s\n\nUsage: %.*s [OPTIONS] [CONFIG_PATH]\n\nFor more information, try "
               "'--help'.\n",
               static_cast<int>(message.size()), message.data(), static_cast<int>(program.size()),
               program.data());
  return kExitUsage;
}

int ParseFailure(std::string_view message) {
  std::fprintf(stderr, "Request error\nConfiguration parse error: %.*s\n",
               static_cast<int>(message.size()), message.data());
  return kExitParse;
}

// Diagnostics: to stderr with --debug, appended to --log-file; never to stdout, which
// belongs to the program. Nothing secret is written: the script's length, not its text;
// variable names, not values.
class Diagnostics {
 public:
  Diagnostics(bool debug, const std::optional<std::string>& log_file) : debug_(debug) {
    if (!log_file) return;
    log_.Reset(
        ::open(log_file->c_str(), O_WRONLY | O_APPEND | O_CREAT | O_CLOEXEC | O_NOCTTY, 0600));
    if (!log_) {
      std::fprintf(stderr, "Warning: could not open log file %s: %s\n",
                   QuoteForMessage(*log_file).c_str(), std::strerror(errno));
    }
  }

  [[nodiscard]] bool enabled() const { return debug_ || log_; }

  void Line(std::string_view text) const {
    if (debug_) {
      std::fprintf(stderr, "[agentbox exec] %.*s\n", static_cast<int>(text.size()), text.data());
    }
    if (log_) {
      char stamp[32] = "";
      const std::time_t now = std::time(nullptr);
      std::tm tm{};
      if (::gmtime_r(&now, &tm) != nullptr) {
        std::strftime(stamp, sizeof(stamp), "%Y-%m-%dT%H:%M:%SZ", &tm);
      }
      std::string line = std::string(stamp) + " agentbox exec[" + std::to_string(::getpid()) +
                         "]: " + std::string(text) + "\n";
      [[maybe_unused]] const ssize_t n = ::write(log_.get(), line.data(), line.size());
    }
  }

 private:
  bool debug_;
  UniqueFd log_;
};

// Validation errors, refusals, timeouts and sandbox failures: the reason, then the JSON
// envelope MXC's SDKs look for, each on its own line.
int Refuse(const Diagnostics& diag, const std::string& reason) {
  diag.Line("refused: " + reason);
  const nlohmann::json envelope = {{"error", {{"code", "backend_error"}, {"message", reason}}}};
  std::fprintf(stderr, "%s\n%s\n", reason.c_str(), DumpJson(envelope).c_str());
  return kExitBackend;
}

Result<std::string> ReadAll(int fd, const std::string& name) {
  std::string text;
  char buf[65536];
  while (true) {
    const ssize_t n = ::read(fd, buf, sizeof(buf));
    if (n < 0 && errno == EINTR) continue;
    if (n < 0) return ErrnoError(ErrorCode::kPolicy, "read", "cannot read " + name);
    if (n == 0) return text;
    text.append(buf, static_cast<size_t>(n));
    if (text.size() > kMaxJsonBytes) {
      return MakeError(ErrorCode::kPolicy, name + " is larger than the limit of " +
                                               std::to_string(kMaxJsonBytes) + " bytes");
    }
  }
}

Result<std::string> ReadConfigFile(const std::string& path) {
  UniqueFd fd(::open(path.c_str(), O_RDONLY | O_CLOEXEC | O_NOCTTY));
  if (!fd) {
    if (errno == ENOENT)
      return MakeError(ErrorCode::kPolicy, "Configuration file not found: " + path);
    return ErrnoError(ErrorCode::kPolicy, "open", "cannot open the configuration file " + path);
  }
  return ReadAll(fd.get(), path);
}

// --config-base64 puts the whole config (script and environment values) on this
// process's argv, readable by every local user in /proc/<pid>/cmdline. The SDKs pass it
// that way, so the value is wiped from argv as soon as it has been copied; what remains is
// the moment between exec and this call.
void WipeBase64FromArgv(std::span<char* const> args) {
  for (size_t i = 0; i < args.size(); ++i) {
    char* arg = args[i];
    constexpr std::string_view kFlag = "--config-base64";
    if (std::strncmp(arg, "--config-base64=", kFlag.size() + 1) == 0) {
      std::memset(arg + kFlag.size() + 1, 0, std::strlen(arg + kFlag.size() + 1));
    } else if (kFlag == arg && i + 1 < args.size()) {
      std::memset(args[i + 1], 0, std::strlen(args[i + 1]));
    }
  }
}

// As lxc-exec (clap), an option given twice is a usage error; the name, or nullopt.
std::optional<std::string> RepeatedOption(std::span<char* const> args) {
  std::vector<std::string_view> seen;
  for (char* const arg_ptr : args) {
    std::string_view arg = arg_ptr;
    if (arg == "--") break;
    if (arg.size() < 2 || arg[0] != '-') continue;
    arg = arg.substr(0, arg.find('='));
    if (arg == "-h") arg = "--help";
    if (std::find(seen.begin(), seen.end(), arg) != seen.end()) return std::string(arg);
    seen.push_back(arg);
  }
  return std::nullopt;
}

nlohmann::json AvailableBackends() {
  nlohmann::json backends = nlohmann::json::array();
  const nlohmann::json capabilities = {
      {"filesystem", {{"readonlyPaths", true}, {"readwritePaths", true}, {"deniedPaths", true}}},
      {"network",
       {{"block", true},
        {"allow", true},
        {"proxy", true},
        {"allowedHosts", true},
        {"blockedHosts", true},
        {"egressRules", false}}},
      {"timeout", true},
      {"seccomp", true},
      {"landlockAbi", LandlockAbi()},
      {"capabilitiesDropped", true}};
  for (const MxcContainment c : kAllMxcContainments) {
    nlohmann::json entry = {{"name", MxcContainmentName(c)}, {"available", RunsAgentboxSandbox(c)}};
    if (RunsAgentboxSandbox(c)) {
      entry["implementation"] = "agentbox";
      entry["capabilities"] = capabilities;
    } else {
      entry["reason"] = "not available on this host: agentbox provides only its own Linux sandbox";
    }
    backends.push_back(std::move(entry));
  }
  return {{"executor", "agentbox"},
          {"version", AGENTBOX_VERSION},
          {"schemaVersions", {{"min", "0.6"}, {"max", "0.9"}}},
          {"backends", std::move(backends)}};
}

// Each path resolves (read-only and read-write ones must exist; denied ones need not), or
// the error names its MXC field. Clamp resolves them again, naming only the path.
Status CheckPaths(const MxcConfig& config, const PathContext& ctx) {
  const std::pair<const std::vector<std::string>*, const char*> lists[] = {
      {&config.readwrite_paths, "readwritePaths"},
      {&config.readonly_paths, "readonlyPaths"},
      {&config.denied_paths, "deniedPaths"}};
  for (const auto& [paths, name] : lists) {
    for (size_t i = 0; i < paths->size(); ++i) {
      const std::string& path = (*paths)[i];
      auto canonical = paths == &config.denied_paths ? CanonicalizeMaybeMissing(path, ctx)
                                                     : Canonicalize(path, ctx);
      if (!canonical) {
        return MakeError(ErrorCode::kPolicy, "/filesystem/" + std::string(name) + "/" +
                                                 std::to_string(i) + ": " +
                                                 canonical.error().Message());
      }
    }
  }
  return {};
}

// Mirrors BuildSandboxPlan's rule, to name the MXC field when the directory is not visible.
bool VisibleInSandbox(const Policy& policy, const std::string& path) {
  if (path == "/" || path == "/tmp") return true;
  for (const auto* list : {&policy.filesystem.readonly, &policy.filesystem.readwrite}) {
    for (const std::string& root : *list) {
      if (IsWithin(path, root)) return true;
    }
  }
  return false;
}

std::string JoinList(const std::vector<std::string>& items) {
  std::string out = "[";
  for (const std::string& item : items) {
    if (out.size() > 1) out += ", ";
    out += item;
  }
  return out + "]";
}

void DescribeConfig(const Diagnostics& diag, const MxcConfig& config, const MxcRun& run,
                    std::string_view source) {
  diag.Line("config from " + std::string(source) + ", version " +
            (config.version ? config.version->text : std::string("(none)")) + ", containment " +
            MxcContainmentName(config.containment));
  diag.Line("script: " + std::to_string(config.command_line.size()) +
            " bytes, run as /bin/sh -c (handed over in the environment, not on argv)");
  diag.Line("cwd: " + config.cwd.value_or("(the caller's if visible, else /)"));
  diag.Line("environment (names only): " + JoinList(run.env_names));
  diag.Line("timeout: " + (config.timeout_ms == 0 ? std::string("none")
                                                  : std::to_string(config.timeout_ms) + " ms"));
}

void DescribePolicy(const Diagnostics& diag, const ClampResult& clamped,
                    const std::string& upstream_proxy) {
  const Policy& p = clamped.policy;
  diag.Line("policy: readonly " + JoinList(p.filesystem.readonly) + ", readwrite " +
            JoinList(p.filesystem.readwrite) + ", denied " + JoinList(p.filesystem.denied) +
            ", network " + NetworkModeName(p.network.mode));
  if (p.network.mode == NetworkMode::kProxy) {
    diag.Line("egress: through " +
              (upstream_proxy.empty() ? std::string("agentbox's own proxy")
                                      : "the config's proxy " + upstream_proxy) +
              "; allow " +
              (p.network.allow_domains.empty() && !upstream_proxy.empty()
                   ? std::string("every host")
                   : JoinList(p.network.allow_domains)) +
              ", addresses " + JoinList(p.network.allow_cidrs) + ", deny " +
              JoinList(p.network.deny_domains));
  }
  for (const Decision& d : clamped.decisions) {
    diag.Line("decision: " + d.subject + ": asked " + d.asked + ", granted " + d.granted + ": " +
              d.reason);
  }
}

// DescribePlan with the environment's values (the script, the config's secrets) redacted.
void DescribeSandbox(const Diagnostics& diag, const SandboxPlan& plan) {
  SandboxPlan shown = plan;
  for (std::string& kv : shown.env) {
    const size_t eq = kv.find('=');
    if (eq == std::string::npos) continue;
    const size_t bytes = kv.size() - eq - 1;
    kv.resize(eq + 1);
    kv += '<';
    kv += std::to_string(bytes);
    kv += " bytes>";
  }
  const std::string text = DescribePlan(shown);
  size_t start = 0;
  while (start < text.size()) {
    const size_t end = std::min(text.find('\n', start), text.size());
    diag.Line("plan: " + text.substr(start, end - start));
    start = end + 1;
  }
}

}  // namespace

int ExecCommand(std::span<char* const> args, bool as_lxc_exec) {
  const std::string program = as_lxc_exec ? "lxc-exec" : "agentbox exec";
  ExecFlags f;
  Flags flags(program);
  flags.Value("--config", &f.config, "CONFIG", "path to config JSON file");
  flags.Value("--config-base64", &f.config_base64, "CONFIG_BASE64", "base64-encoded config");
  flags.Switch("--dry-run", &f.dry_run, "validate, then exit without executing");
  flags.Switch("--debug", &f.debug, "diagnostics on stderr");
  flags.Value("--log-file", &f.log_file, "LOG_FILE", "append diagnostics to this file");
  flags.Switch("--experimental", &f.experimental, "accepted; enables nothing");
  flags.Switch("--allow-testing-features", &f.allow_testing_features, "testing-only features");
  flags.Switch("--available-backends", &f.available_backends, "print the backends as JSON");
  flags.Switch("--version", &f.version, "print the version");
  flags.Switch("-h", &f.short_help, "print help");
  auto positional = flags.Parse(args, /*allow_positional=*/true);
  WipeBase64FromArgv(args);
  if (!positional) return UsageError(program, positional.error().context);
  if (auto repeated = RepeatedOption(args)) {
    return UsageError(program, "the argument '" + *repeated + "' cannot be used multiple times");
  }
  if (flags.HelpRequested() || f.short_help) {
    std::fputs(HelpText(program).c_str(), stdout);
    return 0;
  }
  if (f.version) {
    std::printf("%s (agentbox %s; MXC config schemas 0.6.0-alpha to 0.8.0-alpha)\n",
                program.c_str(), AGENTBOX_VERSION);
    return 0;
  }
  if (f.available_backends) {
    std::printf("%s\n", DumpJson(AvailableBackends(), 2).c_str());
    return 0;
  }
  if (positional->size() > 1) {
    return UsageError(program, "unexpected argument " + QuoteForMessage((*positional)[1]) +
                                   " (one CONFIG_PATH at most)");
  }

  const Diagnostics diag(f.debug, f.log_file);

  // The config: --config-base64, else --config, else CONFIG_PATH ("-": stdin).
  std::string source;
  Result<std::string> text = std::string();
  if (f.config_base64) {
    source = "--config-base64";
    auto decoded = Base64Decode(*f.config_base64);  // strict: RFC 4648, padded
    f.config_base64->assign(f.config_base64->size(), '\0');
    if (!decoded) {
      return ParseFailure(
          "Failed to decode base64 configuration (standard alphabet, padded, no whitespace)");
    }
    text = std::move(*decoded);
  } else if (f.config || !positional->empty()) {
    source = f.config ? *f.config : positional->front();
    text = source == "-" && !f.config ? ReadAll(STDIN_FILENO, "stdin") : ReadConfigFile(source);
    if (source == "-" && !f.config) source = "stdin";
  } else {
    std::fputs(
        "Error: No config provided. Use a positional path, --config, --config-base64, or "
        "- for stdin\n",
        stderr);
    return kExitParse;
  }
  if (!text) return ParseFailure(text.error().Message());

  auto config = ParseMxcConfig(*text, source);
  std::fill(text->begin(), text->end(), '\0');
  if (!config) {
    diag.Line("parse error: " + config.error().Message());
    return ParseFailure(config.error().Message());
  }

  // Everything below is a check a real run makes; --dry-run stops just before running.
  auto fail = [&](const std::string& reason) {
    if (!f.dry_run) return Refuse(diag, reason);
    diag.Line("dry run: " + reason);
    std::fprintf(stderr, "%s\n", reason.c_str());
    std::fputs("Dry run completed. Result: validation failed\n", stdout);
    std::fflush(stdout);
    return kExitBackend;
  };
  auto run =
      MapMxcConfig(*config, MxcMapOptions{.allow_testing_features = f.allow_testing_features});
  if (!run) return fail(run.error().Message());
  if (diag.enabled()) DescribeConfig(diag, *config, *run, source);

  // The request is its own ceiling: the config is the caller's, as `agentbox run` without
  // a ceiling. Canonicalization (SEC-1), the refusal of a writable / or home (SEC-21) and
  // the protected paths inside grants (SEC-2) apply.
  const PathContext ctx = HostPathContext();
  if (Status s = CheckPaths(*config, ctx); !s) return fail(s.error().Message());
  auto clamped = Clamp(Ceiling{run->request.doc}, run->request, ctx);
  if (!clamped) {
    // The request is its own ceiling, and Clamp resolves the ceiling first: drop that name.
    std::string message = clamped.error().Message();
    if (message.starts_with("ceiling: ")) message.erase(0, 9);
    return fail("filesystem: " + message);
  }
  if (diag.enabled()) DescribePolicy(diag, *clamped, run->upstream_proxy);

  if (run->cwd && !VisibleInSandbox(clamped->policy, *run->cwd)) {
    return fail("process.cwd " + QuoteForMessage(*run->cwd) +
                " is not visible in the sandbox: list it (or a directory above it) in "
                "filesystem.readonlyPaths or filesystem.readwritePaths");
  }
  SandboxRequest sandbox_request;
  sandbox_request.argv = run->argv;
  sandbox_request.env = run->env;
  sandbox_request.cwd = run->cwd;
  sandbox_request.caller_cwd = ctx.cwd;
  sandbox_request.upstream_proxy = run->upstream_proxy;
  auto plan = BuildSandboxPlan(clamped->policy, sandbox_request);
  if (!plan) return fail(plan.error().Message());
  // argv[0] stays "sh" (what $0 shows, as in lxc-exec); the shell is always /bin/sh, never
  // looked up in the config's PATH.
  plan->path_env = "/bin";
  if (diag.enabled()) DescribeSandbox(diag, *plan);

  if (f.dry_run) {
    diag.Line("dry run: validation passed");
    std::fputs("Dry run completed. Result: validation passed\n", stdout);
    std::fflush(stdout);
    return 0;
  }

  RunOptions options;
  options.forward_signals = true;  // SIGINT/SIGTERM/SIGHUP/SIGQUIT reach the program
  options.on_progress = [](uint64_t /*elapsed_ms*/) {};
  options.progress_interval_ms = kWakeIntervalMs;
  std::fflush(stdout);
  auto result = RunSandbox(*plan, options);
  if (!result) return Refuse(diag, result.error().Message());
  for (const ConnectionRecord& c : result->connections) {
    diag.Line("egress: " + c.protocol + " " + (c.host.empty() ? std::string("?") : c.host) + ":" +
              std::to_string(c.port) + (c.allowed ? " allowed" : " refused") +
              (c.address.empty() ? std::string() : " via " + c.address) +
              (c.reason.empty() ? std::string() : ": " + c.reason));
  }
  diag.Line(std::string("outcome: ") + OutcomeName(result->outcome) + ", " +
            std::to_string(result->duration_ms) + " ms, limits by " + result->enforcement.limits +
            ", landlock ABI " + std::to_string(result->enforcement.landlock_abi));
  switch (result->outcome) {
    case Outcome::kExited:
      return result->exit_code;
    case Outcome::kSignaled:
      return 128 + result->signal;
    case Outcome::kTimedOut:
      // SEC-16: the timeout killed the sandbox's pid 1, and with it every process in it.
      return Refuse(diag, "script timed out after " + std::to_string(config->timeout_ms) + "ms");
    case Outcome::kSetupFailed:
    case Outcome::kExecFailed:
    case Outcome::kCancelled:
      break;
  }
  return Refuse(diag, result->error.Message());
}

}  // namespace agentbox
