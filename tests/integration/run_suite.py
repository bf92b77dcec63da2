#!/usr/bin/env python3
"""Runs one TestCase class of a suite, as the current user or as uid/gid 65534.

    run_suite.py root|nobody SCRIPT CLASS

"root" runs the class as whoever runs ctest (root in CI; the name says what CI covers).
"nobody" re-runs this runner under `setpriv --reuid=65534 --regid=65534 --clear-groups`
with HOME=/tmp; only root can switch uid, so as anyone else it exits 77, which ctest reports
as skipped (SKIP_RETURN_CODE). Exit status: unittest's (0 passed, 1 failed).
"""
import os
import shutil
import sys

SKIP = 77
NOBODY = 65534


def main(argv):
    if len(argv) != 4 or argv[1] not in ("root", "nobody"):
        sys.stderr.write("usage: run_suite.py root|nobody SCRIPT CLASS\n")
        return 2
    variant, script, test_class = argv[1:]
    if variant == "nobody" and os.geteuid() != NOBODY:
        if os.geteuid() != 0:
            print(f"SKIP: running as uid {os.geteuid()}, not root: cannot switch to uid "
                  f"{NOBODY} for the unprivileged variant (the _root variant ran as this user)")
            return SKIP
        setpriv = shutil.which("setpriv")
        if setpriv is None:
            print("FAIL: setpriv (util-linux) is needed to run as uid 65534")
            return 1
        env = dict(os.environ, HOME="/tmp")
        os.execve(setpriv, [setpriv, f"--reuid={NOBODY}", f"--regid={NOBODY}", "--clear-groups",
                            "--", sys.executable, "-B", os.path.abspath(argv[0]), "nobody",
                            script, test_class], env)
    print(f"{test_class} as uid {os.geteuid()} gid {os.getegid()}, "
          f"AGENTBOX={os.environ.get('AGENTBOX')}", flush=True)
    os.execv(sys.executable, [sys.executable, "-B", script, "-v", test_class])


if __name__ == "__main__":
    sys.exit(main(sys.argv))
