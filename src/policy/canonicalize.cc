#include "policy/canonicalize.h"

#include <sys/stat.h>

#include <algorithm>
#include <cerrno>
#include <climits>
#include <cstdlib>
#include <memory>

namespace agentbox {
namespace {

// ~ expansion and making absolute; no filesystem access.
Result<std::string> Absolute(std::string_view path, const PathContext& ctx) {
  if (path.empty()) return PolicyValueError("path", path, "empty path");
  if (path.find('\0') != std::string_view::npos)
    return PolicyValueError("path", path, "contains a NUL byte");
  if (path[0] == '~') {
    if (path.size() > 1 && path[1] != '/') {
      return PolicyValueError("path", path,
                              "~user paths are not supported; write the absolute path");
    }
    if (ctx.home.empty())
      return PolicyValueError("path", path, "~ used but no home directory is known");
    std::string out = ctx.home;
    out += path.substr(1);
    return out;
  }
  if (path[0] == '/') return std::string(path);
  if (ctx.cwd.empty())
    return PolicyValueError("path", path, "relative path with no base directory");
  std::string out = ctx.cwd;
  out += '/';
  out += path;
  return out;
}

Result<std::string> RealPath(const std::string& absolute, std::string_view original) {
  std::unique_ptr<char, decltype(&std::free)> resolved(::realpath(absolute.c_str(), nullptr),
                                                       &std::free);
  if (!resolved) {
    Error error = ErrnoError(ErrorCode::kPolicy, "realpath", {});
    std::string context = "path \"";
    context += original;
    context += "\"";
    error.context = std::move(context);
    if (error.err == ENOENT) {
      error.context += ": does not exist";
      error.syscall.clear();
      error.err = 0;
    }
    return error;
  }
  return std::string(resolved.get());
}

}  // namespace

Result<std::string> Canonicalize(std::string_view path, const PathContext& ctx) {
  auto absolute = Absolute(path, ctx);
  if (!absolute) return absolute.error();
  return RealPath(*absolute, path);
}

Result<std::string> CanonicalizeMaybeMissing(std::string_view path, const PathContext& ctx) {
  auto absolute = Absolute(path, ctx);
  if (!absolute) return absolute.error();
  std::string head = *absolute;
  std::string tail;
  // Walk up until a prefix exists; the missing part is appended to its canonical form.
  while (true) {
    struct stat st {};
    if (::lstat(head.c_str(), &st) == 0) break;
    if (errno != ENOENT && errno != ENOTDIR) return RealPath(head, path);
    const size_t slash = head.find_last_of('/');
    std::string component = head.substr(slash + 1);
    if (component == "." || component == "..") {
      return PolicyValueError("path", path, "a missing path may not contain . or ..");
    }
    if (!component.empty()) tail = tail.empty() ? component : component + "/" + tail;
    head.resize(slash == 0 ? 1 : slash);  // "/" always exists, so the loop ends
  }
  auto canonical = RealPath(head, path);
  if (!canonical) return canonical.error();
  if (tail.empty()) return canonical;
  std::string out = *canonical;
  if (out != "/") out += '/';
  out += tail;
  return out;
}

bool PathLess(std::string_view a, std::string_view b) {
  const size_t n = std::min(a.size(), b.size());
  for (size_t i = 0; i < n; ++i) {
    if (a[i] == b[i]) continue;
    if (a[i] == '/') return true;
    if (b[i] == '/') return false;
    return static_cast<unsigned char>(a[i]) < static_cast<unsigned char>(b[i]);
  }
  return a.size() < b.size();
}

bool IsWithin(std::string_view path, std::string_view root) {
  if (root == "/") return !path.empty() && path[0] == '/';
  if (path.size() < root.size() || path.compare(0, root.size(), root) != 0) return false;
  return path.size() == root.size() || path[root.size()] == '/';
}

}  // namespace agentbox
