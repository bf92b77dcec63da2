#include "linux/plan.h"

#include <dirent.h>
#include <strings.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <memory>
#include <set>

#include "policy/canonicalize.h"

namespace agentbox {
namespace {

// System directories visible read-only (DESIGN.md §3). Not /usr/local, /opt, /home, ...
constexpr const char* kSystemDirs[] = {"/bin",         "/sbin",      "/lib",        "/lib32",
                                       "/lib64",       "/libx32",    "/usr/bin",    "/usr/sbin",
                                       "/usr/lib",     "/usr/lib32", "/usr/lib64",  "/usr/libx32",
                                       "/usr/libexec", "/usr/share", "/usr/include"};

// Secrets under /etc that stay masked even though /etc is visible.
constexpr const char* kEtcSecrets[] = {
    "/etc/shadow",         "/etc/shadow-",
    "/etc/gshadow",        "/etc/gshadow-",
    "/etc/sudoers",        "/etc/sudoers.d",
    "/etc/ssl/private",    "/etc/security/opasswd",
    "/etc/krb5.keytab",    "/etc/NetworkManager/system-connections",
    "/etc/wpa_supplicant", "/etc/libvirt/secrets",
    "/etc/docker/key.json"};

constexpr const char* kDevNodes[] = {"null", "zero", "full", "random", "urandom", "tty"};

enum class HostKind { kMissing, kDirectory, kFile, kSymlink };

HostKind Probe(const std::string& path) {
  struct stat st {};
  if (::lstat(path.c_str(), &st) != 0) return HostKind::kMissing;
  if (S_ISLNK(st.st_mode)) return HostKind::kSymlink;
  return S_ISDIR(st.st_mode) ? HostKind::kDirectory : HostKind::kFile;
}

std::string ReadLink(const std::string& path) {
  std::string out(4096, '\0');
  const ssize_t n = ::readlink(path.c_str(), out.data(), out.size());
  out.resize(n > 0 ? static_cast<size_t>(n) : 0);
  return out;
}

// Host's /etc/ssh/*key* (host private keys).
std::vector<std::string> SshHostKeys() {
  std::vector<std::string> out;
  struct CloseDir {
    void operator()(DIR* d) const { ::closedir(d); }
  };
  std::unique_ptr<DIR, CloseDir> dir(::opendir("/etc/ssh"));
  if (!dir) return out;
  while (const dirent* e = ::readdir(dir.get())) {
    const std::string name = e->d_name;
    if (name.find("key") != std::string::npos && name.find(".pub") == std::string::npos) {
      out.push_back("/etc/ssh/" + name);
    }
  }
  std::sort(out.begin(), out.end());
  return out;
}

void AddMask(std::vector<MountOp>& ops, const std::string& path) {
  switch (Probe(path)) {
    case HostKind::kDirectory:
      ops.push_back({MountKind::kMaskDirectory, "", path, true});
      break;
    case HostKind::kFile:
      ops.push_back({MountKind::kMaskFile, "/dev/null", path, false});
      break;
    case HostKind::kSymlink:  // policy paths are canonical; a link here is /etc's own
    case HostKind::kMissing:
      break;
  }
}

std::vector<MountOp> SystemMounts() {
  std::vector<MountOp> ops;
  for (const char* dir : kSystemDirs) {
    switch (Probe(dir)) {
      case HostKind::kDirectory:
        ops.push_back({MountKind::kBindReadOnly, dir, dir, true});
        break;
      case HostKind::kSymlink:  // merged /usr: /bin -> usr/bin
        ops.push_back({MountKind::kSymlink, ReadLink(dir), dir, false});
        break;
      case HostKind::kFile:
      case HostKind::kMissing:
        break;
    }
  }
  // SEC-11: /etc is visible for name service and TLS roots, its secrets are masked.
  ops.push_back({MountKind::kBindReadOnly, "/etc", "/etc", true});
  for (const char* secret : kEtcSecrets) AddMask(ops, secret);
  for (const std::string& key : SshHostKeys()) AddMask(ops, key);
  ops.push_back({MountKind::kProc, "", "/proc", true});
  ops.push_back({MountKind::kTmpfs, "mode=0755", "/dev", true});
  for (const char* node : kDevNodes) {
    const std::string path = std::string("/dev/") + node;
    if (Probe(path) != HostKind::kMissing) ops.push_back({MountKind::kDevNode, path, path, false});
  }
  ops.push_back({MountKind::kDevpts, "", "/dev/pts", true});
  ops.push_back({MountKind::kSymlink, "pts/ptmx", "/dev/ptmx", false});
  ops.push_back({MountKind::kTmpfs, "mode=1777", "/dev/shm", true});
  ops.push_back({MountKind::kSymlink, "/proc/self/fd", "/dev/fd", false});
  ops.push_back({MountKind::kSymlink, "/proc/self/fd/0", "/dev/stdin", false});
  ops.push_back({MountKind::kSymlink, "/proc/self/fd/1", "/dev/stdout", false});
  ops.push_back({MountKind::kSymlink, "/proc/self/fd/2", "/dev/stderr", false});
  ops.push_back({MountKind::kTmpfs, "mode=1777", "/tmp", true});
  return ops;
}

// The access the most specific policy entry at or above `path` gives it.
Access GoverningAccess(const Policy& policy, const std::string& path) {
  size_t best = 0;
  Access access = Access::kNone;
  auto consider = [&](const std::vector<std::string>& list, Access a) {
    for (const std::string& root : list) {
      if (IsWithin(path, root) && root.size() >= best) {
        best = root.size();
        access = a;
      }
    }
  };
  consider(policy.filesystem.readwrite, Access::kReadWrite);
  consider(policy.filesystem.readonly, Access::kReadOnly);
  consider(policy.filesystem.denied, Access::kNone);
  return access;
}

bool IsVisible(const Policy& policy, const std::string& path) {
  auto within_any = [&](const std::vector<std::string>& list) {
    return std::any_of(list.begin(), list.end(),
                       [&](const std::string& root) { return IsWithin(path, root); });
  };
  if (path == "/" || path == "/tmp") return true;  // the sandbox's /tmp is its own, empty
  return within_any(policy.filesystem.readonly) || within_any(policy.filesystem.readwrite);
}

}  // namespace

Result<SandboxPlan> BuildSandboxPlan(const Policy& policy, const SandboxRequest& req) {
  if (req.argv.empty()) return MakeError(ErrorCode::kUsage, "no command given");
  SandboxPlan plan;
  plan.argv = req.argv;
  plan.env = req.env;
  // SEC-25: in proxy mode the only way out is the bridge: its listeners on the sandbox's
  // loopback (pid 1 hands them to the supervisor's proxy), these variables pointing at
  // them, and Landlock allowing TCP connect to their ports only. Nothing inside resolves
  // names: the netns has no route to a resolver; the proxy resolves after its checks.
  plan.proxy_bridge = policy.network.mode == NetworkMode::kProxy;
  if (plan.proxy_bridge) {
    plan.egress = policy.network;
    plan.upstream_proxy = req.upstream_proxy;
    const std::string http = "http://127.0.0.1:" + std::to_string(kBridgeHttpPort);
    // With an upstream proxy (MXC) every variable names the HTTP bridge, as MXC sets them.
    const std::string socks = req.upstream_proxy.empty()
                                  ? "socks5h://127.0.0.1:" + std::to_string(kBridgeSocksPort)
                                  : http;
    std::erase_if(plan.env, [](const std::string& kv) {
      const std::string name = kv.substr(0, kv.find('='));
      for (const char* proxy_var :
           {"http_proxy", "https_proxy", "all_proxy", "ftp_proxy", "no_proxy"}) {
        if (strcasecmp(name.c_str(), proxy_var) == 0) return true;
      }
      return false;
    });
    for (const std::string& kv :
         {"HTTP_PROXY=" + http, "http_proxy=" + http, "HTTPS_PROXY=" + http, "https_proxy=" + http,
          "ALL_PROXY=" + socks, "all_proxy=" + socks, std::string("NO_PROXY=localhost,127.0.0.1"),
          std::string("no_proxy=localhost,127.0.0.1")}) {
      plan.env.push_back(kv);
    }
    if (!req.upstream_proxy.empty()) {
      plan.env.push_back("FTP_PROXY=" + http);
      plan.env.push_back("ftp_proxy=" + http);
    }
    plan.landlock.restrict_tcp = true;
    plan.landlock.tcp_connect_ports = {kBridgeHttpPort, kBridgeSocksPort};
  }
  plan.path_env = "/usr/bin:/bin";
  for (const std::string& kv : req.env) {
    if (kv.rfind("PATH=", 0) == 0) plan.path_env = kv.substr(5);
  }
  // SEC-20: unless the policy allows the network, the sandbox has its own network
  // namespace with only loopback: no route out, and no host listener reachable.
  plan.new_network_namespace = policy.network.mode != NetworkMode::kAllow;
  plan.id_maps = IdMapsForSelf();
  plan.timeout_ms = policy.timeout_ms;
  if (policy.limits.pids) plan.limits.pids = *policy.limits.pids;
  plan.limits.memory_bytes = policy.limits.memory_bytes;
  plan.limits.cpu_seconds = policy.limits.cpu_seconds;

  std::vector<MountOp> ops = SystemMounts();
  std::vector<LandlockPathRule>& rules = plan.landlock.paths;
  for (const MountOp& op : ops) {
    if (op.kind == MountKind::kBindReadOnly) rules.push_back({op.source, false});
  }

  // Policy paths. A granted path is already canonical, so the mount cannot be pointed
  // elsewhere by a symlink (SEC-1), and the child re-opens it without following links (SEC-5).
  std::vector<MountOp> policy_ops;
  for (const std::string& p : policy.filesystem.readonly) {
    const bool dir = Probe(p) == HostKind::kDirectory;
    policy_ops.push_back({MountKind::kBindReadOnly, p, p, dir});
    rules.push_back({p, false});
  }
  for (const std::string& p : policy.filesystem.readwrite) {
    const bool dir = Probe(p) == HostKind::kDirectory;
    policy_ops.push_back({MountKind::kBindReadWrite, p, p, dir});
    rules.push_back({p, true});
  }
  for (const std::string& p : policy.filesystem.denied) AddMask(policy_ops, p);

  for (const std::string& file : req.internal_readonly_files) {
    policy_ops.push_back({MountKind::kBindReadOnly, file, file, false});
    rules.push_back({file, false});
  }

  // SEC-12: every directory between a writable grant and a read-only or hidden path inside
  // it is pinned (bound onto itself), so it cannot be renamed away and replaced by a copy
  // without the protection. The protected path itself is a mount point for the same reason.
  std::set<std::string> pins;
  for (const MountOp& inner : policy_ops) {
    if (inner.kind == MountKind::kBindReadWrite) continue;
    for (const std::string& grant : policy.filesystem.readwrite) {
      if (grant == inner.target || !IsWithin(inner.target, grant)) continue;
      for (std::string dir = inner.target.substr(0, inner.target.find_last_of('/'));
           dir.size() > grant.size(); dir.resize(dir.find_last_of('/'))) {
        pins.insert(dir);
      }
    }
  }
  for (const std::string& dir : pins) {
    // Only where the directory is writable; a read-only one cannot be renamed anyway.
    if (GoverningAccess(policy, dir) == Access::kReadWrite &&
        std::none_of(policy_ops.begin(), policy_ops.end(),
                     [&](const MountOp& o) { return o.target == dir; })) {
      policy_ops.push_back({MountKind::kBindReadWrite, dir, dir, true});
    }
  }

  ops.insert(ops.end(), policy_ops.begin(), policy_ops.end());
  // Parents before children; for one target, system mounts first so policy ones cover them.
  std::stable_sort(ops.begin(), ops.end(),
                   [](const MountOp& a, const MountOp& b) { return PathLess(a.target, b.target); });
  ops.push_back({MountKind::kReadOnlyRemount, "", "/dev", true});  // once /dev is filled
  plan.mounts.ops = std::move(ops);
  plan.mounts.source_fds.assign(plan.mounts.ops.size(), -1);

  plan.child_landlock = {{"/tmp", true, true},
                         {"/dev", false, true},
                         {"/dev/pts", true, true},
                         {"/dev/shm", true, true},
                         {"/proc", false, true}};
  for (const char* node : kDevNodes) {
    plan.child_landlock.push_back({std::string("/dev/") + node, true, false});
  }

  plan.cwd = req.cwd.value_or(IsVisible(policy, req.caller_cwd) ? req.caller_cwd : "/");
  if (plan.cwd.empty() || plan.cwd[0] != '/') {
    return MakeError(ErrorCode::kPolicy, "working directory \"" + plan.cwd + "\" must be absolute");
  }
  if (req.cwd && !IsVisible(policy, plan.cwd)) {
    return MakeError(ErrorCode::kPolicy, "working directory \"" + plan.cwd +
                                             "\" is not visible in the sandbox; grant it "
                                             "with --ro or --rw");
  }
  return plan;
}

std::string DescribePlan(const SandboxPlan& plan) {
  std::string out = "command:";
  for (const std::string& a : plan.argv) out += " " + a;
  out += "\nworking directory: " + plan.cwd + "\nenvironment:\n";
  for (const std::string& kv : plan.env) out += "  " + kv + "\n";
  out += "mounts, in order:\n";
  for (const MountOp& op : plan.mounts.ops) {
    std::string line = "  ";
    line += MountKindName(op.kind);
    line.resize(14, ' ');
    line += op.target;
    if (!op.source.empty() && op.source != op.target) line += "  <- " + op.source;
    out += line + "\n";
  }
  out += "layers: user, mount, pid, ipc, uts, cgroup namespaces";
  out += plan.new_network_namespace ? ", network namespace (loopback only)" : ", host network";
  if (plan.proxy_bridge) {
    out += ", egress proxy bridge on 127.0.0.1:" + std::to_string(kBridgeHttpPort) + " (HTTP)";
    if (plan.upstream_proxy.empty())
      out += " and :" + std::to_string(kBridgeSocksPort) + " (SOCKS5)";
  }
  out += "; pivot_root; landlock (best ABI); seccomp; all capabilities dropped; no_new_privs\n";
  if (plan.proxy_bridge) {
    auto join = [](const std::vector<std::string>& items) {
      std::string text;
      for (const std::string& item : items) text += (text.empty() ? "" : ", ") + item;
      return text.empty() ? std::string("none") : text;
    };
    out += "egress: allow " + join(plan.egress.allow_domains) + "; deny " +
           join(plan.egress.deny_domains) + "; address ranges " + join(plan.egress.allow_cidrs) +
           "; resolve " + join(plan.egress.resolve);
    if (!plan.upstream_proxy.empty()) out += "; via upstream proxy " + plan.upstream_proxy;
    out += "\n";
  }
  out += "limits: pids " + std::to_string(plan.limits.pids);
  if (plan.limits.memory_bytes)
    out += ", memory " + std::to_string(*plan.limits.memory_bytes) + " bytes";
  if (plan.limits.cpu_seconds) out += ", cpu " + std::to_string(*plan.limits.cpu_seconds) + " s";
  out += ", open files " + std::to_string(plan.limits.open_files) + ", no core dumps\n";
  out += "timeout: " + std::to_string(plan.timeout_ms) + " ms\n";
  return out;
}

}  // namespace agentbox
