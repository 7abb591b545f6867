import { Type } from 'typebox';
import type { Static } from 'typebox';
import { LiteralUnion, Nullable, ObjectId } from './common.js';
import { UNSAVED_REASONS } from './ids.js';

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
export interface ChangeCounts {
  /**
   * The commit compared with: the snapshot's first parent, which is the snapshot before it on the
   * chain or, for the first of a chain, the commit it was taken on.
   */
  against: string;
  /** How many paths differ (added, removed, changed or of another type). */
  files: number;
  /** Lines added, over the text files (binary files count in files only). */
  added: number;
  /** Lines removed, over the text files. */
  removed: number;
}

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
 * A path a restore leaves as it is though the snapshot holds it otherwise.
 * @public
 */
export const LeftAsIs = Type.Object(
  {
    path: Type.String({ description: "From the repository root, written as in a restore's paths." }),
    reason: Type.String({ description: 'Why it is left as it is, for people: its path from the root of the file system is longer than the system takes, so no restore can write or remove it.' }),
  },
  { description: 'A path a restore leaves as it is though the snapshot holds it otherwise: the rest of the tree is restored, this path is not.' },
);
/**
 * A path a restore leaves as it is: `{path, reason}`.
 * @public
 */
export interface LeftAsIs {
  /** From the repository root, written as in a restore's paths. */
  path: string;
  /**
   * Why it is left as it is, for people: its path from the root of the file system is longer than
   * the system takes, so no restore can write or remove it.
   */
  reason: string;
}

/**
 * Why a path is not in a snapshot, as this version of chant-wip writes it.
 * @public
 */
export const UnsavedReason = LiteralUnion(UNSAVED_REASONS, {
  description:
    'submodule or embedded-repository: a gitlink, kept as the commit it is at (nothing, for a repository with no commit yet); its files, committed or not, are not in the snapshot. unreadable: the file could not be opened or read. vanished: it was deleted while the save read it. not-a-file: a FIFO, socket or device where git tracks a file. too-large: a new untracked file over the size limit (--max-file-size). invalid-path: a path git, or a remote that checks what it receives, refuses to hold, since other systems read a name in it as .git (.GIT, git~1, .git:x) or it is a symlink named .gitmodules or is under a folder named .gitmodules or .gitattributes. For unreadable, vanished, not-a-file and invalid-path the snapshot holds what the index held at that path, or nothing for an untracked file; for a path a remote refuses that the index holds, what HEAD holds there, or nothing (where HEAD holds it under a name refused already, it is saved).',
});
/**
 * Why a path is not in a snapshot, as a TypeScript type.
 * @public
 */
export type UnsavedReason = Static<typeof UnsavedReason>;

/**
 * One path a snapshot does not hold, as its commit records it.
 * @public
 */
export const UnsavedEntry = Type.Object({
  path: Type.String({ description: 'From the repository root.' }),
  reason: Type.String({ description: `Why: ${UNSAVED_REASONS.join(', ')} (see the save document's unsaved). A reader treats a reason it does not know as left out all the same.` }),
  size: Type.Optional(Type.Integer({ minimum: 0, description: "For too-large: the file's size in bytes." })),
});
/**
 * One path a snapshot does not hold, as a TypeScript type.
 * @public
 */
export interface UnsavedEntry {
  /** From the repository root. */
  path: string;
  /**
   * Why: submodule, embedded-repository, unreadable, vanished, not-a-file, too-large, invalid-path
   * (see the save document's unsaved). A reader treats a reason it does not know as left out all
   * the same.
   */
  reason: string;
  /** For too-large: the file's size in bytes. */
  size?: number;
}

/**
 * What a snapshot does not hold, as its commit records it (trailer `Chant-Wip-Unsaved`).
 * @public
 */
export const Unsaved = Type.Object({
  count: Type.Integer({ minimum: 1, description: 'How many paths it left out.' }),
  paths: Type.Array(UnsavedEntry, { description: 'The first of them by path, at most 100: a commit names no more, count says how many there were.' }),
}, {
  description: 'What the snapshot does not hold, recorded in its commit (trailer Chant-Wip-Unsaved, JSON), so the read and a box that fetched it know. Absent when it holds every path of the working tree but ignored files, and on snapshots of versions that did not record it.',
});
/**
 * What a snapshot does not hold, as a TypeScript type.
 * @public
 */
export interface Unsaved {
  /** How many paths it left out. */
  count: number;
  /**
   * The first of them by path, at most 100: a commit names no more, count says how many there were.
   */
  paths: UnsavedEntry[];
}

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
    unsaved: Type.Optional(Unsaved),
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
export interface Snapshot {
  /** The snapshot commit. wip restore \<commit\> puts the working tree back as it holds it. */
  commit: string;
  /**
   * The tree of the working tree as it was. Two snapshots with the same tree hold the same files.
   */
  tree: string;
  /** The branch it was taken on (trailer Chant-Wip-Branch). */
  branch: string;
  /** The commit HEAD named when it was taken (Chant-Wip-Head). */
  head: string;
  /**
   * save for wip save; pre-restore for the snapshot wip restore takes of the working tree before it
   * changes it, so a restore can be undone (Chant-Wip-Kind).
   */
  kind: SnapshotKind;
  /**
   * What the caller called it with --label, such as a turn id, or null (Chant-Wip-Label). A
   * pre-restore snapshot is labelled before \<the restored snapshot's first 12 characters\>.
   */
  label: string | null;
  /** Who took it, as --by named them, or null (Chant-Wip-By). */
  by: string | null;
  /**
   * What the snapshot does not hold, recorded in its commit (trailer Chant-Wip-Unsaved, JSON), so
   * the read and a box that fetched it know. Absent when it holds every path of the working tree
   * but ignored files, and on snapshots of versions that did not record it.
   */
  unsaved?: Unsaved;
  /** When it was taken: the commit's committer time, ISO 8601 UTC with milliseconds. */
  at: string;
  /**
   * What a snapshot changed against the commit before it, as git diff --numstat counts it (renames
   * not followed).
   */
  changes?: ChangeCounts;
}
