/**
 * chant-wip/documents: the TypeBox types of every document and fragment chant-wip prints, the
 * JSON Schemas generated from them, and a validator. This entry loads TypeBox, and Ajv on the
 * first validation; the SDK (`chant-wip`) loads neither and exports the same names as types.
 * @packageDocumentation
 */
export { Snapshot, SnapshotKind, ChangeCounts, Unsaved, UnsavedEntry, UnsavedReason, LeftAsIs } from './snapshot.js';
export {
  ChangeKind, PathChange, DiffSide, DiffResult, SnapshotFile, ShowResult, RefusedPath, RestorePlan, ShowDocument, DiffDocument, PlanDocument, ChangesFailure, WipChangesDocument, ChangesAction, CHANGES_VERBS, CHANGES_DOCUMENTS,
} from './changes.js';
export { Checkout, BranchSnapshots, InterruptedRestore, ListResult, WipReadSuccess, WipReadFailure, WipReadDocument } from './wip-read.js';
export {
  SaveResult, Checkpoint, RestoreResult, WriteAction,
  SaveDocument, RestoreDocument, PushDocument, FetchDocument, WriteFailure, WipWriteDocument, WRITE_VERBS, WRITE_DOCUMENTS,
} from './wip-write.js';
export {
  RefClass, Trigger, PolicyDocument, RefState, ReplicationState, RefPush, PushResult, FetchOutcome, FetchRef, FetchRefFailure,
  SecretFinding, HeldBack, PushOutcome, FetchResult, ReplicateDeclaration,
} from './replication.js';
export { RetainDeclaration } from './retain.js';
export { WorkspaceDeclaration } from './workspace-declaration.js';
export { BranchStorage, StorageResult, RetentionRules, BranchPrune, PruneResult, StorageDocument, PruneDocument, StorageFailure, WipStorageDocument, STORAGE_VERBS, STORAGE_DOCUMENTS, StorageAction } from './storage.js';
export type { VerbEntry, SuccessDocuments, SuccessDocument } from './common.js';
export { publishedSchemas } from './schemas.js';
export type { PublishedSchema } from './schemas.js';
export { validateDocument } from './validate.js';
export type { DocumentProblem } from './validate.js';
