// The temporaries a save or a restore leaves only when it is killed: its copy of the index (and
// git's lock on it) in the worktree's git directory, and the memos' unfinished copies. Each name
// carries its writer's pid, so a cleanup removes only what a process that is gone left behind;
// in the worktree's git directory, under the lock, anything not its own.
import { randomBytes } from 'node:crypto';
import { readdir, rm } from 'node:fs/promises';
import { join } from 'node:path';
import type { RepositoryLayout } from '../git/plumbing.js';
import { cacheTemporaries } from './cache-file.js';
import { HASH_CACHE_FILE } from './hash-cache.js';
import { IDENTITY_MEMO_FILE } from './identity-memo.js';
import { KEPT_INDEX_KEY_FILE, KEPT_STAGED_FILE } from './kept-index.js';
import { processAlive } from './lock.js';
import { LAST_RESTORE, RESTORE_MARKER } from './restore-marker.js';
import { SNAPSHOT_MEMO_FILE } from './snapshot-memo.js';
import { MEMO_FILE } from './tree-memo.js';

// The change counts were kept in a memo of their own before the snapshot memo's revision 6.
const EARLIER_CHANGE_MEMO_FILE = 'chant-change-memo';

// A restore's staging folder (and its index) is named the same way.
const TEMPORARY_INDEX = /^chant-wip-(\d+)-[0-9a-f]+\.(?:index(?:\.lock)?|staging(?:\.index(?:\.lock)?)?)$/;

/** A new restore staging folder's path in `gitDir`, named for {@link removeStaleTemporaries}. */
export function stagingFolder(gitDir: string): string {
  return join(gitDir, `chant-wip-${process.pid}-${randomBytes(6).toString('hex')}.staging`);
}

/** A new temporary index file's path in `gitDir`, named for {@link removeStaleTemporaries}. */
export function temporaryIndexFile(gitDir: string): string {
  return join(gitDir, `chant-wip-${process.pid}-${randomBytes(6).toString('hex')}.index`);
}

/**
 * Removes the temporary index files (and git's locks on them) of saves and restores killed
 * before they could, `chant-wip-<pid>-*` in the git directory whose process is gone, and the
 * memos' unfinished copies (the tree and identity memos', the hash cache's, the kept private
 * index key's and the restore mark's and record's there, the snapshot memo's in the common directory, and those of the change memo
 * earlier versions wrote there).
 */
export async function removeStaleTemporaries(layout: RepositoryLayout): Promise<void> {
  const own = [TEMPORARY_INDEX, cacheTemporaries(MEMO_FILE), cacheTemporaries(IDENTITY_MEMO_FILE), cacheTemporaries(HASH_CACHE_FILE), cacheTemporaries(KEPT_INDEX_KEY_FILE), cacheTemporaries(KEPT_STAGED_FILE), cacheTemporaries(RESTORE_MARKER), cacheTemporaries(LAST_RESTORE)];
  const shared = [cacheTemporaries(SNAPSHOT_MEMO_FILE), cacheTemporaries(EARLIER_CHANGE_MEMO_FILE)];
  const left = layout.commonDir === layout.gitDir
    ? [{ dir: layout.gitDir, names: [...own, ...shared] }]
    : [{ dir: layout.gitDir, names: own }, { dir: layout.commonDir, names: shared }];
  for (const { dir, names } of left) {
    for (const name of await readdir(dir).catch(() => [] as string[])) {
      const match = names.map((pattern) => pattern.exec(name)).find((found) => found !== null);
      if (match === undefined) continue;
      const pid = Number(match[1]);
      // This worktree's own temporaries are written only under its lock, which this process
      // holds: any other is left by a killed holder, whatever its pid names now (another PID
      // namespace numbers processes otherwise). The shared memo is written by reads, unlocked.
      const locked = dir === layout.gitDir && !shared.some((pattern) => pattern.test(name));
      if (pid !== process.pid && (locked || !processAlive(pid))) await rm(join(dir, name), { force: true, recursive: name.endsWith('.staging') });
    }
  }
}
