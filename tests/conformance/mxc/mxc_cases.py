"""MXC conformance cases: one JSON file per case under cases/<group>/, shared by the
conformance driver (test_mxc.py, agentbox alone) and the side-by-side driver
(../sidebyside/test_sidebyside.py, agentbox and the real lxc-exec 0.8).

A case file:

    {
      "description": "what the case shows",
      "config": {...}              the MXC config, written to a file; or
      "configText": "..."          the config as raw text (malformed JSON and the like)
      "via": "file" | "configFlag" | "base64" | "stdin"     how it is passed (default file)
      "args": ["--dry-run"],       more options, before the config
      "stdin": "text",             the executor's stdin (default empty)
      "cwd": "/",                  the executor's working directory (default /)
      "callerEnv": {"K": "V"},     added to the executor's own environment
      "fixture": {"dirs": [...], "files": {"rel/path": "content"}, "symlinks": {"rel": "target"}},
      "expect": {
        "exit": 0,
        "stdout": "exact text" | "stdoutLastLine": "..." | "stdoutContains": [...],
        "stderrContains": [...],
        "parseError": "text"       exit 1; stderr "Request error" / "Configuration parse error: ...text..."
        "backendError": "text"     exit 255; stderr ends with the reason line, then
                                   {"error":{"code":"backend_error","message":<that reason>}}
        "hostFiles": {"rel/path": "content" | null}     after the run (null: must not exist)
      },
      "sideBySide": "same" | "stricter" | "different" | "skip",
      "compare": "stdout" | "lastLine",     what "same" compares besides the exit code
      "lxcExec": "what lxc-exec 0.8 was observed to do (for the record)"
    }

"{tmp}" anywhere in a string is replaced by the case's fixture directory.
"""
import base64
import json
import os
import shutil
import subprocess

CASES_DIR = os.path.join(os.path.dirname(os.path.abspath(__file__)), "cases")
TIMEOUT = 30  # seconds: the bound on every executor run
PLACEHOLDER = "{tmp}"


def load_group(group):
    """[(name, case)] of cases/<group>/*.json, sorted by name."""
    directory = os.path.join(CASES_DIR, group)
    out = []
    for entry in sorted(os.listdir(directory)):
        if entry.endswith(".json"):
            with open(os.path.join(directory, entry)) as f:
                out.append((entry[:-5], json.load(f)))
    return out


def groups():
    return sorted(d for d in os.listdir(CASES_DIR) if os.path.isdir(os.path.join(CASES_DIR, d)))


def substitute(value, tmp):
    if isinstance(value, str):
        return value.replace(PLACEHOLDER, tmp)
    if isinstance(value, list):
        return [substitute(v, tmp) for v in value]
    if isinstance(value, dict):
        return {substitute(k, tmp): substitute(v, tmp) for k, v in value.items()}
    return value


def make_fixture(case, tmp):
    """(Re)creates the case's fixture under tmp (which is emptied first)."""
    for entry in os.listdir(tmp):
        path = os.path.join(tmp, entry)
        if os.path.isdir(path) and not os.path.islink(path):
            shutil.rmtree(path)
        else:
            os.unlink(path)
    fixture = case.get("fixture", {})
    for d in fixture.get("dirs", []):
        os.makedirs(os.path.join(tmp, d), exist_ok=True)
    for rel, content in fixture.get("files", {}).items():
        path = os.path.join(tmp, rel)
        os.makedirs(os.path.dirname(path), exist_ok=True)
        with open(path, "w") as f:
            f.write(content)
    for rel, target in fixture.get("symlinks", {}).items():
        path = os.path.join(tmp, rel)
        os.makedirs(os.path.dirname(path), exist_ok=True)
        os.symlink(substitute(target, tmp), path)


def config_text(case, tmp):
    if "configText" in case:
        return substitute(case["configText"], tmp)
    return json.dumps(substitute(case["config"], tmp))


def run(executor, case, tmp, env, timeout=TIMEOUT):
    """Runs one case through `executor` (argv prefix, e.g. [".../lxc-exec"]) with a fresh
    fixture. Returns the CompletedProcess (text; both streams captured)."""
    make_fixture(case, tmp)
    text = config_text(case, tmp)
    args = list(executor) + substitute(case.get("args", []), tmp)
    stdin = substitute(case.get("stdin", ""), tmp)
    via = case.get("via", "file")
    config_path = os.path.join(tmp, ".mxc-config.json")
    if via in ("file", "configFlag"):
        with open(config_path, "w") as f:
            f.write(text)
        args += ["--config", config_path] if via == "configFlag" else [config_path]
    elif via == "base64":
        args += ["--config-base64", base64.b64encode(text.encode()).decode()]
    elif via == "stdin":
        args += ["-"]
        stdin = text
    else:
        raise ValueError(f"unknown via {via!r}")
    env = dict(env, **substitute(case.get("callerEnv", {}), tmp))
    return subprocess.run(args, input=stdin, capture_output=True, text=True, errors="replace",
                          timeout=timeout, cwd=substitute(case.get("cwd", "/"), tmp), env=env)


def describe(result):
    return (f"exit {result.returncode}\n--- stdout:\n{result.stdout}--- stderr:\n"
            f"{result.stderr}---")


def check(test, case, result, tmp):
    """Asserts the case's expectations on agentbox's result."""
    expect = substitute(case["expect"], tmp)
    info = describe(result)
    if "parseError" in expect:
        test.assertEqual(result.returncode, 1, info)
        test.assertTrue(result.stderr.startswith("Request error\nConfiguration parse error: "), info)
        test.assertIn(expect["parseError"], result.stderr, info)
        test.assertEqual(result.stdout, "", info)
    if "backendError" in expect:
        test.assertEqual(result.returncode, 255, info)
        lines = result.stderr.rstrip("\n").split("\n")
        test.assertGreaterEqual(len(lines), 2, info)
        envelope = json.loads(lines[-1])
        test.assertEqual(set(envelope), {"error"}, info)
        test.assertEqual(envelope["error"]["code"], "backend_error", info)
        test.assertEqual(envelope["error"]["message"], lines[-2], info)
        test.assertIn(expect["backendError"], envelope["error"]["message"], info)
    if "exit" in expect:
        test.assertEqual(result.returncode, expect["exit"], info)
    if "stdout" in expect:
        test.assertEqual(result.stdout, expect["stdout"], info)
    if "stdoutLastLine" in expect:
        lines = result.stdout.rstrip("\n").split("\n")
        test.assertEqual(lines[-1], expect["stdoutLastLine"], info)
    for text in expect.get("stdoutContains", []):
        test.assertIn(text, result.stdout, info)
    for text in expect.get("stdoutExcludes", []):
        test.assertNotIn(text, result.stdout, info)
    for text in expect.get("stderrContains", []):
        test.assertIn(text, result.stderr, info)
    for rel, content in expect.get("hostFiles", {}).items():
        path = os.path.join(tmp, rel)
        if content is None:
            test.assertFalse(os.path.lexists(path), f"{path} exists\n{info}")
        else:
            with open(path) as f:
                test.assertEqual(f.read(), content, info)


def comparable(case, result):
    """What the side-by-side tier compares for a "same" case: exit code and stdout (or only
    its last line, for dry runs, where lxc-exec prints extra lines before it)."""
    if case.get("compare", "stdout") == "lastLine":
        lines = result.stdout.rstrip("\n").split("\n")
        return result.returncode, lines[-1]
    return result.returncode, result.stdout
