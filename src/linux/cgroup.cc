#include "linux/cgroup.h"

#include <dirent.h>
#include <fcntl.h>
#include <signal.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <cerrno>
#include <charconv>
#include <cstring>
#include <ctime>

#include "base/log.h"

namespace agentbox {
namespace {

constexpr mode_t kDirMode = 0755;

std::vector<std::string_view> Split(std::string_view text, char sep) {
  std::vector<std::string_view> out;
  while (true) {
    const size_t at = text.find(sep);
    out.push_back(text.substr(0, at));
    if (at == std::string_view::npos) return out;
    text.remove_prefix(at + 1);
  }
}

// mountinfo escapes space, tab, newline and backslash as \ooo.
std::string Unescape(std::string_view field) {
  std::string out;
  for (size_t i = 0; i < field.size(); ++i) {
    if (field[i] == '\\' && i + 3 < field.size()) {
      int value = 0;
      const auto [end, ec] = std::from_chars(field.data() + i + 1, field.data() + i + 4, value, 8);
      if (ec == std::errc() && end == field.data() + i + 4) {
        out.push_back(static_cast<char>(value));
        i += 3;
        continue;
      }
    }
    out.push_back(field[i]);
  }
  return out;
}

std::optional<std::string> ReadFile(const std::string& path) {
  UniqueFd fd(open(path.c_str(), O_RDONLY | O_CLOEXEC));
  if (!fd) return std::nullopt;
  std::string out;
  char buf[4096];
  while (true) {
    const ssize_t n = read(fd.get(), buf, sizeof buf);
    if (n < 0 && errno == EINTR) continue;
    if (n < 0) return std::nullopt;
    if (n == 0) return out;
    out.append(buf, static_cast<size_t>(n));
  }
}

bool Exists(const std::string& path) { return access(path.c_str(), F_OK) == 0; }

// Whether this process's effective ids may write `path` (EROFS counts as not writable).
bool Writable(const std::string& path) {
  return faccessat(AT_FDCWD, path.c_str(), W_OK, AT_EACCESS) == 0;
}

// Writes `value` to `dir`/`name` with one write(2), as cgroup files expect; through
// `dir_fd` (the open `dir`) when it is not -1.
Status WriteCgroupFile(int dir_fd, const std::string& dir, const char* name,
                       std::string_view value) {
  const std::string full = dir + "/" + name;
  UniqueFd fd(dir_fd >= 0 ? openat(dir_fd, name, O_WRONLY | O_CLOEXEC)
                          : open(full.c_str(), O_WRONLY | O_CLOEXEC));
  if (!fd) return ErrnoError(ErrorCode::kSetup, "open", full);
  const ssize_t n = write(fd.get(), value.data(), value.size());
  if (n < 0) return ErrnoError(ErrorCode::kSetup, "write", full);
  if (static_cast<size_t>(n) != value.size()) {
    return MakeError(ErrorCode::kSetup, full + ": short write");
  }
  if (close(fd.Release()) != 0) return ErrnoError(ErrorCode::kSetup, "close", full);
  return {};
}

Status WriteFile(const std::string& dir, const char* name, std::string_view value) {
  return WriteCgroupFile(-1, dir, name, value);
}

Status MakeDir(const std::string& path) {
  if (mkdir(path.c_str(), kDirMode) != 0 && errno != EEXIST) {
    return ErrnoError(ErrorCode::kSetup, "mkdir", path);
  }
  return {};
}

// The parent for run cgroups under `dir` is usable if we may create it or write it.
bool AgentboxDirWritable(const std::string& dir) {
  const std::string parent = dir + "/agentbox";
  return Exists(parent) ? Writable(parent) : Writable(dir);
}

// Creates a run directory. One that already exists is a leftover of an earlier supervisor
// with the same pid that was killed before cleaning up: removed (only possible when empty,
// so no live process) and made anew.
Status MakeRunDir(const std::string& dir) {
  if (mkdir(dir.c_str(), kDirMode) == 0) return {};
  if (errno == EEXIST && rmdir(dir.c_str()) == 0 && mkdir(dir.c_str(), kDirMode) == 0) return {};
  return ErrnoError(ErrorCode::kSetup, "mkdir", dir);
}

// Leftover run directories are swept once there are more than this many (see
// RemoveStaleRunDirs): enough for every concurrent run of a busy MCP server.
constexpr int kSweepAbove = 64;

std::string RunName() {
  static std::atomic<unsigned> counter{0};
  return "run-" + std::to_string(getpid()) + "-" + std::to_string(counter++);
}

bool Has(const std::vector<std::string>& list, std::string_view item) {
  for (const std::string& s : list) {
    if (s == item) return true;
  }
  return false;
}

void SleepMillis(long ms) {
  struct timespec ts = {0, ms * 1000 * 1000};
  while (nanosleep(&ts, &ts) != 0 && errno == EINTR) {
  }
}

// SIGKILLs everything in `dir`: v2 cgroup.kill when the kernel has it (5.14+), else each pid
// listed in cgroup.procs (which can race with forks; the caller loops).
void KillAll(const std::string& dir, bool v2) {
  if (v2 && WriteFile(dir, "cgroup.kill", "1")) return;
  const std::optional<std::string> procs = ReadFile(dir + "/cgroup.procs");
  if (!procs) return;
  for (std::string_view line : Split(*procs, '\n')) {
    pid_t pid = 0;
    const auto [end, ec] = std::from_chars(line.data(), line.data() + line.size(), pid);
    if (ec == std::errc() && pid > 0) kill(pid, SIGKILL);
  }
}

void RemoveRunDir(const std::string& dir, bool v2) {
  constexpr int kAttempts = 500;  // 10 ms apart: 5 s at most
  for (int attempt = 0; attempt < kAttempts; ++attempt) {
    KillAll(dir, v2);
    if (rmdir(dir.c_str()) == 0 || errno == ENOENT) return;
    if (errno != EBUSY) break;
    SleepMillis(10);
  }
  LogWarning("cgroup ", dir, ": rmdir: ", std::strerror(errno), " (left behind)");
}

// v2: "cpu io memory pids\n" from cgroup.controllers.
std::vector<std::string> ReadControllers(const std::string& dir) {
  std::vector<std::string> list;
  std::string text = ReadFile(dir + "/cgroup.controllers").value_or("");
  for (std::string_view c : Split(text, ' ')) {
    if (!c.empty() && c.back() == '\n') c.remove_suffix(1);
    if (!c.empty()) list.emplace_back(c);
  }
  return list;
}

// v2 is usable only from the hierarchy root (see DetectCgroupSupport in the header).
void DetectV2(const std::vector<CgroupMount>& mounts, const ProcCgroup& self, CgroupSupport& out,
              std::string& detail) {
  const CgroupMount* mount = nullptr;
  std::optional<std::string> own_dir;
  for (const CgroupMount& m : mounts) {
    if (!m.v2) continue;
    mount = &m;
    own_dir = self.v2_path ? CgroupDir(m, *self.v2_path) : std::nullopt;
    if (own_dir) break;  // the mount that shows our own cgroup
  }
  if (mount == nullptr) {
    detail += "no cgroup v2 mount";
    return;
  }
  const std::string& root = mount->mount_point;
  const std::vector<std::string> controllers = ReadControllers(root);
  detail += "cgroup v2 at " + root + " (controllers:";
  for (const std::string& c : controllers) detail += " " + c;
  detail += controllers.empty() ? " none)" : ")";
  const bool pids = Has(controllers, "pids");
  const bool memory = Has(controllers, "memory");
  if (!pids && !memory) {
    detail += ": no pids or memory controller";
    return;
  }
  // The real root has no cgroup.type; a cgroup-namespace root or a delegated subtree does.
  const bool is_root = !Exists(root + "/cgroup.type");
  if (is_root && Writable(root) && Writable(root + "/cgroup.subtree_control") &&
      AgentboxDirWritable(root) &&
      (!Exists(root + "/agentbox") || Writable(root + "/agentbox/cgroup.subtree_control"))) {
    out.version = CgroupVersion::kV2;
    out.pids = pids;
    out.memory = memory;
    out.cpu = Has(controllers, "cpu");
    out.v2_root = root;
    detail += ": root cgroup writable, runs go in " + root + "/agentbox";
    return;
  }
  if (!is_root) {
    detail += ": mount is not the root cgroup";
  } else {
    detail += ": root cgroup not writable by uid " + std::to_string(geteuid());
  }
  if (own_dir && Writable(*own_dir)) {
    detail += "; own cgroup " + *own_dir +
              " is writable (delegated) but holds this process, so enabling controllers for "
              "a child fails with EBUSY (no internal processes); agentbox does not move itself";
  } else if (own_dir) {
    detail += "; own cgroup " + *own_dir + " not writable";
  }
}

// v1: each controller's hierarchy, under this process's own cgroup there.
std::string DetectV1Controller(const std::vector<CgroupMount>& mounts, const ProcCgroup& self,
                               std::string_view controller, std::string& detail) {
  const auto path = self.v1_paths.find(controller);
  for (const CgroupMount& m : mounts) {
    if (m.v2 || !Has(m.options, controller)) continue;
    std::optional<std::string> dir;
    if (path != self.v1_paths.end()) dir = CgroupDir(m, path->second);
    if (!dir) continue;
    if (AgentboxDirWritable(*dir)) {
      detail += "; v1 " + std::string(controller) + ": " + *dir + " writable";
      return *dir;
    }
    detail += "; v1 " + std::string(controller) + ": " + *dir + " not writable by uid " +
              std::to_string(geteuid());
    return {};
  }
  detail += "; no v1 " + std::string(controller) + " hierarchy";
  return {};
}

}  // namespace

std::vector<CgroupMount> ParseCgroupMounts(std::string_view mountinfo) {
  // "36 25 0:31 / /sys/fs/cgroup/pids rw,nosuid shared:15 - cgroup cgroup rw,pids"
  std::vector<CgroupMount> out;
  for (std::string_view line : Split(mountinfo, '\n')) {
    std::vector<std::string_view> fields;
    for (std::string_view f : Split(line, ' ')) {
      if (!f.empty()) fields.push_back(f);
    }
    size_t dash = 6;
    while (dash < fields.size() && fields[dash] != "-") ++dash;
    if (fields.size() < 5 || dash + 1 >= fields.size()) continue;
    const std::string_view fstype = fields[dash + 1];
    if (fstype != "cgroup" && fstype != "cgroup2") continue;
    CgroupMount m;
    m.root = Unescape(fields[3]);
    m.mount_point = Unescape(fields[4]);
    m.v2 = fstype == "cgroup2";
    if (dash + 3 < fields.size()) {
      for (std::string_view opt : Split(fields[dash + 3], ',')) m.options.emplace_back(opt);
    }
    out.push_back(std::move(m));
  }
  return out;
}

ProcCgroup ParseProcCgroup(std::string_view text) {
  ProcCgroup out;
  for (std::string_view line : Split(text, '\n')) {
    const size_t first = line.find(':');
    if (first == std::string_view::npos) continue;
    const size_t second = line.find(':', first + 1);
    if (second == std::string_view::npos) continue;
    const std::string_view controllers = line.substr(first + 1, second - first - 1);
    const std::string path(line.substr(second + 1));
    if (line.substr(0, first) == "0" && controllers.empty()) {
      out.v2_path = path;
      continue;
    }
    for (std::string_view c : Split(controllers, ',')) {
      if (!c.empty()) out.v1_paths.emplace(std::string(c), path);
    }
  }
  return out;
}

std::optional<std::string> CgroupDir(const CgroupMount& mount, std::string_view path) {
  std::string_view root = mount.root;
  if (root == "/") root = "";
  if (path.substr(0, root.size()) != root) return std::nullopt;
  std::string_view rest = path.substr(root.size());
  if (!rest.empty() && rest.front() != '/') return std::nullopt;  // "/a" is not under "/ab"
  if (rest == "/") rest = "";
  return mount.mount_point + std::string(rest);
}

CgroupSupport DetectCgroupSupport() {
  CgroupSupport out;
  const std::vector<CgroupMount> mounts =
      ParseCgroupMounts(ReadFile("/proc/self/mountinfo").value_or(""));
  const ProcCgroup self = ParseProcCgroup(ReadFile("/proc/self/cgroup").value_or(""));
  std::string detail;
  DetectV2(mounts, self, out, detail);
  if (out.version == CgroupVersion::kV2) {
    out.detail = std::move(detail);
    return out;
  }
  out.v1_pids_dir = DetectV1Controller(mounts, self, "pids", detail);
  out.v1_memory_dir = DetectV1Controller(mounts, self, "memory", detail);
  out.pids = !out.v1_pids_dir.empty();
  out.memory = !out.v1_memory_dir.empty();
  if (out.pids || out.memory) {
    out.version = CgroupVersion::kV1;
    out.cpu = false;  // the v1 cpu controller is not used
    detail += "; using cgroup v1";
  } else {
    detail += "; no usable cgroup: limits fall back to rlimits";
  }
  out.detail = std::move(detail);
  return out;
}

Result<RunCgroup> RunCgroup::Create(const CgroupSupport& support, const LimitRequest& limits) {
  RunCgroup cg;  // destroyed (dirs removed) if a step below fails
  cg.version_ = support.version;
  cg.limits_pids_ = support.pids;
  cg.limits_memory_ = support.memory && limits.memory_bytes.has_value();
  if (support.version == CgroupVersion::kNone || (!cg.limits_pids_ && !cg.limits_memory_)) {
    return MakeError(ErrorCode::kUnsupported, "no usable cgroup controller");
  }
  const std::string name = RunName();
  const std::string pids_max = std::to_string(limits.pids);
  const std::string memory_max =
      limits.memory_bytes ? std::to_string(*limits.memory_bytes) : std::string();

  if (support.version == CgroupVersion::kV2) {
    std::vector<const char*> enable;
    if (cg.limits_pids_) enable.push_back("+pids");
    if (cg.limits_memory_) enable.push_back("+memory");
    const std::string parent = support.v2_root + "/agentbox";
    // The root cgroup is exempt from "no internal processes"; agentbox/ holds no process.
    for (const char* c : enable) {
      if (Status s = WriteFile(support.v2_root, "cgroup.subtree_control", c); !s) return s.error();
    }
    if (Status s = MakeDir(parent); !s) return s.error();
    RemoveStaleRunDirs(parent, kSweepAbove);
    for (const char* c : enable) {
      if (Status s = WriteFile(parent, "cgroup.subtree_control", c); !s) return s.error();
    }
    const std::string dir = parent + "/" + name;
    if (Status s = MakeRunDir(dir); !s) return s.error();
    cg.dirs_.push_back(dir);
    cg.dir_fd_.Reset(open(dir.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC));
    if (!cg.dir_fd_) return ErrnoError(ErrorCode::kSetup, "open", dir);
    const int fd = cg.dir_fd_.get();
    if (cg.limits_pids_) {
      if (Status s = WriteCgroupFile(fd, dir, "pids.max", pids_max); !s) return s.error();
    }
    if (cg.limits_memory_) {
      if (Status s = WriteCgroupFile(fd, dir, "memory.max", memory_max); !s) return s.error();
      if (faccessat(fd, "memory.swap.max", F_OK, 0) == 0) {
        if (Status s = WriteCgroupFile(fd, dir, "memory.swap.max", "0"); !s) return s.error();
      }
    }
    return cg;
  }

  // v1: one directory per controller, under our own cgroup in that hierarchy.
  auto make_run_dir = [&](const std::string& base) -> Result<std::string> {
    if (Status s = MakeDir(base + "/agentbox"); !s) return s.error();
    RemoveStaleRunDirs(base + "/agentbox", kSweepAbove);
    std::string dir = base + "/agentbox/" + name;
    if (Status s = MakeRunDir(dir); !s) return s.error();
    cg.dirs_.push_back(dir);
    return dir;
  };
  if (cg.limits_pids_) {
    Result<std::string> dir = make_run_dir(support.v1_pids_dir);
    if (!dir) return dir.error();
    if (Status s = WriteFile(*dir, "pids.max", pids_max); !s) return s.error();
  }
  if (cg.limits_memory_) {
    Result<std::string> dir = make_run_dir(support.v1_memory_dir);
    if (!dir) return dir.error();
    if (Status s = WriteFile(*dir, "memory.limit_in_bytes", memory_max); !s) return s.error();
    // Memory + swap: absent without swap accounting; a failure only means swap is not capped.
    (void)WriteFile(*dir, "memory.memsw.limit_in_bytes", memory_max);
  }
  return cg;
}

RunCgroup::RunCgroup(RunCgroup&& other) noexcept
    : version_(other.version_),
      dirs_(std::exchange(other.dirs_, {})),
      dir_fd_(std::move(other.dir_fd_)),
      limits_pids_(other.limits_pids_),
      limits_memory_(other.limits_memory_) {}

RunCgroup& RunCgroup::operator=(RunCgroup&& other) noexcept {
  if (this != &other) {
    Destroy();
    version_ = other.version_;
    dirs_ = std::exchange(other.dirs_, {});
    dir_fd_ = std::move(other.dir_fd_);
    limits_pids_ = other.limits_pids_;
    limits_memory_ = other.limits_memory_;
  }
  return *this;
}

RunCgroup::~RunCgroup() { Destroy(); }

Status RunCgroup::Attach(pid_t pid) {
  const std::string value = std::to_string(pid);
  if (dir_fd_) return WriteCgroupFile(dir_fd_.get(), dirs_.front(), "cgroup.procs", value);
  if (dirs_.empty()) return MakeError(ErrorCode::kSetup, "cgroup: attach after Destroy");
  for (const std::string& dir : dirs_) {
    if (Status s = WriteFile(dir, "cgroup.procs", value); !s) return s;
  }
  return {};
}

namespace {

// v1: `<dir>/tasks` (or its parent's) for each run directory, opened for writing.
Result<std::vector<UniqueFd>> OpenTasks(const std::vector<std::string>& dirs, bool parent) {
  std::vector<UniqueFd> fds;
  for (const std::string& dir : dirs) {
    const std::string path = (parent ? dir.substr(0, dir.rfind('/')) : dir) + "/tasks";
    UniqueFd fd(open(path.c_str(), O_WRONLY | O_CLOEXEC));
    if (!fd) return ErrnoError(ErrorCode::kSetup, "open", path);
    fds.push_back(std::move(fd));
  }
  return fds;
}

}  // namespace

Result<std::vector<UniqueFd>> RunCgroup::OpenTasksFiles() const {
  if (version_ != CgroupVersion::kV1) return std::vector<UniqueFd>{};
  return OpenTasks(dirs_, /*parent=*/false);
}

Result<std::vector<UniqueFd>> RunCgroup::OpenParentTasksFiles() const {
  if (version_ != CgroupVersion::kV1) return std::vector<UniqueFd>{};
  return OpenTasks(dirs_, /*parent=*/true);
}

int RemoveStaleRunDirs(const std::string& parent, int sweep_above) {
  struct stat st {};
  // A directory's link count is 2 + its subdirectories (cgroupfs too).
  if (stat(parent.c_str(), &st) != 0 ||
      st.st_nlink <= 2 + static_cast<nlink_t>(std::max(sweep_above, 0))) {
    return 0;
  }
  DIR* dir = opendir(parent.c_str());
  if (dir == nullptr) return 0;
  int removed = 0;
  while (const dirent* entry = readdir(dir)) {
    const std::string_view name = entry->d_name;
    if (name.substr(0, 4) != "run-") continue;
    pid_t pid = 0;
    const auto [end, ec] = std::from_chars(name.data() + 4, name.data() + name.size(), pid);
    if (ec != std::errc() || end == name.data() + name.size() || *end != '-' || pid <= 0) {
      continue;
    }
    // Its supervisor is gone (ESRCH; EPERM means alive, another user's): the directory is a
    // leftover. rmdir removes only an empty one.
    if (kill(pid, 0) == 0 || errno != ESRCH) continue;
    if (rmdir((parent + "/" + std::string(name)).c_str()) == 0) ++removed;
  }
  closedir(dir);
  return removed;
}

int AttachSelfInChild(const int* tasks_fds, size_t count) noexcept {
  int result = 0;
  for (size_t i = 0; i < count; ++i) {
    if (tasks_fds[i] < 0) continue;
    if (result == 0) {
      const ssize_t n = write(tasks_fds[i], "0", 1);
      if (n != 1) result = n < 0 ? errno : EIO;
    }
    close(tasks_fds[i]);
  }
  return result;
}

void RunCgroup::Destroy() {
  dir_fd_.Reset();
  for (const std::string& dir : dirs_) RemoveRunDir(dir, version_ == CgroupVersion::kV2);
  dirs_.clear();
}

}  // namespace agentbox
