#include <pwd.h>
#include <unistd.h>

#include <cstdio>
#include <cstdlib>
#include <string>

#include "cli/commands.h"
#include "config/env_ceiling.h"
#include "config/policy_json.h"
#include "policy/clamp.h"

namespace agentbox {

PathContext HostPathContext() {
  PathContext ctx;
  if (const char* home = std::getenv("HOME"); home != nullptr && home[0] == '/') {
    ctx.home = home;
  } else if (const passwd* pw = ::getpwuid(::getuid()); pw != nullptr && pw->pw_dir != nullptr) {
    ctx.home = pw->pw_dir;
  }
  std::string cwd(4096, '\0');
  if (::getcwd(cwd.data(), cwd.size()) != nullptr) {
    cwd.resize(cwd.find('\0'));
    ctx.cwd = std::move(cwd);
  }
  return ctx;
}

Result<Ceiling> LoadOperatorCeiling(const std::optional<std::string>& file,
                                    const PathContext& ctx) {
  if (file) {
    auto doc = LoadPolicyFile(*file);
    if (!doc) return doc.error();
    return Ceiling{std::move(*doc)};
  }
  auto from_env = CeilingFromEnvironment([](const char* name) { return std::getenv(name); });
  if (!from_env) return from_env.error();
  if (*from_env) return Ceiling{std::move(**from_env)};
  if (ctx.cwd.empty()) {
    return MakeError(ErrorCode::kPolicy,
                     "no ceiling given and the working directory is unknown; pass --ceiling");
  }
  return DefaultCeiling(ctx.cwd);
}

int Fail(const Error& error) {
  const std::string_view code = ErrorCodeName(error.code);
  std::fprintf(stderr, "agentbox: %.*s error: %s\n", static_cast<int>(code.size()), code.data(),
               error.Message().c_str());
  return kExitRefused;
}

}  // namespace agentbox
