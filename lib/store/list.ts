// `list`: every branch's snapshots, read from local refs through the memo of snapshot chains.
import { lstatSync } from 'node:fs';
import { join } from 'node:path';
import type { Snapshot } from '../documents/snapshot.js';
import type { BranchSnapshots, ListResult } from '../documents/wip-read.js';
import { checkNotAborted, WipError } from '../errors.js';
import { OBJECT_ID } from '../git/formats/object-format.js';
import type { RepositoryLayout } from '../git/plumbing.js';
import type { CommitRecord } from '../git/formats/commit.js';
import { looseCommitRecord, refsFromFiles } from '../git/ref-files.js';
import { countComparable } from './changes.js';
import type { Totals } from '../git/diff.js';
import type { RefRecord } from '../git/plumbing.js';
import { emptySnapshotMemo, openSnapshotMemo, recordSnapshotMemo, SNAPSHOT_MEMO_FILE } from '../managers/snapshot-memo.js';
import { compareBytes } from '../order.js';
import { chainLink, depthAgrees, fillDepths, walkChain } from '../snapshot/chain.js';
import type { ChainLink } from '../snapshot/chain.js';
import { ASIDE_REF_PREFIX, readSnapshot, WIP_REF_PREFIX, wipRef } from '../snapshot/format.js';
import { loadPolicy, replicatorOf } from './context.js';
import { openCheckout } from './checkout.js';
import { repairBrokenRefs, setBackFrom } from '../git/ref-repair.js';
import { interruptedRestore } from '../managers/restore-marker.js';
import type { StoreContext } from './context.js';

/**
 * Options of {@link WipStore.list}.
 * @public
 */
export interface ListOptions {
  /** Only this branch's snapshots (exact name, without `refs/heads/`; an empty one is `write-usage-invalid`). */
  branch?: string | null;
  /** At most this many snapshots per branch, the newest; all when null or absent. */
  limit?: number | null;
  /**
   * A page further back: only the snapshots older than this one (its full commit id), on the
   * chain that holds it; a branch whose chain does not hold it lists none. With `limit`, the
   * last commit of one page is the `before` of the next. One that no chain read holds (a prune
   * dropped it since) is `write-usage-invalid`.
   */
  before?: string | null;
  /** Gives each snapshot listed its change counts against the one before it (`changes`). */
  changes?: boolean;
  /** Cancels the read: it then rejects with `wip-cancelled`. */
  signal?: AbortSignal;
}

/**
 * What a caller of {@link list} inside the store learns as the read goes.
 * @internal
 */
export interface ListWatch {
  /**
   * Called with the tip of every chain the read lists, once the refs are read and before the
   * chains are walked (again, should the read start over): the `tip` of each branch of the result.
   */
  tips?: (tips: readonly string[]) => void;
}

/** Reads every branch's snapshots; see {@link WipStore.list}. */
export async function list(context: StoreContext, options: ListOptions, watch: ListWatch = {}): Promise<ListResult> {
  const limit = options.limit ?? null;
  if (limit !== null && !(Number.isSafeInteger(limit) && limit >= 1)) throw new WipError('write-usage-invalid', `limit must be a whole number from 1; it was ${String(limit)}`);
  const before = options.before ?? null;
  if (before !== null && !OBJECT_ID.test(before)) throw new WipError('write-usage-invalid', `before must be a snapshot's full commit id; it was ${JSON.stringify(before)}`);
  if (options.branch !== undefined && options.branch !== null && (typeof options.branch !== 'string' || options.branch.length === 0)) {
    // An empty name would read as the prefix of every wip ref: a prune would then rewrite every chain.
    throw new WipError('write-usage-invalid', `branch must name a branch (its full name, without refs/heads/); it was ${JSON.stringify(options.branch)}`);
  }
  const signal = options.signal;
  checkNotAborted(signal);
  const { layout, headRef, head: headCommit, replaced } = await openCheckout(context.plumbing, context.cwd, context.env ?? process.env);
  const policy = await loadPolicy(context, layout);
  const branch = headRef?.startsWith('refs/heads/') ? headRef.slice('refs/heads/'.length) : null;
  const head = branch === null ? null : headCommit;
  const only = options.branch ?? null;
  const changes = options.changes === true;
  let branches = await readChains(context, layout, { only, limit, before, replaced, changes, signal, useMemo: true, watch });
  // A memo whose depths disagree with its own links was not written by a read: read without it.
  if (branches === null) branches = await readChains(context, layout, { only, limit, before, replaced, changes, signal, useMemo: false, watch }) as BranchSnapshots[];
  checkNotAborted(signal);
  const replication = policy === null ? null : await replicatorOf(context, policy).state();
  checkNotAborted(signal);
  const interrupted = interruptedRestore(layout.gitDir);
  return { checkout: { branch, head }, branches, replication, ...(interrupted === null ? {} : { interruptedRestore: interrupted }) };
}

/**
 * Reads the branches' chains, as far as their pages need: the whole chain without a limit, else
 * the page and the depth below it. The memo (lib/managers/snapshot-memo.ts) holds what earlier
 * reads learned; git log is asked only for the commits it does not know, the tips included
 * (for-each-ref prints a message as stored, git log in UTF-8), and the walk stops where the memo
 * takes over. With a limit the memo is read from its end, where each chain's newest are, and
 * further back only while a page needs it, so a page costs what it lists, not its chain. A
 * shallow repository, grafts or replace refs make git read a commit's parents other than the
 * commit says, and can change their minds: then the memo is neither read nor written. With
 * `changes`, each snapshot listed gets its change counts against the commit before it on its
 * chain (its head for the chain's first), from the memo where it holds them for that commit,
 * else from one git process for all the others; the memo is written once, after.
 * @returns the branches, sorted; null when the memo's links disagree with each other (a memo no read wrote)
 */
async function readChains(
  context: StoreContext, layout: RepositoryLayout,
  options: { only: string | null; limit: number | null; before: string | null; replaced: boolean; changes: boolean; signal: AbortSignal | undefined; useMemo: boolean; watch: ListWatch },
): Promise<BranchSnapshots[] | null> {
  const { only, limit, before } = options;
  const memoFile = join(layout.commonDir, SNAPSHOT_MEMO_FILE);
  // Chains moved aside (see ASIDE_REF_PREFIX) are read in the same call, and listed under the
  // branch their tips name.
  // The refs, and the commits new since the memo, are read from their files where git would
  // print just that (refs of plain names on loose commits: a save writes its commit loose), and
  // from git otherwise; never where git reads parents other than the commits say.
  const refs = [only === null ? WIP_REF_PREFIX : wipRef(only), ASIDE_REF_PREFIX];
  const grafted = historyRewritten(layout.commonDir);
  const trusted = !grafted && !options.replaced;
  const [read, opened] = await Promise.all([
    (trusted ? refsFromFiles(layout, refs, options.replaced) : null) ?? repairBrokenRefs(context.plumbing, layout, refs).then(() => context.plumbing.readRefs(refs)),
    options.replaced || !options.useMemo ? emptySnapshotMemo() : openSnapshotMemo(memoFile, layout.objectFormat, limit === null),
  ]);
  // A memo that holds anything a read could not have written is not used, and is written anew.
  const memo = trusted && opened.trusted ? opened : emptySnapshotMemo();
  try {
    const asideBranch = new Map<string, string>();
    for (const tip of read) {
      const snapshot = tip.ref.startsWith(ASIDE_REF_PREFIX) ? readSnapshot(tip) : null;
      if (snapshot !== null) asideBranch.set(tip.ref, snapshot.branch);
    }
    const tips = read.filter((tip) => !tip.ref.startsWith(ASIDE_REF_PREFIX) || (asideBranch.has(tip.ref) && (only === null || asideBranch.get(tip.ref) === only)));
    options.watch.tips?.(tips.map((tip) => tip.commit));
    const links = memo.links;
    const early = options.changes ? countNewTips(context, tips, links, options.signal) : null;
    const learned = new Map<string, ChainLink>();
    const unreachable = new Set<string>();
    let pages: Page[];
    for (;;) {
      const walked = tips.map((tip) => pageOf(tip.commit, links, limit, before, unreachable));
      if (walked.some((one) => one === null)) return null;
      const pending = walked.flatMap((one, index) => (one !== null && 'unknown' in one ? [{ unknown: one.unknown, tip: one.unknown === tips[index]?.commit }] : []));
      if (pending.length === 0) {
        pages = walked as Page[];
        break;
      }
      // A tip the memo does not know is most likely new since the last read: git log reads it
      // and goes on only while its chain leads to commits the memo has not given. Deeper in a
      // chain, the memo's older lines are read before git is asked.
      const atTips = pending.filter((one) => one.tip);
      if (atTips.length === 0 && !memo.complete) {
        await memo.readOlder();
        if (!memo.trusted) return null;
        continue;
      }
      const asked = [...new Set((atTips.length > 0 ? atTips : pending).map((one) => one.unknown))];
      // While the memo has lines not read, git reads only about what a page needs before the
      // memo is looked at again.
      let budget = memo.complete ? Number.POSITIVE_INFINITY : (limit ?? 0) + 64;
      await walkFirstParents(context, layout, trusted, asked, (record) => {
        const link = chainLink(record);
        links.set(record.commit, link);
        learned.set(record.commit, link);
        budget -= 1;
        return budget > 0 && link.snapshot !== null && link.next !== null && !links.has(link.next) ? link.next : null;
      });
      for (const commit of asked) if (!links.has(commit)) unreachable.add(commit);
      fillDepths(learned.values(), links);
    }
    // A cursor no chain read holds was dropped by a prune, or its chain rewritten, since the page
    // that gave it was read: empty pages with no older snapshots would say history ends there.
    if (before !== null && !pages.some((page) => page.holds)) {
      throw new WipError('write-usage-invalid', `before names ${before.slice(0, 12)}, which no wip chain read${only === null ? '' : ` (${only})`} holds: a prune dropped it or its chain was rewritten since it was read${only === null ? '' : ', or it is on another branch\'s chain'}; read again from the newest`);
    }
    const branches: BranchSnapshots[] = tips.map((tip, index) => {
      const aside = asideBranch.get(tip.ref);
      const { snapshots, older } = pages[index] as Page;
      const paged = limit === null && before === null ? { snapshots } : { snapshots, older };
      const broken = aside === undefined ? setBackFrom(layout.commonDir, tip.ref, tip.commit) : null;
      return aside === undefined
        ? { branch: tip.ref.slice(WIP_REF_PREFIX.length), ref: tip.ref, tip: tip.commit, ...paged, ...(broken === null ? {} : { setBackFrom: broken }) }
        : { branch: aside, ref: tip.ref, tip: tip.commit, ...paged, aside: true as const };
    });
    const order = branches.map((_, index) => index).sort((a, b) => {
      const [x, y] = [branches[a] as BranchSnapshots, branches[b] as BranchSnapshots];
      return compareBytes(x.branch, y.branch) || compareBytes(x.ref, y.ref);
    });
    const counted = options.changes ? await addChangeCounts(context, pages, links, early, options.signal) : [];
    if (trusted && (learned.size > 0 || counted.length > 0)) {
      // What a read of every branch keeps, when the memo is written anew, is what the tips reach,
      // so deleted branches and rewritten chains are forgotten; a read of one branch keeps all.
      // The newest of a read's learning is written last, at the file's end; links known before
      // and counted now come again, before it.
      const size = limit !== null ? null : only === null ? pages.reduce((sum, one) => sum + one.reached, 0) : links.size;
      const written = [...counted.filter((commit) => !learned.has(commit)).reverse().map((commit) => [commit, links.get(commit) as ChainLink] as const), ...[...learned].reverse()];
      await recordSnapshotMemo(memoFile, layout.objectFormat, memo, written, { size, links: () => keptLinks(tips.map((tip) => tip.commit), links, only === null) });
    }
    return order.map((index) => branches[index] as BranchSnapshots);
  } finally {
    await opened.close();
  }
}

/** Counts started before the chains' walk: the pairs asked about, and what git answered. */
interface EarlyCounts {
  pairs: Map<string, string>;
  counted: Promise<{ value: Map<string, Totals> } | { error: unknown }>;
}

/**
 * Starts counting the tips the memo does not know (most likely saved since the last read) while
 * git log reads them: each is paired, from its ref's record, with what the walk will pair it
 * with, its first parent where the memo knows that for a snapshot, else its head; a tip whose
 * first parent the memo does not know is left to the walk. The walk's pairs decide which of
 * these counts are used.
 */
function countNewTips(context: StoreContext, tips: readonly RefRecord[], links: ReadonlyMap<string, ChainLink>, signal: AbortSignal | undefined): EarlyCounts | null {
  const pairs = new Map<string, string>();
  for (const tip of tips) {
    if (links.has(tip.commit)) continue;
    const snapshot = readSnapshot(tip);
    if (snapshot === null) continue;
    const first = tip.parents.length > 1 ? tip.parents[0] as string : null;
    const below = first === null ? undefined : links.get(first);
    if (first !== null && below === undefined) continue;
    pairs.set(tip.commit, first !== null && below?.snapshot !== null ? first : snapshot.head);
  }
  if (pairs.size === 0) return null;
  const tipTrees = new Map(tips.map((tip) => [tip.commit, tip.tree]));
  // Never rejected: a count started early must not fail a read that turns out not to need it.
  const counted = countPairs(context, [...pairs], (commit) => tipTrees.get(commit) ?? links.get(commit)?.snapshot?.tree, signal).then((value) => ({ value }), (error: unknown) => ({ error }));
  return { pairs, counted };
}

/**
 * Gives each snapshot of the pages its change counts against the commit paired with it
 * (`Page.against`): those its link holds for that commit, or the early count holds for it, the
 * others counted in one git process, and given to their links. Snapshots git cannot compare (a
 * parent missing) are left without. The read's snapshots are its own, made for this result, so
 * each is given its counts in place.
 * @returns the commits counted now, in the pages' order
 */
async function addChangeCounts(context: StoreContext, pages: readonly Page[], links: ReadonlyMap<string, ChainLink>, early: EarlyCounts | null, signal: AbortSignal | undefined): Promise<string[]> {
  const unknown = new Map<string, string>();
  for (const page of pages) {
    for (let i = 0; i < page.snapshots.length; i += 1) {
      const commit = (page.snapshots[i] as Snapshot).commit;
      const changes = (links.get(commit) as ChainLink).changes;
      if (changes === null || changes.against !== page.against[i]) unknown.set(commit, page.against[i] as string);
    }
  }
  const rest = new Map(unknown);
  const counted = new Map<string, Totals>();
  if (early !== null) {
    const settled = await early.counted;
    // An early count that failed is asked again with the rest, where a failure is the read's.
    if ('value' in settled) {
      for (const [commit, against] of early.pairs) {
        if (rest.get(commit) !== against) continue;
        rest.delete(commit);
        const totals = settled.value.get(commit);
        if (totals !== undefined) counted.set(commit, totals);
      }
    }
  }
  if (rest.size > 0) for (const [commit, totals] of await countPairs(context, [...rest], (commit) => links.get(commit)?.snapshot?.tree, signal)) counted.set(commit, totals);
  for (const [commit, totals] of counted) (links.get(commit) as ChainLink).changes = { against: unknown.get(commit) as string, ...totals };
  for (const page of pages) {
    for (let i = 0; i < page.snapshots.length; i += 1) {
      const snapshot = page.snapshots[i] as Snapshot;
      const changes = (links.get(snapshot.commit) as ChainLink).changes;
      if (changes !== null && changes.against === page.against[i]) snapshot.changes = changes;
    }
  }
  return [...unknown.keys()].filter((commit) => (links.get(commit) as ChainLink).changes?.against === unknown.get(commit));
}

/**
 * What each commit changed against the commit paired with it: nothing where both hold the same
 * tree (`treeOf` knows both), with no process; git counts the others ({@link countComparable}).
 */
async function countPairs(context: StoreContext, pairs: ReadonlyArray<[string, string]>, treeOf: (commit: string) => string | undefined, signal: AbortSignal | undefined): Promise<Map<string, Totals>> {
  const totals = new Map<string, Totals>();
  const asked = pairs.filter(([commit, against]) => {
    const tree = treeOf(commit);
    if (tree === undefined || tree !== treeOf(against)) return true;
    totals.set(commit, { files: 0, added: 0, removed: 0 });
    return false;
  });
  if (asked.length > 0) for (const [commit, counted] of await countComparable(context.plumbing, asked, signal)) totals.set(commit, counted);
  return totals;
}

/** One chain's page: its snapshots, what each is compared with, how many older ones the chain holds, and how many links the walk went through. */
interface Page {
  snapshots: Snapshot[];
  against: string[];
  older: number;
  reached: number;
  /** Whether the chain holds `before` (true when none was given). */
  holds: boolean;
}

/**
 * Walks a chain from `tip` through `links` as far as its page needs: to the end of the chain
 * without a limit; with one, to the first link below the page whose depth is known, which says
 * how many snapshots the chain holds from there. The page holds the snapshots older than
 * `before` (none when the chain does not hold it), at most `limit` of them. A commit in
 * `unreachable` ends the chain (git could not read it). Each link's depth is checked against
 * the link below it on the way.
 * @returns the page; `{unknown}` when it needs a link `links` does not hold; null when a depth disagrees
 */
function pageOf(tip: string, links: ReadonlyMap<string, ChainLink>, limit: number | null, before: string | null, unreachable: ReadonlySet<string>): Page | { unknown: string } | null {
  const snapshots: Snapshot[] = [];
  const against: string[] = [];
  const most = limit ?? Number.POSITIVE_INFINITY;
  let from = before === null ? 0 : -1;
  let index = 0;
  let length: number;
  let above: ChainLink | undefined;
  for (let commit: string | null = tip; ;) {
    const link: ChainLink | undefined = commit === null ? undefined : links.get(commit);
    if (commit !== null && link === undefined && !unreachable.has(commit)) return { unknown: commit };
    if (above !== undefined && !depthAgrees(above, link)) return null;
    const snapshot = link?.snapshot ?? null;
    // The snapshot listed last is compared with this one, or where its chain ends, its head.
    if (against.length < snapshots.length) against.push(snapshot !== null ? commit as string : (snapshots[snapshots.length - 1] as Snapshot).head);
    if (snapshot === null) {
      length = index;
      if (link !== undefined) index += 1;
      break;
    }
    if (from >= 0 && snapshots.length === most && (link as ChainLink).depth !== null) {
      length = index + ((link as ChainLink).depth as number);
      break;
    }
    if (from < 0) {
      if (commit === before) from = index + 1;
    } else if (snapshots.length < most) snapshots.push(snapshot);
    index += 1;
    // A chain cannot come back to a commit; a walk longer than the links there are is a forged link's loop.
    if (index > links.size) return null;
    above = link;
    commit = (link as ChainLink).next;
  }
  const holds = from >= 0;
  if (from < 0) from = length;
  return { snapshots, against, older: Math.max(0, length - from - snapshots.length), reached: index, holds };
}

/**
 * The links a rewritten memo keeps, those nearer a tip last: what the tips reach, and with
 * `reachedOnly` false everything else before them.
 */
function keptLinks(tips: readonly string[], links: ReadonlyMap<string, ChainLink>, reachedOnly: boolean): Array<[string, ChainLink]> {
  const walks = tips.map((tip) => walkChain(tip, links).walked);
  const kept = new Map<string, ChainLink>();
  if (!reachedOnly) for (const [commit, link] of links) kept.set(commit, link);
  const longest = Math.max(0, ...walks.map((walked) => walked.length));
  for (let at = longest - 1; at >= 0; at -= 1) {
    for (const walked of walks) {
      const commit = walked[at];
      if (commit === undefined) continue;
      // A commit on two chains goes where it is nearest a tip.
      kept.delete(commit);
      kept.set(commit, links.get(commit) as ChainLink);
    }
  }
  return [...kept];
}

/** Whether git reads some commits' parents other than they are stored: a shallow repository, or grafts. */
function historyRewritten(commonDir: string): boolean {
  return ['shallow', join('info', 'grafts')].some((name) => {
    try {
      return lstatSync(join(commonDir, name), { throwIfNoEntry: false }) !== undefined;
    } catch (error) {
      // A file where the info folder should be holds no grafts; what cannot be looked at might.
      return (error as NodeJS.ErrnoException).code !== 'ENOTDIR';
    }
  });
}

/** How many commits a walk reads from their loose files before git log reads the rest: a read after a save meets a few new ones. */
const LOOSE_WALK = 64;

/**
 * `git log --first-parent` from each of `tips` while `next` names the commit to go on to (see
 * {@link Plumbing.readFirstParentChains}): the first commits from their loose files, where
 * `trusted` (git reads parents as the commits store them) and they are there loose, as git log
 * prints them (see {@link looseCommitRecord}); git reads on from the first that is not.
 */
async function walkFirstParents(context: StoreContext, layout: RepositoryLayout, trusted: boolean, tips: readonly string[], next: (record: CommitRecord) => string | null): Promise<void> {
  const left: string[] = [];
  // Each commit once, as git log prints it once however many tips reach it.
  const seen = new Set<string>();
  let budget = trusted ? LOOSE_WALK : 0;
  for (const tip of tips) {
    for (let commit: string | null = tip; commit !== null && !seen.has(commit);) {
      seen.add(commit);
      const record = budget > 0 ? looseCommitRecord(layout, commit) : null;
      if (record === null) {
        left.push(commit);
        break;
      }
      budget -= 1;
      commit = next(record);
    }
  }
  await context.plumbing.readFirstParentChains(left, next);
}

