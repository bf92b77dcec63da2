// Policy JSON: the agentbox policy document (used for both operator ceilings and agent
// requests), parsed strictly, and the JSON forms of effective policies and decisions.
//
//   {"filesystem": {"readonly": ["~/src"], "readwrite": ["/tmp/out"], "denied": []},
//    "network": "block" | "allow" | {"proxy": {"allowDomains": ["*.pypi.org"], "denyDomains": []}},
//    "timeoutMs": 60000, "limits": {"pids": 256, "memoryBytes": 1073741824, "cpuSeconds": 30}}
//
//   auto doc = ParsePolicyDocument(text, "request");  // every field optional
//   if (!doc) return doc.error();   // kPolicy: "request: /timeoutMs: must be at least 1"
//
// Unknown fields at any level, duplicate keys and wrong types are errors naming the field.
// Paths and domains are checked only for being non-empty strings without NUL bytes; they
// are canonicalized and validated by the policy module's clamp.
//
// The returned json values may hold strings that are not UTF-8 (canonical paths): serialize
// them with DumpJson (config/strict_json.h), which cannot throw.
#pragma once

#include <nlohmann/json.hpp>
#include <string>
#include <string_view>

#include "base/result.h"
#include "config/strict_json.h"  // DumpJson
#include "net/egress.h"
#include "policy/policy.h"

namespace agentbox {

// Errors have code kPolicy and a context starting with "<source>: ".
[[nodiscard]] Result<PolicyDocument> ParsePolicyDocument(std::string_view text,
                                                         std::string_view source);

// Reads and parses a policy file. Errors (kPolicy, naming the path): cannot be opened or
// read (with strerror), not a regular file, larger than 4 MiB, invalid document.
[[nodiscard]] Result<PolicyDocument> LoadPolicyFile(const std::string& path);

// The document in the format ParsePolicyDocument accepts: for every document it returned,
// ParsePolicyDocument(DumpJson(PolicyDocumentToJson(doc))) == doc. Absent fields are
// omitted; domain lists are written only for a proxy network.
[[nodiscard]] nlohmann::json PolicyDocumentToJson(const PolicyDocument& doc);

// {"filesystem": {...}, "network": ..., "timeoutMs": N, "limits": {present limits only}}
[[nodiscard]] nlohmann::json PolicyToJson(const Policy& policy);
// {"kind": "path", "path": subject, "asked": ..., "granted": ..., "reason": ...}
[[nodiscard]] nlohmann::json DecisionToJson(const Decision& decision);
// {"policy": PolicyToJson, "decisions": [DecisionToJson...]}
[[nodiscard]] nlohmann::json ClampResultToJson(const ClampResult& result);
// The egress proxy's decisions: {"connections": [{"protocol", "host", "port", "allowed",
// "reason"?, "address"?}...]}, as --json results, MCP results and audit records show them.
[[nodiscard]] nlohmann::json ConnectionsToJson(const std::vector<ConnectionRecord>& records);

}  // namespace agentbox
