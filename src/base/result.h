// Result<T>: a value or a typed Error, the error type of every fallible call in agentbox.
//
//   Result<int> ParsePort(std::string_view s);
//   auto port = ParsePort("80");
//   if (!port) return port.error();   // propagate
//   use(*port);
//
// Error codes are stable strings (ErrorCodeName) that reach exit codes, JSON results and
// the audit log; never renumber or rename one.
#pragma once

#include <string>
#include <string_view>
#include <type_traits>
#include <utility>
#include <variant>

namespace agentbox {

enum class ErrorCode {
  kUnavailable,      // no sandbox is possible on this host
  kUnsupported,      // the policy asks for something this host cannot enforce
  kPolicy,           // invalid policy, config or path
  kDenied,           // the operator's ceiling refuses it
  kSetup,            // a sandbox step failed
  kTimeout,          // the run exceeded its time
  kUntrustedBinary,  // an external executor failed its SHA-256 pin
  kUsage,            // bad command-line use
};

std::string_view ErrorCodeName(ErrorCode code);

struct Error {
  ErrorCode code = ErrorCode::kSetup;
  int err = 0;          // errno, 0 if none
  std::string syscall;  // the failing syscall, empty if none
  std::string context;  // what was being done, naming the path or field

  // "context: syscall: strerror(err)", omitting the parts that are empty.
  [[nodiscard]] std::string Message() const;
};

[[nodiscard]] Error MakeError(ErrorCode code, std::string context);
// A policy value that is refused: `what "value": why` (what = "path", "domain", "CIDR", ...).
[[nodiscard]] Error PolicyValueError(std::string_view what, std::string_view value,
                                     std::string_view why);
// For a failed syscall: captures errno at the call site.
[[nodiscard]] Error ErrnoError(ErrorCode code, std::string syscall, std::string context);

template <typename T>
class [[nodiscard]] Result {
 public:
  Result(T value) : v_(std::move(value)) {}      // NOLINT(google-explicit-constructor)
  Result(Error error) : v_(std::move(error)) {}  // NOLINT(google-explicit-constructor)

  [[nodiscard]] bool ok() const { return v_.index() == 0; }
  explicit operator bool() const { return ok(); }

  T& value() & { return std::get<0>(v_); }
  const T& value() const& { return std::get<0>(v_); }
  T&& value() && { return std::get<0>(std::move(v_)); }
  T& operator*() & { return value(); }
  const T& operator*() const& { return value(); }
  T&& operator*() && { return std::move(*this).value(); }
  T* operator->() { return &value(); }
  const T* operator->() const { return &value(); }

  const Error& error() const { return std::get<1>(v_); }

 private:
  std::variant<T, Error> v_;
};

// Result<void>: success or an Error.
template <>
class [[nodiscard]] Result<void> {
 public:
  Result() = default;
  Result(Error error)
      : error_(std::move(error)), ok_(false) {}  // NOLINT(google-explicit-constructor)

  [[nodiscard]] bool ok() const { return ok_; }
  explicit operator bool() const { return ok_; }
  const Error& error() const { return error_; }

 private:
  Error error_;
  bool ok_ = true;
};

using Status = Result<void>;

}  // namespace agentbox
