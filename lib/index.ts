/**
 * chant-wip: snapshots of a git checkout's work in progress under `refs/chant/wip/<branch>`,
 * restored exactly and replicated to a git remote.
 * @packageDocumentation
 */
export { WipStore } from './store/wip-store.js';
export type { WipStoreOptions, ListOptions, StagingMode, WipStoreEvents, RefsChanged, RefWatcher, WatchRefsOptions } from './store/wip-store.js';
export type { Progress, ProgressListener } from './events.js';
export { WipError, WIP_ERROR_CODES, isWipError, redactCredentials, asWipError } from './errors.js';
export type { WipErrorCode, WipErrorOptions } from './errors.js';
export { GitProcessRunner, SimpleGitRunner, GitCommandError } from './git/runner.js';
export type { GitRunner, GitRunOptions, GitOutput, GitStopReason } from './git/runner.js';
export { wipRef } from './snapshot/format.js';
export type { SnapshotNotes } from './snapshot/format.js';
export { Replicator } from './replication/replicator.js';
export type { ReplicatorOptions, ReplicatorOpenOptions, PushOptions, AfterOptions, ReplicatorCallOptions, ReplicatorEvents } from './replication/replicator.js';
export { Policy } from './replication/policy.js';
export type { PolicyLoadOptions, PolicyFromOptions } from './replication/policy.js';
export { checkPrincipal, isForgeIdentity, normalizePrincipal, FORGES, IDENTIFIED_ROLES } from './workspace/identity.js';
export type { CheckPrincipalOptions } from './workspace/identity.js';
export { checkText } from './text.js';
export { VERSION, CONTRACT_VERSION } from './version.js';
export { WIP_READ_ID, WIP_WRITE_ID, WIP_STORAGE_ID, WIP_CHANGES_ID, REPLICATE_DECLARATION_ID, WORKSPACE_DECLARATION_ID, CONTRACT, WRITE_ACTIONS, STORAGE_ACTIONS, CHANGES_ACTIONS, VERB_DOCUMENTS, isVerb } from './documents/ids.js';
export type { Verb } from './documents/ids.js';
// The verb tables, named so that the result and document maps made from them can be read; their
// TypeBox values are in chant-wip/documents.
export type { WRITE_VERBS, WRITE_DOCUMENTS } from './documents/wip-write.js';
export type { STORAGE_VERBS, STORAGE_DOCUMENTS } from './documents/storage.js';
export type { CHANGES_VERBS, CHANGES_DOCUMENTS } from './documents/changes.js';
export type { VerbEntry, SuccessDocuments, SuccessDocument } from './documents/common.js';
export {
  readDocument, readFailureDocument, writeDocument, writeFailureDocument, storageDocument, pruneDocument, storageFailureDocument, showDocument, diffDocument, changesFailureDocument,
} from './documents/document.js';
export type { WriteResults, WriteDocuments, VerbFailure } from './documents/document.js';
// The documents' shapes, as types only: their TypeBox values, the schemas and the validator are
// chant-wip/documents, so that a caller that saves a snapshot loads neither TypeBox nor Ajv.
export type { Snapshot, SnapshotKind, ChangeCounts, Unsaved, UnsavedEntry, UnsavedReason, LeftAsIs } from './documents/snapshot.js';
export { DEFAULT_MAX_FILE_SIZE, parseSize } from './snapshot/left-out.js';
export { DEFAULT_SAVE_TIMEOUT_MS, parseDuration } from './deadline.js';
export { UNSAVED_REASONS, FLAGGED_REASONS } from './documents/ids.js';
export type { WipSettings } from './workspace/wip-settings.js';
export type { BranchStorage, RetentionRules, BranchPrune, StorageFailure, WipStorageDocument, StorageAction } from './documents/storage.js';
export type { ChangeKind, PathChange, DiffSide, SnapshotFile, RefusedPath, ChangesFailure, WipChangesDocument, ChangesAction } from './documents/changes.js';
export type { Checkout, BranchSnapshots, InterruptedRestore, ListResult, WipReadSuccess, WipReadFailure, WipReadDocument } from './documents/wip-read.js';
export type { Checkpoint, WriteAction, WriteFailure, WipWriteDocument } from './documents/wip-write.js';
export type {
  RefClass, Trigger, PolicyDocument, RefState, ReplicationState, RefPush, PushResult, FetchOutcome, FetchRef, FetchRefFailure,
  SecretFinding, HeldBack, ReplicateDeclaration,
} from './documents/replication.js';
export type { RetainDeclaration } from './documents/retain.js';
// generated exports: begin (npm run verbs: each verb's options, result and document types)
export type { DiffDocument, DiffResult, PlanDocument, RestorePlan, ShowDocument, ShowResult } from './documents/changes.js';
export type { PruneDocument, PruneResult, StorageDocument, StorageResult } from './documents/storage.js';
export type { FetchDocument, FetchResult, PushDocument, PushOutcome, RestoreDocument, RestoreResult, SaveDocument, SaveResult } from './documents/wip-write.js';
export type { DiffOptions, ShowOptions } from './store/changes.js';
export type { PruneOptions } from './store/prune.js';
export type { PlanOptions, RestoreOptions } from './store/restore.js';
export type { SaveOptions } from './store/save.js';
export type { StorageOptions } from './store/storage.js';
// generated exports: end
