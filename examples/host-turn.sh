#!/usr/bin/env bash
# What an agent host runs after each agent turn: a checkpoint of the checkout's working tree,
# labelled with the turn, then where replication stands. Reads the JSON documents with node,
# since jq may not be installed.
#
#   examples/host-turn.sh <checkout> <turn> [<principal>]
#
# CHANT is the chant command (such as `chant`, or `node /path/to/bin`); by default the bin
# built in this repository, as its package.json names it. Exits 1 when the save is refused, with
# the refusal's code on stderr; a push that fails never fails the save.
set -euo pipefail

if [ "$#" -lt 2 ]; then
  echo "usage: $0 <checkout> <turn> [<principal>]" >&2
  exit 2
fi
checkout=$1
turn=$2
by=${3:-}

# The chant command and `field`, shared by the examples.
source "$(dirname "${BASH_SOURCE[0]}")/common.sh"

args=(workspace wip save --label "turn:$turn" --json)
if [ -n "$by" ]; then args+=(--by "$by"); fi

# The save prints its document on stdout and exits 1 on a refusal; both are read the same way.
status=0
save=$(cd "$checkout" && "${chant[@]}" "${args[@]}") || status=$?
if [ "$status" -ne 0 ]; then
  code=$(field "$save" 'd.error?.code')
  if [ -z "$code" ]; then echo "chant exited $status without a document" >&2; exit 1; fi
  echo "checkpoint refused: $code: $(field "$save" 'd.error?.message')" >&2
  exit 1
fi

commit=$(field "$save" 'd.snapshot.commit')
if [ "$(field "$save" 'd.created')" = true ]; then
  echo "turn $turn: snapshot ${commit:0:12} on $(field "$save" 'd.ref')"
else
  echo "turn $turn: nothing changed since ${commit:0:12}"
fi

# When the policy pushes on save, the save document says what went.
if [ -n "$(field "$save" 'd.replication')" ]; then
  echo "  to $(field "$save" 'd.replication.remote'): $(field "$save" 'd.replication.pushed.length') pushed, $(field "$save" 'd.replication.rejected.length') rejected, $(field "$save" 'd.replication.upToDate') up to date"
  rejected=$(field "$save" 'd.replication.rejected.map((r) => `  rejected ${r.ref}: ${r.reason}`).join("\n")')
  if [ -n "$rejected" ]; then echo "$rejected" >&2; fi
fi

# The read never fetches, so it is cheap enough to show after every turn.
read=$(cd "$checkout" && "${chant[@]}" workspace wip --branch "$(field "$save" 'd.branch')" --json)
if [ -z "$(field "$read" 'd.replication')" ]; then
  echo "  no box declares replicate: the snapshots stay on this machine"
elif [ "$(field "$read" 'd.replication.replicated')" = true ]; then
  echo "  replicated: every ref is on $(field "$read" 'd.replication.policy.remote')"
else
  echo "  not yet replicated: $(field "$read" 'd.replication.refs.filter((r) => !r.replicated).length') refs ahead of $(field "$read" 'd.replication.policy.remote'); chant workspace wip push sends them"
fi
