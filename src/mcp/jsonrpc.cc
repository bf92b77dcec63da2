#include "mcp/jsonrpc.h"

#include "config/strict_json.h"

namespace agentbox::mcp {
namespace {

Message Invalid(nlohmann::json id, int code, std::string message) {
  Message m;
  m.kind = Message::kInvalid;
  m.id = std::move(id);
  m.error_code = code;
  m.error_message = std::move(message);
  return m;
}

bool IsValidId(const nlohmann::json& id) {
  return id.is_string() || id.is_number_integer() || id.is_number_unsigned();
}

}  // namespace

Message ParseMessage(std::string_view line) {
  if (line.size() > kMaxLineBytes) return Invalid(nullptr, kInvalidRequest, "message too large");
  auto parsed = ParseStrictJson(line, "message");
  if (!parsed) return Invalid(nullptr, kParseError, "parse error: " + parsed.error().Message());
  const nlohmann::json& j = *parsed;
  if (j.is_array()) return Invalid(nullptr, kInvalidRequest, "batches are not supported");
  if (!j.is_object()) return Invalid(nullptr, kInvalidRequest, "a message must be an object");
  nlohmann::json id = nullptr;
  const bool has_id = j.contains("id");
  if (has_id) {
    if (!IsValidId(j["id"]))
      return Invalid(nullptr, kInvalidRequest, "id must be a string or integer");
    id = j["id"];
  }
  if (!j.contains("jsonrpc") || j["jsonrpc"] != "2.0") {
    return Invalid(id, kInvalidRequest, "jsonrpc must be \"2.0\"");
  }
  if (!j.contains("method")) {
    if (has_id && (j.contains("result") || j.contains("error"))) {
      Message m;
      m.kind = Message::kResponse;
      m.id = id;
      return m;
    }
    return Invalid(id, kInvalidRequest, "method is missing");
  }
  if (!j["method"].is_string()) return Invalid(id, kInvalidRequest, "method must be a string");
  Message m;
  m.kind = has_id ? Message::kRequest : Message::kNotification;
  m.id = id;
  m.method = j["method"].get<std::string>();
  if (j.contains("params")) {
    if (!j["params"].is_object() && !j["params"].is_null()) {
      if (has_id) return Invalid(id, kInvalidParams, "params must be an object");
      return m;  // a notification never gets a reply, not even an error: keep it, bare
    }
    m.params = j["params"];
  }
  return m;
}

std::string Response(const nlohmann::json& id, const nlohmann::json& result) {
  return DumpJson({{"jsonrpc", "2.0"}, {"id", id}, {"result", result}}) + "\n";
}

std::string ErrorResponse(const nlohmann::json& id, int code, std::string_view message) {
  nlohmann::json out = {{"jsonrpc", "2.0"},
                        {"error", {{"code", code}, {"message", std::string(message)}}}};
  if (!id.is_null()) out["id"] = id;
  return DumpJson(out) + "\n";
}

std::string Notification(std::string_view method, const nlohmann::json& params) {
  return DumpJson({{"jsonrpc", "2.0"}, {"method", std::string(method)}, {"params", params}}) + "\n";
}

}  // namespace agentbox::mcp
