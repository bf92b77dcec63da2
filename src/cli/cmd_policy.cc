// agentbox policy clamp: explain how a request is narrowed to the operator's ceiling.
#include <cstdio>
#include <string>

#include "cli/commands.h"
#include "cli/flags.h"
#include "config/policy_json.h"
#include "policy/clamp.h"

namespace agentbox {
namespace {

constexpr const char* kSynopsis = "clamp [--ceiling FILE] --request FILE [--json]";

void PrintPaths(const char* label, const std::vector<std::string>& paths) {
  for (const std::string& path : paths) std::printf("  %-11s %s\n", label, path.c_str());
}

std::string NetworkText(const Network& network) {
  std::string out = NetworkModeName(network.mode);
  if (network.mode != NetworkMode::kProxy) return out;
  out += " (allow:";
  for (const std::string& d : network.allow_domains) out += " " + d;
  if (network.allow_domains.empty()) out += " nothing";
  if (!network.deny_domains.empty()) {
    out += "; deny:";
    for (const std::string& d : network.deny_domains) out += " " + d;
  }
  return out + ")";
}

void PrintHuman(const ClampResult& result) {
  const Policy& p = result.policy;
  std::printf("Effective policy (system directories are always visible read-only):\n");
  if (p.filesystem.readonly.empty() && p.filesystem.readwrite.empty()) {
    std::printf("  (no paths granted)\n");
  }
  PrintPaths("read-write", p.filesystem.readwrite);
  PrintPaths("read-only", p.filesystem.readonly);
  PrintPaths("hidden", p.filesystem.denied);
  std::printf("  %-11s %s\n", "network", NetworkText(p.network).c_str());
  std::printf("  %-11s %llu ms\n", "timeout", static_cast<unsigned long long>(p.timeout_ms));
  if (p.limits.pids)
    std::printf("  %-11s %llu\n", "pids", static_cast<unsigned long long>(*p.limits.pids));
  if (p.limits.memory_bytes) {
    std::printf("  %-11s %llu bytes\n", "memory",
                static_cast<unsigned long long>(*p.limits.memory_bytes));
  }
  if (p.limits.cpu_seconds) {
    std::printf("  %-11s %llu s\n", "cpu", static_cast<unsigned long long>(*p.limits.cpu_seconds));
  }
  if (result.decisions.empty()) {
    std::printf("Decisions: none; the request was granted as asked.\n");
    return;
  }
  std::printf("Decisions (%zu):\n", result.decisions.size());
  for (const Decision& d : result.decisions) {
    std::printf("  %s: asked %s, granted %s\n    because %s\n", d.subject.c_str(), d.asked.c_str(),
                d.granted.c_str(), d.reason.c_str());
  }
}

int Clamp(std::span<char* const> args) {
  std::optional<std::string> ceiling_file;
  std::optional<std::string> request_file;
  bool json = false;
  Flags flags("agentbox policy clamp");
  flags.Value("--ceiling", &ceiling_file, "FILE",
              "operator ceiling (default: AGENTBOX_* variables, else the working directory)");
  flags.Value("--request", &request_file, "FILE", "the request to clamp (policy JSON)");
  flags.Switch("--json", &json, "print one JSON object {policy, decisions}");
  auto positional = flags.Parse(args, /*allow_positional=*/false);
  if (!positional) return Fail(positional.error());
  if (flags.HelpRequested()) {
    std::fputs(flags.Usage(kSynopsis).c_str(), stdout);
    return 0;
  }
  if (!request_file) {
    return Fail(MakeError(ErrorCode::kUsage, "agentbox policy clamp: --request FILE is required"));
  }
  const PathContext ctx = HostPathContext();
  auto ceiling = LoadOperatorCeiling(ceiling_file, ctx);
  if (!ceiling) return Fail(ceiling.error());
  auto request = LoadPolicyFile(*request_file);
  if (!request) return Fail(request.error());
  auto result = agentbox::Clamp(*ceiling, Request{std::move(*request)}, ctx);
  if (!result) return Fail(result.error());
  if (json) {
    std::printf("%s\n", DumpJson(ClampResultToJson(*result), 2).c_str());
  } else {
    PrintHuman(*result);
  }
  return 0;
}

}  // namespace

int PolicyCommand(std::span<char* const> args) {
  if (args.empty() || std::string_view(args[0]) == "--help") {
    std::printf("usage: agentbox policy %s\n", kSynopsis);
    return args.empty() ? kExitRefused : 0;
  }
  const std::string_view sub = args[0];
  if (sub == "clamp") return Clamp(args.subspan(1));
  return Fail(MakeError(ErrorCode::kUsage, "agentbox policy: unknown subcommand '" +
                                               std::string(sub) + "' (expected: clamp)"));
}

}  // namespace agentbox
