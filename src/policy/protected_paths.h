// Protected paths: places inside a grant that stay hidden or read-only anyway.
//
// Credentials (~/.ssh, ~/.aws, .git-credentials, ...) are hidden; files that make code run
// later outside the sandbox (.git/hooks, .git/config, shell rc files, .mcp.json, editor task
// files, user systemd units, ...) are read-only. Only the operator's ceiling can lift one, by
// naming the protected path itself.
//
//   FindProtectedPaths({"/home/u"}, "/home/u")
//     -> {"/home/u/.ssh", kNone, ...}, {"/home/u/.bashrc", kReadOnly, ...}, ...
#pragma once

#include <string>
#include <vector>

#include "policy/policy.h"

namespace agentbox {

struct ProtectedPath {
  std::string path;  // canonical
  Access cap;        // kNone (hidden) or kReadOnly
  std::string reason;

  bool operator==(const ProtectedPath&) const = default;
};

// SEC-2: protected paths are looked up under every granted root (the root itself, its
// ancestors on the way to a protected name, $HOME when it lies inside the grant, and git
// repositories nested up to three levels deep, at most 4096 directories searched). Only paths that
// exist can be protected: a mount needs a target. Returns canonical paths, sorted, without
// duplicates. `grants` must be canonical.
[[nodiscard]] std::vector<ProtectedPath> FindProtectedPaths(const std::vector<std::string>& grants,
                                                            const std::string& home);

}  // namespace agentbox
