/**
 * chant-wip: snapshots of a git checkout's work in progress under `refs/chant/wip/<branch>`,
 * restored exactly and replicated to a git remote.
 * @packageDocumentation
 */
export { WipStore } from './store/wip-store.js';
export type { WipStoreOptions, SaveOptions, RestoreOptions, ListOptions, StagingMode } from './store/wip-store.js';
export { WipError, WIP_ERROR_CODES, isWipError, redactCredentials } from './errors.js';
export type { WipErrorCode, WipErrorOptions } from './errors.js';
export { SimpleGitRunner, GitCommandError } from './git/runner.js';
export type { GitRunner, GitRunOptions, GitOutput } from './git/runner.js';
export { wipRef } from './snapshot/format.js';
export { Replicator } from './replication/replicator.js';
export type { ReplicatorOptions, ReplicatorOpenOptions } from './replication/replicator.js';
export { Policy } from './replication/policy.js';
export type { PolicyLoadOptions, PolicyFromOptions } from './replication/policy.js';
export { checkPrincipal, isForgeIdentity, normalizePrincipal, FORGES, IDENTIFIED_ROLES } from './workspace/identity.js';
export type { CheckPrincipalOptions } from './workspace/identity.js';
export { ReplicateDeclaration, REPLICATE_DECLARATION_ID } from './documents/replicate.js';
export { checkText } from './text.js';
export { VERSION, CONTRACT_VERSION } from './version.js';
export { WIP_READ_ID, WIP_WRITE_ID, CONTRACT } from './documents/ids.js';
export { readDocument, readFailureDocument, writeDocument, writeFailureDocument } from './documents/document.js';
export type { WriteResults, WriteDocuments } from './documents/document.js';
export { publishedSchemas } from './documents/schemas.js';
export type { PublishedSchema } from './documents/schemas.js';
export { validateDocument } from './documents/validate.js';
export type { DocumentProblem } from './documents/validate.js';
export { Snapshot, SnapshotKind } from './documents/snapshot.js';
export { Checkout, BranchSnapshots, ListResult, WipReadSuccess, WipReadFailure, WipReadDocument } from './documents/wip-read.js';
export {
  SaveResult, Checkpoint, RestoreResult, PushOutcome, FetchResult, WriteAction,
  SaveDocument, RestoreDocument, PushDocument, FetchDocument, WriteFailure, WipWriteDocument,
} from './documents/wip-write.js';
export {
  RefClass, Trigger, PolicyDocument, RefState, ReplicationState, RefPush, PushResult, FetchOutcome, FetchRef,
} from './documents/replication.js';
