#!/usr/bin/env python3
"""Runs one node:test file of the MCP tier, as the current user or as uid/gid 65534.

    run_node_suite.py root|nobody TEST_FILE

The environment gives AGENTBOX (the agentbox executable) and MCP_NPM_DIR (where the ctest
fixture `mcp_clients`, install_clients.py, put the npm clients). "nobody" re-runs this
runner as uid 65534 (tests/integration/as_nobody.py; skipped, 77, unless run as root). A missing node or missing
clients FAIL the test with the reason: these tests never pass by not running.
Exit status: node --test's (0 passed, 1 failed).
"""
import os
import shutil
import sys

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "integration"))
import as_nobody  # noqa: E402
SDK = "node_modules/@modelcontextprotocol/sdk/package.json"


def main(argv):
    if len(argv) != 3 or argv[1] not in ("root", "nobody"):
        sys.stderr.write("usage: run_node_suite.py root|nobody TEST_FILE\n")
        return 2
    variant, test_file = argv[1:]
    npm_dir = os.environ.get("MCP_NPM_DIR", "")
    agentbox = os.environ.get("AGENTBOX", "")
    if not os.access(agentbox, os.X_OK):
        print(f"FAIL: AGENTBOX={agentbox!r} is not an executable; run through ctest")
        return 1
    if not os.path.isfile(os.path.join(npm_dir, SDK)):
        print(f"FAIL: the MCP test clients are not installed in MCP_NPM_DIR={npm_dir!r}; the "
              "ctest fixture mcp_clients (tests/mcp/install_clients.py) installs them with npm, "
              "and it failed or did not run (see its output)")
        return 1
    node = shutil.which("node", path="/usr/bin:/bin:/usr/local/bin") or shutil.which("node")
    if node is None:
        print("FAIL: node is not on PATH; `scripts/install-deps test` installs nodejs")
        return 1
    if variant == "nobody":
        status = as_nobody.become_nobody(argv[0], ["nobody", test_file])
        if status is not None:
            return status
    print(f"{os.path.basename(test_file)} as uid {os.geteuid()} gid {os.getegid()}, "
          f"AGENTBOX={agentbox}, node {node}", flush=True)
    os.execv(node, [node, "--test", "--test-reporter=spec", test_file])


if __name__ == "__main__":
    sys.exit(main(sys.argv))
