// The restore's checks, made before anything is written, the checkpoint included: git would
// refuse some of these only after writing other files, and some would destroy what no snapshot
// holds. Every check looks only at the paths the restore changes and the folders on their way:
// its cost follows the change, not the size of the working tree. Paths are byte strings (one
// character a byte, as `latin1` decodes them), so names that are not UTF-8 are looked at as
// they are on disk.
import { isUtf8 } from 'node:buffer';
import { accessSync, constants, lstatSync, realpathSync } from 'node:fs';
import type { Stats } from 'node:fs';
import { lstat, readdir, statfs } from 'node:fs/promises';
import { join, relative, sep } from 'node:path';
import type { Snapshot } from '../documents/snapshot.js';
import { WipError } from '../errors.js';
import { indexMayHaveFlags, readUnmergedPaths } from '../git/formats/index-file.js';
import type { IndexScan } from '../git/formats/index-file.js';
import { attributesElsewhere, attributesRewrite } from '../git/blob-writer.js';
import { readLooseInfo } from '../git/loose-objects.js';
import { rawPathOnDisk as onDisk, rawPathText } from '../git/formats/path-text.js';
import type { Plumbing, RepositoryLayout, TreeChange } from '../git/plumbing.js';
import { PATH_MAX, unwritableChanges, unwritablePath } from './tree-paths.js';

/**
 * Refuses, as `wip-snapshot-unknown`, a target whose changes git could not write whole: paths
 * chant never records (`.git`, `..`, names too long), and objects that are missing, of the
 * wrong type, or symlink targets too long for the system.
 */
export async function checkWritable(plumbing: Plumbing, layout: RepositoryLayout, target: Snapshot, changes: readonly TreeChange[], targetIndex: string | null, replaced: boolean): Promise<void> {
  const refuse = (what: string, problems: readonly string[]) => new WipError('wip-snapshot-unknown',
    `snapshot ${target.commit} ${what}, so it is not one chant took and nothing was changed: ${problems.slice(0, 5).join('; ')}${problems.length > 5 ? `; and ${problems.length - 5} more` : ''}`);
  const paths = unwritableChanges(layout.top, changes);
  if (paths.length > 0) throw refuse('holds paths git would not write', paths);
  const written = changes.filter((change) => change.newMode !== '000000' && change.newMode !== '160000');
  const objects = await objectsInfo(plumbing, layout, [...written.map((change) => change.newOid), ...(targetIndex === null ? [] : [targetIndex])], replaced);
  const problems: string[] = [];
  for (const change of written) {
    const object = objects.get(change.newOid) ?? null;
    if (object === null) problems.push(`${JSON.stringify(change.path)}: object ${change.newOid} is missing`);
    else if (object.type !== 'blob') problems.push(`${JSON.stringify(change.path)}: object ${change.newOid} is a ${object.type}, not a file's content`);
    else if (change.newMode === '120000' && object.size >= PATH_MAX) problems.push(`${JSON.stringify(change.path)}: a symlink target of ${object.size} bytes`);
  }
  if (targetIndex !== null && objects.get(targetIndex)?.type !== 'tree') problems.push(`the index it records (${targetIndex}) is not a tree this repository holds`);
  if (problems.length > 0) throw refuse('cannot be written whole', problems);
  await enoughRoom(layout, target.commit, changes, written.map((change) => objects.get(change.newOid) ?? null));
}

/** Up to this many objects, those on disk loose are looked at without a process. */
const LOOSE_LOOKUPS = 256;

/**
 * The type and size of each object: for a few, those on disk loose from their files' headers,
 * the rest (packed, in an alternate, missing) from one git call, none when all were loose. Not
 * where a replace ref may stand for an object, which git would follow.
 */
async function objectsInfo(plumbing: Plumbing, layout: RepositoryLayout, oids: readonly string[], replaced: boolean): Promise<Map<string, { type: string; size: number } | null>> {
  const found = new Map<string, { type: string; size: number } | null>(!replaced && oids.length <= LOOSE_LOOKUPS ? readLooseInfo(layout.objectsDir, oids) : []);
  const rest = oids.filter((oid) => !found.has(oid));
  for (const [oid, info] of await plumbing.objectInfo(rest)) found.set(oid, info);
  return found;
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
 * Refuses a restore, before it writes anything, whose last step, the reset of the checkout's
 * index to `treeish`, git would refuse: `git read-tree --reset` stops at an entry under
 * --skip-worktree or --assume-unchanged whose index differs from `treeish` and whose file's stat
 * data is not the index's ("not uptodate"), which it would say only after the files were
 * written. Where the index may have such an entry: a dry run (writing nothing) answers for the
 * working tree as it is, and a flagged entry at a path the restore writes or removes (whose stat
 * data the restore changes) refuses it too, whether or not its index differs from `treeish`.
 * `indexPlain`: the index was read while the working tree's tree was built and held no flagged
 * entry (WorkingTree.indexPlain), so it is not read again.
 */
export async function indexResettable(plumbing: Plumbing, layout: RepositoryLayout, treeish: string, changes: readonly TreeChange[], indexPlain = false): Promise<void> {
  if (indexPlain || !await indexMayHaveFlags(layout.indexFile, layout.objectFormat)) return;
  const advice = 'the restore ends by resetting the index, which git refuses over an entry under --skip-worktree or --assume-unchanged that differs from what it resets to; nothing was changed: clear the flags (git update-index --no-skip-worktree -- <path>; git update-index --no-assume-unchanged -- <path>: one flag a command, as update-index applies only the last it reads) and restore again';
  const refusal = await plumbing.resetIndexRefusal(layout.top, treeish);
  if (refusal !== null) throw new WipError('git-failed', `git read-tree --reset would refuse: ${refusal.replace(/^(error|fatal): /, '')}; ${/index\.lock/.test(refusal) ? 'nothing was changed, try again when the other git process ends' : advice}`);
  const flagged = await plumbing.flaggedPaths(layout.top);
  const written = changes.filter((change) => flagged.has(change.raw)).map((change) => JSON.stringify(change.path));
  if (written.length > 0) throw new WipError('git-failed', `the restore would write ${written.join(', ')}, under a flag in the index; ${advice}`);
}

/** One path a restore cannot go through, and why. */
export interface Blocker {
  /** The path, a byte string. */
  raw: string;
  why: string;
}

const ABSENT = '000000';
const GITLINK = '160000';

/** The longest refusal message, in characters; the full list is in `error.paths`. */
const MESSAGE_MAX = 900;


/**
 * A path's stat data, not following a last symlink, or null when it cannot be looked at.
 * Synchronous: the checks look at a few folders for each path a restore writes, most of them
 * shared, and a promise for each cost a plan of 130 paths 20 to 40 ms waiting in turn.
 */
function lstatOrNull(path: Buffer): Stats | null {
  try {
    return lstatSync(path, { throwIfNoEntry: false }) ?? null;
  } catch {
    return null;
  }
}

function parentOf(raw: string): string {
  const slash = raw.lastIndexOf('/');
  return slash < 0 ? '' : raw.slice(0, slash);
}

// A file the working tree's tree does not hold, outside a repository, with a name git takes:
// ignored, or written after the tree was read (telling the two apart would take a git process).
const IGNORED = 'an ignored file, or one written since the working tree was read: no snapshot holds it';
const REPOSITORY = "a submodule's working tree or an embedded repository: its commits and files are in no snapshot";
const IN_REPOSITORY = "a file of a submodule's working tree or an embedded repository: no snapshot holds it";

/**
 * Why a path on disk that the working tree's tree does not hold is in the way: a name git will
 * not take (`.GIT`, `git~1`), a file in a folder holding `.git`, or else an ignored file.
 * `repositories` keeps whether each folder holds `.git`, looked at once.
 */
function whyNotHeld(top: string, raw: string, repositories: Map<string, boolean>): string {
  const invalid = unwritablePath(raw, '100644', true);
  if (invalid !== null) return `a name git will not take (${invalid}): no snapshot can hold it`;
  for (let slash = raw.indexOf('/'); slash >= 0; slash = raw.indexOf('/', slash + 1)) {
    const folder = raw.slice(0, slash);
    let holds = repositories.get(folder);
    if (holds === undefined) {
      holds = lstatOrNull(onDisk(top, `${folder}/.git`)) !== null;
      repositories.set(folder, holds);
    }
    if (holds) return IN_REPOSITORY;
  }
  return IGNORED;
}

/**
 * Everything on disk a move from the working tree's tree to the target's would delete or
 * overwrite that the checkpoint cannot give back: ignored files (by definition in no snapshot),
 * and the working trees of submodules and embedded repositories (a snapshot holds only the
 * commit they are at), which git's checkout removes whole when a file takes their place.
 * @param top - the top of the working tree
 * @param changes - the paths the restore writes or removes
 * @returns each path in the way with why, sorted by bytes
 * @internal
 */
export async function inTheWay(top: string, changes: readonly TreeChange[]): Promise<Blocker[]> {
  const leaving = new Set(changes.filter((change) => change.oldMode !== ABSENT).map((change) => change.raw));
  const gitlinksLeaving = new Set(changes.filter((change) => change.oldMode === GITLINK && change.newMode !== GITLINK).map((change) => change.raw));
  const blocked = new Map<string, string>();
  const repositories = new Map<string, boolean>();
  const why = (raw: string) => whyNotHeld(top, raw, repositories);
  for (const raw of gitlinksLeaving) {
    const entries = await readdir(onDisk(top, raw)).catch(() => null);
    if (entries !== null && entries.length > 0) blocked.set(raw, REPOSITORY);
  }
  // Whether each folder on the way is one (true), is missing (false), or is something else
  // (null): looked at once however many paths go through it.
  const folders = new Map<string, boolean | null>();
  const folderState = (folder: string): boolean | null => {
    let state = folders.get(folder);
    if (state === undefined) {
      const stats = lstatOrNull(onDisk(top, folder));
      state = stats === null ? false : stats.isDirectory() ? true : null;
      folders.set(folder, state);
    }
    return state;
  };
  for (const change of changes) {
    if (change.newMode === ABSENT) continue;
    let parentsAreFolders = true;
    for (let slash = change.raw.indexOf('/'); slash >= 0; slash = change.raw.indexOf('/', slash + 1)) {
      const folder = change.raw.slice(0, slash);
      const state = folderState(folder);
      if (state === false) {
        parentsAreFolders = false;
        break;
      }
      if (state === null) {
        if (!leaving.has(folder)) blocked.set(folder, why(folder));
        parentsAreFolders = false;
        break;
      }
    }
    if (!parentsAreFolders || leaving.has(change.raw)) continue;
    const stats = lstatOrNull(onDisk(top, change.raw));
    if (stats === null) continue;
    if (!stats.isDirectory()) {
      blocked.set(change.raw, why(change.raw));
      continue;
    }
    // A folder where the target has a file or a symlink: whatever in it is not leaving is lost.
    await walkFolder(top, change.raw, (raw, isRepository) => {
      if (isRepository) {
        if (!gitlinksLeaving.has(raw)) blocked.set(raw, REPOSITORY);
      } else if (!leaving.has(raw)) {
        blocked.set(raw, why(raw));
      }
    });
  }
  return [...blocked].map(([raw, why]) => ({ raw, why })).sort(compareRaw);
}

/**
 * Hands every file under a folder to `found`, and every repository (a folder holding `.git`,
 * or a gitlink's folder) as one path without going into it.
 */
async function walkFolder(top: string, folder: string, found: (raw: string, isRepository: boolean) => void): Promise<void> {
  const entries = await readdir(onDisk(top, folder), { withFileTypes: true, encoding: 'buffer' }).catch(() => null);
  if (entries === null) return;
  if (entries.some((entry) => entry.name.toString('latin1') === '.git')) {
    found(folder, true);
    return;
  }
  for (const entry of entries) {
    const raw = `${folder}/${entry.name.toString('latin1')}`;
    if (entry.isDirectory()) await walkFolder(top, raw, found);
    else found(raw, false);
  }
}

/**
 * Whether the restore would remove the folder the caller works in (git's own switch refuses
 * to): a file or symlink takes its place or a parent's, or every file under it is removed and
 * nothing is written there.
 * @param top - the top of the working tree
 * @param cwd - the caller's folder
 * @param changes - the paths the restore writes or removes
 * @returns the blocker, or null
 * @internal
 */
export async function cwdRemoved(top: string, cwd: string, changes: readonly TreeChange[]): Promise<Blocker | null> {
  let rel: string;
  try {
    rel = relative(realpathSync(top), realpathSync(cwd));
  } catch {
    return null;
  }
  if (rel === '' || rel.startsWith('..') || rel.startsWith(sep)) return null;
  const raw = Buffer.from(rel.split(sep).join('/'), 'utf8').toString('latin1');
  const why = 'the current working directory: the restore would remove it (run it from the top of the working tree)';
  const under = `${raw}/`;
  let removes = false;
  for (const change of changes) {
    const file = change.newMode !== ABSENT && change.newMode !== GITLINK;
    if (file && (raw === change.raw || raw.startsWith(`${change.raw}/`))) return { raw, why };
    if (change.raw.startsWith(under)) {
      if (change.newMode !== ABSENT) return null;
      removes = true;
    }
  }
  if (!removes) return null;
  const removed = new Set(changes.filter((change) => change.newMode === ABSENT).map((change) => change.raw));
  let stays = false;
  await walkFolder(top, raw, (path, isRepository) => {
    if (isRepository || !removed.has(path)) stays = true;
  });
  return stays ? null : { raw, why };
}

/**
 * The folders the restore must write in that this process may not: each path's parent, or
 * the nearest folder of it that exists, needs write and search permission.
 * @internal
 */
export async function unwritableFolders(top: string, changes: readonly TreeChange[]): Promise<Blocker[]> {
  const checked = new Map<string, boolean>();
  const blocked = new Map<string, string>();
  for (const change of changes) {
    let folder = parentOf(change.raw);
    for (;;) {
      const known = checked.get(folder);
      if (known !== undefined) {
        if (!known) blocked.set(folder, 'a folder this user may not write in (permission denied)');
        break;
      }
      const stats = lstatOrNull(onDisk(top, folder));
      if (stats === null && folder !== '') {
        folder = parentOf(folder);
        continue;
      }
      const writable = stats !== null && stats.isDirectory() ? accessible(onDisk(top, folder)) : true;
      checked.set(folder, writable);
      if (!writable) blocked.set(folder, 'a folder this user may not write in (permission denied)');
      break;
    }
  }
  return [...blocked].map(([raw, why]) => ({ raw, why })).sort(compareRaw);
}

/** Whether this process may write in and search a folder. */
function accessible(folder: Buffer): boolean {
  try {
    accessSync(folder, constants.W_OK | constants.X_OK);
    return true;
  } catch {
    return false;
  }
}

/**
 * Refuses, before anything is written, a restore the file system holding the working tree has
 * clearly too little room for: bytes (the objects' own sizes; a filter that grows files on
 * checkout can still run out later, and the restore then puts the checkpoint back) and inodes
 * (one for each file written and each folder it may create, and a few for git's own files).
 * @internal
 */
export async function enoughRoom(layout: RepositoryLayout, target: string, changes: readonly TreeChange[], objects: ReadonlyArray<{ size: number } | null>): Promise<void> {
  const room = await statfs(layout.top).catch(() => null);
  if (room === null || room.bsize <= 0) return;
  const blocks = (bytes: number) => Math.ceil(bytes / room.bsize) * room.bsize;
  const index = await lstat(layout.indexFile).then((stats) => stats.size, () => 0);
  const needed = objects.reduce((sum, object) => sum + blocks(object?.size ?? 0), blocks(index));
  const free = room.bavail * room.bsize;
  if (needed > free) {
    throw new WipError('git-failed', `restoring ${target.slice(0, 12)} writes about ${needed} bytes and the file system holding ${layout.top} has ${free} free: No space left on device; nothing was changed`);
  }
  // statfs reports no inode limit as zero files (some file systems have none).
  if (room.files > 0) {
    const written = changes.filter((change) => change.newMode !== ABSENT);
    const folders = new Set(written.map((change) => parentOf(change.raw)));
    const inodes = written.length + folders.size + 4;
    if (inodes > room.ffree) {
      throw new WipError('git-failed', `restoring ${target.slice(0, 12)} needs about ${inodes} inodes and the file system holding ${layout.top} has ${room.ffree} free: No space left on device (inodes); nothing was changed`);
    }
  }
}

/**
 * A refusal naming paths: as many as fit a readable message, then how many more, every one in
 * `paths` (in the encoding of lib/path-text.ts).
 * @internal
 */
export function blockedError(intro: string, blockers: readonly Blocker[]): WipError {
  const shown: string[] = [];
  let length = intro.length;
  for (const blocker of blockers) {
    const item = `${rawPathText(blocker.raw)} (${blocker.why})`;
    if (length + item.length + 2 > MESSAGE_MAX - 40 && shown.length > 0) break;
    shown.push(item);
    length += item.length + 2;
  }
  const more = blockers.length - shown.length;
  const message = `${intro}: ${shown.join('; ')}${more > 0 ? `; and ${more} more (all in error.paths)` : ''}`;
  return new WipError('wip-restore-blocked', message, { paths: blockers.map((blocker) => rawPathText(blocker.raw)) });
}

/** Orders byte strings as git orders paths: by their bytes. */
export function compareRaw(a: { raw: string }, b: { raw: string }): number {
  return a.raw < b.raw ? -1 : a.raw > b.raw ? 1 : 0;
}

/**
 * Refuses a restore, before it writes anything, while a merge, rebase, cherry-pick or revert
 * is in progress or the index holds a conflict: no snapshot holds that state (the stages of a
 * conflict, the operation's own files), and a restore under it would leave the operation
 * against files it did not make. `indexPlain`: the index is read for conflicts only with an
 * operation in progress, as it was read while the working tree's tree was built and held none
 * (WorkingTree.indexPlain), or is looked at again once it has been (a restore's first look).
 * @internal
 */
export async function refuseOperationInProgress(layout: RepositoryLayout, indexPlain = false): Promise<void> {
  const operations: Array<[string, string]> = [['MERGE_HEAD', 'a merge'], ['rebase-merge', 'a rebase'], ['rebase-apply', 'a rebase or git am'], ['CHERRY_PICK_HEAD', 'a cherry-pick'], ['REVERT_HEAD', 'a revert']];
  const present = await Promise.all(operations.map(([name]) => lstat(join(layout.gitDir, name)).then(() => true, () => false)));
  const operation = operations.find((_, index) => present[index]);
  // An index read while the working tree's tree was built, with no conflict stage in it, is not
  // read again (at 100,000 entries, 35 to 40 ms in a CLI process); with an operation in
  // progress it is, to name the conflicts in the refusal.
  const unmerged = indexPlain && operation === undefined ? [] : await readUnmergedPaths(layout.indexFile, layout.objectFormat);
  if (operation === undefined && unmerged.length === 0) return;
  const state = operation === undefined ? 'the index holds a conflict' : `${operation[1]} is in progress (${operation[0]} in the git directory)${unmerged.length > 0 ? ' and the index holds a conflict' : ''}`;
  const blockers = unmerged.map((raw) => ({ raw, why: 'unmerged: the stages of a conflict are in no snapshot' }));
  const intro = `${state}: no snapshot holds that state, so nothing was changed; finish or abort it first (git merge --abort, git rebase --abort, ...), then restore`;
  throw blockers.length > 0 ? blockedError(intro, blockers) : new WipError('wip-restore-blocked', intro);
}

/**
 * The stat data of each path `changes` names, as the restore found it once it had read the
 * working tree (`-` where nothing is there): what {@link changedSince} compares with before the
 * first file is moved. Gitlinks (folders holding another repository) are left out.
 * @internal
 */
export function pathStats(top: string, changes: readonly TreeChange[]): Map<string, string> {
  const stats = new Map<string, string>();
  for (const change of changes) {
    if (change.oldMode === GITLINK || change.newMode === GITLINK) continue;
    stats.set(change.raw, statText(top, change.raw));
  }
  return stats;
}

/**
 * The paths of `before` (see {@link pathStats}) whose stat data changed since: another process
 * wrote, replaced or removed them while the restore staged the snapshot's files and recorded
 * its checkpoint, which holds them as they were. Moving the snapshot's files over them would
 * destroy what no snapshot holds.
 * @internal
 */
export function changedSince(top: string, before: ReadonlyMap<string, string>): string[] {
  return [...before].filter(([raw, stats]) => statText(top, raw) !== stats).map(([raw]) => raw);
}

/**
 * A path's stat data as text (not following a last symlink): every field a write, a replacement
 * or a removal changes; `-` when nothing is there (a file on the way where a folder was
 * included), and the error's code where it cannot be looked at (a name too long, which the
 * checks before the move refuse anyway).
 */
function statText(top: string, raw: string): string {
  let stats: Stats | undefined;
  try {
    stats = lstatSync(onDisk(top, raw), { throwIfNoEntry: false });
  } catch (error) {
    const code = (error as NodeJS.ErrnoException).code ?? 'unknown';
    return code === 'ENOTDIR' ? '-' : `!${code}`;
  }
  return stats === undefined ? '-' : `${stats.dev}:${stats.ino}:${stats.mode}:${stats.size}:${stats.mtimeMs}:${stats.ctimeMs}`;
}

/**
 * The paths of `raws` (byte strings) whose bytes git add would store as they are, but for line
 * endings: no attributes file git reads for them may ask for a filter, `ident` or an encoding.
 * Each folder on a path's way is looked at once: its `.gitattributes` must be a plain file that
 * names none of those, or be absent from both the working tree and the index (git reads the
 * index's where the working tree has none); attributes from elsewhere (the repository's
 * `info/attributes`, a global file, config naming one) that may rewrite leave every path out.
 * @internal
 */
export function storedAsTheyAre(layout: RepositoryLayout, raws: readonly string[], index: IndexScan, env: NodeJS.ProcessEnv): Set<string> {
  // A split index holds entries in its shared index, which the lookup below does not read.
  if (raws.length === 0 || index.split || attributesElsewhere(layout, env)) return new Set();
  const folders = new Map<string, boolean>();
  const missing: string[] = [];
  const plainFolder = (folder: string): boolean => {
    let known = folders.get(folder);
    if (known === undefined) {
      const raw = folder === '' ? '.gitattributes' : `${folder}/.gitattributes`;
      const file = onDisk(layout.top, raw);
      let stats: Stats | null | undefined;
      try {
        stats = lstatSync(file, { throwIfNoEntry: false }) ?? null;
      } catch (error) {
        // A folder on the way that is now a file holds no attributes; anything else is not known.
        stats = (error as NodeJS.ErrnoException).code === 'ENOTDIR' ? null : undefined;
      }
      if (stats === null) missing.push(Buffer.from(raw, 'latin1').toString('utf8'));
      known = stats === null || (stats !== undefined && stats.isFile() && !attributesRewrite(file));
      folders.set(folder, known);
    }
    return known;
  };
  const candidates = raws.filter((raw) => {
    // The index is looked up by UTF-8 names: a name that is not UTF-8 is git's to compare.
    if (!isUtf8(Buffer.from(raw, 'latin1')) || !plainFolder('')) return false;
    for (let slash = raw.indexOf('/'); slash >= 0; slash = raw.indexOf('/', slash + 1)) {
      if (!plainFolder(raw.slice(0, slash))) return false;
    }
    return true;
  });
  if (candidates.length === 0) return new Set();
  // A .gitattributes the working tree lacks but the index holds is read from the index.
  const wanted = new Set(missing);
  if (index.select(missing).some((entry) => wanted.has(entry.path))) return new Set();
  return new Set(candidates);
}
