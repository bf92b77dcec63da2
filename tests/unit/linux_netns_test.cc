// The network helper's hand-over (SEC-31): the namespace fd, or the errno, reaches pid 1.
#include <fcntl.h>
#include <gtest/gtest.h>
#include <linux/nsfs.h>
#include <sched.h>
#include <sys/ioctl.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>

#include "linux/netns.h"

namespace agentbox {
namespace {

struct Channel {
  int send = -1;
  int receive = -1;
  Channel() {
    int sv[2];
    if (::socketpair(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0, sv) == 0) {
      receive = sv[0];
      send = sv[1];
    }
  }
  ~Channel() {
    if (send >= 0) ::close(send);
    if (receive >= 0) ::close(receive);
  }
};

ino_t Inode(int fd) {
  struct stat st {};
  return ::fstat(fd, &st) == 0 ? st.st_ino : 0;
}

TEST(NetnsHandOver, HelperSendsAFreshNamespaceWithLoopbackUp) {
  Channel ch;
  ASSERT_GE(ch.send, 0);
  const pid_t pid = ::fork();
  ASSERT_GE(pid, 0);
  if (pid == 0) {
    // As the helper: its own user namespace (so this also runs unprivileged) and netns.
    int err = ::unshare(CLONE_NEWUSER | CLONE_NEWNET) == 0 ? 0 : errno;
    if (err == 0) err = BringUpLoopbackInChild();
    ::_exit(SendOwnNetnsInChild(ch.send, err) == 0 ? err : 100);
  }
  int status = 0;
  ASSERT_EQ(::waitpid(pid, &status, 0), pid);
  ASSERT_TRUE(WIFEXITED(status));
  ASSERT_EQ(WEXITSTATUS(status), 0) << "the helper failed with errno " << WEXITSTATUS(status);

  int netns = -1;
  ASSERT_EQ(ReceiveNetnsInChild(ch.receive, &netns), 0);
  ASSERT_GE(netns, 0);
  EXPECT_EQ(::ioctl(netns, NS_GET_NSTYPE), CLONE_NEWNET);
  EXPECT_NE(::fcntl(netns, F_GETFD) & FD_CLOEXEC, 0);
  const int own = ::open("/proc/self/ns/net", O_RDONLY | O_CLOEXEC);
  ASSERT_GE(own, 0);
  EXPECT_NE(Inode(netns), Inode(own));  // not ours: the helper's, alive through the fd
  ::close(own);
  ::close(netns);
}

TEST(NetnsHandOver, TheHelpersErrnoIsWhatPid1Gets) {
  Channel ch;
  ASSERT_GE(ch.send, 0);
  ASSERT_EQ(SendOwnNetnsInChild(ch.send, EPERM), 0);
  int netns = -1;
  EXPECT_EQ(ReceiveNetnsInChild(ch.receive, &netns), EPERM);
  EXPECT_EQ(netns, -1);
}

TEST(NetnsHandOver, AHelperThatDiesSilentlyIsAnError) {
  Channel ch;
  ASSERT_GE(ch.send, 0);
  ::close(ch.send);
  ch.send = -1;
  int netns = -1;
  EXPECT_EQ(ReceiveNetnsInChild(ch.receive, &netns), ECHILD);
  EXPECT_EQ(netns, -1);
}

}  // namespace
}  // namespace agentbox
