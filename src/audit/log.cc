#include "audit/log.h"

#include <fcntl.h>
#include <sys/file.h>
#include <sys/random.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include <algorithm>
#include <array>
#include <cerrno>
#include <cstdio>
#include <utility>

#include "audit/digest.h"
#include "config/strict_json.h"

namespace agentbox {
namespace {

using nlohmann::json;

constexpr size_t kChunk = size_t{64} << 10;

Error SyscallError(const std::string& syscall, const std::string& what) {
  return ErrnoError(ErrorCode::kSetup, syscall, what);
}

std::string OctalMode(mode_t mode) {
  std::array<char, 8> buf{};
  std::snprintf(buf.data(), buf.size(), "%04o", static_cast<unsigned>(mode & 07777));
  return buf.data();
}

// flock(2) held for a scope. Writers take LOCK_EX around read-tail + append; readers take
// LOCK_SH just long enough to see a size no write is in the middle of.
class FileLock {
 public:
  static Result<FileLock> Take(int fd, int op, const std::string& what) {
    while (::flock(fd, op) < 0) {
      if (errno != EINTR) return SyscallError("flock", what);
    }
    return FileLock(fd);
  }
  FileLock(FileLock&& other) noexcept : fd_(std::exchange(other.fd_, -1)) {}
  FileLock& operator=(FileLock&&) = delete;
  FileLock(const FileLock&) = delete;
  FileLock& operator=(const FileLock&) = delete;
  ~FileLock() { Release(); }
  void Release() {
    if (fd_ >= 0) ::flock(std::exchange(fd_, -1), LOCK_UN);
  }

 private:
  explicit FileLock(int fd) : fd_(fd) {}
  int fd_;
};

// Reads exactly [offset, offset + size) or fails.
Status PreadAll(int fd, char* out, size_t size, off_t offset, const std::string& what) {
  while (size > 0) {
    const ssize_t n = ::pread(fd, out, size, offset);
    if (n < 0 && errno == EINTR) continue;
    if (n < 0) return SyscallError("pread", what);
    if (n == 0) return MakeError(ErrorCode::kSetup, what + ": shrank while being read");
    out += n;
    size -= static_cast<size_t>(n);
    offset += n;
  }
  return {};
}

// The end of a log: its last `n` complete lines (oldest first, no newlines) and the torn
// bytes after the last newline, if any. Reads backwards from `end`, at most about
// `max_bytes`; fewer lines come back if they do not fit.
struct Tail {
  std::vector<std::string> lines;
  std::string torn;
};

Result<Tail> ReadTail(int fd, off_t end, size_t n, size_t max_bytes, const std::string& what) {
  std::string buf;
  off_t start = end;
  size_t newlines = 0;
  while (start > 0 && newlines < n + 1 && buf.size() < max_bytes) {
    // Growing chunks keep the prepending linear in the bytes read.
    const size_t want = std::max(kChunk, buf.size());
    const size_t take = std::min(want, static_cast<size_t>(start));
    std::string chunk(take, '\0');
    start -= static_cast<off_t>(take);
    if (Status s = PreadAll(fd, chunk.data(), take, start, what); !s) return s.error();
    newlines += static_cast<size_t>(std::count(chunk.begin(), chunk.end(), '\n'));
    buf.insert(0, chunk);
  }
  Tail tail;
  const size_t last_nl = buf.rfind('\n');
  if (last_nl == std::string::npos) {
    // No complete line in what was read: all torn if this is the whole file.
    if (start == 0) tail.torn = std::move(buf);
    return tail;
  }
  tail.torn = buf.substr(last_nl + 1);
  size_t pos = 0;
  if (start > 0) pos = buf.find('\n') + 1;  // the first piece may be the end of a longer line
  while (pos <= last_nl) {
    const size_t nl = buf.find('\n', pos);
    tail.lines.push_back(buf.substr(pos, nl - pos));
    pos = nl + 1;
  }
  if (tail.lines.size() > n) {
    tail.lines.erase(tail.lines.begin(), tail.lines.end() - static_cast<std::ptrdiff_t>(n));
  }
  return tail;
}

// Creates each missing directory of `dir` with mode 0700 exactly (chmod after mkdir, since
// mkdir's mode is filtered by the umask).
Status MakeDirs(const std::string& dir) {
  for (size_t pos = 1; pos <= dir.size(); ++pos) {
    if (pos != dir.size() && dir[pos] != '/') continue;
    const std::string prefix = dir.substr(0, pos);
    if (::mkdir(prefix.c_str(), 0700) == 0) {
      if (::chmod(prefix.c_str(), 0700) < 0) {
        return SyscallError("chmod", "audit log directory " + prefix);
      }
    } else if (errno != EEXIST) {
      return SyscallError("mkdir", "audit log directory " + prefix);
    }
  }
  return {};
}

// SEC: a log another user (or group) can write to, or that a symlink redirects, could be
// forged or pointed at a file the agent wants overwritten; refuse it instead of repairing it.
Status CheckPrivate(const struct stat& st, const std::string& what, bool want_dir) {
  if (want_dir ? !S_ISDIR(st.st_mode) : !S_ISREG(st.st_mode)) {
    return MakeError(ErrorCode::kSetup,
                     what + (want_dir ? " is not a directory" : " is not a regular file"));
  }
  if (st.st_uid != ::geteuid()) {
    return MakeError(ErrorCode::kSetup, what + " is owned by uid " + std::to_string(st.st_uid) +
                                            ", not by this user (uid " +
                                            std::to_string(::geteuid()) + ")");
  }
  if ((st.st_mode & 077) != 0) {
    return MakeError(ErrorCode::kSetup, what + " is accessible to group or others (mode " +
                                            OctalMode(st.st_mode) + "); it must be " +
                                            (want_dir ? "0700" : "0600"));
  }
  return {};
}

// open/openat of `path` with O_NOFOLLOW failed: a symlink gets its own message (ELOOP, or
// ENOTDIR when O_DIRECTORY was also given).
Error OpenError(const char* syscall, const std::string& path, const std::string& what) {
  Error error = SyscallError(syscall, what);
  struct stat st {};
  if ((error.err == ELOOP || error.err == ENOTDIR) && ::lstat(path.c_str(), &st) == 0 &&
      S_ISLNK(st.st_mode)) {
    return MakeError(ErrorCode::kSetup, what + " is a symlink; refusing to follow it");
  }
  return error;
}

bool IsHex64(const std::string& s) {
  return s.size() == 64 && std::all_of(s.begin(), s.end(), [](char c) {
           return (c >= '0' && c <= '9') || (c >= 'a' && c <= 'f');
         });
}

}  // namespace

Result<std::string> DefaultAuditLogPath(const std::function<const char*(const char*)>& getenv_fn) {
  const char* state = getenv_fn("XDG_STATE_HOME");
  if (state != nullptr && state[0] == '/') return std::string(state) + "/agentbox/audit.jsonl";
  const char* home = getenv_fn("HOME");
  if (home != nullptr && home[0] == '/') {
    return std::string(home) + "/.local/state/agentbox/audit.jsonl";
  }
  return MakeError(ErrorCode::kSetup,
                   "no audit log path: neither XDG_STATE_HOME nor HOME is an absolute path "
                   "(pass --audit-log PATH)");
}

Result<std::string> NewAuditId() {
  std::array<unsigned char, 16> bytes{};
  size_t got = 0;
  while (got < bytes.size()) {
    const ssize_t n = ::getrandom(bytes.data() + got, bytes.size() - got, 0);
    if (n < 0 && errno == EINTR) continue;
    if (n < 0) return SyscallError("getrandom", "audit record id");
    got += static_cast<size_t>(n);
  }
  static constexpr char kHex[] = "0123456789abcdef";
  std::string id;
  for (const unsigned char b : bytes) {
    id += kHex[b >> 4];
    id += kHex[b & 0xf];
  }
  return id;
}

std::string AuditTimestamp() {
  timespec now{};
  ::clock_gettime(CLOCK_REALTIME, &now);
  tm utc{};
  ::gmtime_r(&now.tv_sec, &utc);
  std::array<char, 96> buf{};  // room for any int the compiler imagines
  std::snprintf(buf.data(), buf.size(), "%04d-%02d-%02dT%02d:%02d:%02d.%03dZ", utc.tm_year + 1900,
                utc.tm_mon + 1, utc.tm_mday, utc.tm_hour, utc.tm_min, utc.tm_sec,
                static_cast<int>(now.tv_nsec / 1000000));
  return buf.data();
}

Result<AuditLog> AuditLog::Open(const std::string& path) {
  const size_t slash = path.rfind('/');
  const std::string dir =
      slash == std::string::npos ? "." : (slash == 0 ? "/" : path.substr(0, slash));
  const std::string base = slash == std::string::npos ? path : path.substr(slash + 1);
  if (base.empty() || base == "." || base == "..") {
    return MakeError(ErrorCode::kSetup, "audit log " + path + ": not a file path");
  }
  const std::string dir_what = "audit log directory " + dir;
  const std::string what = "audit log " + path;

  constexpr int kDirFlags = O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC;
  UniqueFd dfd(::open(dir.c_str(), kDirFlags));
  if (!dfd && errno == ENOENT) {
    if (Status s = MakeDirs(dir); !s) return s.error();
    dfd = UniqueFd(::open(dir.c_str(), kDirFlags));
  }
  if (!dfd) return OpenError("open", dir, dir_what);
  struct stat st {};
  if (::fstat(dfd.get(), &st) < 0) return SyscallError("fstat", dir_what);
  if (Status s = CheckPrivate(st, dir_what, /*want_dir=*/true); !s) return s.error();

  // O_APPEND: every write lands at the end, whatever the offset. O_RDWR: Append reads the
  // last line back with pread. O_NOFOLLOW: a symlink planted as the log is refused (ELOOP).
  constexpr int kFileFlags = O_RDWR | O_APPEND | O_NOFOLLOW | O_CLOEXEC;
  bool created = true;
  UniqueFd fd(::openat(dfd.get(), base.c_str(), kFileFlags | O_CREAT | O_EXCL, 0600));
  if (!fd && errno == EEXIST) {
    created = false;
    fd = UniqueFd(::openat(dfd.get(), base.c_str(), kFileFlags));
  }
  if (!fd) return OpenError("openat", path, what);
  if (created) {
    if (::fchmod(fd.get(), 0600) < 0) return SyscallError("fchmod", what);
    if (::fsync(dfd.get()) < 0) return SyscallError("fsync", dir_what);  // the new entry
  }
  if (::fstat(fd.get(), &st) < 0) return SyscallError("fstat", what);
  if (Status s = CheckPrivate(st, what, /*want_dir=*/false); !s) return s.error();
  return AuditLog(path, std::move(fd));
}

Status AuditLog::LoadTail(off_t size) {
  const std::string what = "audit log " + path_;
  tail_known_ = false;
  if (size == 0) {
    tail_seq_ = 0;
    tail_hash_ = kAuditGenesisHash;
  } else {
    auto tail = ReadTail(fd_.get(), size, 1, kMaxJsonBytes + 1, what);
    if (!tail) return tail.error();
    const std::string repair = "; run 'agentbox audit verify --audit-log " + path_ +
                               "' and repair the log before appending";
    if (!tail->torn.empty()) {
      return MakeError(ErrorCode::kSetup,
                       what + ": the last line has no newline (torn write or truncation)" + repair);
    }
    if (tail->lines.empty()) {
      return MakeError(ErrorCode::kSetup, what + ": the last line is too long" + repair);
    }
    const std::string& line = tail->lines.back();
    auto parsed = ParseStrictJson(line, what + ": last line");
    if (!parsed) return MakeError(ErrorCode::kSetup, parsed.error().context + repair);
    const json* seq = parsed->is_object() && parsed->contains("seq") ? &(*parsed)["seq"] : nullptr;
    if (seq == nullptr || !seq->is_number_unsigned()) {
      return MakeError(ErrorCode::kSetup, what + ": the last line has no \"seq\"" + repair);
    }
    tail_seq_ = seq->get<uint64_t>();
    tail_hash_ = Sha256Hex(line);
  }
  tail_size_ = size;
  tail_known_ = true;
  return {};
}

Result<std::string> AuditLog::Append(json record) {
  const std::string what = "audit log " + path_;
  if (!record.is_object() || !record.contains("type") || !record["type"].is_string() ||
      record["type"].get_ref<const std::string&>().empty()) {
    return MakeError(ErrorCode::kPolicy, what + ": a record must be an object with a \"type\"");
  }
  if (!record.contains("id")) {
    auto id = NewAuditId();
    if (!id) return id.error();
    record["id"] = std::move(*id);
  } else if (!record["id"].is_string() || record["id"].get_ref<const std::string&>().empty()) {
    return MakeError(ErrorCode::kPolicy, what + ": a record's \"id\" must be a non-empty string");
  }
  std::string id = record["id"].get<std::string>();

  const std::lock_guard<std::mutex> hold(*mu_);
  auto lock = FileLock::Take(fd_.get(), LOCK_EX, what);
  if (!lock) return lock.error();
  struct stat st {};
  if (::fstat(fd_.get(), &st) < 0) return SyscallError("fstat", what);
  // Another writer appended (or someone truncated) since our last write: re-read the tail.
  if (!tail_known_ || st.st_size != tail_size_) {
    if (Status s = LoadTail(st.st_size); !s) return s.error();
  }

  record["seq"] = tail_seq_ + 1;
  record["prev"] = tail_hash_;
  record["time"] = AuditTimestamp();
  std::string line = DumpJson(record);  // one line: JSON escapes every newline in strings
  // Never write a line VerifyAuditLog would call corrupt (too large, nested too deep).
  if (auto back = ParseStrictJson(line, what + ": record"); !back) return back.error();
  const std::string hash = Sha256Hex(line);
  line += '\n';

  // One write() for the whole line; the loop only matters for a short write.
  size_t done = 0;
  while (done < line.size()) {
    const ssize_t n = ::write(fd_.get(), line.data() + done, line.size() - done);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) {
      Error error = SyscallError("write", what);
      if (n == 0) error.context += ": wrote nothing";
      // Leave no torn line behind: we hold the lock, so the log ended at st_size.
      if (done > 0 && ::ftruncate(fd_.get(), st.st_size) < 0) tail_known_ = false;
      return error;
    }
    done += static_cast<size_t>(n);
  }
  tail_known_ = false;
  while (::fdatasync(fd_.get()) < 0) {
    if (errno != EINTR) return SyscallError("fdatasync", what);
  }
  tail_seq_ += 1;
  tail_hash_ = hash;
  tail_size_ = st.st_size + static_cast<off_t>(line.size());
  tail_known_ = true;
  return id;
}

std::string_view AuditProblemName(AuditProblem problem) {
  switch (problem) {
    case AuditProblem::kNone:
      return "ok";
    case AuditProblem::kUnparseable:
      return "unparseable";
    case AuditProblem::kNotARecord:
      return "not_a_record";
    case AuditProblem::kSeqMismatch:
      return "seq_mismatch";
    case AuditProblem::kPrevMismatch:
      return "prev_mismatch";
    case AuditProblem::kTornLine:
      return "torn_line";
    case AuditProblem::kLineTooLong:
      return "line_too_long";
  }
  return "unknown";
}

namespace {

// Checks line `n` (1-based) against the chain so far; false and a filled-in report if bad.
bool CheckLine(const std::string& line, uint64_t n, VerifyReport& report) {
  const std::string at = "line " + std::to_string(n);
  auto fail = [&](AuditProblem problem, std::string reason) {
    report.intact = false;
    report.bad_line = n;
    report.problem = problem;
    report.reason = std::move(reason);
    return false;
  };
  auto parsed = ParseStrictJson(line, at);
  if (!parsed) {
    return fail(AuditProblem::kUnparseable,
                parsed.error().Message() + " (the line was edited or corrupted)");
  }
  if (!parsed->is_object()) {
    return fail(AuditProblem::kUnparseable,
                at + " is not a JSON object (the line was edited or corrupted)");
  }
  const json& record = *parsed;
  const auto seq = record.find("seq");
  const auto prev = record.find("prev");
  if (seq == record.end() || !seq->is_number_unsigned() || prev == record.end() ||
      !prev->is_string() || !IsHex64(prev->get<std::string>())) {
    return fail(AuditProblem::kNotARecord,
                at + " has no integer \"seq\" and SHA-256 \"prev\" (not an agentbox record)");
  }
  const uint64_t got = seq->get<uint64_t>();
  if (got != n) {
    if (got > n) {
      return fail(AuditProblem::kSeqMismatch,
                  at + " has seq " + std::to_string(got) + ": " + std::to_string(got - n) +
                      " line(s) before it were deleted, or lines were reordered");
    }
    return fail(AuditProblem::kSeqMismatch, at + " has seq " + std::to_string(got) + ", expected " +
                                                std::to_string(n) +
                                                ": lines were reordered or duplicated");
  }
  if (prev->get<std::string>() != report.head_sha256) {
    if (n == 1) {
      return fail(AuditProblem::kPrevMismatch,
                  at + "'s prev is not the genesis hash (64 zeros): lines before it were "
                       "removed and the rest renumbered, or this line was edited");
    }
    return fail(AuditProblem::kPrevMismatch,
                at + "'s prev does not match the SHA-256 of line " + std::to_string(n - 1) +
                    ": line " + std::to_string(n - 1) +
                    " was edited (or lines were removed and the rest renumbered)");
  }
  report.head_sha256 = Sha256Hex(line);
  return true;
}

// Verifies the first `size` bytes of the log open at `fd`.
Result<VerifyReport> VerifyPrefix(int fd, off_t size, const std::string& what) {
  VerifyReport report;
  std::string line;
  std::string chunk(kChunk, '\0');
  uint64_t n = 0;
  for (off_t offset = 0; offset < size;) {
    const size_t take = std::min(kChunk, static_cast<size_t>(size - offset));
    if (Status s = PreadAll(fd, chunk.data(), take, offset, what); !s) return s.error();
    offset += static_cast<off_t>(take);
    std::string_view rest(chunk.data(), take);
    while (!rest.empty()) {
      const size_t nl = rest.find('\n');
      line.append(rest.substr(0, nl));
      if (line.size() > kMaxJsonBytes) {
        report.intact = false;
        report.lines = report.bad_line = n + 1;
        report.problem = AuditProblem::kLineTooLong;
        report.reason = "line " + std::to_string(n + 1) + " is longer than 4 MiB";
        return report;
      }
      if (nl == std::string_view::npos) break;
      rest.remove_prefix(nl + 1);
      report.lines = ++n;
      if (!CheckLine(line, n, report)) return report;
      line.clear();
    }
  }
  if (!line.empty()) {
    report.intact = false;
    report.lines = report.bad_line = n + 1;
    report.problem = AuditProblem::kTornLine;
    report.reason = "line " + std::to_string(n + 1) +
                    " has no newline at the end: the log was truncated inside a record, or "
                    "a write was cut short";
  }
  return report;
}

}  // namespace

Result<VerifyReport> VerifyAuditLogFd(int fd, std::string_view name) {
  const std::string what = "audit log " + std::string(name);
  struct stat st {};
  if (::fstat(fd, &st) < 0) return SyscallError("fstat", what);
  return VerifyPrefix(fd, st.st_size, what);
}

namespace {

// Opens an existing log for reading and returns its size as of a moment when no Append was
// half-done (a shared flock, released at once so readers never stall writers).
Result<std::pair<UniqueFd, off_t>> OpenForReading(const std::string& path) {
  const std::string what = "audit log " + path;
  // Reading through a symlink is harmless (a copy of a log can be checked anywhere); a FIFO
  // must not hang us (O_NONBLOCK, then the S_ISREG check).
  UniqueFd fd(::open(path.c_str(), O_RDONLY | O_NONBLOCK | O_CLOEXEC));
  if (!fd) return SyscallError("open", what);
  struct stat st {};
  if (::fstat(fd.get(), &st) < 0) return SyscallError("fstat", what);
  if (!S_ISREG(st.st_mode)) return MakeError(ErrorCode::kSetup, what + " is not a regular file");
  auto lock = FileLock::Take(fd.get(), LOCK_SH, what);
  if (!lock) return lock.error();
  if (::fstat(fd.get(), &st) < 0) return SyscallError("fstat", what);
  return std::make_pair(std::move(fd), st.st_size);
}

}  // namespace

Result<VerifyReport> VerifyAuditLog(const std::string& path) {
  auto opened = OpenForReading(path);
  if (!opened) return opened.error();
  // Exactly what was complete under the lock: lines appended since are not checked.
  return VerifyPrefix(opened->first.get(), opened->second, "audit log " + path);
}

Result<std::vector<std::string>> ReadLastAuditLines(const std::string& path, size_t n) {
  auto opened = OpenForReading(path);
  if (!opened) return opened.error();
  if (n == 0) return std::vector<std::string>{};
  n = std::min(n, SIZE_MAX / 2);  // ReadTail counts n + 1 newlines
  auto tail = ReadTail(opened->first.get(), opened->second, n, SIZE_MAX, "audit log " + path);
  if (!tail) return tail.error();
  return std::move(tail->lines);
}

}  // namespace agentbox
