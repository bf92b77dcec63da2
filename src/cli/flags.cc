#include "cli/flags.h"

#include <charconv>

namespace agentbox {

std::optional<uint64_t> ParseUint(std::string_view text) {
  uint64_t value = 0;
  const auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), value);
  if (text.empty() || ec != std::errc() || end != text.data() + text.size()) return std::nullopt;
  return value;
}

void Flags::Switch(std::string name, bool* out, std::string help) {
  options_.push_back({std::move(name), {}, std::move(help), [out](std::string_view) -> Status {
                        *out = true;
                        return {};
                      }});
}

void Flags::Value(std::string name, std::optional<std::string>* out, std::string metavar,
                  std::string help) {
  options_.push_back(
      {std::move(name), std::move(metavar), std::move(help), [out](std::string_view v) -> Status {
         *out = std::string(v);
         return {};
       }});
}

void Flags::Repeated(std::string name, std::vector<std::string>* out, std::string metavar,
                     std::string help) {
  options_.push_back(
      {std::move(name), std::move(metavar), std::move(help), [out](std::string_view v) -> Status {
         out->emplace_back(v);
         return {};
       }});
}

void Flags::Number(std::string name, std::optional<uint64_t>* out, std::string metavar,
                   std::string help) {
  const std::string flag = name;
  options_.push_back({std::move(name), std::move(metavar), std::move(help),
                      [out, flag](std::string_view v) -> Status {
                        *out = ParseUint(v);
                        if (!*out) {
                          return MakeError(ErrorCode::kUsage, flag +
                                                                  ": expected a non-negative "
                                                                  "integer, got \"" +
                                                                  std::string(v) + "\"");
                        }
                        return {};
                      }});
}

const Flags::Option* Flags::Find(std::string_view name) const {
  for (const Option& option : options_) {
    if (option.name == name) return &option;
  }
  return nullptr;
}

Result<std::vector<std::string>> Flags::Parse(std::span<char* const> args, bool allow_positional) {
  std::vector<std::string> positional;
  for (size_t i = 0; i < args.size(); ++i) {
    const std::string_view arg = args[i];
    if (arg == "--") {
      for (++i; i < args.size(); ++i) positional.emplace_back(args[i]);
      break;
    }
    if (arg.size() < 2 || arg[0] != '-' || arg == "-") {
      positional.emplace_back(arg);
      continue;
    }
    const size_t eq = arg.find('=');
    const std::string_view name = arg.substr(0, eq);
    const Option* option = Find(name);
    if (option == nullptr) {
      return MakeError(ErrorCode::kUsage, command_ + ": unknown option " + std::string(name) +
                                              " (see " + command_ + " --help)");
    }
    std::string_view value;
    if (option->metavar.empty()) {
      if (eq != std::string_view::npos) {
        return MakeError(ErrorCode::kUsage,
                         command_ + ": " + std::string(name) + " takes no value");
      }
    } else if (eq != std::string_view::npos) {
      value = arg.substr(eq + 1);
    } else if (i + 1 < args.size()) {
      value = args[++i];
    } else {
      return MakeError(ErrorCode::kUsage, command_ + ": " + std::string(name) + " needs a value (" +
                                              option->metavar + ")");
    }
    if (Status s = option->set(value); !s) return s.error();
  }
  if (!allow_positional && !positional.empty()) {
    return MakeError(ErrorCode::kUsage,
                     command_ + ": unexpected argument \"" + positional.front() + "\"");
  }
  return positional;
}

std::string Flags::Usage(std::string_view synopsis) const {
  std::string out = "usage: " + command_ + " " + std::string(synopsis) + "\n\noptions:\n";
  for (const Option& option : options_) {
    std::string left = "  " + option.name;
    if (!option.metavar.empty()) left += " " + option.metavar;
    if (left.size() < 26)
      left.resize(26, ' ');
    else
      left += "  ";
    out += left + option.help + "\n";
  }
  return out;
}

}  // namespace agentbox
