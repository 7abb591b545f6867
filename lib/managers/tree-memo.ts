// The memo of folder trees a save built (see buildTrees in lib/git/formats/tree.ts): a cache in the
// worktree's git directory, replaced whole, that names a tree only while the tree is on disk. It
// names the root tree the save built too: every tree it holds is in that one, so while the wip
// tip holds the same root, they are all reachable from a ref, and none is looked for.
import { replaceCacheFile } from './cache-file.js';
import { EXACT_OBJECT_ID, OBJECT_ID } from '../git/formats/object-format.js';
import type { TreeMemo } from '../git/formats/tree.js';

/** The memo of folder trees, in the git directory: each line a key and a tree id (`-`: none), and one `root` and the tree built. */
export const MEMO_FILE = 'chant-tree-memo';

/**
 * The memo read from its file; a tree it names is taken only while `exists` says it is on disk
 * (git may have packed or pruned it since), or while `tipTree`, the wip tip's tree, is the root
 * the memo was built with (its trees are then reachable from the wip ref; `tookUnseen` says
 * whether one was taken so). `used` collects what this save looked up and built.
 */
export function treeMemo(text: string, exists: (oid: string) => boolean, tipTree: string | null): TreeMemo & { used: Map<string, string | null>; tookUnseen: () => boolean } {
  const known = new Map<string, string>();
  let root: string | null = null;
  for (const line of text.split('\n')) {
    const [key, oid, extra] = line.split(' ');
    if (key === 'root' && oid !== undefined && extra === undefined && EXACT_OBJECT_ID.test(oid)) root = oid;
    else if (key !== undefined && oid !== undefined && /^[0-9a-f]{40}$/.test(key) && (oid === '-' || OBJECT_ID.test(oid))) known.set(key, oid);
  }
  // Every tree id is as long as the root's (the repository's object format): a line cut short (a
  // crash before its bytes reached the disk) can leave a sha256 id of 40 to 63 digits, which a
  // tree built on it would hold as half an id.
  if (root !== null) {
    for (const [key, oid] of known) if (oid !== '-' && oid.length !== root.length) known.delete(key);
  }
  const held = tipTree !== null && root === tipTree;
  const used = new Map<string, string | null>();
  let unseen = false;
  return {
    used,
    tookUnseen: () => unseen,
    get(key) {
      const oid = known.get(key);
      if (oid === undefined || (oid !== '-' && !held && !exists(oid))) return undefined;
      if (oid !== '-' && held) unseen = true;
      const value = oid === '-' ? null : oid;
      used.set(key, value);
      return value;
    },
    set(key, oid) {
      used.set(key, oid);
    },
  };
}

/**
 * Replaces the memo with what this save used, and `root`, the tree built with it; a memo that
 * cannot be written is only a slower next save.
 */
export async function saveMemo(file: string, used: ReadonlyMap<string, string | null>, root: string): Promise<void> {
  await replaceCacheFile(file, `root ${root}\n${[...used].map(([key, oid]) => `${key} ${oid ?? '-'}\n`).join('')}`, 'latin1');
}

