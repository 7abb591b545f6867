// The private index a save hands to `git status` when many files are modified since HEAD. The
// checkout's own index holds, for such a file, the stat data and blob it had when it was last
// staged: git sees a file that differs, reads it and says so, and the save then looks at each
// one again (its stat data, the hash cache) to learn its blob. A copy of the index whose entries
// for the files the hash cache knows carry the stat data and blob the last save recorded lets
// git decide instead, in C, while it looks at every file anyway: a file unchanged since the last
// save is named with its blob (staged, as status sees the copy), and only the files changed
// since are left to hash. The checkout's index is never written (see docs/design.md, "Saving a
// tree with many files modified since HEAD").
import { rmSync } from 'node:fs';
import type { Stats } from 'node:fs';
import type { EntryPatch, IndexScan } from '../git/formats/index-file.js';
import type { HashCache } from '../managers/hash-cache.js';
import { statKey } from '../managers/hash-cache.js';
import { temporaryIndexFile } from '../managers/temporaries.js';

/** Below this many files the hash cache can vouch for, the save looks at them itself: the copy costs more. */
export const STATUS_INDEX_MINIMUM = 256;

/**
 * Nor below one entry of the index in this many: the copy costs a read and a write of the whole
 * index (100,000 entries: 9 MB, about 100 ms a save here), and spares about 25 us a file the
 * cache vouches for. Measured (bench, 100,000 files): with 10,000 files modified since HEAD the
 * save went from 1.85 to 1.59 times git status; with 1,000, from 1.56 to 1.83.
 */
export const STATUS_INDEX_SHARE = 20;

/** A private index written for `git status`, and the blob it gives each path it changed. */
export interface StatusIndex {
  file: string;
  /** Path -> the blob the copy holds for it, taken from the hash cache. */
  patched: ReadonlyMap<string, string>;
}

/** What {@link writeStatusIndex} reads beside the index and the cache. */
export interface StatusIndexSources {
  /** The worktree's git directory, where the copy is written (named as a temporary index, for the cleanup of a killed save). */
  gitDir: string;
  /** The checkout index's mtime in whole seconds (0 when unknown): its racily clean entries are given size 0 in the copy. */
  racySeconds: number;
  /** A folder's `.gitattributes` as the save looked at it (null: none; `unknown`: it could not be). */
  attributesStat(folder: string): Stats | null | 'unknown';
  /** The hash cache's racy margin, in milliseconds. */
  racyMarginMs: number;
  /** The fewest entries worth a copy. */
  minimum: number;
}

/**
 * Writes the private index for `git status`: the checkout's index (`scan`) with each entry the
 * hash cache vouches for given the stat data and blob the cache recorded. The cache vouches for
 * a path when its entry is trusted (same fingerprint) and held (its tree is the wip tip's, so the
 * blob is reachable), the index still holds the blob it held then, every `.gitattributes` on
 * the file's way has the stat data it had, and the file's times were older than the taking of
 * its stat data by the racy margin. git then trusts the entry exactly where the file's stat data
 * is what the cache recorded, and reads the file where it is not. Null, writing nothing, where
 * fewer than `minimum` entries would change or the index cannot be copied so.
 * @internal
 */
export function writeStatusIndex(scan: IndexScan, cache: HashCache, sources: StatusIndexSources): StatusIndex | null {
  if (!cache.held || scan.writeStatusIndex === undefined) return null;
  // What the cache's key holds of the .gitattributes on the way to a file in each folder (their
  // stat keys joined, the top's first), and the newest of their times; null where one cannot be
  // read, or is a symlink (git reads the index's instead): such a folder vouches for nothing.
  const chains = new Map<string, { key: string; newest: number } | null>();
  const chainOf = (folder: string): { key: string; newest: number } | null => {
    let known = chains.get(folder);
    if (known !== undefined) return known;
    const slash = folder.lastIndexOf('/');
    const above = folder === '' ? { key: '', newest: 0 } : chainOf(slash < 0 ? '' : folder.slice(0, slash));
    const stats = sources.attributesStat(folder);
    known = above === null || stats === 'unknown' || stats?.isSymbolicLink() === true ? null : {
      key: `${above.key}${folder === '' ? '' : '|'}${stats === null ? '-' : statKey(stats)}`,
      newest: stats === null ? above.newest : Math.max(above.newest, stats.mtimeMs, stats.ctimeMs),
    };
    chains.set(folder, known);
    return known;
  };
  const patches: EntryPatch[] = [];
  for (const entry of cache.entries()) {
    const { path } = entry;
    if (entry.indexOid === '-' || isAttributes(path)) continue;
    const slash = path.lastIndexOf('/');
    const chain = chainOf(slash < 0 ? '' : path.slice(0, slash));
    if (chain === null || chain.key !== entry.attributes) continue;
    // dev:ino:mode:uid:size:mtimeMs:ctimeMs, as statKey writes them.
    const [dev, ino, mode, uid, size, mtimeMs, ctimeMs, extra] = entry.stat.split(':').map(Number);
    if (extra !== undefined || ctimeMs === undefined || ![dev, ino, mode, uid, size, mtimeMs, ctimeMs].every((field) => Number.isFinite(field) && (field as number) >= 0)) continue;
    if (((mode as number) & 0o170000) !== 0o100000) continue;
    const newest = Math.max(mtimeMs as number, ctimeMs, chain.newest);
    // git compares times to the second (nanoseconds only where it is built to): a write in the
    // second the file was last changed, which the entry holds, could keep its stat data as git
    // sees it. Only a file last changed in a second before its blob was read is handed to git so.
    if (newest + sources.racyMarginMs > entry.takenMs || Math.floor(newest / 1000) >= Math.floor(entry.takenMs / 1000)) continue;
    patches.push({ path, indexOid: entry.indexOid, oid: entry.oid, dev: dev as number, ino: ino as number, uid: uid as number, size: size as number, mtimeMs: mtimeMs as number, ctimeMs });
  }
  if (patches.length < sources.minimum) return null;
  const file = temporaryIndexFile(sources.gitDir);
  let written: string[] | null;
  try {
    written = scan.writeStatusIndex(file, patches, sources.racySeconds);
  } catch {
    // A copy that cannot be written is only a slower save.
    rmSync(file, { force: true });
    return null;
  }
  if (written === null || written.length < sources.minimum) {
    rmSync(file, { force: true });
    return null;
  }
  const oids = new Map(patches.map((patch) => [patch.path, patch.oid]));
  return { file, patched: new Map(written.map((path) => [path, oids.get(path) as string])) };
}

/** Whether a path is a `.gitattributes` file. */
export function isAttributes(path: string): boolean {
  return path === '.gitattributes' || path.endsWith('/.gitattributes');
}
