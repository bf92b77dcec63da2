// Fuzz target for the MXC config parser (config/mxc_config.h).
//
// Properties checked, beyond "no crash, no leak, no UB":
// - every config the parser accepts satisfies CheckMxcInvariants (non-empty command line,
//   clean paths, supported version, one matching backend section, consistent network forms);
// - it survives its JSON form: parse(dump(config)) == config;
// - mapping it onto agentbox either fails with a typed error, or gives the same shell argv
//   for every config (the script travels in the environment, never on argv).
// The same bytes are also tried as --config-base64 input: decoding never crashes, and what
// decodes re-encodes to the same text.
#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "base/base64.h"
#include "config/mxc_config.h"
#include "config/strict_json.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const std::string_view text(reinterpret_cast<const char*>(data), size);

  if (auto decoded = agentbox::Base64Decode(text)) {  // as --config-base64 decodes it
    if (agentbox::Base64Encode(*decoded) != text) __builtin_trap();
  }

  auto config = agentbox::ParseMxcConfig(text, "fuzz");
  if (!config) {
    if (config.error().code != agentbox::ErrorCode::kPolicy) __builtin_trap();
    return 0;
  }
  if (!agentbox::CheckMxcInvariants(*config)) __builtin_trap();
  const std::string dumped = agentbox::DumpJson(agentbox::MxcConfigToJson(*config));
  auto again = agentbox::ParseMxcConfig(dumped, "fuzz-roundtrip");
  if (!again || !(*again == *config)) __builtin_trap();

  auto run = agentbox::MapMxcConfig(*config, {});
  if (!run) {
    const auto code = run.error().code;
    if (code != agentbox::ErrorCode::kUnsupported && code != agentbox::ErrorCode::kPolicy) {
      __builtin_trap();
    }
    return 0;
  }
  // The shell's argv is the same for every config: the script is never on it.
  static const std::vector<std::string> kArgv = [] {
    auto minimal = agentbox::ParseMxcConfig(R"({"process":{"commandLine":"x"}})", "minimal");
    return agentbox::MapMxcConfig(*minimal, {})->argv;
  }();
  if (run->argv != kArgv) __builtin_trap();
  if (run->env.empty() ||
      run->env.back() != std::string(agentbox::kMxcScriptVariable) + "=" + config->command_line) {
    __builtin_trap();
  }
  return 0;
}
