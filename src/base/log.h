// Logging to stderr, never stdout (stdout belongs to the sandboxed program or the protocol).
//
//   SetLogLevel(LogLevel::kDebug);
//   LogDebug("mount plan has ", n, " entries");
#pragma once

#include <sstream>
#include <string_view>

namespace agentbox {

enum class LogLevel { kDebug, kInfo, kWarning, kError };

void SetLogLevel(LogLevel level);
[[nodiscard]] bool LogEnabled(LogLevel level);
void LogLine(LogLevel level, std::string_view message);

template <typename... Args>
void Log(LogLevel level, const Args&... args) {
  if (!LogEnabled(level)) return;
  std::ostringstream out;
  (out << ... << args);
  LogLine(level, out.str());
}
template <typename... Args>
void LogDebug(const Args&... args) {
  Log(LogLevel::kDebug, args...);
}
template <typename... Args>
void LogWarning(const Args&... args) {
  Log(LogLevel::kWarning, args...);
}
template <typename... Args>
void LogError(const Args&... args) {
  Log(LogLevel::kError, args...);
}

}  // namespace agentbox
