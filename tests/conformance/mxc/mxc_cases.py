"""MXC conformance cases: one JSON file per case under cases/<group>/, shared by the
conformance driver (test_mxc.py, agentbox alone) and the side-by-side driver
(../sidebyside/test_sidebyside.py, agentbox and the real lxc-exec 0.8).

A case file:

    {
      "description": "what the case shows",
      "config": {...}              the MXC config, written to a file; or
      "configText": "..."          the config as raw text (malformed JSON and the like)
      "via": "file" | "configFlag" | "base64" | "stdin"     how it is passed (default file)
      "args": ["--dry-run"],       more options, before the config
      "stdin": "text",             the executor's stdin (default empty)
      "cwd": "/",                  the executor's working directory (default /)
      "callerEnv": {"K": "V"},     added to the executor's own environment
      "fixture": {"dirs": [...], "files": {"rel/path": "content"}, "symlinks": {"rel": "target"}},
      "proxyStub": true,           start a stub HTTP proxy on the caller's 127.0.0.1 for the run
                                   (see StubProxy); "{proxyPort}" is its port
      "expect": {
        "exit": 0,
        "stdout": "exact text" | "stdoutLastLine": "..." | "stdoutContains": [...],
        "stderrContains": [...],
        "parseError": "text"       exit 1; stderr "Request error" / "Configuration parse error: ...text..."
        "backendError": "text"     exit 255; stderr ends with the reason line, then
                                   {"error":{"code":"backend_error","message":<that reason>}}
        "hostFiles": {"rel/path": "content" | null}     after the run (null: must not exist)
      },
      "sideBySide": "same" | "stricter" | "different" | "skip",
      "compare": "stdout" | "lastLine",     what "same" compares besides the exit code
      "lxcExec": "what lxc-exec 0.8 was observed to do (for the record)"
    }

"{tmp}" anywhere in a string is replaced by the case's fixture directory; "{proxyPort}" by
the stub proxy's port, and a string that is exactly "{proxyPort}" by the port as a number
(for network.proxy.localhost).
"""
import base64
import json
import os
import shutil
import socket
import subprocess
import threading

import harness  # tests/integration, on the path of every suite that imports this module

CASES_DIR = os.path.join(os.path.dirname(os.path.abspath(__file__)), "cases")
TIMEOUT = 30  # seconds: the bound on every executor run
PLACEHOLDER = "{tmp}"
PORT_PLACEHOLDER = "{proxyPort}"


def load_group(group):
    """[(name, case)] of cases/<group>/*.json, sorted by name."""
    directory = os.path.join(CASES_DIR, group)
    out = []
    for entry in sorted(os.listdir(directory)):
        if entry.endswith(".json"):
            with open(os.path.join(directory, entry)) as f:
                out.append((entry[:-5], json.load(f)))
    return out


def groups():
    return sorted(d for d in os.listdir(CASES_DIR) if os.path.isdir(os.path.join(CASES_DIR, d)))


def substitute(value, tmp, port=None):
    if isinstance(value, str):
        if port is not None and value == PORT_PLACEHOLDER:
            return port
        value = value.replace(PLACEHOLDER, tmp)
        return value.replace(PORT_PLACEHOLDER, str(port)) if port is not None else value
    if isinstance(value, list):
        return [substitute(v, tmp, port) for v in value]
    if isinstance(value, dict):
        return {substitute(k, tmp, port): substitute(v, tmp, port) for k, v in value.items()}
    return value


class StubProxy:
    """A tiny HTTP proxy on 127.0.0.1 that goes nowhere: it answers every absolute-URI
    request with "via-stub <request line>" and every CONNECT with 200, then answers the first
    request inside the tunnel with "via-stub CONNECT <target> then <request line>". It appends
    each request line it receives to <tmp>/stub-proxy.log, so a case can show what reached it
    (hostFiles) and what did not."""

    LOG = "stub-proxy.log"

    def __init__(self, tmp):
        self.log = os.path.join(tmp, self.LOG)
        self.lock = threading.Lock()
        self.server = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
        self.server.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        self.server.bind(("127.0.0.1", 0))
        self.server.listen(16)
        self.port = self.server.getsockname()[1]
        self.thread = threading.Thread(target=self._accept, daemon=True)
        self.thread.start()

    def close(self):
        harness.stop_listener(self.server, self.thread)

    def _accept(self):
        while True:
            try:
                conn, _ = self.server.accept()
            except OSError:
                return
            threading.Thread(target=self._serve, args=(conn,), daemon=True).start()

    @staticmethod
    def _head(conn, buf):
        """(request line, rest of buf) once a request head is complete, else (None, buf)."""
        while b"\r\n\r\n" not in buf:
            chunk = conn.recv(4096)
            if not chunk:
                return None, buf
            buf += chunk
        head, _, rest = buf.partition(b"\r\n\r\n")
        return head.split(b"\r\n", 1)[0].decode("latin-1"), rest

    def _record(self, line):
        with self.lock, open(self.log, "a") as f:
            f.write(line + "\n")

    @staticmethod
    def _answer(conn, body):
        body = body.encode()
        conn.sendall(b"HTTP/1.1 200 OK\r\nContent-Type: text/plain\r\nContent-Length: " +
                     str(len(body)).encode() + b"\r\nConnection: close\r\n\r\n" + body)

    def _serve(self, conn):
        with conn:
            conn.settimeout(TIMEOUT)
            try:
                line, rest = self._head(conn, b"")
                if line is None:
                    return
                self._record(line)
                if not line.startswith("CONNECT "):
                    self._answer(conn, f"via-stub {line}\n")
                    return
                conn.sendall(b"HTTP/1.1 200 Connection established\r\n\r\n")
                inner, _ = self._head(conn, rest)
                if inner is None:
                    return
                self._record("(tunnel) " + inner)
                self._answer(conn, f"via-stub {line.split()[0]} {line.split()[1]} then {inner}\n")
            except OSError:
                pass


def make_fixture(case, tmp):
    """(Re)creates the case's fixture under tmp (which is emptied first)."""
    for entry in os.listdir(tmp):
        path = os.path.join(tmp, entry)
        if os.path.isdir(path) and not os.path.islink(path):
            shutil.rmtree(path)
        else:
            os.unlink(path)
    fixture = case.get("fixture", {})
    for d in fixture.get("dirs", []):
        os.makedirs(os.path.join(tmp, d), exist_ok=True)
    for rel, content in fixture.get("files", {}).items():
        path = os.path.join(tmp, rel)
        os.makedirs(os.path.dirname(path), exist_ok=True)
        with open(path, "w") as f:
            f.write(content)
    for rel, target in fixture.get("symlinks", {}).items():
        path = os.path.join(tmp, rel)
        os.makedirs(os.path.dirname(path), exist_ok=True)
        os.symlink(substitute(target, tmp), path)


def config_text(case, tmp, port=None):
    if "configText" in case:
        return substitute(case["configText"], tmp, port)
    return json.dumps(substitute(case["config"], tmp, port))


def run(executor, case, tmp, env, timeout=TIMEOUT):
    """Runs one case through `executor` (argv prefix, e.g. [".../lxc-exec"]) with a fresh
    fixture (and a fresh stub proxy if the case asks for one). Returns the CompletedProcess
    (text; both streams captured)."""
    make_fixture(case, tmp)
    stub = StubProxy(tmp) if case.get("proxyStub") else None
    try:
        return _run(executor, case, tmp, env, timeout, stub.port if stub else None)
    finally:
        if stub:
            stub.close()


def _run(executor, case, tmp, env, timeout, port):
    text = config_text(case, tmp, port)
    args = list(executor) + substitute(case.get("args", []), tmp, port)
    stdin = substitute(case.get("stdin", ""), tmp, port)
    via = case.get("via", "file")
    config_path = os.path.join(tmp, ".mxc-config.json")
    if via in ("file", "configFlag"):
        with open(config_path, "w") as f:
            f.write(text)
        args += ["--config", config_path] if via == "configFlag" else [config_path]
    elif via == "base64":
        args += ["--config-base64", base64.b64encode(text.encode()).decode()]
    elif via == "stdin":
        args += ["-"]
        stdin = text
    else:
        raise ValueError(f"unknown via {via!r}")
    env = dict(env, **substitute(case.get("callerEnv", {}), tmp, port))
    return subprocess.run(args, input=stdin, capture_output=True, text=True, errors="replace",
                          timeout=timeout, cwd=substitute(case.get("cwd", "/"), tmp, port),
                          env=env)


def describe(result):
    return (f"exit {result.returncode}\n--- stdout:\n{result.stdout}--- stderr:\n"
            f"{result.stderr}---")


def check(test, case, result, tmp):
    """Asserts the case's expectations on agentbox's result."""
    expect = substitute(case["expect"], tmp)
    info = describe(result)
    stub_log = os.path.join(tmp, StubProxy.LOG)
    if case.get("proxyStub") and os.path.exists(stub_log):
        with open(stub_log) as f:
            info += f"\n--- what reached the stub proxy:\n{f.read()}---"
    if "parseError" in expect:
        test.assertEqual(result.returncode, 1, info)
        test.assertTrue(result.stderr.startswith("Request error\nConfiguration parse error: "), info)
        test.assertIn(expect["parseError"], result.stderr, info)
        test.assertEqual(result.stdout, "", info)
    if "backendError" in expect:
        test.assertEqual(result.returncode, 255, info)
        lines = result.stderr.rstrip("\n").split("\n")
        test.assertGreaterEqual(len(lines), 2, info)
        envelope = json.loads(lines[-1])
        test.assertEqual(set(envelope), {"error"}, info)
        test.assertEqual(envelope["error"]["code"], "backend_error", info)
        test.assertEqual(envelope["error"]["message"], lines[-2], info)
        test.assertIn(expect["backendError"], envelope["error"]["message"], info)
    if "exit" in expect:
        test.assertEqual(result.returncode, expect["exit"], info)
    if "stdout" in expect:
        test.assertEqual(result.stdout, expect["stdout"], info)
    if "stdoutLastLine" in expect:
        lines = result.stdout.rstrip("\n").split("\n")
        test.assertEqual(lines[-1], expect["stdoutLastLine"], info)
    for text in expect.get("stdoutContains", []):
        test.assertIn(text, result.stdout, info)
    for text in expect.get("stdoutExcludes", []):
        test.assertNotIn(text, result.stdout, info)
    for text in expect.get("stderrContains", []):
        test.assertIn(text, result.stderr, info)
    for rel, content in expect.get("hostFiles", {}).items():
        path = os.path.join(tmp, rel)
        if content is None:
            test.assertFalse(os.path.lexists(path), f"{path} exists\n{info}")
        else:
            with open(path) as f:
                test.assertEqual(f.read(), content, info)


def comparable(case, result):
    """What the side-by-side tier compares for a "same" case: exit code and stdout (or only
    its last line, for dry runs, where lxc-exec prints extra lines before it)."""
    if case.get("compare", "stdout") == "lastLine":
        lines = result.stdout.rstrip("\n").split("\n")
        return result.returncode, lines[-1]
    return result.returncode, result.stdout
