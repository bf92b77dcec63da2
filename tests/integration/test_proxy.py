#!/usr/bin/env python3
"""Integration tests of the egress proxy (issue 7, docs/network.md): `agentbox run --net
proxy` with --allow-domain, --deny-domain, --resolve and --allow-cidr, through the real binary.

The test process starts loopback-only servers (a plain HTTP server and a TCP echo server,
threads on 127.0.0.1:0); names are pointed at them with `--resolve NAME=127.0.0.1`, and
`--allow-cidr 127.0.0.1/32` lets the proxy reach loopback at all. Inside the sandbox,
proxy_client.py (copied into the test's directory and granted read-only) speaks HTTP through
HTTP_PROXY, CONNECT on 127.0.0.1:3128 and SOCKS5 on 127.0.0.1:1080. The same client run on
the host without the proxy is the control where one is cheap. ctest runs each class as root
and as uid 65534 (see run_suite.py).

    AGENTBOX=build/agentbox AGENTBOX_PROBES=build/tests/adversarial/probes \
        python3 tests/integration/test_proxy.py -v ProxyReach
"""
import http.server
import json
import os
import re
import shlex
import shutil
import socket
import sys
import threading
import unittest

sys.dont_write_bytecode = True  # no __pycache__ in the source tree
import harness  # noqa: E402

CLIENT_SOURCE = os.path.join(os.path.dirname(os.path.abspath(__file__)), "proxy_client.py")
LOOPBACK = "127.0.0.1/32"
# Every spelling that inet_aton (and so the C library's resolver) reads as 127.0.0.1.
LOOPBACK_SPELLINGS = ("127.0.0.1", "2130706433", "127.1", "0x7f.0.0.1", "017700000001",
                      "127.0.1")
NOT_LISTED = "is not on the allowlist (--allow-domain)"


class _HttpHandler(http.server.BaseHTTPRequestHandler):
    def do_GET(self):  # noqa: N802 (http.server's naming)
        self.server.seen.append({"path": self.path, "headers": list(self.headers.items())})
        body = f"{self.server.marker} {self.path}".encode()
        self.send_response(200)
        self.send_header("Content-Type", "text/plain")
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)

    def log_message(self, *args):
        pass


class Servers:
    """A plain HTTP server and a TCP echo server on the test process's loopback.

    http_port answers GET with "<marker> <path>" and records what it saw (self.http_seen);
    echo_port answers each connection with "<marker>:" + everything it read, after the
    client's half-close; echo_accepted counts its connections.
    """

    def __init__(self, test):
        self.marker = harness.unique("agentbox-proxy-server")
        self.httpd = http.server.ThreadingHTTPServer(("127.0.0.1", 0), _HttpHandler)
        self.httpd.daemon_threads = True
        self.httpd.seen = []
        self.httpd.marker = self.marker
        self.http_port = self.httpd.server_address[1]
        threading.Thread(target=self.httpd.serve_forever, daemon=True).start()
        test.addCleanup(self.httpd.server_close)
        test.addCleanup(self.httpd.shutdown)

        self.echo = socket.socket()
        self.echo.bind(("127.0.0.1", 0))
        self.echo.listen(16)
        self.echo_port = self.echo.getsockname()[1]
        self._echo_peers = []  # the peer port of each accepted connection, in accept order
        self._probes = 0  # connections of echo_accepted's own among them
        self._echo_changed = threading.Condition()
        echo_thread = threading.Thread(target=self._echo_loop, daemon=True)
        echo_thread.start()
        test.addCleanup(harness.stop_listener, self.echo, echo_thread)

    @property
    def http_seen(self):
        return self.httpd.seen

    def _echo_loop(self):
        while True:
            try:
                conn, peer = self.echo.accept()
            except OSError:
                return
            with self._echo_changed:
                self._echo_peers.append(peer[1])
                self._echo_changed.notify_all()
            threading.Thread(target=self._echo_one, args=(conn,), daemon=True).start()

    @property
    def echo_accepted(self):
        """Connections the echo server has had, including any still in its accept queue.

        A connection the client saw established may not be accepted yet when the test looks,
        so this connects once more itself and waits for that probe to be accepted: the queue
        is first in, first out, so every earlier connection has been counted by then.
        """
        with self._echo_changed:
            start = len(self._echo_peers)
        with socket.create_connection(("127.0.0.1", self.echo_port), harness.TIMEOUT) as probe:
            port = probe.getsockname()[1]
        with self._echo_changed:
            accepted = self._echo_changed.wait_for(
                lambda: port in self._echo_peers[start:], harness.TIMEOUT)
            if not accepted:
                raise AssertionError("the echo server did not accept the counting probe")
            before = start + self._echo_peers[start:].index(port)
            self._probes += 1
            return before - (self._probes - 1)

    def _echo_one(self, conn):
        with conn:
            conn.settimeout(harness.TIMEOUT)
            data = b""
            try:
                while True:
                    chunk = conn.recv(65536)
                    if not chunk:
                        break
                    data += chunk
                conn.sendall(self.marker.encode() + b":" + data)
            except OSError:
                pass

    def echoed(self, message):
        return f"{self.marker}:{message}"


def proxy_test(cls):
    """Gives a test class the servers, the client and the helpers below (the classes must
    read `class X(harness.SandboxTest):` for ctest to find them, so no shared base class)."""
    for name, value in vars(_ProxyHelpers).items():
        if not name.startswith("__"):
            setattr(cls, name, value)
    return cls


class _ProxyHelpers:
    def setUp(self):
        harness.SandboxTest.setUp(self)
        self.servers = Servers(self)
        self.client = os.path.join(self.mkdir("client"), "proxy_client.py")
        shutil.copyfile(CLIENT_SOURCE, self.client)
        os.chmod(self.client, 0o644)

    # Running the client ---------------------------------------------------------------------

    def box(self, actions, *options, code=0, **kwargs):
        """The client inside `agentbox run --json OPTIONS`; returns (results, result object)."""
        out = self.run_json(["python3", self.client, json.dumps(actions)],
                            "--ro", os.path.dirname(self.client), *options, **kwargs)
        self.assertEqual(out.get("exit_code"), code, json.dumps(out, indent=1))
        try:
            results = json.loads(out["stdout"])
        except ValueError:
            self.fail(f"the client printed no JSON: {json.dumps(out, indent=1)}")
        self.assertEqual(len(results), len(actions))
        return results, out

    def on_host(self, actions):
        """The control: the same client on the host, with no proxy in its environment."""
        env = {k: v for k, v in self.env().items() if not k.lower().endswith("_proxy")}
        r = self.assertRan(self.host(["python3", self.client, json.dumps(actions)], env=env))
        return json.loads(r.stdout)

    def web(self, name="web.test"):
        return f"http://{name}:{self.servers.http_port}/hello?q=1"

    def pinned(self, *names, cidr=True):
        """--resolve NAME=127.0.0.1 for each name, and --allow-cidr 127.0.0.1/32."""
        options = []
        for name in names:
            options += ["--resolve", f"{name}=127.0.0.1"]
        if cidr:
            options += ["--allow-cidr", LOOPBACK]
        return options

    def proxy(self, *allow, deny=(), pins=("web.test",), cidr=True):
        options = ["--net", "proxy"]
        for d in allow:
            options += ["--allow-domain", d]
        for d in deny:
            options += ["--deny-domain", d]
        return options + self.pinned(*pins, cidr=cidr)

    # Assertions --------------------------------------------------------------------------------

    def assertReachedHttp(self, result, path="/hello?q=1"):
        self.assertEqual(result, {"status": 200, "body": f"{self.servers.marker} {path}"})

    def assertEchoed(self, result, message, key="echo"):
        self.assertEqual(result.get(key), self.servers.echoed(message), result)

    def assertForbidden(self, result, *reason_parts):
        """403 from the proxy whose body names the rule."""
        self.assertEqual(result.get("status"), 403, result)
        self.assertIn("agentbox egress proxy:", result["body"])
        for part in reason_parts:
            self.assertIn(part, result["body"])

    def assertSocksRefused(self, result):
        self.assertEqual((result.get("method"), result.get("reply")), ("0500", 2), result)
        self.assertNotIn("echo", result)

    def connections(self, out):
        return out["network"]["connections"]

    def assertNothingReachedServers(self):
        self.assertEqual(self.servers.http_seen, [])
        self.assertEqual(self.servers.echo_accepted, 0)


# cites SEC-25, SEC-29
@proxy_test
class ProxyReach(harness.SandboxTest):
    """An allowed name reaches the test's servers over HTTP, CONNECT and SOCKS5."""

    def test_http_through_http_proxy(self):
        results, out = self.box([["http", self.web()]],
                                *self.proxy(f"web.test:{self.servers.http_port}"))
        self.assertReachedHttp(results[0])
        self.assertEqual(self.connections(out), [
            {"protocol": "http", "host": "web.test", "port": self.servers.http_port,
             "allowed": True, "address": "127.0.0.1"}])
        # The origin server got an origin-form request for the URL's authority.
        self.assertEqual(self.servers.http_seen[0]["path"], "/hello?q=1")
        self.assertIn(("Host", f"web.test:{self.servers.http_port}"),
                      self.servers.http_seen[0]["headers"])
        # Control: the same request without --net proxy goes nowhere.
        results, _ = self.box([["http", self.web()]])
        self.assertIn("error", results[0])
        self.assertEqual(len(self.servers.http_seen), 1)

    def test_connect_tunnel(self):
        port = self.servers.echo_port
        results, out = self.box([["connect", "web.test", port, "through CONNECT"]],
                                *self.proxy(f"web.test:{port}"))
        self.assertEqual(results[0]["status"], 200)
        self.assertEchoed(results[0], "through CONNECT")
        self.assertEqual(self.connections(out), [
            {"protocol": "connect", "host": "web.test", "port": port, "allowed": True,
             "address": "127.0.0.1"}])

    def test_socks5_with_a_remote_name(self):
        port = self.servers.echo_port
        results, out = self.box([["socks", "web.test", port, "through SOCKS5"]],
                                *self.proxy(f"web.test:{port}"))
        self.assertEqual((results[0]["method"], results[0]["reply"]), ("0500", 0))
        self.assertEchoed(results[0], "through SOCKS5")
        self.assertEqual(self.connections(out), [
            {"protocol": "socks5", "host": "web.test", "port": port, "allowed": True,
             "address": "127.0.0.1"}])

    def test_names_match_case_insensitively(self):
        port = self.servers.echo_port
        results, _ = self.box([["connect", "WEB.Test", port, "a"],
                               ["socks", "web.TEST.", port, "b"]],
                              *self.proxy(f"Web.Test:{port}"))
        self.assertEchoed(results[0], "a")
        self.assertEchoed(results[1], "b")

    # cites SEC-29: hop-by-hop and Proxy-* headers never reach the origin server.
    def test_proxy_and_hop_by_hop_headers_are_stripped(self):
        port = self.servers.http_port
        request = (f"GET http://web.test:{port}/h HTTP/1.1\r\n"
                   f"Host: web.test:{port}\r\n"
                   "Proxy-Authorization: Basic c2VjcmV0OnNlY3JldA==\r\n"
                   "Proxy-Connection: keep-alive\r\n"
                   "Connection: X-Hop\r\n"
                   "X-Hop: 1\r\n"
                   "X-Kept: yes\r\n\r\n")
        results, _ = self.box([["raw_http", request]], *self.proxy(f"web.test:{port}"))
        self.assertReachedHttp(results[0], "/h")
        names = [k.lower() for k, _ in self.servers.http_seen[0]["headers"]]
        self.assertIn("x-kept", names)
        for stripped in ("proxy-authorization", "proxy-connection", "x-hop"):
            self.assertNotIn(stripped, names)

    # cites SEC-29: strict parsers; a malformed request is answered and recorded, not passed on.
    def test_malformed_requests_are_refused(self):
        port = self.servers.http_port
        results, out = self.box([
            ["raw_http", "hello\r\n\r\n"],
            ["raw_http", f"GET http://web.test:{port}/ HTTP/1.1\nHost: web.test\n\n"],
            ["raw_http", f"GET http://user:pw@web.test:{port}/ HTTP/1.1\r\n\r\n"],
            ["raw_http", f"GET /origin-form HTTP/1.1\r\nHost: web.test:{port}\r\n\r\n"],
            ["socks_greeting", "050102"],  # offers only username/password
        ], *self.proxy(f"web.test:{port}"))
        for result in results[:4]:
            self.assertEqual(result["status"], 400, result)
        self.assertEqual(results[4]["answer"], "05ff")
        self.assertEqual(self.servers.http_seen, [])
        records = self.connections(out)
        self.assertEqual(len(records), 5, records)
        for record in records:
            self.assertIs(record["allowed"], False)
            self.assertTrue(record["reason"], record)


# cites SEC-26, SEC-27
@proxy_test
class ProxyRules(harness.SandboxTest):
    """What the allowlist admits: wildcards, deny, ports, IP literals, refused ranges."""

    def test_wildcard_matches_subdomains_not_the_bare_suffix(self):
        port = self.servers.echo_port
        names = ("api.svc.test", "deep.api.svc.test", "svc.test", "evilsvc.test")
        results, _ = self.box([["connect", n, port, n] for n in names] +
                              [["socks", "svc.test", port, "bare"]],
                              *self.proxy(f"*.svc.test:{port}", pins=names))
        self.assertEchoed(results[0], "api.svc.test")
        self.assertEchoed(results[1], "deep.api.svc.test")
        self.assertForbidden(results[2], f"svc.test:{port} {NOT_LISTED}")
        self.assertForbidden(results[3], f"evilsvc.test:{port} {NOT_LISTED}")
        self.assertSocksRefused(results[4])
        self.assertEqual(self.servers.echo_accepted, 2)

    def test_deny_wins_over_allow(self):
        port = self.servers.echo_port
        names = ("api.svc.test", "bad.svc.test", "web.test")
        results, out = self.box([
            ["connect", "api.svc.test", port, "allowed"],
            ["connect", "bad.svc.test", port, "x"],
            ["socks", "bad.svc.test", port, "x"],
            ["connect", "web.test", port, "x"],
        ], *self.proxy(f"*.svc.test:{port}", f"web.test:{port}",
                       deny=("bad.svc.test", "web.test"), pins=names))
        self.assertEchoed(results[0], "allowed")
        self.assertForbidden(results[1], "denied by --deny-domain bad.svc.test")
        self.assertSocksRefused(results[2])
        # A deny entry without a port refuses every port, even one an allow entry names.
        self.assertForbidden(results[3], "denied by --deny-domain web.test")
        self.assertEqual(self.servers.echo_accepted, 1)
        reasons = [c.get("reason", "") for c in self.connections(out)]
        self.assertEqual(reasons[1:], ["denied by --deny-domain bad.svc.test"] * 2 +
                         ["denied by --deny-domain web.test"])

    # cites SEC-26: a deny entry for an address denies it however the request spells it (or
    # is refused as an entry); it must never be silently ineffective.
    def test_deny_entry_for_an_address_in_any_spelling(self):
        port = self.servers.echo_port
        for spelling in LOOPBACK_SPELLINGS:
            with self.subTest(deny=spelling):
                r = self.run_box(["python3", self.client,
                                  json.dumps([["connect", "127.0.0.1", port, "x"],
                                              ["connect", spelling, port, "y"]])],
                                 "--json", "--ro", os.path.dirname(self.client), "--net", "proxy",
                                 "--allow-cidr", LOOPBACK, "--deny-domain", spelling)
                if r.returncode == 125:  # refused as an entry: fine, nothing ran
                    self.assertRefused(r)
                    continue
                results = json.loads(json.loads(r.stdout)["stdout"])
                for result in results:
                    self.assertForbidden(result, "denied by --deny-domain")
        self.assertEqual(self.servers.echo_accepted, 0)

    def test_unlisted_domain_is_refused(self):
        hport, eport = self.servers.http_port, self.servers.echo_port
        results, out = self.box([
            ["http", self.web("other.test")],
            ["connect", "other.test", eport, "x"],
            ["socks", "other.test", eport, "x"],
            ["http", self.web("web.test")],  # in the same run, the listed name goes through
        ], *self.proxy(f"web.test:{hport}", f"web.test:{eport}", pins=("web.test", "other.test")))
        self.assertForbidden(results[0], f"other.test:{hport} refused: other.test:{hport} "
                             f"{NOT_LISTED}")
        self.assertForbidden(results[1], f"other.test:{eport} {NOT_LISTED}")
        self.assertSocksRefused(results[2])
        self.assertReachedHttp(results[3])
        self.assertEqual(len(self.servers.http_seen), 1)
        self.assertEqual(self.servers.echo_accepted, 0)
        self.assertEqual([(c["protocol"], c["host"], c["allowed"]) for c in self.connections(out)],
                         [("http", "other.test", False), ("connect", "other.test", False),
                          ("socks5", "other.test", False), ("http", "web.test", True)])

    def test_an_entry_without_a_port_allows_only_80_and_443(self):
        hport, eport = self.servers.http_port, self.servers.echo_port
        why = f"port {hport} of web.test is not allowed (an entry without :port allows 80 and 443)"
        results, _ = self.box([
            ["http", self.web()],
            ["connect", "web.test", eport, "x"],
            ["socks", "web.test", eport, "x"],
        ], *self.proxy("web.test"))
        self.assertForbidden(results[0], why)
        self.assertForbidden(results[1], f"port {eport} of web.test is not allowed")
        self.assertSocksRefused(results[2])
        self.assertNothingReachedServers()
        # With :PORT that port is allowed, and only that one.
        results, _ = self.box([["http", self.web()], ["connect", "web.test", eport, "x"]],
                              *self.proxy(f"web.test:{hport}"))
        self.assertReachedHttp(results[0])
        self.assertForbidden(results[1], f"port {eport} of web.test is not allowed")
        self.assertEqual(self.servers.echo_accepted, 0)

    # cites SEC-26: every inet_aton spelling is an IP literal, allowed only by an exact entry
    # or a CIDR, never by a name.
    def test_ip_literals_need_an_allow_entry(self):
        port = self.servers.echo_port
        actions = []
        for spelling in LOOPBACK_SPELLINGS:
            actions += [["connect", spelling, port, spelling], ["socks", spelling, port, spelling]]
        actions.append(["socks", "127.0.0.1", port, "atyp1", 1])
        # No --allow-cidr: the name web.test is allowed, no address is.
        results, out = self.box(actions, *self.proxy(f"web.test:{port}", cidr=False))
        for spelling, http_result, socks_result in zip(LOOPBACK_SPELLINGS, results[0::2],
                                                       results[1::2]):
            with self.subTest(spelling=spelling):
                self.assertForbidden(http_result, "the IP address 127.0.0.1 is not allowed")
                self.assertSocksRefused(socks_result)
        self.assertSocksRefused(results[-1])
        self.assertEqual(self.servers.echo_accepted, 0)
        for record in self.connections(out):
            self.assertEqual((record["host"], record["allowed"]), ("127.0.0.1", False))
            self.assertNotIn("address", record)
        # Control: they are the server's address; an --allow-cidr that covers it lets each in.
        results, _ = self.box(actions, *self.proxy(f"web.test:{port}"))
        for spelling, result in zip(LOOPBACK_SPELLINGS, results[0::2]):
            self.assertEchoed(result, spelling)
        self.assertEchoed(results[-1], "atyp1")

    def test_an_exact_ip_entry_passes_the_name_check_only(self):
        port = self.servers.echo_port
        # An entry naming the address admits it as a destination; the range check (loopback)
        # still applies after, so without --allow-cidr it is refused there, for another reason.
        results, _ = self.box([["connect", "127.0.0.1", port, "x"],
                               ["connect", "127.1", port, "y"]],
                              "--net", "proxy", "--allow-domain", f"127.0.0.1:{port}")
        for result in results:
            self.assertForbidden(result, "resolves to 127.0.0.1, a loopback address")
        self.assertEqual(self.servers.echo_accepted, 0)

    def test_metadata_address_is_refused(self):
        results, out = self.box([
            ["http", "http://meta.test/latest/meta-data/"],
            ["connect", "meta.test", 443, "x"],
            ["socks", "meta.test", 80, "x"],
            ["connect", "169.254.169.254", 80, "x"],
            ["connect", "meta6.test", 80, "x"],
            ["connect", "::ffff:169.254.169.254", 80, "x"],
        ], "--net", "proxy", "--resolve", "meta.test=169.254.169.254", "--resolve",
            "meta6.test=::ffff:169.254.169.254", "--allow-domain", "meta.test",
            "--allow-domain", "meta6.test", "--allow-domain", "169.254.169.254",
            "--allow-cidr", LOOPBACK)
        for result in results[0:2] + results[3:4]:
            # 403, a refusal: a 502 would mean the proxy tried to connect.
            self.assertForbidden(result, "169.254.169.254, a link-local (cloud metadata) address")
        self.assertSocksRefused(results[2])
        self.assertForbidden(results[4], "IPv4-mapped link-local")
        # An IPv6 literal cannot be an --allow-domain entry: refused as a literal.
        self.assertForbidden(results[5], "the IP address ::ffff:169.254.169.254 is not allowed")
        for record in self.connections(out):
            self.assertIs(record["allowed"], False, record)
            self.assertRegex(record["reason"], "link-local|is not allowed")
            self.assertNotIn("address", record)

    def test_loopback_and_private_addresses_need_allow_cidr(self):
        port = self.servers.http_port
        options = ["--net", "proxy", "--allow-domain", f"web.test:{port}", "--allow-domain",
                   f"lan.test:{port}", "--resolve", "web.test=127.0.0.1", "--resolve",
                   "lan.test=10.0.0.1"]
        results, out = self.box([["http", self.web()], ["http", self.web("lan.test")]], *options)
        self.assertForbidden(results[0], "resolves to 127.0.0.1, a loopback address "
                                         "(allow it with --allow-cidr)")
        self.assertForbidden(results[1], "resolves to 10.0.0.1, a private address")
        self.assertEqual(self.servers.http_seen, [])
        self.assertEqual([c["allowed"] for c in self.connections(out)], [False, False])
        # Control: --allow-cidr for loopback lets web.test in (and only loopback).
        results, _ = self.box([["http", self.web()], ["http", self.web("lan.test")]], *options,
                              "--allow-cidr", LOOPBACK)
        self.assertReachedHttp(results[0])
        self.assertForbidden(results[1], "a private address")


# cites SEC-25, SEC-30
@proxy_test
class ProxyContainment(harness.SandboxTest):
    """The bridge is the only way out: no direct sockets, no DNS, TCP only to the bridge."""

    def test_direct_connect_to_a_host_server_fails(self):
        actions = [["direct", "127.0.0.1", self.servers.http_port],
                   ["direct", "127.0.0.1", self.servers.echo_port]]
        results, out = self.box(actions, *self.proxy(f"web.test:{self.servers.http_port}",
                                                     f"web.test:{self.servers.echo_port}"))
        # Landlock (ABI >= 4) refuses the connect; below it, the sandbox's own loopback has
        # nothing on that port.
        expected = "EACCES" if out["enforcement"]["landlock_abi"] >= 4 else "ECONNREFUSED"
        self.assertEqual([r["result"] for r in results], [expected] * 2)
        self.assertNothingReachedServers()
        self.assertEqual(self.connections(out), [])
        # Control: from the host the same client reaches both servers directly.
        self.assertEqual([r["result"] for r in self.on_host(actions)], ["ok", "ok"])
        self.assertEqual(self.servers.echo_accepted, 1)

    def test_direct_connect_to_an_external_address_fails(self):
        results, out = self.box([["direct", "1.1.1.1", 443], ["direct", "1.1.1.1", 3128],
                                 ["udp", "1.1.1.1", 53], ["direct", "127.0.0.1", 3128]],
                                *self.proxy("web.test"))
        landlock = out["enforcement"]["landlock_abi"] >= 4
        self.assertEqual(results[0]["result"], "EACCES" if landlock else "ENETUNREACH")
        # Port 3128 passes Landlock; the network namespace has no route anywhere.
        self.assertEqual(results[1]["result"], "ENETUNREACH")
        self.assertEqual(results[2]["result"], "ENETUNREACH")  # UDP: the netns alone
        self.assertEqual(results[3]["result"], "ok")  # the bridge itself

    def test_no_dns_inside(self):
        results, _ = self.box([["dns", "example.com"], ["dns", "web.test"],
                               ["udp", "8.8.8.8", 53], ["dns", "localhost"]],
                              *self.proxy("example.com", "web.test"))
        self.assertNotEqual(results[0]["result"], "ok", results[0])
        # Pins are the proxy's: inside, the pinned name resolves to nothing either.
        self.assertNotEqual(results[1]["result"], "ok", results[1])
        self.assertEqual(results[2]["result"], "ENETUNREACH")
        self.assertEqual(results[3]["result"], "ok")  # /etc/hosts still works

    def test_tcp_is_limited_to_the_bridge_ports(self):
        # A listener inside the sandbox, on a port the kernel picks (listen() without bind()):
        # connecting to it is refused by Landlock (ABI >= 4), which handles TCP connect in
        # proxy mode and allows only 3128 and 1080; explicit TCP bind is denied outright.
        results, out = self.box([["bind_and_listen"]], *self.proxy("web.test"))
        if out["enforcement"]["landlock_abi"] < 4:
            self.skipTest("Landlock ABI < 4 cannot restrict TCP on this kernel")
        self.assertEqual(results[0], {"bind": "EACCES", "listen": "ok", "connect": "EACCES"})
        # Control: with the network blocked (no Landlock TCP rules), both work.
        results, _ = self.box([["bind_and_listen"]])
        self.assertEqual(results[0], {"bind": "ok", "listen": "ok", "connect": "ok"})

    # cites SEC-30
    def test_bridge_listeners_exist_before_the_program_and_are_not_its(self):
        results, _ = self.box([["socket_fds"], ["tcp_listeners"]], *self.proxy("web.test"))
        self.assertEqual(results[0], {"sockets": 0})
        self.assertEqual(results[1], {"ports": [1080, 3128]})
        # Control: with the network blocked there is no bridge.
        results, _ = self.box([["tcp_listeners"], ["direct", "127.0.0.1", 3128],
                               ["direct", "127.0.0.1", 1080]])
        self.assertEqual(results[0], {"ports": []})
        self.assertEqual([r["result"] for r in results[1:]], ["ECONNREFUSED"] * 2)


@proxy_test
class ProxyEnvironment(harness.SandboxTest):
    """The proxy variables: set in proxy mode, absent otherwise, not overridable."""

    EXPECTED = {
        "HTTP_PROXY": "http://127.0.0.1:3128", "http_proxy": "http://127.0.0.1:3128",
        "HTTPS_PROXY": "http://127.0.0.1:3128", "https_proxy": "http://127.0.0.1:3128",
        "ALL_PROXY": "socks5h://127.0.0.1:1080", "all_proxy": "socks5h://127.0.0.1:1080",
        "NO_PROXY": "localhost,127.0.0.1", "no_proxy": "localhost,127.0.0.1",
    }

    def test_variables_in_proxy_mode(self):
        results, _ = self.box([["env"]], *self.proxy("web.test"))
        self.assertEqual(results[0]["env"], self.EXPECTED)

    def test_no_variables_when_blocked_or_allowed(self):
        for options in ((), ("--net", "block"), ("--net", "allow")):
            with self.subTest(options=options):
                results, _ = self.box([["env"]], *options)
                self.assertEqual(results[0]["env"], {})

    def test_caller_cannot_point_them_elsewhere(self):
        results, _ = self.box([["env"]], *self.proxy("web.test"), "--env",
                              "HTTP_PROXY=http://evil.test:1", "--env", "https_proxy=http://x:1",
                              "--env", "No_Proxy=*", "--env", "FTP_PROXY=http://x:1")
        self.assertEqual(results[0]["env"], self.EXPECTED)
        # Control: --env does set variables otherwise.
        results, _ = self.box([["env"]], "--env", "HTTP_PROXY=http://evil.test:1")
        self.assertEqual(results[0]["env"], {"HTTP_PROXY": "http://evil.test:1"})


@proxy_test
class ProxyReport(harness.SandboxTest):
    """--json: every decision of the proxy in network.connections."""

    def test_allowed_and_refused_connections_are_listed_in_order(self):
        hport, eport = self.servers.http_port, self.servers.echo_port
        results, out = self.box([
            ["http", self.web()],
            ["http", self.web("nope.test")],
            ["connect", "web.test", eport, "x"],
            ["socks", "web.test", hport, "x"],
        ], *self.proxy(f"web.test:{hport}", f"web.test:{eport}"))
        self.assertReachedHttp(results[0])
        self.assertEqual(self.connections(out), [
            {"protocol": "http", "host": "web.test", "port": hport, "allowed": True,
             "address": "127.0.0.1"},
            {"protocol": "http", "host": "nope.test", "port": hport, "allowed": False,
             "reason": f"nope.test:{hport} {NOT_LISTED}"},
            {"protocol": "connect", "host": "web.test", "port": eport, "allowed": True,
             "address": "127.0.0.1"},
            {"protocol": "socks5", "host": "web.test", "port": hport, "allowed": True,
             "address": "127.0.0.1"},
        ])

    def test_report_is_bounded(self):
        # A program that opens connections in a loop cannot grow the report without end; the
        # overflow is counted in one last entry.
        results, out = self.box([["flood", 1100]], *self.proxy("web.test"))
        self.assertEqual(results[0], {"sent": 1100})
        records = self.connections(out)
        self.assertEqual(len(records), 1001)
        self.assertTrue(all(r["host"].startswith("flood") for r in records[:1000]))
        self.assertIn("100 more connections not listed", records[-1]["reason"])

    def test_effective_policy_shows_the_rules(self):
        _, out = self.box([], "--net", "proxy", "--allow-domain", "*.Example.COM",
                          "--allow-domain", "web.test:8080", "--deny-domain", "bad.example.com",
                          "--resolve", "web.test=127.0.0.1", "--allow-cidr", LOOPBACK)
        self.assertEqual(out["policy"]["network"], {"proxy": {
            "allowDomains": ["*.example.com", "web.test:8080"],
            "denyDomains": ["bad.example.com"],
            "allowCidrs": [LOOPBACK],
            "resolve": {"web.test": "127.0.0.1"}}})
        self.assertEqual(self.connections(out), [])

    def test_block_mode_reports_no_connections(self):
        _, out = self.box([["direct", "127.0.0.1", 3128]])
        self.assertEqual(out["policy"]["network"], "block")
        self.assertEqual(self.connections(out), [])

    def test_explain_names_the_bridge(self):
        r = self.assertRan(self.agentbox("run", "--explain", *self.proxy("web.test"), "--",
                                         "true"))
        self.assertIn("egress proxy bridge on 127.0.0.1:3128 (HTTP) and :1080 (SOCKS5)", r.stdout)


# cites SEC-25
@proxy_test
class ProxyBlock(harness.SandboxTest):
    """--net block (the default) still blocks everything: no bridge, no direct way out."""

    def test_block_blocks_everything(self):
        actions = [["direct", "127.0.0.1", 3128], ["direct", "127.0.0.1", 1080],
                   ["direct", "127.0.0.1", self.servers.http_port], ["direct", "1.1.1.1", 443],
                   ["dns", "example.com"], ["http", self.web()]]
        for options in ((), ("--net", "block")):
            with self.subTest(options=options):
                results, out = self.box(actions, *options)
                self.assertEqual([r.get("result") for r in results[:4]],
                                 ["ECONNREFUSED", "ECONNREFUSED", "ECONNREFUSED", "ENETUNREACH"])
                self.assertNotEqual(results[4]["result"], "ok")
                self.assertIn("error", results[5])  # no proxy variable: a direct try, refused
                self.assertIs(out["enforcement"]["network_namespace"], True)
        self.assertNothingReachedServers()
        # Control: the host reaches the HTTP server.
        self.assertEqual(self.on_host([["direct", "127.0.0.1", self.servers.http_port]]),
                         [{"result": "ok"}])


# cites SEC-28, SEC-3
@proxy_test
class ProxyCeiling(harness.SandboxTest):
    """--ceiling: a request's domains, pins and ranges are kept only inside the operator's."""

    def ceiling(self, proxy, **extra):
        doc = {"filesystem": {"readonly": [os.path.dirname(self.client)]},
               "network": {"proxy": proxy}, **extra}
        return ["--ceiling", self.write_json("ceiling.json", doc)]

    def decisions(self, out):
        return [{k: d[k] for k in ("kind", "path", "asked", "granted")} for d in out["decisions"]]

    def test_domain_outside_the_ceiling_is_dropped_with_a_decision(self):
        hport = self.servers.http_port
        ceiling = self.ceiling({"allowDomains": [f"web.test:{hport}"],
                                "allowCidrs": [LOOPBACK],
                                "resolve": {"web.test": "127.0.0.1", "other.test": "127.0.0.1"}})
        results, out = self.box([["http", self.web()], ["http", self.web("other.test")]],
                                *ceiling, *self.proxy(f"web.test:{hport}", f"other.test:{hport}",
                                                      pins=("web.test", "other.test")))
        self.assertIn({"kind": "domain", "path": f"other.test:{hport}", "asked": "allow",
                       "granted": "none"}, self.decisions(out))
        self.assertEqual(out["policy"]["network"]["proxy"]["allowDomains"], [f"web.test:{hport}"])
        self.assertReachedHttp(results[0])
        self.assertForbidden(results[1], NOT_LISTED)
        # A wildcard request is kept only where a ceiling entry covers it all.
        _, out = self.box([], *ceiling, "--net", "proxy", "--allow-domain", "*.test")
        self.assertIn({"kind": "domain", "path": "*.test", "asked": "allow", "granted": "none"},
                      self.decisions(out))
        self.assertEqual(out["policy"]["network"]["proxy"]["allowDomains"], [])

    def test_pins_and_ranges_outside_the_ceiling_are_dropped(self):
        hport = self.servers.http_port
        # The operator allows the name, but pins nothing and allows no address range.
        ceiling = self.ceiling({"allowDomains": [f"web.test:{hport}"]})
        results, out = self.box([["http", self.web()]], *ceiling,
                                *self.proxy(f"web.test:{hport}"))
        self.assertIn({"kind": "domain", "path": "web.test=127.0.0.1", "asked": "resolve",
                       "granted": "none"}, self.decisions(out))
        self.assertIn({"kind": "domain", "path": LOOPBACK, "asked": "allow", "granted": "none"},
                      self.decisions(out))
        proxy = out["policy"]["network"]["proxy"]
        self.assertNotIn("resolve", proxy)
        self.assertNotIn("allowCidrs", proxy)
        self.assertNotEqual(results[0].get("status"), 200, results[0])
        self.assertEqual(self.servers.http_seen, [])
        # A narrower range and the same pin as the operator's are kept, a wider range is not.
        ceiling = self.ceiling({"allowDomains": [f"web.test:{hport}"],
                                "allowCidrs": ["127.0.0.0/8"],
                                "resolve": {"web.test": "127.0.0.1"}})
        results, out = self.box([["http", self.web()]], *ceiling,
                                *self.proxy(f"web.test:{hport}"), "--allow-cidr", "0.0.0.0/0",
                                "--resolve", "evil.test=127.0.0.1")
        self.assertEqual(sorted(d["path"] for d in out["decisions"]),
                         ["0.0.0.0/0", "evil.test=127.0.0.1"])
        # (The operator's own range may come along; the request's wider one never does.)
        self.assertLessEqual(set(out["policy"]["network"]["proxy"]["allowCidrs"]),
                             {LOOPBACK, "127.0.0.0/8"})
        self.assertEqual(out["policy"]["network"]["proxy"]["resolve"], {"web.test": "127.0.0.1"})
        self.assertReachedHttp(results[0])

    def test_the_ceilings_pins_and_ranges_apply_to_a_narrower_request(self):
        # The operator pins web.test to an address only its allowCidrs admit. A request that
        # asks for the name alone (as MCP run_code can: it has no way to ask for ranges) gets
        # the operator's pin, and must get the range that makes the pin usable, as a request
        # for --net allow does (test_network_allow_request_is_narrowed_to_the_ceiling).
        hport = self.servers.http_port
        ceiling = self.ceiling({"allowDomains": [f"web.test:{hport}"], "allowCidrs": [LOOPBACK],
                                "resolve": {"web.test": "127.0.0.1"}})
        results, out = self.box([["http", self.web()]], *ceiling, "--net", "proxy",
                                "--allow-domain", f"web.test:{hport}")
        self.assertEqual(out["decisions"], [])
        self.assertEqual(out["policy"]["network"]["proxy"].get("resolve"),
                         {"web.test": "127.0.0.1"})
        self.assertReachedHttp(results[0])

    def test_a_request_pin_cannot_redirect_an_allowed_name(self):
        hport = self.servers.http_port
        ceiling = self.ceiling({"allowDomains": [f"web.test:{hport}"],
                                "allowCidrs": [LOOPBACK],
                                "resolve": {"web.test": "127.0.0.2"}})
        _, out = self.box([], *ceiling, "--net", "proxy", "--allow-domain", f"web.test:{hport}",
                          "--resolve", "web.test=127.0.0.1")
        self.assertIn({"kind": "domain", "path": "web.test=127.0.0.1", "asked": "resolve",
                       "granted": "none"}, self.decisions(out))
        self.assertEqual(out["policy"]["network"]["proxy"]["resolve"], {"web.test": "127.0.0.2"})

    def test_network_allow_request_is_narrowed_to_the_ceiling(self):
        hport = self.servers.http_port
        ceiling = self.ceiling({"allowDomains": [f"web.test:{hport}"], "allowCidrs": [LOOPBACK],
                                "resolve": {"web.test": "127.0.0.1"}})
        results, out = self.box([["env"], ["http", self.web()], ["direct", "127.0.0.1", hport]],
                                *ceiling, "--net", "allow")
        self.assertIn({"kind": "network", "path": "network", "asked": "allow",
                       "granted": "proxy"}, self.decisions(out))
        self.assertEqual(results[0]["env"]["HTTP_PROXY"], "http://127.0.0.1:3128")
        self.assertReachedHttp(results[1])
        self.assertNotEqual(results[2]["result"], "ok")

    def test_block_ceiling_blocks_a_proxy_request(self):
        ceiling = ["--ceiling", self.write_json("ceiling.json", {
            "filesystem": {"readonly": [os.path.dirname(self.client)]}, "network": "block"})]
        results, out = self.box([["env"], ["direct", "127.0.0.1", 3128]], *ceiling,
                                *self.proxy(f"web.test:{self.servers.http_port}"))
        self.assertIn({"kind": "network", "path": "network", "asked": "proxy",
                       "granted": "block"}, self.decisions(out))
        self.assertEqual(results, [{"env": {}}, {"result": "ECONNREFUSED"}])

    def test_environment_ceiling(self):
        # AGENTBOX_NETWORK=proxy with AGENTBOX_ALLOW_DOMAINS is a ceiling like --ceiling's.
        env = self.env(AGENTBOX_NETWORK="proxy", AGENTBOX_ALLOW_DOMAINS="web.test,*.pypi.org",
                       AGENTBOX_READONLY_PATHS=os.path.dirname(self.client))
        results, out = self.box([["connect", "other.test", 443, "x"]], "--net", "proxy",
                                "--allow-domain", "files.pypi.org", "--allow-domain",
                                "other.test", env=env)
        self.assertEqual(self.decisions(out), [{"kind": "domain", "path": "other.test",
                                                "asked": "allow", "granted": "none"}])
        self.assertEqual(out["policy"]["network"]["proxy"]["allowDomains"], ["files.pypi.org"])
        self.assertForbidden(results[0], "other.test:443 " + NOT_LISTED)

    def test_policy_file_proxy_network(self):
        hport = self.servers.http_port
        policy = self.write_json("policy.json", {"network": {"proxy": {
            "allowDomains": [f"web.test:{hport}"], "allowCidrs": [LOOPBACK],
            "resolve": {"web.test": "127.0.0.1"}}}})
        results, _ = self.box([["http", self.web()]], "--policy", policy)
        self.assertReachedHttp(results[0])


class UpstreamProxy:
    """A keep-alive HTTP proxy stub on the test's loopback, standing for the proxy an MXC
    config names: it answers every request head it reads with 200 "via-upstream <request
    line>" (keeping the connection open) and records each request line in self.seen."""

    def __init__(self, test):
        self.seen = []
        self.listener = socket.socket()
        self.listener.bind(("127.0.0.1", 0))
        self.listener.listen(16)
        self.port = self.listener.getsockname()[1]
        accept_thread = threading.Thread(target=self._accept, daemon=True)
        accept_thread.start()
        test.addCleanup(harness.stop_listener, self.listener, accept_thread)

    def _accept(self):
        while True:
            try:
                conn, _ = self.listener.accept()
            except OSError:
                return
            threading.Thread(target=self._serve, args=(conn,), daemon=True).start()

    def _serve(self, conn):
        buf = b""
        with conn:
            conn.settimeout(harness.TIMEOUT)
            try:
                while True:
                    while b"\r\n\r\n" not in buf:
                        chunk = conn.recv(65536)
                        if not chunk:
                            return
                        buf += chunk
                    head, _, buf = buf.partition(b"\r\n\r\n")
                    line = head.split(b"\r\n", 1)[0].decode("latin-1")
                    self.seen.append(line)
                    body = f"via-upstream {line}".encode()
                    conn.sendall(b"HTTP/1.1 200 OK\r\nContent-Length: %d\r\n\r\n" % len(body)
                                 + body)
            except OSError:
                pass


# cites SEC-26, SEC-29
@proxy_test
class ProxyUpstream(harness.SandboxTest):
    """MXC configs that name their own proxy (network.proxy): requests that pass agentbox's
    host lists go unchanged to that proxy, which resolves and connects; SOCKS5 is not
    offered. `agentbox exec CONFIG` is the way in."""

    def exec_client(self, actions, upstream, **network):
        config = {"filesystem": {"readonlyPaths": [os.path.dirname(self.client)]},
                  "network": {"defaultPolicy": "block", "proxy": {"localhost": upstream.port},
                              **network},
                  "process": {"commandLine": "python3 " + shlex.quote(self.client) + " " +
                                             shlex.quote(json.dumps(actions))}}
        r = self.assertRan(self.agentbox("exec", self.write_json("mxc.json", config)))
        return json.loads(r.stdout.splitlines()[-1])

    def test_allowed_request_reaches_the_upstream_unchanged(self):
        upstream = UpstreamProxy(self)
        results = self.exec_client([["http", "http://allowed.test/a"],
                                    ["http", "http://other.test/b"],
                                    ["socks", "allowed.test", 80, "x"]],
                                   upstream, allowedHosts=["allowed.test"])
        self.assertEqual(results[0], {"status": 200,
                                      "body": "via-upstream GET http://allowed.test/a HTTP/1.1"})
        self.assertForbidden(results[1], "other.test:80 " + NOT_LISTED)
        # SOCKS5 is not offered in this mode: the connection closes (or is reset) unanswered.
        self.assertIn(results[2].get("method", results[2].get("error")), ("", "ECONNRESET"),
                      results[2])
        self.assertEqual(upstream.seen, ["GET http://allowed.test/a HTTP/1.1"])

    def test_every_request_on_a_connection_is_checked(self):
        # HTTP/1.1 keeps the connection to the proxy open: a second request on it, for a host
        # the config blocks or does not list, must be checked like the first (or the
        # connection closed), never passed to the upstream proxy unchecked.
        upstream = UpstreamProxy(self)
        first = "GET http://allowed.test/1 HTTP/1.1\r\nHost: allowed.test\r\n\r\n"
        blocked = "GET http://blocked.test/2 HTTP/1.1\r\nHost: blocked.test\r\n\r\n"
        other = "GET http://other.test/3 HTTP/1.1\r\nHost: other.test\r\n\r\n"
        results = self.exec_client([["keepalive", [first, blocked, other]],
                                    ["raw_http", first + blocked]],  # pipelined
                                   upstream, allowedHosts=["allowed.test"],
                                   blockedHosts=["blocked.test"])
        answers = results[0]["answers"]
        self.assertEqual(answers[0]["status"], 200)
        for answer in answers[1:]:
            self.assertNotIn("via-upstream", answer.get("body", ""), answers)
        self.assertNotIn("blocked.test", results[1].get("body", ""))
        # The first request went through (at least on the keep-alive connection); nothing else.
        self.assertIn("GET http://allowed.test/1 HTTP/1.1", upstream.seen)
        self.assertEqual(set(upstream.seen), {"GET http://allowed.test/1 HTTP/1.1"})


DOC = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "docs", "network.md")


class ProxyDocs(harness.SandboxTest):
    """docs/network.md: its policy examples are accepted as they are written."""

    def test_policy_examples_are_valid(self):
        with open(DOC) as f:
            blocks = re.findall(r"```json\n(.*?)```", f.read(), re.S)
        policies = [json.loads(b) for b in blocks if '"proxy"' in b and '"connections"' not in b]
        self.assertGreaterEqual(len(policies), 2)
        self.mkdir("project")  # the examples' ~/project
        for policy in policies:
            with self.subTest(policy=policy):
                path = self.write_json("policy.json", policy)
                r = self.assertRan(self.agentbox("run", "--explain", "--policy", path, "--",
                                                 "true"))
                self.assertIn("egress proxy bridge", r.stdout)


class ProxyFlags(harness.SandboxTest):
    """Proxy flags without --net proxy, and bad values: 125, one line, nothing runs."""

    def assertRefusedAndNothingRan(self, *options):
        marker = self.path("work/ran")
        r = self.run_box(["touch", marker], "--rw", self.mkdir("work"), *options)
        line = self.assertRefused(r)
        self.assertFalse(os.path.exists(marker), "the command ran despite the refusal")
        return line

    def test_proxy_flags_need_net_proxy(self):
        for flag, value in (("--allow-domain", "example.com"), ("--deny-domain", "example.com"),
                            ("--resolve", "a.test=127.0.0.1"), ("--allow-cidr", LOOPBACK)):
            for net in ((), ("--net", "block"), ("--net", "allow")):
                with self.subTest(flag=flag, net=net):
                    line = self.assertRefusedAndNothingRan(*net, flag, value)
                    self.assertIn("usage error", line)
                    self.assertIn("need --net proxy", line)
        # Control: with --net proxy the same flags are accepted and the command runs.
        self.assertRan(self.run_box(["touch", self.path("work/ran")], "--rw", self.mkdir("work"),
                                    "--net", "proxy", "--allow-domain", "example.com"))
        self.assertTrue(os.path.exists(self.path("work/ran")))

    def test_bad_values_are_refused(self):
        cases = [
            (("--resolve", "foo"), "foo"),
            (("--resolve", "foo=bar"), "foo=bar"),
            (("--resolve", "1.2.3.4=1.2.3.4"), "1.2.3.4=1.2.3.4"),
            (("--allow-cidr", "10.0.0.1/8"), "10.0.0.0/8"),
            (("--allow-cidr", "10.0.0.0/33"), "10.0.0.0/33"),
            (("--allow-cidr", "example.com"), "example.com"),
            (("--allow-domain", "a b"), "a b"),
            (("--allow-domain", "exa_mple.com"), "exa_mple.com"),
            (("--allow-domain", "*"), "*"),
            (("--allow-domain", "example.com:0"), "example.com:0"),
            (("--allow-domain", "example.com:65536"), "example.com:65536"),
            (("--allow-domain", "b\u00fccher.de"), "xn--"),
            (("--deny-domain", "a b"), "a b"),
        ]
        for (flag, value), named in cases:
            with self.subTest(flag=flag, value=value):
                line = self.assertRefusedAndNothingRan("--net", "proxy", flag, value)
                self.assertIn(named, line)

    def test_proxy_mode_alone_allows_nothing(self):
        # No servers needed: every destination is refused before any connect.
        out = self.run_json(["python3", "-c",
                             "import urllib.request as u\n"
                             "try: u.urlopen('http://example.com/', timeout=10)\n"
                             "except Exception as e: print(e)"], "--net", "proxy")
        self.assertIn("HTTP Error 403", out["stdout"])
        self.assertEqual(out["policy"]["network"]["proxy"]["allowDomains"], [])
        self.assertEqual([(c["host"], c["allowed"]) for c in out["network"]["connections"]],
                         [("example.com", False)])


if __name__ == "__main__":
    unittest.main()
