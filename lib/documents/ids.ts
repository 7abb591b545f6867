// Kept apart from the TypeBox types so that writing a document never loads TypeBox.

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
 * The write verbs, in the order the write documents list them: the one list the CLI's write
 * commands, the documents' action union and the schema's variants follow.
 * @public
 */
export const WRITE_ACTIONS = ['save', 'restore', 'push', 'fetch'] as const;

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
