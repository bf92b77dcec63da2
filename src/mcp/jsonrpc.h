// JSON-RPC 2.0 over newline-delimited stdio, as MCP uses it: one message per line.
//
//   Message m = ParseMessage(line);
//   if (m.kind == Message::kInvalid) write(ErrorResponse(m.id, m.error_code, m.error_message));
//   if (m.kind == Message::kRequest) ... reply with Response(m.id, result) ...
//
// Ids are echoed exactly (0 is a valid id). Batches (arrays) were removed from MCP after
// 2025-03-26 and are answered with -32600. Notifications never get a reply.
#pragma once

#include <nlohmann/json.hpp>
#include <string>
#include <string_view>

namespace agentbox::mcp {

inline constexpr int kParseError = -32700;
inline constexpr int kInvalidRequest = -32600;
inline constexpr int kMethodNotFound = -32601;
inline constexpr int kInvalidParams = -32602;
inline constexpr int kInternalError = -32603;

// Longest line accepted; a longer one is answered with -32600 and skipped.
inline constexpr size_t kMaxLineBytes = 8 << 20;

struct Message {
  enum Kind { kRequest, kNotification, kResponse, kInvalid };
  Kind kind = kInvalid;
  nlohmann::json id;      // null when absent or unreadable
  std::string method;     // requests and notifications
  nlohmann::json params;  // object, or null when absent
  int error_code = 0;     // kInvalid: the JSON-RPC error to answer with
  std::string error_message;
};

[[nodiscard]] Message ParseMessage(std::string_view line);

// Serialized single-line messages, each ending in '\n'.
[[nodiscard]] std::string Response(const nlohmann::json& id, const nlohmann::json& result);
[[nodiscard]] std::string ErrorResponse(const nlohmann::json& id, int code,
                                        std::string_view message);
[[nodiscard]] std::string Notification(std::string_view method, const nlohmann::json& params);

}  // namespace agentbox::mcp
