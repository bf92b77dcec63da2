// Fuzz target for the audit log reader and for redaction (audit/log.h, audit/redact.h).
//
// Each input is used twice:
// - as a whole log file (in a memfd) given to VerifyAuditLogFd: no crash, and a log called
//   intact has exactly as many lines as newlines, and a report that is not intact names a
//   line within the file;
// - as text given to RedactText: the output is a fixed point (nothing left that redaction
//   would change), and a GitHub token planted between two copies of the input never
//   survives, whatever the input around it.
#include <sys/mman.h>
#include <unistd.h>

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>

#include "audit/log.h"
#include "audit/redact.h"

namespace {

int LogFd() {
  static const int fd = ::memfd_create("fuzz_audit_line", MFD_CLOEXEC);
  if (fd < 0) __builtin_trap();
  return fd;
}

void CheckVerify(std::string_view bytes) {
  const int fd = LogFd();
  if (::ftruncate(fd, 0) != 0) __builtin_trap();
  size_t done = 0;
  while (done < bytes.size()) {
    const ssize_t n =
        ::pwrite(fd, bytes.data() + done, bytes.size() - done, static_cast<off_t>(done));
    if (n <= 0) __builtin_trap();
    done += static_cast<size_t>(n);
  }
  auto report = agentbox::VerifyAuditLogFd(fd, "fuzz");
  if (!report.ok()) __builtin_trap();  // a memfd is always readable
  const auto newlines = static_cast<uint64_t>(std::count(bytes.begin(), bytes.end(), '\n'));
  if (report->intact) {
    if (report->lines != newlines || !bytes.empty() != (newlines > 0)) __builtin_trap();
    if (bytes.empty() != (report->head_sha256 == agentbox::kAuditGenesisHash)) __builtin_trap();
  } else if (report->bad_line == 0 || report->bad_line > newlines + 1 || report->reason.empty()) {
    __builtin_trap();
  }
}

void CheckRedact(std::string_view text) {
  const std::string once = agentbox::RedactText(text);
  if (agentbox::RedactText(once) != once) __builtin_trap();

  static constexpr std::string_view kSecretBody = "Zq7KfP2mXw9Lr4TnB8vYc3Hd6Js1Ga5Ue0Qo";
  // The fuzzer learns the constant from the comparison below; a copy in the input itself is
  // not a token and may stay.
  if (text.find(kSecretBody) != std::string_view::npos) return;
  const std::string planted =
      std::string(text) + " ghp_" + std::string(kSecretBody) + " " + std::string(text);
  if (agentbox::RedactText(planted).find(kSecretBody) != std::string::npos) __builtin_trap();
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const std::string_view bytes(reinterpret_cast<const char*>(data), size);
  CheckVerify(bytes);
  CheckRedact(bytes);
  return 0;
}
