# Sourced by the shell examples: the chant command to run, and a way to read a document's fields.
#
# CHANT is the chant command (such as `chant`, or `node /path/to/bin`); by default the bin
# `npm run build` made in this repository, wherever its package.json says it is.

if [ -n "${CHANT:-}" ]; then
  read -r -a chant <<<"$CHANT"
else
  repo=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
  chant=(node "$repo/$(node -p 'require(process.argv[1]).bin.chant' "$repo/package.json")")
fi

# field <document> <expression over d>: one value of a JSON document, as text; nothing when the
# output is not a document (chant could not start, say).
field() {
  printf '%s' "$1" | node -e '
    let d;
    try { d = JSON.parse(require("fs").readFileSync(0, "utf8")); } catch { process.exit(0); }
    const value = new Function("d", `return (${process.argv[1]});`)(d);
    process.stdout.write(value === null || value === undefined ? "" : typeof value === "object" ? JSON.stringify(value) : String(value));
  ' "$2"
}
