// A branch's chain of snapshots: each snapshot's first parent is the one before it, its last
// the commit HEAD named; the first of a chain has HEAD as its only parent.
import type { ChangeCounts, Snapshot } from '../documents/snapshot.js';
import type { CommitRecord } from '../git/formats/commit.js';
import { readSnapshot } from './format.js';

/**
 * One commit of a chain: its snapshot (null: it is not one), the commit the chain goes on to
 * (null: it ends there), and how many snapshots the chain holds from this commit on (`depth`:
 * 0 for a commit that is no snapshot; null while the chain below it is not known yet), and
 * what the snapshot changed against `changes.against` once a read counted it (null before). A
 * commit's id names its content, so all of these are facts of the commit and never change; the
 * counts hold for their `against` only, which a read compares with the commit it pairs.
 */
export interface ChainLink {
  snapshot: Snapshot | null;
  next: string | null;
  depth: number | null;
  changes: ChangeCounts | null;
}

/**
 * What a commit is on a chain: its snapshot, and the commit the chain goes on to. The first
 * snapshot of a chain has HEAD as its only parent, and HEAD is no snapshot, so a chain goes on
 * only from a snapshot with two parents.
 */
export function chainLink(record: CommitRecord): ChainLink {
  const snapshot = readSnapshot(record);
  const next = snapshot !== null && record.parents.length > 1 ? (record.parents[0] as string) : null;
  return { snapshot, next, depth: snapshot === null ? 0 : next === null ? 1 : null, changes: null };
}

/**
 * The commits of a chain from `tip`, newest first, through `links` as far as they go: up to
 * the first commit that is not a snapshot or ends the chain, or to the first one `links` does
 * not hold.
 * @returns the commits walked, and the commit the walk stopped at for want of its link (or null)
 */
export function walkChain(tip: string, links: ReadonlyMap<string, ChainLink>): { walked: string[]; unknown: string | null } {
  const walked: string[] = [];
  // A chain cannot come back to a commit (each names its parent by its content), so a walk longer
  // than the links there are is a forged link's loop.
  for (let next: string | null = tip; next !== null && walked.length <= links.size;) {
    const link = links.get(next);
    if (link === undefined) return { walked, unknown: next };
    walked.push(next);
    next = link.snapshot === null ? null : link.next;
  }
  return { walked, unknown: null };
}

/**
 * Gives each link `learned` holds its depth, where the chain below it is known: followed down
 * to the first link whose depth is known (or the chain's end), then counted back up.
 */
export function fillDepths(learned: Iterable<ChainLink>, links: ReadonlyMap<string, ChainLink>): void {
  const path: ChainLink[] = [];
  for (const start of learned) {
    if (start.depth !== null) continue;
    path.length = 0;
    let below: number | null = null;
    for (let link: ChainLink | undefined = start; link !== undefined && path.length <= links.size;) {
      if (link.depth !== null) {
        below = link.depth;
        break;
      }
      path.push(link);
      link = link.next === null ? undefined : links.get(link.next);
    }
    if (below === null) continue;
    for (let i = path.length - 1; i >= 0; i -= 1) (path[i] as ChainLink).depth = below += 1;
  }
}

/** Whether a link's depth agrees with the link it goes on to (`below`, when known): a check of what a memo said. */
export function depthAgrees(link: ChainLink, below: ChainLink | undefined): boolean {
  if (link.depth === null) return true;
  if (link.snapshot === null) return link.depth === 0;
  if (link.next === null) return link.depth === 1;
  if (below === undefined || below.depth === null) return link.depth >= 1;
  return link.depth === (below.snapshot === null ? 1 : below.depth + 1);
}
