// What a program printed, made safe and small enough for a model: terminal control
// sequences removed (newline and tab kept), then capped with the head and tail kept.
//
//   CappedText t = SanitizeAndCap(raw, 10 * 1024);   // t.text, t.truncated
#pragma once

#include <cstddef>
#include <string>
#include <string_view>

namespace agentbox::mcp {

// Removes ANSI escape sequences (CSI, OSC, DCS, two-byte ESC forms), C0 controls other than
// \n and \t, DEL, and C1 controls (U+0080..U+009F). Other bytes are kept as they are.
[[nodiscard]] std::string StripControlSequences(std::string_view raw);

struct CappedText {
  std::string text;
  bool truncated = false;
};

// Keeps at most `limit` bytes: the first and last halves, joined by a marker line saying how
// many bytes were left out. Never splits a UTF-8 character.
[[nodiscard]] CappedText CapText(std::string_view text, size_t limit);

// True iff `bytes` is well-formed UTF-8 (no overlongs, surrogates or values past U+10FFFF).
[[nodiscard]] bool IsValidUtf8(std::string_view bytes);

[[nodiscard]] inline CappedText SanitizeAndCap(std::string_view raw, size_t limit) {
  return CapText(StripControlSequences(raw), limit);
}

}  // namespace agentbox::mcp
