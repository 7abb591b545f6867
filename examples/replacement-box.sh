#!/usr/bin/env bash
# Planting a replacement box from what a lost one replicated: clone the remote, bring the
# policy's refs home with `wip fetch`, check the work branch out, and restore its latest snapshot.
# The uncommitted work is back, as uncommitted changes over the branch.
#
#   examples/replacement-box.sh <remote> <branch> <dir>
#
# <remote> is anything git clones (a path, a URL the host holds the credential for); <dir> must
# not exist yet. CHANT is the chant command; by default the bin built in this repository. Reads
# the JSON documents with node, since jq may not be installed.
set -euo pipefail

if [ "$#" -ne 3 ]; then
  echo "usage: $0 <remote> <branch> <dir>" >&2
  exit 2
fi
remote=$1
branch=$2
dir=$3

# The chant command and `field`, shared by the examples.
source "$(dirname "${BASH_SOURCE[0]}")/common.sh"

# Runs chant in the clone; prints the document, or the refusal on stderr and exits 1.
wip() {
  local doc status=0
  doc=$(cd "$dir" && "${chant[@]}" workspace wip "$@" --json) || status=$?
  if [ "$status" -ne 0 ]; then
    echo "chant workspace wip $*: $(field "$doc" 'd.error?.code || "no document"'): $(field "$doc" 'd.error?.message')" >&2
    exit 1
  fi
  printf '%s' "$doc"
}

# The clone is named origin, so a declaration replicating to origin finds its remote.
git clone -q --origin origin -- "$remote" "$dir"
echo "cloned $remote into $dir"

fetch=$(wip fetch)
failed=$(field "$fetch" 'd.failed')
if [ -n "$failed" ]; then
  echo "fetch failed: $failed" >&2
  exit 1
fi
field "$fetch" 'd.refs.map((r) => `  ${r.result.padEnd(12)} ${r.ref}`).join("\n")'
echo

git -C "$dir" checkout -q "$branch"
echo "checked out $branch"

restore=$(wip restore)
echo "restored $(field "$restore" 'd.snapshot.commit.slice(0, 12)') ($(field "$restore" 'd.snapshot.label ?? d.snapshot.kind')), taken at $(field "$restore" 'd.snapshot.at')"
field "$restore" 'd.paths.map((p) => `  ${p}`).join("\n")'
echo
if [ "$(field "$restore" 'd.headMoved')" = true ]; then
  echo "the branch has moved on since that snapshot: its files are back over the branch's tip"
fi
