"""Conformance of `agentbox exec` / `lxc-exec` with the MXC one-shot contract
(reference/MXC-CONTRACT.md).

Two kinds of tests:
- the cases under cases/<group>/*.json (config, expected exit code and output; see
  mxc_cases.py), one test method each, in the classes below named after their group;
- code tests for what a config file cannot express: the command line, and the places where
  agentbox is deliberately stricter than lxc-exec 0.8 (signals, fds, sessions, capabilities,
  argv secrecy, the timeout and the caller's death killing the whole sandbox).

Runs through ctest (tests/CMakeLists.txt), one entry per class, as root and as uid 65534:
    AGENTBOX=build/agentbox AGENTBOX_PROBES=build/tests/adversarial/probes \\
        python3 tests/conformance/mxc/test_mxc.py -v MxcRun
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
sys.path.insert(0, HERE)

import harness  # noqa: E402
import mxc_cases  # noqa: E402

# The drop-in: the lxc-exec link next to the agentbox binary (main() dispatches on argv[0]).
LXC_EXEC = os.path.join(os.path.dirname(harness.AGENTBOX), "lxc-exec") if harness.AGENTBOX else ""


def add_cases(cls, group):
    """One test method per case file of the group."""
    cls.setUpClass = classmethod(_set_up_class)
    for name, case in mxc_cases.load_group(group):
        def test(self, case=case):
            result = mxc_cases.run([LXC_EXEC], case, self.tmp, self.env())
            mxc_cases.check(self, case, result, self.tmp)
        test.__doc__ = case["description"]
        setattr(cls, "test_" + name, test)
    return cls


def _set_up_class(cls):
    harness.SandboxTest.setUpClass.__func__(cls)
    if not os.access(LXC_EXEC, os.X_OK):
        raise RuntimeError(f"{LXC_EXEC} is missing: the build creates it next to agentbox")


def _exec_config(self, config, *args, input=None, timeout=harness.TIMEOUT, argv0=None, **kw):
    """Runs lxc-exec ARGS CONFIG_FILE for a config given as a dict or text."""
    text = config if isinstance(config, str) else json.dumps(config)
    path = self.write(".config.json", text)
    return subprocess.run([argv0 or LXC_EXEC, *args, path], input=input, capture_output=True,
                          text=True, errors="replace", timeout=timeout, cwd=kw.pop("cwd", "/"),
                          env=kw.pop("env", None) or self.env(), **kw)


def _exec_args(self, *args, input=None, timeout=harness.TIMEOUT, argv0=None, env=None):
    """Runs lxc-exec ARGS."""
    return subprocess.run([argv0 or LXC_EXEC, *args], input=input, capture_output=True,
                          text=True, errors="replace", timeout=timeout, cwd="/",
                          env=env or self.env())


# The classes below must read `class X(harness.SandboxTest):` for ctest to find them.

class MxcParse(harness.SandboxTest):
    """Malformed configs: exit 1, "Request error" / "Configuration parse error: <where, why>"."""


class MxcRun(harness.SandboxTest):
    """Running configs: output, exit codes, environment, cwd, stdin, timeout, containment."""


class MxcFilesystem(harness.SandboxTest):
    """readonlyPaths, readwritePaths, deniedPaths and their interplay."""


class MxcNetwork(harness.SandboxTest):
    """Isolated by default, host network on acknowledged allow, proxy-only egress through the
    bridge with a proxy or host lists, unenforceable rules refused."""


class MxcDryRun(harness.SandboxTest):
    """--dry-run makes every check a run makes and runs nothing."""


for _cls, _group in ((MxcParse, "parse"), (MxcRun, "run"), (MxcFilesystem, "fs"),
                     (MxcNetwork, "network"), (MxcDryRun, "dryrun")):
    add_cases(_cls, _group)


class MxcCli(harness.SandboxTest):
    """The command line: options, precedence, usage errors, diagnostics."""

    setUpClass = classmethod(_set_up_class)
    exec_config = _exec_config
    exec_args = _exec_args

    def test_help(self):
        for flag in ("-h", "--help"):
            r = self.exec_args(flag)
            self.assertEqual(r.returncode, 0, r.stderr)
            self.assertIn("Usage: lxc-exec [OPTIONS] [CONFIG_PATH]", r.stdout)
            self.assertIn("--config-base64", r.stdout)
        r = self.agentbox("exec", "--help")
        self.assertEqual(r.returncode, 0, r.stderr)
        self.assertIn("Usage: agentbox exec [OPTIONS] [CONFIG_PATH]", r.stdout)

    def test_version(self):
        r = self.exec_args("--version")
        self.assertEqual(r.returncode, 0, r.stderr)
        self.assertRegex(r.stdout, r"^lxc-exec \(agentbox \d+\.\d+\.\d+; MXC config schemas")

    def test_available_backends(self):
        r = self.exec_args("--available-backends")
        self.assertEqual(r.returncode, 0, r.stderr)
        doc = json.loads(r.stdout)
        by_name = {b["name"]: b for b in doc["backends"]}
        self.assertTrue(by_name["process"]["available"])
        self.assertTrue(by_name["bubblewrap"]["available"])
        for name in ("lxc", "processcontainer", "seatbelt", "vm", "microvm"):
            self.assertFalse(by_name[name]["available"], name)
            self.assertIn("not available on this host", by_name[name]["reason"])
        caps = by_name["process"]["capabilities"]
        self.assertEqual(caps["network"]["block"], True)
        self.assertEqual(caps["network"]["proxy"], True)
        self.assertEqual(caps["network"]["allowedHosts"], True)
        self.assertEqual(caps["network"]["egressRules"], False)
        self.assertEqual(doc["schemaVersions"], {"min": "0.6", "max": "0.9"})

    def test_no_config(self):
        r = self.exec_args()
        self.assertEqual(r.returncode, 1)
        self.assertIn("No config provided", r.stderr)
        self.assertEqual(r.stdout, "")

    def test_unknown_option_is_usage_error(self):
        r = self.exec_args("--bogus")
        self.assertEqual(r.returncode, 2)
        self.assertIn("unknown option --bogus", r.stderr)
        self.assertIn("Usage: lxc-exec [OPTIONS] [CONFIG_PATH]", r.stderr)
        self.assertEqual(r.stdout, "")

    def test_missing_option_value_is_usage_error(self):
        r = self.exec_args("--config")
        self.assertEqual(r.returncode, 2)
        self.assertIn("--config needs a value", r.stderr)

    def test_repeated_option_is_usage_error(self):
        a = self.write("a.json", '{"process":{"commandLine":"echo a"}}')
        for args in (["--config", a, "--config", a], ["--dry-run", "--dry-run", a],
                     ["-h", "--help"], [f"--config={a}", "--config", a]):
            r = self.exec_args(*args)
            self.assertEqual(r.returncode, 2, args)
            self.assertIn("cannot be used multiple times", r.stderr)

    def test_two_positionals_is_usage_error(self):
        a = self.write("a.json", '{"process":{"commandLine":"echo a"}}')
        r = self.exec_args(a, a)
        self.assertEqual(r.returncode, 2)
        self.assertIn("Usage:", r.stderr)

    def test_precedence(self):
        b64 = base64.b64encode(b'{"process":{"commandLine":"echo from-base64"}}').decode()
        flag = self.write("flag.json", '{"process":{"commandLine":"echo from-config"}}')
        pos = self.write("pos.json", '{"process":{"commandLine":"echo from-positional"}}')
        r = self.exec_args("--config-base64", b64, "--config", flag, pos)
        self.assertEqual((r.returncode, r.stdout), (0, "from-base64\n"), r.stderr)
        r = self.exec_args("--config", flag, pos)
        self.assertEqual((r.returncode, r.stdout), (0, "from-config\n"), r.stderr)
        r = self.exec_args(pos)
        self.assertEqual((r.returncode, r.stdout), (0, "from-positional\n"), r.stderr)
        # Lower-precedence sources are not even read.
        r = self.exec_args("--config-base64", b64, "--config", "/nonexistent.json")
        self.assertEqual((r.returncode, r.stdout), (0, "from-base64\n"), r.stderr)
        r = self.exec_args(f"--config-base64={b64}")
        self.assertEqual((r.returncode, r.stdout), (0, "from-base64\n"), r.stderr)

    def test_base64_is_strict(self):
        good = base64.b64encode(b'{"process":{"commandLine":"echo hi"}}').decode()
        self.assertTrue(good.endswith("="), "the sample needs padding for this test")
        for bad in (good.rstrip("="),                      # padding missing
                    good[:10] + "\n" + good[10:],          # whitespace
                    good + "====",                         # padding as data
                    "aGl=",                                # non-canonical final bits
                    "!!!!", "a===",
                    base64.urlsafe_b64encode(b'{"process":{"commandLine":"echo ~~~???"}}').decode()):
            r = self.exec_args("--config-base64", bad)
            self.assertEqual(r.returncode, 1, bad)
            self.assertIn("Configuration parse error: Failed to decode base64 configuration",
                          r.stderr)

    def test_stdin_config_leaves_program_stdin_at_eof(self):
        r = self.exec_args("-", input='{"process":{"commandLine":"cat; echo end"}}')
        self.assertEqual((r.returncode, r.stdout), (0, "end\n"), r.stderr)

    def test_config_file_not_found(self):
        r = self.exec_args(self.path("missing.json"))
        self.assertEqual(r.returncode, 1)
        self.assertIn("Configuration parse error: Configuration file not found: "
                      + self.path("missing.json"), r.stderr)

    def test_config_is_a_directory(self):
        r = self.exec_args(self.mkdir("dir.json"))
        self.assertEqual(r.returncode, 1)
        self.assertIn("Configuration parse error: cannot read", r.stderr)

    def test_config_too_large(self):
        big = '{"process":{"commandLine":"echo hi"},"_comment":"' + "x" * (5 << 20) + '"}'
        r = self.exec_config(big)
        self.assertEqual(r.returncode, 1)
        self.assertIn("larger than the limit", r.stderr)

    def test_agentbox_exec_is_lxc_exec(self):
        config = {"process": {"commandLine": "echo same; exit 4"}}
        path = self.write_json("c.json", config)
        via_link = self.exec_args(path)
        via_subcommand = self.agentbox("exec", path)
        self.assertEqual((via_link.returncode, via_link.stdout), (4, "same\n"))
        self.assertEqual((via_subcommand.returncode, via_subcommand.stdout), (4, "same\n"))

    def test_any_link_named_lxc_exec_works(self):
        # The SDK's MXC_BIN_DIR layout: <dir>/x64/lxc-exec.
        link = self.path("mxc-bin", "x64", "lxc-exec")
        os.makedirs(os.path.dirname(link))
        os.symlink(harness.AGENTBOX, link)
        r = self.exec_config({"process": {"commandLine": "echo linked"}}, argv0=link)
        self.assertEqual((r.returncode, r.stdout), (0, "linked\n"), r.stderr)

    def test_experimental_accepted(self):
        r = self.exec_config({"process": {"commandLine": "echo hi"}}, "--experimental")
        self.assertEqual((r.returncode, r.stdout), (0, "hi\n"), r.stderr)

    def test_debug_goes_to_stderr_only_and_holds_no_secrets(self):
        secret_env = harness.unique("envsecret")
        secret_script = harness.unique("scriptsecret")
        config = {"process": {"commandLine": f"echo hello # {secret_script}",
                              "env": [f"TOKEN={secret_env}"]}}
        r = self.exec_config(config, "--debug")
        self.assertEqual((r.returncode, r.stdout), (0, "hello\n"), r.stderr)
        self.assertIn("[agentbox exec]", r.stderr)
        self.assertIn("TOKEN", r.stderr)  # names are shown ...
        self.assertNotIn(secret_env, r.stderr)  # ... values and the script are not
        self.assertNotIn(secret_script, r.stderr)

    def test_log_file_appends_without_secrets(self):
        log = self.path("logs", "mxc.log")
        os.makedirs(os.path.dirname(log))
        secret = harness.unique("secret")
        config = {"process": {"commandLine": "echo one", "env": [f"K={secret}"]}}
        r1 = self.exec_config(config, "--log-file", log)
        r2 = self.exec_config({"process": {"commandLine": "exit 3"}}, "--log-file", log)
        self.assertEqual((r1.returncode, r1.stdout, r1.stderr), (0, "one\n", ""))
        self.assertEqual((r2.returncode, r2.stdout, r2.stderr), (3, "", ""))
        text = self.read(log)
        self.assertEqual(text.count("outcome: exited"), 2, text)
        self.assertNotIn(secret, text)
        self.assertEqual(os.stat(log).st_mode & 0o777, 0o600)

    def test_log_file_that_cannot_be_opened_is_a_warning(self):
        r = self.exec_config({"process": {"commandLine": "echo still-runs"}}, "--log-file",
                             self.path("no", "such", "dir", "log"))
        self.assertEqual((r.returncode, r.stdout), (0, "still-runs\n"), r.stderr)
        self.assertIn("Warning: could not open log file", r.stderr)

    def test_parse_error_names_the_source(self):
        path = self.write("named.json", '{"process":{"commandLine":"echo","x":1}}')
        r = self.exec_args(path)
        self.assertEqual(r.returncode, 1)
        self.assertEqual(r.stderr, "Request error\nConfiguration parse error: " + path +
                         ': /process: unknown field "x" (expected one of: commandLine, cwd, env, '
                         'timeout)\n')


class MxcStricter(harness.SandboxTest):
    """Where agentbox is deliberately stricter than lxc-exec 0.8 (the contract's list)."""

    setUpClass = classmethod(_set_up_class)
    exec_config = _exec_config
    exec_args = _exec_args

    def status_of_program(self, **popen):
        """/proc/self/status of the sandboxed shell's own process, exec'd into cat, so in the
        state the program started with (dash blocks signals for a moment around each fork)."""
        r = self.exec_config({"process": {"commandLine": "exec cat /proc/self/status"}}, **popen)
        self.assertEqual(r.returncode, 0, r.stderr)
        return harness.status_fields(r.stdout)

    def test_capabilities_dropped_seccomp_and_no_new_privs(self):
        status = self.status_of_program()
        for field in ("CapInh", "CapPrm", "CapEff", "CapBnd", "CapAmb"):
            self.assertEqual(int(status[field], 16), 0, field)
        self.assertEqual(status["NoNewPrivs"], "1")
        self.assertEqual(status["Seccomp"], "2")  # filter mode

    def test_signal_mask_and_dispositions_are_reset(self):
        def block_and_ignore():
            signal.pthread_sigmask(signal.SIG_BLOCK, {signal.SIGHUP, signal.SIGINT, signal.SIGTERM})
            signal.signal(signal.SIGINT, signal.SIG_IGN)
            signal.signal(signal.SIGQUIT, signal.SIG_IGN)
        # The control: the caller's state really is inherited by what it starts.
        control = subprocess.run(["cat", "/proc/self/status"], capture_output=True, text=True,
                                 preexec_fn=block_and_ignore, timeout=harness.TIMEOUT)
        self.assertNotEqual(int(harness.status_fields(control.stdout)["SigBlk"], 16), 0)
        status = self.status_of_program(preexec_fn=block_and_ignore)
        self.assertEqual(int(status["SigBlk"], 16), 0)
        self.assertEqual(int(status["SigIgn"], 16), 0)

    def test_sigterm_kills_the_shell(self):
        r = self.exec_config({"process": {"commandLine": "kill -TERM $$; echo survived"}})
        self.assertEqual((r.returncode, r.stdout), (128 + signal.SIGTERM, ""), r.stderr)

    def test_only_stdio_crosses(self):
        fd = os.open("/etc/hostname", os.O_RDONLY)  # inheritable below, as a leaky caller's
        self.addCleanup(os.close, fd)
        r = self.exec_config({"process": {"commandLine": "ls /proc/$$/fd; true"}}, pass_fds=(fd,))
        self.assertEqual(r.returncode, 0, r.stderr)
        self.assertEqual(sorted(r.stdout.split()), ["0", "1", "2"], r.stdout)

    def test_new_session(self):
        # Field 6 of /proc/PID/stat is the session id as the sandbox's pid namespace sees it:
        # 0 would mean the session leader is outside (the caller's session).
        r = self.exec_config({"process": {"commandLine": "cut -d' ' -f6 /proc/$$/stat; "
                                                         "cut -d' ' -f7 /proc/$$/stat"}})
        self.assertEqual(r.returncode, 0, r.stderr)
        sid, tty = r.stdout.split()
        self.assertNotEqual(sid, "0")
        self.assertEqual(tty, "0")  # no controlling terminal

    def test_tiocsti_denied_under_a_terminal(self):
        config = self.write_json("tiocsti.json", {
            "process": {"commandLine": self.probe("tiocsti")},
            "filesystem": {"readonlyPaths": [harness.PROBES]}})
        status, shown, stderr = harness.run_on_pty([LXC_EXEC, config], env=self.env())
        # The probe's own exit status is not asserted: a sanitizer build of it fails its
        # leak check at exit inside the sandbox (no ptrace), after printing its result.
        self.assertIn(b"sctty=OK sti=EPERM", shown, f"exit {status}: {stderr}")
        self.assertNotIn(b"X", shown)

    def wait_for_file(self, path):
        self.assertTrue(harness.wait_for(lambda: os.path.exists(path)), f"{path} never appeared")

    def test_script_env_and_base64_config_are_on_no_argv(self):
        script_mark = harness.unique("script")
        env_mark = harness.unique("envvalue")
        out = self.mkdir("out")
        ready = os.path.join(out, "ready")
        config = {"process": {"commandLine": f": {script_mark}; touch {ready}; sleep 30",
                              "env": [f"SECRET={env_mark}"]},
                  "filesystem": {"readwritePaths": [out]}}
        encoded = base64.b64encode(json.dumps(config).encode()).decode()
        for args in ([self.write_json("c.json", config)], ["--config-base64", encoded]):
            with self.subTest(args=args[0][:20]):
                if os.path.exists(ready):
                    os.unlink(ready)
                p = subprocess.Popen([LXC_EXEC, *args], stdout=subprocess.DEVNULL,
                                     stderr=subprocess.DEVNULL, cwd="/", env=self.env())
                try:
                    self.wait_for_file(ready)
                    # The whole value: its start is the same for every config, so a
                    # concurrent test's executor, not yet past its wipe, would match it.
                    for mark in (script_mark, env_mark, encoded):
                        self.assertEqual(harness.processes_with(mark), [], mark)
                finally:
                    p.kill()
                    p.wait(timeout=harness.TIMEOUT)

    def test_timeout_kills_the_whole_sandbox(self):
        out = self.mkdir("out")
        late = os.path.join(out, "late")
        # Generous margins: the shell must print "started" before the timeout even on a loaded
        # machine with a sanitizer build; the late write would land 1 s after the timeout.
        config = {"process": {"commandLine": f"(sleep 3; echo late > {late}) & echo started; "
                                             "sleep 30", "timeout": 2000},
                  "filesystem": {"readwritePaths": [out]}}
        start = time.monotonic()
        # capture_output waits for every holder of the pipes: a survivor would hold them.
        r = self.exec_config(config)
        self.assertLess(time.monotonic() - start, 10)
        self.assertEqual(r.returncode, 255, r.stderr)
        self.assertEqual(r.stdout, "started\n")
        self.assertEqual(r.stderr.splitlines()[0], "script timed out after 2000ms")
        time.sleep(2)
        self.assertFalse(os.path.exists(late), "a process of the sandbox outlived the timeout")

    def test_caller_death_kills_the_sandbox(self):
        marker = harness.unique_sleep()
        config = {"process": {"commandLine": f"sleep {marker} & sleep {marker}; wait"}}
        p = subprocess.Popen([LXC_EXEC, self.write_json("c.json", config)], cwd="/",
                             env=self.env(), stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        try:
            self.assertTrue(harness.wait_for(lambda: len(harness.processes_with(marker)) == 2),
                            "the sandbox never started")
            p.kill()
            p.wait(timeout=harness.TIMEOUT)
            self.assertTrue(harness.wait_for(lambda: not harness.processes_with(marker)),
                            f"survivors: {harness.processes_with(marker)}")
        finally:
            if p.poll() is None:
                p.kill()
                p.wait()

    def test_sigterm_to_the_executor_reaches_the_program(self):
        config = {"process": {"commandLine": "trap 'echo got-term; exit 3' TERM; echo ready; "
                                             "sleep 30 & wait"}}
        p = subprocess.Popen([LXC_EXEC, self.write_json("c.json", config)], cwd="/",
                             env=self.env(), stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                             text=True)
        try:
            self.assertEqual(p.stdout.readline(), "ready\n")
            p.send_signal(signal.SIGTERM)
            out, err = p.communicate(timeout=harness.TIMEOUT)
        finally:
            if p.poll() is None:
                p.kill()
                p.wait()
        self.assertEqual((p.returncode, out), (3, "got-term\n"), err)

    def test_writable_root_refused(self):
        r = self.exec_config({"process": {"commandLine": "echo ran"},
                              "filesystem": {"readwritePaths": ["/"]}})
        self.assertEqual((r.returncode, r.stdout), (255, ""))
        self.assertIn("a writable / is refused", r.stderr)

    def test_resource_limits(self):
        r = self.exec_config({"process": {"commandLine": "ulimit -c; ulimit -n"}})
        self.assertEqual(r.returncode, 0, r.stderr)
        core, files = r.stdout.split()
        self.assertEqual(core, "0")
        self.assertLessEqual(int(files), 1024)


if __name__ == "__main__":
    unittest.main()
