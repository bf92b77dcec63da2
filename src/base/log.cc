#include "base/log.h"

#include <unistd.h>

#include <string>

namespace agentbox {
namespace {
LogLevel g_level = LogLevel::kWarning;

std::string_view LevelName(LogLevel level) {
  switch (level) {
    case LogLevel::kDebug:
      return "debug";
    case LogLevel::kInfo:
      return "info";
    case LogLevel::kWarning:
      return "warning";
    case LogLevel::kError:
      return "error";
  }
  return "error";
}
}  // namespace

void SetLogLevel(LogLevel level) { g_level = level; }
bool LogEnabled(LogLevel level) { return level >= g_level; }

void LogLine(LogLevel level, std::string_view message) {
  std::string line = "agentbox: ";
  line += LevelName(level);
  line += ": ";
  line += message;
  line += '\n';
  // One write so concurrent lines do not interleave.
  [[maybe_unused]] ssize_t n = ::write(STDERR_FILENO, line.data(), line.size());
}

}  // namespace agentbox
