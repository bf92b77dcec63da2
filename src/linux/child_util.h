// Helpers for code that runs in a child after clone: no allocation, no locks, no exceptions,
// only raw syscalls, so they are safe even when the parent had other threads.
#pragma once

#include <cstddef>

namespace agentbox::child {

// A fixed-size path buffer. Append() reports overflow instead of truncating silently.
class PathBuf {
 public:
  PathBuf() { buf_[0] = '\0'; }
  bool Append(const char* s) noexcept;
  bool AppendNumber(long value) noexcept;
  void Clear() noexcept {
    len_ = 0;
    buf_[0] = '\0';
  }
  [[nodiscard]] const char* c_str() const noexcept { return buf_; }
  [[nodiscard]] size_t size() const noexcept { return len_; }
  void Truncate(size_t len) noexcept {
    len_ = len;
    buf_[len] = '\0';
  }

 private:
  char buf_[4096] = {};
  size_t len_ = 0;
};

// Writes all of `text` to a new O_WRONLY open of `path`. Returns 0 or errno.
[[nodiscard]] int WriteFile(const char* path, const char* text) noexcept;

// mkdir -p of an absolute path; existing components are fine. Returns 0 or errno.
[[nodiscard]] int MakeDirs(const char* path, unsigned mode) noexcept;

// Creates an empty regular file (and its parents) if nothing exists at `path`.
[[nodiscard]] int MakeFile(const char* path) noexcept;

size_t StrLen(const char* s) noexcept;

}  // namespace agentbox::child
