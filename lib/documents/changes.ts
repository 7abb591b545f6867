import { Type } from 'typebox';
import type { Static, TSchema, TUnion } from 'typebox';
import { CHANGES_ERROR_CODES } from '../error-codes.js';
import { header, LiteralUnion, Nullable, ObjectId, successDocuments, WIP_CHANGES_ID } from './common.js';
import type { VerbEntry } from './common.js';
import { CHANGES_ACTIONS } from './ids.js';
import { ChangeCounts, LeftAsIs, Snapshot } from './snapshot.js';

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
export interface PathChange {
  /** From the repository root. */
  path: string;
  /**
   * added and removed: the path is on one side only; modified: its content or mode changed;
   * type-changed: a file became a symlink or a submodule, or back.
   */
  change: ChangeKind;
  /**
   * Its mode on the from side (100644, 100755, 120000 for a symlink, 160000 for a submodule), or
   * null when it is added.
   */
  oldMode: string | null;
  /** Its mode on the to side, or null when it is removed. */
  newMode: string | null;
  /** The object it names on the from side, or null when it is added. */
  oldId: string | null;
  /** The object it names on the to side, or null when it is removed. */
  newId: string | null;
  /** Lines added, or null for a binary file. */
  added: number | null;
  /** Lines removed, or null for a binary file. */
  removed: number | null;
}

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
export interface DiffSide {
  /** The commit, or null for the working tree. */
  commit: string | null;
  /**
   * The tree compared: the commit's, or the working tree's as a save would record it (ignored files
   * left out).
   */
  tree: string;
  /**
   * The snapshot the commit is, or null when it is not one (HEAD, a branch commit) or the side is
   * the working tree.
   */
  snapshot: Snapshot | null;
}

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
export interface DiffResult {
  /** One side of a diff: a snapshot, another commit, or the working tree. */
  from: DiffSide;
  /** One side of a diff: a snapshot, another commit, or the working tree. */
  to: DiffSide;
  /** How many paths differ. */
  files: number;
  /** Lines added, over the text files. */
  added: number;
  /** Lines removed, over the text files. */
  removed: number;
  /** Every path that differs, sorted by path (bytewise), renames not followed. */
  paths: PathChange[];
}

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
export interface SnapshotFile {
  /** From the repository root. */
  path: string;
  /** 100644, 100755, 120000 for a symlink, 160000 for a submodule. */
  mode: string;
  /** The blob (or, for a submodule, the commit) it names. */
  id: string;
}

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
export interface ShowResult {
  /**
   * One snapshot of a branch's working tree: a commit whose tree is the whole working tree, staged,
   * unstaged and untracked files alike, ignored files left out. Its first parent is the snapshot
   * before it on the same ref, when there is one, and its last parent is head.
   */
  snapshot: Snapshot;
  /**
   * What it changed against the commit before it, or null when git cannot compare them (that commit
   * is missing, as in a shallow clone).
   */
  changes: ChangeCounts | null;
  /** Every file it holds, sorted by path (bytewise). */
  files: SnapshotFile[];
}

/** The codes show and diff can refuse with. */
export const ChangesErrorCode = LiteralUnion(CHANGES_ERROR_CODES);

/**
 * One path on disk a restore could not go through, and why.
 * @public
 */
export const RefusedPath = Type.Object(
  {
    path: Type.String({ description: 'From the repository root, written as in a restore\'s paths.' }),
    reason: Type.String({ description: 'Why the restore cannot delete, overwrite or write it, for people: an ignored file no snapshot holds, a submodule\'s working tree or an embedded repository, a folder it cannot write, the current directory of the caller.' }),
  },
  { description: 'A path on disk a restore would have to delete or overwrite though no snapshot holds it, or cannot write.' },
);
/**
 * One path on disk a restore could not go through, and why: `{path, reason}`.
 * @public
 */
export interface RefusedPath {
  /** From the repository root, written as in a restore's paths. */
  path: string;
  /**
   * Why the restore cannot delete, overwrite or write it, for people: an ignored file no snapshot
   * holds, a submodule's working tree or an embedded repository, a folder it cannot write, the
   * current directory of the caller.
   */
  reason: string;
}

/**
 * What `WipStore.plan` returns.
 * @public
 */
export const RestorePlan = Type.Object({
  branch: Type.String({ description: 'The checked-out branch the restore would work on.' }),
  ref: Type.String({ description: 'refs/chant/wip/<branch>, where the restore would record its checkpoint.' }),
  head: Type.String({ ...ObjectId, description: 'The commit HEAD names; a restore never moves it.' }),
  snapshot: Snapshot,
  headMoved: Type.Boolean({ description: 'True when the snapshot was taken on another commit than HEAD names now: its files would go back over the current HEAD.' }),
  only: Nullable(Type.Array(Type.String()), 'The paths the restore is limited to (a file, or a folder and everything under it), from the repository root; null for the whole tree.'),
  write: Type.Array(Type.String(), { description: "Every path the restore would write (added, changed, or of another type), sorted by their bytes, written as in a restore's paths." }),
  remove: Type.Array(Type.String(), { description: 'Every path the restore would remove, likewise.' }),
  refused: Type.Array(RefusedPath, { description: 'What is in the way: paths on disk the restore would have to delete or overwrite though no snapshot holds them, or cannot write, sorted. Empty when nothing is.' }),
  leftAsIs: Type.Optional(Type.Array(LeftAsIs, { description: 'Paths the snapshot holds otherwise that the restore would leave as they are, as in the restore document. Present only when there are any.' })),
  refusal: Nullable(
    Type.Object({
      code: LiteralUnion(CHANGES_ERROR_CODES, { description: 'Why the restore would be refused: one of a closed list, each described in docs/sdk.md.' }),
      message: Type.String({ description: 'The same, for people, as the restore would say it.' }),
    }, { description: 'A refusal, as a restore would report it.' }),
    'What the restore would be refused with now, before writing anything (wip-restore-blocked when refused lists anything; wip-snapshot-unknown, git-failed for no room or a locked index), or null when it would go through.',
  ),
  fingerprint: Type.String({
    pattern: '^[0-9a-f]{64}$',
    description: 'What the working tree, the index and HEAD were when the plan was made, and what it was made for (the snapshot, the paths). Given to restore as expect, it makes the restore refuse with wip-plan-stale, writing nothing, when any of them changed since, or when the restore is of another snapshot or other paths.',
  }),
});
/**
 * What `WipStore.plan` returns: what a restore would write, remove and refuse, and the fingerprint it was made on.
 * @public
 */
export interface RestorePlan {
  /** The checked-out branch the restore would work on. */
  branch: string;
  /** refs/chant/wip/\<branch\>, where the restore would record its checkpoint. */
  ref: string;
  /** The commit HEAD names; a restore never moves it. */
  head: string;
  /**
   * One snapshot of a branch's working tree: a commit whose tree is the whole working tree, staged,
   * unstaged and untracked files alike, ignored files left out. Its first parent is the snapshot
   * before it on the same ref, when there is one, and its last parent is head.
   */
  snapshot: Snapshot;
  /**
   * True when the snapshot was taken on another commit than HEAD names now: its files would go back
   * over the current HEAD.
   */
  headMoved: boolean;
  /**
   * The paths the restore is limited to (a file, or a folder and everything under it), from the
   * repository root; null for the whole tree.
   */
  only: string[] | null;
  /**
   * Every path the restore would write (added, changed, or of another type), sorted by their bytes,
   * written as in a restore's paths.
   */
  write: string[];
  /** Every path the restore would remove, likewise. */
  remove: string[];
  /**
   * What is in the way: paths on disk the restore would have to delete or overwrite though no
   * snapshot holds them, or cannot write, sorted. Empty when nothing is.
   */
  refused: RefusedPath[];
  /**
   * Paths the snapshot holds otherwise that the restore would leave as they are, as in the restore
   * document. Present only when there are any.
   */
  leftAsIs?: LeftAsIs[];
  /**
   * What the restore would be refused with now, before writing anything (wip-restore-blocked when
   * refused lists anything; wip-snapshot-unknown, git-failed for no room or a locked index), or
   * null when it would go through.
   */
  refusal: {
    /** Why the restore would be refused: one of a closed list, each described in docs/sdk.md. */
    code: 'not-a-git-repository' | 'write-usage-invalid' | 'wip-no-branch' | 'wip-none' | 'wip-snapshot-unknown' | 'wip-branch-other' | 'wip-race' | 'wip-restore-blocked' | 'git-failed' | 'internal-error' | 'wip-cancelled';
    /** The same, for people, as the restore would say it. */
    message: string;
  } | null;
  /**
   * What the working tree, the index and HEAD were when the plan was made, and what it was made for
   * (the snapshot, the paths). Given to restore as expect, it makes the restore refuse with
   * wip-plan-stale, writing nothing, when any of them changed since, or when the restore is of
   * another snapshot or other paths.
   */
  fingerprint: string;
}

/**
 * The verbs of the changes documents.
 * @public
 */
export const ChangesAction = LiteralUnion(CHANGES_ACTIONS);
/**
 * `show`, `diff` or `plan`, as a TypeScript type.
 * @public
 */
export type ChangesAction = Static<typeof ChangesAction>;

/**
 * Each changes verb's result and what its document says on success: a verb is declared by its
 * row here, as `WRITE_VERBS` is for the writes (`npm run verbs` writes `CHANGES_ACTIONS`).
 * @public
 */
export const CHANGES_VERBS = {
  show: { result: ShowResult, description: 'One snapshot with its files. Exit code 0.' },
  diff: { result: DiffResult, description: 'What differs between two snapshots, a snapshot and another commit, or a snapshot and the working tree. Exit code 0.' },
  plan: { result: RestorePlan, description: 'What a restore would write, remove or refuse; nothing was written. Exit code 0, whether or not the restore would be refused (refusal says).' },
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
 * The document `chant workspace wip restore --dry-run` prints on success.
 * @public
 */
export const PlanDocument = CHANGES_DOCUMENTS.plan;
/**
 * The plan document, as a TypeScript type.
 * @public
 */
export type PlanDocument = Static<typeof PlanDocument>;

/**
 * A refused show, diff or plan. Exit code 1.
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
 * A refused show, diff or plan, as a TypeScript type.
 * @public
 */
export type ChangesFailure = Static<typeof ChangesFailure>;

/**
 * What `chant workspace wip show|diff` and `restore --dry-run` print.
 * @public
 */
export const WipChangesDocument: TUnion<TSchema[]> = Type.Union([...CHANGES_ACTIONS.map((action) => CHANGES_DOCUMENTS[action]), ChangesFailure]);
/**
 * Any document `chant workspace wip show|diff` or `restore --dry-run` prints, as a TypeScript type.
 * @public
 */
export type WipChangesDocument = { [A in ChangesAction]: Static<(typeof CHANGES_DOCUMENTS)[A]> }[ChangesAction] | ChangesFailure;
