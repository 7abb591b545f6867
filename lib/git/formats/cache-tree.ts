// git's cache tree (the index's `TREE` extension): the tree id of each folder whose entries
// have not changed since it was computed, which lets git skip a folder whole when it compares
// the index with a tree. Each node is its name and a NUL, then `<entries> <subtrees>\n` in ASCII,
// then the tree id unless `<entries>` is -1 (invalid); its subtrees follow it, depth first, the
// root first with an empty name.

/**
 * The extension's body with every folder on the way to one of `paths` marked invalid (as git
 * marks them when it changes an entry there), or null where the body does not read as one
 * (the caller then leaves the cache tree out: git works without it).
 * @param body - the extension's bytes, without its signature and size
 * @param hashBytes - the bytes of an object id (20 or 32)
 * @param paths - the entries changed, as UTF-8 paths
 * @internal
 */
export function invalidateCacheTree(body: Buffer, hashBytes: number, paths: readonly string[]): Buffer | null {
  // The folders as byte strings (one character a byte), as the extension names them.
  const folders = new Set<string>(['']);
  for (const path of paths) {
    const raw = Buffer.from(path, 'utf8').toString('latin1');
    for (let slash = raw.indexOf('/'); slash >= 0; slash = raw.indexOf('/', slash + 1)) folders.add(raw.slice(0, slash));
  }
  const out: Buffer[] = [];
  let at = 0;
  const node = (parent: string | null, depth: number): boolean => {
    if (depth > 4096) return false;
    const nul = body.indexOf(0, at);
    if (nul < 0) return false;
    const newline = body.indexOf(0x0a, nul + 1);
    if (newline < 0) return false;
    const counts = /^(-1|\d+) (\d+)$/.exec(body.toString('latin1', nul + 1, newline));
    if (counts === null) return false;
    const name = body.toString('latin1', at, nul);
    const folder = parent === null ? '' : parent === '' ? name : `${parent}/${name}`;
    if ((parent === null) !== (name.length === 0)) return false;
    const valid = counts[1] !== '-1';
    const next = newline + 1 + (valid ? hashBytes : 0);
    if (next > body.length) return false;
    if (valid && folders.has(folder)) out.push(body.subarray(at, nul + 1), Buffer.from(`-1 ${counts[2]}\n`, 'latin1'));
    else out.push(body.subarray(at, next));
    at = next;
    for (let subtree = Number(counts[2]); subtree > 0; subtree -= 1) if (!node(folder, depth + 1)) return false;
    return true;
  };
  if (body.length === 0 || !node(null, 0) || at !== body.length) return null;
  return Buffer.concat(out);
}
