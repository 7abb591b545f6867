// The restore's checks, made before anything is written, the checkpoint included: git would
// refuse some of these only after writing other files.
import { lstat, readdir, statfs } from 'node:fs/promises';
import { join, relative, sep } from 'node:path';
import type { Snapshot } from '../documents/snapshot.js';
import { WipError } from '../errors.js';
import type { Plumbing, RepositoryLayout, TreeChange } from '../git/plumbing.js';
import { sortPaths } from '../order.js';
import { PATH_MAX, unwritableChanges } from './tree-paths.js';

/**
 * Refuses, as `wip-snapshot-unknown`, a target whose changes git could not write whole: paths
 * chant never records (`.git`, `..`, names too long), and objects that are missing, of the
 * wrong type, or symlink targets too long for the system.
 */
export async function checkWritable(plumbing: Plumbing, layout: RepositoryLayout, target: Snapshot, changes: readonly TreeChange[]): Promise<void> {
  const refuse = (what: string, problems: readonly string[]) => new WipError('wip-snapshot-unknown',
    `snapshot ${target.commit} ${what}, so it is not one chant took and nothing was changed: ${problems.slice(0, 5).join('; ')}${problems.length > 5 ? `; and ${problems.length - 5} more` : ''}`);
  const paths = unwritableChanges(layout.top, changes);
  if (paths.length > 0) throw refuse('holds paths git would not write', paths);
  const written = changes.filter((change) => change.newMode !== '000000' && change.newMode !== '160000');
  const objects = await plumbing.objectInfo(written.map((change) => change.newOid));
  const problems: string[] = [];
  for (const change of written) {
    const object = objects.get(change.newOid) ?? null;
    if (object === null) problems.push(`${JSON.stringify(change.path)}: object ${change.newOid} is missing`);
    else if (object.type !== 'blob') problems.push(`${JSON.stringify(change.path)}: object ${change.newOid} is a ${object.type}, not a file's content`);
    else if (change.newMode === '120000' && object.size >= PATH_MAX) problems.push(`${JSON.stringify(change.path)}: a symlink target of ${object.size} bytes`);
  }
  if (problems.length > 0) throw refuse('cannot be written whole', problems);
  await enoughSpace(layout, target, written.map((change) => objects.get(change.newOid) ?? null));
}

/**
 * Refuses a restore, before it writes anything, while another git process holds the checkout's
 * index: the restore's last step resets that index, and would fail after the files were written.
 */
export async function indexNotLocked(layout: RepositoryLayout): Promise<void> {
  const lock = `${layout.indexFile}.lock`;
  if (await lstat(lock).then(() => true, () => false)) {
    throw new WipError('git-failed', `Unable to create '${lock}': File exists. Another git process seems to be running in this repository; nothing was changed, try again when it ends`);
  }
}

/**
 * Refuses a restore, before it writes anything, when the file system holding the working tree
 * has clearly too little room for the files it writes: git would fail halfway through. Sizes are
 * the objects' own; a filter that grows files on checkout (CRLF, LFS) can still run out later.
 */
async function enoughSpace(layout: RepositoryLayout, target: Snapshot, objects: ReadonlyArray<{ size: number } | null>): Promise<void> {
  const room = await statfs(layout.top).catch(() => null);
  if (room === null || room.bsize <= 0) return;
  const blocks = (bytes: number) => Math.ceil(bytes / room.bsize) * room.bsize;
  const index = await lstat(layout.indexFile).then((stats) => stats.size, () => 0);
  const needed = objects.reduce((sum, object) => sum + blocks(object?.size ?? 0), blocks(index));
  const free = room.bavail * room.bsize;
  if (needed > free) {
    throw new WipError('git-failed', `restoring ${target.commit.slice(0, 12)} writes about ${needed} bytes and the file system holding ${layout.top} has ${free} free: No space left on device; nothing was changed`);
  }
}

/**
 * The ignored files a move from the working tree to another tree would delete or overwrite:
 * anything on disk in the way of a path to write that the working tree's own tree does not hold.
 */
export async function ignoredInTheWay(top: string, changes: readonly TreeChange[]): Promise<string[]> {
  const leaving = new Set(changes.filter((change) => change.oldMode !== '000000').map((change) => change.path));
  const blocked = new Set<string>();
  for (const change of changes) {
    if (change.newMode === '000000') continue;
    const parts = change.path.split('/');
    let parentsAreFolders = true;
    for (let depth = 1; depth < parts.length; depth += 1) {
      const folder = parts.slice(0, depth).join('/');
      const stats = await lstat(join(top, folder)).catch(() => null);
      if (stats === null) {
        parentsAreFolders = false;
        break;
      }
      if (!stats.isDirectory()) {
        if (!leaving.has(folder)) blocked.add(folder);
        parentsAreFolders = false;
        break;
      }
    }
    if (!parentsAreFolders || leaving.has(change.path)) continue;
    const stats = await lstat(join(top, change.path)).catch(() => null);
    if (stats === null) continue;
    if (!stats.isDirectory()) {
      blocked.add(change.path);
      continue;
    }
    for (const entry of await readdir(join(top, change.path), { recursive: true, withFileTypes: true })) {
      if (entry.isDirectory()) continue;
      const path = relative(top, join(entry.parentPath, entry.name)).split(sep).join('/');
      if (!leaving.has(path)) blocked.add(path);
    }
  }
  return sortPaths([...blocked]);
}
