import { Type } from 'typebox';
import type { Static, TSchema, TUnion } from 'typebox';
import { header, LiteralUnion, Nullable, ObjectId, successDocuments, WIP_CHANGES_ID } from './common.js';
import type { VerbEntry } from './common.js';
import { CHANGES_ACTIONS } from './ids.js';
import { ChangeCounts, Snapshot } from './snapshot.js';

/**
 * How one path differs between two trees.
 * @public
 */
export const ChangeKind = Type.Union([Type.Literal('added'), Type.Literal('removed'), Type.Literal('modified'), Type.Literal('type-changed')], {
  description: 'added and removed: the path is on one side only; modified: its content or mode changed; type-changed: a file became a symlink or a submodule, or back.',
});
/**
 * How one path differs: `added`, `removed`, `modified` or `type-changed`.
 * @public
 */
export type ChangeKind = Static<typeof ChangeKind>;

/**
 * One path that differs between the two sides of a diff.
 * @public
 */
export const PathChange = Type.Object(
  {
    path: Type.String({ description: 'From the repository root.' }),
    change: ChangeKind,
    oldMode: Nullable(Type.String({ pattern: '^[0-7]{6}$' }), 'Its mode on the from side (100644, 100755, 120000 for a symlink, 160000 for a submodule), or null when it is added.'),
    newMode: Nullable(Type.String({ pattern: '^[0-7]{6}$' }), 'Its mode on the to side, or null when it is removed.'),
    oldId: Nullable(ObjectId, 'The object it names on the from side, or null when it is added.'),
    newId: Nullable(ObjectId, 'The object it names on the to side, or null when it is removed.'),
    added: Nullable(Type.Integer({ minimum: 0 }), 'Lines added, or null for a binary file.'),
    removed: Nullable(Type.Integer({ minimum: 0 }), 'Lines removed, or null for a binary file.'),
  },
  { description: 'One path that differs between the two sides.' },
);
/**
 * One path that differs between the two sides of a diff, with its modes, ids and line counts.
 * @public
 */
export type PathChange = Static<typeof PathChange>;

/**
 * One side of a diff.
 * @public
 */
export const DiffSide = Type.Object(
  {
    commit: Nullable(ObjectId, 'The commit, or null for the working tree.'),
    tree: Type.String({ ...ObjectId, description: 'The tree compared: the commit\'s, or the working tree\'s as a save would record it (ignored files left out).' }),
    snapshot: Nullable(Snapshot, 'The snapshot the commit is, or null when it is not one (HEAD, a branch commit) or the side is the working tree.'),
  },
  { description: 'One side of a diff: a snapshot, another commit, or the working tree.' },
);
/**
 * One side of a diff: a snapshot, another commit such as HEAD, or the working tree.
 * @public
 */
export type DiffSide = Static<typeof DiffSide>;

/**
 * What `WipStore.diff` returns.
 * @public
 */
export const DiffResult = Type.Object({
  from: DiffSide,
  to: DiffSide,
  files: Type.Integer({ minimum: 0, description: 'How many paths differ.' }),
  added: Type.Integer({ minimum: 0, description: 'Lines added, over the text files.' }),
  removed: Type.Integer({ minimum: 0, description: 'Lines removed, over the text files.' }),
  paths: Type.Array(PathChange, { description: 'Every path that differs, sorted by path (bytewise), renames not followed.' }),
});
/**
 * What `WipStore.diff` returns: both sides, the totals and every path that differs.
 * @public
 */
export type DiffResult = Static<typeof DiffResult>;

/**
 * One file a snapshot holds.
 * @public
 */
export const SnapshotFile = Type.Object(
  {
    path: Type.String({ description: 'From the repository root.' }),
    mode: Type.String({ pattern: '^[0-7]{6}$', description: '100644, 100755, 120000 for a symlink, 160000 for a submodule.' }),
    id: Type.String({ ...ObjectId, description: 'The blob (or, for a submodule, the commit) it names.' }),
  },
  { description: 'One file a snapshot holds.' },
);
/**
 * One file a snapshot holds: `{path, mode, id}`.
 * @public
 */
export type SnapshotFile = Static<typeof SnapshotFile>;

/**
 * What `WipStore.show` returns.
 * @public
 */
export const ShowResult = Type.Object({
  snapshot: Snapshot,
  changes: Nullable(ChangeCounts, 'What it changed against the commit before it, or null when git cannot compare them (that commit is missing, as in a shallow clone).'),
  files: Type.Array(SnapshotFile, { description: 'Every file it holds, sorted by path (bytewise).' }),
});
/**
 * What `WipStore.show` returns: the snapshot, what it changed and every file it holds.
 * @public
 */
export type ShowResult = Static<typeof ShowResult>;

/** The codes show and diff can refuse with. */
export const ChangesErrorCode = Type.Union([
  Type.Literal('not-a-git-repository'),
  Type.Literal('write-usage-invalid'),
  Type.Literal('wip-snapshot-unknown'),
  Type.Literal('git-failed'),
  Type.Literal('wip-cancelled'),
]);

/**
 * The verbs of the changes documents.
 * @public
 */
export const ChangesAction = LiteralUnion(CHANGES_ACTIONS);
/**
 * `show` or `diff`, as a TypeScript type.
 * @public
 */
export type ChangesAction = Static<typeof ChangesAction>;

/**
 * Each changes verb's result and what its document says on success: one entry per verb of
 * `CHANGES_ACTIONS`, as `WRITE_VERBS` is for the writes.
 * @public
 */
export const CHANGES_VERBS = {
  show: { result: ShowResult, description: 'One snapshot with its files. Exit code 0.' },
  diff: { result: DiffResult, description: 'What differs between two snapshots, a snapshot and another commit, or a snapshot and the working tree. Exit code 0.' },
} as const satisfies { readonly [A in ChangesAction]: VerbEntry };

/**
 * Each changes verb's success document, by verb.
 * @public
 */
export const CHANGES_DOCUMENTS = successDocuments(WIP_CHANGES_ID, CHANGES_ACTIONS, CHANGES_VERBS);

/**
 * The document `chant workspace wip show <snapshot>` prints on success.
 * @public
 */
export const ShowDocument = CHANGES_DOCUMENTS.show;
/**
 * The show document, as a TypeScript type.
 * @public
 */
export type ShowDocument = Static<typeof ShowDocument>;

/**
 * The document `chant workspace wip diff <a> [<b>]` prints on success.
 * @public
 */
export const DiffDocument = CHANGES_DOCUMENTS.diff;
/**
 * The diff document, as a TypeScript type.
 * @public
 */
export type DiffDocument = Static<typeof DiffDocument>;

/**
 * A refused show or diff. Exit code 1.
 * @public
 */
export const ChangesFailure = Type.Object(
  {
    ...header(WIP_CHANGES_ID),
    action: Nullable(ChangesAction, 'The verb refused, or null when there was none.'),
    error: Type.Object({ code: ChangesErrorCode, message: Type.String() }),
  },
  { description: 'Nothing was read. Exit code 1.' },
);
/**
 * A refused show or diff, as a TypeScript type.
 * @public
 */
export type ChangesFailure = Static<typeof ChangesFailure>;

/**
 * What `chant workspace wip show|diff` prints.
 * @public
 */
export const WipChangesDocument: TUnion<TSchema[]> = Type.Union([...CHANGES_ACTIONS.map((action) => CHANGES_DOCUMENTS[action]), ChangesFailure]);
/**
 * Any document `chant workspace wip show|diff` prints, as a TypeScript type.
 * @public
 */
export type WipChangesDocument = { [A in ChangesAction]: Static<(typeof CHANGES_DOCUMENTS)[A]> }[ChangesAction] | ChangesFailure;
