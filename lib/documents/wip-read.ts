import { Type } from 'typebox';
import type { Static } from 'typebox';
import { READ_ERROR_CODES } from '../error-codes.js';
import { header, LiteralUnion, NoError, Nullable, ObjectId, WIP_READ_ID } from './common.js';
import { ReplicationState } from './replication.js';
import { Snapshot } from './snapshot.js';

/**
 * The branch and commit the checkout is on.
 * @public
 */
export const Checkout = Type.Object(
  {
    branch: Nullable(Type.String(), 'The checked-out branch, by name; null for a detached HEAD.'),
    head: Nullable(ObjectId, 'The commit HEAD names; null on a branch with no commit yet.'),
  },
  { description: 'The branch and commit the checkout is on; null for a detached HEAD or a branch with no commit.' },
);
/**
 * The branch and commit the checkout is on, each null for a detached HEAD or a branch with no commit.
 * @public
 */
export interface Checkout {
  /** The checked-out branch, by name; null for a detached HEAD. */
  branch: string | null;
  /** The commit HEAD names; null on a branch with no commit yet. */
  head: string | null;
}

/**
 * One branch with snapshots.
 * @public
 */
export const BranchSnapshots = Type.Object({
  branch: Type.String({ description: 'The branch the snapshots were taken on, by name.' }),
  ref: Type.String({ description: 'refs/chant/wip/<branch>, or refs/chant/wip-aside/<tip> for a chain moved aside.' }),
  tip: Type.String({ ...ObjectId, description: "The ref's tip: the newest snapshot of the chain, whatever page this is." }),
  snapshots: Type.Array(Snapshot, { description: "The ref's first-parent chain, newest first: the branch's checkpoint history (one page of it when a limit or before is given)." }),
  older: Type.Optional(Type.Integer({ minimum: 0, description: 'How many older snapshots the chain holds beyond this page; present only when the read was given a limit or before.' })),
  aside: Type.Optional(Type.Literal(true, {
    description: 'Present, and true, for a chain moved aside to refs/chant/wip-aside/<tip> because its name was in the way of another branch\'s (refs/chant/wip/a and refs/chant/wip/a/b cannot both exist): the snapshots of a branch deleted since, kept whole. branch is the branch its snapshots name.',
  })),
  setBackFrom: Type.Optional(Type.String({
    ...ObjectId,
    description: 'Present while the ref was last moved by chant setting it back from this commit, its tip before, which a crash or a power loss left unreadable (its object emptied or cut short): the chain goes on from the newest snapshot its reflog holds whole, and the broken one could not be listed. Gone once the ref moves again.',
  })),
});
/**
 * One branch's snapshots: its wip ref, the ref's tip, and the snapshots newest first.
 * @public
 */
export interface BranchSnapshots {
  /** The branch the snapshots were taken on, by name. */
  branch: string;
  /** refs/chant/wip/\<branch\>, or refs/chant/wip-aside/\<tip\> for a chain moved aside. */
  ref: string;
  /** The ref's tip: the newest snapshot of the chain, whatever page this is. */
  tip: string;
  /**
   * The ref's first-parent chain, newest first: the branch's checkpoint history (one page of it
   * when a limit or before is given).
   */
  snapshots: Snapshot[];
  /**
   * How many older snapshots the chain holds beyond this page; present only when the read was given
   * a limit or before.
   */
  older?: number;
  /**
   * Present, and true, for a chain moved aside to refs/chant/wip-aside/\<tip\> because its name was
   * in the way of another branch's (refs/chant/wip/a and refs/chant/wip/a/b cannot both exist): the
   * snapshots of a branch deleted since, kept whole. branch is the branch its snapshots name.
   */
  aside?: true;
  /**
   * Present while the ref was last moved by chant setting it back from this commit, its tip before,
   * which a crash or a power loss left unreadable (its object emptied or cut short): the chain goes
   * on from the newest snapshot its reflog holds whole, and the broken one could not be listed.
   * Gone once the ref moves again.
   */
  setBackFrom?: string;
}

/**
 * A restore that a kill, a crash or a power loss stopped partway in this worktree.
 * @public
 */
export const InterruptedRestore = Type.Object(
  {
    branch: Type.String({ description: 'The branch whose chain holds the checkpoint.' }),
    snapshot: Type.String({ ...ObjectId, description: 'The snapshot the restore was writing.' }),
    checkpoint: Type.String({ ...ObjectId, description: 'Its pre-restore checkpoint: restoring it gives back the working tree and index as they were before.' }),
  },
  { description: 'Present only when a restore in this worktree was stopped partway (killed, a crash, a power loss) after its checkpoint: the working tree and index may be part the snapshot it restored, part what they were. Restoring checkpoint (the pre-restore snapshot the restore took) gives back what was there before it; restoring snapshot again finishes it. The next restore that ends clears it.' },
);
/**
 * A restore stopped partway in this worktree: the snapshot it restored and the checkpoint that gives back what was there before.
 * @public
 */
export interface InterruptedRestore {
  /** The branch whose chain holds the checkpoint. */
  branch: string;
  /** The snapshot the restore was writing. */
  snapshot: string;
  /**
   * Its pre-restore checkpoint: restoring it gives back the working tree and index as they were
   * before.
   */
  checkpoint: string;
}

/**
 * What `WipStore.list` (chant-wip) returns: the read document without its header.
 * @public
 */
export const ListResult = Type.Object({
  checkout: Checkout,
  branches: Type.Array(BranchSnapshots, { description: "Each branch with snapshots, sorted by branch; only --branch's when it is given." }),
  replication: Nullable(ReplicationState, 'Where replication stands, or null when no box block declares replicate.'),
  interruptedRestore: Type.Optional(InterruptedRestore),
});
/**
 * What `WipStore.list` (chant-wip) returns: the checkout, every branch's snapshots and where replication stands.
 * @public
 */
export interface ListResult {
  /**
   * The branch and commit the checkout is on; null for a detached HEAD or a branch with no commit.
   */
  checkout: Checkout;
  /** Each branch with snapshots, sorted by branch; only --branch's when it is given. */
  branches: BranchSnapshots[];
  /** Where replication stands, or null when no box block declares replicate. */
  replication: ReplicationState | null;
  /**
   * Present only when a restore in this worktree was stopped partway (killed, a crash, a power
   * loss) after its checkpoint: the working tree and index may be part the snapshot it restored,
   * part what they were. Restoring checkpoint (the pre-restore snapshot the restore took) gives
   * back what was there before it; restoring snapshot again finishes it. The next restore that ends
   * clears it.
   */
  interruptedRestore?: InterruptedRestore;
}

/** The codes the read can refuse with. */
export const ReadErrorCode = LiteralUnion(READ_ERROR_CODES);

/**
 * The read document on success. Exit code 0.
 * @public
 */
export const WipReadSuccess = Type.Object(
  { ...header(WIP_READ_ID), error: NoError, ...ListResult.properties },
  { description: 'Exit code 0.' },
);
/**
 * The read document on success: the header (`$schema`, `contract`, `chant`) and the fields of a `ListResult`.
 * @public
 */
export type WipReadSuccess = Static<typeof WipReadSuccess>;

/**
 * The read document on refusal. Exit code 1.
 * @public
 */
export const WipReadFailure = Type.Object(
  {
    ...header(WIP_READ_ID),
    error: Type.Object({ code: ReadErrorCode, message: Type.String() }),
  },
  { description: 'Nothing was read or written. Exit code 1.' },
);
/**
 * The read document on refusal: the header and `error: {code, message}`.
 * @public
 */
export type WipReadFailure = Static<typeof WipReadFailure>;

/**
 * What `chant workspace wip [--branch <branch>] --json` prints.
 * @public
 */
export const WipReadDocument = Type.Union([WipReadSuccess, WipReadFailure]);
/**
 * Any document `chant workspace wip --json` prints: a success or a refusal.
 * @public
 */
export type WipReadDocument = Static<typeof WipReadDocument>;
