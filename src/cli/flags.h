// A small command-line parser shared by every subcommand: "--name VALUE", "--name=VALUE",
// boolean "--name", repeatable options, and "--" ending the options. Unknown options and
// missing values are usage errors that name the option.
//
//   Flags flags("agentbox policy clamp");
//   flags.Value("--ceiling", &ceiling_path, "FILE", "operator ceiling");
//   flags.Switch("--json", &json, "print one JSON object");
//   auto rest = flags.Parse(args);   // positional arguments
#pragma once

#include <cstdint>
#include <functional>
#include <optional>
#include <span>
#include <string>
#include <vector>

#include "base/result.h"

namespace agentbox {

class Flags {
 public:
  explicit Flags(std::string command) : command_(std::move(command)) {
    Switch("--help", &help_, "show this help");
  }
  Flags(const Flags&) = delete;
  Flags& operator=(const Flags&) = delete;

  [[nodiscard]] bool HelpRequested() const { return help_; }

  void Switch(std::string name, bool* out, std::string help);
  void Value(std::string name, std::optional<std::string>* out, std::string metavar,
             std::string help);
  void Repeated(std::string name, std::vector<std::string>* out, std::string metavar,
                std::string help);
  void Number(std::string name, std::optional<uint64_t>* out, std::string metavar,
              std::string help);

  // Positional arguments are returned in order. With allow_positional false, any positional
  // argument is a usage error. Everything after "--" is positional.
  [[nodiscard]] Result<std::vector<std::string>> Parse(std::span<char* const> args,
                                                       bool allow_positional);

  [[nodiscard]] std::string Usage(std::string_view synopsis) const;

 private:
  struct Option {
    std::string name;
    std::string metavar;  // empty for a switch
    std::string help;
    std::function<Status(std::string_view)> set;
  };
  const Option* Find(std::string_view name) const;

  std::string command_;
  std::vector<Option> options_;
  bool help_ = false;
};

// Parses a decimal unsigned integer strictly (no sign, spaces or trailing characters).
[[nodiscard]] std::optional<uint64_t> ParseUint(std::string_view text);

}  // namespace agentbox
