#!/usr/bin/env python3
"""Installs the MCP test clients (tests/mcp/package.json, pinned by package-lock.json) into
NPM_DIR under the build tree, for the ctest fixture `mcp_clients`.

    install_clients.py NPM_DIR

Idempotent: when NPM_DIR already holds exactly this package.json and package-lock.json and
a completed install, nothing is fetched (so a machine that installed once runs offline).
Otherwise `npm ci` with the npm cache inside NPM_DIR. The tree is then made world-readable,
so the uid-65534 variants can run the clients that root installed.

Exit status: 0 installed (or already there); 1 with a one-line reason otherwise. It never
pretends: if npm cannot reach the registry, this fails, and so do the tests that need it.
"""
import os
import shutil
import subprocess
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
FILES = ("package.json", "package-lock.json")
STAMP = ".agentbox-installed"  # written last: its presence means the install completed
REQUIRED = ("node_modules/@modelcontextprotocol/sdk/package.json",
            "node_modules/@modelcontextprotocol/inspector/package.json")


def read(path):
    try:
        with open(path, "rb") as f:
            return f.read()
    except OSError:
        return None


def up_to_date(npm_dir):
    if read(os.path.join(npm_dir, STAMP)) is None:
        return False
    if any(read(os.path.join(HERE, n)) != read(os.path.join(npm_dir, n)) for n in FILES):
        return False
    return all(os.path.isfile(os.path.join(npm_dir, r)) for r in REQUIRED)


def make_world_readable(root):
    for dirpath, dirnames, filenames in os.walk(root):
        for name in dirnames + filenames:
            path = os.path.join(dirpath, name)
            if os.path.islink(path):
                continue
            mode = os.stat(path).st_mode
            extra = 0o044 | (0o011 if mode & 0o100 or os.path.isdir(path) else 0)
            os.chmod(path, mode | extra)
    os.chmod(root, os.stat(root).st_mode | 0o055)


def fail(message):
    print(f"FAIL: install_clients: {message}", flush=True)
    return 1


def main(argv):
    if len(argv) != 2:
        sys.stderr.write("usage: install_clients.py NPM_DIR\n")
        return 2
    npm_dir = os.path.abspath(argv[1])
    if up_to_date(npm_dir):
        print(f"MCP test clients already installed in {npm_dir}")
        return 0
    for tool in ("node", "npm"):
        if shutil.which(tool) is None:
            return fail(f"`{tool}` is not on PATH; `scripts/install-deps test` installs nodejs "
                        "and npm")
    os.makedirs(npm_dir, exist_ok=True)
    try:
        os.unlink(os.path.join(npm_dir, STAMP))
    except FileNotFoundError:
        pass
    for name in FILES:
        shutil.copyfile(os.path.join(HERE, name), os.path.join(npm_dir, name))
    command = ["npm", "ci", "--no-audit", "--no-fund", "--loglevel=error",
               "--cache", os.path.join(npm_dir, ".npm-cache")]
    print(f"installing the MCP test clients: {' '.join(command)} (in {npm_dir})", flush=True)
    try:
        r = subprocess.run(command, cwd=npm_dir, capture_output=True, text=True, timeout=900,
                           env=dict(os.environ, npm_config_update_notifier="false"))
    except subprocess.TimeoutExpired:
        return fail("npm ci did not finish in 900 s (is the npm registry reachable?)")
    if r.returncode != 0:
        sys.stdout.write(r.stdout[-4000:])
        sys.stdout.write(r.stderr[-4000:])
        return fail(f"npm ci exited {r.returncode}: the MCP client tests cannot run without "
                    "@modelcontextprotocol/sdk and @modelcontextprotocol/inspector (offline?)")
    missing = [p for p in REQUIRED if not os.path.isfile(os.path.join(npm_dir, p))]
    if missing:
        return fail(f"npm ci succeeded but {', '.join(missing)} is missing")
    make_world_readable(npm_dir)
    with open(os.path.join(npm_dir, STAMP), "w") as f:
        f.write("ok\n")
    os.chmod(os.path.join(npm_dir, STAMP), 0o644)
    print(f"MCP test clients installed in {npm_dir}")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
