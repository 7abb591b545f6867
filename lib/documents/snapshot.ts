import { Type } from 'typebox';
import type { Static } from 'typebox';
import { Nullable, ObjectId } from './common.js';

/**
 * How much a snapshot changed against the commit before it.
 * @public
 */
export const ChangeCounts = Type.Object(
  {
    against: Type.String({ ...ObjectId, description: "The commit compared with: the snapshot's first parent, which is the snapshot before it on the chain or, for the first of a chain, the commit it was taken on." }),
    files: Type.Integer({ minimum: 0, description: 'How many paths differ (added, removed, changed or of another type).' }),
    added: Type.Integer({ minimum: 0, description: 'Lines added, over the text files (binary files count in files only).' }),
    removed: Type.Integer({ minimum: 0, description: 'Lines removed, over the text files.' }),
  },
  { description: "What a snapshot changed against the commit before it, as git diff --numstat counts it (renames not followed)." },
);
/**
 * What a snapshot changed against the commit before it: `{against, files, added, removed}`.
 * @public
 */
export type ChangeCounts = Static<typeof ChangeCounts>;

/**
 * What a snapshot was taken for.
 * @public
 */
export const SnapshotKind = Type.Union([Type.Literal('save'), Type.Literal('pre-restore')], {
  description:
    'save for wip save; pre-restore for the snapshot wip restore takes of the working tree before it changes it, so a restore can be undone (Chant-Wip-Kind).',
});
/**
 * What a snapshot was taken for: `save`, or `pre-restore` for the checkpoint a restore takes first.
 * @public
 */
export type SnapshotKind = Static<typeof SnapshotKind>;

/**
 * One snapshot of a branch's working tree.
 * @public
 */
export const Snapshot = Type.Object(
  {
    commit: Type.String({ ...ObjectId, description: 'The snapshot commit. wip restore <commit> puts the working tree back as it holds it.' }),
    tree: Type.String({ ...ObjectId, description: 'The tree of the working tree as it was. Two snapshots with the same tree hold the same files.' }),
    branch: Type.String({ description: 'The branch it was taken on (trailer Chant-Wip-Branch).' }),
    head: Type.String({ ...ObjectId, description: 'The commit HEAD named when it was taken (Chant-Wip-Head).' }),
    kind: SnapshotKind,
    label: Nullable(Type.String(), 'What the caller called it with --label, such as a turn id, or null (Chant-Wip-Label). A pre-restore snapshot is labelled before <the restored snapshot\'s first 12 characters>.'),
    by: Nullable(Type.String(), 'Who took it, as --by named them, or null (Chant-Wip-By).'),
    at: Type.String({ description: "When it was taken: the commit's committer time, ISO 8601 UTC with milliseconds." }),
    changes: Type.Optional(ChangeCounts),
  },
  {
    description:
      "One snapshot of a branch's working tree: a commit whose tree is the whole working tree, staged, unstaged and untracked files alike, ignored files left out. Its first parent is the snapshot before it on the same ref, when there is one, and its last parent is head.",
  },
);
/**
 * One snapshot as the SDK returns it and documents print it: `{commit, tree, branch, head, kind, label, by, at}`.
 * @public
 */
export type Snapshot = Static<typeof Snapshot>;
