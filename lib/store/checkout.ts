// The checkout as a write finds it: the branch HEAD is on, its commit, and the tip of its wip
// ref; and the snapshot a restore puts back.
import type { Snapshot } from '../documents/snapshot.js';
import { WipError } from '../errors.js';
import type { Plumbing, RefRecord, RepositoryLayout } from '../git/plumbing.js';
import { readSnapshot, wipRef } from '../snapshot/format.js';

/** The checked-out branch as a write works on it. */
export interface BranchCheckout {
  layout: RepositoryLayout;
  branch: string;
  head: string;
  ref: string;
  tip: RefRecord | null;
}

/** What {@link Plumbing.checkout} read, as far as a write needs it. */
type Opened = { layout: RepositoryLayout; headRef: string | null; head: string | null };

/** The checked-out branch, its commit and its wip tip; `wip-no-branch` for a detached HEAD or an unborn branch. */
export async function checkoutOf(plumbing: Plumbing, opened: Opened): Promise<BranchCheckout> {
  const checkout = branchOf(opened);
  checkout.tip = await readTip(plumbing, checkout.ref);
  return checkout;
}

/** The tip of a wip ref, read in full, or null when the ref does not exist. */
export async function readTip(plumbing: Plumbing, ref: string): Promise<RefRecord | null> {
  return (await plumbing.readRefs([ref])).find((record) => record.ref === ref) ?? null;
}

/** The checked-out branch and its commit, its wip tip not read yet; `wip-no-branch` as {@link checkoutOf}. */
export function branchOf(opened: Opened): BranchCheckout {
  const { layout, headRef, head } = opened;
  if (headRef === null || !headRef.startsWith('refs/heads/')) {
    throw new WipError('wip-no-branch', 'HEAD is detached: check out a branch first, since snapshots are kept per branch');
  }
  const branch = headRef.slice('refs/heads/'.length);
  const ref = wipRef(branch);
  if (head === null) {
    throw new WipError('wip-no-branch', `branch ${branch} has no commit yet: commit once first, since a snapshot's last parent is the commit HEAD names`);
  }
  return { layout, branch, head, ref, tip: null };
}

/** The snapshot a restore puts back. */
export async function restoreTarget(plumbing: Plumbing, checkout: BranchCheckout, name: string | null): Promise<Snapshot> {
  if (name === null) {
    const snapshot = checkout.tip === null ? null : readSnapshot(checkout.tip);
    if (snapshot === null) throw new WipError('wip-none', `branch ${checkout.branch} has no snapshot: ${checkout.ref} does not exist`);
    return sameBranch(checkout, snapshot);
  }
  const commit = await plumbing.readNamedCommit(name);
  const oid = commit?.commit ?? null;
  const snapshot = commit === null ? null : readSnapshot(commit);
  if (snapshot === null) {
    throw new WipError('wip-snapshot-unknown', oid === null
      ? `${JSON.stringify(name)} names no commit`
      : `${JSON.stringify(name)} names commit ${oid}, which is not a snapshot chant took (it has no Chant-Wip-Branch and Chant-Wip-Head trailers)`);
  }
  return sameBranch(checkout, snapshot);
}

function sameBranch(checkout: BranchCheckout, snapshot: Snapshot): Snapshot {
  if (snapshot.branch !== checkout.branch) {
    throw new WipError('wip-branch-other', `snapshot ${snapshot.commit} was taken on branch ${snapshot.branch}, not on ${checkout.branch}: check that branch out to restore it`);
  }
  return snapshot;
}
