// Fuzz target for the egress proxy's parsers (net/proxy_protocol.h, net/address.h): the bytes
// that sandboxed code sends to the proxy, which runs unsandboxed in the supervisor.
//
// The first byte picks what the rest is fed to: 0 the HTTP request head parser, 1 the SOCKS5
// greeting then request, 2 NormalizeHost, 3 the address parsers. Properties checked, beyond
// "no crash, no leak, no UB":
// - consumed <= size; a kDone head re-parses identically from its own bytes and is
//   incomplete one byte short; any prefix that is not kIncomplete gives the answer of the
//   whole buffer (incremental feeding cannot change the verdict);
// - every host that comes out is normalized (NormalizeHost(host) == host), every port != 0;
// - forward_head is CRLF-only (no bare CR or LF), free of control bytes, starts with an
//   origin-form request line, has exactly one Host line, no "Proxy-*", Connection, TE,
//   Keep-Alive, Upgrade or Trailer header but the final "Connection: close";
// - a refused SOCKS5 request carries reply code 1, 7 or 8;
// - ParseIpLiteral agrees with the C library (inet_aton for IPv4, inet_pton for IPv6) on every
//   input without whitespace; FormatIp / ParseIpLiteral and FormatCidr / ParseCidr round-trip;
//   an IPv4-mapped address is special iff its IPv4 address is.
#include <arpa/inet.h>

#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <cstring>
#include <string>
#include <string_view>

#include "net/address.h"
#include "net/proxy_protocol.h"

namespace {

using agentbox::net::ParseStatus;
namespace net = agentbox::net;

void Check(bool ok, const char* what) {
  if (ok) return;
  std::fprintf(stderr, "property violated: %s\n", what);
  __builtin_trap();
}

char Lower(char c) { return (c >= 'A' && c <= 'Z') ? static_cast<char>(c - 'A' + 'a') : c; }

bool StartsWithIgnoreCase(std::string_view s, std::string_view prefix) {
  if (s.size() < prefix.size()) return false;
  for (size_t i = 0; i < prefix.size(); ++i) {
    if (Lower(s[i]) != Lower(prefix[i])) return false;
  }
  return true;
}

void CheckNormalized(const std::string& host) {
  auto again = net::NormalizeHost(host);
  Check(again.ok() && *again == host, "host is not normalized");
  Check(!host.empty() && host.size() <= 253, "host length");
}

bool SameHead(const net::HttpParse& a, const net::HttpParse& b) {
  return a.status == b.status && a.error == b.error && a.head.method == b.head.method &&
         a.head.is_connect == b.head.is_connect && a.head.host == b.head.host &&
         a.head.port == b.head.port && a.head.forward_head == b.head.forward_head &&
         a.head.consumed == b.head.consumed && a.head.content_length == b.head.content_length &&
         a.head.chunked == b.head.chunked;
}

void CheckForwardHead(const net::HttpRequestHead& head) {
  const std::string& f = head.forward_head;
  Check(f.size() >= 4 && f.compare(f.size() - 4, 4, "\r\n\r\n") == 0, "forward_head end");
  for (size_t i = 0; i < f.size(); ++i) {
    const auto c = static_cast<unsigned char>(f[i]);
    if (c == '\r') Check(i + 1 < f.size() && f[i + 1] == '\n', "bare CR in forward_head");
    if (c == '\n') Check(i > 0 && f[i - 1] == '\r', "bare LF in forward_head");
    Check(c == '\r' || c == '\n' || c == '\t' || (c >= 0x20 && c != 0x7f),
          "control byte in forward_head");
  }
  Check(f.compare(0, head.method.size() + 2, head.method + " /") == 0,
        "forward request line is not origin-form");
  size_t hosts = 0;
  size_t connections = 0;
  size_t pos = f.find("\r\n") + 2;
  while (pos < f.size()) {
    const size_t end = f.find("\r\n", pos);
    const std::string_view line(f.data() + pos, end - pos);
    pos = end + 2;
    if (line.empty()) {
      Check(pos == f.size(), "blank line inside forward_head");
      break;
    }
    Check(line[0] != ' ' && line[0] != '\t', "folded line in forward_head");
    Check(!StartsWithIgnoreCase(line, "proxy-"), "Proxy-* header forwarded");
    for (const char* hop : {"te:", "keep-alive:", "upgrade:", "trailer:"}) {
      Check(!StartsWithIgnoreCase(line, hop), "hop-by-hop header forwarded");
    }
    if (StartsWithIgnoreCase(line, "host:")) ++hosts;
    if (StartsWithIgnoreCase(line, "connection:")) {
      ++connections;
      Check(line == "Connection: close", "Connection header forwarded");
    }
  }
  Check(hosts == 1 && connections == 1, "Host / Connection count in forward_head");
}

void FuzzHttp(std::string_view in) {
  const net::HttpParse whole = net::ParseHttpRequestHead(in);
  switch (whole.status) {
    case ParseStatus::kIncomplete:
      Check(in.size() < net::kMaxHttpHead, "incomplete beyond the size limit");
      break;
    case ParseStatus::kInvalid:
      Check(!whole.error.empty(), "invalid without an error");
      break;
    case ParseStatus::kDone: {
      const auto& head = whole.head;
      Check(head.consumed <= in.size() && head.consumed <= net::kMaxHttpHead, "consumed");
      Check(head.consumed >= 4 && in.substr(head.consumed - 4, 4) == "\r\n\r\n", "head end");
      Check(SameHead(net::ParseHttpRequestHead(in.substr(0, head.consumed)), whole),
            "kDone does not re-parse identically");
      Check(net::ParseHttpRequestHead(in.substr(0, head.consumed - 1)).status ==
                ParseStatus::kIncomplete,
            "kDone before the blank line");
      CheckNormalized(head.host);
      Check(head.port != 0, "port 0");
      Check(head.is_connect == (head.method == "CONNECT"), "is_connect");
      Check(!(head.chunked && head.content_length != 0), "chunked with a length");
      if (head.is_connect) {
        Check(head.forward_head.empty(), "CONNECT with a forward_head");
      } else {
        CheckForwardHead(head);
      }
      break;
    }
  }
  // Incremental feeding: a verdict on a prefix is the verdict on the whole.
  for (const size_t n : {in.size() / 2, in.size() / 3, in.size() > 0 ? in.size() - 1 : 0}) {
    const net::HttpParse part = net::ParseHttpRequestHead(in.substr(0, n));
    if (part.status != ParseStatus::kIncomplete) {
      Check(SameHead(part, whole), "a prefix's verdict differs from the whole buffer's");
    }
  }
}

void FuzzSocks(std::string_view in) {
  const net::Socks5Greeting g = net::ParseSocks5Greeting(in);
  if (g.status != ParseStatus::kDone) {
    Check(g.status == ParseStatus::kInvalid || in.size() < 257, "greeting incomplete");
    // The same bytes as a request: exercises the request parser from byte 0.
  } else {
    Check(g.consumed <= in.size() && g.consumed == size_t{2} + static_cast<uint8_t>(in[1]),
          "greeting consumed");
    in.remove_prefix(g.consumed);
  }
  const net::Socks5Request r = net::ParseSocks5Request(in);
  if (r.status == ParseStatus::kDone) {
    Check(r.consumed <= in.size() && r.consumed <= 4 + 256 + 2, "request consumed");
    Check(r.command == 1 && r.port != 0, "request fields");
    CheckNormalized(r.host);
    const net::Socks5Request again = net::ParseSocks5Request(in.substr(0, r.consumed));
    Check(again.status == ParseStatus::kDone && again.host == r.host && again.port == r.port &&
              again.consumed == r.consumed,
          "SOCKS5 request does not re-parse identically");
    Check(net::ParseSocks5Request(in.substr(0, r.consumed - 1)).status == ParseStatus::kIncomplete,
          "SOCKS5 request done early");
  } else if (r.status == ParseStatus::kInvalid) {
    Check(r.reply_code == 1 || r.reply_code == 7 || r.reply_code == 8, "reply code");
    Check(!r.error.empty(), "invalid without an error");
  }
  for (const size_t n : {in.size() / 2, in.size() > 0 ? in.size() - 1 : 0}) {
    const net::Socks5Request part = net::ParseSocks5Request(in.substr(0, n));
    if (part.status != ParseStatus::kIncomplete) {
      Check(part.status == r.status && part.error == r.error && part.host == r.host &&
                part.reply_code == r.reply_code,
            "a SOCKS5 prefix's verdict differs");
    }
  }
  Check(net::Socks5Reply(r.reply_code).size() == 10, "reply size");
}

void FuzzHost(std::string_view in) {
  auto host = net::NormalizeHost(in);
  if (!host.ok()) return;
  CheckNormalized(*host);
  if (auto ip = net::ParseIpLiteral(*host)) {
    Check(net::FormatIp(*ip) == *host, "IP literal not in FormatIp form");
  } else {
    for (const char c : *host) {
      Check((c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') || c == '-' || c == '.',
            "name is not LDH");
    }
  }
}

bool HasSpaceOrNul(std::string_view s) {
  for (const char c : s) {
    if (c == '\0' || c == ' ' || (c >= '\t' && c <= '\r')) return true;
  }
  return false;
}

void FuzzAddress(std::string_view in) {
  const auto ip = net::ParseIpLiteral(in);
  if (in.size() < 128 && !HasSpaceOrNul(in)) {
    const std::string text(in);
    if (text.find(':') == std::string::npos && text.find('[') == std::string::npos) {
      in_addr libc{};
      const bool accepted = ::inet_aton(text.c_str(), &libc) == 1;
      Check(accepted == ip.has_value(), "ParseIpLiteral and inet_aton disagree");
      if (accepted) {
        Check(ip->family == AF_INET && std::memcmp(&libc, ip->bytes.data(), 4) == 0,
              "ParseIpLiteral and inet_aton differ");
      }
    } else if (text.find('[') == std::string::npos) {
      in6_addr libc{};
      const bool accepted = ::inet_pton(AF_INET6, text.c_str(), &libc) == 1;
      Check(accepted == ip.has_value(), "ParseIpLiteral and inet_pton disagree");
    }
  }
  if (ip) {
    Check(net::ParseIpLiteral(net::FormatIp(*ip)) == ip, "FormatIp round trip");
    socklen_t len = 0;
    const sockaddr_storage sa = net::ToSockaddr(*ip, 1, &len);
    Check(net::FromSockaddr(reinterpret_cast<const sockaddr*>(&sa)) == *ip, "sockaddr");
    (void)net::SpecialRange(*ip);
  }
  if (auto cidr = net::ParseCidr(in); cidr.ok()) {
    auto again = net::ParseCidr(net::FormatCidr(*cidr));
    Check(again.ok() && *again == *cidr, "FormatCidr round trip");
    Check(net::CidrContains(*cidr, cidr->base) && net::CidrCovers(*cidr, *cidr), "CIDR self");
  }
  // Raw bytes as addresses: a mapped address is special iff its IPv4 address is.
  if (in.size() >= 4) {
    net::IpAddress v4;
    v4.family = AF_INET;
    std::memcpy(v4.bytes.data(), in.data(), 4);
    net::IpAddress mapped;
    mapped.family = AF_INET6;
    mapped.bytes[10] = 0xff;
    mapped.bytes[11] = 0xff;
    std::memcpy(mapped.bytes.data() + 12, in.data(), 4);
    Check((net::SpecialRange(v4) == nullptr) == (net::SpecialRange(mapped) == nullptr),
          "mapped and plain IPv4 judged differently");
  }
  if (in.size() >= 16) {
    net::IpAddress v6;
    v6.family = AF_INET6;
    std::memcpy(v6.bytes.data(), in.data(), 16);
    (void)net::SpecialRange(v6);
    Check(net::ParseIpLiteral(net::FormatIp(v6)) == v6, "raw IPv6 FormatIp round trip");
  }
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  if (size == 0) return 0;
  const std::string_view in(reinterpret_cast<const char*>(data) + 1, size - 1);
  switch (data[0] % 4) {
    case 0:
      FuzzHttp(in);
      break;
    case 1:
      FuzzSocks(in);
      break;
    case 2:
      FuzzHost(in);
      break;
    default:
      FuzzAddress(in);
      break;
  }
  return 0;
}
