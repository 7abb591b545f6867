import type { WipError } from '../errors.js';
import { VERSION } from '../version.js';
import { CONTRACT, WIP_CHANGES_ID, WIP_READ_ID, WIP_STORAGE_ID, WIP_WRITE_ID } from './ids.js';
import type { PruneDocument, PruneResult, StorageDocument, StorageFailure, StorageResult } from './storage.js';
import type { ChangesFailure, DiffDocument, DiffResult, ShowDocument, ShowResult } from './changes.js';
import type { WipReadFailure, WipReadSuccess, ListResult } from './wip-read.js';
import type {
  FetchDocument, FetchResult, PushDocument, PushOutcome, RestoreDocument, RestoreResult, SaveDocument, SaveResult, WriteAction, WriteFailure,
} from './wip-write.js';

function head<I extends string>(id: I) {
  return { $schema: id, contract: CONTRACT as 1, chant: VERSION };
}

/**
 * The read document of a {@link WipStore.list} result.
 * @param result - what list returned
 * @returns the document, `$schema` first
 * @public
 */
export function readDocument(result: ListResult): WipReadSuccess {
  return { ...head(WIP_READ_ID), checkout: result.checkout, branches: result.branches, replication: result.replication };
}

/**
 * The read document of a refusal.
 * @param error - the refusal
 * @returns the failure document
 * @public
 */
export function readFailureDocument(error: WipError): WipReadFailure {
  return { ...head(WIP_READ_ID), error: { code: error.code as WipReadFailure['error']['code'], message: error.message } };
}

/**
 * A write verb's result, by verb.
 * @public
 */
export interface WriteResults {
  /** What {@link WipStore.save} returns. */
  save: SaveResult;
  /** What {@link WipStore.restore} returns. */
  restore: RestoreResult;
  /** What {@link Replicator.push} returns. */
  push: PushOutcome;
  /** What {@link Replicator.fetch} returns. */
  fetch: FetchResult;
}

/**
 * A write verb's document, by verb.
 * @public
 */
export interface WriteDocuments {
  /** What `chant workspace wip save` prints on success. */
  save: SaveDocument;
  /** What `chant workspace wip restore` prints on success. */
  restore: RestoreDocument;
  /** What `chant workspace wip push` prints on success. */
  push: PushDocument;
  /** What `chant workspace wip fetch` prints on success. */
  fetch: FetchDocument;
}

/**
 * The write document of a verb's result.
 * @param action - the verb
 * @param result - what the SDK method returned
 * @returns the document, `$schema` first
 * @public
 */
export function writeDocument<A extends WriteAction>(action: A, result: WriteResults[A]): WriteDocuments[A] {
  return { ...head(WIP_WRITE_ID), action, ...result } as unknown as WriteDocuments[A];
}

/**
 * The write document of a refusal.
 * @param action - the verb refused, or null when there was none
 * @param error - the refusal
 * @returns the failure document
 * @public
 */
export function writeFailureDocument(action: WriteAction | null, error: WipError): WriteFailure {
  const body: WriteFailure['error'] = { code: error.code, message: error.message };
  if (error.paths.length > 0) body.paths = [...error.paths];
  return { ...head(WIP_WRITE_ID), action, error: body };
}

/**
 * The document of a {@link WipStore.storage} result.
 * @param result - what storage returned
 * @returns the document, `$schema` first
 * @public
 */
export function storageDocument(result: StorageResult): StorageDocument {
  return { ...head(WIP_STORAGE_ID), action: 'storage', ...result };
}

/**
 * The document of a {@link WipStore.prune} result.
 * @param result - what prune returned
 * @returns the document, `$schema` first
 * @public
 */
export function pruneDocument(result: PruneResult): PruneDocument {
  return { ...head(WIP_STORAGE_ID), action: 'prune', ...result };
}

/**
 * The storage document of a refusal.
 * @param action - the verb refused, or null
 * @param error - the refusal
 * @returns the failure document
 * @public
 */
export function storageFailureDocument(action: 'storage' | 'prune' | null, error: WipError): StorageFailure {
  return { ...head(WIP_STORAGE_ID), action, error: { code: error.code as StorageFailure['error']['code'], message: error.message } };
}

/**
 * The document `chant workspace wip show` prints for a {@link WipStore.show} result.
 * @param result - what show returned
 * @returns the document, `$schema` first
 * @public
 */
export function showDocument(result: ShowResult): ShowDocument {
  return { ...head(WIP_CHANGES_ID), action: 'show', ...result };
}

/**
 * The document `chant workspace wip diff` prints for a {@link WipStore.diff} result.
 * @param result - what diff returned
 * @returns the document, `$schema` first
 * @public
 */
export function diffDocument(result: DiffResult): DiffDocument {
  return { ...head(WIP_CHANGES_ID), action: 'diff', ...result };
}

/**
 * The document of a refused show or diff.
 * @param action - the verb refused, or null
 * @param error - the refusal
 * @returns the failure document
 * @public
 */
export function changesFailureDocument(action: 'show' | 'diff' | null, error: WipError): ChangesFailure {
  return { ...head(WIP_CHANGES_ID), action, error: { code: error.code as ChangesFailure['error']['code'], message: error.message } };
}
