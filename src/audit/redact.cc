#include "audit/redact.h"

#include <array>
#include <cstddef>
#include <vector>

namespace agentbox {
namespace {

using nlohmann::json;
constexpr size_t npos = std::string_view::npos;

bool IsDigit(char c) { return c >= '0' && c <= '9'; }
bool IsUpper(char c) { return c >= 'A' && c <= 'Z'; }
bool IsLower(char c) { return c >= 'a' && c <= 'z'; }
bool IsAlnum(char c) { return IsDigit(c) || IsUpper(c) || IsLower(c); }
bool IsBase64Url(char c) { return IsAlnum(c) || c == '-' || c == '_'; }
char ToLower(char c) { return IsUpper(c) ? static_cast<char>(c - 'A' + 'a') : c; }

// Length of the run of `pred` characters starting at `pos`.
template <typename Pred>
size_t RunLength(std::string_view s, size_t pos, Pred pred) {
  size_t end = pos;
  while (end < s.size() && pred(s[end])) ++end;
  return end - pos;
}

// ---- PEM private-key blocks -------------------------------------------------------------

std::string RedactPem(std::string_view s) {
  static constexpr std::string_view kBegin = "-----BEGIN ";
  static constexpr std::string_view kEnd = "-----END ";
  static constexpr std::string_view kDashes = "-----";
  std::string out;
  size_t pos = 0;
  size_t begin = 0;
  while ((begin = s.find(kBegin, pos)) != npos) {
    const size_t label = begin + kBegin.size();
    const size_t label_len =
        RunLength(s, label, [](char c) { return IsUpper(c) || IsDigit(c) || c == ' '; });
    const std::string_view name = s.substr(label, label_len);
    if (name.find("PRIVATE KEY") == npos || s.substr(label + label_len, 5) != kDashes) {
      out.append(s.substr(pos, begin + 1 - pos));
      pos = begin + 1;
      continue;
    }
    // To the end of the matching END line; a block without one is redacted to the end.
    size_t stop = s.size();
    if (const size_t end = s.find(kEnd, label + label_len + 5); end != npos) {
      if (const size_t close = s.find(kDashes, end + kEnd.size()); close != npos) {
        stop = close + kDashes.size();
      }
    }
    out.append(s.substr(pos, begin - pos));
    out.append(kRedacted);
    pos = stop;
  }
  out.append(s.substr(pos));
  return out;
}

// ---- token shapes -----------------------------------------------------------------------

struct TokenShape {
  std::string_view prefix;
  bool (*body)(char);
  size_t min_body;
  bool exact;  // exactly min_body characters, then not an alphanumeric
};

bool GithubBody(char c) { return IsAlnum(c); }
bool GithubPatBody(char c) { return IsAlnum(c) || c == '_'; }
bool SlackBody(char c) { return IsAlnum(c) || c == '-'; }
bool AwsBody(char c) { return IsUpper(c) || IsDigit(c); }

constexpr std::array<TokenShape, 14> kShapes = {{
    {"ghp_", GithubBody, 20, false},
    {"gho_", GithubBody, 20, false},
    {"ghu_", GithubBody, 20, false},
    {"ghs_", GithubBody, 20, false},
    {"ghr_", GithubBody, 20, false},
    {"github_pat_", GithubPatBody, 20, false},
    {"xoxa-", SlackBody, 10, false},
    {"xoxb-", SlackBody, 10, false},
    {"xoxp-", SlackBody, 10, false},
    {"xoxr-", SlackBody, 10, false},
    {"xoxs-", SlackBody, 10, false},
    {"AKIA", AwsBody, 16, true},
    {"ASIA", AwsBody, 16, true},
    {"sk-", IsBase64Url, 20, false},  // plus the digit rule in MatchToken
}};

// Length of a token starting at `pos` (which starts a word), or 0.
size_t MatchToken(std::string_view s, size_t pos) {
  const std::string_view rest = s.substr(pos);
  for (const TokenShape& shape : kShapes) {
    if (!rest.starts_with(shape.prefix)) continue;
    const size_t body_at = pos + shape.prefix.size();
    const size_t body = RunLength(s, body_at, shape.body);
    if (shape.exact) {
      if (body < shape.min_body) continue;
      const size_t after = body_at + shape.min_body;
      if (after < s.size() && IsAlnum(s[after])) continue;
      return shape.prefix.size() + shape.min_body;
    }
    if (body < shape.min_body) continue;
    if (shape.prefix == "sk-" && body < 32) {
      // A short sk-... is a key only if it has a digit: keeps "sk-some-long-kebab-name" out.
      const std::string_view b = s.substr(body_at, body);
      bool digit = false;
      for (const char c : b) digit = digit || IsDigit(c);
      if (!digit) continue;
    }
    return shape.prefix.size() + body;
  }
  // JWT: eyJ<header>.<payload>.<signature> (the signature may be empty: alg "none").
  if (rest.starts_with("eyJ")) {
    const size_t header = RunLength(s, pos, IsBase64Url);
    size_t at = pos + header;
    if (header < 10 || at >= s.size() || s[at] != '.') return 0;
    const size_t payload = RunLength(s, at + 1, IsBase64Url);
    at += 1 + payload;
    if (payload < 2 || at >= s.size() || s[at] != '.') return 0;
    at += 1 + RunLength(s, at + 1, IsBase64Url);
    return at - pos;
  }
  return 0;
}

bool IsBearerTokenChar(char c) {
  return IsAlnum(c) || c == '.' || c == '_' || c == '~' || c == '+' || c == '/' || c == '=' ||
         c == '-';
}

// "Bearer <token>" at `pos`: sets [*token_at, *token_at + *token_len) and returns true.
bool MatchBearer(std::string_view s, size_t pos, size_t* token_at, size_t* token_len) {
  static constexpr std::string_view kBearer = "bearer";
  if (s.size() - pos < kBearer.size() + 1) return false;
  for (size_t i = 0; i < kBearer.size(); ++i) {
    if (ToLower(s[pos + i]) != kBearer[i]) return false;
  }
  const size_t spaces =
      RunLength(s, pos + kBearer.size(), [](char c) { return c == ' ' || c == '\t'; });
  if (spaces == 0) return false;
  *token_at = pos + kBearer.size() + spaces;
  *token_len = RunLength(s, *token_at, IsBearerTokenChar);
  return *token_len >= 8;
}

std::string RedactTokens(std::string_view s) {
  std::string out;
  out.reserve(s.size());
  size_t i = 0;
  while (i < s.size()) {
    // Tokens start a word. JWTs also refuse a '-' or '_' before them, so a long run of
    // base64url text is scanned once, not from each of its dashes.
    const bool word_start = i == 0 || !IsAlnum(s[i - 1]);
    const bool jwt_start = i == 0 || !IsBase64Url(s[i - 1]);
    const char c = s[i];
    // Cheap first-letter filter: every shape starts with one of these.
    const bool may_start = c == 'g' || c == 'x' || c == 'A' || c == 's' || (c == 'e' && jwt_start);
    if (word_start && may_start) {
      if (const size_t len = MatchToken(s, i); len > 0) {
        out.append(kRedacted);
        i += len;
        continue;
      }
    }
    if (word_start && (c == 'b' || c == 'B')) {
      size_t token_at = 0;
      size_t token_len = 0;
      if (MatchBearer(s, i, &token_at, &token_len)) {
        out.append(s.substr(i, token_at - i));
        out.append(kRedacted);
        i = token_at + token_len;
        continue;
      }
    }
    out += s[i++];
  }
  return out;
}

// ---- URL credentials --------------------------------------------------------------------

bool EndsAuthority(char c) {
  return c == '/' || c == '?' || c == '#' || c == ' ' || c == '\t' || c == '\n' || c == '\r' ||
         c == '"' || c == '\'' || c == '<' || c == '>' || c == '`';
}

std::string RedactUrlCredentials(std::string_view s) {
  std::string out;
  size_t pos = 0;
  size_t sep = 0;
  while ((sep = s.find("://", pos)) != npos) {
    const size_t start = sep + 3;
    size_t end = start;
    while (end < s.size() && !EndsAuthority(s[end])) ++end;
    const std::string_view authority = s.substr(start, end - start);
    const size_t at = authority.rfind('@');
    const size_t colon = at == npos ? npos : authority.substr(0, at).find(':');
    if (colon == npos || colon + 1 == at ||
        authority.substr(colon + 1, at - colon - 1) == kRedacted) {
      out.append(s.substr(pos, start - pos));
      pos = start;
      continue;
    }
    out.append(s.substr(pos, start + colon + 1 - pos));
    out.append(kRedacted);
    pos = start + at;  // from the '@'
  }
  out.append(s.substr(pos));
  return out;
}

// ---- NAME=value and "name": "value" -----------------------------------------------------

bool IsNameChar(char c) { return IsAlnum(c) || c == '_' || c == '-' || c == '.'; }

bool EndsValue(char c) {
  return c == ' ' || c == '\t' || c == '\n' || c == '\r' || c == '&' || c == ';' || c == '|' ||
         c == '"' || c == '\'' || c == '`';
}

// The value after a secret name's '=' at s[at...]: appends its redacted form to `out` and
// returns where the text resumes.
size_t RedactAssignedValue(std::string_view s, size_t at, std::string& out) {
  if (at < s.size() && (s[at] == '"' || s[at] == '\'')) {
    const char quote = s[at];
    const size_t close = s.find(quote, at + 1);
    const size_t content_end = close == npos ? s.size() : close;
    const std::string_view content = s.substr(at + 1, content_end - at - 1);
    if (content.empty() || content == kRedacted) return at;
    out += quote;
    out.append(kRedacted);
    if (close == npos) return s.size();
    out += quote;
    return close + 1;
  }
  if (s.substr(at).starts_with(kRedacted)) return at;
  size_t end = at;
  while (end < s.size() && !EndsValue(s[end])) ++end;
  if (end == at) return at;
  out.append(kRedacted);
  return end;
}

std::string RedactAssignments(std::string_view s) {
  std::string out;
  out.reserve(s.size());
  size_t i = 0;
  while (i < s.size()) {
    const char c = s[i];
    if (c == '=') {
      size_t name_start = i;
      while (name_start > 0 && IsNameChar(s[name_start - 1])) --name_start;
      out += c;
      ++i;
      if (name_start < i - 1 && IsSecretName(s.substr(name_start, i - 1 - name_start))) {
        i = RedactAssignedValue(s, i, out);
      }
      continue;
    }
    if (c == '"' || c == '\'') {
      // "name" : "value" (JSON, or Python with single quotes).
      const size_t name_len = RunLength(s, i + 1, IsNameChar);
      size_t at = i + 1 + name_len;
      if (name_len > 0 && name_len <= 128 && at < s.size() && s[at] == c) {
        ++at;
        at += RunLength(s, at, [](char x) { return x == ' ' || x == '\t'; });
        if (at < s.size() && s[at] == ':') {
          ++at;
          at += RunLength(s, at, [](char x) { return x == ' ' || x == '\t'; });
          if (at < s.size() && s[at] == c && IsSecretName(s.substr(i + 1, name_len))) {
            out.append(s.substr(i, at - i));
            // An empty or already redacted value is copied on from its opening quote.
            i = RedactAssignedValue(s, at, out);
            continue;
          }
        }
      }
    }
    out += c;
    ++i;
  }
  return out;
}

std::string RedactOnce(std::string_view text) {
  return RedactUrlCredentials(RedactAssignments(RedactTokens(RedactPem(text))));
}

// ---- JSON -------------------------------------------------------------------------------

// Every string and number below a secret-named key.
json RedactAll(const json& value) {
  if (value.is_string()) {
    return value.get_ref<const std::string&>().empty() ? value : json(kRedacted);
  }
  if (value.is_number()) return json(kRedacted);
  if (value.is_array()) {
    json out = json::array();
    for (const json& element : value) out.push_back(RedactAll(element));
    return out;
  }
  if (value.is_object()) {
    json out = json::object();
    for (const auto& [key, member] : value.items()) out[RedactText(key)] = RedactAll(member);
    return out;
  }
  return value;
}

// "--password", "-api-key": a flag whose value is the next argv element.
bool IsSecretFlag(const json& element) {
  if (!element.is_string()) return false;
  const std::string& s = element.get_ref<const std::string&>();
  if (s.size() < 2 || s[0] != '-' || s.find('=') != std::string::npos) return false;
  size_t start = s.find_first_not_of('-');
  if (start == std::string::npos) return false;
  for (size_t i = start; i < s.size(); ++i) {
    if (!IsNameChar(s[i])) return false;
  }
  // Only the last word counts here ("--password", not "--password-file"): a boolean flag
  // such as "--use-token-auth" must not swallow the argument after it.
  size_t last = s.find_last_of("-_.");
  last = last == std::string::npos || last < start ? start : last + 1;
  return last < s.size() && IsSecretName(std::string_view(s).substr(last));
}

}  // namespace

bool IsSecretName(std::string_view name) {
  while (!name.empty() && name.front() == '-') name.remove_prefix(1);
  // Split into lower-cased words at non-alphanumerics and camelCase humps.
  std::vector<std::string> words(1);
  for (size_t i = 0; i < name.size(); ++i) {
    const char c = name[i];
    if (!IsAlnum(c)) {
      if (!words.back().empty()) words.emplace_back();
      continue;
    }
    const bool hump = i > 0 && IsUpper(c) &&
                      (IsLower(name[i - 1]) ||
                       (IsUpper(name[i - 1]) && i + 1 < name.size() && IsLower(name[i + 1])));
    if (hump && !words.back().empty()) words.emplace_back();
    words.back() += ToLower(c);
  }
  for (const std::string& w : words) {
    const std::string_view word = w;
    for (const std::string_view part :
         {"password", "passwd", "passphrase", "secret", "credential"}) {
      if (word.find(part) != npos) return true;
    }
    // "max_tokens" and "tokenizer" are settings, not secrets.
    if (word.find("token") != npos && word.find("tokeniz") == npos && !word.ends_with("tokens")) {
      return true;
    }
    if (word == "key" || word == "keys" || word == "pass" || word.ends_with("apikey") ||
        word.ends_with("privatekey") || word.ends_with("accesskey")) {
      return true;
    }
  }
  return false;
}

std::string RedactText(std::string_view text) {
  std::string out = RedactOnce(text);
  // Each rule sees the others' output; repeat until stable (in practice one extra pass).
  for (int round = 0; round < 8; ++round) {
    std::string again = RedactOnce(out);
    if (again == out) break;
    out = std::move(again);
  }
  return out;
}

json RedactJson(const json& value) {
  if (value.is_string()) return RedactText(value.get_ref<const std::string&>());
  if (value.is_array()) {
    json out = json::array();
    bool after_secret_flag = false;
    for (const json& element : value) {
      if (after_secret_flag && element.is_string()) {
        out.push_back(RedactAll(element));
      } else {
        out.push_back(RedactJson(element));
      }
      after_secret_flag = IsSecretFlag(element);
    }
    return out;
  }
  if (value.is_object()) {
    json out = json::object();
    for (const auto& [key, member] : value.items()) {
      out[RedactText(key)] = IsSecretName(key) ? RedactAll(member) : RedactJson(member);
    }
    return out;
  }
  return value;
}

}  // namespace agentbox
