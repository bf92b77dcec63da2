"""Side by side: the same MXC configs through agentbox's lxc-exec and the real lxc-exec from
@microsoft/mxc-sdk@0.8.0 (installed by install_tools.py into a cache under the build tree).

- SideBySideSame: every conformance case marked "same" (tests/conformance/mxc/cases): both
  executors give the same exit code and the same stdout (dry runs: the same verdict line);
  agentbox also meets the case's own expectations.
- SideBySideStricter: the cases marked "stricter" or "different": agentbox's behaviour is
  asserted; lxc-exec's is run and recorded in the test log, not asserted.
- SideBySideProbes: the contract's "agentbox is stricter" list, probed in both executors
  (capabilities, signal mask, fds, session, seccomp, argv, timeout, caller's death): agentbox
  asserted, lxc-exec recorded.
- SideBySideSdk: the official TypeScript SDK pointed at agentbox (its `executablePath` option
  and its MXC_BIN_DIR lookup), as an MXC integration would be.

Every record line starts with "RECORD" so `grep RECORD Testing/Temporary/LastTest.log` shows
what lxc-exec did. Before the tests, lxc-exec is probed once: if it cannot run on this host
as this user, the suite prints why and exits 77 (ctest: skipped), never a silent pass.
"""
import base64
import json
import os
import signal
import subprocess
import sys
import time
import unittest

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, "..", "..", "integration"))
sys.path.insert(0, os.path.join(HERE, "..", "mxc"))

import harness  # noqa: E402
import mxc_cases  # noqa: E402

AGENTBOX_LXC = os.path.join(os.path.dirname(harness.AGENTBOX), "lxc-exec") if harness.AGENTBOX else ""
CACHE = os.environ.get("AGENTBOX_MXC_TOOLS") or (
    os.path.join(os.path.dirname(harness.AGENTBOX), "mxc-sidebyside") if harness.AGENTBOX else "")
SKIP = 77


def load_tools():
    with open(os.path.join(CACHE, "tools.json")) as f:
        return json.load(f)


TOOLS = load_tools() if CACHE and os.path.exists(os.path.join(CACHE, "tools.json")) else None
REAL_LXC = TOOLS["lxcExec"] if TOOLS else ""


def real_env(base):
    """lxc-exec finds bwrap on PATH."""
    env = dict(base)
    env["PATH"] = TOOLS["bwrapDir"] + os.pathsep + env.get("PATH", "/usr/bin:/bin")
    return env


def short(text, limit=400):
    text = text if len(text) <= limit else text[:limit] + f"... ({len(text)} chars)"
    return json.dumps(text)


def record(label, result):
    if isinstance(result, Exception):
        print(f"RECORD {label}: lxc-exec failed to complete: {result}", flush=True)
        return
    print(f"RECORD {label}: lxc-exec exit {result.returncode}, stdout {short(result.stdout)}, "
          f"stderr {short(result.stderr)}", flush=True)


def run_real(case, tmp, env):
    try:
        return mxc_cases.run([REAL_LXC], case, tmp, real_env(env))
    except subprocess.TimeoutExpired as e:
        return e


def all_cases(kinds):
    for group in mxc_cases.groups():
        for name, case in mxc_cases.load_group(group):
            if case.get("sideBySide", "same") in kinds:
                yield group, name, case


def _set_up_class(cls):
    harness.SandboxTest.setUpClass.__func__(cls)
    if TOOLS is None:
        raise RuntimeError(f"{CACHE}/tools.json is missing: the ctest fixture "
                           "sidebyside.tools (install_tools.py) did not run or failed")
    if not os.access(AGENTBOX_LXC, os.X_OK):
        raise RuntimeError(f"{AGENTBOX_LXC} is missing: the build creates it next to agentbox")


class SideBySideSame(harness.SandboxTest):
    """Compatible configs: same exit code and stdout from both executors."""

    setUpClass = classmethod(_set_up_class)


class SideBySideStricter(harness.SandboxTest):
    """Configs where agentbox differs on purpose: agentbox asserted, lxc-exec recorded."""

    setUpClass = classmethod(_set_up_class)


def _add_cases():
    for group, name, case in all_cases({"same"}):
        def test(self, case=case, label=f"{group}/{name}"):
            ours = mxc_cases.run([AGENTBOX_LXC], case, self.tmp, self.env())
            mxc_cases.check(self, case, ours, self.tmp)
            theirs = run_real(case, self.tmp, self.env())
            record(label, theirs)
            self.assertNotIsInstance(theirs, Exception, f"lxc-exec did not finish: {theirs}")
            self.assertEqual(mxc_cases.comparable(case, theirs), mxc_cases.comparable(case, ours),
                             f"lxc-exec (first) and agentbox (second) differ\n"
                             f"lxc-exec: {mxc_cases.describe(theirs)}\n"
                             f"agentbox: {mxc_cases.describe(ours)}")
        test.__doc__ = case["description"]
        setattr(SideBySideSame, f"test_{group}_{name}", test)
    for group, name, case in all_cases({"stricter", "different"}):
        def test(self, case=case, label=f"{group}/{name}"):
            ours = mxc_cases.run([AGENTBOX_LXC], case, self.tmp, self.env())
            mxc_cases.check(self, case, ours, self.tmp)
            theirs = run_real(case, self.tmp, self.env())
            print(f"RECORD {label} ({case['sideBySide']}): {case['description']}; "
                  f"observed before: {case.get('lxcExec', '-')}", flush=True)
            record(label, theirs)
        test.__doc__ = case["description"]
        setattr(SideBySideStricter, f"test_{group}_{name}", test)


_add_cases()


class SideBySideProbes(harness.SandboxTest):
    """The contract's "stricter" list, in both executors: agentbox asserted, lxc-exec recorded."""

    setUpClass = classmethod(_set_up_class)

    def both(self, config, label, **popen):
        """Runs a config through both; returns (agentbox result, lxc-exec result)."""
        path = self.write_json(f"{label}.json", config)
        results = []
        for exe, env in ((AGENTBOX_LXC, self.env()), (REAL_LXC, real_env(self.env()))):
            r = subprocess.run([exe, path], capture_output=True, text=True, errors="replace",
                               timeout=harness.TIMEOUT, cwd="/", env=env, **popen)
            results.append(r)
        record(label, results[1])
        return results

    def test_capabilities(self):
        ours, _ = self.both({"process": {"commandLine": "grep -E '^Cap(Prm|Eff|Bnd)' /proc/self/status"}},
                            "capabilities")
        self.assertEqual(ours.returncode, 0, ours.stderr)
        for line in ours.stdout.splitlines():
            self.assertEqual(int(line.split()[1], 16), 0, line)

    def test_seccomp_and_limits(self):
        ours, _ = self.both({"process": {"commandLine": "grep ^Seccomp: /proc/self/status; ulimit -c; ulimit -n"}},
                            "seccomp-and-limits")
        seccomp, core, files = ours.stdout.split("\n")[0], ours.stdout.split()[2], ours.stdout.split()[3]
        self.assertEqual(seccomp.split()[1], "2")
        self.assertEqual(core, "0")
        self.assertLessEqual(int(files), 1024)

    def test_signal_mask(self):
        def block():
            signal.pthread_sigmask(signal.SIG_BLOCK, {signal.SIGHUP, signal.SIGINT, signal.SIGTERM})
            signal.signal(signal.SIGINT, signal.SIG_IGN)
        # exec: the reader is the shell's own process, with the state it started with (dash
        # blocks every signal for a moment around each fork, so a child would race).
        ours, _ = self.both({"process": {"commandLine": "exec grep -E '^Sig(Blk|Ign)' /proc/self/status"}},
                            "signal-state-caller-blocked", preexec_fn=block)
        self.assertEqual(ours.returncode, 0, ours.stderr)
        fields = harness.status_fields(ours.stdout)
        self.assertEqual(int(fields["SigBlk"], 16), 0)
        self.assertEqual(int(fields["SigIgn"], 16), 0)

    def test_signal_mask_plain_caller(self):
        ours, _ = self.both({"process": {"commandLine": "exec grep -E '^Sig(Blk|Ign)' /proc/self/status"}},
                            "signal-state")
        fields = harness.status_fields(ours.stdout)
        self.assertEqual(int(fields["SigBlk"], 16), 0)
        ours, _ = self.both({"process": {"commandLine": "kill -TERM $$; echo survived-sigterm"}},
                            "own-sigterm")
        self.assertEqual((ours.returncode, ours.stdout), (143, ""))

    def test_fds(self):
        fd = os.open("/etc/hostname", os.O_RDONLY)
        self.addCleanup(os.close, fd)
        ours, _ = self.both({"process": {"commandLine": "ls /proc/$$/fd; true"}}, "fds", pass_fds=(fd,))
        self.assertEqual(sorted(ours.stdout.split()), ["0", "1", "2"])

    def test_session(self):
        ours, _ = self.both({"process": {"commandLine": "cut -d' ' -f6 /proc/$$/stat"}}, "session-id")
        self.assertNotEqual(ours.stdout.strip(), "0")

    def test_etc_shadow(self):
        ours, _ = self.both({"process": {"commandLine": "head -c 1 /etc/shadow >/dev/null 2>&1 && "
                                                        "echo read || echo masked"}}, "etc-shadow")
        self.assertEqual(ours.stdout, "masked\n")

    def test_script_on_argv(self):
        mark = harness.unique("argvmark")
        out = self.mkdir("out")
        config = {"process": {"commandLine": f": {mark}; touch {out}/ready; sleep 30",
                              "env": [f"SECRET={mark}-env"]},
                  "filesystem": {"readwritePaths": [out]}}
        path = self.write_json("argv.json", config)
        seen = {}
        for label, exe, env in (("agentbox", AGENTBOX_LXC, self.env()),
                                ("lxc-exec", REAL_LXC, real_env(self.env()))):
            ready = os.path.join(out, "ready")
            if os.path.exists(ready):
                os.unlink(ready)
            p = subprocess.Popen([exe, path], cwd="/", env=env, stdout=subprocess.DEVNULL,
                                 stderr=subprocess.DEVNULL, start_new_session=True)
            try:
                harness.wait_for(lambda: os.path.exists(ready))
                seen[label] = (len(harness.processes_with(mark)),
                               len(harness.processes_with(mark + "-env")))
            finally:
                os.killpg(p.pid, signal.SIGKILL)
                p.wait(timeout=harness.TIMEOUT)
        print(f"RECORD argv: processes whose argv holds the script / an env value: "
              f"lxc-exec {seen['lxc-exec']}, agentbox {seen['agentbox']}", flush=True)
        self.assertEqual(seen["agentbox"], (0, 0))

    def test_timeout_leftovers(self):
        out = self.mkdir("out")
        config = {"process": {"commandLine": f"sleep 1; echo late > {out}/late-$$; echo late",
                              "timeout": 300},
                  "filesystem": {"readwritePaths": [out]}}
        path = self.write_json("timeout.json", config)
        outcome = {}
        for label, exe, env in (("agentbox", AGENTBOX_LXC, self.env()),
                                ("lxc-exec", REAL_LXC, real_env(self.env()))):
            for entry in os.listdir(out):
                os.unlink(os.path.join(out, entry))
            r = subprocess.run([exe, path], capture_output=True, text=True, cwd="/", env=env,
                               timeout=harness.TIMEOUT, start_new_session=True)
            time.sleep(1.5)
            outcome[label] = (r.returncode, r.stdout, sorted(os.listdir(out)) != [])
        print(f"RECORD timeout: (exit, stdout, a file written after the timeout): "
              f"lxc-exec {outcome['lxc-exec']}, agentbox {outcome['agentbox']}", flush=True)
        self.assertEqual(outcome["agentbox"], (255, "", False))

    def test_caller_death(self):
        survivors = {}
        for label, exe, env in (("agentbox", AGENTBOX_LXC, self.env()),
                                ("lxc-exec", REAL_LXC, real_env(self.env()))):
            marker = harness.unique_sleep()
            path = self.write_json(f"death-{label}.json",
                                   {"process": {"commandLine": f"sleep {marker}; true"}})
            p = subprocess.Popen([exe, path], cwd="/", env=env, stdout=subprocess.DEVNULL,
                                 stderr=subprocess.DEVNULL)
            try:
                harness.wait_for(lambda: harness.processes_with(marker))
                p.kill()
                p.wait(timeout=harness.TIMEOUT)
                harness.wait_for(lambda: not harness.processes_with(marker), timeout=3)
                left = harness.processes_with(marker)
                survivors[label] = len(left)
                for pid in left:  # clean up after lxc-exec
                    try:
                        os.kill(pid, signal.SIGKILL)
                    except ProcessLookupError:
                        pass
            finally:
                if p.poll() is None:
                    p.kill()
                    p.wait()
        print(f"RECORD caller death (SIGKILL): processes of the sandbox left: "
              f"lxc-exec {survivors['lxc-exec']}, agentbox {survivors['agentbox']}", flush=True)
        self.assertEqual(survivors["agentbox"], 0)


class SideBySideSdk(harness.SandboxTest):
    """The official SDK, pointed at agentbox."""

    setUpClass = classmethod(_set_up_class)

    def sdk(self, config, executable, skip_check, env=None):
        node = "node"
        argv = [node, os.path.join(HERE, "sdk_run.mjs"), TOOLS["sdkDir"], json.dumps(config),
                executable or "-"]
        if skip_check:
            argv.append("skip-platform-check")
        r = subprocess.run(argv, capture_output=True, text=True, timeout=60, cwd="/",
                           env=env or self.env())
        self.assertEqual(r.returncode, 0, f"node: {r.stdout}{r.stderr}")
        return json.loads(r.stdout)

    def test_executable_path_option(self):
        result = self.sdk({"version": "0.8.0-alpha",
                           "process": {"commandLine": "echo $MXC_SDK_VAR; grep ^Seccomp: /proc/self/status; exit 3"}},
                          AGENTBOX_LXC, skip_check=True)
        self.assertEqual(result, {"code": 3, "stdout": "from-sdk\nSeccomp:\t2\n", "stderr": ""})

    def test_mxc_bin_dir(self):
        # The SDK looks for MXC_BIN_DIR/<x64|arm64>/lxc-exec; its platform check wants bwrap.
        arch = "arm64" if os.uname().machine in ("aarch64", "arm64") else "x64"
        bin_dir = self.path("mxc-bin")
        os.makedirs(os.path.join(bin_dir, arch))
        os.symlink(harness.AGENTBOX, os.path.join(bin_dir, arch, "lxc-exec"))
        env = real_env(self.env())
        env["MXC_BIN_DIR"] = bin_dir
        result = self.sdk({"process": {"commandLine": "grep ^Seccomp: /proc/self/status"}}, None,
                          skip_check=False, env=env)
        self.assertEqual(result, {"code": 0, "stdout": "Seccomp:\t2\n", "stderr": ""})

    def test_error_envelope_reaches_the_sdk(self):
        result = self.sdk({"containment": "lxc", "process": {"commandLine": "echo hi"}},
                          AGENTBOX_LXC, skip_check=True)
        self.assertEqual(result["code"], 255)
        envelope = json.loads(result["stderr"].splitlines()[-1])
        self.assertEqual(envelope["error"]["code"], "backend_error")


def preflight():
    """lxc-exec must be able to run here; otherwise say why and skip (exit 77)."""
    if TOOLS is None:
        return None  # setUpClass fails each test with the reason
    probe = base64.b64encode(b'{"process":{"commandLine":"echo probe"}}').decode()
    try:
        r = subprocess.run([REAL_LXC, "--config-base64", probe], capture_output=True, text=True,
                           timeout=harness.TIMEOUT, cwd="/", env=real_env(os.environ))
    except (OSError, subprocess.TimeoutExpired) as e:
        return f"lxc-exec could not be started: {e}"
    if (r.returncode, r.stdout) != (0, "probe\n"):
        return (f"lxc-exec 0.8 cannot run on this host as uid {os.geteuid()} (exit "
                f"{r.returncode}): {r.stderr.strip()}")
    return None


if __name__ == "__main__":
    reason = preflight()
    if reason:
        print(f"SKIP: {reason}", flush=True)
        sys.exit(SKIP)
    unittest.main()
