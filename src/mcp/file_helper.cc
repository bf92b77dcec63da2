#include "mcp/file_helper.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <cstring>
#include <string>
#include <string_view>

#include "base/fd.h"

namespace agentbox::mcp {
namespace {

int Failed(const char* what) {
  std::fprintf(stderr, "%s: %s\n", what, std::strerror(errno));
  return 1;
}

bool WriteAll(int fd, const char* data, size_t n) {
  while (n > 0) {
    const ssize_t w = ::write(fd, data, n);
    if (w < 0 && errno == EINTR) continue;
    if (w <= 0) return false;
    data += w;
    n -= static_cast<size_t>(w);
  }
  return true;
}

int Read(const char* path, unsigned long long offset, unsigned long long max) {
  UniqueFd fd(::open(path, O_RDONLY | O_NOFOLLOW | O_CLOEXEC | O_NOCTTY | O_NONBLOCK));
  if (!fd) return Failed("open");
  struct stat st {};
  if (::fstat(fd.get(), &st) != 0) return Failed("fstat");
  if (!S_ISREG(st.st_mode)) {
    std::fprintf(stderr, "open: not a regular file\n");
    return 1;
  }
  std::fprintf(stderr, "{\"size\": %lld}\n", static_cast<long long>(st.st_size));
  char buf[65536];
  auto pos = static_cast<off_t>(offset);
  while (max > 0) {
    const ssize_t n = ::pread(fd.get(), buf, std::min<unsigned long long>(max, sizeof(buf)), pos);
    if (n < 0 && errno == EINTR) continue;
    if (n < 0) return Failed("read");
    if (n == 0) break;
    if (!WriteAll(STDOUT_FILENO, buf, static_cast<size_t>(n))) return Failed("write");
    pos += n;
    max -= static_cast<unsigned long long>(n);
  }
  return 0;
}

int Write(const char* path, std::string_view mode) {
  int flags = O_WRONLY | O_CREAT | O_NOFOLLOW | O_CLOEXEC | O_NOCTTY;
  if (mode == "create") {
    flags |= O_EXCL;
  } else if (mode == "overwrite") {
    flags |= O_TRUNC;
  } else if (mode == "append") {
    flags |= O_APPEND;
  } else {
    std::fprintf(stderr, "mode: expected create, overwrite or append\n");
    return 2;
  }
  UniqueFd fd(::open(path, flags, 0644));
  if (!fd) return Failed("open");
  char buf[65536];
  unsigned long long total = 0;
  while (true) {
    const ssize_t n = ::read(STDIN_FILENO, buf, sizeof(buf));
    if (n < 0 && errno == EINTR) continue;
    if (n < 0) return Failed("read content");
    if (n == 0) break;
    if (!WriteAll(fd.get(), buf, static_cast<size_t>(n))) return Failed("write");
    total += static_cast<unsigned long long>(n);
  }
  if (::fsync(fd.get()) != 0) return Failed("fsync");
  std::printf("{\"bytes\": %llu}\n", total);
  return 0;
}

bool ParseNumber(const char* text, unsigned long long* out) {
  char* end = nullptr;
  errno = 0;
  *out = std::strtoull(text, &end, 10);
  return errno == 0 && end != text && *end == '\0' && text[0] != '-';
}

}  // namespace

int FileHelperMain(std::span<char* const> args) {
  const std::string_view op = args.empty() ? "" : args[0];
  unsigned long long offset = 0;
  unsigned long long max = 0;
  if (op == "read" && args.size() == 4 && ParseNumber(args[2], &offset) &&
      ParseNumber(args[3], &max)) {
    return Read(args[1], offset, max);
  }
  if (op == "write" && args.size() == 3) return Write(args[1], args[2]);
  std::fprintf(stderr, "usage: agentbox %s read PATH OFFSET MAX | write PATH MODE\n",
               kFileHelperCommand);
  return 2;
}

}  // namespace agentbox::mcp
