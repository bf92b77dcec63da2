// Tests for config/mxc_config: the strict MXC config parser, its invariants and JSON form,
// semver versions, and the mapping onto agentbox's request.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <string>

#include "config/mxc_config.h"
#include "config/strict_json.h"

namespace agentbox {
namespace {

using ::testing::ElementsAre;
using ::testing::HasSubstr;
using ::testing::StartsWith;

MxcConfig Accept(std::string_view text) {
  auto config = ParseMxcConfig(text, "test.json");
  EXPECT_TRUE(config.ok()) << text << ": " << (config.ok() ? "" : config.error().Message());
  if (!config.ok()) return MxcConfig{};
  // Every accepted config keeps the invariants and survives its JSON form.
  EXPECT_TRUE(CheckMxcInvariants(*config).ok()) << text;
  auto again = ParseMxcConfig(DumpJson(MxcConfigToJson(*config)), "roundtrip");
  EXPECT_TRUE(again.ok() && *again == *config) << DumpJson(MxcConfigToJson(*config));
  return *config;
}

std::string Reject(std::string_view text) {
  auto config = ParseMxcConfig(text, "test.json");
  EXPECT_FALSE(config.ok()) << "accepted: " << text;
  if (config.ok()) return "";
  EXPECT_EQ(config.error().code, ErrorCode::kPolicy);
  EXPECT_THAT(config.error().Message(), StartsWith("test.json: "));
  return config.error().Message();
}

std::string WithProcess(std::string_view rest) {
  std::string out = R"({"process": {"commandLine": "echo hi"})";
  if (!rest.empty()) {
    out += ", ";
    out += rest;
  }
  return out + "}";
}

// --- accepted configs ------------------------------------------------------------------------

TEST(MxcConfig, MinimalConfigHasDefaults) {
  const MxcConfig c = Accept(R"({"process": {"commandLine": "echo hi"}})");
  EXPECT_FALSE(c.version.has_value());
  EXPECT_EQ(c.containment, MxcContainment::kProcess);
  EXPECT_EQ(c.command_line, "echo hi");
  EXPECT_FALSE(c.cwd.has_value());
  EXPECT_TRUE(c.env.empty());
  EXPECT_EQ(c.timeout_ms, 0u);
  EXPECT_FALSE(c.network.has_value());
  EXPECT_FALSE(c.backend_section.has_value());
}

TEST(MxcConfig, EveryProcessAndFilesystemField) {
  const MxcConfig c = Accept(R"({
    "version": "0.8.0-alpha", "$schema": "x", "_comment": [1, {"a": null}],
    "containerId": "c1", "containment": "bubblewrap",
    "process": {"commandLine": "make test", "cwd": "/src", "env": ["A=1", "B", "A=2"],
                "timeout": 4294967295},
    "filesystem": {"readwritePaths": ["/src"], "readonlyPaths": ["/usr/share"],
                   "deniedPaths": ["/src/.env"]},
    "lifecycle": {"destroyOnExit": true, "preservePolicy": false},
    "ui": {"disable": true, "clipboard": "none", "injection": false},
    "fallback": {"allowDaclMutation": false}
  })");
  ASSERT_TRUE(c.version.has_value());
  EXPECT_EQ(*c.version, (MxcVersion{0, 8, 0, "0.8.0-alpha"}));
  EXPECT_EQ(c.containment, MxcContainment::kBubblewrap);
  EXPECT_EQ(c.container_id, "c1");
  EXPECT_EQ(c.command_line, "make test");
  EXPECT_EQ(c.cwd, "/src");
  EXPECT_THAT(c.env, ElementsAre("A=1", "B", "A=2"));
  EXPECT_EQ(c.timeout_ms, 4294967295u);
  EXPECT_THAT(c.readwrite_paths, ElementsAre("/src"));
  EXPECT_THAT(c.readonly_paths, ElementsAre("/usr/share"));
  EXPECT_THAT(c.denied_paths, ElementsAre("/src/.env"));
}

TEST(MxcConfig, NullIsAbsentForOptionalFields) {
  const MxcConfig c = Accept(R"({"version": null, "containment": null, "containerId": null,
    "process": {"commandLine": "x", "cwd": null, "env": null, "timeout": null},
    "filesystem": {"readonlyPaths": null}, "network": {"defaultPolicy": null, "proxy": null},
    "runtimeConfig": null, "lxc": null, "seatbelt": null, "processContainer": null,
    "appContainer": null, "ui": null, "lifecycle": null, "fallback": null})");
  EXPECT_FALSE(c.version.has_value());
  EXPECT_EQ(c.containment, MxcContainment::kProcess);
  EXPECT_FALSE(c.cwd.has_value());
  EXPECT_EQ(c.timeout_ms, 0u);
  ASSERT_TRUE(c.network.has_value());
  EXPECT_FALSE(c.network->default_policy.has_value());
  EXPECT_FALSE(c.runtime_network_proxy.has_value());
}

TEST(MxcConfig, EmptyCwdIsUnset) {
  EXPECT_FALSE(Accept(R"({"process": {"commandLine": "x", "cwd": ""}})").cwd.has_value());
}

TEST(MxcConfig, EveryContainmentParses) {
  for (const MxcContainment c : kAllMxcContainments) {
    const std::string text = std::string(R"({"containment": ")") + MxcContainmentName(c) +
                             R"(", "process": {"commandLine": "x"}})";
    EXPECT_EQ(Accept(text).containment, c) << text;
  }
  EXPECT_TRUE(RunsAgentboxSandbox(MxcContainment::kProcess));
  EXPECT_TRUE(RunsAgentboxSandbox(MxcContainment::kBubblewrap));
  EXPECT_FALSE(RunsAgentboxSandbox(MxcContainment::kLxc));
}

TEST(MxcConfig, MatchingBackendSections) {
  EXPECT_EQ(Accept(R"({"containment": "lxc", "lxc": {"distribution": "alpine", "release": "3"},
                       "process": {"commandLine": "x"}})")
                .backend_section,
            MxcBackendSection::kLxc);
  EXPECT_EQ(Accept(R"({"containment": "appcontainer", "processContainer": {
                         "leastPrivilege": true, "capabilities": ["internetClient"],
                         "ui": {"isolation": "desktop", "ime": false}, "learningMode": true,
                         "captureDenials": {"mode": "block", "retainEtl": false}},
                       "process": {"commandLine": "x"}})")
                .backend_section,
            MxcBackendSection::kProcessContainer);
  EXPECT_EQ(Accept(R"({"containment": "macos_sandbox", "seatbelt": {"launchMethod": "open",
                       "extraMachLookups": ["a"]}, "process": {"commandLine": "x"}})")
                .backend_section,
            MxcBackendSection::kSeatbelt);
}

TEST(MxcConfig, LegacyNetwork) {
  const MxcConfig c = Accept(WithProcess(R"("network": {"defaultPolicy": "allow",
    "allowLocalNetwork": true, "allowedHosts": ["a.com"], "blockedHosts": [],
    "enforcementMode": "capabilities", "proxy": {"url": "http://[::1]:3128/"}})"));
  ASSERT_TRUE(c.network.has_value());
  EXPECT_EQ(c.network->default_policy, MxcNetPolicy::kAllow);
  EXPECT_EQ(c.network->allow_local_network, true);
  EXPECT_EQ(c.network->allowed_hosts, std::vector<std::string>{"a.com"});
  EXPECT_EQ(c.network->blocked_hosts, std::vector<std::string>{});
  EXPECT_EQ(c.network->enforcement_mode, MxcEnforcement::kCapabilities);
  ASSERT_TRUE(c.network->proxy.has_value());
  EXPECT_EQ(c.network->proxy->kind, MxcProxy::Kind::kUrl);
  EXPECT_EQ(
      Accept(WithProcess(R"("network": {"enforcementMode": "both"})")).network->enforcement_mode,
      MxcEnforcement::kBoth);
  EXPECT_EQ(Accept(WithProcess(R"("network": {"defaultPolicy": "allow",
                                  "proxy": {"localhost": 3128}})"))
                .network->proxy,
            (MxcProxy{MxcProxy::Kind::kLocalhost, 3128, ""}));
  // defaultPolicy block (the default) with a proxy: allowedHosts say what passes.
  EXPECT_EQ(Accept(WithProcess(R"("network": {"allowedHosts": ["a.com"],
                                  "proxy": {"url": "https://p.example:8443/x?y"}})"))
                .network->proxy->url,
            "https://p.example:8443/x?y");
  EXPECT_EQ(Accept(WithProcess(R"("network": {"proxy": {"builtinTestServer": true,
                                  "localhost": null}})"))
                .network->proxy->kind,
            MxcProxy::Kind::kBuiltinTestServer);
}

TEST(MxcConfig, DirectionalNetwork) {
  const MxcConfig c = Accept(R"({"version": "0.8.0", "process": {"commandLine": "x"},
    "network": {"egress": {"default": "deny", "allow": [{"to": [{"cidr": "10.0.0.0/8",
      "except": ["10.1.0.0/16"]}, {"cidr": "2001:db8::/32"}], "ports": [{"port": 80,
      "endPort": 443, "protocol": "tcp"}]}], "deny": [{"to": [{"cidr": "169.254.169.254"}]}]},
      "ingress": {"default": "deny", "hostLoopback": "deny"}}})");
  ASSERT_TRUE(c.network && c.network->egress && c.network->ingress);
  EXPECT_EQ(c.network->egress->default_action, MxcNetAction::kDeny);
  ASSERT_EQ(c.network->egress->allow.size(), 1u);
  ASSERT_TRUE(c.network->egress->allow[0].to.has_value());
  EXPECT_EQ(c.network->egress->allow[0].to->size(), 2u);
  EXPECT_EQ((*c.network->egress->allow[0].ports)[0],
            (MxcPort{uint16_t{80}, uint16_t{443}, MxcProtocol::kTcp}));
  EXPECT_EQ(c.network->ingress->host_loopback, MxcNetAction::kDeny);
  for (const char* url : {"http://127.0.0.1:8080", "http://LocalHost:1/", "https://[::1]:443"}) {
    const std::string text = std::string(R"({"version": "0.8.0", "process": {"commandLine": "x"},
        "network": {"egress": {"default": "deny", "allow": []}, "ingress": {}},
        "runtimeConfig": {"networkProxy": ")") +
                             url + R"("}})";
    EXPECT_EQ(Accept(text).runtime_network_proxy, url);
  }
}

// --- parse errors ----------------------------------------------------------------------------

TEST(MxcConfigErrors, Syntax) {
  EXPECT_THAT(Reject(R"({"process": )"), HasSubstr("invalid JSON"));
  EXPECT_THAT(Reject(R"({"process": {"commandLine": "x"}} x)"), HasSubstr("invalid JSON"));
  EXPECT_THAT(Reject("[]"), HasSubstr("top level: expected an object"));
  EXPECT_THAT(Reject(R"({"process": {"commandLine": "a", "commandLine": "b"}})"),
              HasSubstr("duplicate key \"commandLine\" at /process"));
}

TEST(MxcConfigErrors, UnknownFieldsAtEveryLevel) {
  EXPECT_THAT(Reject(WithProcess(R"("experimental": {})")),
              HasSubstr("top level: unknown field \"experimental\""));
  EXPECT_THAT(Reject(R"({"process": {"commandLine": "x", "args": []}})"),
              HasSubstr("/process: unknown field \"args\""));
  EXPECT_THAT(Reject(WithProcess(R"("filesystem": {"readOnlyPaths": []})")),
              HasSubstr("/filesystem: unknown field \"readOnlyPaths\""));
  EXPECT_THAT(Reject(WithProcess(R"("network": {"proxy": {"port": 1}})")),
              HasSubstr("/network/proxy: unknown field \"port\""));
  EXPECT_THAT(Reject(R"({"version": "0.8.0", "process": {"commandLine": "x"},
                         "network": {"egress": {"allow": [{"to": [{"cidr": "10.0.0.0/8",
                         "mask": 1}]}]}}})"),
              HasSubstr("/network/egress/allow/0/to/0: unknown field \"mask\""));
  EXPECT_THAT(Reject(WithProcess(R"("ui": {"theme": "dark"})")),
              HasSubstr("/ui: unknown field \"theme\""));
}

TEST(MxcConfigErrors, Process) {
  EXPECT_THAT(Reject("{}"), HasSubstr("top level: missing required field \"process\""));
  EXPECT_THAT(Reject(R"({"process": {}})"), HasSubstr("missing required field \"commandLine\""));
  EXPECT_THAT(Reject(R"({"process": {"commandLine": ""}})"), HasSubstr("must not be empty"));
  EXPECT_THAT(Reject(R"({"process": {"commandLine": "a\u0000b"}})"), HasSubstr("NUL"));
  EXPECT_THAT(
      Reject(R"({"process": {"commandLine": "x", "timeout": -1}})"),
      HasSubstr("/process/timeout: expected an integer from 0 to 4294967295, got number -1"));
  EXPECT_THAT(Reject(R"({"process": {"commandLine": "x", "timeout": 4294967296}})"),
              HasSubstr("/process/timeout"));
  EXPECT_THAT(Reject(R"({"process": {"commandLine": "x", "timeout": 10.0}})"),
              HasSubstr("/process/timeout"));
  EXPECT_THAT(Reject(R"({"process": {"commandLine": "x", "timeout": true}})"),
              HasSubstr("/process/timeout"));
  EXPECT_THAT(Reject(R"({"process": {"commandLine": "x", "env": ["=v"]}})"),
              HasSubstr("/process/env/0: has an empty variable name"));
  EXPECT_THAT(Reject(R"({"process": {"commandLine": "x", "env": ["A=\u0000"]}})"),
              HasSubstr("/process/env/0: must not contain a NUL byte"));
}

TEST(MxcConfigErrors, Paths) {
  EXPECT_THAT(Reject(WithProcess(R"("filesystem": {"readwritePaths": [""]})")),
              HasSubstr("/filesystem/readwritePaths/0: must not be empty"));
  EXPECT_THAT(Reject(WithProcess(R"("filesystem": {"deniedPaths": ["/a", "/b\"c"]})")),
              HasSubstr("/filesystem/deniedPaths/1: must not contain '\"'"));
  EXPECT_THAT(Reject(WithProcess(R"("filesystem": {"readonlyPaths": ["/a\u0000"]})")),
              HasSubstr("/filesystem/readonlyPaths/0: must not contain a NUL byte"));
  EXPECT_THAT(Reject(WithProcess(R"("filesystem": {"readonlyPaths": [7]})")),
              HasSubstr("/filesystem/readonlyPaths/0: expected a string"));
}

TEST(MxcConfigErrors, StateAwareFields) {
  for (const char* field : {"phase", "sandboxId", "correlationVector"}) {
    EXPECT_THAT(Reject(WithProcess(std::string("\"") + field + "\": \"x\"")),
                HasSubstr(std::string("/") + field + ": \"" + field + "\" belongs to state-aware"));
  }
}

TEST(MxcConfigErrors, Containment) {
  EXPECT_THAT(Reject(WithProcess(R"("containment": "docker")")),
              HasSubstr("/containment: unknown value \"docker\" (expected one of: process, "
                        "bubblewrap, lxc,"));
  EXPECT_THAT(Reject(WithProcess(R"("lxc": {})")),
              HasSubstr("/lxc: this backend section does not belong to containment \"process\""));
  EXPECT_THAT(Reject(R"({"containment": "seatbelt", "seatbelt": {}, "lxc": {},
                         "process": {"commandLine": "x"}})"),
              HasSubstr("more than one backend section (lxc, seatbelt)"));
  EXPECT_THAT(Reject(R"({"containment": "seatbelt", "seatbelt": {"nestedPty": 1},
                         "process": {"commandLine": "x"}})"),
              HasSubstr("/seatbelt/nestedPty: expected true or false"));
}

TEST(MxcConfigErrors, Network) {
  EXPECT_THAT(Reject(WithProcess(R"("network": {"proxy": {}})")),
              HasSubstr("must specify one of localhost, url, builtinTestServer"));
  EXPECT_THAT(Reject(WithProcess(R"("network": {"proxy": {"localhost": 1, "url": "http://a:1"}})")),
              HasSubstr("must specify exactly one"));
  EXPECT_THAT(Reject(WithProcess(R"("network": {"proxy": {"url": "http://u:p@h:1"}})")),
              HasSubstr("must not carry credentials"));
  EXPECT_THAT(Reject(WithProcess(R"("network": {"proxy": {"url": "http://u:p@h:1"}})")),
              ::testing::Not(HasSubstr("u:p@h")));  // the password is not echoed
  for (const char* url :
       {"ftp://h:1", "http://", "http://h:0", "http://h:65536", "http://h:x", "http://[::1",
        "http://h h", "http://h:", "http://h", "https://h/", "http://[::1]"}) {
    Reject(WithProcess(std::string(R"("network": {"defaultPolicy": "allow", "proxy": {"url": ")") +
                       url + "\"}}"));
  }
  EXPECT_THAT(Reject(WithProcess(R"("network": {"defaultPolicy": "allow",
                                   "proxy": {"url": "http://127.0.0.1"}})")),
              HasSubstr("/network/proxy/url: must include a port"));
  // As lxc-exec: an external proxy with block and nothing allowed, or with a firewall mode.
  for (const char* net : {R"({"proxy": {"localhost": 1}})",
                          R"({"defaultPolicy": "block", "proxy": {"url": "http://h:1"}})",
                          R"({"allowedHosts": [], "blockedHosts": ["b.com"],
                              "proxy": {"localhost": 1}})"}) {
    EXPECT_THAT(Reject(WithProcess(std::string(R"("network": )") + net)),
                HasSubstr("/network: network.proxy with defaultPolicy \"block\" (the default) "
                          "and no allowedHosts would let nothing through"));
  }
  EXPECT_THAT(Reject(WithProcess(R"("network": {"defaultPolicy": "allow",
                                   "enforcementMode": "firewall", "proxy": {"localhost": 1}})")),
              HasSubstr("cannot be combined with enforcementMode"));
  // The test proxy is not an external proxy: refused later, when mapped.
  Accept(WithProcess(R"("network": {"enforcementMode": "both",
                        "proxy": {"builtinTestServer": true}})"));
  // runtimeConfig.networkProxy: on loopback, with a port, the only way out (as lxc-exec).
  for (const char* url : {"http://10.0.0.1:1", "http://proxy.example:3128", "http://0.0.0.0:1",
                          "http://127.0.0.2:1", "http://localhost", "http://u:p@localhost:1"}) {
    Reject(std::string(R"({"version": "0.8.0", "process": {"commandLine": "x"},
                           "runtimeConfig": {"networkProxy": ")") +
           url + "\"}}");
  }
  EXPECT_THAT(Reject(R"({"version": "0.8.0", "process": {"commandLine": "x"},
                         "runtimeConfig": {"networkProxy": "http://proxy.example:3128"}})"),
              HasSubstr("/runtimeConfig/networkProxy: must use localhost, 127.0.0.1 or [::1]"));
  for (const char* egress :
       {R"({"default": "allow"})", R"({"allow": [{"to": [{"cidr": "10.0.0.0/8"}]}]})",
        R"({"deny": [{"ports": [{"port": 25}]}]})"}) {
    EXPECT_THAT(Reject(std::string(R"({"version": "0.8.0", "process": {"commandLine": "x"},
                                       "network": {"egress": )") +
                       egress + R"(}, "runtimeConfig": {"networkProxy": "http://127.0.0.1:1"}})"),
                HasSubstr("/runtimeConfig/networkProxy: runtimeConfig.networkProxy requires "
                          "network.egress.default \"deny\" with no direct allow or deny rules"));
  }
  EXPECT_THAT(Reject(R"({"version": "0.7.0", "process": {"commandLine": "x"},
                         "network": {"ingress": {}}})"),
              HasSubstr("need \"version\" 0.8 or later"));
  EXPECT_THAT(Reject(R"({"version": "0.8.0", "process": {"commandLine": "x"},
                         "network": {"allowLocalNetwork": false, "egress": {}}})"),
              HasSubstr("/network: cannot mix"));
  EXPECT_THAT(Reject(R"({"version": "0.8.0", "process": {"commandLine": "x"},
                         "network": {"egress": {"allow": [{"ports": []}]}}})"),
              HasSubstr("/network/egress/allow/0/ports: must not be empty"));
  EXPECT_THAT(Reject(R"({"version": "0.8.0", "process": {"commandLine": "x"},
                         "network": {"egress": {"allow": [{"ports": [{"port": 90,
                         "endPort": 80}]}]}}})"),
              HasSubstr("endPort: must not be below \"port\""));
  for (const char* cidr : {"10.0.0.0/33", "::/129", "10.0.0", "10.0.0.0/", "x", "10.0.0.0/-1"}) {
    Reject(std::string(R"({"version": "0.8.0", "process": {"commandLine": "x"},
                          "network": {"egress": {"deny": [{"to": [{"cidr": ")") +
           cidr + "\"}]}]}}}");
  }
}

TEST(MxcConfigErrors, TooDeep) {
  EXPECT_THAT(Reject(WithProcess("\"_comment\": " + std::string(70, '[') + std::string(70, ']'))),
              HasSubstr("nesting deeper than"));
}

// --- versions --------------------------------------------------------------------------------

TEST(MxcVersionTest, Accepted) {
  for (const char* v :
       {"0.6.0", "0.6.0-alpha", "0.7.0-alpha", "0.8.0-alpha", "0.9.0", "0.8.10", "0.8.0-rc.1",
        "0.8.0+build.7", "0.8.0-alpha.1+exp.sha.5114f85", "0.8.0-0a", "0.8.0--"}) {
    EXPECT_TRUE(ParseMxcVersion(v).ok()) << v;
  }
  EXPECT_EQ(*ParseMxcVersion("0.7.3-x"), (MxcVersion{0, 7, 3, "0.7.3-x"}));
}

TEST(MxcVersionTest, Refused) {
  EXPECT_THAT(ParseMxcVersion("0.5.9").error().Message(),
              HasSubstr("is older than supported (supported: >=0.6, <=0.9)"));
  EXPECT_THAT(ParseMxcVersion("0.10.0").error().Message(), HasSubstr("is newer than supported"));
  EXPECT_THAT(ParseMxcVersion("1.0.0").error().Message(), HasSubstr("is newer than supported"));
  for (const char* v : {"", "0.8", "0.8.0.0", "v0.8.0", "0.08.0", "00.8.0", "0.8.01", "0.8.0-",
                        "0.8.0+", "0.8.0-01", "0.8.0-a..b", "0.8.0-a_b", " 0.8.0", "0.8.0 ",
                        "0.8.x", "0.99999999999999999999999.0"}) {
    EXPECT_FALSE(ParseMxcVersion(v).ok()) << v;
  }
}

// --- mapping ---------------------------------------------------------------------------------

MxcRun Map(std::string_view text, MxcMapOptions options = {}) {
  auto run = MapMxcConfig(Accept(text), options);
  EXPECT_TRUE(run.ok()) << text << ": " << (run.ok() ? "" : run.error().Message());
  return run.ok() ? *run : MxcRun{};
}

std::string MapError(std::string_view text, MxcMapOptions options = {}) {
  auto run = MapMxcConfig(Accept(text), options);
  EXPECT_FALSE(run.ok()) << "mapped: " << text;
  return run.ok() ? "" : run.error().Message();
}

TEST(MxcMap, ShellAndEnvironment) {
  const MxcRun run = Map(R"({"process": {"commandLine": "echo $A",
      "env": ["B=1", "A=x=y", "NOEQ", "", "B=2", "C="]}})");
  ASSERT_EQ(run.argv.size(), 3u);
  EXPECT_EQ(run.argv[0], "sh");
  EXPECT_EQ(run.argv[1], "-c");
  EXPECT_THAT(run.argv[2], HasSubstr("AGENTBOX_MXC_COMMAND_LINE"));
  EXPECT_THAT(run.argv[2], ::testing::Not(HasSubstr("echo $A")));  // never on argv
  EXPECT_THAT(run.env, ElementsAre("B=2", "A=x=y", "C=", "AGENTBOX_MXC_COMMAND_LINE=echo $A"));
  EXPECT_THAT(run.env_names, ElementsAre("B", "A", "C"));
  EXPECT_THAT(MapError(R"({"process": {"commandLine": "x",
                           "env": ["AGENTBOX_MXC_COMMAND_LINE=1"]}})"),
              HasSubstr("is reserved"));
}

TEST(MxcMap, FilesystemAndTimeout) {
  const MxcRun run = Map(R"({"process": {"commandLine": "x", "cwd": "/w", "timeout": 500},
      "filesystem": {"readwritePaths": ["/w"], "readonlyPaths": ["/r"], "deniedPaths": ["/w/s"]}})");
  EXPECT_THAT(run.request.doc.filesystem.readwrite, ElementsAre("/w"));
  EXPECT_THAT(run.request.doc.filesystem.readonly, ElementsAre("/r"));
  EXPECT_THAT(run.request.doc.filesystem.denied, ElementsAre("/w/s"));
  EXPECT_EQ(run.request.doc.timeout_ms, 500u);
  EXPECT_EQ(run.cwd, "/w");
  EXPECT_EQ(Map(R"({"process": {"commandLine": "x"}})").request.doc.timeout_ms, kMxcNoTimeoutMs);
  EXPECT_EQ(Map(R"({"process": {"commandLine": "x", "timeout": 0}})").request.doc.timeout_ms,
            kMxcNoTimeoutMs);
  EXPECT_THAT(MapError(WithProcess(R"("filesystem": {"readonlyPaths": ["/a", "rel"]})")),
              HasSubstr("/filesystem/readonlyPaths/1: \"rel\" is not an absolute path"));
  EXPECT_THAT(MapError(WithProcess(R"("filesystem": {"deniedPaths": ["~/x"]})")),
              HasSubstr("is not an absolute path"));
  EXPECT_THAT(MapError(R"({"process": {"commandLine": "x", "cwd": "rel"}})"),
              HasSubstr("/process/cwd: \"rel\" is not an absolute path"));
}

TEST(MxcMap, Containment) {
  EXPECT_EQ(MapMxcConfig(Accept(R"({"containment": "vm", "process": {"commandLine": "x"}})"), {})
                .error()
                .code,
            ErrorCode::kUnsupported);
  EXPECT_THAT(MapError(R"({"containment": "lxc", "process": {"commandLine": "x"}})"),
              HasSubstr("containment \"lxc\" is not available on this host"));
  Map(R"({"containment": "bubblewrap", "process": {"commandLine": "x"}})");
}

NetworkMode Mode(std::string_view text) {
  const MxcRun run = Map(text);
  return run.request.doc.network ? run.request.doc.network->mode : NetworkMode::kProxy;
}

TEST(MxcMap, NetworkOutcomes) {
  EXPECT_EQ(Mode(WithProcess("")), NetworkMode::kBlock);
  EXPECT_EQ(Mode(WithProcess(R"("network": {})")), NetworkMode::kBlock);
  EXPECT_EQ(Mode(WithProcess(R"("network": {"defaultPolicy": "block", "allowLocalNetwork": true,
                                "enforcementMode": "firewall", "allowedHosts": []})")),
            NetworkMode::kBlock);
  EXPECT_EQ(Mode(WithProcess(R"("network": {"defaultPolicy": "allow"})")), NetworkMode::kAllow);
  EXPECT_EQ(Mode(WithProcess(R"("version": "0.7.0", "network": {"defaultPolicy": "allow"})")),
            NetworkMode::kAllow);
  EXPECT_EQ(Mode(WithProcess(R"("version": "0.8.0", "network": {"defaultPolicy": "allow",
                                "allowLocalNetwork": true})")),
            NetworkMode::kAllow);
  EXPECT_EQ(Mode(WithProcess(R"("version": "0.8.0", "network": {"egress": {"default": "deny"},
                                "ingress": {"default": "deny"}})")),
            NetworkMode::kBlock);
  EXPECT_EQ(Mode(WithProcess(R"("version": "0.8.0", "network": {"egress": {"default": "allow"},
                                "ingress": {"default": "allow", "hostLoopback": "allow"}})")),
            NetworkMode::kAllow);
}

TEST(MxcMap, ProxyForms) {
  // proxy.localhost P: the host's 127.0.0.1:P; every host forwarded; blockedHosts refused.
  MxcRun run = Map(WithProcess(R"("network": {"defaultPolicy": "allow",
                                  "proxy": {"localhost": 3128}, "blockedHosts": ["Bad.example",
                                  "*.ads.example:8080"]})"));
  ASSERT_TRUE(run.request.doc.network.has_value());
  EXPECT_EQ(run.request.doc.network->mode, NetworkMode::kProxy);
  EXPECT_EQ(run.upstream_proxy, "127.0.0.1:3128");
  EXPECT_TRUE(run.request.doc.network->allow_domains.empty());
  EXPECT_THAT(run.request.doc.network->deny_domains,
              ElementsAre("bad.example", "*.ads.example:8080"));
  EXPECT_TRUE(run.request.doc.network->allow_cidrs.empty());
  // 0.8 needs no allowLocalNetwork: the sandbox does not share the host's network.
  run = Map(WithProcess(R"("version": "0.8.0", "network": {"defaultPolicy": "allow",
                           "proxy": {"url": "http://proxy.example:8080/ignored?x"}})"));
  EXPECT_EQ(run.request.doc.network->mode, NetworkMode::kProxy);
  EXPECT_EQ(run.upstream_proxy, "proxy.example:8080");
  run = Map(WithProcess(R"("network": {"defaultPolicy": "allow",
                           "proxy": {"url": "http://[::1]:3128"}})"));
  EXPECT_EQ(run.upstream_proxy, "[::1]:3128");
  // block with allowedHosts: only they are forwarded.
  run = Map(WithProcess(R"("network": {"allowedHosts": ["example.com", "*.pypi.org",
                           "api.example.com:8443"], "blockedHosts": ["x.example.com"],
                           "allowLocalNetwork": true, "proxy": {"localhost": 8080}})"));
  EXPECT_EQ(run.request.doc.network->mode, NetworkMode::kProxy);
  EXPECT_EQ(run.upstream_proxy, "127.0.0.1:8080");
  EXPECT_THAT(run.request.doc.network->allow_domains,
              ElementsAre("example.com", "*.pypi.org", "api.example.com:8443"));
  EXPECT_THAT(run.request.doc.network->deny_domains, ElementsAre("x.example.com"));
  // runtimeConfig.networkProxy.
  run = Map(R"({"version": "0.8.0", "process": {"commandLine": "x"},
                "runtimeConfig": {"networkProxy": "http://localhost:9000/"}})");
  EXPECT_EQ(run.request.doc.network->mode, NetworkMode::kProxy);
  EXPECT_EQ(run.upstream_proxy, "localhost:9000");
  EXPECT_TRUE(run.request.doc.network->allow_domains.empty());
  run = Map(R"({"version": "0.8.0", "process": {"commandLine": "x"},
                "network": {"egress": {"default": "deny"}, "ingress": {"default": "deny"}},
                "runtimeConfig": {"networkProxy": "http://127.0.0.1:9000"}})");
  EXPECT_EQ(run.upstream_proxy, "127.0.0.1:9000");
  // No proxy anywhere: no upstream.
  EXPECT_EQ(Map(WithProcess(R"("network": {"defaultPolicy": "allow"})")).upstream_proxy, "");
}

TEST(MxcMap, AllowedHostsWithoutProxy) {
  // defaultPolicy block (the default) with allowedHosts: agentbox's own proxy enforces them.
  MxcRun run = Map(WithProcess(R"("network": {"allowedHosts": ["example.com", "10.0.0.1",
                                  "192.168.0.0/16", "2001:db8::/32"], "blockedHosts": ["b.com"],
                                  "enforcementMode": "firewall"})"));
  ASSERT_TRUE(run.request.doc.network.has_value());
  EXPECT_EQ(run.request.doc.network->mode, NetworkMode::kProxy);
  EXPECT_EQ(run.upstream_proxy, "");
  EXPECT_THAT(run.request.doc.network->allow_domains, ElementsAre("example.com"));
  EXPECT_THAT(run.request.doc.network->allow_cidrs,
              ElementsAre("10.0.0.1/32", "192.168.0.0/16", "2001:db8::/32"));
  EXPECT_THAT(run.request.doc.network->deny_domains, ElementsAre("b.com"));
  EXPECT_EQ(Mode(WithProcess(R"("version": "0.8.0", "network": {"defaultPolicy": "block",
                                "allowedHosts": ["a.com"]})")),
            NetworkMode::kProxy);
  // blockedHosts alone under block: everything is blocked already.
  EXPECT_EQ(Mode(WithProcess(R"("network": {"blockedHosts": ["b.com", "1.2.3.4"]})")),
            NetworkMode::kBlock);
}

TEST(MxcMap, HostListRefusals) {
  auto map_error = [](std::string_view network) {
    return MapError(WithProcess(std::string(R"("network": )") + std::string(network)));
  };
  EXPECT_THAT(map_error(R"({"allowedHosts": ["*"]})"),
              HasSubstr("/network/allowedHosts/0: \"*\": not a host pattern"));
  EXPECT_THAT(map_error(R"({"allowedHosts": ["*"]})"), HasSubstr("defaultPolicy \"allow\""));
  EXPECT_THAT(map_error(R"({"allowedHosts": ["a.com", "bad host"]})"),
              HasSubstr("/network/allowedHosts/1: \"bad host\": not a host pattern"));
  EXPECT_THAT(map_error(R"({"allowedHosts": ["b\u00fccher.de"]})"), HasSubstr("not a host"));
  for (const char* loopback :
       {"127.0.0.1", "0.0.0.0/0", "0.0.0.0", "::1", "::/0", "::ffff:127.0.0.1", "64.0.0.0/2"}) {
    EXPECT_THAT(map_error(std::string(R"({"allowedHosts": [")") + loopback + R"("]})"),
                HasSubstr("includes loopback or unspecified addresses"))
        << loopback;
  }
  for (const char* bad :
       {"127.1", "10.0.0.1/33", "10.1.0.0/8", "10.0.0.1:80", "[::2]", "0x0a.0.0.1/32"}) {
    EXPECT_THAT(map_error(std::string(R"({"allowedHosts": [")") + bad + R"("]})"),
                HasSubstr("/network/allowedHosts/0: "))
        << bad;
  }
  // Addresses cannot be checked before an upstream proxy (it resolves names itself).
  EXPECT_THAT(map_error(R"({"allowedHosts": ["10.0.0.1"], "proxy": {"localhost": 1}})"),
              HasSubstr("with network.proxy the proxy resolves names itself"));
  // blockedHosts are matched by name: addresses cannot be kept out.
  EXPECT_THAT(map_error(R"({"defaultPolicy": "allow", "blockedHosts": ["10.0.0.0/8"],
                           "proxy": {"localhost": 1}})"),
              HasSubstr("/network/blockedHosts/0: \"10.0.0.0/8\": agentbox's proxy matches "
                        "blocked hosts by name"));
  EXPECT_THAT(map_error(R"({"allowedHosts": ["a.com"], "blockedHosts": ["1.2.3.4"]})"),
              HasSubstr("matches blocked hosts by name"));
  // allowedHosts mean something only under block.
  EXPECT_THAT(map_error(R"({"defaultPolicy": "allow", "allowedHosts": ["a.com"]})"),
              HasSubstr("allowedHosts take effect only with defaultPolicy \"block\""));
  EXPECT_THAT(map_error(R"({"defaultPolicy": "allow", "allowedHosts": ["a.com"],
                           "proxy": {"localhost": 1}})"),
              HasSubstr("allowedHosts take effect only with defaultPolicy \"block\""));
  // Everything but some hosts needs an upstream: agentbox's own proxy reaches only listed ones.
  EXPECT_THAT(map_error(R"({"defaultPolicy": "allow", "blockedHosts": ["a.com"]})"),
              HasSubstr("blockedHosts with defaultPolicy \"allow\" and no network.proxy"));
  // An https:// proxy wants TLS to itself; the bridge speaks plain HTTP.
  EXPECT_THAT(map_error(R"({"defaultPolicy": "allow", "proxy": {"url": "https://p:1"}})"),
              HasSubstr("network.proxy.url: an https:// proxy"));
  EXPECT_THAT(map_error(R"({"defaultPolicy": "allow", "proxy": {"url": "http://my_proxy:1"}})"),
              HasSubstr("network.proxy.url: the proxy's host cannot be used"));
  EXPECT_THAT(MapError(R"({"version": "0.8.0", "process": {"commandLine": "x"},
                           "runtimeConfig": {"networkProxy": "https://127.0.0.1:1"}})"),
              HasSubstr("runtimeConfig.networkProxy: an https:// proxy"));
  EXPECT_THAT(MapError(R"({"version": "0.8.0", "process": {"commandLine": "x"},
                           "network": {"ingress": {"hostLoopback": "allow"}},
                           "runtimeConfig": {"networkProxy": "http://127.0.0.1:1"}})"),
              HasSubstr("cannot be enforced"));
}

TEST(MxcMap, NetworkRefusals) {
  EXPECT_THAT(MapError(WithProcess(R"("version": "0.8.0", "network": {"defaultPolicy": "allow"})")),
              HasSubstr("allowLocalNetwork true"));
  EXPECT_THAT(MapError(WithProcess(R"("network": {"proxy": {"builtinTestServer": true}})")),
              HasSubstr("--allow-testing-features"));
  EXPECT_THAT(MapError(WithProcess(R"("network": {"proxy": {"builtinTestServer": true}})"),
                       MxcMapOptions{.allow_testing_features = true}),
              HasSubstr("no built-in test proxy"));
  EXPECT_THAT(MapError(WithProcess(R"("version": "0.8.0", "network": {"egress": {
                                      "allow": [{"to": [{"cidr": "10.0.0.0/8"}]}]}})")),
              HasSubstr("cannot be enforced"));
  EXPECT_THAT(MapError(WithProcess(R"("version": "0.8.0", "network": {"egress": {
                                      "default": "allow"}})")),
              HasSubstr("needs the host's network"));
  EXPECT_THAT(MapError(WithProcess(R"("version": "0.8.0", "network": {"ingress": {
                                      "hostLoopback": "allow"}})")),
              HasSubstr("cannot be enforced"));
}

}  // namespace
}  // namespace agentbox
