#!/usr/bin/env python3
"""A host in Python driving every chant verb and every failure, as an agent host would.

    python3 examples/host-drive.py [<chant command>]

The chant command defaults to $CHANT, else the bin built in this repository. Each step runs one
command line in a scratch folder and reads its stdout as exactly one JSON document: exit 0 with
no `error`, or exit 1 with `error.code`, nothing on stderr. When the jsonschema package is
installed, each document is validated against the published schema its `$schema` names. Prints
one line per step; exits 1 at the first step that breaks the rule.
"""

import json
import os
import shlex
import shutil
import subprocess
import sys
import tempfile

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


def chant_command():
    if len(sys.argv) > 1:
        return shlex.split(sys.argv[1])
    if os.environ.get("CHANT"):
        return shlex.split(os.environ["CHANT"])
    with open(os.path.join(ROOT, "package.json"), encoding="utf-8") as handle:
        bin_path = json.load(handle)["bin"]["chant"]
    return [shutil.which("node") or "node", os.path.join(ROOT, bin_path)]


CHANT = chant_command()


def load_validators():
    """Validators by $id, or {} when jsonschema is not installed."""
    try:
        from jsonschema import Draft202012Validator
    except ImportError:
        return {}
    validators = {}
    for folder, _, names in os.walk(os.path.join(ROOT, "schemas")):
        for name in names:
            with open(os.path.join(folder, name), encoding="utf-8") as handle:
                schema = json.load(handle)
            validators[schema["$id"]] = Draft202012Validator(schema)
    return validators


VALIDATORS = load_validators()
STEPS = []


def git(cwd, *args):
    env = dict(os.environ, GIT_AUTHOR_NAME="Host", GIT_AUTHOR_EMAIL="host@example.com",
               GIT_COMMITTER_NAME="Host", GIT_COMMITTER_EMAIL="host@example.com")
    result = subprocess.run(["git", "-c", "commit.gpgsign=false", "-c", "core.hooksPath=/dev/null", *args],
                            cwd=cwd, env=env, capture_output=True, text=True, check=False)
    if result.returncode != 0:
        raise SystemExit(f"git {' '.join(args)} failed: {result.stderr.strip()}")
    return result.stdout.strip()


def fail(step, why, result=None):
    detail = "" if result is None else f"\n  stdout: {result.stdout[:2000]!r}\n  stderr: {result.stderr[:2000]!r}"
    print(f"FAIL {step}: {why}{detail}")
    sys.exit(1)


def step(name, args, cwd, expect, env=None, shell_prefix=None):
    """Runs chant with `args` in `cwd`; `expect` is "ok" or the error code the document must carry."""
    command = [*CHANT, *args]
    if shell_prefix is not None:
        command = ["sh", "-c", shell_prefix + ' && exec "$@"', "sh", *command]
        cwd = None
    result = subprocess.run(command, cwd=cwd, env=env, capture_output=True, text=True, check=False)
    if result.stderr != "":
        fail(name, "stderr is not empty", result)
    try:
        document = json.loads(result.stdout)
    except ValueError:
        fail(name, "stdout is not one JSON document", result)
    if not isinstance(document, dict):
        fail(name, "the document is not an object", result)
    error = document.get("error")
    if (result.returncode == 0) != (error is None):
        fail(name, f"exit {result.returncode} with error {error!r}", result)
    got = "ok" if error is None else error.get("code")
    if got != expect:
        fail(name, f"expected {expect}, got {got}", result)
    validator = VALIDATORS.get(document.get("$schema"))
    if validator is not None:
        problems = [f"{list(problem.path)}: {problem.message}" for problem in validator.iter_errors(document)]
        if problems:
            fail(name, f"the document does not follow its schema: {problems[:3]}", result)
    STEPS.append(name)
    print(f"ok {name}: {got}")
    return document


def main():
    root = os.path.realpath(tempfile.mkdtemp(prefix="chant-host-py-"))
    try:
        remote = os.path.join(root, "remote.git")
        box = os.path.join(root, "box")
        plain = os.path.join(root, "plain")
        git(root, "init", "-q", "--bare", "-b", "main", remote)
        git(root, "init", "-q", "-b", "main", box)
        declaration = {"identity": {"attribution": "identified"}, "members": [{"name": "app", "box": {"replicate": {"remote": "origin", "on": []}}}]}
        with open(os.path.join(box, "chant.workspace.json"), "w", encoding="utf-8") as handle:
            json.dump(declaration, handle)
        with open(os.path.join(box, ".gitignore"), "w", encoding="utf-8") as handle:
            handle.write("*.log\n")
        git(box, "add", "-A")
        git(box, "commit", "-q", "-m", "initial")
        git(box, "remote", "add", "origin", remote)
        git(root, "init", "-q", "-b", "main", plain)
        git(plain, "commit", "-q", "--allow-empty", "-m", "initial")

        # What a host can discover first.
        result = subprocess.run([*CHANT, "help", "--json"], capture_output=True, text=True, check=False)
        described = json.loads(result.stdout)
        if result.returncode != 0 or "internal-error" not in described["codes"]:
            fail("help --json", "no code list", result)
        STEPS.append("help --json")
        print(f"ok help --json: {len(described['commands'])} commands, {len(described['codes'])} codes")

        # Every verb.
        step("read, nothing saved", ["workspace", "wip", "--json"], box, "ok")
        with open(os.path.join(box, "notes.md"), "w", encoding="utf-8") as handle:
            handle.write("turn 1\n")
        saved = step("save", ["workspace", "wip", "save", "--label", "turn:1", "--by", "github:alex"], box, "ok")
        again = step("save, unchanged", ["workspace", "wip", "save", "--label", "turn:1", "--by", "github:alex"], box, "ok")
        if again["created"]:
            fail("save, unchanged", "created a second snapshot")
        step("read --limit 1", ["workspace", "wip", "--json", "--limit", "1"], box, "ok")
        step("restore", ["workspace", "wip", "restore", saved["snapshot"]["commit"]], box, "ok")
        step("push", ["workspace", "wip", "push"], box, "ok")
        step("fetch", ["workspace", "wip", "fetch"], box, "ok")

        # Every failure.
        step("usage: unknown verb", ["workspace", "wip", "sav"], box, "write-usage-invalid")
        step("usage: partial command", ["workspace"], box, "write-usage-invalid")
        step("usage: unknown option on the read", ["workspace", "wip", "--bogus"], box, "write-usage-invalid")
        step("usage: --label on restore", ["workspace", "wip", "restore", "--label", "x"], box, "write-usage-invalid")
        step("usage: empty label", ["workspace", "wip", "save", "--label", ""], box, "write-usage-invalid")
        step("usage: --limit 0", ["workspace", "wip", "--limit", "0"], box, "write-usage-invalid")
        step("usage: unknown shell", ["completion", "ksh"], box, "write-usage-invalid")
        step("principal unidentified", ["workspace", "wip", "save", "--by", "someone"], box, "principal-unidentified")
        step("snapshot unknown", ["workspace", "wip", "restore", "0000000"], box, "wip-snapshot-unknown")
        git(box, "checkout", "-q", "-b", "other")
        step("no snapshot on the branch", ["workspace", "wip", "restore"], box, "wip-none")
        step("snapshot of another branch", ["workspace", "wip", "restore", saved["snapshot"]["commit"]], box, "wip-branch-other")
        git(box, "checkout", "-q", "--detach")
        step("detached HEAD", ["workspace", "wip", "save"], box, "wip-no-branch")
        git(box, "checkout", "-q", "main")
        with open(os.path.join(box, "debug.log"), "w", encoding="utf-8") as handle:
            handle.write("ignored\n")
        git(box, "rm", "-q", "--cached", ".gitignore")
        os.remove(os.path.join(box, ".gitignore"))
        blocked = step("save with debug.log", ["workspace", "wip", "save"], box, "ok")
        with open(os.path.join(box, ".gitignore"), "w", encoding="utf-8") as handle:
            handle.write("*.log\n")
        with open(os.path.join(box, "debug.log"), "w", encoding="utf-8") as handle:
            handle.write("ignored, and changed\n")
        step("restore blocked by an ignored file", ["workspace", "wip", "restore", blocked["snapshot"]["commit"]], box, "wip-restore-blocked")
        step("no policy", ["workspace", "wip", "push"], plain, "wip-policy-none")
        with open(os.path.join(plain, "chant.workspace.json"), "w", encoding="utf-8") as handle:
            json.dump({"members": [{"name": "app", "box": {"replicate": {"remote": "backup"}}}]}, handle)
        step("remote unknown", ["workspace", "wip", "push"], plain, "wip-remote-unknown")
        with open(os.path.join(plain, "chant.workspace.json"), "w", encoding="utf-8") as handle:
            handle.write("{ not json")
        step("declaration unparseable", ["workspace", "wip", "--json"], plain, "declaration-unparseable")
        step("not a repository", ["workspace", "wip", "--json"], root, "not-a-git-repository")
        no_git = os.path.join(root, "no-git")
        os.mkdir(no_git)
        step("git missing from PATH", ["workspace", "wip", "save"], box, "git-failed", env=dict(os.environ, PATH=no_git))
        gone = os.path.join(root, "gone")
        os.mkdir(gone)
        step("folder deleted under it", ["workspace", "wip", "save"], None, "not-a-git-repository",
             shell_prefix=f"cd {shlex.quote(gone)} && rmdir {shlex.quote(gone)}")

        # A reader that went away: no document can arrive, the exit code still says the save happened.
        read_end, write_end = os.pipe()
        os.close(read_end)
        with open(os.path.join(box, "notes.md"), "w", encoding="utf-8") as handle:
            handle.write("turn 2\n")
        closed = subprocess.run([*CHANT, "workspace", "wip", "save", "--label", "turn:2"], cwd=box, stdout=write_end,
                                stderr=subprocess.PIPE, text=True, check=False)
        os.close(write_end)
        label = git(box, "log", "-1", "--format=%(trailers:key=Chant-Wip-Label,valueonly)", "refs/chant/wip/main")
        if closed.returncode != 0 or closed.stderr != "" or label != "turn:2":
            fail("closed stdout", f"exit {closed.returncode}, label {label!r}, stderr {closed.stderr[:500]!r}")
        STEPS.append("closed stdout")
        print("ok closed stdout: exit 0, the snapshot is there")

        checked = "validated against the published schemas" if VALIDATORS else "not validated (jsonschema is not installed)"
        print(f"{len(STEPS)} steps, each one document; {checked}")
    finally:
        shutil.rmtree(root, ignore_errors=True)


if __name__ == "__main__":
    main()
