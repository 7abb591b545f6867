// What changed: `show` (one snapshot with its files), `diff` (between two snapshots, a snapshot
// and another commit, or a snapshot and the working tree), and the change counts the read gives
// each snapshot, kept in the change memo so that a read after a save counts the new tip alone.
import { rm } from 'node:fs/promises';
import { join } from 'node:path';
import type { DiffResult, DiffSide, PathChange, ShowResult } from '../documents/changes.js';
import type { BranchSnapshots } from '../documents/wip-read.js';
import type { ChangeCounts, Snapshot } from '../documents/snapshot.js';
import { checkNotAborted, WipError } from '../errors.js';
import { countChanges, diffWithCounts, listTree } from '../git/diff.js';
import type { CountedChange, Totals } from '../git/diff.js';
import type { CommitRecord } from '../git/formats/commit.js';
import type { Plumbing, RepositoryLayout } from '../git/plumbing.js';
import { CHANGE_MEMO_FILE, readChangeMemo, recordChangeMemo } from '../managers/change-memo.js';
import type { ChangeMemo, CountedCommit } from '../managers/change-memo.js';
import { compareBytes } from '../order.js';
import { readSnapshot } from '../snapshot/format.js';
import type { StoreContext } from './context.js';
import { checkpointSettings } from './context.js';
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
  const [layout, record] = await Promise.all([context.plumbing.layout(), context.plumbing.readNamedCommit(name)]);
  const snapshot = record === null ? null : readSnapshot(record);
  if (record === null || snapshot === null) throw unknownSnapshot(name, record);
  const [files, counts] = await Promise.all([
    listTree(context.plumbing, snapshot.tree, signal),
    countsOf(context.plumbing, layout, [[snapshot, firstParent(record, snapshot)]], { trusted: true, whole: false, signal }),
  ]);
  checkNotAborted(signal);
  const changes = counts.get(snapshot.commit) ?? null;
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
  const paths = changes.map(pathChange).sort((a, b) => compareBytes(a.path, b.path));
  return {
    from,
    to,
    files: paths.length,
    added: paths.reduce((sum, change) => sum + (change.added ?? 0), 0),
    removed: paths.reduce((sum, change) => sum + (change.removed ?? 0), 0),
    paths,
  };
}

/** How {@link addChangeCounts} reads and writes the change memo. */
export interface CountOptions {
  /** False while history is shallow, grafted or replaced: the memo is neither read nor written. */
  trusted: boolean;
  /** The branches hold their whole chains, so a memo written anew keeps only what they list; a page keeps everything. */
  whole: boolean;
  /** The memo, when its read was started early (beside the chains' read). */
  memo?: Promise<ChangeMemo>;
  /** Snapshots the read met for the first time: most likely not counted yet, so they are counted while the memo is read. */
  fresh?: ReadonlySet<string>;
  signal?: AbortSignal;
}

/** Starts reading the change memo, for a read that will want it ({@link CountOptions.memo}); it never rejects. */
export function readChangeMemoOf(layout: RepositoryLayout): Promise<ChangeMemo> {
  return readChangeMemo(join(layout.commonDir, CHANGE_MEMO_FILE), layout.objectFormat)
    .catch(() => ({ counts: new Map<string, CountedCommit>(), stored: 0, appendable: false }));
}

/**
 * Gives each snapshot of the branches its change counts against the commit before it on its
 * chain (`against`, by branch and snapshot), from the memo, counting with git only those the
 * memo does not know (one process for them all). Snapshots git cannot compare (a parent
 * missing) are left without.
 */
export async function addChangeCounts(
  plumbing: Plumbing, layout: RepositoryLayout, branches: BranchSnapshots[], against: ReadonlyArray<readonly string[]>, options: CountOptions,
): Promise<void> {
  const pairs: Array<[Snapshot, string]> = [];
  branches.forEach((branch, at) => {
    branch.snapshots.forEach((snapshot, index) => pairs.push([snapshot, against[at]?.[index] ?? snapshot.head]));
  });
  const counts = await countsOf(plumbing, layout, pairs, options);
  // The read's snapshots are its own, made for this result: each is given its counts in place.
  for (const branch of branches) {
    for (const snapshot of branch.snapshots) {
      const changes = counts.get(snapshot.commit);
      if (changes !== undefined) snapshot.changes = changes;
    }
  }
}

/**
 * The counts of each snapshot against the commit paired with it, through the memo. A chain that
 * ends before its first snapshot (the read stops at the first commit that is not one) pairs its
 * last snapshot with its head, which is what its first parent is. When the memo is written
 * anew it keeps what `pairs` counted if they are `whole` chains, else everything it held too.
 */
async function countsOf(plumbing: Plumbing, layout: RepositoryLayout, pairs: ReadonlyArray<readonly [Snapshot, string]>, options: CountOptions): Promise<Map<string, ChangeCounts>> {
  const { trusted, whole, signal } = options;
  const file = join(layout.commonDir, CHANGE_MEMO_FILE);
  // The fresh snapshots are counted by git while the memo is read and parsed.
  const fresh = options.fresh === undefined || options.fresh.size === 0 ? [] : pairs.filter(([snapshot]) => options.fresh?.has(snapshot.commit)).map(([snapshot, against]): [string, string] => [snapshot.commit, against]);
  const early = fresh.length === 0 ? null : settle(countAll(plumbing, fresh, signal));
  const memo = trusted ? await (options.memo ?? readChangeMemo(file, layout.objectFormat)) : { counts: new Map<string, CountedCommit>(), stored: 0, appendable: false };
  const result = new Map<string, ChangeCounts>();
  const unknown = new Map<string, string>();
  for (const [snapshot, against] of pairs) {
    const known = memo.counts.get(snapshot.commit);
    if (known !== undefined && known.against === against) result.set(snapshot.commit, known);
    else unknown.set(snapshot.commit, against);
  }
  const counted = new Map<string, Totals>();
  if (early !== null) {
    const settled = await early;
    // Needed only when the memo did not know them all; then a failure is the read's.
    if (fresh.some(([commit]) => unknown.has(commit))) {
      if ('error' in settled) throw settled.error;
      for (const [commit, totals] of settled.value) counted.set(commit, totals);
    }
  }
  const rest = early === null ? [...unknown] : [...unknown].filter(([commit]) => options.fresh?.has(commit) !== true);
  if (rest.length > 0) for (const [commit, totals] of await countAll(plumbing, rest, signal)) counted.set(commit, totals);
  if (unknown.size === 0) return result;
  const learned = new Map<string, CountedCommit>();
  for (const [commit, totals] of counted) {
    const against = unknown.get(commit);
    if (against === undefined) continue;
    const one = { against, ...totals };
    result.set(commit, one);
    learned.set(commit, one);
  }
  if (trusted && learned.size > 0) {
    await recordChangeMemo(file, layout.objectFormat, memo, learned, whole ? result : new Map([...memo.counts, ...learned]));
  }
  return result;
}

/** A promise's outcome, never rejected: a count started early must not fail a read that turns out not to need it. */
function settle<T>(promise: Promise<T>): Promise<{ value: T } | { error: unknown }> {
  return promise.then((value) => ({ value }), (error: unknown) => ({ error }));
}

/** {@link countChanges}, leaving out the pairs git cannot compare for want of an object. */
async function countAll(plumbing: Plumbing, pairs: Array<[string, string]>, signal: AbortSignal | undefined): Promise<Map<string, Totals>> {
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

function firstParent(record: CommitRecord, snapshot: Snapshot): string {
  return record.parents.length > 1 ? (record.parents[0] as string) : snapshot.head;
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
  const { indexFile } = await stageWorkingTree(context.plumbing, { layout, branch: '', head: head ?? '', ref: '', tip: null }, maxFileSize);
  try {
    return { commit: null, tree: await context.plumbing.writeTree(indexFile), snapshot: null };
  } finally {
    await rm(indexFile, { force: true });
  }
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
