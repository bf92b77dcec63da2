// agentbox run [OPTIONS] -- CMD [ARGS...]: run one command in a sandbox.
#include <unistd.h>

#include <cstdio>
#include <cstdlib>
#include <map>
#include <string>

#include "cli/commands.h"
#include "cli/flags.h"
#include "config/policy_json.h"
#include "executor/sandbox.h"
#include "linux/plan.h"
#include "policy/clamp.h"

namespace agentbox {
namespace {

constexpr const char* kSynopsis = "[OPTIONS] -- CMD [ARGS...]";

struct RunFlags {
  std::vector<std::string> ro, rw, deny, env, pass_env, require;
  std::vector<std::string> allow_domains, deny_domains, resolve, allow_cidrs;
  std::optional<std::string> net, cwd, policy, ceiling;
  std::optional<uint64_t> timeout, pids, memory, cpu_seconds;
  bool json = false;
  bool explain = false;
};

// The request: the --policy file if any, then the flags on top of it.
Result<Request> BuildRequest(const RunFlags& f) {
  Request request;
  if (f.policy) {
    auto doc = LoadPolicyFile(*f.policy);
    if (!doc) return doc.error();
    request.doc = std::move(*doc);
  }
  FilesystemRules& fs = request.doc.filesystem;
  fs.readonly.insert(fs.readonly.end(), f.ro.begin(), f.ro.end());
  fs.readwrite.insert(fs.readwrite.end(), f.rw.begin(), f.rw.end());
  fs.denied.insert(fs.denied.end(), f.deny.begin(), f.deny.end());
  if (f.net) {
    if (*f.net == "block") {
      request.doc.network = NetworkWithMode(NetworkMode::kBlock);
    } else if (*f.net == "allow") {
      request.doc.network = NetworkWithMode(NetworkMode::kAllow);
    } else if (*f.net == "proxy") {
      request.doc.network = NetworkWithMode(NetworkMode::kProxy);
    } else {
      return MakeError(ErrorCode::kUsage,
                       "--net: expected block, proxy or allow, got \"" + *f.net + "\"");
    }
  }
  const bool proxy_flags = !f.allow_domains.empty() || !f.deny_domains.empty() ||
                           !f.resolve.empty() || !f.allow_cidrs.empty();
  if (proxy_flags) {
    if (!request.doc.network || request.doc.network->mode != NetworkMode::kProxy) {
      return MakeError(ErrorCode::kUsage,
                       "--allow-domain, --deny-domain, --resolve and --allow-cidr need --net proxy "
                       "(or a proxy network in --policy)");
    }
    Network& net = *request.doc.network;
    net.allow_domains.insert(net.allow_domains.end(), f.allow_domains.begin(),
                             f.allow_domains.end());
    net.deny_domains.insert(net.deny_domains.end(), f.deny_domains.begin(), f.deny_domains.end());
    net.resolve.insert(net.resolve.end(), f.resolve.begin(), f.resolve.end());
    net.allow_cidrs.insert(net.allow_cidrs.end(), f.allow_cidrs.begin(), f.allow_cidrs.end());
  }
  if (f.timeout) {
    if (*f.timeout == 0) return MakeError(ErrorCode::kUsage, "--timeout must be at least 1 ms");
    request.doc.timeout_ms = f.timeout;
  }
  for (const auto* limit : {&f.pids, &f.memory, &f.cpu_seconds}) {
    if (*limit && **limit == 0) {
      return MakeError(ErrorCode::kUsage, "--pids, --memory and --cpu-seconds must be at least 1");
    }
  }
  if (f.pids) request.doc.limits.pids = f.pids;
  if (f.memory) request.doc.limits.memory_bytes = f.memory;
  if (f.cpu_seconds) request.doc.limits.cpu_seconds = f.cpu_seconds;
  return request;
}

// The ceiling: --ceiling, else the AGENTBOX_* variables, else (the caller is the operator)
// the request itself, so only canonicalization, validation and protected paths apply.
Result<Ceiling> RunCeiling(const RunFlags& f, const Request& request, const PathContext& ctx) {
  const bool env_ceiling = std::getenv("AGENTBOX_READONLY_PATHS") != nullptr ||
                           std::getenv("AGENTBOX_READWRITE_PATHS") != nullptr ||
                           std::getenv("AGENTBOX_TIMEOUT_MS") != nullptr ||
                           std::getenv("AGENTBOX_NETWORK") != nullptr ||
                           std::getenv("AGENTBOX_ALLOW_DOMAINS") != nullptr;
  if (f.ceiling || env_ceiling) return LoadOperatorCeiling(f.ceiling, ctx);
  return Ceiling{request.doc};
}

// SEC-19: the sandbox's whole environment; nothing of the host's is inherited unless named.
Result<std::vector<std::string>> BuildEnvironment(const RunFlags& f) {
  std::map<std::string, std::string> env{
      {"PATH", "/usr/bin:/bin"}, {"HOME", "/tmp"}, {"LANG", "C.UTF-8"}};
  if (const char* term = std::getenv("TERM"); term != nullptr && ::isatty(STDOUT_FILENO) == 1) {
    env["TERM"] = term;
  }
  for (const std::string& name : f.pass_env) {
    if (name.empty() || name.find('=') != std::string::npos) {
      return MakeError(ErrorCode::kUsage, "--pass-env takes a variable name, got \"" + name + "\"");
    }
    if (const char* value = std::getenv(name.c_str())) env[name] = value;
  }
  for (const std::string& kv : f.env) {
    const size_t eq = kv.find('=');
    if (eq == std::string::npos || eq == 0) {
      return MakeError(ErrorCode::kUsage, "--env takes K=V, got \"" + kv + "\"");
    }
    env[kv.substr(0, eq)] = kv.substr(eq + 1);
  }
  std::vector<std::string> out;
  out.reserve(env.size());
  for (const auto& [k, v] : env) out.push_back(k + "=" + v);
  return out;
}

Result<std::vector<Layer>> ParseRequired(const std::vector<std::string>& names,
                                         const Policy& policy) {
  std::vector<Layer> out;
  for (const std::string& name : names) {
    if (name == "landlock") {
      out.push_back(Layer::kLandlock);
    } else if (name == "cgroup") {
      out.push_back(Layer::kCgroup);
    } else if (name == "netns") {
      if (policy.network.mode == NetworkMode::kAllow) {
        return MakeError(ErrorCode::kUnsupported, "--require netns conflicts with --net allow");
      }
    } else if (name != "namespaces" && name != "pivot_root" && name != "seccomp" &&
               name != "caps" && name != "no_new_privs" && name != "rlimits") {
      return MakeError(ErrorCode::kUsage,
                       "--require: unknown layer \"" + name +
                           "\" (namespaces, pivot_root, landlock, seccomp, caps, no_new_privs, "
                           "cgroup, rlimits, netns)");
    }
    // The others are always applied: a run without them never starts.
  }
  return out;
}

nlohmann::json EnforcementToJson(const Enforcement& e) {
  return {{"namespaces", e.namespaces},     {"network_namespace", e.network_namespace},
          {"pivot_root", e.pivot_root},     {"landlock_abi", e.landlock_abi},
          {"seccomp", e.seccomp},           {"capabilities_dropped", e.capabilities_dropped},
          {"no_new_privs", e.no_new_privs}, {"limits", e.limits}};
}

void PrintJson(const RunResult& r, const ClampResult& clamp) {
  nlohmann::json out = {
      {"outcome", OutcomeName(r.outcome)},
      {"exit_code", ExitCodeFor(r)},
      {"signal", r.outcome == Outcome::kSignaled ? nlohmann::json(r.signal) : nlohmann::json()},
      {"timed_out", r.outcome == Outcome::kTimedOut},
      {"duration_ms", r.duration_ms},
      {"stdout", r.out.data},
      {"stderr", r.err.data},
      {"stdout_truncated", r.out.truncated},
      {"stderr_truncated", r.err.truncated},
      {"policy", PolicyToJson(clamp.policy)},
      {"decisions", nlohmann::json::array()},
      {"enforcement", EnforcementToJson(r.enforcement)},
      {"network", ConnectionsToJson(r.connections)}};
  for (const Decision& d : clamp.decisions) out["decisions"].push_back(DecisionToJson(d));
  if (r.outcome == Outcome::kSetupFailed || r.outcome == Outcome::kExecFailed) {
    out["error"] = {{"code", ErrorCodeName(r.error.code)}, {"message", r.error.Message()}};
  }
  std::printf("%s\n", DumpJson(out).c_str());
}

}  // namespace

int RunCommand(std::span<char* const> args) {
  RunFlags f;
  Flags flags("agentbox run");
  flags.Repeated("--ro", &f.ro, "PATH", "grant PATH read-only (repeatable)");
  flags.Repeated("--rw", &f.rw, "PATH", "grant PATH read-write (repeatable)");
  flags.Repeated("--deny", &f.deny, "PATH", "hide PATH even inside a grant (repeatable)");
  flags.Value("--net", &f.net, "MODE", "block (default), proxy (by domain) or allow");
  flags.Repeated("--allow-domain", &f.allow_domains, "D",
                 "proxy: allow host D or *.suffix, optionally :port (repeatable)");
  flags.Repeated("--deny-domain", &f.deny_domains, "D", "proxy: refuse D, even if allowed");
  flags.Repeated("--resolve", &f.resolve, "NAME=IP", "proxy: resolve NAME to IP (as curl)");
  flags.Repeated("--allow-cidr", &f.allow_cidrs, "CIDR",
                 "proxy: allow this range although it is loopback/private/link-local");
  flags.Number("--timeout", &f.timeout, "MS", "kill the whole sandbox after MS milliseconds");
  flags.Value("--cwd", &f.cwd, "DIR", "working directory inside the sandbox");
  flags.Repeated("--env", &f.env, "K=V", "set a variable in the sandbox (repeatable)");
  flags.Repeated("--pass-env", &f.pass_env, "NAME", "pass a host variable through (repeatable)");
  flags.Number("--pids", &f.pids, "N", "at most N processes (default 256)");
  flags.Number("--memory", &f.memory, "BYTES", "memory limit");
  flags.Number("--cpu-seconds", &f.cpu_seconds, "N", "CPU time limit");
  flags.Value("--policy", &f.policy, "FILE", "request from a policy JSON file (flags add to it)");
  flags.Value("--ceiling", &f.ceiling, "FILE", "operator ceiling to clamp the request to");
  flags.Repeated("--require", &f.require, "LAYER", "refuse to run unless LAYER is applied");
  flags.Switch("--json", &f.json, "print one JSON result instead of passing output through");
  flags.Switch("--explain", &f.explain, "print the plan and run nothing");
  auto command = flags.Parse(args, /*allow_positional=*/true);
  if (!command) return Fail(command.error());
  if (flags.HelpRequested()) {
    std::fputs(flags.Usage(kSynopsis).c_str(), stdout);
    return 0;
  }
  if (command->empty()) {
    return Fail(MakeError(ErrorCode::kUsage,
                          "agentbox run: no command given (agentbox run [OPTIONS] -- CMD)"));
  }

  const PathContext ctx = HostPathContext();
  auto request = BuildRequest(f);
  if (!request) return Fail(request.error());
  auto ceiling = RunCeiling(f, *request, ctx);
  if (!ceiling) return Fail(ceiling.error());
  auto clamped = Clamp(*ceiling, *request, ctx);
  if (!clamped) return Fail(clamped.error());
  auto env = BuildEnvironment(f);
  if (!env) return Fail(env.error());
  auto required = ParseRequired(f.require, clamped->policy);
  if (!required) return Fail(required.error());

  SandboxRequest sandbox_request{*command, *env, f.cwd, ctx.cwd, {}, {}};
  auto plan = BuildSandboxPlan(clamped->policy, sandbox_request);
  if (!plan) return Fail(plan.error());
  if (f.explain) {
    std::fputs(DescribePlan(*plan).c_str(), stdout);
    for (const Decision& d : clamped->decisions) {
      std::printf("decision: %s: asked %s, granted %s: %s\n", d.subject.c_str(), d.asked.c_str(),
                  d.granted.c_str(), d.reason.c_str());
    }
    return 0;
  }

  RunOptions options;
  options.capture_output = f.json;
  options.forward_signals = true;
  options.required = *required;
  auto result = RunSandbox(*plan, options);
  if (!result) return Fail(result.error());
  if (f.json) {
    PrintJson(*result, *clamped);
  } else if (result->outcome == Outcome::kSetupFailed) {
    return Fail(result->error);
  } else if (result->outcome == Outcome::kExecFailed) {
    std::fprintf(stderr, "agentbox: %s\n", result->error.Message().c_str());
  } else if (result->outcome == Outcome::kTimedOut) {
    std::fprintf(stderr, "agentbox: timed out after %llu ms; the sandbox was killed\n",
                 static_cast<unsigned long long>(plan->timeout_ms));
  }
  return ExitCodeFor(*result);
}

}  // namespace agentbox
