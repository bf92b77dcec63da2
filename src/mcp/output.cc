#include "mcp/output.h"

#include <cstdint>

namespace agentbox::mcp {
namespace {

bool IsFinalByte(unsigned char c) { return c >= 0x40 && c <= 0x7E; }

// Moves back from `pos` to the start of a UTF-8 character.
size_t CharStart(std::string_view s, size_t pos) {
  while (pos > 0 && pos < s.size() && (static_cast<unsigned char>(s[pos]) & 0xC0) == 0x80) --pos;
  return pos;
}

}  // namespace

std::string StripControlSequences(std::string_view raw) {
  std::string out;
  out.reserve(raw.size());
  size_t i = 0;
  while (i < raw.size()) {
    const auto c = static_cast<unsigned char>(raw[i]);
    if (c == 0x1B) {  // ESC
      if (i + 1 >= raw.size()) break;
      const auto kind = static_cast<unsigned char>(raw[i + 1]);
      i += 2;
      if (kind == '[') {  // CSI: parameters, then one final byte
        while (i < raw.size() && !IsFinalByte(static_cast<unsigned char>(raw[i]))) ++i;
        ++i;
      } else if (kind == ']' || kind == 'P' || kind == '_' || kind == '^' || kind == 'X') {
        // OSC / DCS / APC / PM / SOS: up to BEL or ESC '\'
        while (i < raw.size() && raw[i] != '\a' &&
               !(raw[i] == 0x1B && i + 1 < raw.size() && raw[i + 1] == '\\')) {
          ++i;
        }
        i += (i < raw.size() && raw[i] == '\a') ? 1U : 2U;
      } else if (kind >= 0x20 && kind <= 0x2F) {  // ESC with intermediates: skip one more
        ++i;
      }
      continue;
    }
    if (c == 0xC2 && i + 1 < raw.size()) {  // C1 controls as UTF-8: C2 80 .. C2 9F
      const auto next = static_cast<unsigned char>(raw[i + 1]);
      if (next >= 0x80 && next <= 0x9F) {
        i += 2;
        continue;
      }
    }
    if ((c < 0x20 && c != '\n' && c != '\t') || c == 0x7F) {
      ++i;
      continue;
    }
    out.push_back(static_cast<char>(c));
    ++i;
  }
  return out;
}

bool IsValidUtf8(std::string_view s) {
  size_t i = 0;
  while (i < s.size()) {
    const auto c = static_cast<unsigned char>(s[i]);
    size_t n = 0;
    uint32_t cp = 0;
    if (c < 0x80) {
      ++i;
      continue;
    } else if ((c & 0xE0) == 0xC0) {
      n = 1;
      cp = c & 0x1F;
    } else if ((c & 0xF0) == 0xE0) {
      n = 2;
      cp = c & 0x0F;
    } else if ((c & 0xF8) == 0xF0) {
      n = 3;
      cp = c & 0x07;
    } else {
      return false;
    }
    for (size_t k = 1; k <= n; ++k) {
      if (i + k >= s.size()) return false;
      const auto cc = static_cast<unsigned char>(s[i + k]);
      if ((cc & 0xC0) != 0x80) return false;
      cp = cp << 6 | (cc & 0x3F);
    }
    constexpr uint32_t kMin[] = {0, 0x80, 0x800, 0x10000};
    if (cp < kMin[n] || cp > 0x10FFFF || (cp >= 0xD800 && cp <= 0xDFFF)) return false;
    i += n + 1;
  }
  return true;
}

CappedText CapText(std::string_view text, size_t limit) {
  if (text.size() <= limit) return {std::string(text), false};
  const size_t half = limit / 2;
  const size_t head_end = CharStart(text, half);
  const size_t tail_start = CharStart(text, text.size() - half);
  std::string out(text.substr(0, head_end));
  out += "\n[... " + std::to_string(tail_start - head_end) + " bytes omitted ...]\n";
  out += text.substr(tail_start);
  return {std::move(out), true};
}

}  // namespace agentbox::mcp
