// Fuzz target: canonicalize + clamp random request paths against a fixture tree that holds
// symlinks pointing in, out and in loops. Property (SEC-1, SEC-2, SEC-3): whatever the
// input, no effective grant is wider than the ceiling allows at that path, and nothing inside
// the credential store is granted.
#include <stdlib.h>

#include <cstdint>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <string>

#include "policy/canonicalize.h"
#include "policy/clamp.h"

namespace {

namespace fs = std::filesystem;
using agentbox::Access;

struct Fixture {
  std::string root;
  agentbox::Ceiling ceiling;
  agentbox::PathContext ctx;

  Fixture() {
    char tmpl[] = "/tmp/agentbox-fuzz-clamp-XXXXXX";
    if (::mkdtemp(tmpl) == nullptr) std::abort();
    root = fs::canonical(tmpl).string();
    const fs::path r(root);
    for (const char* d : {"home/proj/src", "home/proj/.git/hooks", "home/docs/a", "home/.ssh",
                          "home/other", "outside/x"}) {
      fs::create_directories(r / d);
    }
    std::ofstream(r / "home/.ssh/id") << "key";
    std::ofstream(r / "home/docs/a/f") << "f";
    fs::create_directory_symlink("../../outside", r / "home/proj/out");
    fs::create_directory_symlink("../.ssh", r / "home/proj/keys");
    fs::create_directory_symlink("src", r / "home/proj/in");
    fs::create_directory_symlink("loop", r / "home/proj/loop");
    fs::create_directory_symlink("/", r / "home/proj/root");
    ceiling.doc.filesystem.readwrite = {root + "/home/proj"};
    ceiling.doc.filesystem.readonly = {root + "/home/docs"};
    ceiling.doc.filesystem.denied = {root + "/home/docs/a"};
    ctx = {root + "/home", root + "/home/proj"};
  }
  ~Fixture() {
    std::error_code ignored;
    fs::remove_all(root, ignored);
  }
};

Fixture& TheFixture() {
  static Fixture fixture;
  return fixture;
}

// The ceiling's access at a canonical path, computed independently of clamp.cc.
Access CeilingAccess(const Fixture& f, const std::string& path) {
  const std::string proj = f.root + "/home/proj";
  const std::string docs = f.root + "/home/docs";
  if (agentbox::IsWithin(path, docs + "/a")) return Access::kNone;
  if (agentbox::IsWithin(path, docs)) return Access::kReadOnly;
  if (agentbox::IsWithin(path, proj)) return Access::kReadWrite;
  return Access::kNone;
}

void Check(bool ok, const char* what, const std::string& path) {
  if (ok) return;
  std::fprintf(stderr, "property violated: %s: %s\n", what, path.c_str());
  __builtin_trap();
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  Fixture& f = TheFixture();
  agentbox::Request request;
  // Each line is one path; its first byte picks the list it goes to.
  const std::string input(reinterpret_cast<const char*>(data), size);
  size_t start = 0;
  while (start < input.size()) {
    size_t end = input.find('\n', start);
    if (end == std::string::npos) end = input.size();
    if (end > start) {
      const char selector = input[start];
      std::string path = input.substr(start + 1, end - start - 1);
      auto& fs_rules = request.doc.filesystem;
      (selector % 3 == 0   ? fs_rules.readonly
       : selector % 3 == 1 ? fs_rules.readwrite
                           : fs_rules.denied)
          .push_back(std::move(path));
    }
    start = end + 1;
  }
  auto result = agentbox::Clamp(f.ceiling, request, f.ctx);
  if (!result) return 0;
  const std::string ssh = f.root + "/home/.ssh";
  for (const std::string& p : result->policy.filesystem.readwrite) {
    Check(CeilingAccess(f, p) == Access::kReadWrite, "read-write beyond the ceiling", p);
    Check(!agentbox::IsWithin(p, f.root + "/home/proj/.git/hooks"), "hooks writable", p);
  }
  for (const std::string& p : result->policy.filesystem.readonly) {
    Check(CeilingAccess(f, p) >= Access::kReadOnly, "read-only beyond the ceiling", p);
    Check(!agentbox::IsWithin(p, ssh), "credential store granted", p);
  }
  return 0;
}
