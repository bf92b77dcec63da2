// The egress proxy's wire protocols, parsed from bytes that sandboxed (untrusted) code wrote:
// an HTTP proxy request head (CONNECT host:port, or GET http://host/path ...) and a SOCKS5
// greeting and CONNECT request (RFC 1928, no authentication).
//
//   std::string buffer;                        // the caller accumulates what it reads
//   HttpParse p = ParseHttpRequestHead(buffer);
//   if (p.status == ParseStatus::kIncomplete) ... read more, call again with the whole buffer ...
//   if (p.status == ParseStatus::kInvalid) write(HttpErrorResponse(400, "Bad Request", p.error));
//   if (p.status == ParseStatus::kDone) ... p.head.host, p.head.port; bytes after
//                                           p.head.consumed belong to the body or tunnel ...
//
// Every parser is pure, strict and bounded: it looks at no more than a fixed number of bytes
// (kMaxHttpHead for HTTP, 262 for SOCKS5), allocates in proportion to that, and gives the same
// answer whether the buffer arrived at once or a byte at a time. Hosts come back normalized
// (NormalizeHost): a lowercase LDH name or an IP literal in canonical form, never anything
// else, so the allowlist check sees one spelling of each destination.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>

#include "base/result.h"
#include "net/address.h"

namespace agentbox::net {

enum class ParseStatus { kIncomplete, kDone, kInvalid };

// Largest HTTP request head (request line, headers and the blank line) and header count.
inline constexpr size_t kMaxHttpHead = size_t{16} * 1024;
inline constexpr size_t kMaxHttpHeaders = 100;

// Host names and IP literals, one spelling each:
// - lowercase ASCII; one trailing dot stripped ("Example.COM." -> "example.com");
// - an IP literal (anything ParseIpLiteral accepts: every inet_aton IPv4 form, IPv6 with or
//   without brackets) comes back as FormatIp gives it ("0x7f.1" -> "127.0.0.1",
//   "[::FFFF:7f00:1]" -> "::ffff:127.0.0.1"), without brackets;
// - else a name: LDH labels ([a-z0-9-], 1..63 characters, not starting or ending with '-'),
//   at most 253 characters in all. No underscore (policy/domain.h cannot allowlist one
//   either). A name whose last label is numeric ("1.2.3.256", "0x1.0x100000000") is refused:
//   it is neither an address nor a possible DNS name, and other resolvers read such names as
//   addresses.
// Non-ASCII is refused: the agent must send the IDNA A-label (xn--...). The error names the
// problem, not the (untrusted) host.
[[nodiscard]] Result<std::string> NormalizeHost(std::string_view host);

// A resolve pin, "NAME=ADDRESS" (as curl's --resolve): the name normalized (not itself an
// address), the address in any spelling ParseIpLiteral takes. Errors: kPolicy.
struct ResolvePin {
  std::string name;
  IpAddress address;
};
[[nodiscard]] Result<ResolvePin> ParseResolvePin(std::string_view pin);

// The request head of a client that talks to agentbox as its HTTP proxy.
struct HttpRequestHead {
  std::string method;       // "CONNECT", "GET", ...: a token, case-sensitive
  bool is_connect = false;  // method == "CONNECT"
  std::string host;         // NormalizeHost form (an IPv6 literal without brackets)
  uint16_t port = 0;        // 1..65535; 80 when an http:// URL names none
  // Non-CONNECT only: the head to send to the origin server. Request line in origin-form
  // ("GET /path?q HTTP/1.1"), "Host: <the URL's authority>" first, then the client's headers
  // in order without the hop-by-hop ones (Connection and every header it names,
  // Keep-Alive, TE, Trailer, Upgrade, Host, and every "Proxy-*" header), at most one
  // Content-Length, then "Connection: close" and the blank line. CRLF line ends throughout.
  std::string forward_head;
  size_t consumed = 0;          // bytes of the head in the buffer, including the blank line
  uint64_t content_length = 0;  // the body's length (Content-Length), 0 if none or chunked
  bool chunked = false;         // Transfer-Encoding: chunked (then content_length is 0)
};

struct HttpParse {
  ParseStatus status = ParseStatus::kIncomplete;
  HttpRequestHead head;  // kDone only
  std::string error;     // kInvalid only: a fixed phrase that quotes none of the input
};

// Parses the head at the start of `buffer` (everything the client sent so far). Accepts:
// - "CONNECT host:port HTTP/1.x" (authority-form, port required, "[v6]:port");
// - "<token> http://host[:port][/path][?query] HTTP/1.x" (absolute-form, default port 80).
// Refuses (kInvalid): https:// URLs ("https:// URLs go through CONNECT"), other schemes,
// origin-form "/path" ("not a proxy request (origin-form)"), "*", userinfo@ in the URL, a
// fragment, versions other than HTTP/1.0 and HTTP/1.1, and every shape that lets two parsers
// disagree about where a request ends (request smuggling):
// - a line not ended by CRLF: a bare LF or a bare CR. RFC 9112 lets recipients accept a bare
//   LF; a proxy between untrusted code and arbitrary servers does not;
// - NUL or any other control character but HTAB (in header values), DEL;
// - an empty line before the request line, obs-fold (a line starting with SP or HTAB), a
//   header name that is not a token or has whitespace before the colon;
// - Content-Length that is not digits, or several that differ; Transfer-Encoding that is not
//   exactly "chunked" (one header, one coding), or in HTTP/1.0, or together with
//   Content-Length; more than one Host; a Connection header that names Host, Content-Length
//   or Transfer-Encoding (the proxy would strip the framing it checked); a body on CONNECT.
// Limits: a head over kMaxHttpHead bytes ("request head too large") or with more than
// kMaxHttpHeaders header lines ("too many headers").
[[nodiscard]] HttpParse ParseHttpRequestHead(std::string_view buffer);

// "HTTP/1.1 <status> <reason>" with Content-Type: text/plain; charset=utf-8,
// Content-Length, Connection: close, then `body`. Control characters in `reason` become
// spaces (no header injection); status is printed as given and must be 100..599.
[[nodiscard]] std::string HttpErrorResponse(int status, std::string_view reason_phrase,
                                            std::string_view body);

// SOCKS5 reply codes (RFC 1928 section 6).
inline constexpr uint8_t kSocks5Succeeded = 0x00;
inline constexpr uint8_t kSocks5GeneralFailure = 0x01;
inline constexpr uint8_t kSocks5NotAllowed = 0x02;
inline constexpr uint8_t kSocks5NetworkUnreachable = 0x03;
inline constexpr uint8_t kSocks5HostUnreachable = 0x04;
inline constexpr uint8_t kSocks5ConnectionRefused = 0x05;
inline constexpr uint8_t kSocks5TtlExpired = 0x06;
inline constexpr uint8_t kSocks5CommandNotSupported = 0x07;
inline constexpr uint8_t kSocks5AddressTypeNotSupported = 0x08;

// The method-selection message: VER=5, NMETHODS>=1, METHODS. kDone whether or not "no
// authentication" (0x00) is among the methods; the caller answers 05 00 or 05 FF.
struct Socks5Greeting {
  ParseStatus status = ParseStatus::kIncomplete;
  bool no_auth_offered = false;
  size_t consumed = 0;
};
[[nodiscard]] Socks5Greeting ParseSocks5Greeting(std::string_view buffer);

// The request after the greeting: VER=5 CMD RSV=0 ATYP DST.ADDR DST.PORT. CONNECT (1) only.
// kInvalid carries the reply code to send before closing: 0x07 for BIND, UDP ASSOCIATE and
// unknown commands, 0x08 for an unknown ATYP, 0x01 for anything else malformed (wrong VER,
// RSV not 0, port 0, a name NormalizeHost refuses, an empty name or one with a NUL). A name
// (ATYP 3) that is an IP literal is accepted and comes back in FormatIp form.
struct Socks5Request {
  ParseStatus status = ParseStatus::kIncomplete;
  uint8_t command = 0;
  std::string host;  // NormalizeHost form
  uint16_t port = 0;
  size_t consumed = 0;
  uint8_t reply_code = kSocks5Succeeded;  // kInvalid: the code to answer with
  std::string error;                      // kInvalid: a fixed phrase
};
[[nodiscard]] Socks5Request ParseSocks5Request(std::string_view buffer);

// VER=5, REP=code, RSV=0, ATYP=1, BND.ADDR=0.0.0.0, BND.PORT=0: 10 bytes.
[[nodiscard]] std::string Socks5Reply(uint8_t code);

}  // namespace agentbox::net
