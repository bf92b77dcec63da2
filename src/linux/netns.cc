#include "linux/netns.h"

#include <linux/sockios.h>
#include <net/if.h>
#include <netinet/in.h>
#include <sys/ioctl.h>
#include <sys/socket.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>

namespace agentbox {
namespace {

constexpr int kMaxFds = 4;

// One message: `len` bytes of data, `count` fds (0..kMaxFds) as SCM_RIGHTS.
int SendWithFds(int channel_fd, void* data, size_t len, const int* fds, int count) {
  iovec iov{data, len};
  alignas(cmsghdr) char control[CMSG_SPACE(sizeof(int) * kMaxFds)] = {};
  msghdr msg{};
  msg.msg_iov = &iov;
  msg.msg_iovlen = 1;
  if (count > 0) {
    const size_t bytes = sizeof(int) * static_cast<size_t>(count);
    msg.msg_control = control;
    msg.msg_controllen = CMSG_SPACE(bytes);
    cmsghdr* cmsg = CMSG_FIRSTHDR(&msg);
    cmsg->cmsg_level = SOL_SOCKET;
    cmsg->cmsg_type = SCM_RIGHTS;
    cmsg->cmsg_len = CMSG_LEN(bytes);
    std::memcpy(CMSG_DATA(cmsg), fds, bytes);
  }
  return ::sendmsg(channel_fd, &msg, MSG_NOSIGNAL) == static_cast<ssize_t>(len) ? 0 : errno;
}

}  // namespace

int BringUpLoopbackInChild() noexcept {
  const int fd = ::socket(AF_INET, SOCK_DGRAM | SOCK_CLOEXEC, 0);
  if (fd < 0) return errno;
  ifreq req{};
  req.ifr_name[0] = 'l';
  req.ifr_name[1] = 'o';
  int err = 0;
  if (::ioctl(fd, SIOCGIFFLAGS, &req) != 0) {
    err = errno;
  } else {
    req.ifr_flags = static_cast<short>(req.ifr_flags | IFF_UP | IFF_RUNNING);
    if (::ioctl(fd, SIOCSIFFLAGS, &req) != 0) err = errno;
  }
  ::close(fd);
  return err;
}

int HandOverListenersInChild(int channel_fd, const uint16_t* ports, int count) noexcept {
  if (count <= 0 || count > kMaxFds) return EINVAL;
  int fds[kMaxFds];
  int opened = 0;
  int err = 0;
  for (; opened < count; ++opened) {
    const int fd = ::socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
    if (fd < 0) {
      err = errno;
      break;
    }
    fds[opened] = fd;
    sockaddr_in addr{};
    addr.sin_family = AF_INET;
    addr.sin_port = htons(ports[opened]);
    addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    if (::bind(fd, reinterpret_cast<const sockaddr*>(&addr), sizeof(addr)) != 0 ||
        ::listen(fd, 128) != 0) {
      err = errno;
      ++opened;
      break;
    }
  }
  char byte = 'L';
  if (err == 0) err = SendWithFds(channel_fd, &byte, 1, fds, count);
  for (int i = 0; i < opened; ++i) ::close(fds[i]);
  ::close(channel_fd);
  return err;
}

int SendOwnNetnsInChild(int channel_fd, int err) noexcept {
  int netns = -1;
  if (err == 0) {
    const int sock = ::socket(AF_UNIX, SOCK_DGRAM | SOCK_CLOEXEC, 0);
    if (sock < 0) {
      err = errno;
    } else {
      netns = ::ioctl(sock, SIOCGSKNS);
      if (netns < 0) err = errno;
      ::close(sock);
    }
  }
  int32_t payload = err;
  const int sent = SendWithFds(channel_fd, &payload, sizeof(payload), &netns, err == 0 ? 1 : 0);
  if (netns >= 0) ::close(netns);
  return sent;
}

int ReceiveNetnsInChild(int channel_fd, int* netns_fd) noexcept {
  int32_t err = 0;
  iovec iov{&err, sizeof(err)};
  alignas(cmsghdr) char control[CMSG_SPACE(sizeof(int))] = {};
  msghdr msg{};
  msg.msg_iov = &iov;
  msg.msg_iovlen = 1;
  msg.msg_control = control;
  msg.msg_controllen = sizeof(control);
  ssize_t n;
  do {
    n = ::recvmsg(channel_fd, &msg, MSG_CMSG_CLOEXEC);
  } while (n < 0 && errno == EINTR);
  if (n < 0) return errno;
  if (n != sizeof(err)) return ECHILD;
  const cmsghdr* cmsg = CMSG_FIRSTHDR(&msg);
  const bool has_fd = cmsg != nullptr && cmsg->cmsg_level == SOL_SOCKET &&
                      cmsg->cmsg_type == SCM_RIGHTS && cmsg->cmsg_len == CMSG_LEN(sizeof(int));
  if (err != 0) return err;
  if (!has_fd || (msg.msg_flags & MSG_CTRUNC) != 0) return EPROTO;
  std::memcpy(netns_fd, CMSG_DATA(cmsg), sizeof(int));
  return 0;
}

}  // namespace agentbox
