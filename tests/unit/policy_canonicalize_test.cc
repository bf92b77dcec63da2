// SEC-1: canonicalization before comparison.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "fixture_tree.h"
#include "policy/canonicalize.h"

namespace agentbox {
namespace {

using testing::FixtureTree;
using ::testing::HasSubstr;

class CanonicalizeTest : public ::testing::Test {
 protected:
  CanonicalizeTest() {
    tree.Dir("home/proj/src");
    tree.Dir("outside");
    tree.Link("home/proj/out", "../../outside");
    ctx = {tree.Path("home"), tree.Path("home/proj")};
  }
  FixtureTree tree;
  PathContext ctx;
};

TEST_F(CanonicalizeTest, AbsolutePathIsReturnedResolved) {
  EXPECT_EQ(*Canonicalize(tree.Path("home/proj/src"), ctx), tree.Path("home/proj/src"));
}

TEST_F(CanonicalizeTest, TrailingSlashIsFolded) {
  EXPECT_EQ(*Canonicalize(tree.Path("home/proj/src/"), ctx), tree.Path("home/proj/src"));
}

TEST_F(CanonicalizeTest, TildeExpandsToHome) {
  EXPECT_EQ(*Canonicalize("~", ctx), tree.Path("home"));
  EXPECT_EQ(*Canonicalize("~/proj/src", ctx), tree.Path("home/proj/src"));
}

TEST_F(CanonicalizeTest, TildeUserIsRefused) {
  auto r = Canonicalize("~root/x", ctx);
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.error().code, ErrorCode::kPolicy);
  EXPECT_THAT(r.error().Message(), HasSubstr("~root/x"));
}

TEST_F(CanonicalizeTest, TildeWithoutHomeIsRefused) {
  EXPECT_FALSE(Canonicalize("~/x", PathContext{"", ctx.cwd}).ok());
}

TEST_F(CanonicalizeTest, RelativePathUsesBase) {
  EXPECT_EQ(*Canonicalize("src", ctx), tree.Path("home/proj/src"));
}

TEST_F(CanonicalizeTest, RelativePathWithoutBaseIsRefused) {
  auto r = Canonicalize("src", PathContext{ctx.home, ""});
  ASSERT_FALSE(r.ok());
  EXPECT_THAT(r.error().Message(), HasSubstr("relative path"));
  EXPECT_THAT(r.error().Message(), HasSubstr("\"src\""));
}

TEST_F(CanonicalizeTest, DotDotIsFolded) {
  EXPECT_EQ(*Canonicalize(tree.Path("home/proj/src/../../proj"), ctx), tree.Path("home/proj"));
}

TEST_F(CanonicalizeTest, SymlinkIsResolvedToItsTarget) {
  EXPECT_EQ(*Canonicalize("out", ctx), tree.Path("outside"));
}

TEST_F(CanonicalizeTest, NonexistentPathIsAPolicyErrorNamingIt) {
  auto r = Canonicalize("~/nope", ctx);
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.error().code, ErrorCode::kPolicy);
  EXPECT_THAT(r.error().Message(), HasSubstr("~/nope"));
  EXPECT_THAT(r.error().Message(), HasSubstr("does not exist"));
}

TEST_F(CanonicalizeTest, EmptyPathIsRefused) {
  auto r = Canonicalize("", ctx);
  ASSERT_FALSE(r.ok());
  EXPECT_THAT(r.error().Message(), HasSubstr("empty"));
}

TEST_F(CanonicalizeTest, NulByteIsRefused) {
  const std::string with_nul("/tmp\0/etc", 9);
  auto r = Canonicalize(with_nul, ctx);
  ASSERT_FALSE(r.ok());
  EXPECT_THAT(r.error().Message(), HasSubstr("NUL"));
}

TEST_F(CanonicalizeTest, MaybeMissingResolvesTheExistingPrefix) {
  EXPECT_EQ(*CanonicalizeMaybeMissing("~/proj/out/new/file", ctx), tree.Path("outside/new/file"));
  EXPECT_EQ(*CanonicalizeMaybeMissing("~/proj/src", ctx), tree.Path("home/proj/src"));
}

TEST_F(CanonicalizeTest, MaybeMissingRefusesDotDotInTheMissingPart) {
  EXPECT_FALSE(CanonicalizeMaybeMissing("~/proj/missing/../../x", ctx).ok());
}

TEST(IsWithinTest, EqualAndBeneath) {
  EXPECT_TRUE(IsWithin("/tmp", "/tmp"));
  EXPECT_TRUE(IsWithin("/tmp/run-42/out", "/tmp"));
  EXPECT_TRUE(IsWithin("/anything", "/"));
}

TEST(IsWithinTest, PrefixCollisionIsNotBeneath) {
  EXPECT_FALSE(IsWithin("/tmpx", "/tmp"));
  EXPECT_FALSE(IsWithin("/tmp-other/a", "/tmp"));
  EXPECT_FALSE(IsWithin("/tm", "/tmp"));
  EXPECT_FALSE(IsWithin("/", "/tmp"));
}

}  // namespace
}  // namespace agentbox
