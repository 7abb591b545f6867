// The memo of folder trees a save built (see buildTrees in lib/git/formats/tree.ts): a cache in the
// worktree's git directory, replaced whole, that names a tree only while the tree is on disk.
import { replaceCacheFile } from './cache-file.js';
import { OBJECT_ID } from '../git/formats/object-format.js';
import type { TreeMemo } from '../git/formats/tree.js';

/** The memo of folder trees, in the git directory: each line a key and a tree id (`-`: none). */
export const MEMO_FILE = 'chant-tree-memo';

/**
 * The memo read from its file; a tree it names is taken only while `exists` says it is on disk
 * (git may have packed or pruned it since). `used` collects what this save looked up and built.
 */
export function treeMemo(text: string, exists: (oid: string) => boolean): TreeMemo & { used: Map<string, string | null> } {
  const known = new Map<string, string>();
  for (const line of text.split('\n')) {
    const [key, oid] = line.split(' ');
    if (key !== undefined && oid !== undefined && /^[0-9a-f]{40}$/.test(key) && (oid === '-' || OBJECT_ID.test(oid))) known.set(key, oid);
  }
  const used = new Map<string, string | null>();
  return {
    used,
    get(key) {
      const oid = known.get(key);
      if (oid === undefined || (oid !== '-' && !exists(oid))) return undefined;
      const value = oid === '-' ? null : oid;
      used.set(key, value);
      return value;
    },
    set(key, oid) {
      used.set(key, oid);
    },
  };
}

/** Replaces the memo with what this save used; a memo that cannot be written is only a slower next save. */
export async function saveMemo(file: string, used: ReadonlyMap<string, string | null>): Promise<void> {
  await replaceCacheFile(file, [...used].map(([key, oid]) => `${key} ${oid ?? '-'}\n`).join(''), 'latin1');
}

