#include "net/proxy_protocol.h"

#include <algorithm>
#include <cstring>
#include <optional>
#include <utility>
#include <variant>
#include <vector>

#include "net/address.h"

namespace agentbox::net {
namespace {

constexpr size_t kMaxHostName = 253;
constexpr size_t kMaxLabel = 63;
constexpr size_t kMaxContentLengthDigits = 18;  // < 2^63, no overflow

bool IsDigit(char c) { return c >= '0' && c <= '9'; }
bool IsHexDigit(char c) { return IsDigit(c) || (c >= 'a' && c <= 'f') || (c >= 'A' && c <= 'F'); }
bool IsAlpha(char c) { return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z'); }

// RFC 9110 tchar.
bool IsTokenChar(char c) {
  if (IsAlpha(c) || IsDigit(c)) return true;
  switch (c) {
    case '!':
    case '#':
    case '$':
    case '%':
    case '&':
    case '\'':
    case '*':
    case '+':
    case '-':
    case '.':
    case '^':
    case '_':
    case '`':
    case '|':
    case '~':
      return true;
    default:
      return false;
  }
}

bool IsToken(std::string_view s) {
  return !s.empty() && std::all_of(s.begin(), s.end(), IsTokenChar);
}

// Visible ASCII, as a request-target is made of.
bool IsVisibleAscii(char c) { return c > 0x20 && c < 0x7f; }

char ToLower(char c) { return (c >= 'A' && c <= 'Z') ? static_cast<char>(c - 'A' + 'a') : c; }

std::string Lower(std::string_view s) {
  std::string out(s);
  std::transform(out.begin(), out.end(), out.begin(), ToLower);
  return out;
}

bool EqualsIgnoreCase(std::string_view a, std::string_view b) {
  return a.size() == b.size() && std::equal(a.begin(), a.end(), b.begin(), [](char x, char y) {
           return ToLower(x) == ToLower(y);
         });
}

bool StartsWithIgnoreCase(std::string_view s, std::string_view prefix) {
  return s.size() >= prefix.size() && EqualsIgnoreCase(s.substr(0, prefix.size()), prefix);
}

std::string_view TrimOws(std::string_view s) {
  while (!s.empty() && (s.front() == ' ' || s.front() == '\t')) s.remove_prefix(1);
  while (!s.empty() && (s.back() == ' ' || s.back() == '\t')) s.remove_suffix(1);
  return s;
}

Error HostError(std::string why) { return MakeError(ErrorCode::kPolicy, std::move(why)); }

// 1..65535 in at most 5 decimal digits.
std::optional<uint16_t> ParsePort(std::string_view text) {
  if (text.empty() || text.size() > 5 || !std::all_of(text.begin(), text.end(), IsDigit)) {
    return std::nullopt;
  }
  unsigned value = 0;
  for (const char c : text) value = value * 10 + static_cast<unsigned>(c - '0');
  if (value == 0 || value > 65535) return std::nullopt;
  return static_cast<uint16_t>(value);
}

// "host:port" or "[v6]:port" (port optional when default_port is set).
struct Authority {
  std::string host;
  uint16_t port = 0;
};

std::variant<Authority, std::string> ParseAuthority(std::string_view text,
                                                    std::optional<uint16_t> default_port) {
  std::string_view host_text;
  std::string_view rest;
  if (!text.empty() && text.front() == '[') {
    const size_t close = text.find(']');
    if (close == std::string_view::npos) return std::string("unterminated [IPv6] host");
    host_text = text.substr(0, close + 1);
    rest = text.substr(close + 1);
    if (!rest.empty() && rest.front() != ':') return std::string("malformed authority");
  } else {
    const size_t colon = text.find(':');
    host_text = text.substr(0, colon);
    rest = colon == std::string_view::npos ? std::string_view() : text.substr(colon);
    if (rest.find(':', 1) != std::string_view::npos) {
      return std::string("an IPv6 host must be written in [brackets]");
    }
  }
  if (host_text.empty()) return std::string("empty host");
  Authority out;
  if (rest.empty()) {
    if (!default_port) return std::string("port required (host:port)");
    out.port = *default_port;
  } else {
    const auto port = ParsePort(rest.substr(1));
    if (!port) return std::string("port must be a number from 1 to 65535");
    out.port = *port;
  }
  auto host = NormalizeHost(host_text);
  if (!host) return "invalid host: " + host.error().context;
  out.host = std::move(*host);
  return out;
}

// Host header value for the origin: the URL's authority, normalized.
std::string FormatAuthority(const std::string& host, uint16_t port, uint16_t default_port) {
  const bool v6 = host.find(':') != std::string::npos;
  std::string out;
  out.reserve(host.size() + 8);
  if (v6) out.push_back('[');
  out.append(host);
  if (v6) out.push_back(']');
  if (port != default_port) out.append(1, ':').append(std::to_string(port));
  return out;
}

// ---- HTTP request head --------------------------------------------------------------------

struct Header {
  std::string_view name;
  std::string_view value;  // OWS trimmed
};

// What the lines seen so far say; every view points into the caller's buffer.
struct HeadState {
  std::string_view method;
  std::string_view version;
  bool is_connect = false;
  std::string host;
  uint16_t port = 0;
  std::string path;  // origin-form target, non-CONNECT
  std::vector<Header> headers;
  std::optional<uint64_t> content_length;
  bool chunked = false;
  int host_headers = 0;
  std::vector<std::string> connection_options;  // lowercase names listed in Connection
};

// Byte rules for one line (`line` excludes the LF; `complete` says whether an LF followed).
// Checked on incomplete lines too, so a bad byte is refused as soon as it arrives; a CR as
// the last byte of an incomplete line is judged when the next byte comes.
std::optional<std::string> CheckLineBytes(std::string_view line, bool complete) {
  for (size_t i = 0; i < line.size(); ++i) {
    const auto c = static_cast<unsigned char>(line[i]);
    if (c == '\r') {
      if (i + 1 == line.size()) break;  // the line's CR, or not yet known
      return "bare CR in request head";
    }
    if (c == 0) return "NUL in request head";
    if ((c < 0x20 && c != '\t') || c == 0x7f) return "control character in request head";
  }
  if (complete && (line.empty() || line.back() != '\r')) {
    return "line not ended by CRLF (bare LF) in request head";
  }
  return std::nullopt;
}

std::optional<std::string> ParseRequestTarget(std::string_view target, HeadState& state) {
  if (state.is_connect) {
    auto authority = ParseAuthority(target, std::nullopt);
    if (auto* error = std::get_if<std::string>(&authority)) return "CONNECT target: " + *error;
    auto& a = std::get<Authority>(authority);
    state.host = std::move(a.host);
    state.port = a.port;
    return std::nullopt;
  }
  if (target.front() == '/') return "not a proxy request (origin-form)";
  if (target == "*") return "not a proxy request (asterisk-form)";
  if (target.find('#') != std::string_view::npos) return "fragment (#) in request target";
  const size_t scheme_end = target.find("://");
  if (scheme_end == std::string_view::npos) return "request target is not an http:// URL";
  const std::string_view scheme = target.substr(0, scheme_end);
  if (EqualsIgnoreCase(scheme, "https")) return "https:// URLs go through CONNECT";
  if (!EqualsIgnoreCase(scheme, "http")) return "unsupported URL scheme (only http://)";
  const std::string_view rest = target.substr(scheme_end + 3);
  const size_t authority_end = rest.find_first_of("/?");
  const std::string_view authority_text = rest.substr(0, authority_end);
  if (authority_text.find('@') != std::string_view::npos) {
    return "credentials in the URL (user@host) are refused";
  }
  auto authority = ParseAuthority(authority_text, uint16_t{80});
  if (auto* error = std::get_if<std::string>(&authority)) return "URL: " + *error;
  auto& a = std::get<Authority>(authority);
  state.host = std::move(a.host);
  state.port = a.port;
  const std::string_view path =
      authority_end == std::string_view::npos ? std::string_view() : rest.substr(authority_end);
  // Built in one go: gcc 12 warns (-Wrestrict, a false positive) on assign-then-append.
  const bool needs_slash = path.empty() || path.front() == '?';
  state.path = std::string(needs_slash ? "/" : "").append(path);
  return std::nullopt;
}

std::optional<std::string> ParseRequestLine(std::string_view line, HeadState& state) {
  if (line.empty()) return "empty line before the request line";
  const size_t sp1 = line.find(' ');
  const size_t sp2 = sp1 == std::string_view::npos ? sp1 : line.find(' ', sp1 + 1);
  if (sp2 == std::string_view::npos || line.find(' ', sp2 + 1) != std::string_view::npos) {
    return "malformed request line (expected METHOD TARGET HTTP/1.x)";
  }
  const std::string_view method = line.substr(0, sp1);
  const std::string_view target = line.substr(sp1 + 1, sp2 - sp1 - 1);
  const std::string_view version = line.substr(sp2 + 1);
  if (!IsToken(method)) return "malformed request method";
  if (target.empty() || !std::all_of(target.begin(), target.end(), IsVisibleAscii)) {
    return "malformed request target";
  }
  if (version != "HTTP/1.1" && version != "HTTP/1.0") {
    return "unsupported HTTP version (only HTTP/1.0 and HTTP/1.1)";
  }
  state.method = method;
  state.version = version;
  state.is_connect = method == "CONNECT";
  return ParseRequestTarget(target, state);
}

std::optional<std::string> AddConnectionOptions(std::string_view value, HeadState& state) {
  size_t start = 0;
  while (start <= value.size()) {
    size_t comma = value.find(',', start);
    if (comma == std::string_view::npos) comma = value.size();
    const std::string_view option = TrimOws(value.substr(start, comma - start));
    start = comma + 1;
    if (option.empty()) continue;
    if (!IsToken(option)) return "malformed Connection header";
    if (EqualsIgnoreCase(option, "host") || EqualsIgnoreCase(option, "content-length") ||
        EqualsIgnoreCase(option, "transfer-encoding")) {
      return "Connection header names Host, Content-Length or Transfer-Encoding";
    }
    state.connection_options.push_back(Lower(option));
  }
  return std::nullopt;
}

std::optional<std::string> ParseHeaderLine(std::string_view line, HeadState& state) {
  if (line.front() == ' ' || line.front() == '\t') return "obsolete line folding in header";
  const size_t colon = line.find(':');
  if (colon == std::string_view::npos) return "header line without a colon";
  const std::string_view name = line.substr(0, colon);
  if (!name.empty() && (name.back() == ' ' || name.back() == '\t')) {
    return "whitespace before the colon in a header";
  }
  if (!IsToken(name)) return "malformed header name";
  const std::string_view value = TrimOws(line.substr(colon + 1));
  if (EqualsIgnoreCase(name, "content-length")) {
    if (value.empty() || value.size() > kMaxContentLengthDigits ||
        !std::all_of(value.begin(), value.end(), IsDigit)) {
      return "invalid Content-Length";
    }
    uint64_t length = 0;
    for (const char c : value) length = length * 10 + static_cast<uint64_t>(c - '0');
    if (state.content_length && *state.content_length != length) {
      return "differing Content-Length headers";
    }
    state.content_length = length;
  } else if (EqualsIgnoreCase(name, "transfer-encoding")) {
    if (state.chunked) return "more than one Transfer-Encoding header";
    if (!EqualsIgnoreCase(value, "chunked")) {
      return "unsupported Transfer-Encoding (only a single \"chunked\")";
    }
    state.chunked = true;
  } else if (EqualsIgnoreCase(name, "host")) {
    if (++state.host_headers > 1) return "more than one Host header";
  } else if (EqualsIgnoreCase(name, "connection")) {
    if (auto error = AddConnectionOptions(value, state)) return error;
  }
  state.headers.push_back({name, value});
  return std::nullopt;
}

bool IsHopByHop(std::string_view name, const HeadState& state) {
  static constexpr std::string_view kHopByHop[] = {"connection", "keep-alive", "te",
                                                   "trailer",    "upgrade",    "host"};
  for (const std::string_view h : kHopByHop) {
    if (EqualsIgnoreCase(name, h)) return true;
  }
  if (StartsWithIgnoreCase(name, "proxy-")) return true;
  return std::any_of(state.connection_options.begin(), state.connection_options.end(),
                     [name](const std::string& option) { return EqualsIgnoreCase(name, option); });
}

std::string BuildForwardHead(const HeadState& state) {
  std::string out;
  out.append(state.method).append(" ").append(state.path).append(" ").append(state.version);
  out += "\r\nHost: " + FormatAuthority(state.host, state.port, 80) + "\r\n";
  bool length_written = false;
  for (const Header& h : state.headers) {
    if (IsHopByHop(h.name, state)) continue;
    if (EqualsIgnoreCase(h.name, "content-length")) {
      if (length_written) continue;  // duplicates were checked equal; send one
      length_written = true;
      out += "Content-Length: " + std::to_string(*state.content_length) + "\r\n";
      continue;
    }
    out.append(h.name).append(": ").append(h.value).append("\r\n");
  }
  out += "Connection: close\r\n\r\n";
  return out;
}

HttpParse Invalid(std::string error) {
  HttpParse out;
  out.status = ParseStatus::kInvalid;
  out.error = std::move(error);
  return out;
}

HttpParse Finish(HeadState& state, size_t consumed) {
  if (state.chunked && state.content_length) {
    return Invalid("both Content-Length and Transfer-Encoding");
  }
  if (state.chunked && state.version == "HTTP/1.0") {
    return Invalid("Transfer-Encoding in an HTTP/1.0 request");
  }
  if (state.is_connect && (state.chunked || state.content_length.value_or(0) != 0)) {
    return Invalid("CONNECT with a body");
  }
  HttpParse out;
  out.status = ParseStatus::kDone;
  HttpRequestHead& head = out.head;
  head.method = std::string(state.method);
  head.is_connect = state.is_connect;
  head.port = state.port;
  head.consumed = consumed;
  head.content_length = state.content_length.value_or(0);
  head.chunked = state.chunked;
  if (!state.is_connect) head.forward_head = BuildForwardHead(state);
  head.host = std::move(state.host);
  return out;
}

// ---- SOCKS5 -------------------------------------------------------------------------------

constexpr uint8_t kSocksVersion = 5;
constexpr uint8_t kSocksNoAuth = 0x00;
constexpr uint8_t kSocksConnect = 0x01;
constexpr uint8_t kAtypIpv4 = 0x01;
constexpr uint8_t kAtypName = 0x03;
constexpr uint8_t kAtypIpv6 = 0x04;

uint8_t Byte(std::string_view buffer, size_t i) { return static_cast<uint8_t>(buffer[i]); }

Socks5Request SocksInvalid(uint8_t code, std::string error) {
  Socks5Request out;
  out.status = ParseStatus::kInvalid;
  out.reply_code = code;
  out.error = std::move(error);
  return out;
}

}  // namespace

Result<std::string> NormalizeHost(std::string_view host) {
  if (host.empty()) return HostError("empty host");
  if (std::any_of(host.begin(), host.end(),
                  [](char c) { return static_cast<unsigned char>(c) >= 0x80; })) {
    return HostError("host is not ASCII; send the IDNA A-label (xn--...)");
  }
  if (host.size() > kMaxHostName + 3) return HostError("host name longer than 253 characters");
  std::string name = Lower(host);
  if (name.back() == '.') name.pop_back();  // "example.com." is the absolute form
  if (auto ip = ParseIpLiteral(name)) return FormatIp(*ip);
  if (name.empty()) return HostError("empty host");
  if (name.size() > kMaxHostName) return HostError("host name longer than 253 characters");
  size_t start = 0;
  std::string_view last_label;
  while (start <= name.size()) {
    size_t dot = name.find('.', start);
    if (dot == std::string::npos) dot = name.size();
    const std::string_view label = std::string_view(name).substr(start, dot - start);
    start = dot + 1;
    if (label.empty()) return HostError("empty label in host name");
    if (label.size() > kMaxLabel) return HostError("host name label longer than 63 characters");
    for (const char c : label) {
      if (c == '_') return HostError("underscore in host name");
      if (!IsAlpha(c) && !IsDigit(c) && c != '-') {
        return HostError("invalid character in host name (only a-z, 0-9, '-' and '.')");
      }
    }
    if (label.front() == '-' || label.back() == '-') {
      return HostError("host name label starts or ends with '-'");
    }
    last_label = label;
  }
  const bool numeric = std::all_of(last_label.begin(), last_label.end(), IsDigit) ||
                       (last_label.size() >= 2 && last_label[0] == '0' && last_label[1] == 'x' &&
                        std::all_of(last_label.begin() + 2, last_label.end(), IsHexDigit));
  if (numeric) return HostError("host ends in a number but is not a valid IP address");
  return name;
}

HttpParse ParseHttpRequestHead(std::string_view buffer) {
  const std::string_view window = buffer.substr(0, kMaxHttpHead);
  HeadState state;
  size_t pos = 0;
  size_t lines = 0;
  while (pos < window.size()) {
    const size_t lf = window.find('\n', pos);
    const bool complete = lf != std::string_view::npos;
    std::string_view line = window.substr(pos, complete ? lf - pos : std::string_view::npos);
    if (auto error = CheckLineBytes(line, complete)) return Invalid(std::move(*error));
    if (!complete) break;
    line.remove_suffix(1);  // the CR
    pos = lf + 1;
    if (lines == 0) {
      if (auto error = ParseRequestLine(line, state)) return Invalid(std::move(*error));
    } else if (line.empty()) {
      return Finish(state, pos);
    } else {
      if (lines > kMaxHttpHeaders) return Invalid("too many headers");
      if (auto error = ParseHeaderLine(line, state)) return Invalid(std::move(*error));
    }
    ++lines;
  }
  if (buffer.size() >= kMaxHttpHead) return Invalid("request head too large");
  return HttpParse{};
}

std::string HttpErrorResponse(int status, std::string_view reason_phrase, std::string_view body) {
  std::string out = "HTTP/1.1 " + std::to_string(status) + " ";
  for (const char c : reason_phrase) {
    const auto u = static_cast<unsigned char>(c);
    out += (u < 0x20 || u == 0x7f) ? ' ' : c;
  }
  out += "\r\nContent-Type: text/plain; charset=utf-8\r\nContent-Length: ";
  out += std::to_string(body.size());
  out += "\r\nConnection: close\r\n\r\n";
  out += body;
  return out;
}

Socks5Greeting ParseSocks5Greeting(std::string_view buffer) {
  Socks5Greeting out;
  if (buffer.empty()) return out;
  if (Byte(buffer, 0) != kSocksVersion || (buffer.size() >= 2 && Byte(buffer, 1) == 0)) {
    out.status = ParseStatus::kInvalid;
    return out;
  }
  if (buffer.size() < 2) return out;
  const size_t total = 2 + size_t{Byte(buffer, 1)};
  if (buffer.size() < total) return out;
  for (size_t i = 2; i < total; ++i) {
    if (Byte(buffer, i) == kSocksNoAuth) out.no_auth_offered = true;
  }
  out.status = ParseStatus::kDone;
  out.consumed = total;
  return out;
}

Socks5Request ParseSocks5Request(std::string_view buffer) {
  // Fixed-position checks first, each as soon as its byte is there.
  if (!buffer.empty() && Byte(buffer, 0) != kSocksVersion) {
    return SocksInvalid(kSocks5GeneralFailure, "unsupported SOCKS version");
  }
  if (buffer.size() >= 2 && Byte(buffer, 1) != kSocksConnect) {
    return SocksInvalid(kSocks5CommandNotSupported, "only the CONNECT command is supported");
  }
  if (buffer.size() >= 3 && Byte(buffer, 2) != 0) {
    return SocksInvalid(kSocks5GeneralFailure, "reserved byte is not 0");
  }
  if (buffer.size() < 4) return Socks5Request{};
  const uint8_t atyp = Byte(buffer, 3);
  size_t address_size = 0;
  switch (atyp) {
    case kAtypIpv4:
      address_size = 4;
      break;
    case kAtypIpv6:
      address_size = 16;
      break;
    case kAtypName:
      if (buffer.size() < 5) return Socks5Request{};
      if (Byte(buffer, 4) == 0) return SocksInvalid(kSocks5GeneralFailure, "empty host name");
      address_size = 1 + size_t{Byte(buffer, 4)};
      break;
    default:
      return SocksInvalid(kSocks5AddressTypeNotSupported, "unknown address type");
  }
  const size_t total = 4 + address_size + 2;
  if (buffer.size() < total) return Socks5Request{};
  Socks5Request out;
  out.command = kSocksConnect;
  out.port = static_cast<uint16_t>((Byte(buffer, total - 2) << 8) | Byte(buffer, total - 1));
  if (atyp == kAtypName) {
    const std::string_view name = buffer.substr(5, address_size - 1);
    if (name.find('\0') != std::string_view::npos) {
      return SocksInvalid(kSocks5GeneralFailure, "NUL in host name");
    }
    auto host = NormalizeHost(name);
    if (!host) return SocksInvalid(kSocks5GeneralFailure, "invalid host: " + host.error().context);
    out.host = std::move(*host);
  } else {
    IpAddress ip;
    ip.family = atyp == kAtypIpv4 ? AF_INET : AF_INET6;
    std::memcpy(ip.bytes.data(), buffer.data() + 4, address_size);
    out.host = FormatIp(ip);
  }
  if (out.port == 0) return SocksInvalid(kSocks5GeneralFailure, "port 0");
  out.status = ParseStatus::kDone;
  out.consumed = total;
  return out;
}

std::string Socks5Reply(uint8_t code) {
  std::string reply(10, '\0');  // BND.ADDR 0.0.0.0, BND.PORT 0
  reply[0] = static_cast<char>(kSocksVersion);
  reply[1] = static_cast<char>(code);
  reply[3] = static_cast<char>(kAtypIpv4);
  return reply;
}

Result<ResolvePin> ParseResolvePin(std::string_view pin) {
  const size_t eq = pin.find('=');
  auto name = NormalizeHost(pin.substr(0, eq));
  const auto address =
      eq == std::string_view::npos ? std::nullopt : ParseIpLiteral(pin.substr(eq + 1));
  if (!name || !address || ParseIpLiteral(*name)) {
    std::string context = "resolve entry \"";
    context += pin;
    context += "\" is not NAME=ADDRESS (a host name and an IPv4 or IPv6 address)";
    return MakeError(ErrorCode::kPolicy, std::move(context));
  }
  return ResolvePin{std::move(*name), *address};
}

}  // namespace agentbox::net
