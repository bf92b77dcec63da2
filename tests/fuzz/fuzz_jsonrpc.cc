// Fuzz target for the JSON-RPC line reader of `agentbox mcp` (mcp/jsonrpc.h).
//
// The input is split into lines the way the server splits stdin (at '\n', a trailing '\r'
// dropped, blank lines skipped) and every line goes through ParseMessage. Properties checked,
// beyond "no crash, no leak, no UB":
// - nothing throws (ParseMessage, Response, ErrorResponse, Notification);
// - a kRequest has a non-empty-or-empty string method equal to the line's "method", and an id
//   that is a string or an integer; a kNotification has no id; a kResponse has a valid id;
// - a kInvalid carries one of the JSON-RPC error codes, and an id that is null or valid;
// - the reply the server would write (Response / ErrorResponse) is exactly one line of valid
//   JSON ending in '\n', with jsonrpc "2.0", and the id echoed exactly (omitted when null, for
//   an error).
#include <cstddef>
#include <cstdint>
#include <exception>
#include <nlohmann/json.hpp>
#include <string>
#include <string_view>

#include "mcp/jsonrpc.h"

namespace {

using agentbox::mcp::Message;
using nlohmann::json;

void Check(bool ok) {
  if (!ok) __builtin_trap();
}

bool IsValidId(const json& id) {
  return id.is_string() || id.is_number_integer() || id.is_number_unsigned();
}

// One line of JSON, newline-terminated, nothing after it; returns the parsed value.
json ParseOneLine(const std::string& out) {
  Check(!out.empty() && out.back() == '\n');
  Check(out.find('\n') == out.size() - 1);
  Check(out.find('\r') == std::string::npos);
  json j = json::parse(out, nullptr, /*allow_exceptions=*/false);
  Check(!j.is_discarded());
  Check(j.is_object());
  Check(j.contains("jsonrpc") && j["jsonrpc"] == "2.0");
  return j;
}

void CheckLine(std::string_view line) {
  const Message m = agentbox::mcp::ParseMessage(line);
  switch (m.kind) {
    case Message::kRequest: {
      Check(IsValidId(m.id));
      // The method is exactly the line's "method" string.
      const json original = json::parse(line, nullptr, false);
      Check(!original.is_discarded() && original.is_object());
      Check(original.contains("method") && original["method"].is_string());
      Check(original["method"].get<std::string>() == m.method);
      Check(m.params.is_null() || m.params.is_object());
      const json reply = ParseOneLine(agentbox::mcp::Response(m.id, m.params));
      Check(reply.contains("id") && reply["id"] == m.id);
      Check(reply.contains("result"));
      const json error = ParseOneLine(agentbox::mcp::ErrorResponse(
          m.id, agentbox::mcp::kMethodNotFound, "method not found: " + m.method));
      Check(error.contains("id") && error["id"] == m.id);
      Check(error["error"]["code"] == agentbox::mcp::kMethodNotFound);
      break;
    }
    case Message::kNotification:
      Check(m.id.is_null());
      Check(m.params.is_null() || m.params.is_object());
      (void)ParseOneLine(agentbox::mcp::Notification(m.method, m.params));
      break;
    case Message::kResponse:
      Check(IsValidId(m.id));
      break;
    case Message::kInvalid: {
      Check(m.error_code == agentbox::mcp::kParseError ||
            m.error_code == agentbox::mcp::kInvalidRequest ||
            m.error_code == agentbox::mcp::kInvalidParams);
      Check(m.id.is_null() || IsValidId(m.id));
      if (m.error_code == agentbox::mcp::kParseError) Check(m.id.is_null());
      const json error =
          ParseOneLine(agentbox::mcp::ErrorResponse(m.id, m.error_code, m.error_message));
      Check(error["error"]["code"] == m.error_code);
      Check(error["error"]["message"].is_string());
      if (m.id.is_null()) {
        Check(!error.contains("id"));
      } else {
        Check(error["id"] == m.id);
      }
      break;
    }
  }
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const std::string_view input(reinterpret_cast<const char*>(data), size);
  try {
    // Split as the server splits its stdin (an input without '\n' is one line, checked
    // as it is, even blank).
    if (input.find('\n') == std::string_view::npos) {
      CheckLine(input);
      return 0;
    }
    size_t start = 0;
    while (start <= input.size()) {
      size_t nl = input.find('\n', start);
      if (nl == std::string_view::npos) nl = input.size();
      std::string_view line = input.substr(start, nl - start);
      if (!line.empty() && line.back() == '\r') line.remove_suffix(1);
      if (line.find_first_not_of(" \t") != std::string_view::npos) CheckLine(line);
      start = nl + 1;
    }
  } catch (const std::exception&) {
    __builtin_trap();  // nothing on this path may throw
  }
  return 0;
}
