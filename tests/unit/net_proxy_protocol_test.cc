#include <gtest/gtest.h>

#include <string>
#include <string_view>
#include <vector>

#include "net/proxy_protocol.h"

namespace agentbox::net {
namespace {

using namespace std::string_literals;

// ---- NormalizeHost --------------------------------------------------------------------------

std::string Norm(std::string_view host) {
  auto out = NormalizeHost(host);
  EXPECT_TRUE(out.ok()) << host << ": " << (out.ok() ? "" : out.error().Message());
  return out.ok() ? *out : "";
}

std::string NormError(std::string_view host) {
  auto out = NormalizeHost(host);
  EXPECT_FALSE(out.ok()) << host << " -> " << (out.ok() ? *out : "");
  return out.ok() ? "" : out.error().context;
}

TEST(NetNormalizeHostTest, LowercasesAndStripsOneTrailingDot) {
  EXPECT_EQ(Norm("Example.COM"), "example.com");
  EXPECT_EQ(Norm("example.com."), "example.com");
  EXPECT_EQ(Norm("xn--bcher-kva.example"), "xn--bcher-kva.example");
  EXPECT_EQ(Norm("a-b.c0"), "a-b.c0");
  EXPECT_EQ(Norm("localhost"), "localhost");
  EXPECT_EQ(Norm(std::string(63, 'a') + ".com"), std::string(63, 'a') + ".com");
  std::string longest;  // 253 characters: three 63-character labels, then 61
  for (int i = 0; i < 3; ++i) longest += std::string(63, 'a') + ".";
  longest += std::string(61, 'b');
  ASSERT_EQ(longest.size(), 253U);
  EXPECT_EQ(Norm(longest), longest);
  EXPECT_EQ(Norm(longest + "."), longest);
}

TEST(NetNormalizeHostTest, IpLiteralsComeBackCanonical) {
  EXPECT_EQ(Norm("127.1"), "127.0.0.1");
  EXPECT_EQ(Norm("0x7F.0.0.1"), "127.0.0.1");
  EXPECT_EQ(Norm("017700000001"), "127.0.0.1");
  EXPECT_EQ(Norm("2130706433"), "127.0.0.1");
  EXPECT_EQ(Norm("127.0.0.1."), "127.0.0.1");
  EXPECT_EQ(Norm("1.0x1"), "1.0.0.1");
  EXPECT_EQ(Norm("[::1]"), "::1");
  EXPECT_EQ(Norm("::1"), "::1");
  EXPECT_EQ(Norm("[::FFFF:7f00:1]"), "::ffff:127.0.0.1");
  EXPECT_EQ(Norm("2001:DB8:0::1"), "2001:db8::1");
}

TEST(NetNormalizeHostTest, RefusesWhatIsNeitherNameNorAddress) {
  EXPECT_EQ(NormError(""), "empty host");
  EXPECT_EQ(NormError("."), "empty host");
  EXPECT_EQ(NormError("a..b"), "empty label in host name");
  EXPECT_EQ(NormError(".a"), "empty label in host name");
  EXPECT_EQ(NormError("a.."), "empty label in host name");
  EXPECT_EQ(NormError(std::string(64, 'a') + ".com"), "host name label longer than 63 characters");
  EXPECT_EQ(NormError(std::string(254, 'a')), "host name longer than 253 characters");
  EXPECT_EQ(NormError(std::string(10000, 'a')), "host name longer than 253 characters");
  EXPECT_EQ(NormError("my_host.example"), "underscore in host name");
  EXPECT_EQ(NormError("-a.com"), "host name label starts or ends with '-'");
  EXPECT_EQ(NormError("a-.com"), "host name label starts or ends with '-'");
  EXPECT_EQ(NormError("exämple.com"), "host is not ASCII; send the IDNA A-label (xn--...)");
  EXPECT_EQ(NormError("1.2.3.256"), "host ends in a number but is not a valid IP address");
  EXPECT_EQ(NormError("1.2.3.4.5"), "host ends in a number but is not a valid IP address");
  EXPECT_EQ(Norm("a.0x1g"), "a.0x1g");  // not a number: a name
}

TEST(NetNormalizeHostTest, RefusesSeparatorsAndControls) {
  for (const std::string& bad : std::vector<std::string>{
           "a b.com", "a.com:80", "a/b", "a@b", "a%2eb", "[a.com]", "[1.2.3.4]", "fe80::1%eth0",
           "[fe80::1%25eth0]", "a\tb", "a\rb", "a\nb", "a\0b"s, "0x100000000", "1.0x", "a.0x",
           "*.example.com", "a,b", "a;b"}) {
    EXPECT_FALSE(NormalizeHost(bad).ok()) << bad;
  }
}

// ---- HTTP ---------------------------------------------------------------------------------

HttpParse Http(std::string_view buffer) { return ParseHttpRequestHead(buffer); }

std::string HttpError(std::string_view buffer) {
  const HttpParse p = Http(buffer);
  EXPECT_EQ(p.status, ParseStatus::kInvalid) << buffer;
  return p.error;
}

// Feeding `buffer` a byte at a time gives kIncomplete until the whole-buffer answer, which
// it then gives exactly.
void ExpectSameIncrementally(std::string_view buffer) {
  const HttpParse whole = Http(buffer);
  for (size_t n = 0; n <= buffer.size(); ++n) {
    const HttpParse part = Http(buffer.substr(0, n));
    if (part.status == ParseStatus::kIncomplete) continue;
    EXPECT_EQ(part.status, whole.status) << "prefix " << n << " of " << buffer;
    EXPECT_EQ(part.error, whole.error) << "prefix " << n;
    EXPECT_EQ(part.head.consumed, whole.head.consumed);
    EXPECT_EQ(part.head.host, whole.head.host);
    EXPECT_EQ(part.head.port, whole.head.port);
    EXPECT_EQ(part.head.forward_head, whole.head.forward_head);
    return;
  }
  EXPECT_EQ(whole.status, ParseStatus::kIncomplete) << buffer;
}

TEST(NetHttpParseTest, AbsoluteFormGetIsRewrittenForTheOrigin) {
  const std::string request =
      "GET http://Example.com/path?q=1 HTTP/1.1\r\n"
      "Host: example.com\r\n"
      "User-Agent: curl/8\r\n"
      "Accept: */*\r\n"
      "Proxy-Connection: Keep-Alive\r\n"
      "Proxy-Authorization: Basic eDp5\r\n"
      "\r\n";
  const HttpParse p = Http(request + "BODY");
  ASSERT_EQ(p.status, ParseStatus::kDone) << p.error;
  EXPECT_EQ(p.head.method, "GET");
  EXPECT_FALSE(p.head.is_connect);
  EXPECT_EQ(p.head.host, "example.com");
  EXPECT_EQ(p.head.port, 80);
  EXPECT_EQ(p.head.consumed, request.size());
  EXPECT_EQ(p.head.forward_head,
            "GET /path?q=1 HTTP/1.1\r\n"
            "Host: example.com\r\n"
            "User-Agent: curl/8\r\n"
            "Accept: */*\r\n"
            "Connection: close\r\n"
            "\r\n");
}

TEST(NetHttpParseTest, AbsoluteFormPortsPathsAndIpv6) {
  HttpParse p = Http("POST HTTP://api.example.com:8080 HTTP/1.0\r\nContent-Length: 3\r\n\r\n");
  ASSERT_EQ(p.status, ParseStatus::kDone) << p.error;
  EXPECT_EQ(p.head.port, 8080);
  EXPECT_EQ(p.head.content_length, 3U);
  EXPECT_EQ(p.head.forward_head,
            "POST / HTTP/1.0\r\nHost: api.example.com:8080\r\nContent-Length: 3\r\n"
            "Connection: close\r\n\r\n");

  p = Http("GET http://a.example?x=1 HTTP/1.1\r\n\r\n");
  ASSERT_EQ(p.status, ParseStatus::kDone) << p.error;
  EXPECT_EQ(p.head.forward_head,
            "GET /?x=1 HTTP/1.1\r\nHost: a.example\r\nConnection: close\r\n\r\n");

  p = Http("GET http://[::1]:8080/x HTTP/1.1\r\n\r\n");
  ASSERT_EQ(p.status, ParseStatus::kDone) << p.error;
  EXPECT_EQ(p.head.host, "::1");
  EXPECT_EQ(p.head.forward_head,
            "GET /x HTTP/1.1\r\nHost: [::1]:8080\r\nConnection: close\r\n\r\n");

  p = Http("GET http://0x7f.1:80/ HTTP/1.1\r\n\r\n");
  ASSERT_EQ(p.status, ParseStatus::kDone) << p.error;
  EXPECT_EQ(p.head.host, "127.0.0.1");
  EXPECT_EQ(p.head.forward_head, "GET / HTTP/1.1\r\nHost: 127.0.0.1\r\nConnection: close\r\n\r\n");

  p = Http("M-SEARCH http://a.example/p@q HTTP/1.1\r\n\r\n");  // '@' in the path is fine
  ASSERT_EQ(p.status, ParseStatus::kDone) << p.error;
  EXPECT_EQ(p.head.method, "M-SEARCH");
}

TEST(NetHttpParseTest, HopByHopHeadersAreRemoved) {
  const HttpParse p = Http(
      "GET http://a.example/ HTTP/1.1\r\n"
      "Connection: keep-alive, X-Secret ,Upgrade\r\n"
      "X-Secret: 1\r\n"
      "x-secret: 2\r\n"
      "Keep-Alive: timeout=5\r\n"
      "TE: trailers\r\n"
      "Trailer: Expires\r\n"
      "Upgrade: websocket\r\n"
      "Proxy-Authenticate: x\r\n"
      "Proxy-Anything: x\r\n"
      "X-Kept:   padded value \t\r\n"
      "Content-Length: 0\r\n"
      "Content-Length: 000\r\n"
      "\r\n");
  ASSERT_EQ(p.status, ParseStatus::kDone) << p.error;
  EXPECT_EQ(p.head.forward_head,
            "GET / HTTP/1.1\r\nHost: a.example\r\nX-Kept: padded value\r\nContent-Length: 0\r\n"
            "Connection: close\r\n\r\n");
}

TEST(NetHttpParseTest, ConnectTakesAuthorityForm) {
  const std::string connect = "CONNECT PyPI.org:443 HTTP/1.1\r\nHost: pypi.org:443\r\n\r\n";
  HttpParse p = Http(connect + "\x16\x03");
  ASSERT_EQ(p.status, ParseStatus::kDone) << p.error;
  EXPECT_TRUE(p.head.is_connect);
  EXPECT_EQ(p.head.method, "CONNECT");
  EXPECT_EQ(p.head.host, "pypi.org");
  EXPECT_EQ(p.head.port, 443);
  EXPECT_EQ(p.head.forward_head, "");
  EXPECT_EQ(p.head.consumed, connect.size());

  p = Http("CONNECT [2001:DB8::1]:8443 HTTP/1.0\r\n\r\n");
  ASSERT_EQ(p.status, ParseStatus::kDone) << p.error;
  EXPECT_EQ(p.head.host, "2001:db8::1");
  EXPECT_EQ(p.head.port, 8443);

  p = Http("CONNECT 127.1:22 HTTP/1.1\r\nContent-Length: 0\r\n\r\n");
  ASSERT_EQ(p.status, ParseStatus::kDone) << p.error;
  EXPECT_EQ(p.head.host, "127.0.0.1");
}

TEST(NetHttpParseTest, RefusesWhatIsNotAProxyRequest) {
  EXPECT_EQ(HttpError("GET https://a.example/ HTTP/1.1\r\n\r\n"),
            "https:// URLs go through CONNECT");
  EXPECT_EQ(HttpError("GET /index.html HTTP/1.1\r\nHost: a\r\n\r\n"),
            "not a proxy request (origin-form)");
  EXPECT_EQ(HttpError("OPTIONS * HTTP/1.1\r\n\r\n"), "not a proxy request (asterisk-form)");
  EXPECT_EQ(HttpError("GET http://user:pw@a.example/ HTTP/1.1\r\n\r\n"),
            "credentials in the URL (user@host) are refused");
  EXPECT_EQ(HttpError("GET http://a.example@evil.example/ HTTP/1.1\r\n\r\n"),
            "credentials in the URL (user@host) are refused");
  EXPECT_EQ(HttpError("GET ftp://a.example/ HTTP/1.1\r\n\r\n"),
            "unsupported URL scheme (only http://)");
  EXPECT_EQ(HttpError("GET a.example:80 HTTP/1.1\r\n\r\n"), "request target is not an http:// URL");
  EXPECT_EQ(HttpError("GET http://a.example/#frag HTTP/1.1\r\n\r\n"),
            "fragment (#) in request target");
  EXPECT_EQ(HttpError("GET http:///x HTTP/1.1\r\n\r\n"), "URL: empty host");
  EXPECT_EQ(HttpError("GET http://a.example:0/ HTTP/1.1\r\n\r\n"),
            "URL: port must be a number from 1 to 65535");
  EXPECT_EQ(HttpError("GET http://a.example:/ HTTP/1.1\r\n\r\n"),
            "URL: port must be a number from 1 to 65535");
  EXPECT_EQ(HttpError("GET http://a_b.example/ HTTP/1.1\r\n\r\n"),
            "URL: invalid host: underscore in host name");
  EXPECT_EQ(HttpError("GET http://::1/ HTTP/1.1\r\n\r\n"),
            "URL: an IPv6 host must be written in [brackets]");
  EXPECT_EQ(HttpError("GET http://%31%32%37.0.0.1/ HTTP/1.1\r\n\r\n"),
            "URL: invalid host: invalid character in host name (only a-z, 0-9, '-' and '.')");
  EXPECT_EQ(HttpError("CONNECT a.example HTTP/1.1\r\n\r\n"),
            "CONNECT target: port required (host:port)");
  EXPECT_EQ(HttpError("CONNECT a.example:65536 HTTP/1.1\r\n\r\n"),
            "CONNECT target: port must be a number from 1 to 65535");
  EXPECT_EQ(HttpError("CONNECT http://a.example:443 HTTP/1.1\r\n\r\n"),
            "CONNECT target: an IPv6 host must be written in [brackets]");
  EXPECT_EQ(HttpError("CONNECT [::1:443 HTTP/1.1\r\n\r\n"),
            "CONNECT target: unterminated [IPv6] host");
  EXPECT_EQ(HttpError("CONNECT [::1]x:443 HTTP/1.1\r\n\r\n"),
            "CONNECT target: malformed authority");
  EXPECT_EQ(HttpError("CONNECT a.example:443 HTTP/1.1\r\nContent-Length: 5\r\n\r\n"),
            "CONNECT with a body");
  EXPECT_EQ(HttpError("CONNECT a.example:443 HTTP/1.1\r\nTransfer-Encoding: chunked\r\n\r\n"),
            "CONNECT with a body");
}

TEST(NetHttpParseTest, RefusesOtherVersionsAndMalformedRequestLines) {
  for (const char* version : {"HTTP/2.0", "HTTP/1.2", "http/1.1", "HTTP/1.1 ", "HTTP/1", ""}) {
    const std::string request = "GET http://a.example/ "s + version + "\r\n\r\n";
    const HttpParse p = Http(request);
    EXPECT_EQ(p.status, ParseStatus::kInvalid) << version;
  }
  EXPECT_EQ(HttpError("GET http://a.example/ HTTP/0.9\r\n\r\n"),
            "unsupported HTTP version (only HTTP/1.0 and HTTP/1.1)");
  EXPECT_EQ(HttpError("GET  http://a.example/ HTTP/1.1\r\n\r\n"),
            "malformed request line (expected METHOD TARGET HTTP/1.x)");
  EXPECT_EQ(HttpError("GET http://a.example/\x01 HTTP/1.1\r\n\r\n"),
            "control character in request head");
  EXPECT_EQ(HttpError("GET\thttp://a.example/ HTTP/1.1\r\n\r\n"),
            "malformed request line (expected METHOD TARGET HTTP/1.x)");
  EXPECT_EQ(HttpError("G(T http://a.example/ HTTP/1.1\r\n\r\n"), "malformed request method");
  EXPECT_EQ(HttpError("GET http://a.example/\xc3\xa9 HTTP/1.1\r\n\r\n"),
            "malformed request target");
  EXPECT_EQ(HttpError("\r\nGET http://a.example/ HTTP/1.1\r\n\r\n"),
            "empty line before the request line");
}

TEST(NetHttpParseTest, RefusesSmugglingShapes) {
  const std::string line = "GET http://a.example/ HTTP/1.1\r\n";
  EXPECT_EQ(HttpError(line + "A: 1\n\r\n"), "line not ended by CRLF (bare LF) in request head");
  EXPECT_EQ(HttpError("GET http://a.example/ HTTP/1.1\n\n"),
            "line not ended by CRLF (bare LF) in request head");
  EXPECT_EQ(HttpError(line + "A: 1\rB: 2\r\n\r\n"), "bare CR in request head");
  EXPECT_EQ(HttpError(line + "A: 1\r\r\n\r\n"), "bare CR in request head");
  EXPECT_EQ(HttpError(line + "A: 1\r\n b\r\n\r\n"), "obsolete line folding in header");
  EXPECT_EQ(HttpError(line + "A: 1\r\n\tb\r\n\r\n"), "obsolete line folding in header");
  EXPECT_EQ(HttpError(line + "Content-Length : 5\r\n\r\n"),
            "whitespace before the colon in a header");
  EXPECT_EQ(HttpError(line + "Content-Length\t: 5\r\n\r\n"),
            "whitespace before the colon in a header");
  EXPECT_EQ(HttpError(line + "Bad Name: 5\r\n\r\n"), "malformed header name");
  EXPECT_EQ(HttpError(line + ": 5\r\n\r\n"), "malformed header name");
  EXPECT_EQ(HttpError(line + "X-\xc3\xa9: 5\r\n\r\n"), "malformed header name");
  EXPECT_EQ(HttpError(line + "NoColon\r\n\r\n"), "header line without a colon");
  EXPECT_EQ(HttpError(line + "A: 1\0\r\n\r\n"s), "NUL in request head");
  EXPECT_EQ(HttpError(line + "A: \x01\r\n\r\n"), "control character in request head");
  EXPECT_EQ(HttpError(line + "A: \x7f\r\n\r\n"), "control character in request head");
  EXPECT_EQ(HttpError(line + "Content-Length: 5\r\nTransfer-Encoding: chunked\r\n\r\n"),
            "both Content-Length and Transfer-Encoding");
  EXPECT_EQ(HttpError(line + "Transfer-Encoding: chunked\r\nContent-Length: 5\r\n\r\n"),
            "both Content-Length and Transfer-Encoding");
  EXPECT_EQ(HttpError(line + "Content-Length: 5\r\nContent-Length: 6\r\n\r\n"),
            "differing Content-Length headers");
  EXPECT_EQ(HttpError(line + "Content-Length: 5, 5\r\n\r\n"), "invalid Content-Length");
  EXPECT_EQ(HttpError(line + "Content-Length: -1\r\n\r\n"), "invalid Content-Length");
  EXPECT_EQ(HttpError(line + "Content-Length: +1\r\n\r\n"), "invalid Content-Length");
  EXPECT_EQ(HttpError(line + "Content-Length: \r\n\r\n"), "invalid Content-Length");
  EXPECT_EQ(HttpError(line + "Content-Length: 1234567890123456789\r\n\r\n"),
            "invalid Content-Length");
  EXPECT_EQ(HttpError(line + "Transfer-Encoding: gzip, chunked\r\n\r\n"),
            "unsupported Transfer-Encoding (only a single \"chunked\")");
  EXPECT_EQ(HttpError(line + "Transfer-Encoding: chunked, identity\r\n\r\n"),
            "unsupported Transfer-Encoding (only a single \"chunked\")");
  EXPECT_EQ(HttpError(line + "Transfer-Encoding: xchunked\r\n\r\n"),
            "unsupported Transfer-Encoding (only a single \"chunked\")");
  EXPECT_EQ(HttpError(line + "Transfer-Encoding: chunked\r\nTransfer-Encoding: chunked\r\n\r\n"),
            "more than one Transfer-Encoding header");
  EXPECT_EQ(HttpError("POST http://a.example/ HTTP/1.0\r\nTransfer-Encoding: chunked\r\n\r\n"),
            "Transfer-Encoding in an HTTP/1.0 request");
  EXPECT_EQ(HttpError(line + "Host: a\r\nHost: b\r\n\r\n"), "more than one Host header");
  EXPECT_EQ(HttpError(line + "Connection: close, Content-Length\r\nContent-Length: 1\r\n\r\n"),
            "Connection header names Host, Content-Length or Transfer-Encoding");
  EXPECT_EQ(HttpError(line + "Connection: transfer-encoding\r\n\r\n"),
            "Connection header names Host, Content-Length or Transfer-Encoding");
  EXPECT_EQ(HttpError(line + "Connection: a b\r\n\r\n"), "malformed Connection header");

  // Accepted framing: chunked alone (any case), identical Content-Length repeated.
  HttpParse p = Http(line + "Transfer-Encoding:  Chunked \r\n\r\n");
  ASSERT_EQ(p.status, ParseStatus::kDone) << p.error;
  EXPECT_TRUE(p.head.chunked);
  EXPECT_EQ(p.head.content_length, 0U);
  EXPECT_NE(p.head.forward_head.find("\r\nTransfer-Encoding: Chunked\r\n"), std::string::npos);
  p = Http(line + "Content-Length: 7\r\ncontent-length: 7\r\n\r\n");
  ASSERT_EQ(p.status, ParseStatus::kDone) << p.error;
  EXPECT_EQ(p.head.content_length, 7U);
}

TEST(NetHttpParseTest, IncompleteUntilTheBlankLine) {
  EXPECT_EQ(Http("").status, ParseStatus::kIncomplete);
  EXPECT_EQ(Http("GET http://a.example/ HTTP/1.1").status, ParseStatus::kIncomplete);
  EXPECT_EQ(Http("GET http://a.example/ HTTP/1.1\r\n").status, ParseStatus::kIncomplete);
  EXPECT_EQ(Http("GET http://a.example/ HTTP/1.1\r\nA: 1\r\n\r").status, ParseStatus::kIncomplete);
  // A bad byte is refused at once, before the head is complete.
  EXPECT_EQ(Http("GET http://a.example/ HTTP/1.1\r\nA: \0"s).status, ParseStatus::kInvalid);
  EXPECT_EQ(Http("GET http://a.example/ HTTP/1.1\r\nA: 1\rX").status, ParseStatus::kInvalid);
}

TEST(NetHttpParseTest, ByteByByteFeedingGivesTheSameAnswer) {
  const std::string line = "GET http://a.example/p HTTP/1.1\r\n";
  for (const std::string& input : {
           line + "Host: x\r\nProxy-Connection: close\r\n\r\nbody",
           "CONNECT [::1]:443 HTTP/1.1\r\n\r\n"s,
           "CONNECT a.example:443 HTTP/1.1\r\nHost: a\r\n\r\n\x16\x03\x01"s,
           line + "A: 1\n\r\n",
           line + "A: 1\rB\r\n\r\n",
           line + "A: 1\r\n b\r\n\r\n",
           line + "Content-Length: 1\r\nTransfer-Encoding: chunked\r\n\r\n",
           line + "A: 1\0\r\n\r\n"s,
           "GET https://a.example/ HTTP/1.1\r\n\r\n"s,
           "GET /x HTTP/1.1\r\n\r\n"s,
           "\r\n\r\n"s,
           "\n"s,
           line + std::string(kMaxHttpHead, 'a'),
       }) {
    ExpectSameIncrementally(input);
  }
}

TEST(NetHttpParseTest, HeadSizeLimit) {
  const std::string start = "GET http://a.example/ HTTP/1.1\r\nX: ";
  const std::string end = "\r\n\r\n";
  // Exactly kMaxHttpHead bytes: accepted.
  const std::string fits = start + std::string(kMaxHttpHead - start.size() - end.size(), 'v') + end;
  ASSERT_EQ(fits.size(), kMaxHttpHead);
  HttpParse p = Http(fits + "tail");
  ASSERT_EQ(p.status, ParseStatus::kDone) << p.error;
  EXPECT_EQ(p.head.consumed, kMaxHttpHead);
  // One byte more: refused, whether it arrives whole or still incomplete.
  const std::string over =
      start + std::string(kMaxHttpHead - start.size() - end.size() + 1, 'v') + end;
  ASSERT_EQ(over.size(), kMaxHttpHead + 1);
  EXPECT_EQ(HttpError(over), "request head too large");
  EXPECT_EQ(HttpError(over.substr(0, kMaxHttpHead)), "request head too large");
  EXPECT_EQ(Http(over.substr(0, kMaxHttpHead - 1)).status, ParseStatus::kIncomplete);
  EXPECT_EQ(HttpError(std::string(1 << 20, 'A')), "request head too large");
}

TEST(NetHttpParseTest, HeaderCountLimit) {
  std::string request = "GET http://a.example/ HTTP/1.1\r\n";
  for (size_t i = 0; i < kMaxHttpHeaders; ++i) request += "X-" + std::to_string(i) + ": v\r\n";
  HttpParse p = Http(request + "\r\n");
  ASSERT_EQ(p.status, ParseStatus::kDone) << p.error;
  EXPECT_EQ(HttpError(request + "X-last: v\r\n\r\n"), "too many headers");
}

TEST(NetHttpErrorResponseTest, FormatsAPlainTextResponse) {
  EXPECT_EQ(HttpErrorResponse(403, "Forbidden", "denied by policy\n"),
            "HTTP/1.1 403 Forbidden\r\nContent-Type: text/plain; charset=utf-8\r\n"
            "Content-Length: 17\r\nConnection: close\r\n\r\ndenied by policy\n");
  EXPECT_EQ(HttpErrorResponse(400, "Bad\r\nSet-Cookie: x", ""),
            "HTTP/1.1 400 Bad  Set-Cookie: x\r\nContent-Type: text/plain; charset=utf-8\r\n"
            "Content-Length: 0\r\nConnection: close\r\n\r\n");
}

// ---- SOCKS5 -------------------------------------------------------------------------------

TEST(NetSocks5Test, Greeting) {
  Socks5Greeting g = ParseSocks5Greeting("\x05\x01\x00"s);
  EXPECT_EQ(g.status, ParseStatus::kDone);
  EXPECT_TRUE(g.no_auth_offered);
  EXPECT_EQ(g.consumed, 3U);
  g = ParseSocks5Greeting("\x05\x02\x02\x00\x05\x01"s);  // request bytes may follow
  EXPECT_EQ(g.status, ParseStatus::kDone);
  EXPECT_TRUE(g.no_auth_offered);
  EXPECT_EQ(g.consumed, 4U);
  g = ParseSocks5Greeting("\x05\x01\x02"s);
  EXPECT_EQ(g.status, ParseStatus::kDone);
  EXPECT_FALSE(g.no_auth_offered);
  EXPECT_EQ(ParseSocks5Greeting("").status, ParseStatus::kIncomplete);
  EXPECT_EQ(ParseSocks5Greeting("\x05"s).status, ParseStatus::kIncomplete);
  EXPECT_EQ(ParseSocks5Greeting("\x05\x03\x00\x01"s).status, ParseStatus::kIncomplete);
  EXPECT_EQ(ParseSocks5Greeting("\x04"s).status, ParseStatus::kInvalid);
  EXPECT_EQ(ParseSocks5Greeting("\x05\x00"s).status, ParseStatus::kInvalid);
  EXPECT_EQ(ParseSocks5Greeting("CONNECT a:1 HTTP/1.1\r\n\r\n").status, ParseStatus::kInvalid);
  std::string all(257, '\x01');  // 255 methods, the last one "no authentication"
  all[0] = 5;
  all[1] = static_cast<char>(255);
  all[256] = 0;
  g = ParseSocks5Greeting(all);
  EXPECT_EQ(g.status, ParseStatus::kDone);
  EXPECT_TRUE(g.no_auth_offered);
  EXPECT_EQ(g.consumed, 257U);
}

Socks5Request Socks(const std::string& bytes) { return ParseSocks5Request(bytes); }

TEST(NetSocks5Test, ConnectRequests) {
  Socks5Request r = Socks("\x05\x01\x00\x01\x5d\xb8\xd8\x22\x01\xbb"s);
  ASSERT_EQ(r.status, ParseStatus::kDone) << r.error;
  EXPECT_EQ(r.command, 1);
  EXPECT_EQ(r.host, "93.184.216.34");
  EXPECT_EQ(r.port, 443);
  EXPECT_EQ(r.consumed, 10U);

  r = Socks("\x05\x01\x00\x04"s + "\x20\x01\x0d\xb8"s + std::string(11, '\0') + "\x01" +
            "\x00\x50"s + "tail");
  ASSERT_EQ(r.status, ParseStatus::kDone) << r.error;
  EXPECT_EQ(r.host, "2001:db8::1");
  EXPECT_EQ(r.port, 80);
  EXPECT_EQ(r.consumed, 22U);

  r = Socks("\x05\x01\x00\x03\x09PyPI.org.\x01\xbb"s);
  ASSERT_EQ(r.status, ParseStatus::kDone) << r.error;
  EXPECT_EQ(r.host, "pypi.org");
  EXPECT_EQ(r.port, 443);
  EXPECT_EQ(r.consumed, 4U + 1 + 9 + 2);

  r = Socks("\x05\x01\x00\x03\x05\x31\x32\x37\x2e\x31\x00\x16"s);  // "127.1": an IP literal
  ASSERT_EQ(r.status, ParseStatus::kDone) << r.error;
  EXPECT_EQ(r.host, "127.0.0.1");
  EXPECT_EQ(r.port, 22);

  r = Socks("\x05\x01\x00\x03\x05[::1]\x00\x16"s);
  ASSERT_EQ(r.status, ParseStatus::kDone) << r.error;
  EXPECT_EQ(r.host, "::1");
}

TEST(NetSocks5Test, RefusedRequestsCarryTheirReplyCode) {
  const auto expect = [](const std::string& bytes, uint8_t code, std::string_view error) {
    const Socks5Request r = ParseSocks5Request(bytes);
    EXPECT_EQ(r.status, ParseStatus::kInvalid) << error;
    EXPECT_EQ(r.reply_code, code) << error;
    EXPECT_EQ(r.error, error);
  };
  expect("\x05\x02\x00\x01\x7f\x00\x00\x01\x00\x50"s, 0x07,
         "only the CONNECT command is supported");
  expect("\x05\x03\x00\x01\x7f\x00\x00\x01\x00\x50"s, 0x07,
         "only the CONNECT command is supported");
  expect("\x05\x09"s, 0x07, "only the CONNECT command is supported");
  expect("\x05\x01\x00\x02"s, 0x08, "unknown address type");
  expect("\x05\x01\x00\x05"s, 0x08, "unknown address type");
  expect("\x04\x01\x00\x50\x7f\x00\x00\x01\x00"s, 0x01, "unsupported SOCKS version");
  expect("\x05\x01\x01\x01"s, 0x01, "reserved byte is not 0");
  expect("\x05\x01\x00\x03\x00\x00\x50"s, 0x01, "empty host name");
  expect(
      "\x05\x01\x00\x03\x05"
      "a\0.co\x00\x50"s,
      0x01, "NUL in host name");
  expect(
      "\x05\x01\x00\x03\x05"
      "a_b.c\x00\x50"s,
      0x01, "invalid host: underscore in host name");
  expect(
      "\x05\x01\x00\x03\x04"
      "\xc3\xa9.c\x00\x50"s,
      0x01, "invalid host: host is not ASCII; send the IDNA A-label (xn--...)");
  expect("\x05\x01\x00\x01\x7f\x00\x00\x01\x00\x00"s, 0x01, "port 0");
}

TEST(NetSocks5Test, IncompleteAndByteByByte) {
  for (const std::string& bytes : {
           "\x05\x01\x00\x01\x5d\xb8\xd8\x22\x01\xbb"s,
           "\x05\x01\x00\x03\x09PyPI.org.\x01\xbb"s,
           "\x05\x01\x00\x04"s + std::string(15, '\0') + "\x01\x00\x50"s,
           "\x05\x02\x00\x01"s,
           "\x05\x01\x00\x03\x05"
           "a\0.co\x00\x50"s,
           "\x05\x01\x00\x01\x7f\x00\x00\x01\x00\x00"s,
       }) {
    const Socks5Request whole = ParseSocks5Request(bytes);
    ASSERT_NE(whole.status, ParseStatus::kIncomplete);
    for (size_t n = 0; n <= bytes.size(); ++n) {
      const Socks5Request part = ParseSocks5Request(std::string_view(bytes).substr(0, n));
      if (part.status == ParseStatus::kIncomplete) continue;
      EXPECT_EQ(part.status, whole.status);
      EXPECT_EQ(part.error, whole.error);
      EXPECT_EQ(part.reply_code, whole.reply_code);
      EXPECT_EQ(part.host, whole.host);
      EXPECT_EQ(part.consumed, whole.consumed);
      break;
    }
  }
  EXPECT_EQ(ParseSocks5Request("").status, ParseStatus::kIncomplete);
  EXPECT_EQ(ParseSocks5Request("\x05\x01\x00\x03"s).status, ParseStatus::kIncomplete);
  EXPECT_EQ(ParseSocks5Request("\x05\x01\x00\x03\x04"
                               "abcd\x00"s)
                .status,
            ParseStatus::kIncomplete);
}

TEST(NetSocks5Test, Reply) {
  EXPECT_EQ(Socks5Reply(0x00), "\x05\x00\x00\x01\x00\x00\x00\x00\x00\x00"s);
  EXPECT_EQ(Socks5Reply(kSocks5NotAllowed), "\x05\x02\x00\x01\x00\x00\x00\x00\x00\x00"s);
}

}  // namespace
}  // namespace agentbox::net
