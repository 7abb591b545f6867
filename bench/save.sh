#!/bin/sh
# The plain-git save a snapshot needs: copy the index, add --all into the copy, write-tree,
# commit-tree, update-ref. The baseline of the save rows.
set -e
gd=$(git rev-parse --git-dir)
tmp="$gd/bench-save.index"
cp "$gd/index" "$tmp"
GIT_INDEX_FILE="$tmp" git add --all
tree=$(GIT_INDEX_FILE="$tmp" git write-tree)
head=$(git rev-parse HEAD)
old=$(git rev-parse -q --verify refs/bench/wip || true)
commit=$(printf 'bench wip\n' | git commit-tree "$tree" ${old:+-p "$old"} -p "$head")
git update-ref refs/bench/wip "$commit" $old
rm -f "$tmp"
