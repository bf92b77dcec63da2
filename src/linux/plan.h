// SandboxPlan: everything a sandboxed run will do, computed in the parent from the
// effective Policy before any process is created. Pure data (apart from lstat/readlink of
// the host paths it lists), so it can be printed (--explain) and tested.
//
//   SandboxRequest req{.argv = {"python3", "-c", "print(1)"}, .env = {"PATH=/usr/bin"}};
//   auto plan = BuildSandboxPlan(clamped.policy, req);
//   if (!plan) return plan.error();        // e.g. --cwd not visible inside
//   std::string text = DescribePlan(*plan);
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "base/result.h"
#include "linux/landlock.h"
#include "linux/mount.h"
#include "linux/rlimit.h"
#include "linux/userns.h"
#include "policy/policy.h"

namespace agentbox {

struct SandboxRequest {
  std::vector<std::string> argv;   // argv[0] is looked up in the sandbox's PATH
  std::vector<std::string> env;    // "K=V": the whole environment, nothing is inherited
  std::optional<std::string> cwd;  // inside the sandbox; default: caller_cwd if visible
  std::string caller_cwd;
  // Files bound read-only at their own path whatever the policy says: agentbox's own binary,
  // which performs the MCP file operations inside the sandbox (mcp/file_helper.h).
  std::vector<std::string> internal_readonly_files;
  // Proxy mode for MXC configs that name their own proxy ("host:port"): every connection to
  // the bridge is relayed to it, instead of being checked against the domain lists.
  std::string upstream_proxy;
};

// A path inside the sandbox that the child itself opens for a Landlock rule (the sandbox's
// own mounts, which do not exist in the parent).
struct ChildLandlockRule {
  std::string path;
  bool writable;
  bool directory;
};

// Proxy mode: the bridge's listeners on the sandbox's loopback (HTTP proxy, SOCKS5).
inline constexpr uint16_t kBridgeHttpPort = 3128;
inline constexpr uint16_t kBridgeSocksPort = 1080;

struct SandboxPlan {
  std::vector<std::string> argv;
  std::vector<std::string> env;
  std::string path_env;  // PATH used to find argv[0]
  std::string cwd;
  bool new_network_namespace = true;
  bool proxy_bridge = false;  // pid 1 opens the bridge listeners and hands them over
  Network egress;             // proxy mode: what the supervisor's proxy lets through
  std::string upstream_proxy;
  IdMaps id_maps;
  MountPlan mounts;
  LandlockPlan landlock;  // host paths, rules built in the parent
  std::vector<ChildLandlockRule> child_landlock;
  LimitRequest limits;
  uint64_t timeout_ms = kDefaultTimeoutMs;
  std::string hostname = "agentbox";
};

[[nodiscard]] Result<SandboxPlan> BuildSandboxPlan(const Policy& policy, const SandboxRequest& req);

// Human-readable: mounts in order, layers, environment, limits.
[[nodiscard]] std::string DescribePlan(const SandboxPlan& plan);

}  // namespace agentbox
