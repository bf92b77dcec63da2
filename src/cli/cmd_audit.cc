// agentbox audit verify | tail: check the audit log's hash chain, or show its last records.
//
//   agentbox audit verify                  # exit 0: "audit log ...: intact, 42 records, head ..."
//   agentbox audit tail -n 5               # time type tool id outcome, one record a line
//   agentbox audit tail --json --audit-log /var/lib/agentbox/audit.jsonl
#include <cstdio>
#include <cstdlib>
#include <string>
#include <string_view>

#include "audit/log.h"
#include "cli/commands.h"
#include "cli/flags.h"
#include "config/strict_json.h"

namespace agentbox {
namespace {

constexpr int kExitTampered = 1;
constexpr uint64_t kDefaultTail = 10;

Result<std::string> LogPath(const std::optional<std::string>& flag) {
  if (flag) return *flag;
  return DefaultAuditLogPath([](const char* name) { return std::getenv(name); });
}

// Text from the log made safe for a terminal: C0 and C1 controls and DEL become '?'.
std::string Printable(std::string_view s) {
  std::string out;
  for (size_t i = 0; i < s.size(); ++i) {
    const auto byte = static_cast<unsigned char>(s[i]);
    if (byte == 0xc2 && i + 1 < s.size() && static_cast<unsigned char>(s[i + 1]) >= 0x80 &&
        static_cast<unsigned char>(s[i + 1]) <= 0x9f) {
      out += '?';  // U+0080..U+009F in UTF-8
      ++i;
    } else {
      out += (byte < 0x20 || byte == 0x7f) ? '?' : s[i];
    }
  }
  return out;
}

// A stored JSON line made safe for a terminal without changing what it says: a C1 control
// (UTF-8 C2 80..C2 9F) becomes its \u escape; raw C0 bytes, which no valid line holds,
// become '?'.
std::string PrintableJson(std::string_view s) {
  static constexpr char kHex[] = "0123456789abcdef";
  std::string out;
  for (size_t i = 0; i < s.size(); ++i) {
    const auto byte = static_cast<unsigned char>(s[i]);
    const auto next = i + 1 < s.size() ? static_cast<unsigned char>(s[i + 1]) : 0;
    if (byte == 0xc2 && next >= 0x80 && next <= 0x9f) {
      out += "\\u00";
      out += kHex[next >> 4];
      out += kHex[next & 0xf];
      ++i;
    } else {
      out += (byte < 0x20 || byte == 0x7f) ? '?' : s[i];
    }
  }
  return out;
}

std::string Field(const nlohmann::json& record, const char* key) {
  const auto it = record.find(key);
  if (it == record.end() || it->is_null()) return "-";
  return it->is_string() ? it->get<std::string>() : DumpJson(*it);
}

// "exit_code=0 duration_ms=12 ..." from an outcome object, or the reason a call was refused.
std::string OutcomeText(const nlohmann::json& record) {
  for (const char* key : {"outcome", "reason", "error"}) {
    const auto it = record.find(key);
    if (it == record.end()) continue;
    if (!it->is_object()) return Field(record, key);
    std::string out;
    for (const auto& [name, value] : it->items()) {
      if (value.is_structured()) continue;
      if (!out.empty()) out += ' ';
      out += name + "=" + (value.is_string() ? value.get<std::string>() : DumpJson(value));
    }
    return out.empty() ? "-" : out;
  }
  return "-";
}

std::string HumanLine(const std::string& line) {
  auto parsed = ParseStrictJson(line, "record");
  if (!parsed || !parsed->is_object()) return "(not a JSON record)";
  const nlohmann::json& r = *parsed;
  std::string out = Field(r, "time") + "  " + Field(r, "type") + "  " + Field(r, "tool") + "  " +
                    Field(r, "id") + "  " + OutcomeText(r);
  constexpr size_t kMaxWidth = 240;
  if (out.size() > kMaxWidth) out.replace(kMaxWidth - 3, std::string::npos, "...");
  return Printable(out);
}

int Verify(std::span<char* const> args) {
  std::optional<std::string> path_flag;
  Flags flags("agentbox audit verify");
  flags.Value("--audit-log", &path_flag, "PATH",
              "the log (default: $XDG_STATE_HOME/agentbox/audit.jsonl)");
  auto positional = flags.Parse(args, /*allow_positional=*/false);
  if (!positional) return Fail(positional.error());
  if (flags.HelpRequested()) {
    std::fputs(flags.Usage("[--audit-log PATH]").c_str(), stdout);
    std::fputs(
        "\nRecomputes the hash chain. Exit 0: intact; 1: the first bad line and why; 125: the\n"
        "log cannot be read. Lines removed from the end leave no trace in the log itself:\n"
        "keep the printed head hash elsewhere and compare it later.\n",
        stdout);
    return 0;
  }
  auto path = LogPath(path_flag);
  if (!path) return Fail(path.error());
  auto report = VerifyAuditLog(*path);
  if (!report) return Fail(report.error());
  const std::string shown = Printable(*path);
  if (!report->intact) {
    std::printf("audit log %s: NOT intact at line %llu (%.*s): %s\n", shown.c_str(),
                static_cast<unsigned long long>(report->bad_line),
                static_cast<int>(AuditProblemName(report->problem).size()),
                AuditProblemName(report->problem).data(), Printable(report->reason).c_str());
    return kExitTampered;
  }
  std::printf("audit log %s: intact, %llu records, head sha256 %s\n", shown.c_str(),
              static_cast<unsigned long long>(report->lines), report->head_sha256.c_str());
  return 0;
}

int Tail(std::span<char* const> args) {
  std::optional<std::string> path_flag;
  std::optional<uint64_t> count;
  bool json = false;
  Flags flags("agentbox audit tail");
  flags.Number("-n", &count, "N", "how many records (default 10)");
  flags.Number("--lines", &count, "N", "the same as -n");
  flags.Switch("--json", &json, "print the records' JSON lines as stored");
  flags.Value("--audit-log", &path_flag, "PATH",
              "the log (default: $XDG_STATE_HOME/agentbox/audit.jsonl)");
  auto positional = flags.Parse(args, /*allow_positional=*/false);
  if (!positional) return Fail(positional.error());
  if (flags.HelpRequested()) {
    std::fputs(flags.Usage("[-n N] [--json] [--audit-log PATH]").c_str(), stdout);
    return 0;
  }
  auto path = LogPath(path_flag);
  if (!path) return Fail(path.error());
  auto lines = ReadLastAuditLines(*path, static_cast<size_t>(count.value_or(kDefaultTail)));
  if (!lines) return Fail(lines.error());
  for (const std::string& line : *lines) {
    std::printf("%s\n", json ? PrintableJson(line).c_str() : HumanLine(line).c_str());
  }
  return 0;
}

}  // namespace

int AuditCommand(std::span<char* const> args) {
  constexpr const char* kUsage =
      "usage: agentbox audit verify [--audit-log PATH]\n"
      "       agentbox audit tail [-n N] [--json] [--audit-log PATH]\n";
  if (args.empty() || std::string_view(args[0]) == "--help") {
    std::fputs(kUsage, args.empty() ? stderr : stdout);
    return args.empty() ? kExitRefused : 0;
  }
  const std::string_view sub = args[0];
  if (sub == "verify") return Verify(args.subspan(1));
  if (sub == "tail") return Tail(args.subspan(1));
  return Fail(MakeError(ErrorCode::kUsage, "agentbox audit: unknown subcommand '" +
                                               std::string(sub) + "' (expected: verify, tail)"));
}

}  // namespace agentbox
