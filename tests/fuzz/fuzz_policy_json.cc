// Fuzz target for the policy document parser (config/policy_json.h).
//
// Property checked, beyond "no crash, no leak, no UB": every document the parser accepts
// serializes to text that parses back to the same document.
#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>

#include "config/policy_json.h"
#include "config/strict_json.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const std::string_view text(reinterpret_cast<const char*>(data), size);
  auto doc = agentbox::ParsePolicyDocument(text, "fuzz");
  if (!doc) return 0;
  const std::string dumped = agentbox::DumpJson(agentbox::PolicyDocumentToJson(*doc));
  auto again = agentbox::ParsePolicyDocument(dumped, "fuzz-roundtrip");
  if (!again || !(*again == *doc)) __builtin_trap();
  return 0;
}
