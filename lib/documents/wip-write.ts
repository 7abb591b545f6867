import { Type } from 'typebox';
import type { Static, TSchema, TUnion } from 'typebox';
import { header, LiteralUnion, Nullable, ObjectId, successDocuments, WIP_WRITE_ID, WriteErrorCode } from './common.js';
import type { VerbEntry } from './common.js';
import { FLAGGED_REASONS, WRITE_ACTIONS } from './ids.js';
import { WIP_ERROR_CODES } from '../error-codes.js';
import { FetchResult, PushOutcome, PushResult, SecretFinding } from './replication.js';

// The push's and the fetch's results live beside the other replication documents (a second
// remote changes them there); the rows below take them from here.
export { FetchResult, PushOutcome };
import { LeftAsIs, Snapshot, UnsavedReason } from './snapshot.js';
import { BranchPrune } from './storage.js';
import { InterruptedRestore } from './wip-read.js';

// What a snapshot could not hold, and what it took although git was told not to look. Kept
// inside SaveResult, since lib/index.ts exports the documents' types by name.
const UnsavedPath = Type.Object({
  path: Type.String({ description: 'From the repository root.' }),
  reason: UnsavedReason,
  size: Type.Optional(Type.Integer({ minimum: 0, description: "For too-large: the file's size in bytes." })),
  message: Type.String({ description: 'The same, for people.' }),
}, { description: 'A path of the working tree whose contents the snapshot does not hold.' });

const FlaggedPath = Type.Object({
  path: Type.String({ description: 'From the repository root.' }),
  reason: LiteralUnion(FLAGGED_REASONS, { description: "The flag the checkout's index sets on the path." }),
  message: Type.String({ description: 'The same, for people.' }),
}, { description: 'A tracked path git was told not to look at in the working tree, whose local edit the snapshot holds.' });

const SkippedStep = Type.Object({
  step: LiteralUnion(['scan', 'prune'] as const, { description: 'scan: the secret scan --scan asked for (findings is then absent: nothing was scanned, which is not nothing found). prune: the prune --prune or a retain block with onSave asked for (pruned is then absent).' }),
  code: LiteralUnion(WIP_ERROR_CODES, { description: 'The refusal code the step ended with, from the same list as a failure document\'s.' }),
  message: Type.String({ description: 'Why, for people: what failed, and what to run instead.' }),
}, { description: 'A step the save was asked to take after the snapshot was recorded, and did not: the snapshot stands all the same.' });

/**
 * What `WipStore.save` (chant-wip) returns.
 * @public
 */
export const SaveResult = Type.Object({
  branch: Type.String({ description: 'The checked-out branch the snapshot was taken on, by name.' }),
  ref: Type.String({ description: 'refs/chant/wip/<branch>, the one ref the save moved.' }),
  created: Type.Boolean({ description: "False when the ref's tip already held this tree on this head with the same label, by and kind, and nothing was written." }),
  snapshot: Snapshot,
  replication: Nullable(PushResult, "The push the policy makes after a save, or null when no policy is declared or its on leaves save out."),
  findings: Type.Optional(Type.Array(SecretFinding, {
    description: 'With --scan: the likely secrets in the files this snapshot adds over the one below it (path, rule, line; never the secret). The snapshot is recorded all the same: it is local, and a push holds it back.',
  })),
  pruned: Type.Optional(Type.Object(BranchPrune.properties, {
    description: "With --prune, or a retain block whose onSave is true: what the declaration's retention rules did to this branch's chain after the snapshot was recorded (next is the new tip when anything was dropped). Absent when no prune ran, or when it did not run to its end: skipped then says why, and the snapshot stands.",
  })),
  skipped: Type.Optional(Type.Array(SkippedStep, {
    description: 'The steps asked of the save after the snapshot was recorded that did not run to their end, each with its refusal code: the scan (the scanner or a git read failed) or the prune (the chain holds a commit that is not a snapshot, a save in another worktree moved it, a lock stayed held). The snapshot is recorded, so the save succeeds; run wip prune, or save --scan again, to see the step through. Present only when there is one.',
  })),
  unsaved: Type.Optional(Type.Array(UnsavedPath, {
    description: 'What the snapshot could not hold, every path, sorted by path; present only when there is something. A submodule or embedded repository is kept as the commit it is at (nothing, when it has no commit yet), its files are not. The save never fails because of one path: it takes the rest and lists each here; the snapshot commit records them too (snapshot.unsaved).',
  })),
  flagged: Type.Optional(Type.Array(FlaggedPath, {
    description: 'Tracked paths marked assume-unchanged or skip-worktree in the checkout\'s index whose local edits the snapshot holds, sorted by path; present only when there is one. A skip-worktree file absent from disk (outside a sparse checkout\'s cone) is not listed: the snapshot holds what the index holds, and it is no deletion.',
  })),  interruptedRestore: Type.Optional(InterruptedRestore),
});
/**
 * What `WipStore.save` (chant-wip) returns, as a TypeScript type.
 * @public
 */
export interface SaveResult {
  /** The checked-out branch the snapshot was taken on, by name. */
  branch: string;
  /** refs/chant/wip/\<branch\>, the one ref the save moved. */
  ref: string;
  /**
   * False when the ref's tip already held this tree on this head with the same label, by and kind,
   * and nothing was written.
   */
  created: boolean;
  /**
   * One snapshot of a branch's working tree: a commit whose tree is the whole working tree, staged,
   * unstaged and untracked files alike, ignored files left out. Its first parent is the snapshot
   * before it on the same ref, when there is one, and its last parent is head.
   */
  snapshot: Snapshot;
  /**
   * The push the policy makes after a save, or null when no policy is declared or its on leaves
   * save out.
   */
  replication: PushResult | null;
  /**
   * With --scan: the likely secrets in the files this snapshot adds over the one below it (path,
   * rule, line; never the secret). The snapshot is recorded all the same: it is local, and a push
   * holds it back.
   */
  findings?: SecretFinding[];
  /**
   * With --prune, or a retain block whose onSave is true: what the declaration's retention rules
   * did to this branch's chain after the snapshot was recorded (next is the new tip when anything
   * was dropped). Absent when no prune ran, or when it did not run to its end: skipped then says
   * why, and the snapshot stands.
   */
  pruned?: BranchPrune;
  /**
   * The steps asked of the save after the snapshot was recorded that did not run to their end, each
   * with its refusal code: the scan (the scanner or a git read failed) or the prune (the chain
   * holds a commit that is not a snapshot, a save in another worktree moved it, a lock stayed
   * held). The snapshot is recorded, so the save succeeds; run wip prune, or save --scan again, to
   * see the step through. Present only when there is one.
   */
  skipped?: {
    /**
     * scan: the secret scan --scan asked for (findings is then absent: nothing was scanned, which
     * is not nothing found). prune: the prune --prune or a retain block with onSave asked for
     * (pruned is then absent).
     */
    step: 'scan' | 'prune';
    /** The refusal code the step ended with, from the same list as a failure document's. */
    code: 'not-a-git-repository' | 'declaration-ambiguous' | 'declaration-unparseable' | 'declaration-invalid' | 'reader-too-old' | 'write-usage-invalid' | 'wip-no-branch' | 'wip-none' | 'wip-snapshot-unknown' | 'wip-branch-other' | 'wip-race' | 'wip-policy-none' | 'wip-remote-unknown' | 'principal-unidentified' | 'wip-restore-blocked' | 'git-failed' | 'wip-timeout' | 'internal-error' | 'wip-cancelled' | 'wip-plan-stale';
    /** Why, for people: what failed, and what to run instead. */
    message: string;
  }[];
  /**
   * What the snapshot could not hold, every path, sorted by path; present only when there is
   * something. A submodule or embedded repository is kept as the commit it is at (nothing, when it
   * has no commit yet), its files are not. The save never fails because of one path: it takes the
   * rest and lists each here; the snapshot commit records them too (snapshot.unsaved).
   */
  unsaved?: {
    /** From the repository root. */
    path: string;
    /**
     * submodule or embedded-repository: a gitlink, kept as the commit it is at (nothing, for a
     * repository with no commit yet); its files, committed or not, are not in the snapshot.
     * unreadable: the file could not be opened or read. vanished: it was deleted while the save
     * read it. not-a-file: a FIFO, socket or device where git tracks a file. too-large: a new
     * untracked file over the size limit (--max-file-size). invalid-path: a path git, or a remote
     * that checks what it receives, refuses to hold, since other systems read a name in it as .git
     * (.GIT, git~1, .git:x) or it is a symlink named .gitmodules or is under a folder named
     * .gitmodules or .gitattributes. For unreadable, vanished, not-a-file and invalid-path the
     * snapshot holds what the index held at that path, or nothing for an untracked file; for a path
     * a remote refuses that the index holds, what HEAD holds there, or nothing (where HEAD holds it
     * under a name refused already, it is saved).
     */
    reason: UnsavedReason;
    /** For too-large: the file's size in bytes. */
    size?: number;
    /** The same, for people. */
    message: string;
  }[];
  /**
   * Tracked paths marked assume-unchanged or skip-worktree in the checkout's index whose local
   * edits the snapshot holds, sorted by path; present only when there is one. A skip-worktree file
   * absent from disk (outside a sparse checkout's cone) is not listed: the snapshot holds what the
   * index holds, and it is no deletion.
   */
  flagged?: {
    /** From the repository root. */
    path: string;
    /** The flag the checkout's index sets on the path. */
    reason: 'assume-unchanged' | 'skip-worktree';
    /** The same, for people. */
    message: string;
  }[];
  /**
   * Present only when a restore in this worktree was stopped partway (killed, a crash, a power
   * loss) after its checkpoint: the working tree and index may be part the snapshot it restored,
   * part what they were. Restoring checkpoint (the pre-restore snapshot the restore took) gives
   * back what was there before it; restoring snapshot again finishes it. The next restore that ends
   * clears it.
   */
  interruptedRestore?: InterruptedRestore;
}

/**
 * The checkpoint a restore takes before it changes anything.
 * @public
 */
export const Checkpoint = Type.Object(
  {
    created: Type.Boolean({ description: "False when the ref's tip already held the working tree's tree on the same head, and that snapshot is the checkpoint." }),
    snapshot: Snapshot,
  },
  { description: "The snapshot of the working tree taken before the restore changed it, kind pre-restore; created is false when the ref's tip already held that tree on that head." },
);
/**
 * The checkpoint a restore takes, as a TypeScript type.
 * @public
 */
export interface Checkpoint {
  /**
   * False when the ref's tip already held the working tree's tree on the same head, and that
   * snapshot is the checkpoint.
   */
  created: boolean;
  /**
   * One snapshot of a branch's working tree: a commit whose tree is the whole working tree, staged,
   * unstaged and untracked files alike, ignored files left out. Its first parent is the snapshot
   * before it on the same ref, when there is one, and its last parent is head.
   */
  snapshot: Snapshot;
}

/**
 * What `WipStore.restore` (chant-wip) returns.
 * @public
 */
export const RestoreResult = Type.Object({
  branch: Type.String({ description: 'The checked-out branch the restore worked on, by name.' }),
  ref: Type.String({ description: 'refs/chant/wip/<branch>, where the checkpoint was recorded.' }),
  head: Type.String({ ...ObjectId, description: 'The commit HEAD names; it did not move.' }),
  snapshot: Snapshot,
  checkpoint: Checkpoint,
  headMoved: Type.Boolean({ description: 'True when the snapshot was taken on another commit than HEAD names now: the files are restored over the current HEAD, as uncommitted changes against it.' }),
  paths: Type.Array(Type.String(), { description: 'Every file the restore wrote or removed, from the repository root, sorted by their bytes. A path that is not UTF-8, or that begins with a double quote, is written whole in git\'s C-style quoting: between double quotes, with \\" and \\\\, \\t, \\n and the like, and every other control byte or byte that is not part of UTF-8 as a backslash and three octal digits ("caf\\351.log"). The index is reset to HEAD as well, or, for a checkpoint that recorded the index, to what it recorded.' }),
  written: Type.Optional(Type.Array(Type.String(), { description: 'The paths of paths the restore wrote (added, changed, or of another type), written and sorted as in paths. Always present from chant-wip 0.1 on; absent in documents of earlier v1 writers, whose readers take paths.' })),
  removed: Type.Optional(Type.Array(Type.String(), { description: 'The paths of paths the restore removed, likewise. written and removed together are paths. Always present from chant-wip 0.1 on; absent in documents of earlier v1 writers.' })),
  only: Type.Optional(Type.Array(Type.String(), { description: 'For a partial restore only: the paths it was limited to (a file, or a folder and everything under it), from the repository root, sorted. The rest of the working tree and the index were left as they were; the checkpoint holds the whole tree.' })),
  inexact: Type.Optional(Type.Array(Type.Object({
    path: Type.String({ description: 'The path, written as in paths.' }),
    reason: Type.String({ description: 'Why the checkpoint does not hold its bytes, for people.' }),
  }), { description: "Files the restore overwrote or removed whose bytes on disk the checkpoint does not hold exactly, because git's attributes (end-of-line conversion such as * text=auto, a clean filter) store other bytes than the file had: restoring the checkpoint writes what git's checkout makes of what it stored. Present only when there are any." })),
  leftAsIs: Type.Optional(Type.Array(LeftAsIs, { description: 'Paths the snapshot holds otherwise that the restore left as they are (written as in paths, sorted the same way): a path longer from the root of the file system than the system takes, which a save can record from the index but no restore can write or remove. Everything else was restored. Present only when there are any.' })),
});
/**
 * What `WipStore.restore` (chant-wip) returns, as a TypeScript type.
 * @public
 */
export interface RestoreResult {
  /** The checked-out branch the restore worked on, by name. */
  branch: string;
  /** refs/chant/wip/\<branch\>, where the checkpoint was recorded. */
  ref: string;
  /** The commit HEAD names; it did not move. */
  head: string;
  /**
   * One snapshot of a branch's working tree: a commit whose tree is the whole working tree, staged,
   * unstaged and untracked files alike, ignored files left out. Its first parent is the snapshot
   * before it on the same ref, when there is one, and its last parent is head.
   */
  snapshot: Snapshot;
  /**
   * The snapshot of the working tree taken before the restore changed it, kind pre-restore; created
   * is false when the ref's tip already held that tree on that head.
   */
  checkpoint: Checkpoint;
  /**
   * True when the snapshot was taken on another commit than HEAD names now: the files are restored
   * over the current HEAD, as uncommitted changes against it.
   */
  headMoved: boolean;
  /**
   * Every file the restore wrote or removed, from the repository root, sorted by their bytes. A
   * path that is not UTF-8, or that begins with a double quote, is written whole in git's C-style
   * quoting: between double quotes, with \\" and \\\\, \\t, \\n and the like, and every other
   * control byte or byte that is not part of UTF-8 as a backslash and three octal digits
   * ("caf\\351.log"). The index is reset to HEAD as well, or, for a checkpoint that recorded the
   * index, to what it recorded.
   */
  paths: string[];
  /**
   * The paths of paths the restore wrote (added, changed, or of another type), written and sorted
   * as in paths. Always present from chant-wip 0.1 on; absent in documents of earlier v1 writers,
   * whose readers take paths.
   */
  written?: string[];
  /**
   * The paths of paths the restore removed, likewise. written and removed together are paths.
   * Always present from chant-wip 0.1 on; absent in documents of earlier v1 writers.
   */
  removed?: string[];
  /**
   * For a partial restore only: the paths it was limited to (a file, or a folder and everything
   * under it), from the repository root, sorted. The rest of the working tree and the index were
   * left as they were; the checkpoint holds the whole tree.
   */
  only?: string[];
  /**
   * Files the restore overwrote or removed whose bytes on disk the checkpoint does not hold
   * exactly, because git's attributes (end-of-line conversion such as * text=auto, a clean filter)
   * store other bytes than the file had: restoring the checkpoint writes what git's checkout makes
   * of what it stored. Present only when there are any.
   */
  inexact?: {
    /** The path, written as in paths. */
    path: string;
    /** Why the checkpoint does not hold its bytes, for people. */
    reason: string;
  }[];
  /**
   * Paths the snapshot holds otherwise that the restore left as they are (written as in paths,
   * sorted the same way): a path longer from the root of the file system than the system takes,
   * which a save can record from the index but no restore can write or remove. Everything else was
   * restored. Present only when there are any.
   */
  leftAsIs?: LeftAsIs[];
}

/**
 * The verbs of the write documents.
 * @public
 */
export const WriteAction = LiteralUnion(WRITE_ACTIONS);
/**
 * A write verb, as a TypeScript type.
 * @public
 */
export type WriteAction = Static<typeof WriteAction>;


/**
 * Each write verb's result and what its document says on success: a verb is declared by its row
 * here. `npm run verbs` writes `WRITE_ACTIONS`, the CLI registry and the entry's types from the
 * rows (the compiler holds the list to them); the success documents, their union, the maps of
 * document.ts and the schema's variants are made from it.
 * @public
 */
export const WRITE_VERBS = {
  save: { result: SaveResult, description: 'The snapshot was taken, or the tip already was it. Exit code 0.' },
  restore: { result: RestoreResult, description: 'The working tree holds what the snapshot holds. Exit code 0.' },
  push: { result: PushOutcome, description: 'The push ran; replication.rejected lists what did not go. Exit code 0.' },
  fetch: { result: FetchResult, description: 'The fetch ran. Exit code 0.' },
} as const satisfies { readonly [A in WriteAction]: VerbEntry };

/**
 * Each write verb's success document, by verb.
 * @public
 */
export const WRITE_DOCUMENTS = successDocuments(WIP_WRITE_ID, WRITE_ACTIONS, WRITE_VERBS);

/**
 * The document `chant workspace wip save` prints on success.
 * @public
 */
export const SaveDocument = WRITE_DOCUMENTS.save;
/**
 * The save document, as a TypeScript type.
 * @public
 */
export type SaveDocument = Static<typeof SaveDocument>;
/**
 * The document `chant workspace wip restore` prints on success.
 * @public
 */
export const RestoreDocument = WRITE_DOCUMENTS.restore;
/**
 * The restore document, as a TypeScript type.
 * @public
 */
export type RestoreDocument = Static<typeof RestoreDocument>;
/**
 * The document `chant workspace wip push` prints on success.
 * @public
 */
export const PushDocument = WRITE_DOCUMENTS.push;
/**
 * The push document, as a TypeScript type.
 * @public
 */
export type PushDocument = Static<typeof PushDocument>;
/**
 * The document `chant workspace wip fetch` prints on success.
 * @public
 */
export const FetchDocument = WRITE_DOCUMENTS.fetch;
/**
 * The fetch document, as a TypeScript type.
 * @public
 */
export type FetchDocument = Static<typeof FetchDocument>;

/**
 * A refused write. Exit code 1.
 * @public
 */
export const WriteFailure = Type.Object(
  {
    ...header(WIP_WRITE_ID),
    action: Nullable(WriteAction, 'The verb refused, or null when there was none.'),
    error: Type.Object({
      code: WriteErrorCode,
      message: Type.String(),
      paths: Type.Optional(Type.Array(Type.String(), { description: 'For wip-restore-blocked: every path in the way (ignored files, submodule working trees and embedded repositories, folders this user may not write, the current working directory, unmerged paths), from the repository root, sorted by their bytes, written as in the restore document paths.' })),
    }),
  },
  { description: 'Nothing was changed, except that a restore refused with git-failed may have recorded its checkpoint; when git failed partway through writing the working tree, the message says the tree was put back, or names the checkpoint to restore. Exit code 1.' },
);
/**
 * A refused write, as a TypeScript type.
 * @public
 */
export type WriteFailure = Static<typeof WriteFailure>;

/**
 * What the write verbs (`chant workspace wip save|restore|push|fetch`) print.
 * @public
 */
export const WipWriteDocument: TUnion<TSchema[]> = Type.Union([...WRITE_ACTIONS.map((action) => WRITE_DOCUMENTS[action]), WriteFailure]);
/**
 * Any document a write verb prints, as a TypeScript type.
 * @public
 */
export type WipWriteDocument = { [A in WriteAction]: Static<(typeof WRITE_DOCUMENTS)[A]> }[WriteAction] | WriteFailure;
