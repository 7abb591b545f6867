#!/usr/bin/env bash
# A host in bash driving every chant verb and every failure, as an agent host would.
#
#   examples/host-drive.sh
#
# CHANT is the chant command (such as `chant`, or `node /path/to/bin`); by default the bin built
# in this repository. Each step runs one command line in a scratch folder and reads its stdout as
# exactly one JSON document: exit 0 with no `error`, or exit 1 with `error.code`, nothing on
# stderr. Prints one line per step; exits 1 at the first step that breaks the rule.
set -euo pipefail

source "$(dirname "${BASH_SOURCE[0]}")/common.sh"

root=$(mktemp -d "${TMPDIR:-/tmp}/chant-host-sh-XXXXXX")
trap 'rm -rf "$root"' EXIT
steps=0

g() {
  git -c commit.gpgsign=false -c core.hooksPath=/dev/null \
    -c user.name=Host -c user.email=host@example.com "$@" >/dev/null
}

# step <name> <expected: ok or a code> <folder> <chant arguments...>
# With ENV_PATH set, chant runs with that PATH; with GONE set, in a folder deleted just before.
step() {
  local name=$1 expect=$2 dir=$3 out err status=0 got
  shift 3
  err=$(mktemp "$root/err-XXXXXX")
  if [ -n "${GONE:-}" ]; then
    out=$(mkdir -p "$GONE" && cd "$GONE" && rmdir "$GONE" && "${chant[@]}" "$@" 2>"$err") || status=$?
  elif [ -n "${ENV_PATH:-}" ]; then
    out=$(cd "$dir" && PATH=$ENV_PATH "${chant[@]}" "$@" 2>"$err") || status=$?
  else
    out=$(cd "$dir" && "${chant[@]}" "$@" 2>"$err") || status=$?
  fi
  if [ -s "$err" ]; then
    echo "FAIL $name: stderr is not empty: $(head -c 2000 "$err")"
    exit 1
  fi
  if [ "$(field "$out" 'typeof d === "object" && d !== null && typeof d.$schema === "string"')" != true ]; then
    echo "FAIL $name: stdout is not one JSON document: ${out:0:2000}"
    exit 1
  fi
  got=$(field "$out" 'd.error === undefined ? "ok" : d.error.code')
  if { [ "$got" = ok ] && [ "$status" -ne 0 ]; } || { [ "$got" != ok ] && [ "$status" -ne 1 ]; }; then
    echo "FAIL $name: exit $status with $got"
    exit 1
  fi
  if [ "$got" != "$expect" ]; then
    echo "FAIL $name: expected $expect, got $got: ${out:0:2000}"
    exit 1
  fi
  steps=$((steps + 1))
  echo "ok $name: $got"
  last=$out
}

remote=$root/remote.git
box=$root/box
plain=$root/plain
g init -q --bare -b main "$remote"
g init -q -b main "$box"
printf '%s\n' '{"identity": {"attribution": "identified"}, "members": [{"name": "app", "box": {"replicate": {"remote": "origin", "on": []}}}]}' >"$box/chant.workspace.json"
printf '*.log\n' >"$box/.gitignore"
g -C "$box" add -A
g -C "$box" commit -q -m initial
g -C "$box" remote add origin "$remote"
g init -q -b main "$plain"
g -C "$plain" commit -q --allow-empty -m initial

# What a host can discover first.
described=$("${chant[@]}" help --json)
if [ "$(field "$described" 'd.codes.includes("internal-error") && d.commands.length > 0')" != true ]; then
  echo "FAIL help --json: no code list"
  exit 1
fi
steps=$((steps + 1))
echo "ok help --json: $(field "$described" 'd.commands.length') commands, $(field "$described" 'd.codes.length') codes"

# Every verb.
step 'read, nothing saved' ok "$box" workspace wip --json
printf 'turn 1\n' >"$box/notes.md"
step save ok "$box" workspace wip save --label turn:1 --by github:alex
first=$(field "$last" 'd.snapshot.commit')
step 'save, unchanged' ok "$box" workspace wip save --label turn:1 --by github:alex
[ "$(field "$last" 'd.created')" = false ] || { echo "FAIL save, unchanged: created a second snapshot"; exit 1; }
step 'read --limit 1' ok "$box" workspace wip --json --limit 1
step restore ok "$box" workspace wip restore "$first"
step push ok "$box" workspace wip push
step fetch ok "$box" workspace wip fetch

# Every failure.
step 'usage: unknown verb' write-usage-invalid "$box" workspace wip sav
step 'usage: partial command' write-usage-invalid "$box" workspace
step 'usage: unknown option on the read' write-usage-invalid "$box" workspace wip --bogus
step 'usage: --label on restore' write-usage-invalid "$box" workspace wip restore --label x
step 'usage: empty label' write-usage-invalid "$box" workspace wip save --label ''
step 'usage: --limit 0' write-usage-invalid "$box" workspace wip --limit 0
step 'usage: unknown shell' write-usage-invalid "$box" completion ksh
step 'principal unidentified' principal-unidentified "$box" workspace wip save --by someone
step 'snapshot unknown' wip-snapshot-unknown "$box" workspace wip restore 0000000
g -C "$box" checkout -q -b other
step 'no snapshot on the branch' wip-none "$box" workspace wip restore
step 'snapshot of another branch' wip-branch-other "$box" workspace wip restore "$first"
g -C "$box" checkout -q --detach
step 'detached HEAD' wip-no-branch "$box" workspace wip save
g -C "$box" checkout -q main
printf 'ignored\n' >"$box/debug.log"
g -C "$box" rm -q --cached .gitignore
rm "$box/.gitignore"
step 'save with debug.log' ok "$box" workspace wip save
with_log=$(field "$last" 'd.snapshot.commit')
printf '*.log\n' >"$box/.gitignore"
printf 'ignored, and changed\n' >"$box/debug.log"
step 'restore blocked by an ignored file' wip-restore-blocked "$box" workspace wip restore "$with_log"
step 'no policy' wip-policy-none "$plain" workspace wip push
printf '%s\n' '{"members": [{"name": "app", "box": {"replicate": {"remote": "backup"}}}]}' >"$plain/chant.workspace.json"
step 'remote unknown' wip-remote-unknown "$plain" workspace wip push
printf '{ not json' >"$plain/chant.workspace.json"
step 'declaration unparseable' declaration-unparseable "$plain" workspace wip --json
step 'not a repository' not-a-git-repository "$root" workspace wip --json
mkdir "$root/no-git"
# chant itself must still be found: its first word by its full path.
chant[0]=$(command -v "${chant[0]}")
ENV_PATH=$root/no-git step 'git missing from PATH' git-failed "$box" workspace wip save
GONE=$root/gone step 'folder deleted under it' not-a-git-repository "$root" workspace wip save

# A reader that went away: no document can arrive, the exit code still says the save happened.
printf 'turn 2\n' >"$box/notes.md"
status=$( { sleep 0.3; cd "$box" && "${chant[@]}" workspace wip save --label turn:2 2>"$root/closed.err"; echo $? >"$root/closed.status"; } | true; cat "$root/closed.status")
label=$(git -C "$box" log -1 --format='%(trailers:key=Chant-Wip-Label,valueonly)' refs/chant/wip/main)
if [ "$status" != 0 ] || [ -s "$root/closed.err" ] || [ "$label" != turn:2 ]; then
  echo "FAIL closed stdout: exit $status, label $label, stderr $(head -c 500 "$root/closed.err")"
  exit 1
fi
steps=$((steps + 1))
echo "ok closed stdout: exit 0, the snapshot is there"

echo "$steps steps, each one document"
