// The audit log: an append-only, hash-chained JSON Lines file, one record per line.
//
//   auto path = DefaultAuditLogPath(::getenv);    // $XDG_STATE_HOME/agentbox/audit.jsonl
//   auto log = AuditLog::Open(*path);              // creates the 0700 dir and 0600 file
//   auto id = log->Append({{"type", "pending"}, {"tool", "run_code"}, {"request", redacted}});
//   if (!id) return Refuse(id.error());            // fail closed: nothing runs
//   ... run ...
//   log->Append({{"type", "completed"}, {"id", *id}, {"outcome", outcome}});
//
// A line as written (keys sorted; `time`, `seq`, `prev` and, if absent, `id` added by Append):
//   {"id":"5f0c...","prev":"000...000","seq":1,"time":"2025-06-18T09:30:00.123Z",
//    "tool":"run_code","type":"pending",...}
//
// The chain: line N's `prev` is the SHA-256 (hex) of line N-1's bytes without its newline
// (64 zeros for line 1), and its `seq` is N. VerifyAuditLog recomputes both, so it catches
// an edited line (the next line's `prev` no longer matches, or the line no longer parses), a
// line deleted from the start or middle, and reordered lines (`seq` out of step).
//
// What the chain cannot show, from the log alone:
// - Lines removed from the END (truncation at a line boundary), or an edit of the very last
//   line: nothing after them vouches for them. VerifyReport::head_sha256 is the hash of the
//   last line; an operator who keeps it elsewhere (or ships lines to another host) and
//   compares later closes that gap.
// - A writer that recomputes the whole chain. The hashes are unkeyed: they make edits
//   evident to anyone not willing to rewrite every later line, not impossible.
//
// Writers: every Append holds a mutex (threads of one process) and flock(LOCK_EX) on the
// file (other processes, other AuditLog objects), reads the last line's hash under the lock
// (cached while the file size is what our last write left), then appends the line with one
// write() and fdatasync()s it before returning. Every writer must go through AuditLog.
// Rotation (renaming the file away) is not handled: a rename leaves an open AuditLog
// appending to the renamed file.
#pragma once

#include <sys/types.h>

#include <cstdint>
#include <functional>
#include <memory>
#include <mutex>
#include <nlohmann/json.hpp>
#include <string>
#include <string_view>
#include <vector>

#include "base/fd.h"
#include "base/result.h"

namespace agentbox {

// The `type` of the records a tool call writes: a `pending` record before anything runs,
// then one of the other three, carrying the same `id`.
inline constexpr std::string_view kAuditPending = "pending";
inline constexpr std::string_view kAuditCompleted = "completed";
inline constexpr std::string_view kAuditRefused = "refused";
inline constexpr std::string_view kAuditFailed = "failed";

// `prev` of the first line.
inline constexpr std::string_view kAuditGenesisHash =
    "0000000000000000000000000000000000000000000000000000000000000000";

// `$XDG_STATE_HOME/agentbox/audit.jsonl`, or `$HOME/.local/state/agentbox/audit.jsonl` when
// XDG_STATE_HOME is unset, empty or relative (as the XDG spec says to ignore it). A kSetup
// error if neither gives an absolute path. `getenv_fn`: ::getenv or a fake.
[[nodiscard]] Result<std::string> DefaultAuditLogPath(
    const std::function<const char*(const char*)>& getenv_fn);

// A random 128-bit id as 32 lower-case hex characters (getrandom(2)), joining a tool call's
// `pending` record to its outcome.
[[nodiscard]] Result<std::string> NewAuditId();

// RFC 3339 UTC with milliseconds, "2025-06-18T09:30:00.123Z", for now.
[[nodiscard]] std::string AuditTimestamp();

class AuditLog {
 public:
  // Opens `path` for appending, creating missing directories (0700) and the file (0600) with
  // exactly those modes whatever the umask. Refuses (kSetup) a log file or directory that is
  // a symlink, is not owned by the effective uid, or is accessible to group or others; and
  // a log file that is not a regular file. Directories above the log's own are created if
  // missing but not checked. Errors name the path and the failing syscall.
  [[nodiscard]] static Result<AuditLog> Open(const std::string& path);

  // Appends `record` (a JSON object with a string "type") as one line, with "time", "seq"
  // and "prev" set (overwriting any given) and "id" set to NewAuditId() unless the record
  // has a string "id". Returns the id once the line is written and fdatasync'd. On error the
  // line is not in the log (a partial write is truncated away) unless only the fdatasync
  // failed; either way the caller must treat the record as unwritten (fail closed).
  // Refuses a record VerifyAuditLog could not read back (over kMaxJsonBytes when serialized,
  // or nested deeper than kMaxJsonDepth), and refuses to extend a log whose last line is
  // torn or not a record. Thread-safe; a moved-from AuditLog must not be used.
  [[nodiscard]] Result<std::string> Append(nlohmann::json record);

  [[nodiscard]] const std::string& path() const { return path_; }

 private:
  AuditLog(std::string path, UniqueFd fd)
      : path_(std::move(path)), fd_(std::move(fd)), mu_(std::make_unique<std::mutex>()) {}
  [[nodiscard]] Status LoadTail(off_t size);

  std::string path_;
  UniqueFd fd_;
  std::unique_ptr<std::mutex> mu_;  // a pointer so that AuditLog can move
  // What the log ended with at our last look: valid while its size is still tail_size_.
  bool tail_known_ = false;
  off_t tail_size_ = 0;
  uint64_t tail_seq_ = 0;
  std::string tail_hash_;
};

enum class AuditProblem {
  kNone,
  kUnparseable,   // the line is not a JSON object
  kNotARecord,    // no integer "seq" or string "prev"
  kSeqMismatch,   // "seq" is not the line number: a line deleted before it, or reordered
  kPrevMismatch,  // "prev" is not the hash of the line before: that line was edited
  kTornLine,      // the last line has no newline: truncated mid-record or a torn write
  kLineTooLong,   // a line longer than kMaxJsonBytes
};

[[nodiscard]] std::string_view AuditProblemName(AuditProblem problem);

struct VerifyReport {
  bool intact = true;
  uint64_t lines = 0;     // complete lines read (up to and including the bad one)
  uint64_t bad_line = 0;  // 1-based; 0 when intact
  AuditProblem problem = AuditProblem::kNone;
  std::string reason;  // one sentence saying what is wrong and what it means
  // SHA-256 of the last intact line (kAuditGenesisHash for an empty log): the value to keep
  // elsewhere to detect truncation or an edit of the last line later.
  std::string head_sha256{kAuditGenesisHash};
};

// Recomputes the chain of the log at `path` (opened read-only; the size to check is taken
// under a shared flock, so a concurrent Append is never seen half-written) and reports the
// first bad line.
// A Result error (kSetup) only when the file cannot be opened or read.
[[nodiscard]] Result<VerifyReport> VerifyAuditLog(const std::string& path);
// The same over an open fd read from offset 0 (pread; the fd's offset is not used). `name`
// appears in error messages.
[[nodiscard]] Result<VerifyReport> VerifyAuditLogFd(int fd, std::string_view name);

// The last `n` complete lines of the log at `path` (without newlines), oldest first, read
// backwards from the end; a torn last line is left out. For `agentbox audit tail`.
[[nodiscard]] Result<std::vector<std::string>> ReadLastAuditLines(const std::string& path,
                                                                  size_t n);

}  // namespace agentbox
