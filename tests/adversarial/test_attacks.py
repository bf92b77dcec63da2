#!/usr/bin/env python3
"""Adversarial tests of `agentbox run`: one test per attack. Each asserts what the sandboxed
code could NOT do, and runs the same attack without the sandbox as a control that succeeds
(or otherwise shows the attack is real), so a test fails if its layer is switched off.
Seccomp denials are told apart from the kernel's own answers by the probes' arguments
(probes/sysprobe.cc: the kernel would say OK, EFAULT, EINVAL or EOPNOTSUPP; the filter EPERM).

ctest runs each class as root and as uid 65534 (see tests/integration/run_suite.py):

    AGENTBOX=build/agentbox AGENTBOX_PROBES=build/tests/adversarial/probes \\
        python3 tests/adversarial/test_attacks.py -v Filesystem
"""
import glob
import json
import os
import select
import signal
import socket
import struct
import subprocess
import sys
import time
import unittest

sys.dont_write_bytecode = True  # no __pycache__ in the source tree
sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "integration"))
import harness  # noqa: E402

SIGSYS_EXIT = 128 + signal.SIGSYS  # 159


class Filesystem(harness.SandboxTest):
    """Only the granted paths exist, with the granted access."""

    def setUp(self):
        super().setUp()
        self.secret = self.write("outside/secret.txt", "outside-secret-7f3a\n")

    def assertSecretNotIn(self, result):
        self.assertNotIn("outside-secret-7f3a", result.stdout + result.stderr)

    def assertHostReads(self, path):
        """The control: without the sandbox the path does lead to the secret."""
        self.assertEqual(self.host(["cat", path]).stdout, "outside-secret-7f3a\n")

    # cites SEC-4, SEC-6, SEC-7
    def test_write_outside_grants(self):
        rw, ro, other = self.mkdir("rw"), self.mkdir("ro"), self.mkdir("other")
        script = (f"echo x > {other}/new; echo other=$?; echo x > {ro}/new; echo ro=$?; "
                  f"echo x > {rw}/new; echo rw=$?")
        r = self.assertRan(self.run_box(["sh", "-c", script], "--rw", rw, "--ro", ro))
        self.assertEqual(r.stdout, "other=2\nro=2\nrw=0\n")
        self.assertEqual(sorted(os.listdir(other) + os.listdir(ro)), [])
        self.assertTrue(os.path.exists(os.path.join(rw, "new")))
        # Control: the host can write there.
        self.assertEqual(self.host(["sh", "-c", f"echo x > {other}/new"]).returncode, 0)
        self.assertTrue(os.path.exists(os.path.join(other, "new")))

    # cites SEC-4, SEC-7
    def test_read_outside_grants(self):
        public = self.mkdir("public")
        r = self.run_box(["sh", "-c", f"cat {self.secret}; ls {self.path('outside')}"],
                         "--ro", public)
        self.assertNotEqual(r.returncode, 0)
        self.assertSecretNotIn(r)
        self.assertIn("No such file or directory", r.stderr)
        self.assertHostReads(self.secret)

    # cites SEC-1, SEC-5
    def test_symlink_to_file_outside(self):
        grant = self.mkdir("grant")
        os.symlink(self.secret, os.path.join(grant, "abs-link"))
        os.symlink("../outside/secret.txt", os.path.join(grant, "rel-link"))
        for link in ("abs-link", "rel-link"):
            with self.subTest(link=link):
                path = os.path.join(grant, link)
                r = self.run_box(["cat", path], "--ro", grant)
                self.assertNotEqual(r.returncode, 0)
                self.assertSecretNotIn(r)
                self.assertHostReads(path)

    # cites SEC-1, SEC-5
    def test_symlink_to_directory_outside(self):
        grant = self.mkdir("grant")
        os.symlink(self.path("outside"), os.path.join(grant, "dir-link"))
        link = os.path.join(grant, "dir-link")
        r = self.run_box(["sh", "-c", f"ls {link}/; cat {link}/secret.txt"], "--ro", grant)
        self.assertNotEqual(r.returncode, 0)
        self.assertSecretNotIn(r)
        self.assertNotIn("secret.txt", r.stdout)
        self.assertHostReads(f"{link}/secret.txt")

    # cites SEC-4, SEC-7
    def test_symlink_made_inside_the_sandbox(self):
        rw = self.mkdir("rw")
        link = os.path.join(rw, "made-link")
        script = f"ln -s {self.path('outside')} {link} && cat {link}/secret.txt"
        r = self.run_box(["sh", "-c", script], "--rw", rw)
        self.assertNotEqual(r.returncode, 0)
        self.assertSecretNotIn(r)
        self.assertTrue(os.path.islink(link))  # the link was made, on the host too
        self.assertHostReads(f"{link}/secret.txt")

    # cites SEC-1
    def test_dotdot_traversal(self):
        self.mkdir("grant/sub")
        grant = self.path("grant")
        paths = [f"{grant}/../outside/secret.txt", f"{grant}/sub/../../outside/secret.txt"]
        script = "; ".join(f"cat {p}" for p in paths) + f"; cd {grant} && cat ../outside/secret.txt"
        r = self.run_box(["sh", "-c", script], "--ro", grant)
        self.assertNotEqual(r.returncode, 0)
        self.assertSecretNotIn(r)
        for p in paths:
            self.assertHostReads(p)

    # cites SEC-3
    def test_denied_path_inside_a_grant_is_hidden(self):
        project = self.mkdir("project")
        self.write("project/private/key.pem", "deny-secret-51c2\n")
        self.write("project/token.txt", "deny-secret-51c2\n")
        self.write("project/readme.txt", "public\n")
        script = (f"cat {project}/readme.txt; ls -A {project}/private; "
                  f"cat {project}/private/key.pem {project}/token.txt; "
                  f"echo x > {project}/private/new; echo x > {project}/token.txt")
        r = self.run_box(["sh", "-c", script], "--rw", project,
                         "--deny", f"{project}/private", "--deny", f"{project}/token.txt")
        self.assertEqual(r.stdout, "public\n")
        self.assertNotIn("deny-secret-51c2", r.stdout + r.stderr)
        self.assertEqual(os.listdir(f"{project}/private"), ["key.pem"])
        self.assertEqual(self.read(f"{project}/token.txt"), "deny-secret-51c2\n")
        # Control: without --deny the same sandbox reads both.
        r = self.run_box(["cat", f"{project}/private/key.pem", f"{project}/token.txt"],
                         "--rw", project)
        self.assertEqual(r.stdout, "deny-secret-51c2\n" * 2)

    # cites SEC-2
    def test_credentials_in_home_are_hidden(self):
        home = self.mkdir("home")
        ssh = self.write("home/.ssh/id_ed25519", "ssh-secret-0b9d\n")
        aws = self.write("home/.aws/credentials", "aws-secret-77e1\n")
        self.write("home/notes.txt", "notes\n")
        script = f"cat {home}/notes.txt; ls -A {home}/.ssh {home}/.aws; cat {ssh}; cat {aws}"
        # HOME is the fixture home, so ~ in the policy resolves there.
        r = self.run_box(["sh", "-c", script], "--ro", home, env=self.env(home=home))
        self.assertTrue(r.stdout.startswith("notes\n"), r.stdout)
        for secret in ("ssh-secret-0b9d", "aws-secret-77e1"):
            self.assertNotIn(secret, r.stdout + r.stderr)
        for name in ("id_ed25519", "credentials"):  # not even listed
            self.assertNotIn(name, r.stdout)
        # ~ in a grant means the same home.
        out = self.run_json(["cat", ssh], "--ro", "~", env=self.env(home=home))
        self.assertNotIn("ssh-secret-0b9d", out["stdout"])
        hidden = {d["path"] for d in out["decisions"] if d["granted"] == "none"}
        self.assertTrue({f"{home}/.ssh", f"{home}/.aws"} <= hidden, out["decisions"])
        # Control: the host reads them.
        self.assertEqual(self.host(["cat", ssh, aws]).stdout, "ssh-secret-0b9d\naws-secret-77e1\n")

    # cites SEC-2, SEC-6
    def test_git_hooks_and_config_unwritable_in_a_writable_repo(self):
        repo = self.mkdir("repo")
        self.mkdir("repo/.git/hooks")
        config = self.write("repo/.git/config", "[core]\n")
        hook = f"{repo}/.git/hooks/pre-commit"
        script = (f"echo evil > {hook}; echo hook=$?; echo evil >> {config}; echo config=$?; "
                  f"echo code > {repo}/main.py; echo code=$?")
        r = self.assertRan(self.run_box(["sh", "-c", script], "--rw", repo))
        self.assertEqual(r.stdout, "hook=2\nconfig=2\ncode=0\n")
        self.assertFalse(os.path.exists(hook))
        self.assertEqual(self.read(config), "[core]\n")
        # Control: the host (and so a later `git commit`) would run a hook written there.
        self.assertEqual(self.host(["sh", "-c", f"echo ok > {hook}"]).returncode, 0)
        os.unlink(hook)

    # cites SEC-12
    def test_git_rename_away_and_recreate_hooks(self):
        repo = self.mkdir("repo")
        self.mkdir("repo/.git/hooks")
        self.write("repo/.git/config", "[core]\n")
        hook = f"{repo}/.git/hooks/pre-commit"
        script = (f"mv {repo}/.git {repo}/.git-old; mv {repo}/.git/hooks {repo}/.git/hooks-old; "
                  f"rm -rf {repo}/.git; mkdir -p {repo}/.git/hooks; echo evil > {hook}; "
                  f"chmod +x {hook}")
        self.run_box(["sh", "-c", script], "--rw", repo)
        self.assertFalse(os.path.exists(hook), "a hook appeared at the host's .git/hooks")
        self.assertEqual(sorted(os.listdir(repo)), [".git"])
        self.assertEqual(sorted(os.listdir(f"{repo}/.git")), ["config", "hooks"])
        # Control: outside, the same script does plant the hook.
        self.host(["sh", "-c", script])
        self.assertEqual(self.read(hook), "evil\n")

    # KNOWN LIMITATION (docs/threat-model.md): protected names are found only where they already exist
    # (FindProtectedPaths in src/policy/protected_paths.cc lstat()s each candidate), so in a
    # writable project that has none yet the sandbox creates .mcp.json, .envrc, .vscode/,
    # .git/hooks/pre-commit and .git/config on the host, all of which run code later.
    # cites SEC-2
    @unittest.expectedFailure
    def test_protected_names_cannot_be_created_in_a_writable_project(self):
        project = self.mkdir("project")
        names = [".mcp.json", ".envrc", ".vscode/tasks.json", ".git/hooks/pre-commit",
                 ".git/config"]
        script = (f"cd {project}; mkdir -p .vscode .git/hooks; "
                  + "; ".join(f"echo evil > {n}" for n in names) + "; echo main > main.py")
        self.run_box(["sh", "-c", script], "--rw", project)
        self.assertEqual(self.read(f"{project}/main.py"), "main\n")  # the grant is writable
        created = [n for n in names if os.path.exists(os.path.join(project, n))]
        self.assertEqual(created, [])

    # SEC-2: repositories nested inside a writable workspace (here two levels down) keep
    # .git/hooks and .git/config read-only.
    # cites SEC-2
    def test_git_hooks_unwritable_in_a_nested_repo(self):
        workspace = self.mkdir("workspace")
        self.mkdir("workspace/org/repo/.git/hooks")
        self.write("workspace/org/repo/.git/config", "[core]\n")
        hook = f"{workspace}/org/repo/.git/hooks/pre-commit"
        self.run_box(["sh", "-c", f"echo evil > {hook}"], "--rw", workspace)
        self.assertFalse(os.path.exists(hook), "a hook was planted in a nested repository")

    # cites SEC-11
    def test_etc_shadow_unreadable_even_for_root(self):
        if not harness.is_root():
            self.skipTest("needs root: only root can read /etc/shadow outside the sandbox")
        host = self.host(["cat", "/etc/shadow"])
        self.assertEqual(host.returncode, 0)
        self.assertIn("root:", host.stdout)  # control: root reads it outside
        r = self.run_box(["cat", "/etc/shadow"])
        self.assertNotIn("root:", r.stdout)
        self.assertEqual(r.stdout, "")

    # cites SEC-4
    def test_home_root_sys_not_visible(self):
        candidates = ["/home", "/root", "/sys", "/var", "/opt", "/srv", "/mnt", "/usr/local"]
        present = [d for d in candidates if os.path.exists(d)]  # the control
        self.assertIn("/sys", present)
        script = "; ".join(f'test -e {d} && echo "visible {d}"' for d in present) + "; true"
        r = self.assertRan(self.run_box(["sh", "-c", script]))
        self.assertEqual(r.stdout, "")

    # cites SEC-4
    def test_tmp_is_private_and_empty(self):
        name = harness.unique("agentbox-host-tmp")
        host_file = os.path.join("/tmp", name)
        with open(host_file, "w") as f:
            f.write("host tmp file\n")
        self.addCleanup(os.unlink, host_file)
        made = harness.unique("agentbox-sandbox-tmp")
        self.addCleanup(lambda: os.path.exists(f"/tmp/{made}") and os.unlink(f"/tmp/{made}"))
        r = self.assertRan(self.run_box(["sh", "-c", f"ls -A /tmp; echo x > /tmp/{made}; "
                                                     f"ls -A /tmp"]))
        self.assertEqual(r.stdout, f"{made}\n")
        self.assertFalse(os.path.exists(f"/tmp/{made}"), "the sandbox wrote into the host's /tmp")
        self.assertIn(name, os.listdir("/tmp"))  # control: the host sees its file

    # cites SEC-4
    def test_dev_shm_is_private(self):
        name = harness.unique("agentbox-host-shm")
        with open(f"/dev/shm/{name}", "w") as f:
            f.write("host shm\n")
        self.addCleanup(os.unlink, f"/dev/shm/{name}")
        made = harness.unique("agentbox-sandbox-shm")
        self.addCleanup(lambda: os.path.exists(f"/dev/shm/{made}") and
                        os.unlink(f"/dev/shm/{made}"))
        r = self.assertRan(self.run_box(["sh", "-c", f"ls -A /dev/shm; echo x > /dev/shm/{made}; "
                                                     f"ls -A /dev/shm"]))
        self.assertEqual(r.stdout, f"{made}\n")
        self.assertFalse(os.path.exists(f"/dev/shm/{made}"))
        self.assertIn(name, os.listdir("/dev/shm"))  # control: the host sees its file


class Secrets(harness.SandboxTest):
    """The caller's environment and file descriptors stay outside."""

    # cites SEC-13, SEC-19
    def test_environment_of_program_and_pid1(self):
        value = harness.unique("env-secret")
        rw = self.mkdir("rw")
        script = (f"env > {rw}/env; cat /proc/self/environ > {rw}/self-environ; "
                  f"cat /proc/1/environ > {rw}/pid1-environ; "
                  f"cat /proc/1/cmdline > {rw}/pid1-cmdline; touch {rw}/ready; "
                  f"i=0; while [ ! -e {rw}/go ] && [ $i -lt 300 ]; do sleep 0.05; "
                  f"i=$((i+1)); done")
        p = subprocess.Popen([harness.AGENTBOX, "run", "--rw", rw, "--", "sh", "-c", script],
                             stdout=subprocess.PIPE, stderr=subprocess.PIPE, cwd="/",
                             env=self.env(AGENTBOX_TEST_SECRET=value))
        try:
            self.assertTrue(harness.wait_for(lambda: os.path.exists(f"{rw}/ready")), p.pid)
            # Control: the secret and the command line are in agentbox's own memory, of which
            # the sandbox's pid 1 is a copy.
            with open(f"/proc/{p.pid}/environ", "rb") as f:
                self.assertIn(value.encode(), f.read())
            with open(f"/proc/{p.pid}/cmdline", "rb") as f:
                self.assertIn(rw.encode(), f.read())
            open(f"{rw}/go", "w").close()
            _, stderr = p.communicate(timeout=harness.TIMEOUT)
        finally:
            if p.poll() is None:
                p.kill()
                p.communicate()
        self.assertEqual(p.returncode, 0, stderr)
        for name in ("env", "self-environ", "pid1-environ", "pid1-cmdline"):
            with open(f"{rw}/{name}", "rb") as f:
                content = f.read()
            self.assertNotIn(value.encode(), content, name)
            self.assertNotIn(b"AGENTBOX_TEST_SECRET", content, name)
            self.assertNotIn(rw.encode() + b"/ready", content, name)
        with open(f"{rw}/env", "rb") as f:
            self.assertIn(b"PATH=", f.read())  # the files were really written

    # cites SEC-14
    def test_caller_file_descriptors_not_inherited(self):
        secret = self.write("fd-secret.txt", "fd-secret-c0de\n")
        fd = os.open(secret, os.O_RDONLY)
        os.dup2(fd, 7)
        os.close(fd)
        self.addCleanup(os.close, 7)
        r = self.assertRan(self.run_box(["ls", "/proc/self/fd"], pass_fds=(7,)))
        self.assertEqual(sorted(int(x) for x in r.stdout.split()), [0, 1, 2, 3])  # 3: ls's own
        r = self.run_box(["cat", "/proc/self/fd/7"], pass_fds=(7,))
        self.assertNotEqual(r.returncode, 0)
        self.assertNotIn("fd-secret-c0de", r.stdout)
        # Control: a plain child inherits fd 7 and reads the secret through it.
        self.assertEqual(self.host(["cat", "/proc/self/fd/7"], pass_fds=(7,)).stdout,
                         "fd-secret-c0de\n")


class Supervisor(harness.SandboxTest):
    """The program cannot reach the sandbox's pid 1 (a copy of agentbox) or lie through it."""

    # SEC-22: pid 1 is not dumpable, so the program cannot open its descriptors through
    # /proc/1/fd to write a forged report into the status pipe (a program exiting 0 would be
    # reported as a setup failure), nor read /proc/1/mem.
    # cites SEC-22
    def test_forged_status_report_through_proc_1_fd(self):
        # executor/stages.h ChildReport {type, stage, err, detail, value}: setup failed at
        # stage 5 (mounts) with EACCES; as printf octal escapes.
        report = "".join(f"\\{b:03o}" for b in struct.pack("<5i", 1, 5, 13, -1, 0))
        # Only where pid 1 is agentbox: without a pid namespace it would be the host's init.
        # Unreadable /proc/1/exe (pid 1 not dumpable) means its fds are out of reach too.
        forge = ("exe=$(readlink /proc/1/exe 2>/dev/null); "
                 "case $exe in '') exit 0;; */agentbox) ;; *) exit 3;; esac; "
                 "for fd in /proc/1/fd/*; do case $fd in */[012]) continue;; esac; "
                 "case $(readlink $fd) in pipe:*) "
                 f"printf '{report}' > $fd && echo forged >&2;; esac; done; ")
        # Control: without the forgery the same program's exit 0 is reported as such.
        self.assertRan(self.run_box(["sh", "-c", "ls /proc/1/fd > /dev/null; exit 0"]))
        r = self.run_box(["sh", "-c", forge + "exit 0"])
        self.assertNotIn("setup error", r.stderr)
        self.assertEqual(r.returncode, 0, r.stderr)
        # And directly: pid 1's descriptors and memory are out of reach.
        probe = self.run_box(["sh", "-c", "for fd in /proc/1/fd/*; do "
                              "( : >> \"$fd\" ) 2>/dev/null && echo \"opened $fd\"; done; "
                              "head -c1 /proc/1/mem >/dev/null 2>&1 && echo mem; "
                              "head -c1 /proc/1/environ >/dev/null 2>&1 && echo environ; true"])
        self.assertEqual(probe.stdout, "")


class Processes(harness.SandboxTest):
    """The sandbox's processes: their own pid namespace, hostname, no privileges."""

    def sandbox_status(self):
        return harness.status_fields(self.assertRan(self.run_box(["cat", "/proc/self/status"]))
                                     .stdout)

    # cites SEC-4, SEC-31
    def test_host_processes_not_visible(self):
        r = self.assertRan(self.run_box(["sh", "-c", "ls /proc; echo --; ps -e -o pid=,comm="]))
        listing, ps = r.stdout.split("--\n")
        pids = sorted(int(x) for x in listing.split() if x.isdigit())
        # init, sh, ls and nothing else: no host process, and the network namespace's helper
        # (SEC-31) is gone before the program starts (it took pid 2).
        self.assertEqual(len(pids), 3, listing)
        self.assertEqual(pids[0], 1)
        self.assertNotIn(os.getpid(), pids)
        comms = sorted(line.split()[1] for line in ps.splitlines())
        self.assertEqual(comms, ["agentbox", "ps", "sh"], ps)
        # Control: the host's /proc shows this test runner.
        self.assertIn(str(os.getpid()), os.listdir("/proc"))

    # cites SEC-4
    def test_own_uts_namespace_and_hostname(self):
        # Read only: a test must not change the host's hostname if the layer were missing.
        r = self.assertRan(self.run_box(["sh", "-c", "hostname; readlink /proc/self/ns/uts"]))
        name, namespace = r.stdout.split()
        self.assertEqual(name, "agentbox")
        # Control: the host has another name and another UTS namespace.
        self.assertNotEqual(socket.gethostname(), "agentbox")
        self.assertNotEqual(namespace, os.readlink("/proc/self/ns/uts"))

    # cites SEC-10
    def test_all_capabilities_dropped(self):
        status = self.sandbox_status()
        for cap in ("CapInh", "CapPrm", "CapEff", "CapBnd", "CapAmb"):
            self.assertEqual(int(status[cap], 16), 0, cap)
        # Control: a user namespace alone would give the program a full set.
        control = self.host(["unshare", "--user", "--map-root-user", "cat", "/proc/self/status"])
        self.assertEqual(control.returncode, 0, control.stderr)
        self.assertNotEqual(int(harness.status_fields(control.stdout)["CapEff"], 16), 0)
        if harness.is_root():  # and root outside has them too
            own = harness.status_fields(self.host(["cat", "/proc/self/status"]).stdout)
            self.assertNotEqual(int(own["CapEff"], 16), 0)

    # cites SEC-8, SEC-10
    def test_no_new_privs_and_seccomp_filter(self):
        status = self.sandbox_status()
        self.assertEqual((status["NoNewPrivs"], status["Seccomp"]), ("1", "2"))
        # Control: outside, one filter fewer (none, unless the host itself runs under one).
        control = harness.status_fields(self.host(["cat", "/proc/self/status"]).stdout)
        self.assertEqual(int(status["Seccomp_filters"]), int(control["Seccomp_filters"]) + 1)
        if control["Seccomp"] == "0":
            self.assertEqual(control["NoNewPrivs"], "0")


class Syscalls(harness.SandboxTest):
    """The seccomp filter: EPERM where the kernel would answer otherwise."""

    def assertDenied(self, call, kernel_answer):
        r = self.assertRan(self.run_probe("sysprobe", call))
        self.assertEqual(r.stdout, "EPERM\n", r.stderr)
        control = self.host([self.probe("sysprobe"), call])
        self.assertEqual(control.stdout, kernel_answer + "\n", control.stderr)

    # cites SEC-8
    def test_nested_user_namespace(self):
        self.assertDenied("unshare-user", "OK")
        r = self.run_box(["unshare", "--user", "true"])
        self.assertNotEqual(r.returncode, 0)
        self.assertIn("Operation not permitted", r.stderr)

    # cites SEC-8
    def test_ptrace_traceme(self):
        self.assertDenied("ptrace-traceme", "OK")

    # cites SEC-8
    def test_io_uring_setup(self):
        self.assertDenied("io-uring-setup", "EFAULT")

    # cites SEC-8
    def test_keyctl(self):
        self.assertDenied("keyctl", "EOPNOTSUPP")

    # cites SEC-8
    def test_mount(self):
        self.assertDenied("mount", "EFAULT")

    # cites SEC-8
    def test_bpf(self):
        self.assertDenied("bpf", "EINVAL")

    # cites SEC-8
    def test_32bit_int80_syscall_killed(self):
        r = self.run_probe("int80")
        self.assertEqual(r.returncode, SIGSYS_EXIT, r.stdout + r.stderr)
        self.assertEqual(r.stdout, "")
        # Control: outside, the same instruction is not a SIGSYS.
        control = self.host([self.probe("int80")])
        self.assertNotEqual(control.returncode, -signal.SIGSYS)


class Terminal(harness.SandboxTest):
    """TIOCSTI: typing into the caller's terminal."""

    # cites SEC-8, SEC-18
    def test_tiocsti_refused(self):
        status, shown, stderr = harness.run_on_pty(
            [harness.AGENTBOX, "run", "--ro", harness.PROBES, "--", self.probe("tiocsti")],
            env=self.env())
        self.assertEqual(status, 0, stderr)
        self.assertIn(b"sctty=OK sti=EPERM", shown)  # it owned the terminal, yet was refused
        self.assertNotIn(b"X", shown)  # nothing was echoed, so nothing was typed
        # Control: outside, the probe types "X" into the terminal, which echoes it.
        try:  # before Linux 6.2 there is no switch: TIOCSTI is always allowed
            with open("/proc/sys/dev/tty/legacy_tiocsti") as f:
                legacy = f.read().strip()
        except FileNotFoundError:
            legacy = "1"
        if legacy != "1":
            self.skipTest("control skipped: dev.tty.legacy_tiocsti is 0, the kernel itself "
                          "refuses TIOCSTI")
        status, shown, stderr = harness.run_on_pty([self.probe("tiocsti")], env=self.env())
        self.assertEqual(status, 0, stderr)
        self.assertIn(b"sctty=OK sti=OK", shown)
        self.assertIn(b"X", shown)


class Network(harness.SandboxTest):
    """No network by default; --net allow reaches the host, abstract sockets never."""

    def tcp_listener(self):
        listener = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
        self.addCleanup(listener.close)
        listener.bind(("127.0.0.1", 0))
        listener.listen(8)
        listener.setblocking(False)  # connections complete in the backlog; accept() checks
        return listener, str(listener.getsockname()[1])

    def accepted(self, listener, wait=False):
        """What the first pending connection sent, or None if nobody connected. wait: for a
        connection the client saw established, which the kernel may not have queued yet."""
        if wait:
            select.select([listener], [], [], harness.TIMEOUT)
        try:
            conn, _ = listener.accept()
        except BlockingIOError:
            return None
        with conn:
            conn.settimeout(harness.TIMEOUT)
            return conn.recv(100)

    # cites SEC-20, SEC-31
    def test_loopback_listener_unreachable_by_default(self):
        listener, port = self.tcp_listener()
        r = self.assertRan(self.run_probe("connect", "tcp", "127.0.0.1", port))
        self.assertEqual(r.stdout, "ECONNREFUSED\n")  # the sandbox's own, empty loopback
        self.assertIsNone(self.accepted(listener))
        # Control: from the host the listener answers.
        self.assertEqual(self.host([self.probe("connect"), "tcp", "127.0.0.1", port]).stdout,
                         "OK\n")
        self.assertEqual(self.accepted(listener, wait=True), b"hello from probe\n")

    # cites SEC-20
    def test_net_allow_reaches_the_host(self):
        listener, port = self.tcp_listener()
        r = self.assertRan(self.run_probe("connect", "tcp", "127.0.0.1", port,
                                          options=("--net", "allow")))
        self.assertEqual(r.stdout, "OK\n", r.stderr)
        self.assertEqual(self.accepted(listener, wait=True), b"hello from probe\n")

    # cites SEC-7
    def test_host_abstract_unix_socket_unreachable(self):
        name = harness.unique("agentbox-test-abstract")
        listener = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        self.addCleanup(listener.close)
        listener.bind("\0" + name)
        listener.listen(8)
        listener.setblocking(False)
        out = self.run_json([self.probe("connect"), "abstract", name], "--ro", harness.PROBES,
                            "--net", "allow")
        if out["enforcement"]["landlock_abi"] < 6:
            self.skipTest("Landlock ABI < 6 cannot scope abstract unix sockets on this kernel")
        self.assertEqual(out["stdout"], "EPERM\n", out["stderr"])  # Landlock's scope
        r = self.assertRan(self.run_probe("connect", "abstract", name))
        self.assertEqual(r.stdout, "ECONNREFUSED\n")  # another network namespace
        self.assertIsNone(self.accepted(listener))
        # Control: from the host the socket answers.
        self.assertEqual(self.host([self.probe("connect"), "abstract", name]).stdout, "OK\n")
        self.assertEqual(self.accepted(listener, wait=True), b"hello from probe\n")


class Lifetime(harness.SandboxTest):
    """Nothing the sandbox starts outlives the run."""

    def sleeper_script(self, rw):
        """Two `sleep` children with a unique argument, then a file saying so; and the argument.

        The argument also appears in agentbox's and sh's command lines (the script), so while
        the sandbox runs exactly two processes have it as a whole argument; once the run is
        over no process may have it anywhere."""
        marker = harness.unique_sleep()
        script = f"sleep {marker} & sleep {marker} & touch {rw}/started; wait"
        return script, marker

    @staticmethod
    def both_sleepers_seen(marker):
        """Whether the host sees both sleepers (a child not yet past its exec still shows
        sh's command line, so one may appear before the other)."""
        return harness.wait_for(
            lambda: len(harness.processes_with(marker, exact=True)) == 2, timeout=5)

    # cites SEC-16, SEC-15
    def test_timeout_kills_everything(self):
        rw = self.mkdir("rw")
        script, marker = self.sleeper_script(rw)
        # The timeout leaves the control below seconds to see the sleepers on a loaded machine.
        p = subprocess.Popen([harness.AGENTBOX, "run", "--rw", rw, "--timeout", "5000", "--",
                              "sh", "-c", script], stdout=subprocess.PIPE,
                             stderr=subprocess.PIPE, cwd="/", env=self.env())
        try:
            self.assertTrue(harness.wait_for(lambda: os.path.exists(f"{rw}/started")))
            # Control: the host sees the sleepers while the sandbox runs.
            self.assertTrue(self.both_sleepers_seen(marker))
            _, stderr = p.communicate(timeout=harness.TIMEOUT)
        finally:
            if p.poll() is None:
                p.kill()
                p.communicate()
        self.assertEqual(p.returncode, 124, stderr)
        self.assertEqual(harness.processes_with(marker), [])

    # cites SEC-17
    def test_sigkill_of_agentbox_kills_everything(self):
        rw = self.mkdir("rw")
        script, marker = self.sleeper_script(rw)
        p = subprocess.Popen([harness.AGENTBOX, "run", "--rw", rw, "--", "sh", "-c", script],
                             stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, cwd="/",
                             env=self.env())
        try:
            self.assertTrue(harness.wait_for(lambda: os.path.exists(f"{rw}/started")))
            self.assertTrue(self.both_sleepers_seen(marker))
        finally:
            p.kill()
            p.wait(timeout=harness.TIMEOUT)
        self.assertEqual(p.returncode, -signal.SIGKILL)
        left = harness.wait_for(lambda: not harness.processes_with(marker), timeout=5)
        self.assertTrue(left, f"still running: {harness.processes_with(marker)}")

    # cites SEC-15
    def test_background_writer_after_exit_writes_nothing(self):
        rw = self.mkdir("rw")
        target = f"{rw}/log"
        script = f"(sleep 0.5; echo late >> {target}) & echo early >> {target}; exit 0"
        self.assertRan(self.run_box(["sh", "-c", script], "--rw", rw))
        time.sleep(1.5)
        self.assertEqual(self.read(target), "early\n")
        # Control: without the sandbox the background writer does write.
        os.unlink(target)
        self.host(["sh", "-c", script])  # returns once the writer closes the output pipe
        harness.wait_for(lambda: "late" in self.read(target), timeout=5)
        self.assertEqual(self.read(target), "early\nlate\n")

    # cites SEC-9
    def test_run_cgroup_removed_afterwards(self):
        if not harness.is_root():
            self.skipTest("needs root: as another user agentbox falls back to rlimits here")
        rw = self.mkdir("rw")
        script = (f"touch {rw}/started; i=0; while [ ! -e {rw}/go ] && [ $i -lt 300 ]; "
                  f"do sleep 0.05; i=$((i+1)); done")
        for argv, code in ((["sh", "-c", script], 0), (["sleep", "30"], 124)):
            with self.subTest(argv=argv[0]):
                p = subprocess.Popen([harness.AGENTBOX, "run", "--json", "--rw", rw, "--memory",
                                      "268435456", "--timeout", "2000" if code else "20000",
                                      "--", *argv], stdout=subprocess.PIPE,
                                     stderr=subprocess.PIPE, cwd="/", env=self.env())
                pattern = f"/sys/fs/cgroup/**/run-{p.pid}-*"
                try:
                    if code == 0:  # the control: while the sandbox runs, its cgroup is there
                        self.assertTrue(harness.wait_for(lambda: os.path.exists(f"{rw}/started")))
                        self.assertTrue(glob.glob(pattern, recursive=True), pattern)
                        open(f"{rw}/go", "w").close()
                    stdout, stderr = p.communicate(timeout=harness.TIMEOUT)
                finally:
                    if p.poll() is None:
                        p.kill()
                        p.communicate()
                out = json.loads(stdout)
                if out["enforcement"]["limits"] == "rlimit":
                    self.skipTest("no usable cgroup on this host")
                self.assertEqual(out["exit_code"], code, stderr)
                self.assertEqual(glob.glob(pattern, recursive=True), [])


class Limits(harness.SandboxTest):
    """Resource limits: a fork bomb stops at --pids."""

    # cites SEC-9
    def test_fork_bomb_bounded_by_pids(self):
        out = self.run_json([self.probe("forkbomb"), "200"], "--ro", harness.PROBES,
                            "--pids", "20", "--timeout", "15000")
        self.assertEqual(out["exit_code"], 0, out["stderr"])
        forked, error = (field.split("=")[1] for field in out["stdout"].split())
        self.assertLess(int(forked), 20)
        self.assertGreater(int(forked), 0)
        self.assertEqual(error, "EAGAIN")
        # Control: outside, the same probe forks 40 children.
        self.assertEqual(self.host([self.probe("forkbomb"), "40"]).stdout,
                         "forked=40 error=none\n")


if __name__ == "__main__":
    unittest.main()
