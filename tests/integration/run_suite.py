#!/usr/bin/env python3
"""Runs one TestCase class of a suite, as the current user or as uid/gid 65534.

    run_suite.py root|nobody SCRIPT CLASS

"root" runs the class as whoever runs ctest (root in CI; the name says what CI covers).
"nobody" re-runs this runner as uid 65534 (as_nobody.py; skipped, 77, unless ctest runs as
root). Exit status: unittest's (0 passed, 1 failed).
"""
import os
import sys

import as_nobody


def main(argv):
    if len(argv) != 4 or argv[1] not in ("root", "nobody"):
        sys.stderr.write("usage: run_suite.py root|nobody SCRIPT CLASS\n")
        return 2
    variant, script, test_class = argv[1:]
    if variant == "nobody":
        status = as_nobody.become_nobody(argv[0], ["nobody", script, test_class])
        if status is not None:
            return status
    print(f"{test_class} as uid {os.geteuid()} gid {os.getegid()}, "
          f"AGENTBOX={os.environ.get('AGENTBOX')}", flush=True)
    os.execv(sys.executable, [sys.executable, "-B", script, "-v", test_class])


if __name__ == "__main__":
    sys.exit(main(sys.argv))
