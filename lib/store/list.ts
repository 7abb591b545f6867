// `list`: every branch's snapshots, read from local refs through the memo of snapshot chains.
import { lstat } from 'node:fs/promises';
import { join } from 'node:path';
import type { Snapshot } from '../documents/snapshot.js';
import type { BranchSnapshots, ListResult } from '../documents/wip-read.js';
import { checkNotAborted, WipError } from '../errors.js';
import { OBJECT_ID } from '../git/formats/object-format.js';
import { addChangeCounts } from './changes.js';
import { readSnapshotMemo, recordSnapshotMemo, SNAPSHOT_MEMO_FILE } from '../managers/snapshot-memo.js';
import { compareBytes } from '../order.js';
import { chainLink, snapshotChain, walkChain } from '../snapshot/chain.js';
import type { ChainLink } from '../snapshot/chain.js';
import { ASIDE_REF_PREFIX, readSnapshot, WIP_REF_PREFIX, wipRef } from '../snapshot/format.js';
import { loadPolicy, replicatorOf } from './context.js';
import { openCheckout } from './checkout.js';
import type { StoreContext } from './context.js';

/**
 * Options of {@link WipStore.list}.
 * @public
 */
export interface ListOptions {
  /** Only this branch's snapshots (exact name, without `refs/heads/`). */
  branch?: string | null;
  /** At most this many snapshots per branch, the newest; all when null or absent. */
  limit?: number | null;
  /**
   * A page further back: only the snapshots older than this one (its full commit id), on the
   * chain that holds it; a branch whose chain does not hold it lists none. With `limit`, the
   * last commit of one page is the `before` of the next.
   */
  before?: string | null;
  /** Gives each snapshot listed its change counts against the one before it (`changes`). */
  changes?: boolean;
  /** Cancels the read: it then rejects with `wip-cancelled`. */
  signal?: AbortSignal;
}

/** Reads every branch's snapshots; see {@link WipStore.list}. */
export async function list(context: StoreContext, options: ListOptions): Promise<ListResult> {
  const limit = options.limit ?? null;
  if (limit !== null && !(Number.isSafeInteger(limit) && limit >= 1)) throw new WipError('write-usage-invalid', `limit must be a whole number from 1; it was ${String(limit)}`);
  const before = options.before ?? null;
  if (before !== null && !OBJECT_ID.test(before)) throw new WipError('write-usage-invalid', `before must be a snapshot's full commit id; it was ${JSON.stringify(before)}`);
  const signal = options.signal;
  checkNotAborted(signal);
  const { layout, headRef, head: headCommit, replaced } = await openCheckout(context.plumbing, context.cwd, context.env ?? process.env);
  const policy = await loadPolicy(context, layout);
  const branch = headRef?.startsWith('refs/heads/') ? headRef.slice('refs/heads/'.length) : null;
  const head = branch === null ? null : headCommit;
  const only = options.branch ?? null;
  // The memo (lib/managers/snapshot-memo.ts) holds what earlier reads learned; git log is asked only
  // for the commits it does not know, the tips included (for-each-ref prints a message as
  // stored, git log in UTF-8), and the walk stops where the memo takes over. A shallow
  // repository, grafts or replace refs make git read a commit's parents other than the
  // commit says, and can change their minds: then the memo is neither read nor written.
  const memoFile = join(layout.commonDir, SNAPSHOT_MEMO_FILE);
  // Chains moved aside (see ASIDE_REF_PREFIX) are read in the same call, and listed under the
  // branch their tips name.
  const [read, memo, grafted] = await Promise.all([
    context.plumbing.readRefs([only === null ? WIP_REF_PREFIX : wipRef(only), ASIDE_REF_PREFIX]),
    replaced ? { links: new Map<string, ChainLink>(), stored: 0, appendable: false } : readSnapshotMemo(memoFile, layout.objectFormat),
    historyRewritten(layout.commonDir),
  ]);
  const asideBranch = new Map<string, string>();
  for (const tip of read) {
    const snapshot = tip.ref.startsWith(ASIDE_REF_PREFIX) ? readSnapshot(tip) : null;
    if (snapshot !== null) asideBranch.set(tip.ref, snapshot.branch);
  }
  const tips = read.filter((tip) => !tip.ref.startsWith(ASIDE_REF_PREFIX) || (asideBranch.has(tip.ref) && (only === null || asideBranch.get(tip.ref) === only)));
  const trusted = !grafted && !replaced;
  const links = trusted ? memo.links : new Map<string, ChainLink>();
  const learned = new Map<string, ChainLink>();
  const unknown = new Set(tips.map((tip) => walkChain(tip.commit, links).unknown).filter((commit) => commit !== null));
  if (unknown.size > 0) {
    await context.plumbing.readFirstParentChains([...unknown], (record) => {
      const link = chainLink(record);
      links.set(record.commit, link);
      learned.set(record.commit, link);
      return link.snapshot !== null && link.next !== null && !links.has(link.next) ? link.next : null;
    });
  }
  // Each chain is walked once, now that every link is known: for its snapshots, and for what
  // the memo keeps.
  const walks = tips.map((tip) => walkChain(tip.commit, links).walked);
  const branches: BranchSnapshots[] = tips
    .map((tip, index) => {
      const aside = asideBranch.get(tip.ref);
      const paged = page(snapshotChain(walks[index] as string[], links), limit, before);
      return aside === undefined
        ? { branch: tip.ref.slice(WIP_REF_PREFIX.length), ref: tip.ref, tip: tip.commit, ...paged }
        : { branch: aside, ref: tip.ref, tip: tip.commit, ...paged, aside: true as const };
    })
    .sort((a, b) => compareBytes(a.branch, b.branch) || compareBytes(a.ref, b.ref));
  // What a read of every branch keeps, when the memo is written anew, is what the tips reach,
  // so deleted branches and rewritten chains are forgotten; a read of one branch keeps all.
  if (trusted && learned.size > 0) await recordSnapshotMemo(memoFile, layout.objectFormat, memo, learned, only === null ? reachedLinks(walks, links) : links);
  checkNotAborted(signal);
  if (options.changes === true) await addChangeCounts(context.plumbing, layout, branches, trusted, signal);
  checkNotAborted(signal);
  const replication = policy === null ? null : await replicatorOf(context, policy).state();
  checkNotAborted(signal);
  return { checkout: { branch, head }, branches, replication };
}

/**
 * The snapshots of one page of a chain: those older than `before` (none when the chain does not
 * hold it), at most `limit` of them; `older` counts what the page left out, when one was asked.
 */
function page(chain: Snapshot[], limit: number | null, before: string | null): { snapshots: Snapshot[]; older?: number } {
  if (limit === null && before === null) return { snapshots: chain };
  const start = before === null ? 0 : chain.findIndex((snapshot) => snapshot.commit === before) + 1;
  const from = before !== null && start === 0 ? chain.length : start;
  const snapshots = chain.slice(from, limit === null ? undefined : from + limit);
  return { snapshots, older: chain.length - from - snapshots.length };
}

/** Whether git reads some commits' parents other than they are stored: a shallow repository, or grafts. */
async function historyRewritten(commonDir: string): Promise<boolean> {
  const present = await Promise.all(['shallow', join('info', 'grafts')].map((name) => lstat(join(commonDir, name)).then(() => true, () => false)));
  return present.some((one) => one);
}

/** The links of the commits the walks went through. */
function reachedLinks(walks: ReadonlyArray<readonly string[]>, links: ReadonlyMap<string, ChainLink>): Map<string, ChainLink> {
  const reached = new Map<string, ChainLink>();
  for (const walked of walks) {
    for (const commit of walked) reached.set(commit, links.get(commit) as ChainLink);
  }
  return reached;
}
