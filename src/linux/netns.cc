#include "linux/netns.h"

#include <net/if.h>
#include <netinet/in.h>
#include <sys/ioctl.h>
#include <sys/socket.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>

namespace agentbox {

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
  constexpr int kMax = 4;
  if (count <= 0 || count > kMax) return EINVAL;
  int fds[kMax];
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
  if (err == 0) {
    char byte = 'L';
    iovec iov{&byte, 1};
    alignas(cmsghdr) char control[CMSG_SPACE(sizeof(int) * kMax)] = {};
    msghdr msg{};
    msg.msg_iov = &iov;
    msg.msg_iovlen = 1;
    msg.msg_control = control;
    msg.msg_controllen = CMSG_SPACE(sizeof(int) * static_cast<size_t>(count));
    cmsghdr* cmsg = CMSG_FIRSTHDR(&msg);
    cmsg->cmsg_level = SOL_SOCKET;
    cmsg->cmsg_type = SCM_RIGHTS;
    cmsg->cmsg_len = CMSG_LEN(sizeof(int) * static_cast<size_t>(count));
    std::memcpy(CMSG_DATA(cmsg), fds, sizeof(int) * static_cast<size_t>(count));
    if (::sendmsg(channel_fd, &msg, MSG_NOSIGNAL) != 1) err = errno;
  }
  for (int i = 0; i < opened; ++i) ::close(fds[i]);
  ::close(channel_fd);
  return err;
}

}  // namespace agentbox
