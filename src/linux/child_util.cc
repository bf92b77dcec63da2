#include "linux/child_util.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>

namespace agentbox::child {

size_t StrLen(const char* s) noexcept {
  size_t n = 0;
  while (s[n] != '\0') ++n;
  return n;
}

bool PathBuf::Append(const char* s) noexcept {
  const size_t n = StrLen(s);
  if (len_ + n + 1 > sizeof(buf_)) return false;
  for (size_t i = 0; i < n; ++i) buf_[len_ + i] = s[i];
  len_ += n;
  buf_[len_] = '\0';
  return true;
}

bool PathBuf::AppendNumber(long value) noexcept {
  char digits[24];
  size_t n = 0;
  bool negative = value < 0;
  unsigned long v =
      negative ? 0UL - static_cast<unsigned long>(value) : static_cast<unsigned long>(value);
  do {
    digits[n++] = static_cast<char>('0' + v % 10);
    v /= 10;
  } while (v != 0);
  char out[26];
  size_t k = 0;
  if (negative) out[k++] = '-';
  while (n > 0) out[k++] = digits[--n];
  out[k] = '\0';
  return Append(out);
}

int WriteFile(const char* path, const char* text) noexcept {
  const int fd = ::open(path, O_WRONLY | O_CLOEXEC);
  if (fd < 0) return errno;
  const size_t len = StrLen(text);
  const ssize_t n = ::write(fd, text, len);
  const int err = n < 0 ? errno : (static_cast<size_t>(n) == len ? 0 : EIO);
  ::close(fd);
  return err;
}

int MakeDirs(const char* path, unsigned mode) noexcept {
  PathBuf buf;
  if (!buf.Append(path)) return ENAMETOOLONG;
  char* p = const_cast<char*>(buf.c_str());
  size_t len = buf.size();
  while (len > 1 && p[len - 1] == '/') p[--len] = '\0';
  // From the end: usually only the last component is missing (a mount plan lists parents
  // first), so one mkdir does, instead of one per component (most failing with EEXIST).
  size_t end = len;  // p[0, end) is the directory being made
  while (true) {
    const char saved = p[end];
    p[end] = '\0';
    const int err = ::mkdir(p, mode) == 0 ? 0 : errno;
    p[end] = saved;
    if (err == 0 || err == EEXIST) break;
    if (err != ENOENT) return err;
    // Its parent is missing: step back one component.
    while (end > 0 && p[end - 1] != '/') --end;
    while (end > 0 && p[end - 1] == '/') --end;
    if (end == 0) return ENOENT;
  }
  // Then forward again, making the components after it.
  while (end < len) {
    ++end;  // past the '/'
    while (end < len && p[end] != '/') ++end;
    const char saved = p[end];
    p[end] = '\0';
    const int err = ::mkdir(p, mode) == 0 ? 0 : errno;
    p[end] = saved;
    if (err != 0 && err != EEXIST) return err;
  }
  return 0;
}

int MakeFile(const char* path) noexcept {
  struct stat st {};
  if (::lstat(path, &st) == 0) return 0;
  int fd = ::open(path, O_CREAT | O_EXCL | O_WRONLY | O_CLOEXEC, 0444);
  if (fd < 0 && errno == ENOENT) {  // the parent is missing too
    PathBuf parent;
    if (!parent.Append(path)) return ENAMETOOLONG;
    size_t slash = parent.size();
    while (slash > 0 && parent.c_str()[slash - 1] != '/') --slash;
    parent.Truncate(slash > 1 ? slash - 1 : 1);
    if (const int err = MakeDirs(parent.c_str(), 0755); err != 0) return err;
    fd = ::open(path, O_CREAT | O_EXCL | O_WRONLY | O_CLOEXEC, 0444);
  }
  if (fd < 0) return errno == EEXIST ? 0 : errno;
  ::close(fd);
  return 0;
}

}  // namespace agentbox::child
