#!/bin/sh
# The plain-git restore of snapshot $1: the checkpoint (as save.sh), then git's own two-tree
# checkout through the temporary index, then the index reset to HEAD keeping its stat data.
set -e
target=$1
gd=$(git rev-parse --git-dir)
tmp="$gd/bench-restore.index"
cp "$gd/index" "$tmp"
GIT_INDEX_FILE="$tmp" git add --all
current=$(GIT_INDEX_FILE="$tmp" git write-tree)
head=$(git rev-parse HEAD)
old=$(git rev-parse -q --verify refs/bench/wip || true)
commit=$(printf 'bench checkpoint\n' | git commit-tree "$current" ${old:+-p "$old"} -p "$head")
git update-ref refs/bench/wip "$commit" $old
git diff-tree -r -z --no-renames "$current" "$target^{tree}" >/dev/null
GIT_INDEX_FILE="$tmp" git read-tree -m -u "$current" "$target^{tree}"
git read-tree --reset HEAD
rm -f "$tmp"
