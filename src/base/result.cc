#include "base/result.h"

#include <cerrno>
#include <cstring>

namespace agentbox {

std::string_view ErrorCodeName(ErrorCode code) {
  switch (code) {
    case ErrorCode::kUnavailable:
      return "unavailable";
    case ErrorCode::kUnsupported:
      return "unsupported";
    case ErrorCode::kPolicy:
      return "policy";
    case ErrorCode::kDenied:
      return "denied";
    case ErrorCode::kSetup:
      return "setup";
    case ErrorCode::kTimeout:
      return "timeout";
    case ErrorCode::kUntrustedBinary:
      return "untrusted_binary";
    case ErrorCode::kUsage:
      return "usage";
  }
  return "setup";
}

std::string Error::Message() const {
  std::string out = context;
  if (!syscall.empty()) {
    if (!out.empty()) out += ": ";
    out += syscall;
  }
  if (err != 0) {
    if (!out.empty()) out += ": ";
    out += std::strerror(err);
  }
  return out;
}

Error MakeError(ErrorCode code, std::string context) {
  return Error{code, 0, {}, std::move(context)};
}

Error PolicyValueError(std::string_view what, std::string_view value, std::string_view why) {
  std::string context(what);
  context += " \"";
  context += value;
  context += "\": ";
  context += why;
  return MakeError(ErrorCode::kPolicy, std::move(context));
}

Error ErrnoError(ErrorCode code, std::string syscall, std::string context) {
  const int saved = errno;
  return Error{code, saved, std::move(syscall), std::move(context)};
}

}  // namespace agentbox
