// Kept apart from the TypeBox types so that writing a document never loads TypeBox.
import { CHANGES_ACTIONS, STORAGE_ACTIONS, WRITE_ACTIONS } from './verb-lists.js';

// The verb lists are written by npm run verbs from the verb tables beside the result types.
export { CHANGES_ACTIONS, STORAGE_ACTIONS, WRITE_ACTIONS } from './verb-lists.js';

/**
 * The `$id` of the read document.
 * @public
 */
export const WIP_READ_ID = 'https://intentius.io/chant/schemas/workspace/wip/v1/wip.schema.json';

/**
 * The `$id` of the write documents.
 * @public
 */
export const WIP_WRITE_ID = 'https://intentius.io/chant/schemas/workspace/wip-write/v1/wip-write.schema.json';

/**
 * The `$id` of the published schema of a box's `replicate` block.
 * @public
 */
export const REPLICATE_DECLARATION_ID = 'https://intentius.io/chant/schemas/workspace/replicate/v1/replicate.schema.json';

/**
 * The `$id` of the documents of `wip show` and `wip diff`, this project's own.
 * @public
 */
export const WIP_CHANGES_ID = 'https://intentius.io/chant/schemas/workspace/wip-changes/v1/wip-changes.schema.json';

/**
 * The contract version every document carries.
 * @public
 */
export const CONTRACT = 1;

/**
 * The `$id` of the published schema of the whole workspace declaration, as chant-wip reads it.
 * @public
 */
export const WORKSPACE_DECLARATION_ID = 'https://intentius.io/chant/schemas/workspace/declaration/v1/declaration.schema.json';

/**
 * The `$id` of the storage documents: the storage report and prune.
 * @public
 */
export const WIP_STORAGE_ID = 'https://intentius.io/chant/schemas/workspace/wip-storage/v1/wip-storage.schema.json';

/**
 * A verb that prints a document of its own: a write, storage or changes verb.
 * @public
 */
export type Verb = (typeof WRITE_ACTIONS)[number] | (typeof STORAGE_ACTIONS)[number] | (typeof CHANGES_ACTIONS)[number];

/**
 * The `$id` of the document a verb prints, by verb: what the CLI's verbs, their help and their
 * failure documents follow.
 * @public
 */
export const VERB_DOCUMENTS: Readonly<Record<Verb, string>> = Object.freeze(Object.fromEntries([
  ...WRITE_ACTIONS.map((verb) => [verb, WIP_WRITE_ID]),
  ...STORAGE_ACTIONS.map((verb) => [verb, WIP_STORAGE_ID]),
  ...CHANGES_ACTIONS.map((verb) => [verb, WIP_CHANGES_ID]),
]) as Record<Verb, string>);

/**
 * Whether a word is a verb that prints a document of its own.
 * @param word - the word
 * @returns true for a write, storage or changes verb
 * @public
 */
export function isVerb(word: unknown): word is Verb {
  return typeof word === 'string' && Object.hasOwn(VERB_DOCUMENTS, word);
}

/**
 * Why a path of the working tree is not in a snapshot: the one list the save document, the
 * snapshot's `unsaved` and the docs follow. `submodule` and `embedded-repository` are gitlinks,
 * kept as the commit they are at, not their files; `unreadable` could not be opened or read;
 * `vanished` was deleted while the save read it; `not-a-file` is a FIFO, socket or device where
 * git tracks a file; `too-large` is a new untracked file over the size limit; `invalid-path` is a
 * path git refuses to hold (a `.git` folder in another case or form, a symlink named `.gitmodules`).
 * @public
 */
export const UNSAVED_REASONS = ['submodule', 'embedded-repository', 'unreadable', 'vanished', 'not-a-file', 'too-large', 'invalid-path'] as const;

/**
 * The flags a checkout's index can set to make git look past a file's local edit: a save takes
 * the edit all the same, and says so.
 * @public
 */
export const FLAGGED_REASONS = ['assume-unchanged', 'skip-worktree'] as const;
