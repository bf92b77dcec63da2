#!/usr/bin/env python3
"""Installs the real MXC executor for the side-by-side tier into a cache under the build tree:

    install_tools.py CACHE_DIR

- `@microsoft/mxc-sdk@0.8.0` from npm (`npm install --prefix CACHE_DIR/npm --ignore-scripts`):
  it ships `lxc-exec` (bin/x64 and bin/arm64), whose SHA-256 is checked against the pins below;
- `bubblewrap` from Debian (`apt-get download` + `dpkg-deb -x` into CACHE_DIR/bubblewrap),
  because lxc-exec runs `bwrap` from PATH; a `bwrap` already on PATH is the fallback when the
  download is impossible.

Writes CACHE_DIR/tools.json ({"lxcExec", "bwrapDir", "sdkDir"}) and makes the cache readable
by every user (the tier also runs as uid 65534). Re-running reuses what is there. Needs the
npm registry and the Debian mirror the first time; every step has a timeout. Exit 0 when the
tools are ready, 1 with the reason otherwise.
"""
import hashlib
import json
import os
import shutil
import subprocess
import sys

SDK = "@microsoft/mxc-sdk"
SDK_VERSION = "0.8.0"
# SHA-256 of bin/<arch>/lxc-exec in @microsoft/mxc-sdk@0.8.0 (as published on npm).
LXC_EXEC_SHA256 = {
    "x64": "9410265672796d36d7b7785c664b9016e6489b267a9b9690a970496e2a523f3e",
    "arm64": "bba6ea91631adc7bfc2c35c1d7bc0777f2d764b7b649cbd6ac8f5c2250bc70d7",
}
NPM_TIMEOUT = 600
APT_TIMEOUT = 300


class Failure(Exception):
    pass


def sdk_arch():
    machine = os.uname().machine
    if machine in ("x86_64", "amd64"):
        return "x64"
    if machine in ("aarch64", "arm64"):
        return "arm64"
    raise Failure(f"lxc-exec 0.8 ships for x64 and arm64 only, not {machine}")


def sha256(path):
    digest = hashlib.sha256()
    with open(path, "rb") as f:
        for block in iter(lambda: f.read(1 << 20), b""):
            digest.update(block)
    return digest.hexdigest()


def run(argv, timeout, **kwargs):
    print("install_tools: $ " + " ".join(argv), flush=True)
    try:
        r = subprocess.run(argv, capture_output=True, text=True, timeout=timeout, **kwargs)
    except subprocess.TimeoutExpired:
        raise Failure(f"{argv[0]} did not finish in {timeout} s")
    if r.returncode != 0:
        raise Failure(f"{' '.join(argv)} failed (exit {r.returncode}):\n{r.stdout}{r.stderr}")
    return r


def install_sdk(cache):
    prefix = os.path.join(cache, "npm")
    sdk_dir = os.path.join(prefix, "node_modules", *SDK.split("/"))
    lxc_exec = os.path.join(sdk_dir, "bin", sdk_arch(), "lxc-exec")
    want = LXC_EXEC_SHA256[sdk_arch()]
    if os.path.isfile(lxc_exec) and sha256(lxc_exec) == want:
        print(f"install_tools: {SDK}@{SDK_VERSION} already in {prefix}")
        return sdk_dir, lxc_exec
    npm = shutil.which("npm")
    if npm is None:
        raise Failure("npm is not installed (scripts/install-deps test installs it)")
    os.makedirs(prefix, exist_ok=True)
    env = dict(os.environ, npm_config_cache=os.path.join(cache, "npm-cache"),
               npm_config_update_notifier="false", npm_config_fund="false",
               npm_config_audit="false")
    # --ignore-scripts: node-pty's build step is not needed (the tier spawns without a pty).
    run([npm, "install", "--prefix", prefix, "--ignore-scripts", "--no-audit", "--no-fund",
         f"{SDK}@{SDK_VERSION}"], NPM_TIMEOUT, env=env)
    if not os.path.isfile(lxc_exec):
        raise Failure(f"{SDK}@{SDK_VERSION} has no {lxc_exec}")
    got = sha256(lxc_exec)
    if got != want:
        raise Failure(f"{lxc_exec}: SHA-256 {got}, expected {want}; refusing to run it")
    os.chmod(lxc_exec, 0o755)
    return sdk_dir, lxc_exec


def install_bwrap(cache):
    root = os.path.join(cache, "bubblewrap")
    bwrap = os.path.join(root, "usr", "bin", "bwrap")
    if not os.access(bwrap, os.X_OK):
        debs = os.path.join(cache, "bubblewrap-deb")
        shutil.rmtree(debs, ignore_errors=True)
        os.makedirs(debs)
        os.chmod(debs, 0o777)  # apt-get download drops to the _apt user when it can
        try:
            run(["apt-get", "download", "bubblewrap"], APT_TIMEOUT, cwd=debs)
            deb = [f for f in os.listdir(debs) if f.endswith(".deb")]
            if len(deb) != 1:
                raise Failure(f"apt-get download left {deb} in {debs}")
            shutil.rmtree(root, ignore_errors=True)
            run(["dpkg-deb", "-x", os.path.join(debs, deb[0]), root], APT_TIMEOUT)
        except (Failure, OSError) as e:
            system = shutil.which("bwrap")
            if system is None:
                raise Failure(f"cannot download bubblewrap ({e}) and no bwrap is on PATH "
                              "(scripts/install-deps test installs it)")
            print(f"install_tools: download failed ({e}); using {system}")
            bwrap = system
    version = run([bwrap, "--version"], 30).stdout.strip()
    print(f"install_tools: {bwrap}: {version}")
    return os.path.dirname(bwrap)


def make_readable(path):
    """Everyone may read and traverse the cache (the tier also runs as uid 65534)."""
    for directory, dirs, files in os.walk(path):
        for name in dirs + files + [""]:
            full = os.path.join(directory, name) if name else directory
            if os.path.islink(full):
                continue
            mode = os.stat(full).st_mode
            extra = 0o555 if (mode & 0o111 or os.path.isdir(full)) else 0o444
            os.chmod(full, mode | extra)


def main(argv):
    if len(argv) != 2:
        print("usage: install_tools.py CACHE_DIR", file=sys.stderr)
        return 2
    cache = os.path.abspath(argv[1])
    try:
        os.makedirs(cache, exist_ok=True)
        sdk_dir, lxc_exec = install_sdk(cache)
        bwrap_dir = install_bwrap(cache)
        tools = {"lxcExec": lxc_exec, "bwrapDir": bwrap_dir, "sdkDir": sdk_dir}
        with open(os.path.join(cache, "tools.json"), "w") as f:
            json.dump(tools, f, indent=2)
        make_readable(cache)
    except Failure as e:
        print(f"install_tools: FAILED: {e}", flush=True)
        return 1
    print(f"install_tools: ready: {json.dumps(tools)}")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
