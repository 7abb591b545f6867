import type { WipError } from '../errors.js';
import { VERSION } from '../version.js';
import type { Static } from 'typebox';
import { CONTRACT, VERB_DOCUMENTS, WIP_CHANGES_ID, WIP_READ_ID, WIP_STORAGE_ID, WIP_WRITE_ID } from './ids.js';
import type { Verb } from './ids.js';
import type { PruneDocument, PruneResult, STORAGE_DOCUMENTS, STORAGE_VERBS, StorageAction, StorageDocument, StorageFailure, StorageResult } from './storage.js';
import type { CHANGES_DOCUMENTS, CHANGES_VERBS, ChangesAction, ChangesFailure, DiffDocument, DiffResult, ShowDocument, ShowResult } from './changes.js';
import type { WipReadFailure, WipReadSuccess, ListResult } from './wip-read.js';
import type { WRITE_DOCUMENTS, WRITE_VERBS, WriteAction, WriteFailure } from './wip-write.js';

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
  return { ...head(WIP_READ_ID), checkout: result.checkout, branches: result.branches, replication: result.replication, ...(result.interruptedRestore === undefined ? {} : { interruptedRestore: result.interruptedRestore }) };
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
 * A verb's result, by verb: what its SDK method returns (made from `WRITE_VERBS` and `STORAGE_VERBS`).
 * @public
 */
export type WriteResults = { [A in WriteAction]: Static<(typeof WRITE_VERBS)[A]['result']> } & { [A in StorageAction]: Static<(typeof STORAGE_VERBS)[A]['result']> }
  & { [A in ChangesAction]: Static<(typeof CHANGES_VERBS)[A]['result']> };

/**
 * A verb's success document, by verb: what `chant workspace wip <verb>` prints on success.
 * @public
 */
export type WriteDocuments = { [A in WriteAction]: Static<(typeof WRITE_DOCUMENTS)[A]> } & { [A in StorageAction]: Static<(typeof STORAGE_DOCUMENTS)[A]> }
  & { [A in ChangesAction]: Static<(typeof CHANGES_DOCUMENTS)[A]> };

/**
 * The failure document of a verb: the storage document's for a storage verb, the write
 * document's otherwise.
 * @public
 */
export type VerbFailure<A extends Verb | null> = A extends StorageAction ? StorageFailure : A extends ChangesAction ? ChangesFailure : WriteFailure;

/**
 * The document of a verb's result: the write document for save, restore, push and fetch, the
 * storage document for storage and prune, the changes document for show, diff and plan.
 * @param action - the verb
 * @param result - what the SDK method returned
 * @returns the document, `$schema` first
 * @public
 */
export function writeDocument<A extends Verb>(action: A, result: WriteResults[A]): WriteDocuments[A] {
  return { ...head(VERB_DOCUMENTS[action]), action, ...result } as unknown as WriteDocuments[A];
}

/**
 * The document of a verb's refusal: the storage or changes document's for a verb of theirs,
 * the write document's otherwise (and when there was no verb).
 * @param action - the verb refused, or null when there was none
 * @param error - the refusal
 * @returns the failure document
 * @public
 */
export function writeFailureDocument<A extends Verb | null>(action: A, error: WipError): VerbFailure<A> {
  if (action !== null && (VERB_DOCUMENTS[action] === WIP_STORAGE_ID || VERB_DOCUMENTS[action] === WIP_CHANGES_ID)) {
    return { ...head(VERB_DOCUMENTS[action]), action, error: { code: error.code, message: error.message } } as VerbFailure<A>;
  }
  const body: WriteFailure['error'] = { code: error.code, message: error.message };
  if (error.paths.length > 0) body.paths = [...error.paths];
  return { ...head(WIP_WRITE_ID), action, error: body } as VerbFailure<A>;
}

/**
 * The document of a {@link WipStore.storage} result.
 * @param result - what storage returned
 * @returns the document, `$schema` first
 * @public
 */
export function storageDocument(result: StorageResult): StorageDocument {
  return writeDocument('storage', result);
}

/**
 * The document of a {@link WipStore.prune} result.
 * @param result - what prune returned
 * @returns the document, `$schema` first
 * @public
 */
export function pruneDocument(result: PruneResult): PruneDocument {
  return writeDocument('prune', result);
}

/**
 * The storage document of a refusal.
 * @param action - the verb refused, or null
 * @param error - the refusal
 * @returns the failure document
 * @public
 */
export function storageFailureDocument(action: StorageAction | null, error: WipError): StorageFailure {
  return { ...head(WIP_STORAGE_ID), action, error: { code: error.code, message: error.message } };
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
 * The document of a refused show, diff or plan.
 * @param action - the verb refused, or null
 * @param error - the refusal
 * @returns the failure document
 * @public
 */
export function changesFailureDocument(action: ChangesAction | null, error: WipError): ChangesFailure {
  return { ...head(WIP_CHANGES_ID), action, error: { code: error.code as ChangesFailure['error']['code'], message: error.message } };
}
