"""The unprivileged variant of every test tier: re-run a runner as uid/gid 65534.

    status = as_nobody.become_nobody(__file__, ["nobody", script, test_class])
    if status is not None:
        return status          # 77: skipped (not root), 1: setpriv missing

Returns None once the process runs as uid 65534. As root it re-executes
`python3 -B RUNNER ARGS...` under `setpriv --reuid=65534 --regid=65534 --clear-groups` with
HOME=/tmp and never returns. Only root can switch uid, so as anyone else it returns 77, which
ctest reports as skipped (SKIP_RETURN_CODE): the _root variant ran as that user.
"""
import os
import shutil
import sys

SKIP = 77
NOBODY = 65534


def become_nobody(runner, args):
    if os.geteuid() == NOBODY:
        return None
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
                        "--", sys.executable, "-B", os.path.abspath(runner), *args], env)
    return 1  # not reached
