// Redaction of secrets in request data before it reaches the audit log.
//
//   RedactText("curl -H 'Authorization: Bearer abc123def456' https://u:pw@host/x")
//     // "curl -H 'Authorization: Bearer [REDACTED]' https://u:[REDACTED]@host/x"
//   RedactJson({{"argv", {"gh", "--token=ghp_..."}}, {"env", {{"GITHUB_TOKEN", "..."}}}})
//     // {"argv": ["gh", "--token=[REDACTED]"], "env": {"GITHUB_TOKEN": "[REDACTED]"}}
//
// What is replaced by "[REDACTED]":
// - token shapes, anywhere a word starts: GitHub `ghp_ gho_ ghu_ ghs_ ghr_ github_pat_`,
//   `sk-...` (OpenAI, Anthropic `sk-ant-...`), Slack `xox[abprs]-...`, AWS key ids
//   `AKIA...`/`ASIA...`, JWTs (`eyJ...` with three dot-separated base64url parts), the token
//   after `Bearer `, and whole PEM private-key blocks (`-----BEGIN ... PRIVATE KEY-----` to
//   the END line);
// - values of secret-named settings (IsSecretName): `NAME=value` anywhere in text (shell
//   assignments, `--api-key=...` flags, `?access_token=...` query strings), `"name": "value"`
//   in JSON or Python text, a JSON object member whose key is such a name (RedactJson), and
//   the argv element after a flag such as `--password` (RedactJson, arrays);
// - the password in a URL's userinfo: `scheme://user:pw@host` becomes
//   `scheme://user:[REDACTED]@host`.
//
// Limits: this catches the shapes above, not every secret. A secret passed in a form none of
// them describes (a bare random string, `-pSECRET`, `X-Api-Key: ...` as plain text) is logged.
// Unquoted `NAME=value` values end at whitespace or one of & ; | " ' ` .
// RedactText is idempotent: it applies its rules until nothing changes, so its output holds
// nothing it would redact again.
#pragma once

#include <nlohmann/json.hpp>
#include <string>
#include <string_view>

#include "audit/digest.h"  // ContentDigest: contents are logged as size + SHA-256 only

namespace agentbox {

inline constexpr std::string_view kRedacted = "[REDACTED]";

[[nodiscard]] std::string RedactText(std::string_view text);

// A copy of `value` with RedactText applied to every string (object keys included), every
// string or number under a secret-named key replaced whole, and the argv element after a
// secret-named flag replaced.
[[nodiscard]] nlohmann::json RedactJson(const nlohmann::json& value);

// Whether a setting, variable or flag name names a secret. The name is split into words
// (at `_ - .` and camelCase humps); it is secret if a word contains PASSWORD, PASSWD,
// PASSPHRASE, SECRET, CREDENTIAL or TOKEN (but not TOKENIZ... and not ending in TOKENS), or is
// KEY(S), PASS, or ends in APIKEY / PRIVATEKEY / ACCESSKEY; case-insensitive. "GITHUB_TOKEN",
// "PGPASSWORD", "api-key", "apiKey", "AWS_SECRET_ACCESS_KEY" are secret; "monkey", "KEYBOARD",
// "PWD", "TOKENIZERS_PARALLELISM", "max_tokens" are not. Leading dashes are ignored.
[[nodiscard]] bool IsSecretName(std::string_view name);

}  // namespace agentbox
