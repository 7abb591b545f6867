// The staging choice: how a save finds the working tree's tree (from `git status`, or by staging
// everything into a temporary copy of the index), and what the staged tree does not hold.
//
// Through the temporary index, path by path when it must: a save takes everything it can and
// says what it could not take. New untracked files over the size limit are listed first and
// never read. git add stages every file it can read (--ignore-errors) and names the rest; a
// file that vanishes between git listing it and reading it stops git whole, and the tree is
// then staged from lists that do not grow (stageFromLists), so a tree that keeps changing
// under the save never fails it. Local edits under assume-unchanged or skip-worktree are taken by
// clearing those bits in the temporary index first (a skip-worktree file absent from disk, as a
// sparse checkout leaves it, keeps its bit and the index's content: no deletion).
import { createHash } from 'node:crypto';
import { existsSync, linkSync, lstatSync } from 'node:fs';
import { copyFile, lstat, readFile, rm, stat, utimes } from 'node:fs/promises';
import { join, resolve } from 'node:path';
import { isWipError, WipError } from '../errors.js';
import { gitlinksOf, isSplitIndex, readIndexEntries } from '../git/formats/index-file.js';
import { objectHash } from '../git/formats/object-format.js';
import type { Gitlink, IndexEntry } from '../git/formats/index-file.js';
import { StagingStopped, unreadableInWalk } from '../git/plumbing.js';
import type { Plumbing, RepositoryLayout, StagingProblem } from '../git/plumbing.js';
import type { GitRunOptions } from '../git/runner.js';
import { temporaryIndexFile } from '../managers/temporaries.js';
import { compareBytes } from '../order.js';
import type { FlaggedPath, LeftOut } from '../snapshot/left-out.js';
import type { BranchCheckout } from './checkout.js';
import { entriesInTree, refusedByObjectChecks, unwritablePath } from './tree-paths.js';

/**
 * How a save finds the working tree's tree; see {@link WipStoreOptions.staging}.
 * @public
 */
export type StagingMode = 'auto' | 'status' | 'index';

/**
 * Whether a save builds its tree from `git status` (see {@link WipStoreOptions.staging}): always
 * but under `index`. `auto` took status only from an index of 2 MiB while the status path ran
 * more git processes than the temporary index; since it writes its trees and commit itself it
 * runs fewer at every size (4 against 5), and measured faster at each (a save of 10 modified
 * files, in-process: 54 against 64 ms at 10 files, 57 against 70 at 1,000, 87 against 130 at
 * 10,000; the CLI's at 1,000: 243 against 267 ms).
 * @param staging - the store's mode
 */
export function viaStatus(staging: StagingMode): boolean {
  return staging !== 'index';
}

/** What staging into a temporary index gave: the index, what it does not hold, what it took under a flag. */
export interface IndexStaging {
  indexFile: string;
  /** What the snapshot does not hold, gitlinks included, sorted by path. */
  leftOut: LeftOut[];
  /** Local edits under assume-unchanged or skip-worktree that it holds, sorted by path. */
  flagged: FlaggedPath[];
}

/**
 * A temporary index, seeded from the checkout's so git reuses its stat data, holding the whole
 * working tree but what it could not take, and what that was.
 * @param plumbing - the checkout's plumbing
 * @param checkout - the branch the write works on
 * @param maxFileSize - the size over which a new untracked file is left out
 * @param options - the deadline every git call keeps
 */
export async function stageWorkingTree(plumbing: Plumbing, checkout: BranchCheckout, maxFileSize: number, options: GitRunOptions = {}): Promise<IndexStaging> {
  const indexFile = temporaryIndexFile(checkout.layout.gitDir);
  try {
    await seedIndex(checkout.layout.indexFile, indexFile);
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code !== 'ENOENT') {
      await rm(indexFile, { force: true });
      throw new WipError('git-failed', `cannot copy the index: ${(error as Error).message}`, { cause: error });
    }
  }
  try {
    try {
      return { indexFile, ...(await stageIntoIndex(plumbing, checkout.layout, checkout.head, checkout.layout.indexFile, indexFile, maxFileSize, options)) };
    } catch (error) {
      if (!corruptIndex(error) && !(isWipError(error, 'git-failed') && await checksumFails(checkout.layout.indexFile, checkout.layout.objectFormat))) throw error;
      // The checkout's index is corrupt, and git refuses every read of it: the work is staged
      // into an empty index instead (every file hashed, as git add does on a fresh clone), and
      // the checkout's index is neither read nor touched. A git that died on it (a BUG abort on
      // an entry it cannot read) leaves its lock on the copy, which would stop the next.
      await Promise.all([rm(indexFile, { force: true }), rm(`${indexFile}.lock`, { force: true })]);
      return { indexFile, ...(await stageIntoIndex(plumbing, checkout.layout, checkout.head, null, indexFile, maxFileSize, options)) };
    }
  } catch (error) {
    await rm(indexFile, { force: true });
    throw error;
  }
}

/**
 * Whether git failed because the checkout's index is corrupt (a bad signature, version or
 * checksum, a truncated file, an extension it must understand and does not, a split index whose
 * shared index is gone or not the one it names): git then refuses every command that reads it,
 * status and add included.
 * @param error - what a git call threw
 */
export function corruptIndex(error: unknown): boolean {
  return isWipError(error, 'git-failed') && /index file corrupt|index file smaller than expected|sharedindex\.[0-9a-f]+: index file open failed|broken index, expect/.test(error.message);
}

/**
 * Whether the index file's bytes do not hash to the checksum at its end: a file cut short by a
 * crash, which git reads without a word (it checks the checksum only in fsck), its last entries
 * garbage that can stop git add. False where it cannot be told: no file, or a checksum of zeros
 * (`index.skipHash`).
 * @param indexFile - the checkout's index
 * @param objectFormat - `sha1` or `sha256`
 */
export async function checksumFails(indexFile: string, objectFormat: string): Promise<boolean> {
  const data = await readFile(indexFile).catch(() => null);
  const { algorithm, bytes } = objectHash(objectFormat);
  if (data === null || data.length < 12 + bytes) return false;
  const end = data.length - bytes;
  const tail = data.subarray(end);
  return !tail.every((byte) => byte === 0) && !createHash(algorithm).update(data.subarray(0, end)).digest().equals(tail);
}

/** How many times `git add --update` runs again without a tracked file that vanished under it. */
const TRACKED_ATTEMPTS = 16;

/**
 * Stages into `indexFile`; the flagged entries and gitlinks are those of `checkoutIndex`, read
 * from `indexFile`, its copy (none when null: the staging starts from an empty index). `head` is
 * the commit HEAD names (empty or null when none).
 */
async function stageIntoIndex(plumbing: Plumbing, layout: RepositoryLayout, head: string | null, checkoutIndex: string | null, indexFile: string, maxFileSize: number, options: GitRunOptions): Promise<Omit<IndexStaging, 'indexFile'>> {
  const { top, objectFormat } = layout;
  // A split index is made whole first, so that its entries are all of them.
  if (checkoutIndex !== null) await unsplit(plumbing, top, indexFile, objectFormat, options);
  // What the index says and which files are untracked are read while each other runs.
  // What git could not look into as it listed the untracked files (a folder it cannot open) is listed, never silent.
  const said: string[] = [];
  const [before, untracked] = await Promise.all([checkoutIndex === null ? [] : readIndexEntries(indexFile, objectFormat), plumbing.untrackedFiles(top, indexFile, { ...options, onStderr: (line) => said.push(line) }).then((raws) => raws.map(utf8Of))]);
  const flaggedOnDisk: IndexEntry[] = [];
  for (const entry of before) {
    if (entry.flag === null || entry.stage !== 0) continue;
    const stats = await lstat(join(top, entry.path)).catch(() => null);
    // Absent: a sparse checkout's file outside its cone, or a deletion git was told to ignore;
    // the entry keeps its bit, and the index's content stays.
    if (stats !== null && (stats.isFile() || stats.isSymbolicLink())) flaggedOnDisk.push(entry);
  }
  // Written anew without their flags and without stat data (both bits go, whichever the entry
  // reads as): git stops checking a flagged entry's stat data, never smudges it when racily clean,
  // and a file rewritten at the same size in the second of its staging would be taken as the
  // index's content. So git add reads each of these files.
  if (flaggedOnDisk.length > 0) await plumbing.forgetStat(top, indexFile, flaggedOnDisk, options);
  // New untracked files over the limit are never read: git would hash and store them whole.
  const tooLarge = await overTheLimit(top, untracked, maxFileSize);
  // git add dies whole on a submodule whose git directory is gone ('fatal: not a git repository:
  // vendor/lib/../../.git/modules/vendor/lib'): its gitlink stays as the index holds it.
  const orphaned = await orphanedGitlinks(top, gitlinksOf(before));
  const problems = new Map<string, StagingProblem['reason']>();
  // git add takes names a remote's object check refuses, which would keep the chain off it for good.
  for (const path of untracked.map((raw) => (raw.endsWith('/') ? raw.slice(0, -1) : raw))) if (refusedByRemotes(top, path)) problems.set(path, 'invalid-path');
  let listed: string[] = [];
  try {
    for (const problem of await plumbing.addAll(top, indexFile, [...orphaned, ...tooLarge.map((entry) => entry.path), ...problems.keys()], options)) problems.set(problem.path, problem.reason);
  } catch (error) {
    if (!(error instanceof StagingStopped)) throw error;
    listed = await stageFromLists(plumbing, layout, indexFile, maxFileSize, { problems, tooLarge, orphaned, stop: error }, options);
  }
  const after = await restoreRefusedEntries(plumbing, layout, head, indexFile, await readIndexEntries(indexFile, objectFormat), problems, options);
  const staged = new Map(after.map((entry) => [entry.path, entry]));
  // A listed file that update-index found gone is no entry and no error.
  for (const path of listed) if (!staged.has(path) && !problems.has(path)) problems.set(path, 'vanished');
  const flagged = flaggedOnDisk
    .filter((entry) => staged.get(entry.path)?.oid !== entry.oid)
    .map((entry) => ({ path: entry.path, reason: entry.flag as FlaggedPath['reason'] }));
  for (const path of unreadableInWalk(said).folders) if (!problems.has(path)) problems.set(path, 'unreadable');
  const leftOut: LeftOut[] = [
    ...[...problems].map(([path, reason]) => ({ path, reason })),
    ...tooLarge,
    ...await gitlinksLeftOut(top, gitlinksOf(after)),
  ];
  return { leftOut: sortByPath(leftOut), flagged: sortByPath(flagged) };
}

/**
 * The entries of `indexFile` (`after`) less the staged ones a remote's object check refuses (git
 * add takes them, from the checkout's index or the working tree): each is set back to HEAD's
 * entry, or removed where HEAD has none, and listed as invalid-path in `problems`, as an
 * untracked one is; one that is HEAD's already, or where HEAD's own entry is refused too, is
 * left. Gitlinks are left as they are.
 */
async function restoreRefusedEntries(plumbing: Plumbing, { top, objectFormat }: RepositoryLayout, head: string | null, indexFile: string, after: IndexEntry[], problems: Map<string, StagingProblem['reason']>, options: GitRunOptions): Promise<IndexEntry[]> {
  const refused = after.filter((entry) => entry.mode !== '160000' && !problems.has(entry.path) && refusedByObjectChecks(entry.path, entry.mode));
  if (refused.length === 0) return after;
  const paths = [...new Set(refused.map((entry) => entry.path))];
  const raws = paths.map((path) => Buffer.from(path, 'utf8').toString('latin1'));
  const found = head === null || head === '' ? paths.map(() => null) : await entriesInTree(plumbing, objectFormat, `${head}^{tree}`, raws);
  if (found === null) return after;
  const headOf = new Map(paths.map((path, at) => [path, found[at] ?? null]));
  const changed = paths.filter((path) => {
    const entries = refused.filter((entry) => entry.path === path);
    const kept = headOf.get(path) ?? null;
    // HEAD's own entry is refused there too (a file in a committed .gitmodules folder): HEAD's
    // tree names it either way, and setting it back would drop the user's change for nothing.
    if (kept !== null && refusedByObjectChecks(path, kept.mode)) return false;
    return kept === null || entries.length !== 1 || entries[0]?.stage !== 0 || entries[0]?.mode !== kept.mode || entries[0]?.oid !== kept.oid;
  });
  if (changed.length === 0) return after;
  const zero = '0'.repeat((refused[0] as IndexEntry).oid.length);
  // A mode of 0 removes every entry of the path; HEAD's entry then goes in at stage 0.
  await plumbing.forgetStat(top, indexFile, changed.flatMap((path) => {
    const kept = headOf.get(path) ?? null;
    return [{ path, mode: '0', oid: zero }, ...(kept === null ? [] : [{ path, mode: kept.mode, oid: kept.oid }])];
  }), options);
  for (const path of changed) problems.set(path, 'invalid-path');
  const gone = new Set(changed);
  return after.filter((entry) => !gone.has(entry.path));
}

/** Whether a symlink is at `path`: one named .gitmodules is told from a file of that name. */
function symlinkAt(top: string, path: string): boolean {
  return lstatSync(join(top, path), { throwIfNoEntry: false })?.isSymbolicLink() ?? false;
}

/** Whether a remote that checks what it receives would refuse this untracked path, which git add takes. */
function refusedByRemotes(top: string, path: string): boolean {
  return refusedByObjectChecks(path, '100644') || (refusedByObjectChecks(path, '120000') && symlinkAt(top, path));
}

/**
 * Makes the copy of a split checkout index whole (see {@link isSplitIndex}): the shared index's
 * entries are not in the file itself, and what a save reads of an index (the flagged entries, the
 * gitlinks) would miss them. No process when the index is whole, as it is unless `core.splitIndex`
 * or `update-index --split-index` made the checkout's split. Needed once, before the copy is
 * first read: every later write of it runs with `core.splitIndex` off and writes it whole.
 */
async function unsplit(plumbing: Plumbing, top: string, indexFile: string, objectFormat: string, options: GitRunOptions): Promise<void> {
  if (isSplitIndex(await readFile(indexFile).catch(() => null), objectFormat)) await plumbing.unsplitIndex(top, indexFile, options);
}

/**
 * The gitlinks whose working tree names, in its `.git` file, a git directory that is not there
 * (a submodule after `.git/modules` was removed, or a checkout moved without it).
 */
async function orphanedGitlinks(top: string, gitlinks: readonly Gitlink[]): Promise<string[]> {
  const orphaned: string[] = [];
  for (const { path } of gitlinks) {
    const gitFile = await readFile(join(top, path, '.git'), 'utf8').catch(() => null);
    const gitDir = gitFile === null ? null : /^gitdir: (.*)$/m.exec(gitFile)?.[1];
    if (gitDir !== null && gitDir !== undefined && !existsSync(join(resolve(top, path, gitDir), 'HEAD'))) orphaned.push(path);
  }
  return orphaned;
}

/** A path's bytes, one character a byte, as UTF-8 decodes them. */
function utf8Of(raw: string): string {
  return Buffer.from(raw, 'latin1').toString('utf8');
}

/** The new untracked files of `paths` over `maxFileSize`, with their sizes, looked at without reading them. */
async function overTheLimit(top: string, paths: readonly string[], maxFileSize: number): Promise<LeftOut[]> {
  const sizes = await Promise.all(paths.map((path) => lstat(join(top, path)).catch(() => null)));
  const tooLarge: LeftOut[] = [];
  for (const [index, stats] of sizes.entries()) {
    if (stats !== null && stats.isFile() && stats.size > maxFileSize) tooLarge.push({ path: paths[index] as string, reason: 'too-large', size: stats.size });
  }
  return tooLarge;
}

/**
 * Stages the working tree when `git add --all` stopped on a file that vanished under it: the
 * tree changes while git walks it (a build, a test run, an editor's swap files), and each new
 * walk can meet another file created and deleted meanwhile, so running the walk again without
 * the one path need never end. Instead nothing is walked twice: the tracked files are staged by
 * `git add --update` (a tracked file deleted in the instant between its two looks stops it; it
 * runs again without that path, a finite list), and the untracked files are listed once and
 * staged by name, where a file already gone is no error. Each stop removes one path of a list
 * that does not grow, so this ends.
 * @returns the untracked paths it asked git to stage (one not in the index after it had vanished)
 */
async function stageFromLists(plumbing: Plumbing, layout: RepositoryLayout, indexFile: string, maxFileSize: number, found: { problems: Map<string, StagingProblem['reason']>; tooLarge: LeftOut[]; orphaned: readonly string[]; stop: StagingStopped }, options: GitRunOptions): Promise<string[]> {
  const { top, objectFormat } = layout;
  const { problems, tooLarge, orphaned, stop } = found;
  const note = (stopped: StagingStopped): void => {
    for (const problem of stopped.named) problems.set(problem.path, problem.reason);
    problems.set(stopped.path.path, stopped.path.reason);
  };
  note(stop);
  const excluded = (): string[] => [...orphaned, ...tooLarge.map((entry) => entry.path), ...problems.keys()];
  // Only the stops on files gone under git count: one on a file git cannot convert (a failing
  // clean filter) comes once for each such edited file, however many there are.
  let gone = 0;
  // Tracked files git reads again whatever the pathspec leaves out: racily clean ones, whose
  // entries are written anew without stat data, so that the index's content stays unread.
  const unread = new Map<string, IndexEntry>();
  let forgotten = 0;
  let indexed: Map<string, IndexEntry> | null = null;
  for (let attempt = 1; ; attempt += 1) {
    try {
      if (unread.size > forgotten) {
        await plumbing.forgetStat(top, indexFile, [...unread.values()], options);
        forgotten = unread.size;
      }
      for (const problem of await plumbing.addAll(top, indexFile, excluded(), options, true)) problems.set(problem.path, problem.reason);
      break;
    } catch (error) {
      if (!(error instanceof StagingStopped)) throw error;
      if (error.path.reason === 'vanished') gone += 1;
      if (problems.has(error.path.path) && !unread.has(error.path.path)) {
        indexed ??= new Map((await readIndexEntries(indexFile, objectFormat)).filter((entry) => entry.stage === 0).map((entry) => [entry.path, entry]));
        const entry = indexed.get(error.path.path);
        // A name that is not UTF-8 is known here only as its decoding: no entry is written for it.
        if (entry !== undefined && !entry.path.includes('\uFFFD')) {
          unread.set(entry.path, entry);
          continue;
        }
      }
      if (gone >= TRACKED_ATTEMPTS || problems.has(error.path.path)) {
        throw new WipError('git-failed', `git add failed: ${error.path.path} was ${error.path.reason === 'vanished' ? 'gone' : 'unreadable'} each time git read it, ${attempt} times`, { cause: error });
      }
      note(error);
    }
  }
  // A repository inside this one is listed with a slash after it; update-index takes it without.
  const raws = (await plumbing.untrackedFiles(top, indexFile, options)).map((raw) => (raw.endsWith('/') ? raw.slice(0, -1) : raw));
  // The lists are keyed by the path as UTF-8 decodes it, as git's messages and the index's
  // entries are read; git is handed each path's own bytes, or a name that is not UTF-8 is lost.
  const rawOf = new Map(raws.map((raw) => [utf8Of(raw), raw]));
  const untracked = [...rawOf.keys()];
  const known = new Set(tooLarge.map((entry) => entry.path));
  tooLarge.push(...(await overTheLimit(top, untracked, maxFileSize)).filter((entry) => !known.has(entry.path) && !problems.has(entry.path)));
  // update-index passes over a name git refuses to hold, saying only 'Ignoring path', and takes
  // names a remote's object check refuses.
  for (const path of untracked) {
    if (unwritablePath(path, '100644') !== null || (unwritablePath(path, '120000') !== null && symlinkAt(top, path)) || refusedByRemotes(top, path)) problems.set(path, 'invalid-path');
  }
  const left = new Set(excluded());
  const listed = untracked.filter((path) => !left.has(path));
  for (;;) {
    try {
      await plumbing.addListed(top, indexFile, listed.filter((path) => !problems.has(path)).map((path) => rawOf.get(path) as string), options);
      return listed;
    } catch (error) {
      if (!(error instanceof StagingStopped)) throw error;
      if (problems.has(error.path.path)) throw new WipError('git-failed', `git update-index stopped again on ${error.path.path}, which it was not given`, { cause: error });
      note(error);
    }
  }
}

/**
 * The gitlinks of a tree as what it does not hold: `submodule` when `.gitmodules` names the
 * path, else `embedded-repository` (a repository inside this one that git add took as a gitlink).
 */
export async function gitlinksLeftOut(top: string, gitlinks: readonly Gitlink[]): Promise<LeftOut[]> {
  if (gitlinks.length === 0) return [];
  const declared = submodulePaths(await readFile(join(top, '.gitmodules'), 'utf8').catch(() => ''));
  return gitlinks.map((link) => ({ path: link.path, reason: declared.has(link.path) ? 'submodule' as const : 'embedded-repository' as const, commit: link.commit }));
}

/** The `path` values of a `.gitmodules` file, read as git config reads a plain value (quotes stripped). */
function submodulePaths(text: string): Set<string> {
  const paths = new Set<string>();
  for (const line of text.split('\n')) {
    const match = /^\s*path\s*=\s*(.*?)\s*$/i.exec(line);
    if (match === null) continue;
    const value = match[1] as string;
    paths.add(value.startsWith('"') && value.endsWith('"') && value.length >= 2 ? value.slice(1, -1) : value);
  }
  return paths;
}

/**
 * Makes `copy` a copy of the checkout's index for git to stage into. A hard link, where the file
 * system has them: git never writes an index in place (it writes `<index>.lock` and renames it
 * over), so the checkout's index is never touched, and the link carries the original's mtime,
 * which git's racy-clean check reads: an entry whose file changed in the same second the index
 * was written is only re-read while the index's mtime says so. Elsewhere a copy, given the
 * original's mtime (taken before copying, rounded down, so never newer than its contents).
 */
export async function seedIndex(original: string, copy: string): Promise<void> {
  try {
    // Synchronous, as the save waits on it before its first git call.
    linkSync(original, copy);
    return;
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === 'ENOENT') throw error;
  }
  const stats = await stat(original);
  await copyFile(original, copy);
  const seconds = Math.floor(stats.mtimeMs / 1000);
  await utimes(copy, seconds, seconds);
}

/** Sorted by path, in byte order. */
export function sortByPath<T extends { path: string }>(entries: T[]): T[] {
  return entries.sort((a, b) => compareBytes(a.path, b.path));
}
