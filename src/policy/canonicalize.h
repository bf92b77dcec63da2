// Canonical paths: the only form in which agentbox compares paths.
//
//   PathContext ctx{.home = "/home/u", .cwd = "/home/u/proj"};
//   Canonicalize("~/proj/../proj/src", ctx)  -> "/home/u/proj/src" (symlinks resolved)
//   IsWithin("/tmp/run-42/out", "/tmp")      -> true
//   IsWithin("/tmpx", "/tmp")                -> false
//
// SEC-1: every path is canonicalized (~ expanded, made absolute, symlinks and `..` resolved
// by realpath) before it is compared with anything, so a symlink or `..` cannot make a path
// look as if it lay inside a grant when its target does not.
#pragma once

#include <string>
#include <string_view>

#include "base/result.h"

namespace agentbox {

struct PathContext {
  std::string home;  // expansion of "~"; empty: "~" is an error
  std::string cwd;   // base of relative paths; empty: a relative path is an error
};

// Returns the canonical absolute form of an existing path. Errors (kPolicy, naming the
// path): empty, contains NUL, "~user" form, relative with no base, does not exist,
// cannot be resolved.
[[nodiscard]] Result<std::string> Canonicalize(std::string_view path, const PathContext& ctx);

// Like Canonicalize, but a path that does not exist is resolved as far as it exists and
// the rest appended lexically (for denied entries, where "nothing there" is fine). The
// missing tail must not contain "." or "..".
[[nodiscard]] Result<std::string> CanonicalizeMaybeMissing(std::string_view path,
                                                           const PathContext& ctx);

// Orders paths so that every ancestor comes right before its descendants ("/a", "/a/b",
// "/a-b"): '/' sorts below every other character.
[[nodiscard]] bool PathLess(std::string_view a, std::string_view b);

// True iff `path` equals `root` or lies beneath it. Both must be canonical.
[[nodiscard]] bool IsWithin(std::string_view path, std::string_view root);

}  // namespace agentbox
