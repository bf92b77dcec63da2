#include "config/strict_json.h"

#include <exception>
#include <set>
#include <utility>

namespace agentbox {
namespace {

using nlohmann::json;

Error PolicyError(std::string context) { return MakeError(ErrorCode::kPolicy, std::move(context)); }

Error AtError(std::string_view location, std::string_view message) {
  std::string context = LocationName(location);
  context += ": ";
  context += message;
  return PolicyError(std::move(context));
}

// Escapes every byte outside printable ASCII as \xNN (and `"` and `\` if asked).
std::string EscapeForMessage(std::string_view s, bool escape_quotes) {
  static constexpr char kHex[] = "0123456789abcdef";
  std::string out;
  for (const char c : s) {
    const auto byte = static_cast<unsigned char>(c);
    if (escape_quotes && (c == '"' || c == '\\')) {
      out += '\\';
      out += c;
    } else if (byte >= 0x20 && byte < 0x7f) {
      out += c;
    } else {
      out += "\\x";
      out += kHex[byte >> 4];
      out += kHex[byte & 0xf];
    }
  }
  return out;
}

// "got string", "got number -1", "got null": what a value of the wrong type was.
std::string Got(const json& value) {
  std::string out = "got ";
  out += value.type_name();
  if (value.is_number_integer() && !value.is_number_unsigned() && value == 0) {
    out += " -0";  // the only signed integer the parser gives that dumps without a sign
  } else if (value.is_number() || value.is_boolean()) {
    out += ' ';
    out += DumpJson(value);
  }
  return out;
}

// nlohmann's message "[json.exception.parse_error.101] parse error at line 1, column 18:
// syntax error ..." as " (line 1, column 18): syntax error ...", made safe to print (its
// "last read" part can hold raw input bytes).
std::string DescribeParseError(const char* what) {
  std::string_view text = what;
  if (const size_t bracket = text.find("] "); bracket != std::string_view::npos) {
    text.remove_prefix(bracket + 2);
  }
  if (text.starts_with("parse error ")) text.remove_prefix(12);
  std::string out;
  if (text.starts_with("at ")) {
    if (const size_t colon = text.find(": "); colon != std::string_view::npos) {
      out = " (" + std::string(text.substr(3, colon - 3)) + ")";
      text.remove_prefix(colon + 2);
    }
  }
  out += ": ";
  out += EscapeForMessage(text, /*escape_quotes=*/false);
  return out;
}

// SAX handler that builds the DOM and stops at the first duplicate key or at excess depth.
// nlohmann's own DOM builder silently keeps the last of duplicate keys, which would let
// two readers of one policy disagree about what it says.
class StrictDomBuilder {
 public:
  explicit StrictDomBuilder(json& root) : root_(root) {}

  bool null() { return Add(json(nullptr)); }
  bool boolean(bool v) { return Add(json(v)); }
  bool number_integer(json::number_integer_t v) { return Add(json(v)); }
  bool number_unsigned(json::number_unsigned_t v) { return Add(json(v)); }
  bool number_float(json::number_float_t v, const json::string_t& /*text*/) { return Add(json(v)); }
  bool string(json::string_t& v) { return Add(json(std::move(v))); }
  bool binary(json::binary_t& /*v*/) {
    error_ = "binary values are not JSON";
    return false;
  }

  bool start_object(size_t /*elements*/) { return Open(json::object()); }
  bool start_array(size_t /*elements*/) { return Open(json::array()); }
  bool end_object() { return Close(); }
  bool end_array() { return Close(); }

  bool key(json::string_t& k) {
    Frame& frame = stack_.back();
    if (!frame.keys.insert(k).second) {
      error_ = "duplicate key " + QuoteForMessage(k) + " at " + LocationName(frame.location);
      return false;
    }
    pending_key_ = std::move(k);
    return true;
  }

  bool parse_error(size_t position, const std::string& /*last_token*/,
                   const nlohmann::detail::exception& ex) {
    error_ = "invalid JSON at byte " + std::to_string(position) + DescribeParseError(ex.what());
    return false;
  }

  // Set when the handler stopped the parse; the full message without the source.
  const std::string& error() const { return error_; }

 private:
  struct Frame {
    json* node;
    std::string location;
    std::set<std::string, std::less<>> keys;  // seen so far, objects only
  };

  // Places `value` in the current container (or as the root); returns where it now lives.
  json* Place(json value, std::string* location) {
    if (stack_.empty()) {
      root_ = std::move(value);
      if (location != nullptr) location->clear();
      return &root_;
    }
    Frame& parent = stack_.back();
    if (parent.node->is_object()) {
      if (location != nullptr) *location = ChildLocation(parent.location, pending_key_);
      json& slot = (*parent.node)[pending_key_];
      slot = std::move(value);
      return &slot;
    }
    if (location != nullptr) *location = ChildLocation(parent.location, parent.node->size());
    parent.node->push_back(std::move(value));
    return &parent.node->back();
  }

  bool Add(json value) {
    Place(std::move(value), nullptr);
    return true;
  }

  bool Open(json container) {
    std::string location;
    json* node = Place(std::move(container), &location);
    if (stack_.size() >= kMaxJsonDepth) {
      error_ = "nesting deeper than " + std::to_string(kMaxJsonDepth) + " levels at " +
               LocationName(location);
      return false;
    }
    stack_.push_back(Frame{node, std::move(location), {}});
    return true;
  }

  bool Close() {
    stack_.pop_back();
    return true;
  }

  json& root_;
  std::vector<Frame> stack_;
  std::string pending_key_;
  std::string error_;
};

}  // namespace

Result<json> ParseStrictJson(std::string_view text, std::string_view source) {
  auto fail = [&](std::string message) {
    return WithSource(PolicyError(std::move(message)), source);
  };
  if (text.size() > kMaxJsonBytes) {
    return fail("input is " + std::to_string(text.size()) + " bytes, more than the limit of " +
                std::to_string(kMaxJsonBytes));
  }
  try {
    json root;
    StrictDomBuilder builder(root);
    const bool ok = json::sax_parse(text.data(), text.data() + text.size(), &builder,
                                    json::input_format_t::json, /*strict=*/true);
    if (!ok) return fail(builder.error().empty() ? "invalid JSON" : builder.error());
    return root;
  } catch (const std::exception& e) {
    return fail("invalid JSON" + DescribeParseError(e.what()));
  }
}

std::string DumpJson(const json& value, int indent) {
  try {
    return value.dump(indent, ' ', /*ensure_ascii=*/false, json::error_handler_t::replace);
  } catch (const std::exception&) {
    return "null";  // unreachable with error_handler_t::replace
  }
}

std::string QuoteForMessage(std::string_view s) {
  return '"' + EscapeForMessage(s, /*escape_quotes=*/true) + '"';
}

std::string ChildLocation(std::string_view parent, std::string_view key) {
  std::string out(parent);
  out += '/';
  for (const char c : key) {
    if (c == '~') {
      out += "~0";
    } else if (c == '/') {
      out += "~1";
    } else {
      out += c;
    }
  }
  return out;
}

std::string ChildLocation(std::string_view parent, size_t index) {
  std::string out(parent);
  out += '/';
  out += std::to_string(index);
  return out;
}

std::string LocationName(std::string_view location) {
  return location.empty() ? std::string("top level") : std::string(location);
}

Error WithSource(Error error, std::string_view source) {
  std::string context(source);
  context += ": ";
  context += error.context;
  error.context = std::move(context);
  return error;
}

Result<std::string> ReadString(const json& value, std::string_view location) {
  if (!value.is_string()) return AtError(location, "expected a string, " + Got(value));
  return value.get_ref<const json::string_t&>();
}

Result<std::string> ReadNonEmptyString(const json& value, std::string_view location) {
  auto s = ReadString(value, location);
  if (!s) return s.error();
  if (s->empty()) return AtError(location, "must not be empty");
  if (s->find('\0') != std::string::npos) return AtError(location, "must not contain a NUL byte");
  return s;
}

Result<uint64_t> ReadUint64(const json& value, std::string_view location) {
  // The parser stores every non-negative integer that fits in 64 bits as unsigned; negative
  // ones as signed (so "-0" is refused), and fractions, exponents and larger integers as
  // floating point.
  if (!value.is_number_unsigned()) {
    return AtError(location,
                   "expected a non-negative integer (at most 18446744073709551615), " + Got(value));
  }
  return value.get<uint64_t>();
}

Result<bool> ReadBool(const json& value, std::string_view location) {
  if (!value.is_boolean()) return AtError(location, "expected true or false, " + Got(value));
  return value.get<bool>();
}

namespace {

template <typename ReadElement>
Result<std::vector<std::string>> ReadArrayOf(const json& value, std::string_view location,
                                             ReadElement read) {
  if (!value.is_array()) return AtError(location, "expected an array of strings, " + Got(value));
  std::vector<std::string> out;
  out.reserve(value.size());
  for (size_t i = 0; i < value.size(); ++i) {
    auto element = read(value[i], ChildLocation(location, i));
    if (!element) return element.error();
    out.push_back(std::move(*element));
  }
  return out;
}

}  // namespace

Result<std::vector<std::string>> ReadStringArray(const json& value, std::string_view location) {
  return ReadArrayOf(value, location, ReadString);
}

Result<std::vector<std::string>> ReadNonEmptyStringArray(const json& value,
                                                         std::string_view location) {
  return ReadArrayOf(value, location, ReadNonEmptyString);
}

Result<StrictObject> StrictObject::Open(const json& value, std::string location,
                                        std::initializer_list<std::string_view> allowed) {
  if (!value.is_object()) return AtError(location, "expected an object, " + Got(value));
  for (const auto& [key, member] : value.items()) {
    bool known = false;
    for (const std::string_view name : allowed) known = known || name == key;
    if (known) continue;
    std::string message = "unknown field " + QuoteForMessage(key);
    if (allowed.size() == 0) {
      message += " (expected no fields)";
    } else {
      message += " (expected one of: ";
      bool first = true;
      for (const std::string_view name : allowed) {
        if (!first) message += ", ";
        message += name;
        first = false;
      }
      message += ')';
    }
    return AtError(location, message);
  }
  return StrictObject(&value, std::move(location));
}

const json* StrictObject::Find(std::string_view key) const {
  const auto it = value_->find(key);
  return it == value_->end() ? nullptr : &*it;
}

Result<const json*> StrictObject::Require(std::string_view key) const {
  const json* member = Find(key);
  if (member == nullptr) {
    return AtError(location_, "missing required field " + QuoteForMessage(key));
  }
  return member;
}

Result<std::string> StrictObject::String(std::string_view key) const {
  auto member = Require(key);
  if (!member) return member.error();
  return ReadString(**member, FieldLocation(key));
}

Result<std::optional<std::string>> StrictObject::OptionalString(std::string_view key) const {
  const json* member = Find(key);
  if (member == nullptr) return std::optional<std::string>();
  auto s = ReadString(*member, FieldLocation(key));
  if (!s) return s.error();
  return std::optional<std::string>(std::move(*s));
}

Result<uint64_t> StrictObject::Uint64(std::string_view key) const {
  auto member = Require(key);
  if (!member) return member.error();
  return ReadUint64(**member, FieldLocation(key));
}

Result<std::optional<uint64_t>> StrictObject::OptionalUint64(std::string_view key) const {
  const json* member = Find(key);
  if (member == nullptr) return std::optional<uint64_t>();
  auto n = ReadUint64(*member, FieldLocation(key));
  if (!n) return n.error();
  return std::optional<uint64_t>(*n);
}

Result<std::optional<bool>> StrictObject::OptionalBool(std::string_view key) const {
  const json* member = Find(key);
  if (member == nullptr) return std::optional<bool>();
  auto b = ReadBool(*member, FieldLocation(key));
  if (!b) return b.error();
  return std::optional<bool>(*b);
}

Result<std::vector<std::string>> StrictObject::StringArray(std::string_view key) const {
  auto member = Require(key);
  if (!member) return member.error();
  return ReadStringArray(**member, FieldLocation(key));
}

Result<std::vector<std::string>> StrictObject::OptionalStringArray(std::string_view key) const {
  const json* member = Find(key);
  if (member == nullptr) return std::vector<std::string>();
  return ReadStringArray(*member, FieldLocation(key));
}

}  // namespace agentbox
