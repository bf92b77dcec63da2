#!/usr/bin/env python3
"""Integration tests of `agentbox doctor` through the real binary. ctest runs each class as
root and as uid 65534 (see run_suite.py); on the CI machine a full sandbox runs for both, so
doctor must report ok and exit 0. Inside a sandbox (no namespaces allowed) it must not.

    AGENTBOX=build/agentbox AGENTBOX_PROBES=build/tests/adversarial/probes \
        python3 tests/integration/test_doctor.py -v DoctorJson
"""
import json
import os
import unittest

import harness

# Every check doctor reports, in order.
CHECKS = [
    "kernel",
    "max_user_namespaces",
    "unprivileged_userns_clone",
    "apparmor_userns",
    "user_namespace",
    "mount_setattr",
    "landlock",
    "seccomp",
    "cgroups",
    "legacy_tiocsti",
    "sandbox",
]
STATUSES = {"ok", "warning", "fail"}
DOCTOR_TIMEOUT = 90  # seconds: doctor's own sandbox may take up to its 30 s timeout


def describe(r):
    return f"exit {r.returncode}\nstdout:\n{r.stdout}\nstderr:\n{r.stderr}"


class DoctorJson(harness.SandboxTest):
    """`doctor --json`: one object, every check, ok on this machine."""

    def setUp(self):
        super().setUp()
        self.r = self.agentbox("doctor", "--json", timeout=DOCTOR_TIMEOUT)
        self.report = json.loads(self.r.stdout)
        self.by_name = {c["name"]: c for c in self.report["checks"]}

    def test_exits_zero_and_reports_ok(self):
        self.assertEqual(self.r.returncode, 0, describe(self.r))
        self.assertIs(self.report["ok"], True, describe(self.r))

    def test_one_object_on_one_line(self):
        self.assertEqual(self.r.stdout.count("\n"), 1)
        self.assertEqual(set(self.report), {"ok", "checks"})

    def test_every_check_is_reported_in_order(self):
        self.assertEqual([c["name"] for c in self.report["checks"]], CHECKS)

    def test_each_check_has_status_finding_and_fix_when_not_ok(self):
        for check in self.report["checks"]:
            with self.subTest(check=check["name"]):
                self.assertIn(check["status"], STATUSES)
                self.assertTrue(check["finding"])
                self.assertNotIn("\n", check["finding"])
                if check["status"] == "ok":
                    self.assertNotIn("fix", check)
                else:
                    self.assertTrue(check.get("fix"), check)
                    self.assertNotIn("\n", check["fix"])

    def test_no_check_fails_here(self):
        self.assertEqual([c for c in self.report["checks"] if c["status"] == "fail"], [])

    def test_namespace_probes_pass(self):
        self.assertEqual(self.by_name["user_namespace"]["status"], "ok")
        self.assertEqual(self.by_name["mount_setattr"]["status"], "ok")

    def test_sandbox_ran_with_the_core_layers(self):
        sandbox = self.by_name["sandbox"]
        self.assertEqual(sandbox["status"], "ok", sandbox)
        for layer in ("namespaces", "netns", "pivot_root", "seccomp", "caps dropped",
                      "no_new_privs", "limits "):
            self.assertIn(layer, sandbox["finding"])
        for missing in ("no namespaces", "no netns", "no pivot_root", "no seccomp"):
            self.assertNotIn(missing, sandbox["finding"])

    def test_no_usable_cgroup_means_rlimits(self):
        if "no usable cgroup" in self.by_name["cgroups"]["finding"]:
            self.assertIn("limits rlimit", self.by_name["sandbox"]["finding"])
            self.assertEqual(self.by_name["cgroups"]["status"], "warning")


class DoctorText(harness.SandboxTest):
    """Plain `doctor`: one tagged line per check, fixes indented under non-ok ones."""

    def setUp(self):
        super().setUp()
        self.r = self.agentbox("doctor", timeout=DOCTOR_TIMEOUT)
        self.lines = self.r.stdout.splitlines()

    def test_exits_zero(self):
        self.assertEqual(self.r.returncode, 0, describe(self.r))

    def test_ok_lines_and_the_sandbox_check(self):
        self.assertTrue(any(line.startswith("[ ok ] ") for line in self.lines), describe(self.r))
        self.assertTrue(any(line.startswith("[ ok ] sandbox ") for line in self.lines),
                        describe(self.r))
        self.assertIn("agentbox can run sandboxes here.", self.r.stdout)

    def test_one_line_per_check_and_a_fix_under_each_non_ok(self):
        tagged = [line for line in self.lines if line[:6] in ("[ ok ]", "[warn]", "[FAIL]")]
        self.assertEqual([line[7:].split()[0] for line in tagged], CHECKS)
        for i, line in enumerate(self.lines):
            if line.startswith(("[warn]", "[FAIL]")):
                self.assertTrue(self.lines[i + 1].startswith("       fix: "), line)

    def test_no_colour_when_stdout_is_not_a_tty(self):
        self.assertNotIn("\033[", self.r.stdout)


class DoctorUsage(harness.SandboxTest):
    """Flag errors are refused with a message; --help works."""

    def test_unknown_option_is_an_error(self):
        r = self.agentbox("doctor", "--bogus")
        self.assertNotEqual(r.returncode, 0)
        self.assertIn("error", r.stderr)
        self.assertIn("--bogus", r.stderr)
        self.assertEqual(r.stdout, "")

    def test_positional_argument_is_an_error(self):
        r = self.agentbox("doctor", "extra")
        self.assertNotEqual(r.returncode, 0)
        self.assertIn("extra", r.stderr)

    def test_help(self):
        r = self.agentbox("doctor", "--help")
        self.assertEqual(r.returncode, 0, describe(r))
        self.assertIn("--json", r.stdout)


class DoctorInsideSandbox(harness.SandboxTest):
    """Inside a sandbox, seccomp denies unshare and clone3: doctor must say no and exit 1."""

    def test_reports_failure_and_exits_one(self):
        binary = os.path.realpath(harness.AGENTBOX)
        r = self.agentbox("run", "--ro", os.path.dirname(binary), "--", binary, "doctor",
                          "--json", timeout=DOCTOR_TIMEOUT)
        self.assertEqual(r.returncode, 1, describe(r))
        report = json.loads(r.stdout)
        self.assertIs(report["ok"], False)
        by_name = {c["name"]: c for c in report["checks"]}
        self.assertEqual(by_name["user_namespace"]["status"], "fail")
        self.assertIn("EPERM", by_name["user_namespace"]["finding"])
        self.assertTrue(by_name["user_namespace"]["fix"])
        self.assertEqual(by_name["sandbox"]["status"], "fail")
        self.assertTrue(by_name["sandbox"]["fix"])
        self.assertIn("already runs under a filter", by_name["seccomp"]["finding"])


if __name__ == "__main__":
    unittest.main()
