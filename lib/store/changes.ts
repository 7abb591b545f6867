// What changed: `show` (one snapshot with its files), `diff` (between two snapshots, a snapshot
// and another commit, or a snapshot and the working tree), and the counting of the change counts
// the read gives each snapshot (kept in the snapshot memo, lib/store/list.ts, so that a read
// after a save counts the new tip alone).
import { rm } from 'node:fs/promises';
import type { DiffResult, DiffSide, PathChange, ShowResult } from '../documents/changes.js';
import type { Snapshot } from '../documents/snapshot.js';
import { checkNotAborted, WipError } from '../errors.js';
import { countChanges, diffWithCounts, listTree } from '../git/diff.js';
import type { CountedChange, Totals } from '../git/diff.js';
import { parseCommit } from '../git/formats/commit.js';
import type { CommitRecord } from '../git/formats/commit.js';
import { readLooseCommits } from '../git/loose-objects.js';
import type { Plumbing, RepositoryLayout } from '../git/plumbing.js';
import { parentBelow, readSnapshot } from '../snapshot/format.js';
import type { StoreContext } from './context.js';
import { checkpointSettings, locked } from './context.js';
import { stageWorkingTree } from './staging.js';

/**
 * Options of {@link WipStore.show}.
 * @public
 */
export interface ShowOptions {
  /** The snapshot, by any name git resolves to its commit. */
  snapshot: string;
  /** Cancels the call: it then rejects with `wip-cancelled`. */
  signal?: AbortSignal;
}

/**
 * Options of {@link WipStore.diff}.
 * @public
 */
export interface DiffOptions {
  /** The from side: a snapshot, or any commit git resolves (`HEAD`, a branch). */
  from: string;
  /** The to side, likewise; the working tree when absent or null. */
  to?: string | null;
  /** Cancels the call: it then rejects with `wip-cancelled`. */
  signal?: AbortSignal;
}

/** One snapshot with what it changed and its files; see {@link WipStore.show}. */
export async function show(context: StoreContext, options: ShowOptions): Promise<ShowResult> {
  const name = checkName('snapshot', options.snapshot);
  const signal = options.signal;
  checkNotAborted(signal);
  const [, record] = await Promise.all([context.plumbing.layout(), context.plumbing.readNamedCommit(name)]);
  const snapshot = record === null ? null : readSnapshot(record);
  if (record === null || snapshot === null) throw unknownSnapshot(name, record);
  const against = firstParent(record, snapshot);
  const [files, counts] = await Promise.all([listTree(context.plumbing, snapshot.tree, signal), countComparable(context.plumbing, [[snapshot.commit, against]], signal)]);
  checkNotAborted(signal);
  const totals = counts.get(snapshot.commit);
  const changes = totals === undefined ? null : { against, ...totals };
  return {
    snapshot: changes === null ? snapshot : { ...snapshot, changes },
    changes,
    files: files.map((file) => ({ path: file.path, mode: file.mode, id: file.oid })),
  };
}

/** What differs between two sides; see {@link WipStore.diff}. */
export async function diff(context: StoreContext, options: DiffOptions): Promise<DiffResult> {
  const fromName = checkName('from', options.from);
  const toName = options.to === undefined || options.to === null ? null : checkName('to', options.to);
  const signal = options.signal;
  checkNotAborted(signal);
  const { from, to, changes } = toName === null ? await againstWorkingTree(context, fromName, signal) : await betweenCommits(context.plumbing, fromName, toName, signal);
  checkNotAborted(signal);
  // Sorted by the paths' bytes, as show lists a snapshot's files (a quoted name by its bytes, not its quotes).
  const paths = [...changes].sort((a, b) => Buffer.compare(Buffer.from(a.raw, 'latin1'), Buffer.from(b.raw, 'latin1'))).map(pathChange);
  return {
    from,
    to,
    files: paths.length,
    added: paths.reduce((sum, change) => sum + (change.added ?? 0), 0),
    removed: paths.reduce((sum, change) => sum + (change.removed ?? 0), 0),
    paths,
  };
}

/**
 * What each commit changed against the commit paired with it (`[commit, against]`), in one git
 * process ({@link countChanges}), leaving out the pairs git cannot compare for want of an object.
 */
export async function countComparable(plumbing: Plumbing, pairs: Array<[string, string]>, signal: AbortSignal | undefined): Promise<Map<string, Totals>> {
  try {
    return await countChanges(plumbing, pairs, signal);
  } catch (error) {
    checkNotAborted(signal);
    const present = await plumbing.objectInfo(pairs.flat());
    const comparable = pairs.filter((pair) => pair.every((oid) => present.get(oid)?.type === 'commit'));
    if (comparable.length === pairs.length) throw error;
    return countChanges(plumbing, comparable, signal);
  }
}

/** What a snapshot changed is counted against: the snapshot below it, or its head for a chain's first (a checkpoint's index commit is neither). */
function firstParent(record: CommitRecord, snapshot: Snapshot): string {
  return parentBelow(record.parents, record.message) ?? snapshot.head;
}

/** A commit and the working tree: the tree a save would record is staged first, then diffed. */
async function againstWorkingTree(context: StoreContext, fromName: string, signal: AbortSignal | undefined): Promise<{ from: DiffSide; to: DiffSide; changes: CountedChange[] }> {
  const opened = await context.plumbing.checkout();
  const [from, to] = await Promise.all([context.plumbing.readNamedCommit(fromName).then((record) => sideOf(fromName, record)), workingTreeSide(context, opened.layout, opened.head, signal)]);
  return { from, to, changes: await diffWithCounts(context.plumbing, from.tree, to.tree, signal) };
}

/**
 * Two commits: both read in one git process while a second diffs them, so the call costs about
 * one git diff. The diff starts first, as it takes longest (each start of a process holds this
 * one up). A refusal names the first side that names no commit, once the folder is known to be
 * a repository (else not-a-git-repository); only then the diff's own failure.
 */
async function betweenCommits(plumbing: Plumbing, fromName: string, toName: string, signal: AbortSignal | undefined): Promise<{ from: DiffSide; to: DiffSide; changes: CountedChange[] }> {
  checkNotAborted(signal);
  // Two snapshots named by their ids (what a timeline holds) are read from their loose files:
  // the diff is then the call's one process.
  const loose = readLooseCommits(plumbing.cwd, [fromName, toName]);
  if (loose !== null) {
    const [from, to] = [fromName, toName].map((name, i) => sideOf(name, parseCommit(name, (loose[i] as Buffer).toString('utf8'))));
    return { from: from as DiffSide, to: to as DiffSide, changes: await diffWithCounts(plumbing, fromName, toName, signal) };
  }
  const [changes, sides] = await Promise.allSettled([
    diffWithCounts(plumbing, `${fromName}^{commit}`, `${toName}^{commit}`, signal),
    plumbing.readNamedCommits([fromName, toName]).then(([from, to]) => [sideOf(fromName, from ?? null), sideOf(toName, to ?? null)] as const),
  ]);
  if (sides.status === 'fulfilled' && changes.status === 'fulfilled') return { from: sides.value[0], to: sides.value[1], changes: changes.value };
  checkNotAborted(signal);
  await plumbing.layout();
  throw sides.status === 'rejected' ? sides.reason : (changes as PromiseRejectedResult).reason;
}

function sideOf(name: string, record: CommitRecord | null): DiffSide {
  if (record === null) throw new WipError('wip-snapshot-unknown', `${JSON.stringify(name)} names no commit`);
  return { commit: record.commit, tree: record.tree, snapshot: readSnapshot(record) };
}

/**
 * The working tree as a side: its tree as a save would record it, staged into a temporary index
 * that is removed after. The checkout's index, HEAD and refs are not written; git may add the
 * blobs of changed files to the object store, as `git add` would.
 */
async function workingTreeSide(context: StoreContext, layout: RepositoryLayout, head: string | null, signal: AbortSignal | undefined): Promise<DiffSide> {
  checkNotAborted(signal);
  const { maxFileSize } = await checkpointSettings(context, layout);
  // Under the lock, as a restore's plan: a save's or a restore's cleanup takes any temporary
  // index of the worktree it did not write, and git write-tree of a missing index gives the
  // empty tree, read as every file removed.
  return locked(context, layout, async () => {
    checkNotAborted(signal);
    const { indexFile } = await stageWorkingTree(context.plumbing, { layout, branch: '', head: head ?? '', ref: '', tip: null }, maxFileSize);
    try {
      return { commit: null, tree: await context.plumbing.writeTree(indexFile), snapshot: null };
    } finally {
      await rm(indexFile, { force: true });
    }
  });
}

const KINDS: Readonly<Record<string, PathChange['change']>> = { A: 'added', D: 'removed', M: 'modified', T: 'type-changed' };
const ZERO = /^0+$/;

function pathChange(change: CountedChange): PathChange {
  const added = change.status === 'A' || ZERO.test(change.oldMode);
  const removed = change.status === 'D' || ZERO.test(change.newMode);
  return {
    path: change.path,
    change: KINDS[change.status] ?? 'modified',
    oldMode: added ? null : change.oldMode,
    newMode: removed ? null : change.newMode,
    oldId: added ? null : change.oldOid,
    newId: removed ? null : change.newOid,
    added: change.added,
    removed: change.removed,
  };
}

function checkName(what: string, name: unknown): string {
  if (typeof name !== 'string' || name.length === 0 || /[\0\n\r]/.test(name)) {
    throw new WipError('write-usage-invalid', `${what} must name a commit: a non-empty string on one line`);
  }
  return name;
}

function unknownSnapshot(name: string, record: CommitRecord | null): WipError {
  return new WipError('wip-snapshot-unknown', record === null
    ? `${JSON.stringify(name)} names no commit`
    : `${JSON.stringify(name)} names commit ${record.commit}, which is not a snapshot chant took (it has no Chant-Wip-Branch and Chant-Wip-Head trailers)`);
}
