// A branch's chain of snapshots: each snapshot's first parent is the one before it, its last
// the commit HEAD named; the first of a chain has HEAD as its only parent.
import type { Snapshot } from '../documents/snapshot.js';
import type { CommitRecord } from '../git/formats/commit.js';
import { readSnapshot } from './format.js';

/** One commit of a chain: its snapshot (null: it is not one) and the commit the chain goes on to (null: it ends there). */
export interface ChainLink {
  snapshot: Snapshot | null;
  next: string | null;
}

/**
 * What a commit is on a chain: its snapshot, and the commit the chain goes on to. The first
 * snapshot of a chain has HEAD as its only parent, and HEAD is no snapshot, so a chain goes on
 * only from a snapshot with two parents.
 */
export function chainLink(record: CommitRecord): ChainLink {
  const snapshot = readSnapshot(record);
  return { snapshot, next: snapshot !== null && record.parents.length > 1 ? (record.parents[0] as string) : null };
}

/**
 * The commits of a chain from `tip`, newest first, through `links` as far as they go: up to
 * the first commit that is not a snapshot or ends the chain, or to the first one `links` does
 * not hold.
 * @returns the commits walked, and the commit the walk stopped at for want of its link (or null)
 */
export function walkChain(tip: string, links: ReadonlyMap<string, ChainLink>): { walked: string[]; unknown: string | null } {
  const walked: string[] = [];
  const seen = new Set<string>();
  let next: string | null = tip;
  while (next !== null && !seen.has(next)) {
    const link = links.get(next);
    if (link === undefined) return { walked, unknown: next };
    seen.add(next);
    walked.push(next);
    next = link.snapshot === null ? null : link.next;
  }
  return { walked, unknown: null };
}

/**
 * A branch's checkpoint history from the commits a walk from its tip went through (see
 * {@link walkChain}), newest first, ending at the first commit that is not a snapshot.
 */
export function snapshotChain(walked: readonly string[], links: ReadonlyMap<string, ChainLink>): Snapshot[] {
  const chain: Snapshot[] = [];
  for (const commit of walked) {
    const snapshot = links.get(commit)?.snapshot;
    if (snapshot === null || snapshot === undefined) break;
    chain.push(snapshot);
  }
  return chain;
}
