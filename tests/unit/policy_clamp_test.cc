// SEC-1, SEC-2, SEC-3: the clamp of an agent's request to the operator's ceiling.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "fixture_tree.h"
#include "policy/clamp.h"

namespace agentbox {
namespace {

using ::testing::ElementsAre;
using ::testing::Field;
using testing::FixtureTree;
using ::testing::HasSubstr;
using ::testing::IsEmpty;
using ::testing::UnorderedElementsAre;

class ClampTest : public ::testing::Test {
 protected:
  ClampTest() {
    tree.Dir("home/proj/src");
    tree.Dir("home/proj/vendor");
    tree.Dir("home/proj/secrets/x");
    tree.Dir("home/proj2");
    tree.Dir("home/docs");
    tree.Dir("home/secret");
    tree.Dir("outside");
    tree.Link("home/proj/out", "../../outside");
    tree.Link("home/proj/in", "src");
    ctx = {tree.Path("home"), tree.Path("home/proj")};
  }

  Result<ClampResult> Run(const PolicyDocument& ceiling, const PolicyDocument& request) {
    return Clamp(Ceiling{ceiling}, Request{request}, ctx);
  }
  static PolicyDocument Rw(std::vector<std::string> paths) {
    PolicyDocument d;
    d.filesystem.readwrite = std::move(paths);
    return d;
  }
  static PolicyDocument Ro(std::vector<std::string> paths) {
    PolicyDocument d;
    d.filesystem.readonly = std::move(paths);
    return d;
  }
  std::string P(const std::string& relative) const { return tree.Path(relative); }

  FixtureTree tree;
  PathContext ctx;
};

TEST_F(ClampTest, SubpathOfAGrantIsGrantedAsAsked) {
  auto r = Run(Rw({"~/proj"}), Rw({"~/proj/src"}));
  ASSERT_TRUE(r.ok()) << r.error().Message();
  EXPECT_THAT(r->policy.filesystem.readwrite, ElementsAre(P("home/proj/src")));
  EXPECT_THAT(r->decisions, IsEmpty());
}

TEST_F(ClampTest, TrailingSlashAndTildeNameTheSamePath) {
  auto r = Run(Rw({P("home/proj/")}), Rw({"~/proj/src/"}));
  ASSERT_TRUE(r.ok());
  EXPECT_THAT(r->policy.filesystem.readwrite, ElementsAre(P("home/proj/src")));
}

TEST_F(ClampTest, PrefixCollisionIsOutsideTheCeiling) {
  auto r = Run(Rw({"~/proj"}), Ro({"~/proj2"}));
  ASSERT_TRUE(r.ok());
  EXPECT_THAT(r->policy.filesystem.readonly, IsEmpty());
  ASSERT_EQ(r->decisions.size(), 1U);
  EXPECT_EQ(r->decisions[0].subject, P("home/proj2"));
  EXPECT_EQ(r->decisions[0].granted, "none");
  EXPECT_THAT(r->decisions[0].reason, HasSubstr("outside"));
}

TEST_F(ClampTest, SymlinkInsideAGrantPointingOutIsRefused) {
  auto r = Run(Rw({"~/proj"}), Ro({"~/proj/out"}));
  ASSERT_TRUE(r.ok());
  EXPECT_THAT(r->policy.filesystem.readonly, IsEmpty());
  EXPECT_THAT(r->policy.filesystem.readwrite, IsEmpty());
  ASSERT_EQ(r->decisions.size(), 1U);
  EXPECT_EQ(r->decisions[0].subject, P("outside"));  // reported at its real target
  EXPECT_EQ(r->decisions[0].granted, "none");
}

TEST_F(ClampTest, SymlinkInsideAGrantPointingInsideIsGrantedAtItsTarget) {
  auto r = Run(Rw({"~/proj"}), Rw({"~/proj/in"}));
  ASSERT_TRUE(r.ok());
  EXPECT_THAT(r->policy.filesystem.readwrite, ElementsAre(P("home/proj/src")));
  EXPECT_THAT(r->decisions, IsEmpty());
}

TEST_F(ClampTest, DotDotTraversalOutOfAGrantIsRefused) {
  auto r = Run(Rw({"~/proj"}), Ro({"~/proj/src/../../secret"}));
  ASSERT_TRUE(r.ok());
  EXPECT_THAT(r->policy.filesystem.readonly, IsEmpty());
  ASSERT_EQ(r->decisions.size(), 1U);
  EXPECT_EQ(r->decisions[0].subject, P("home/secret"));
}

TEST_F(ClampTest, ReadWriteUnderAReadOnlyCeilingIsNarrowedToReadOnly) {
  auto r = Run(Ro({"~/docs"}), Rw({"~/docs"}));
  ASSERT_TRUE(r.ok());
  EXPECT_THAT(r->policy.filesystem.readwrite, IsEmpty());
  EXPECT_THAT(r->policy.filesystem.readonly, ElementsAre(P("home/docs")));
  ASSERT_EQ(r->decisions.size(), 1U);
  EXPECT_EQ(r->decisions[0].asked, "readwrite");
  EXPECT_EQ(r->decisions[0].granted, "readonly");
  EXPECT_THAT(r->decisions[0].reason, HasSubstr("read-only"));
}

TEST_F(ClampTest, MoreSpecificCeilingEntriesInsideAGrantAreKept) {
  PolicyDocument ceiling = Rw({"~/proj"});
  ceiling.filesystem.readonly = {"~/proj/vendor"};
  ceiling.filesystem.denied = {"~/proj/secrets"};
  auto r = Run(ceiling, Rw({"~/proj"}));
  ASSERT_TRUE(r.ok());
  EXPECT_THAT(r->policy.filesystem.readwrite, ElementsAre(P("home/proj")));
  EXPECT_THAT(r->policy.filesystem.readonly, ElementsAre(P("home/proj/vendor")));
  EXPECT_THAT(r->policy.filesystem.denied, ElementsAre(P("home/proj/secrets")));
}

TEST_F(ClampTest, RequestBeneathACeilingDenialIsDropped) {
  PolicyDocument ceiling = Rw({"~/proj"});
  ceiling.filesystem.denied = {"~/proj/secrets"};
  auto r = Run(ceiling, Ro({"~/proj/secrets/x"}));
  ASSERT_TRUE(r.ok());
  EXPECT_THAT(r->policy.filesystem.readonly, IsEmpty());
  ASSERT_EQ(r->decisions.size(), 1U);
  EXPECT_THAT(r->decisions[0].reason, HasSubstr("denied by the operator's ceiling"));
}

TEST_F(ClampTest, RequestDenialInsideItsOwnGrantIsKept) {
  PolicyDocument request = Rw({"~/proj"});
  request.filesystem.denied = {"~/proj/secrets", "~/proj/not-there-yet"};
  auto r = Run(Rw({"~/proj"}), request);
  ASSERT_TRUE(r.ok());
  EXPECT_THAT(r->policy.filesystem.denied,
              ElementsAre(P("home/proj/not-there-yet"), P("home/proj/secrets")));
}

TEST_F(ClampTest, DenialOutsideEveryGrantIsPrunedAsItHidesNothing) {
  PolicyDocument request = Rw({"~/proj/src"});
  request.filesystem.denied = {"~/docs"};
  auto r = Run(Rw({"~/proj"}), request);
  ASSERT_TRUE(r.ok());
  EXPECT_THAT(r->policy.filesystem.denied, IsEmpty());
}

TEST_F(ClampTest, OutsideTheCeilingIsDroppedWithADecision) {
  auto r = Run(Rw({"~/proj"}), Rw({"~/docs", "~/proj/src"}));
  ASSERT_TRUE(r.ok());
  EXPECT_THAT(r->policy.filesystem.readwrite, ElementsAre(P("home/proj/src")));
  ASSERT_EQ(r->decisions.size(), 1U);
  EXPECT_EQ(r->decisions[0].subject, P("home/docs"));
  EXPECT_EQ(r->decisions[0].kind, DecisionKind::kPath);
}

TEST_F(ClampTest, SamePathInTwoRequestListsGetsTheMostRestrictive) {
  PolicyDocument request = Rw({"~/proj/src"});
  request.filesystem.readonly = {"~/proj/src"};
  auto r = Run(Rw({"~/proj"}), request);
  ASSERT_TRUE(r.ok());
  EXPECT_THAT(r->policy.filesystem.readwrite, IsEmpty());
  EXPECT_THAT(r->policy.filesystem.readonly, ElementsAre(P("home/proj/src")));
}

TEST_F(ClampTest, NonexistentRequestPathIsAPolicyError) {
  auto r = Run(Rw({"~/proj"}), Ro({"~/proj/missing"}));
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.error().code, ErrorCode::kPolicy);
  EXPECT_THAT(r.error().Message(), HasSubstr("request"));
  EXPECT_THAT(r.error().Message(), HasSubstr("~/proj/missing"));
}

TEST_F(ClampTest, NonexistentCeilingPathIsAPolicyError) {
  auto r = Run(Rw({"~/gone"}), Ro({}));
  ASSERT_FALSE(r.ok());
  EXPECT_THAT(r.error().Message(), HasSubstr("ceiling"));
}

TEST_F(ClampTest, RelativeRequestPathIsResolvedAgainstTheWorkingDirectory) {
  auto r = Run(Rw({"~/proj"}), Ro({"src"}));
  ASSERT_TRUE(r.ok());
  EXPECT_THAT(r->policy.filesystem.readonly, ElementsAre(P("home/proj/src")));
}

TEST_F(ClampTest, RelativeRequestPathWithoutABaseIsAnError) {
  ctx.cwd.clear();
  EXPECT_FALSE(Run(Rw({P("home/proj")}), Ro({"src"})).ok());
}

TEST_F(ClampTest, NulInAPathIsAnError) {
  auto r = Run(Rw({"~/proj"}), Ro({std::string("~/proj\0/src", 11)}));
  ASSERT_FALSE(r.ok());
  EXPECT_THAT(r.error().Message(), HasSubstr("NUL"));
}

TEST_F(ClampTest, WritableRootIsRefusedInRequestAndCeiling) {
  auto in_request = Run(Rw({"~/proj"}), Rw({"/"}));
  ASSERT_FALSE(in_request.ok());
  EXPECT_THAT(in_request.error().Message(), HasSubstr("writable /"));
  auto in_ceiling = Run(Rw({"/"}), Ro({}));
  ASSERT_FALSE(in_ceiling.ok());
  EXPECT_THAT(in_ceiling.error().Message(), HasSubstr("ceiling"));
}

TEST_F(ClampTest, WritableHomeAndItsAncestorsAreRefused) {
  EXPECT_FALSE(Run(Rw({"~/proj"}), Rw({"~"})).ok());
  EXPECT_FALSE(Run(Rw({"~"}), Ro({})).ok());
  EXPECT_FALSE(Run(Rw({P("")}), Ro({})).ok());  // the home's parent
  auto r = Run(Rw({"~/proj"}), Rw({"~/"}));
  ASSERT_FALSE(r.ok());
  EXPECT_THAT(r.error().Message(), HasSubstr("home directory"));
}

TEST_F(ClampTest, ReadOnlyHomeIsAllowed) {
  auto r = Run(Ro({"~"}), Ro({"~"}));
  ASSERT_TRUE(r.ok());
  EXPECT_THAT(r->policy.filesystem.readonly, ElementsAre(P("home")));
}

TEST_F(ClampTest, CredentialsInsideAGrantAreHidden) {
  tree.File("home/.ssh/id_ed25519");
  tree.File("home/.aws/credentials");
  tree.File("home/.git-credentials");
  auto r = Run(Ro({"~"}), Ro({"~"}));
  ASSERT_TRUE(r.ok());
  EXPECT_THAT(r->policy.filesystem.denied,
              ElementsAre(P("home/.aws"), P("home/.git-credentials"), P("home/.ssh")));
  EXPECT_EQ(r->decisions.size(), 3U);
  for (const Decision& d : r->decisions) EXPECT_THAT(d.reason, HasSubstr("protected"));
}

TEST_F(ClampTest, RequestInsideACredentialStoreIsHidden) {
  tree.File("home/.ssh/id_ed25519");
  auto r = Run(Ro({"~"}), Ro({"~/.ssh/id_ed25519"}));
  ASSERT_TRUE(r.ok());
  EXPECT_THAT(r->policy.filesystem.readonly, IsEmpty());
  ASSERT_FALSE(r->decisions.empty());
  EXPECT_EQ(r->decisions.back().granted, "none");
}

TEST_F(ClampTest, SymlinkToACredentialStoreIsHiddenAtItsTarget) {
  tree.File("home/.ssh/id_ed25519");
  tree.Link("home/proj/keys", "../.ssh");
  auto r = Run(Ro({"~"}), Ro({"~/proj/keys"}));
  ASSERT_TRUE(r.ok());
  EXPECT_THAT(r->policy.filesystem.readonly, IsEmpty());
}

TEST_F(ClampTest, CodeRunningFilesInsideAWritableGrantAreReadOnly) {
  tree.Dir("home/proj/.git/hooks");
  tree.File("home/proj/.git/config");
  tree.File("home/proj/.mcp.json");
  auto r = Run(Rw({"~/proj"}), Rw({"~/proj"}));
  ASSERT_TRUE(r.ok());
  EXPECT_THAT(r->policy.filesystem.readwrite, ElementsAre(P("home/proj")));
  EXPECT_THAT(
      r->policy.filesystem.readonly,
      ElementsAre(P("home/proj/.git/config"), P("home/proj/.git/hooks"), P("home/proj/.mcp.json")));
  EXPECT_EQ(r->decisions.size(), 3U);
}

TEST_F(ClampTest, RepositoriesDirectlyInsideAGrantAreProtected) {
  tree.Dir("home/code/app/.git/hooks");
  auto r = Run(Rw({"~/code"}), Rw({"~/code"}));
  ASSERT_TRUE(r.ok());
  EXPECT_THAT(r->policy.filesystem.readonly, ElementsAre(P("home/code/app/.git/hooks")));
}

TEST_F(ClampTest, GrantInsideAProtectedDirectoryIsCapped) {
  tree.Dir("home/proj/.git/hooks");
  auto r = Run(Rw({"~/proj"}), Rw({"~/proj/.git/hooks"}));
  ASSERT_TRUE(r.ok());
  EXPECT_THAT(r->policy.filesystem.readwrite, IsEmpty());
  EXPECT_THAT(r->policy.filesystem.readonly, ElementsAre(P("home/proj/.git/hooks")));
}

TEST_F(ClampTest, ShellRcFilesInAReadableHomeNeedNoEntryButStayUnwritable) {
  tree.File("home/.bashrc");
  auto r = Run(Ro({"~"}), Ro({"~"}));
  ASSERT_TRUE(r.ok());
  // Already read-only by inheritance: no extra entry, no decision.
  EXPECT_THAT(r->policy.filesystem.readonly, ElementsAre(P("home")));
  EXPECT_THAT(r->decisions, IsEmpty());
}

TEST_F(ClampTest, CeilingLiftsAProtectedPathByNamingIt) {
  tree.Dir("home/proj/.git/hooks");
  PolicyDocument ceiling = Rw({"~/proj", "~/proj/.git/hooks"});
  auto r = Run(ceiling, Rw({"~/proj"}));
  ASSERT_TRUE(r.ok());
  EXPECT_THAT(r->policy.filesystem.readonly, IsEmpty());
  EXPECT_THAT(r->policy.filesystem.readwrite, ElementsAre(P("home/proj")));
}

TEST_F(ClampTest, TimeoutIsTheMinimum) {
  PolicyDocument ceiling = Rw({"~/proj"});
  ceiling.timeout_ms = 10'000;
  PolicyDocument request;
  request.timeout_ms = 60'000;
  auto r = Run(ceiling, request);
  ASSERT_TRUE(r.ok());
  EXPECT_EQ(r->policy.timeout_ms, 10'000U);
  ASSERT_EQ(r->decisions.size(), 1U);
  EXPECT_EQ(r->decisions[0].kind, DecisionKind::kTimeout);
  EXPECT_EQ(r->decisions[0].asked, "60000");
  EXPECT_EQ(r->decisions[0].granted, "10000");

  request.timeout_ms = 500;
  EXPECT_EQ(Run(ceiling, request)->policy.timeout_ms, 500U);
  request.timeout_ms.reset();
  EXPECT_EQ(Run(ceiling, request)->policy.timeout_ms, 10'000U);
  EXPECT_EQ(Run(Rw({"~/proj"}), request)->policy.timeout_ms, kDefaultTimeoutMs);
}

TEST_F(ClampTest, LimitsAreTheMinimum) {
  PolicyDocument ceiling;
  ceiling.limits.pids = 100;
  ceiling.limits.memory_bytes = 1 << 20;
  PolicyDocument request;
  request.limits.pids = 1000;
  request.limits.cpu_seconds = 5;
  auto r = Run(ceiling, request);
  ASSERT_TRUE(r.ok());
  EXPECT_EQ(r->policy.limits.pids, 100U);
  EXPECT_EQ(r->policy.limits.memory_bytes, 1U << 20);
  EXPECT_EQ(r->policy.limits.cpu_seconds, 5U);
  ASSERT_EQ(r->decisions.size(), 1U);
  EXPECT_EQ(r->decisions[0].subject, "limits.pids");
}

class NetworkClampTest : public ClampTest {
 protected:
  static PolicyDocument Net(NetworkMode mode, std::vector<std::string> allow = {},
                            std::vector<std::string> deny = {}) {
    PolicyDocument d;
    d.network = NetworkWithMode(mode);
    d.network->allow_domains = std::move(allow);
    d.network->deny_domains = std::move(deny);
    return d;
  }
};

TEST_F(NetworkClampTest, UnmentionedNetworkIsBlocked) {
  auto r = Run(Net(NetworkMode::kAllow), PolicyDocument{});
  ASSERT_TRUE(r.ok());
  EXPECT_EQ(r->policy.network.mode, NetworkMode::kBlock);
  EXPECT_THAT(r->decisions, IsEmpty());
}

TEST_F(NetworkClampTest, AllowUnderABlockingCeilingIsBlocked) {
  auto r = Run(Net(NetworkMode::kBlock), Net(NetworkMode::kAllow));
  ASSERT_TRUE(r.ok());
  EXPECT_EQ(r->policy.network.mode, NetworkMode::kBlock);
  ASSERT_EQ(r->decisions.size(), 1U);
  EXPECT_EQ(r->decisions[0].kind, DecisionKind::kNetwork);
  EXPECT_EQ(r->decisions[0].granted, "block");
}

TEST_F(NetworkClampTest, DefaultCeilingBlocksTheNetwork) {
  auto r = Clamp(DefaultCeiling(P("home/proj")), Request{Net(NetworkMode::kAllow)}, ctx);
  ASSERT_TRUE(r.ok());
  EXPECT_EQ(r->policy.network.mode, NetworkMode::kBlock);
}

TEST_F(NetworkClampTest, StricterRequestIsKept) {
  auto r = Run(Net(NetworkMode::kAllow), Net(NetworkMode::kProxy, {"pypi.org"}));
  ASSERT_TRUE(r.ok());
  EXPECT_EQ(r->policy.network.mode, NetworkMode::kProxy);
  EXPECT_THAT(r->policy.network.allow_domains, ElementsAre("pypi.org"));
  EXPECT_THAT(r->decisions, IsEmpty());
}

TEST_F(NetworkClampTest, ProxyDomainsAreNarrowedToTheCeilings) {
  auto r = Run(Net(NetworkMode::kProxy, {"*.pythonhosted.org", "pypi.org"}, {"evil.pypi.org"}),
               Net(NetworkMode::kProxy, {"files.pythonhosted.org", "PyPI.org", "example.com"},
                   {"ads.example.com"}));
  ASSERT_TRUE(r.ok());
  EXPECT_EQ(r->policy.network.mode, NetworkMode::kProxy);
  EXPECT_THAT(r->policy.network.allow_domains, ElementsAre("files.pythonhosted.org", "pypi.org"));
  EXPECT_THAT(r->policy.network.deny_domains,
              UnorderedElementsAre("ads.example.com", "evil.pypi.org"));
  ASSERT_EQ(r->decisions.size(), 1U);
  EXPECT_EQ(r->decisions[0].kind, DecisionKind::kDomain);
  EXPECT_EQ(r->decisions[0].subject, "example.com");
}

TEST_F(NetworkClampTest, AllowUnderAProxyCeilingBecomesTheCeilingsProxy) {
  auto r = Run(Net(NetworkMode::kProxy, {"pypi.org"}), Net(NetworkMode::kAllow));
  ASSERT_TRUE(r.ok());
  EXPECT_EQ(r->policy.network.mode, NetworkMode::kProxy);
  EXPECT_THAT(r->policy.network.allow_domains, ElementsAre("pypi.org"));
  ASSERT_EQ(r->decisions.size(), 1U);
  EXPECT_EQ(r->decisions[0].granted, "proxy");
}

TEST_F(NetworkClampTest, ProxyUnderABlockingCeilingIsBlocked) {
  auto r = Run(Net(NetworkMode::kBlock), Net(NetworkMode::kProxy, {"pypi.org"}));
  ASSERT_TRUE(r.ok());
  EXPECT_EQ(r->policy.network.mode, NetworkMode::kBlock);
}

TEST_F(NetworkClampTest, InvalidDomainIsAPolicyError) {
  auto r = Run(Net(NetworkMode::kAllow), Net(NetworkMode::kProxy, {"bad domain"}));
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.error().code, ErrorCode::kPolicy);
  EXPECT_THAT(r.error().Message(), HasSubstr("bad domain"));
}

// SEC-28: a request's address ranges and pins are the operator's to grant.
TEST_F(NetworkClampTest, RequestCidrsMustLieInsideTheCeilings) {
  PolicyDocument ceiling = Net(NetworkMode::kProxy, {"a.test"});
  ceiling.network->allow_cidrs = {"10.0.0.0/8"};
  PolicyDocument request = Net(NetworkMode::kProxy, {"a.test"});
  request.network->allow_cidrs = {"10.1.0.0/16", "127.0.0.0/8"};
  auto r = Run(ceiling, request);
  ASSERT_TRUE(r.ok());
  // The operator's range applies anyway; the request's own is inside it.
  EXPECT_THAT(r->policy.network.allow_cidrs, ElementsAre("10.0.0.0/8", "10.1.0.0/16"));
  ASSERT_EQ(r->decisions.size(), 1U);
  EXPECT_EQ(r->decisions[0].subject, "127.0.0.0/8");
  EXPECT_EQ(r->decisions[0].granted, "none");
}

TEST_F(NetworkClampTest, OnlyTheOperatorsPinsCount) {
  PolicyDocument ceiling = Net(NetworkMode::kProxy, {"a.test"});
  ceiling.network->resolve = {"a.test=192.0.2.1"};
  PolicyDocument request = Net(NetworkMode::kProxy, {"a.test"});
  request.network->resolve = {"A.test=192.0.2.1", "a.test=198.51.100.7"};
  auto r = Run(ceiling, request);
  ASSERT_TRUE(r.ok());
  EXPECT_THAT(r->policy.network.resolve, ElementsAre("a.test=192.0.2.1"));
  ASSERT_EQ(r->decisions.size(), 1U);
  EXPECT_EQ(r->decisions[0].subject, "a.test=198.51.100.7");
}

TEST_F(NetworkClampTest, AllowUnderAProxyCeilingGetsTheCeilingsRangesAndPins) {
  PolicyDocument ceiling = Net(NetworkMode::kProxy, {"a.test"});
  ceiling.network->allow_cidrs = {"10.0.0.0/8"};
  ceiling.network->resolve = {"a.test=10.0.0.1"};
  auto r = Run(ceiling, Net(NetworkMode::kAllow));
  ASSERT_TRUE(r.ok());
  EXPECT_EQ(r->policy.network.mode, NetworkMode::kProxy);
  EXPECT_THAT(r->policy.network.allow_cidrs, ElementsAre("10.0.0.0/8"));
  EXPECT_THAT(r->policy.network.resolve, ElementsAre("a.test=10.0.0.1"));
}

TEST_F(NetworkClampTest, MalformedRangesAndPinsAreRefused) {
  for (const char* cidr : {"10.0.0.1/8", "300.0.0.0/8", "example.com/8", ""}) {
    PolicyDocument request = Net(NetworkMode::kProxy, {"a.test"});
    request.network->allow_cidrs = {cidr};
    auto r = Run(Net(NetworkMode::kAllow), request);
    ASSERT_FALSE(r.ok()) << cidr;
    EXPECT_EQ(r.error().code, ErrorCode::kPolicy) << cidr;
  }
  for (const char* pin : {"a.test", "a.test=", "=1.2.3.4", "a.test=not-an-ip", "1.2.3.4=5.6.7.8"}) {
    PolicyDocument request = Net(NetworkMode::kProxy, {"a.test"});
    request.network->resolve = {pin};
    auto r = Run(Net(NetworkMode::kAllow), request);
    ASSERT_FALSE(r.ok()) << pin;
    EXPECT_EQ(r.error().code, ErrorCode::kPolicy) << pin;
  }
}

}  // namespace
}  // namespace agentbox
