import { Type } from 'typebox';
import type { Static, TSchema, TUnion } from 'typebox';
import { header, LiteralUnion, Nullable, ObjectId, successDocuments, WIP_STORAGE_ID, WriteErrorCode } from './common.js';
import type { VerbEntry } from './common.js';
import { STORAGE_ACTIONS } from './ids.js';
import { KEEP_WITHIN_PATTERN } from './replicate-rules.js';
import { PushResult } from './replication.js';

/**
 * What one chain of snapshots costs.
 * @public
 */
export const BranchStorage = Type.Object({
  branch: Type.String({ description: 'The branch the chain is of, by name.' }),
  ref: Type.String({ description: 'refs/chant/wip/<branch>.' }),
  tip: Type.String({ ...ObjectId, description: "The ref's tip, its newest snapshot." }),
  snapshots: Type.Integer({ minimum: 0, description: "How many snapshots the ref's first-parent chain holds." }),
  oldest: Nullable(Type.String({ format: 'date-time' }), 'When the oldest snapshot was taken (its at), or null for a chain with none.'),
  newest: Nullable(Type.String({ format: 'date-time' }), 'When the newest snapshot was taken, or null for a chain with none.'),
  bytes: Type.Integer({ minimum: 0, description: 'What the objects the chain reaches take on disk, as stored, leaving out every object a branch, tag, remote-tracking ref or HEAD reaches: about what deleting the chain frees once reflogs expire and gc runs.' }),
});
/**
 * What one chain costs, as a TypeScript type.
 * @public
 */
export interface BranchStorage {
  /** The branch the chain is of, by name. */
  branch: string;
  /** refs/chant/wip/\<branch\>. */
  ref: string;
  /** The ref's tip, its newest snapshot. */
  tip: string;
  /** How many snapshots the ref's first-parent chain holds. */
  snapshots: number;
  /** When the oldest snapshot was taken (its at), or null for a chain with none. */
  oldest: string | null;
  /** When the newest snapshot was taken, or null for a chain with none. */
  newest: string | null;
  /**
   * What the objects the chain reaches take on disk, as stored, leaving out every object a branch,
   * tag, remote-tracking ref or HEAD reaches: about what deleting the chain frees once reflogs
   * expire and gc runs.
   */
  bytes: number;
}

/**
 * What `WipStore.storage` (chant-wip) returns.
 * @public
 */
export const StorageResult = Type.Object({
  branches: Type.Array(BranchStorage, { description: 'One entry per ref under refs/chant/wip/, sorted by branch.' }),
  total: Type.Object({
    snapshots: Type.Integer({ minimum: 0, description: 'How many snapshots the chains listed hold together.' }),
    bytes: Type.Integer({ minimum: 0, description: 'What every chain listed takes together, each object counted once: two chains sharing a file count it once here, so the branches may add up to more.' }),
  }, { description: 'Every chain listed, together.' }),
});
/**
 * What `WipStore.storage` (chant-wip) returns, as a TypeScript type.
 * @public
 */
export interface StorageResult {
  /** One entry per ref under refs/chant/wip/, sorted by branch. */
  branches: BranchStorage[];
  /** Every chain listed, together. */
  total: {
    /** How many snapshots the chains listed hold together. */
    snapshots: number;
    /**
     * What every chain listed takes together, each object counted once: two chains sharing a file
     * count it once here, so the branches may add up to more.
     */
    bytes: number;
  };
}

/**
 * The retention rules a prune applies: a snapshot stays when any rule keeps it, and the newest
 * always stays.
 * @public
 */
export const RetentionRules = Type.Object({
  keepLast: Nullable(Type.Integer({ minimum: 1 }), 'Keep the newest n snapshots.'),
  keepWithin: Nullable(Type.String({ pattern: KEEP_WITHIN_PATTERN }), 'Keep every snapshot taken within this age of now: a number and s, m, h, d or w (7d).'),
  keepLabelled: Type.Boolean({ description: 'Keep every snapshot with a label.' }),
}, { description: 'The retention rules applied: a snapshot stays when any rule keeps it; the newest, and the checkpoint of the last restore, always stay.' });
/**
 * The retention rules, as a TypeScript type.
 * @public
 */
export interface RetentionRules {
  /** Keep the newest n snapshots. */
  keepLast: number | null;
  /** Keep every snapshot taken within this age of now: a number and s, m, h, d or w (7d). */
  keepWithin: string | null;
  /** Keep every snapshot with a label. */
  keepLabelled: boolean;
}

/**
 * What a prune did, or would do, to one chain.
 * @public
 */
export const BranchPrune = Type.Object({
  branch: Type.String({ description: 'The branch the chain is of, by name.' }),
  ref: Type.String({ description: 'refs/chant/wip/<branch>.' }),
  tip: Type.String({ ...ObjectId, description: "The ref's tip before the prune." }),
  next: Nullable(ObjectId, 'The rewritten chain\'s tip; the same as tip when nothing was dropped, null for a dry run that would rewrite.'),
  kept: Type.Integer({ minimum: 0, description: 'How many snapshots the chain holds after the prune (or would, for a dry run).' }),
  dropped: Type.Array(ObjectId, { description: 'The snapshots dropped (or that a dry run would drop), newest first.' }),
});
/**
 * What a prune did to one chain, as a TypeScript type.
 * @public
 */
export interface BranchPrune {
  /** The branch the chain is of, by name. */
  branch: string;
  /** refs/chant/wip/\<branch\>. */
  ref: string;
  /** The ref's tip before the prune. */
  tip: string;
  /**
   * The rewritten chain's tip; the same as tip when nothing was dropped, null for a dry run that
   * would rewrite.
   */
  next: string | null;
  /** How many snapshots the chain holds after the prune (or would, for a dry run). */
  kept: number;
  /** The snapshots dropped (or that a dry run would drop), newest first. */
  dropped: string[];
}

/**
 * What `WipStore.prune` (chant-wip) returns.
 * @public
 */
export const PruneResult = Type.Object({
  dryRun: Type.Boolean({ description: 'True when nothing was written: the branches say what a prune would do.' }),
  rules: RetentionRules,
  branches: Type.Array(BranchPrune, { description: 'Sorted by branch.' }),
  collected: Type.Boolean({ description: 'True when git gc --prune=now ran, so the dropped snapshots\' objects are gone from disk; otherwise git\'s own gc deletes them once they are older than gc.pruneExpire.' }),
  replication: Nullable(PushResult, 'With --push: the wip refs pushed with a lease on the replica chant recorded (rejected with stale info when another box pushed meanwhile); null otherwise.'),
});
/**
 * What `WipStore.prune` (chant-wip) returns, as a TypeScript type.
 * @public
 */
export interface PruneResult {
  /** True when nothing was written: the branches say what a prune would do. */
  dryRun: boolean;
  /**
   * The retention rules applied: a snapshot stays when any rule keeps it; the newest, and the
   * checkpoint of the last restore, always stay.
   */
  rules: RetentionRules;
  /** Sorted by branch. */
  branches: BranchPrune[];
  /**
   * True when git gc --prune=now ran, so the dropped snapshots' objects are gone from disk;
   * otherwise git's own gc deletes them once they are older than gc.pruneExpire.
   */
  collected: boolean;
  /**
   * With --push: the wip refs pushed with a lease on the replica chant recorded (rejected with
   * stale info when another box pushed meanwhile); null otherwise.
   */
  replication: PushResult | null;
}

/**
 * The verbs of the storage documents.
 * @public
 */
export const StorageAction = LiteralUnion(STORAGE_ACTIONS);
/**
 * A storage verb, as a TypeScript type.
 * @public
 */
export type StorageAction = Static<typeof StorageAction>;

/**
 * Each storage verb's result and what its document says on success: a verb is declared by its
 * row here, as `WRITE_VERBS` is for the writes (`npm run verbs` writes `STORAGE_ACTIONS`).
 * @public
 */
export const STORAGE_VERBS = {
  storage: { result: StorageResult, description: 'What the chains of snapshots cost. Exit code 0.' },
  prune: { result: PruneResult, description: 'The chains were rewritten to the snapshots the rules keep (or, for a dry run, what would be). Exit code 0.' },
} as const satisfies { readonly [A in StorageAction]: VerbEntry };

/**
 * Each storage verb's success document, by verb.
 * @public
 */
export const STORAGE_DOCUMENTS = successDocuments(WIP_STORAGE_ID, STORAGE_ACTIONS, STORAGE_VERBS);

/**
 * What `chant workspace wip storage` prints.
 * @public
 */
export const StorageDocument = STORAGE_DOCUMENTS.storage;
/**
 * The storage document, as a TypeScript type.
 * @public
 */
export type StorageDocument = Static<typeof StorageDocument>;

/**
 * What `chant workspace wip prune` prints.
 * @public
 */
export const PruneDocument = STORAGE_DOCUMENTS.prune;
/**
 * The prune document, as a TypeScript type.
 * @public
 */
export type PruneDocument = Static<typeof PruneDocument>;

/**
 * A refused storage verb.
 * @public
 */
export const StorageFailure = Type.Object({
  ...header(WIP_STORAGE_ID),
  action: Nullable(StorageAction, 'The verb refused, or null.'),
  error: Type.Object({ code: WriteErrorCode, message: Type.String() }),
}, { description: 'Nothing was written. Exit code 1.' });
/**
 * A refused storage verb, as a TypeScript type.
 * @public
 */
export type StorageFailure = Static<typeof StorageFailure>;

/**
 * Any document `chant workspace wip storage|prune` prints.
 * @public
 */
export const WipStorageDocument: TUnion<TSchema[]> = Type.Union([...STORAGE_ACTIONS.map((action) => STORAGE_DOCUMENTS[action]), StorageFailure]);
/**
 * Any storage document, as a TypeScript type.
 * @public
 */
export type WipStorageDocument = { [A in StorageAction]: Static<(typeof STORAGE_DOCUMENTS)[A]> }[StorageAction] | StorageFailure;


