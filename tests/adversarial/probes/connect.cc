// connect tcp IPV4 PORT | connect abstract NAME: connects a stream socket and prints "OK"
// (after sending "hello from probe\n") or the errno's name of the failing call.
// NAME is an abstract unix socket name without the leading NUL.
#include <arpa/inet.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <unistd.h>

#include <cerrno>
#include <cstddef>
#include <cstdio>
#include <cstdlib>
#include <cstring>

namespace {

int Fail(const char* what) {
  std::printf("%s\n", strerrorname_np(errno));
  std::fprintf(stderr, "connect probe: %s: %s\n", what, std::strerror(errno));
  return 0;
}

int Finish(int fd) {
  const char msg[] = "hello from probe\n";
  if (write(fd, msg, sizeof(msg) - 1) < 0) return Fail("write");
  std::printf("OK\n");
  close(fd);
  return 0;
}

int Tcp(const char* host, const char* port) {
  sockaddr_in addr{};
  addr.sin_family = AF_INET;
  addr.sin_port = htons(static_cast<uint16_t>(std::atoi(port)));
  if (inet_pton(AF_INET, host, &addr.sin_addr) != 1) {
    std::fprintf(stderr, "connect probe: bad address %s\n", host);
    return 2;
  }
  const int fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
  if (fd < 0) return Fail("socket");
  if (connect(fd, reinterpret_cast<const sockaddr*>(&addr), sizeof(addr)) != 0) {
    return Fail("connect");
  }
  return Finish(fd);
}

int Abstract(const char* name) {
  sockaddr_un addr{};
  addr.sun_family = AF_UNIX;
  const size_t len = std::strlen(name);
  if (len + 1 > sizeof(addr.sun_path)) {
    std::fprintf(stderr, "connect probe: name too long\n");
    return 2;
  }
  std::memcpy(addr.sun_path + 1, name, len);  // sun_path[0] == '\0': abstract namespace
  const int fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
  if (fd < 0) return Fail("socket");
  const auto addr_len = static_cast<socklen_t>(offsetof(sockaddr_un, sun_path) + 1 + len);
  if (connect(fd, reinterpret_cast<const sockaddr*>(&addr), addr_len) != 0) {
    return Fail("connect");
  }
  return Finish(fd);
}

}  // namespace

int main(int argc, char** argv) {
  if (argc == 4 && std::strcmp(argv[1], "tcp") == 0) return Tcp(argv[2], argv[3]);
  if (argc == 3 && std::strcmp(argv[1], "abstract") == 0) return Abstract(argv[2]);
  std::fprintf(stderr, "usage: connect tcp IPV4 PORT | connect abstract NAME\n");
  return 2;
}
