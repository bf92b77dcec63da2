#include "policy/protected_paths.h"

#include <dirent.h>
#include <sys/stat.h>

#include <algorithm>
#include <array>
#include <cstdlib>
#include <memory>
#include <string_view>

#include "policy/canonicalize.h"

namespace agentbox {
namespace {

struct ProtectedName {
  std::string_view relative;  // relative to the directory it lives in
  Access cap;
  bool in_repo;  // also looked for in each git repository directly inside a grant
};

constexpr std::string_view kCredential = "credential store: hidden inside every grant";
constexpr std::string_view kRunsCode =
    "runs code later outside the sandbox: read-only inside every grant";

constexpr std::array kProtectedNames{
    // Credentials: hidden.
    ProtectedName{".ssh", Access::kNone, false},
    ProtectedName{".aws", Access::kNone, false},
    ProtectedName{".azure", Access::kNone, false},
    ProtectedName{".gnupg", Access::kNone, false},
    ProtectedName{".kube", Access::kNone, false},
    ProtectedName{".docker/config.json", Access::kNone, false},
    ProtectedName{".netrc", Access::kNone, false},
    ProtectedName{".git-credentials", Access::kNone, false},
    ProtectedName{".config/gcloud", Access::kNone, false},
    ProtectedName{".config/gh", Access::kNone, false},
    ProtectedName{".password-store", Access::kNone, false},
    ProtectedName{".pgpass", Access::kNone, false},
    ProtectedName{".npmrc", Access::kNone, false},
    ProtectedName{".pypirc", Access::kNone, false},
    ProtectedName{".cargo/credentials", Access::kNone, false},
    ProtectedName{".cargo/credentials.toml", Access::kNone, false},
    ProtectedName{".vault-token", Access::kNone, false},
    ProtectedName{".local/share/keyrings", Access::kNone, false},
    ProtectedName{".local/state/agentbox", Access::kNone, false},  // the audit log
    // Code that runs later, outside the sandbox: read-only.
    ProtectedName{".git/hooks", Access::kReadOnly, true},
    ProtectedName{".git/config", Access::kReadOnly, true},
    ProtectedName{".gitconfig", Access::kReadOnly, false},
    ProtectedName{".config/git", Access::kReadOnly, false},
    ProtectedName{".bashrc", Access::kReadOnly, false},
    ProtectedName{".bash_profile", Access::kReadOnly, false},
    ProtectedName{".bash_login", Access::kReadOnly, false},
    ProtectedName{".bash_logout", Access::kReadOnly, false},
    ProtectedName{".profile", Access::kReadOnly, false},
    ProtectedName{".zshrc", Access::kReadOnly, false},
    ProtectedName{".zshenv", Access::kReadOnly, false},
    ProtectedName{".zprofile", Access::kReadOnly, false},
    ProtectedName{".zlogin", Access::kReadOnly, false},
    ProtectedName{".config/fish", Access::kReadOnly, false},
    ProtectedName{".config/autostart", Access::kReadOnly, false},
    ProtectedName{".config/systemd", Access::kReadOnly, false},
    ProtectedName{".config/agentbox", Access::kReadOnly, false},  // the operator's ceiling
    ProtectedName{".envrc", Access::kReadOnly, true},
    ProtectedName{".mcp.json", Access::kReadOnly, true},
    ProtectedName{".claude", Access::kReadOnly, true},
    ProtectedName{".cursor", Access::kReadOnly, true},
    ProtectedName{".vscode", Access::kReadOnly, true},
    ProtectedName{".idea", Access::kReadOnly, true},
};

std::string Join(std::string_view dir, std::string_view relative) {
  std::string out(dir);
  if (out != "/") out += '/';
  out += relative;
  return out;
}

class Finder {
 public:
  explicit Finder(const std::vector<std::string>& grants) : grants_(grants) {}

  // Records `base/name` if it exists and, once canonical, touches a grant.
  void Check(const std::string& base, const ProtectedName& name) {
    const std::string candidate = Join(base, name.relative);
    struct stat st {};
    if (::lstat(candidate.c_str(), &st) != 0) return;
    std::unique_ptr<char, decltype(&std::free)> resolved(::realpath(candidate.c_str(), nullptr),
                                                         &std::free);
    if (!resolved) return;
    const std::string canonical(resolved.get());
    const bool touches = std::any_of(grants_.begin(), grants_.end(), [&](const std::string& g) {
      return IsWithin(canonical, g) || IsWithin(g, canonical);
    });
    if (!touches) return;
    found_.push_back(
        {canonical, name.cap, std::string(name.cap == Access::kNone ? kCredential : kRunsCode)});
  }

  // All names at `base`.
  void CheckAll(const std::string& base, bool repo_names_only) {
    for (const ProtectedName& name : kProtectedNames) {
      if (!repo_names_only || name.in_repo) Check(base, name);
    }
  }

  // Names at an ancestor `base` of `grant` that could reach into or contain the grant: only
  // those whose first component is the grant's next component below `base`.
  void CheckAncestor(const std::string& base, const std::string& grant) {
    const size_t start = base == "/" ? 1 : base.size() + 1;
    const std::string_view below = std::string_view(grant).substr(start);
    const std::string_view next = below.substr(0, below.find('/'));
    for (const ProtectedName& name : kProtectedNames) {
      const std::string_view first = name.relative.substr(0, name.relative.find('/'));
      if (first == next) Check(base, name);
    }
  }

  // Git repositories nested inside `dir` (up to kRepoSearchDepth levels, at most
  // kRepoSearchBudget directories in all) get the repository names. Hidden directories and
  // dependency trees are not descended into: repositories do not live there.
  void CheckRepositoriesIn(const std::string& dir, int depth) {
    if (depth > kRepoSearchDepth) return;
    struct CloseDir {
      void operator()(DIR* d) const { ::closedir(d); }
    };
    std::unique_ptr<DIR, CloseDir> handle(::opendir(dir.c_str()));
    if (!handle) return;
    while (const dirent* entry = ::readdir(handle.get())) {
      const std::string_view child = entry->d_name;
      if (child.empty() || child[0] == '.' || child == "node_modules" || entry->d_type != DT_DIR ||
          ++visited_ > kRepoSearchBudget) {
        continue;
      }
      const std::string path = Join(dir, child);
      struct stat st {};
      if (::lstat(Join(path, ".git").c_str(), &st) == 0) CheckAll(path, /*repo_names_only=*/true);
      CheckRepositoriesIn(path, depth + 1);
    }
  }

  std::vector<ProtectedPath> Take() {
    std::sort(found_.begin(), found_.end(), [](const ProtectedPath& a, const ProtectedPath& b) {
      return a.path != b.path ? a.path < b.path : a.cap < b.cap;
    });
    // The same file under two names keeps its strictest cap (sorted first).
    found_.erase(std::unique(found_.begin(), found_.end(),
                             [](const ProtectedPath& a, const ProtectedPath& b) {
                               return a.path == b.path;
                             }),
                 found_.end());
    return std::move(found_);
  }

 private:
  static constexpr int kRepoSearchDepth = 3;
  static constexpr int kRepoSearchBudget = 4096;

  const std::vector<std::string>& grants_;
  std::vector<ProtectedPath> found_;
  int visited_ = 0;
};

}  // namespace

std::vector<ProtectedPath> FindProtectedPaths(const std::vector<std::string>& grants,
                                              const std::string& home) {
  Finder finder(grants);
  for (const std::string& grant : grants) {
    finder.CheckAll(grant, /*repo_names_only=*/false);
    if (!home.empty() && home != grant && IsWithin(home, grant)) {
      finder.CheckAll(home, /*repo_names_only=*/false);
    }
    for (std::string base = grant; base != "/";) {
      const size_t slash = base.find_last_of('/');
      base.resize(slash == 0 ? 1 : slash);
      finder.CheckAncestor(base, grant);
    }
    finder.CheckRepositoriesIn(grant, 1);
  }
  return finder.Take();
}

}  // namespace agentbox
