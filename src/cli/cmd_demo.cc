// agentbox demo: shows agentbox at work on a throwaway fixture home. For now it shows the
// policy engine (the sandbox-backed beats come with `agentbox run` and the MCP server).
#include <sys/stat.h>
#include <unistd.h>

#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <string>

#include "base/scope_guard.h"
#include "cli/commands.h"
#include "cli/flags.h"
#include "policy/clamp.h"

namespace agentbox {
namespace {

namespace fs = std::filesystem;

struct Style {
  bool color;
  const char* bold() const { return color ? "\033[1m" : ""; }
  const char* green() const { return color ? "\033[32m" : ""; }
  const char* red() const { return color ? "\033[31m" : ""; }
  const char* reset() const { return color ? "\033[0m" : ""; }
};

void WriteFile(const fs::path& path, const std::string& text) { std::ofstream(path) << text; }

// A fake home: Documents, Downloads, a project with git hooks, and an ~/.ssh key.
void BuildFixture(const fs::path& home) {
  fs::create_directories(home / "Documents");
  fs::create_directories(home / "Downloads");
  fs::create_directories(home / "project/.git/hooks");
  fs::create_directories(home / ".ssh");
  WriteFile(home / "Documents/notes.txt", "quarterly numbers\n");
  WriteFile(home / ".ssh/id_ed25519", "-----BEGIN OPENSSH PRIVATE KEY----- (fixture)\n");
  WriteFile(home / ".bashrc", "# fixture\n");
  WriteFile(home / "project/.git/config", "[core]\n");
  fs::create_directory_symlink("../.ssh", home / "Downloads/keys");
}

void Show(const Style& s, const char* title, const Ceiling& ceiling, const Request& request,
          const PathContext& ctx) {
  std::printf("\n%s%s%s\n", s.bold(), title, s.reset());
  auto result = Clamp(ceiling, request, ctx);
  if (!result) {
    std::printf("  %srefused%s: %s\n", s.red(), s.reset(), result.error().Message().c_str());
    return;
  }
  const FilesystemRules& f = result->policy.filesystem;
  for (const auto& p : f.readwrite)
    std::printf("  %sread-write%s %s\n", s.green(), s.reset(), p.c_str());
  for (const auto& p : f.readonly)
    std::printf("  %sread-only%s  %s\n", s.green(), s.reset(), p.c_str());
  for (const auto& p : f.denied)
    std::printf("  %shidden%s     %s\n", s.red(), s.reset(), p.c_str());
  std::printf("  network    %s, timeout %llu ms\n", NetworkModeName(result->policy.network.mode),
              static_cast<unsigned long long>(result->policy.timeout_ms));
  for (const Decision& d : result->decisions) {
    std::printf("  %sdecision%s   %s: asked %s, granted %s: %s\n", s.red(), s.reset(),
                d.subject.c_str(), d.asked.c_str(), d.granted.c_str(), d.reason.c_str());
  }
}

}  // namespace

int DemoCommand(std::span<char* const> args) {
  Flags flags("agentbox demo");
  bool no_pause = false;
  flags.Switch("--no-pause", &no_pause, "do not pause between beats");
  auto positional = flags.Parse(args, /*allow_positional=*/false);
  if (!positional) return Fail(positional.error());
  if (flags.HelpRequested()) {
    std::fputs(flags.Usage("[--no-pause]").c_str(), stdout);
    return 0;
  }
  const Style s{::isatty(STDOUT_FILENO) == 1};

  std::string tmpl = (fs::temp_directory_path() / "agentbox-demo-XXXXXX").string();
  if (::mkdtemp(tmpl.data()) == nullptr) {
    return Fail(ErrnoError(ErrorCode::kSetup, "mkdtemp", "creating the demo fixture"));
  }
  const fs::path root(tmpl);
  auto cleanup = ScopeGuard([&] {
    std::error_code ignored;
    fs::remove_all(root, ignored);
  });
  const fs::path home = root / "home";
  BuildFixture(home);
  const PathContext ctx{home.string(), home.string()};

  std::printf("%sagentbox demo: the operator's ceiling, and an agent asking for more%s\n", s.bold(),
              s.reset());
  std::printf("Fixture home: %s\n", home.c_str());
  std::printf(
      "Operator ceiling: Documents read-only; Downloads and project read-write;\n"
      "network blocked; at most 30 s.\n");
  Ceiling ceiling;
  ceiling.doc.filesystem.readonly = {"~/Documents"};
  ceiling.doc.filesystem.readwrite = {"~/Downloads", "~/project"};

  Request write_docs;
  write_docs.doc.filesystem.readwrite = {"~/Documents"};
  Show(s, "1. The agent asks to write ~/Documents: narrowed to read-only.", ceiling, write_docs,
       ctx);

  Request via_link;
  via_link.doc.filesystem.readonly = {"~/Downloads/keys"};
  Show(s,
       "2. The agent asks for ~/Downloads/keys, a symlink to ~/.ssh: the link is resolved "
       "first, so it is refused.",
       ceiling, via_link, ctx);

  Request project;
  project.doc.filesystem.readwrite = {"~/project"};
  Show(s,
       "3. The agent asks to write ~/project: granted, but .git/hooks and .git/config stay "
       "read-only.",
       ceiling, project, ctx);

  Request more;
  more.doc.network = Network{NetworkMode::kAllow, {}, {}};
  more.doc.timeout_ms = 600'000;
  Show(s, "4. The agent asks for the network and ten minutes: narrowed to the ceiling.", ceiling,
       more, ctx);

  Request root_rw;
  root_rw.doc.filesystem.readwrite = {"/"};
  Show(s, "5. The agent asks to write /: refused outright.", ceiling, root_rw, ctx);
  return 0;
}

}  // namespace agentbox
