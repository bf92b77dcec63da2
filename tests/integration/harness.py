"""Helpers shared by the integration and adversarial suites: run `agentbox run`, run the
same command without the sandbox as a control, make fixtures in a per-test directory.

    class T(harness.SandboxTest):
        def test_x(self):
            secret = self.write("out/secret", "s3cret")
            r = self.run_box(["cat", secret], "--ro", self.path("in"))
            self.assertNotEqual(r.returncode, 0)                 # contained ...
            self.assertEqual(self.host(["cat", secret]).stdout, "s3cret")  # ... the attack is real

The environment gives the binaries: AGENTBOX (the agentbox executable) and AGENTBOX_PROBES
(the directory of tests/adversarial/probes). Every subprocess has a timeout, so no test hangs.
"""
import json
import os
import pty
import select
import shutil
import socket
import subprocess
import tempfile
import time
import unittest
import uuid

# Absolute, since agentbox runs with cwd "/" and the probes' directory is granted by path.
AGENTBOX = os.path.abspath(os.environ["AGENTBOX"]) if os.environ.get("AGENTBOX") else ""
PROBES = os.path.abspath(os.environ["AGENTBOX_PROBES"]) if os.environ.get("AGENTBOX_PROBES") else ""
TIMEOUT = 20  # seconds: the bound on every subprocess a test starts

# Any of these makes agentbox take its operator ceiling from the environment.
CEILING_VARIABLES = ("AGENTBOX_READONLY_PATHS", "AGENTBOX_READWRITE_PATHS",
                     "AGENTBOX_TIMEOUT_MS", "AGENTBOX_NETWORK", "AGENTBOX_ALLOW_DOMAINS")


def is_root():
    return os.geteuid() == 0


def unique(prefix="agentbox-test"):
    """A name no other process uses, for markers searched for on the host."""
    return f"{prefix}-{uuid.uuid4().hex[:12]}"


def unique_sleep():
    """An argument for `sleep` (hundreds of seconds) no other process uses: a marker for
    processes that must be seen, or not, on the host."""
    n = uuid.uuid4().int
    return f"{100 + n % 900}.{n // 900 % 10**12:012d}"


def stop_listener(listener, accept_thread):
    """Closes a test server's listening socket once its accept thread has ended.

    close() alone does not wake a thread blocked in accept(); that thread, or one about to
    call it, would then accept on whichever socket next gets the same descriptor number (a
    later test's server) and serve that test's connection with its own, stale state.
    shutdown() wakes it, so the join below returns at once.
    """
    try:
        listener.shutdown(socket.SHUT_RDWR)
    except OSError:
        pass  # not listening (any more)
    accept_thread.join(TIMEOUT)
    listener.close()


def wait_for(predicate, timeout=TIMEOUT, interval=0.05):
    """Polls predicate until it is true or timeout seconds pass; returns its last value."""
    deadline = time.monotonic() + timeout
    while True:
        value = predicate()
        if value or time.monotonic() >= deadline:
            return value
        time.sleep(interval)


def processes_with(marker, exact=False):
    """Pids of host processes with marker in their command line (exact: as a whole argument)."""
    found = []
    needle = marker.encode()
    for entry in os.listdir("/proc"):
        if not entry.isdigit() or int(entry) == os.getpid():
            continue
        try:
            with open(f"/proc/{entry}/cmdline", "rb") as f:
                cmdline = f.read()
        except OSError:
            continue  # gone, or not ours to read
        if (needle in cmdline.split(b"\0")) if exact else (needle in cmdline):
            found.append(int(entry))
    return found


def run_on_pty(argv, env, timeout=TIMEOUT):
    """Runs argv with a new pseudo-terminal as stdin and stdout, the terminal's echo on.

    Returns (exit status, bytes the terminal showed, stderr text).
    """
    master, slave = pty.openpty()
    try:
        p = subprocess.Popen(argv, stdin=slave, stdout=slave, stderr=subprocess.PIPE, cwd="/",
                             env=env)
    except BaseException:
        os.close(master)
        os.close(slave)
        raise
    os.close(slave)
    shown = b""
    deadline = time.monotonic() + timeout
    try:
        while True:
            ready, _, _ = select.select([master], [], [], max(0, deadline - time.monotonic()))
            if not ready:
                break  # timed out; the wait below fails the test
            try:
                chunk = os.read(master, 4096)
            except OSError:  # EIO: every process holding the terminal is gone
                break
            if not chunk:
                break
            shown += chunk
        status = p.wait(timeout=max(1, deadline - time.monotonic()))
        return status, shown, p.stderr.read().decode(errors="replace")
    finally:
        os.close(master)
        if p.poll() is None:
            p.kill()
            p.wait()
        p.stderr.close()


def status_fields(text):
    """/proc/PID/status text as a dict."""
    fields = {}
    for line in text.splitlines():
        key, _, value = line.partition(":")
        fields[key.strip()] = value.strip()
    return fields


class SandboxTest(unittest.TestCase):
    """A test with its own temp directory (self.tmp, under /tmp, owned by the test's uid)."""

    maxDiff = None

    @classmethod
    def setUpClass(cls):
        if not os.access(AGENTBOX, os.X_OK):
            raise RuntimeError(f"AGENTBOX={AGENTBOX!r} is not an executable; run through ctest")
        if not os.path.isdir(PROBES):
            raise RuntimeError(f"AGENTBOX_PROBES={PROBES!r} is not a directory")

    def setUp(self):
        self.tmp = tempfile.mkdtemp(prefix="agentbox-test-", dir="/tmp")
        self.addCleanup(shutil.rmtree, self.tmp, ignore_errors=True)

    # Fixtures ------------------------------------------------------------------------------

    def path(self, *parts):
        return os.path.join(self.tmp, *parts)

    def mkdir(self, relative):
        path = self.path(relative)
        os.makedirs(path, exist_ok=True)
        return path

    def write(self, relative, content, mode=0o644):
        path = self.path(relative)
        os.makedirs(os.path.dirname(path), exist_ok=True)
        with open(path, "w") as f:
            f.write(content)
        os.chmod(path, mode)
        return path

    def read(self, path):
        with open(path) as f:
            return f.read()

    def write_json(self, relative, value):
        return self.write(relative, json.dumps(value))

    def probe(self, name):
        return os.path.join(PROBES, name)

    # Running -------------------------------------------------------------------------------

    def env(self, home=None, **extra):
        """The caller's environment without ceiling variables, HOME set to a writable dir."""
        env = {k: v for k, v in os.environ.items() if k not in CEILING_VARIABLES}
        env["HOME"] = home or self.tmp
        env.update(extra)
        return env

    def agentbox(self, *args, input=None, timeout=TIMEOUT, cwd="/", env=None, **kwargs):
        """Runs `agentbox ARGS...`; returns the CompletedProcess (text, both streams captured).

        cwd defaults to "/" so that the caller's directory plays no part unless a test says so.
        """
        return subprocess.run([AGENTBOX, *args], input=input, capture_output=True, text=True,
                              errors="replace", timeout=timeout, cwd=cwd,
                              env=env if env is not None else self.env(), **kwargs)

    def run_box(self, argv, *options, **kwargs):
        """`agentbox run OPTIONS... -- ARGV...`"""
        return self.agentbox("run", *options, "--", *argv, **kwargs)

    def run_probe(self, name, *args, options=(), **kwargs):
        """A probe inside the sandbox (its directory granted read-only)."""
        return self.run_box([self.probe(name), *args], "--ro", PROBES, *options, **kwargs)

    def run_json(self, argv, *options, **kwargs):
        """`agentbox run --json`; returns the parsed result object."""
        r = self.run_box(argv, "--json", *options, **kwargs)
        try:
            return json.loads(r.stdout)
        except ValueError:
            self.fail(f"--json printed no JSON (exit {r.returncode}): {r.stdout!r} {r.stderr!r}")

    def host(self, argv, input=None, timeout=TIMEOUT, **kwargs):
        """The control: the same command run directly, without the sandbox."""
        kwargs.setdefault("env", self.env())
        return subprocess.run(argv, input=input, capture_output=True, text=True,
                              errors="replace", timeout=timeout, **kwargs)

    # Assertions ----------------------------------------------------------------------------

    def assertRefused(self, result, code=125):
        """agentbox refused: exit `code`, and one line on stderr starting "agentbox:"."""
        self.assertEqual(result.returncode, code, result.stderr)
        lines = result.stderr.splitlines()
        self.assertEqual(len(lines), 1, f"want one line of reason, got {result.stderr!r}")
        self.assertTrue(lines[0].startswith("agentbox:"), lines[0])
        return lines[0]

    def assertRan(self, result, code=0):
        self.assertEqual(result.returncode, code, f"exit {result.returncode}\n"
                         f"stdout: {result.stdout}\nstderr: {result.stderr}")
        return result
