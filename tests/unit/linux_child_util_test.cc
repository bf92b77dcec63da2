// child_util: the allocation-free helpers the sandbox's pid 1 uses to build its view.
#include <fcntl.h>
#include <gtest/gtest.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstdlib>
#include <string>

#include "linux/child_util.h"

namespace agentbox {
namespace {

class ChildUtilTest : public ::testing::Test {
 protected:
  void SetUp() override {
    char tmpl[] = "/tmp/agentbox-child-util-XXXXXX";
    ASSERT_NE(mkdtemp(tmpl), nullptr);
    dir_ = tmpl;
  }
  void TearDown() override {
    const std::string cmd = "rm -rf '" + dir_ + "'";
    ASSERT_EQ(std::system(cmd.c_str()), 0);
  }
  static bool IsDir(const std::string& path) {
    struct stat st {};
    return lstat(path.c_str(), &st) == 0 && S_ISDIR(st.st_mode);
  }
  static bool IsFile(const std::string& path) {
    struct stat st {};
    return lstat(path.c_str(), &st) == 0 && S_ISREG(st.st_mode);
  }
  std::string dir_;
};

TEST_F(ChildUtilTest, MakeDirsCreatesEveryMissingComponent) {
  EXPECT_EQ(child::MakeDirs((dir_ + "/a/b/c").c_str(), 0755), 0);
  EXPECT_TRUE(IsDir(dir_ + "/a/b/c"));
  EXPECT_EQ(child::MakeDirs((dir_ + "/a/b/c").c_str(), 0755), 0);   // exists: fine
  EXPECT_EQ(child::MakeDirs((dir_ + "/a/b/d/").c_str(), 0755), 0);  // trailing slash
  EXPECT_TRUE(IsDir(dir_ + "/a/b/d"));
  EXPECT_EQ(child::MakeDirs((dir_ + "/a//e//f").c_str(), 0755), 0);  // doubled slashes
  EXPECT_TRUE(IsDir(dir_ + "/a/e/f"));
  EXPECT_EQ(child::MakeDirs("/", 0755), 0);
}

TEST_F(ChildUtilTest, MakeDirsReportsWhatStopsIt) {
  ASSERT_EQ(child::MakeFile((dir_ + "/file").c_str()), 0);
  EXPECT_EQ(child::MakeDirs((dir_ + "/file/sub/x").c_str(), 0755), ENOTDIR);
  if (geteuid() != 0) {
    ASSERT_EQ(mkdir((dir_ + "/ro").c_str(), 0555), 0);
    EXPECT_EQ(child::MakeDirs((dir_ + "/ro/x/y").c_str(), 0755), EACCES);
  }
}

TEST_F(ChildUtilTest, MakeFileCreatesParentsAndKeepsWhatExists) {
  EXPECT_EQ(child::MakeFile((dir_ + "/p/q/file").c_str()), 0);
  EXPECT_TRUE(IsFile(dir_ + "/p/q/file"));
  EXPECT_EQ(child::MakeFile((dir_ + "/p/q/file").c_str()), 0);
  EXPECT_EQ(child::MakeFile((dir_ + "/p/q").c_str()), 0);  // a directory is left alone
  EXPECT_TRUE(IsDir(dir_ + "/p/q"));
  EXPECT_EQ(child::MakeFile((dir_ + "/p/second").c_str()), 0);
  EXPECT_TRUE(IsFile(dir_ + "/p/second"));
}

}  // namespace
}  // namespace agentbox
