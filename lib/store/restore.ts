// `restore`: the working tree put back as a snapshot holds it, after a pre-restore checkpoint that
// holds the working tree and the index as they were. It finishes or changes nothing, and never
// deletes or overwrites what the checkpoint cannot give back (docs/design.md, Restore). `plan`
// makes the same checks and says what a restore would do, writing nothing.
import { createHash } from 'node:crypto';
import { closeSync, constants, existsSync, fchmodSync, fstatSync, lstatSync, openSync, readFileSync, readSync, readlinkSync, rmdirSync, rmSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { mkdir, readFile, rm, writeFile } from 'node:fs/promises';
import type { RefusedPath, RestorePlan } from '../documents/changes.js';
import type { Snapshot } from '../documents/snapshot.js';
import type { RestoreResult } from '../documents/wip-write.js';
import { asWipError, cancelledError, checkNotAborted, isWipError, WipError } from '../errors.js';
import { listTree } from '../git/diff.js';
import { diffLooseTrees } from '../git/tree-diff.js';
import { indexHoldsTree, readIntentToAddPaths, scanIndex } from '../git/formats/index-file.js';
import { pathBytes, rawPathOnDisk, rawPathText } from '../git/formats/path-text.js';
import type { CommitRecord } from '../git/formats/commit.js';
import type { Plumbing, RepositoryLayout, TreeChange } from '../git/plumbing.js';
import { stagingFolder, temporaryIndexFile } from '../managers/temporaries.js';
import { keepIndexWritten } from './keep-written.js';
import { syncPlaced, syncUndo } from './undo-durable.js';
import { dropRestoreMarks, LAST_RESTORE, pendingRestoreMarks, placeRestoreMarks, restoreEnded, unmarkRestoring } from '../managers/restore-marker.js';
import type { PendingMarks, RestoreMark } from '../managers/restore-marker.js';
import { indexTrailer, intentTrailers, modeTrailers } from '../snapshot/format.js';
import type { FileMode } from '../snapshot/format.js';
import { checkText } from '../text.js';
import { branchOf, checkoutOf, openCheckout, restoreTarget } from './checkout.js';
import type { BranchCheckout } from './checkout.js';
import { cancellable, checkIdentity, checkpointSettings, locked } from './context.js';
import { report } from '../events.js';
import type { ProgressListener } from '../events.js';
import type { StoreContext } from './context.js';
import { applyOps, available as folderWriterAvailable, FolderRaceError } from './folder-writer.js';
import { entriesInTree, PATH_MAX } from './tree-paths.js';
import { blobsStillHeld } from '../git/blob-writer.js';
import { healBrokenLooseBlob, looseTarget } from '../git/loose-target.js';
import { notThereLoose } from '../git/loose-objects.js';
import type { CheckedReads } from '../git/loose-objects.js';
import type { FolderOp } from './folder-writer.js';
import { unsavedOf } from '../snapshot/left-out.js';
import type { LeftOut } from '../snapshot/left-out.js';
import { checkoutMayConvert, plainStagedNames, treeAttributesConvertNothing, writePlainFiles } from './plain-checkout.js';
import { PinnedTipMoved, recordSnapshot } from './record.js';
import { blockedError, changedSince, checkWritable, compareRaw, cwdRemoved, indexNotLocked, indexResettable, inTheWay, pathStats, refuseOperationInProgress, storedAsTheyAre, unwritableFolders } from './restore-checks.js';
import type { Blocker } from './restore-checks.js';
import { gitlinksLeftOut, seedIndex, sortByPath, stageWorkingTree, viaStatus } from './staging.js';
import { workingTreeByStatus } from './working-tree.js';

/**
 * Options of {@link WipStore.plan}.
 * @public
 */
export interface PlanOptions {
  /** The snapshot a restore would put back, by commit (any name git resolves); the branch's newest of kind `save` when absent. */
  snapshot?: string | null;
  /**
   * Only these paths, from the repository root as show, diff and restore print them: a file, or
   * a folder and everything under it. The whole tree when absent or null.
   */
  paths?: readonly string[] | null;
  /** Plans a restore given `allowInexact` (see {@link RestoreOptions.allowInexact}): such files are then not refused. */
  allowInexact?: boolean;
  /** Cancels the call: it then rejects with `wip-cancelled`. */
  signal?: AbortSignal;
}

/**
 * Options of {@link WipStore.restore}.
 * @public
 */
export interface RestoreOptions {
  /** The snapshot to restore, by commit (any name git resolves); the branch's newest of kind `save` when absent. */
  snapshot?: string | null;
  /** Who restores, recorded on the pre-restore checkpoint. */
  by?: string | null;
  /**
   * Only these paths, from the repository root as show, diff and restore print them: a file, or
   * a folder and everything under it. The rest of the working tree and the index are left as
   * they are; the checkpoint still holds the whole tree, so restoring it undoes the partial
   * restore. The whole tree when absent or null.
   */
  paths?: readonly string[] | null;
  /**
   * The `fingerprint` of a {@link WipStore.plan}: the restore is refused with `wip-plan-stale`,
   * before it writes anything, when the working tree, the index or HEAD changed since that plan,
   * or the plan was of another snapshot or other paths.
   */
  expect?: string | null;
  /**
   * Overwrite or remove files the checkpoint cannot give back byte for byte: where git's
   * attributes change a file's bytes as git stores them (`text=auto` over a CRLF file, a clean
   * filter that drops part of it), and its checkout would not write the same bytes back, the
   * restore is refused (`wip-restore-blocked`, each such path named) unless this is true; the
   * result then names them in `inexact`.
   */
  allowInexact?: boolean;
  /**
   * Cancels the restore: before the checkpoint it rejects with `wip-cancelled` having written
   * nothing; after it, the files git is writing are written, then put back as the checkpoint
   * holds them, and it rejects with `wip-cancelled` (the checkpoint stays on the ref). Once the
   * files are in place, the index's reset is not cancelled, except while it waits for another
   * git process to let the index go: it then rejects with `wip-cancelled` saying the files were
   * written and how to finish or undo.
   */
  signal?: AbortSignal;
  /** Receives where the restore stands: `staging`, `checkpoint`, `writing` (paths), `index`. */
  onProgress?: ProgressListener;
}

const ABSENT = '000000';
const GITLINK = '160000';

/** What a restore works out before it writes, shared with its plan. */
interface Prepared {
  /** The temporary index the working tree was staged into; null when a plan built its tree from git status. */
  indexFile: string | null;
  /** Once the checkpoint is recorded, writes again what a gc took of the objects its tree was built with (see lib/store/keep-written.ts). */
  keepWritten: () => Promise<void>;
  /** The working tree's tree, as a save would record it. */
  current: string;
  /** The changes the restore makes: all, or those under the paths it is limited to. */
  changes: TreeChange[];
  /** The changes it leaves undone: paths longer from the root than the system takes. */
  tooLong: TreeChange[];
  targetIndex: string | null;
  indexHoldsHead: boolean;
  /** The index's tree when it is neither HEAD's nor absent: the checkpoint records it. */
  staged: string | null;
  /** The checkout's intent-to-add entries (`git add -N`), as byte strings. */
  intents: string[];
  /** What the working tree's tree (the checkpoint's) does not hold. */
  leftOut: LeftOut[];
  fingerprint: string;
  /** The tree of the tip the checkpoint's tree must go onto, when not its own (see WorkingTree.pinned). */
  pinned: string | null;
  /** Whether the checkout's index, read as the tree was built from status, held no conflict and no flag (see WorkingTree.indexPlain); false when not known. */
  indexPlain: boolean;
  /** Whether the checkout's index, read as the tree was built from status, holds a tree; null when it was not read so. */
  indexHolds: ((tree: string) => boolean) | null;
  /** The objects read from their loose files and checked so far, which the checks after read again from here (see CheckedReads). */
  reads: CheckedReads;
}

/** Restores a snapshot; see {@link WipStore.restore}. */
export async function restore(context: StoreContext, options: RestoreOptions): Promise<RestoreResult> {
  const by = checkText('--by', options.by);
  const only = checkPaths(options.paths);
  const expect = options.expect ?? null;
  if (expect !== null && !FINGERPRINT.test(expect)) throw new WipError('write-usage-invalid', `expect takes the fingerprint a plan gave (64 hex digits); it was ${JSON.stringify(expect)}`);
  const { signal, onProgress } = options;
  checkNotAborted(signal);
  // Until the checkpoint every git call stops on the signal; from it on, none does.
  const work = cancellable(context, signal);
  const stopped = (error: unknown): never => {
    if (signal?.aborted === true) throw cancelledError(signal);
    throw error;
  };
  const { plumbing } = context;
  const opened = await openCheckout(work.plumbing, context.cwd, context.env ?? process.env).catch(stopped);
  const layout = opened.layout;
  const checkout = await checkoutOf(work.plumbing, opened).catch(stopped);
  const { snapshot: target, record: targetRecord } = await restoreTarget(work.plumbing, checkout, options.snapshot ?? null, opened.replaced).catch(stopped);
  await checkIdentity(work, layout, by).catch(stopped);
  const { maxFileSize } = await checkpointSettings(context, layout);
  return locked(context, layout, async () => {
    checkNotAborted(signal);
    // An operation in progress refuses before anything is staged; a conflict with none is
    // looked for once the index has been read with the working tree (below).
    await refuseOperationInProgress(layout, true);
    report(onProgress, 'staging', 0, 1);
    // Built from git status where a save would, when the folder writer moves the files (the
    // only way that needs no index of the working tree): no index of it is written at all, and
    // the index file is only a name for the index of the few paths checked out.
    const byStatus = folderWriterAvailable() && viaStatus(context.staging) ? { env: context.env ?? process.env } : null;
    const prepared = await prepare(work.plumbing, opened, checkout, target, targetRecord, only, maxFileSize, byStatus, stopped).catch((error: unknown) => conflictFirst(layout, signal, error));
    const { current, changes, targetIndex, indexHoldsHead, staged, leftOut } = prepared;
    const indexFile = prepared.indexFile ?? temporaryIndexFile(layout.gitDir);
    let marked: RestoreMark | null = null;
    try {
      // Each path the move will write or remove, as it is now: another process that changes
      // one while the snapshot's files are staged and the checkpoint recorded stops the restore
      // before the move (below), or its work would be overwritten, and held by no snapshot.
      const found = pathStats(layout.top, changes);
      // And each holds now what the tree read of the working tree holds (the checkpoint's): a
      // file written between that read and the look above would otherwise be overwritten
      // unseen. A file at a path the tree did not hold is in the way: the checks below refuse it.
      const heldSinceRead = await unchangedSinceRead(plumbing, layout, changes, found, leftOut, context.env ?? process.env).catch(stopped);
      await refuseOperationInProgress(layout, prepared.indexPlain);
      report(onProgress, 'staging', 1, 1);
      if (expect !== null && expect !== prepared.fingerprint) {
        throw new WipError('wip-plan-stale', `the working tree, the index or HEAD changed since the plan this restore expects was made, or that plan was of another snapshot or other paths, so nothing was changed: plan the restore of ${target.commit.slice(0, 12)} again`);
      }
      if (only !== null && !folderWriterAvailable()) throw partialUnavailable();
      // Checked before anything is written, the checkpoint included: git would refuse some of
      // these only after writing other files, and some would destroy what no snapshot holds.
      await checkWritable(work.plumbing, layout, target, changes, targetIndex, opened.replaced).catch(stopped);
      const plainWrite = { trees: only === null ? [target.tree] : [target.tree, current], replaced: opened.replaced, env: context.env ?? process.env, reads: prepared.reads };
      const blockers = await blockersOf(work.plumbing, layout, context.cwd, changes, leftOut, [], plainWrite);
      if (blockers.length > 0) {
        throw blockedError(`restoring ${target.commit.slice(0, 12)} would delete or overwrite what no snapshot holds, or cannot write here, so nothing was changed`, blockers);
      }
      // After the other checks: git's checkout of the checkpoint's blobs runs filters, whose side
      // effects (an editor saving meanwhile) the checks after the checkpoint see as a race.
      const inexact = await inexactFiles(work.plumbing, layout, current, changes, opened.replaced, context.env ?? process.env, prepared.reads, found, heldSinceRead).catch(stopped);
      if (inexact.length > 0 && options.allowInexact !== true) {
        throw blockedError(`restoring ${target.commit.slice(0, 12)} would overwrite or remove what its checkpoint cannot give back as it is, so nothing was changed`, inexact);
      }
      await indexNotLocked(layout);
      const resetTo = only === null ? await indexResetTo(layout, opened.headTree, checkout, target, targetIndex, indexHoldsHead, prepared.indexHolds) : null;
      if (resetTo !== null) await indexResettable(work.plumbing, layout, resetTo, changes, prepared.indexPlain).catch(stopped);
      // The snapshot's files are written into a private staging folder before the checkpoint:
      // a filter that fails there (a smudge filter, git-lfs without its object) refuses the
      // restore with nothing written at all, and so does a cancel until the checkpoint.
      // A partial restore writes its files as the attributes it leaves say, folder by folder: the
      // working tree's .gitattributes (git restore --source reads them), or the target's where it
      // writes that .gitattributes too, none where it removes it; a whole restore as the
      // target's. The attributes the files will be read back under.
      const staging = changes.length > 0 && folderWriterAvailable() ? await stageTarget(work.plumbing, layout, indexFile, target, changes, opened.replaced !== false, context.env ?? process.env, only === null ? target.tree : current, prepared.reads).catch(stopped) : null;
      let checkpoint: Awaited<ReturnType<typeof recordSnapshot>>;
      try {
        checkNotAborted(signal);
        report(onProgress, 'checkpoint', 0, 1);
        checkpoint = await recordSnapshot(plumbing, context.clock, checkout, current, { kind: 'pre-restore', unsaved: unsavedOf(leftOut) }, { label: `before ${target.commit.slice(0, 12)}`, by }, 'tree-and-head', staged, prepared.pinned, prepared.intents, removedModes(layout.top, changes)).catch((error: unknown) => {
          // The tip moved off the commit that kept objects of the working tree's tree on disk
          // since it was read: that tree may name objects gone since, and nothing was written.
          if (error instanceof PinnedTipMoved) throw new WipError('wip-race', `${checkout.ref} moved while the restore of ${target.commit.slice(0, 12)} was being prepared, so nothing was changed: restore it again`, { cause: error });
          throw error;
        });
        // The objects the checkpoint's tree was built with are named by its ref now: any a gc took
        // before (a `git gc --prune=now` by hand) is written again before a file is touched.
        await prepared.keepWritten().catch((error: unknown) => {
          throw new WipError('git-failed', `cannot write again the objects of this restore's checkpoint that a git gc took meanwhile (${error instanceof Error ? error.message : String(error)}), so nothing was changed; the checkpoint ${checkpoint.snapshot.commit.slice(0, 12)} is on the chain`, { cause: error });
        });
        report(onProgress, 'checkpoint', 1, 1);
        // From here on a kill leaves the working tree part written: the mark says so to the
        // next list or save, naming the checkpoint that gives it back.
        if (changes.length > 0 || resetTo !== null) {
          const mark = { branch: checkout.branch, snapshot: target.commit, checkpoint: checkpoint.snapshot.commit };
          // Recorded as the last restore, kept once it ends: a prune keeps the checkpoint of the
          // last restore, so it can be undone. Until it ends done, the one before it stays too: a
          // restore that fails or is cancelled may have put everything back, leaving that one the
          // last to change anything. A record that cannot be written refuses the restore here,
          // before any file is touched: a prune could otherwise drop the only undo. The record and
          // the mark are written beside their places, synced with what the undo needs (one batch),
          // then renamed in place and their folder synced, all before the first file is touched.
          const recordFailed = (error: unknown): WipError => new WipError('git-failed', `cannot write the record of this restore's checkpoint (${LAST_RESTORE} in the git directory: ${error instanceof Error ? error.message : String(error)}), so nothing was changed; the checkpoint ${checkpoint.snapshot.commit.slice(0, 12)} is on the chain`, { cause: error });
          let pending: PendingMarks;
          try {
            pending = pendingRestoreMarks(layout.gitDir, mark);
          } catch (error) {
            throw recordFailed(error);
          }
          try {
            // What the undo needs goes to disk before the first file is overwritten or removed.
            await (changes.length > 0 ? syncUndo(layout, checkpoint.snapshot, checkout.ref, changes, prepared.reads, pending.temporaries) : syncPlaced(pending.temporaries)).catch((error: unknown) => {
              throw new WipError('git-failed', `cannot sync this restore's checkpoint to disk (${error instanceof Error ? error.message : String(error)}), so nothing was changed; the checkpoint ${checkpoint.snapshot.commit.slice(0, 12)} is on the chain`, { cause: error });
            });
            try {
              placeRestoreMarks(pending);
            } catch (error) {
              throw recordFailed(error);
            }
          } finally {
            dropRestoreMarks(pending);
          }
          marked = mark;
          await syncPlaced([layout.gitDir]).catch((error: unknown) => {
            throw recordFailed(error);
          });
        }
        const moved = changedSince(layout.top, found);
        if (moved.length > 0) throw changedWhilePrepared(target, checkpoint.snapshot, moved);
        report(onProgress, 'writing', 0, changes.length);
        if (changes.length > 0) await moveTree(plumbing, layout, indexFile, current, target, changes, checkpoint.snapshot, staging);
        // The permission bits the snapshot (a checkpoint) recorded of files it writes anew.
        setModes(layout.top, changes, modeTrailers(targetRecord.message));
        report(onProgress, 'writing', changes.length, changes.length);
      } finally {
        // A staging folder the system cannot remove (a path too long from the git directory)
        // must not hide what the restore did: a later run removes it as a stale temporary.
        if (staging !== null) await removeStaging(staging);
      }
      if (signal?.aborted === true) {
        // Past the checkpoint: the working tree goes back as the checkpoint holds it. The
        // checkout's index was not touched yet, and is left as it was.
        if (changes.length > 0) throw await cancelledBack(plumbing, layout, current, target, changes, checkpoint.snapshot, cancelledError(signal));
        throw cancelledError(signal);
      }
      report(onProgress, 'index', 0, 1);
      // A partial restore leaves the index alone, as git restore does without --staged. A whole
      // one puts it back as the snapshot recorded it when HEAD is where it was then, else to
      // HEAD. The reset is left out when the index holds that tree already (the usual case:
      // nothing staged), since it would leave the index as it is.
      if (resetTo !== null) await resetIndexOrBack(plumbing, layout, current, target, changes, checkpoint.snapshot, resetTo, signal);
      // The intent-to-add entries the snapshot names go back with the index it records (on the
      // same HEAD), each of a file there (never the top, which git add reads as every file): a
      // mark only, whose file is written, so a failure to add one leaves the restore done.
      if (only === null && target.head === checkout.head) {
        const intents = intentTrailers(targetRecord.message).filter((raw) => raw !== '' && lstatSync(rawPathOnDisk(layout.top, raw), { throwIfNoEntry: false }) !== undefined);
        await plumbing.addIntentToAdd(layout.top, intents).catch(() => undefined);
      }
      report(onProgress, 'index', 1, 1);
      const { write, remove } = writtenAndRemoved(changes);
      // A whole restore that ended leaves the snapshot's tree, whatever an earlier one killed
      // partway left: its notice goes too, even where nothing was left to write or mark.
      if (only === null) unmarkRestoring(layout.gitDir);
      if (marked !== null) restoreEnded(layout.gitDir, marked);
      return {
        branch: checkout.branch,
        ref: checkout.ref,
        head: checkout.head,
        snapshot: target,
        checkpoint,
        headMoved: target.head !== checkout.head,
        paths: [...changes].sort(compareRaw).map((change) => change.path),
        written: write,
        removed: remove,
        ...(only === null ? {} : { only: only.map(rawPathText) }),
        ...(inexact.length > 0 ? { inexact: inexact.map((entry) => ({ path: rawPathText(entry.raw), reason: entry.why.startsWith(LINK_AS_FILE) ? LINK_AS_FILE : INEXACT })) } : {}),
        ...leftAsIs(prepared.tooLong),
      };
    } finally {
      rmSync(indexFile, { force: true });
      // Ended in a way it reports: done, or refused saying what it left and which checkpoint holds the rest.
      if (marked !== null) unmarkRestoring(layout.gitDir);
    }
  }, () => checkNotAborted(signal));
}

/** What a restore would do; see {@link WipStore.plan}. */
export async function plan(context: StoreContext, options: PlanOptions): Promise<RestorePlan> {
  const only = checkPaths(options.paths);
  const { signal } = options;
  checkNotAborted(signal);
  const work = cancellable(context, signal);
  const stopped = (error: unknown): never => {
    if (signal?.aborted === true) throw cancelledError(signal);
    throw error;
  };
  const opened = await openCheckout(work.plumbing, context.cwd, context.env ?? process.env).catch(stopped);
  const layout = opened.layout;
  // The wip tip is read only to find the target when none is named: a checkpoint is not taken.
  const named = options.snapshot ?? null;
  const checkout = named === null ? await checkoutOf(work.plumbing, opened).catch(stopped) : branchOf(opened);
  const { snapshot: target, record: targetRecord } = await restoreTarget(work.plumbing, checkout, named, opened.replaced).catch(stopped);
  const { maxFileSize } = await checkpointSettings(context, layout);
  // Under the lock: the temporary index it stages into is one a save's cleanup would otherwise take.
  return locked(context, layout, async () => {
    checkNotAborted(signal);
    // Every refusal is reported, not thrown, in the order a restore meets them; the first is the one it would end with.
    const refusals: WipError[] = [];
    const refusal = (error: unknown) => {
      if (signal?.aborted === true) throw cancelledError(signal);
      if (!isWipError(error)) throw error;
      refusals.push(error);
    };
    // Each check reads what it needs while the others run, each refusal reported in the
    // restore's order: the conflicts of the index are read while git status runs.
    const settled = <T>(promise: Promise<T>): Promise<{ error: unknown } | { value: T }> => promise.then((value) => ({ value }), (error: unknown) => ({ error }));
    // Built from git status as a save builds it, where the save would: the same tree, so the
    // same fingerprint as the restore's, at about a save's cost.
    const byStatus = viaStatus(context.staging) ? { env: context.env ?? process.env } : null;
    const prepared = await prepare(work.plumbing, opened, checkout, target, targetRecord, only, maxFileSize, byStatus, stopped).catch((error: unknown) => conflictFirst(layout, signal, error));
    try {
      const { changes, targetIndex, leftOut } = prepared;
      const [inProgress, writable, blockers, indexLock, resettable] = await Promise.all([
        settled(refuseOperationInProgress(layout, prepared.indexPlain)),
        settled(checkWritable(work.plumbing, layout, target, changes, targetIndex, opened.replaced)),
        settled(inexactFiles(work.plumbing, layout, prepared.current, changes, opened.replaced, context.env ?? process.env, prepared.reads).then((inexact) => blockersOf(work.plumbing, layout, context.cwd, changes, leftOut, options.allowInexact === true ? [] : inexact, { trees: only === null ? [target.tree] : [target.tree, prepared.current], replaced: opened.replaced, env: context.env ?? process.env, reads: prepared.reads }))),
        settled(indexNotLocked(layout)),
        settled(only === null ? indexResetTo(layout, opened.headTree, checkout, target, targetIndex, prepared.indexHoldsHead, prepared.indexHolds).then((resetTo) => (resetTo === null ? undefined : indexResettable(work.plumbing, layout, resetTo, changes, prepared.indexPlain))) : Promise.resolve()),
      ]);
      if ('error' in inProgress) refusal(inProgress.error);
      if (only !== null && !folderWriterAvailable()) refusal(partialUnavailable());
      if ('error' in writable) refusal(writable.error);
      if ('error' in blockers) throw blockers.error;
      if (blockers.value.length > 0) refusal(blockedError(`restoring ${target.commit.slice(0, 12)} would delete or overwrite what no snapshot holds, or cannot write here, so nothing would be changed`, blockers.value));
      if ('error' in indexLock) refusal(indexLock.error);
      if ('error' in resettable) refusal(resettable.error);
      checkNotAborted(signal);
      const first = refusals[0] ?? null;
      const refused: RefusedPath[] = blockers.value.map((blocker) => ({ path: rawPathText(blocker.raw), reason: blocker.why }));
      return {
        branch: checkout.branch,
        ref: checkout.ref,
        head: checkout.head,
        snapshot: target,
        headMoved: target.head !== checkout.head,
        only: only === null ? null : only.map(rawPathText),
        ...writtenAndRemoved(changes),
        refused,
        ...leftAsIs(prepared.tooLong),
        refusal: first === null ? null : { code: first.code as NonNullable<RestorePlan['refusal']>['code'], message: first.message },
        fingerprint: prepared.fingerprint,
      };
    } finally {
      if (prepared.indexFile !== null) rmSync(prepared.indexFile, { force: true });
    }
  }, () => checkNotAborted(signal));
}

/**
 * Stages the working tree, works out the changes to the target (those the paths select) and
 * what the index holds, and the fingerprint of all three with HEAD. The caller removes
 * `indexFile`; on a failure here it is removed already.
 */
async function prepare(plumbing: Plumbing, opened: Awaited<ReturnType<typeof openCheckout>>, checkout: BranchCheckout, target: Snapshot, targetRecord: CommitRecord, only: string[] | null, maxFileSize: number, byStatus: { env: NodeJS.ProcessEnv } | null, stopped: (error: unknown) => never): Promise<Prepared> {
  const layout = opened.layout;
  // Each tree and blob is read from its loose file and checked once a call (see CheckedReads): the
  // diff below takes HEAD's trees the build read (a snapshot of a clean tree holds them), and the
  // checks after take what the diff read.
  const reads: CheckedReads = new Map();
  const fast = byStatus === null ? null : await workingTreeByStatus(plumbing, layout, checkout.head, checkout.ref, { maxFileSize, env: byStatus.env, replaced: opened.replaced, reads }).catch(stopped);
  // The checkpoint goes onto the tip read with the working tree, under the worktree's lock (the
  // one read before it may be older: a save that held the lock moved it).
  if (fast !== null) checkout.tip = fast.tip;
  const { indexFile, leftOut } = fast !== null
    ? { indexFile: null, leftOut: sortByPath([...fast.leftOut, ...await gitlinksLeftOut(layout.top, fast.gitlinks)]) }
    : await stageWorkingTree(plumbing, checkout, maxFileSize).catch(stopped);
  // The checkout's index is read while git writes or diffs the tree (indexHoldsTree never
  // rejects), and the tree it holds, when that is not HEAD's, is written alongside: both after
  // the working tree was read, one git process less waited for in turn. Built from status, the
  // index whose bytes status was read beside (status reads it too) is not read again: at 100,000
  // entries that second read cost a plan 45 to 58 ms. A restore given a plan's fingerprint
  // compares it with its own, made the same way, before it writes.
  const headTree = opened.headTree;
  const holding = headTree === null ? Promise.resolve(false)
    : fast !== null ? Promise.resolve(fast.indexHolds(headTree))
      : indexHoldsTree(layout.indexFile, layout.objectFormat, headTree);
  const indexing = holding.then((holds) => (holds ? headTree : indexTree(plumbing, layout)));
  // Awaited below, or settled before a failure is thrown, so that no git process outlives the call.
  indexing.catch(() => undefined);
  try {
    const current = fast !== null ? fast.tree : await plumbing.writeTree(indexFile as string).catch(stopped);
    // Staged through the temporary index: its bytes, read before the restore stages its target
    // into the same file, for the write-again once the checkpoint is recorded.
    const indexBytes = fast !== null ? null : await readFile(indexFile as string).catch(stopped);
    // git reads the checkout's index before it diffs two trees only for .gitmodules' ignore
    // settings of gitlinks changed on both sides: with no gitlink in the working tree's tree, or
    // a .gitmodules in the working tree (read first), it is pointed at an index that is not there.
    const gitlinked = leftOut.some((entry) => entry.reason === 'submodule' || entry.reason === 'embedded-repository');
    const indexless = !gitlinked || existsSync(join(layout.top, '.gitmodules'));
    // Read from the trees' loose files where they are (a save's own writes are), without a process.
    const local = opened.replaced === false ? diffLooseTrees(layout.objectsDir, current, target.tree, layout.objectFormat, reads) : null;
    const all = local ?? await plumbing.diffTrees(current, target.tree, indexless).catch(stopped);
    const selected = only === null ? all : await selectChanges(plumbing, all, only, current, target).catch(stopped);
    // A path longer from the root than the system takes, though not from the top (git opens it
    // from there), is left as it is, written or removed: no restore could write it back (the
    // checkpoint's undo neither), and a snapshot that holds one (a staged file, which a save
    // takes from the index) restores every other path. One too long from the top too is no
    // path a save took: the checks refuse the snapshot.
    const topBytes = Buffer.byteLength(layout.top);
    const kept = await leaveIgnored(plumbing, layout, current, [opened.headTree, indexTrailer(targetRecord.message)], selected).catch(stopped);
    const reachable = (change: TreeChange): boolean => change.raw.length >= PATH_MAX || topBytes + 1 + change.raw.length < PATH_MAX;
    const changes = kept.filter(reachable);
    const tooLong = kept.filter((change) => !reachable(change));
    const indexHoldsHead = await holding;
    const indexed = await indexing.catch(stopped);
    const staged = indexed === null || indexed === opened.headTree ? null : indexed;
    // Entries under git add -N, which the index's tree leaves out: the checkpoint names them.
    const intents = fast?.indexPlain === true ? [] : await readIntentToAddPaths(layout.indexFile, layout.objectFormat);
    // What the plan was made for is part of it too: a fingerprint vouches for one target and one
    // choice of paths, never for the restore of another snapshot or of the whole tree. Each path
    // follows a NUL, which no path holds, so no list of paths reads as another or as `whole`.
    // So do the files it leaves as ignored, which rules outside both trees (info/exclude) decide,
    // counted, so that no list of them reads as another with paths.
    const leftIgnored = selected.filter((change) => !changes.includes(change)).map((change) => change.raw);
    const left = leftIgnored.length === 0 ? [] : ['left', String(leftIgnored.length), ...leftIgnored];
    const fingerprint = createHash('sha256').update([checkout.head, current, indexed ?? 'no index', target.commit, ...left, ...(only === null ? ['whole'] : ['paths', ...only])].join('\0')).digest('hex');
    return { indexFile, keepWritten: indexBytes !== null ? () => keepIndexWritten(plumbing, layout, current, indexBytes) : (fast as NonNullable<typeof fast>).keepWritten, current, changes, tooLong, targetIndex: indexTrailer(targetRecord.message), indexHoldsHead, staged, intents, leftOut, fingerprint, pinned: fast?.pinned ?? null, indexPlain: fast?.indexPlain ?? false, indexHolds: fast === null ? null : fast.indexHolds, reads };
  } catch (error) {
    await indexing.catch(() => undefined);
    if (indexFile !== null) rmSync(indexFile, { force: true });
    throw error;
  }
}

/**
 * Refuses with `wip-race`, nothing written and no checkpoint taken, when a file the restore
 * would overwrite or remove no longer holds what the working tree's tree (read before) holds
 * there. A file at a path that tree did not hold is in the way, which the checks after refuse
 * (wip-restore-blocked), whenever it came.
 * @returns the paths whose bytes as they are (raw, no filter) were hashed here and found to be
 *   the blob the tree holds: {@link inexactFiles} takes them as hashed
 */
async function unchangedSinceRead(plumbing: Plumbing, layout: RepositoryLayout, changes: readonly TreeChange[], found: ReadonlyMap<string, string>, leftOut: readonly LeftOut[], env: NodeJS.ProcessEnv): Promise<ReadonlySet<string>> {
  // A path the read could not take is refused by the checks after, as in the way; a path with
  // nothing there now loses nothing to the move (a sparse checkout's file outside its cone is
  // absent all along, its index content in the tree).
  const notTaken = leftOut.map((entry) => Buffer.from(entry.path, 'utf8').toString('latin1'));
  const taken = (raw: string): boolean => !notTaken.some((path) => raw === path || raw.startsWith(`${path}/`));
  const present = changes.filter((change) => change.oldMode !== ABSENT && change.oldMode !== GITLINK && change.newMode !== GITLINK && found.get(change.raw) !== '-' && taken(change.raw));
  if (present.length === 0) return new Set();
  const utf8 = (raw: string): string => Buffer.from(raw, 'latin1').toString('utf8');
  const index = scanIndex(await readFile(layout.indexFile).catch(() => null), layout.objectFormat);
  // Where no attribute may rewrite a file's bytes, what git add stores is those bytes: a file
  // (or a symlink's target) that still hashes to the blob the read found is told here, without
  // a git process; the rest are git's to compare, through its filters (see blobsStillHeld).
  const plain = storedAsTheyAre(layout, present.map((change) => change.raw), index, env);
  const told = present.filter((change) => plain.has(change.raw));
  const same = new Set(blobsStillHeld(layout.top, told.map((change) => ({ raw: change.raw, mode: change.oldMode, oid: change.oldOid })), layout.objectFormat)
    .flatMap((holds, at) => (holds ? [(told[at] as TreeChange).raw] : [])));
  const asked = present.filter((change) => !same.has(change.raw));
  if (asked.length === 0) return same;
  // Where the checkout's index holds the same blob, its stat data goes with it: git then trusts a
  // file whose stat data it still matches, as git status trusted it when the tree was read,
  // rather than hashing it again under attributes or settings changed since (the read kept the
  // index's blob, and so does the checkpoint).
  const indexed = new Map(index
    .select(asked.map((change) => utf8(change.raw)))
    .filter((entry) => entry.stage === 0 && entry.flag === null && !entry.intentToAdd)
    .map((entry) => [Buffer.from(entry.path, 'utf8').toString('latin1'), entry]));
  const entries = asked.map((change) => {
    const entry = indexed.get(change.raw);
    const stat = entry !== undefined && entry.oid === change.oldOid && entry.mode === change.oldMode ? entry.statData?.() : undefined;
    return { raw: change.raw, mode: change.oldMode, oid: change.oldOid, ...(stat === undefined ? {} : { stat }) };
  });
  const scratch = temporaryIndexFile(layout.gitDir);
  let held: boolean;
  try {
    held = await plumbing.filesHold(layout.top, scratch, entries, layout.objectFormat);
  } finally {
    rmSync(scratch, { force: true });
  }
  if (held) return same;
  const shown = asked.slice(0, 5).map((change) => rawPathText(change.raw)).join(', ');
  throw new WipError('wip-race', `another process changed one of ${shown}${asked.length > 5 ? ', ...' : ''} while the restore read the working tree, so nothing was changed and no checkpoint taken: restore again once it is done`, { paths: asked.map((change) => rawPathText(change.raw)) });
}

/**
 * The refusal of a restore whose paths another process changed after the working tree was read:
 * nothing of the working tree was written; the checkpoint, taken meanwhile, holds the tree as
 * the restore found it.
 */
function changedWhilePrepared(target: Snapshot, checkpoint: Snapshot, moved: readonly string[]): WipError {
  const shown = moved.slice(0, 5).map(rawPathText).join(', ');
  const more = moved.length > 5 ? ` and ${moved.length - 5} more` : '';
  return new WipError('wip-race', `another process changed ${shown}${more} while the restore of ${target.commit.slice(0, 12)} was being prepared, so no file of the working tree was written (checkpoint ${checkpoint.commit} holds the tree as the restore found it): restore again once it is done`, { paths: moved.map(rawPathText) });
}

/**
 * A failure to read the working tree into a tree, in a checkout whose index holds a conflict
 * (git cannot write a tree over one), is the conflict's refusal: the index is read for it only
 * then, as a plain one was already read with the working tree. Anything else is thrown as it came.
 */
async function conflictFirst(layout: RepositoryLayout, signal: AbortSignal | undefined, error: unknown): Promise<never> {
  if (signal?.aborted !== true) await refuseOperationInProgress(layout);
  throw error;
}

/**
 * What a whole restore resets the checkout's index to: the index the snapshot recorded when HEAD
 * is where it was then, else HEAD; null when the index holds that tree already (the usual case:
 * nothing staged), since the reset would leave the index as it is.
 */
async function indexResetTo(layout: RepositoryLayout, headTree: string | null, checkout: BranchCheckout, target: Snapshot, targetIndex: string | null, indexHoldsHead: boolean, indexHolds: ((tree: string) => boolean) | null): Promise<string | null> {
  const wanted = targetIndex !== null && target.head === checkout.head ? targetIndex : headTree;
  const holds = wanted === null ? false : wanted === headTree ? indexHoldsHead : indexHolds !== null ? indexHolds(wanted) : await indexHoldsTree(layout.indexFile, layout.objectFormat, wanted);
  return holds ? null : wanted ?? checkout.head;
}

const FINGERPRINT = /^[0-9a-f]{64}$/;

/**
 * The paths a partial restore is limited to, as byte strings, each checked: relative to the
 * repository root, no `..`, no empty name; `./` and a trailing `/` are dropped. Null for none.
 * A path is taken as documents print it: a name that is not UTF-8 has no text of its own (a
 * command line's bytes reach Node as UTF-8, an invalid byte as U+FFFD), so it is given in git's
 * C-style quoting, which {@link pathBytes} reads back to its bytes.
 */
function checkPaths(paths: readonly string[] | null | undefined): string[] | null {
  if (paths === undefined || paths === null) return null;
  if (!Array.isArray(paths) || paths.length === 0) throw new WipError('write-usage-invalid', 'paths names no path: give at least one, or leave it out to restore the whole tree');
  const checked = new Set<string>();
  for (const path of paths) {
    const raw = typeof path === 'string' ? pathBytes(path).toString('latin1') : '';
    const names = raw.split('/').filter((name) => name !== '' && name !== '.');
    if (typeof path !== 'string' || raw.startsWith('/') || raw.includes('\0') || names.length === 0 || names.includes('..')) {
      throw new WipError('write-usage-invalid', `paths takes paths from the repository root, without .. (a file, or a folder for everything under it); it was given ${JSON.stringify(path)}`);
    }
    checked.add(names.join('/'));
  }
  return [...checked].sort();
}

/**
 * The changes under the selected paths, and the removal of a file above one of them that is in
 * the way (a file `a` where the folder `a` holds `a/b` in the snapshot). A path that neither side holds is refused:
 * restoring it would do nothing, and is more likely a typo than a wish. Paths are compared by
 * their bytes: a name that came in lossy (U+FFFD for a byte that is not UTF-8) matches nothing.
 */
async function selectChanges(plumbing: Plumbing, all: readonly TreeChange[], only: readonly string[], current: string, target: Snapshot): Promise<TreeChange[]> {
  const under = (raw: string, path: string) => raw === path || raw.startsWith(`${path}/`);
  const changes = all.filter((change) => only.some((path) => under(change.raw, path) || (change.newMode === ABSENT && under(path, change.raw))));
  const unmatched = only.filter((path) => !changes.some((change) => under(change.raw, path)));
  if (unmatched.length > 0) {
    const [ours, theirs] = await Promise.all([listTree(plumbing, current), listTree(plumbing, target.tree)]);
    const held = (path: string) => [ours, theirs].some((files) => files.some((file) => under(file.raw, path)));
    const missing = unmatched.filter((path) => !held(path));
    if (missing.length > 0) {
      // U+FFFD as UTF-8: most likely a byte that was not UTF-8, lost as the name was read.
      const lossy = missing.some((path) => path.includes('\xef\xbf\xbd'));
      const hint = lossy ? '; a name that is not UTF-8 is given as documents print it, quoted, each byte that is not UTF-8 as a backslash and three octal digits ("caf\\351")' : '';
      throw new WipError('write-usage-invalid', `neither snapshot ${target.commit.slice(0, 12)} nor the working tree holds ${missing.map((path) => rawPathText(path)).join(', ')}, so there is nothing to restore there; paths are from the repository root${hint}`);
    }
  }
  return changes;
}

/**
 * The changes less the removals of untracked files that the ignore rules the restore writes
 * ignore: a `.gitignore` it changes that ignores such a file makes it an ignored file, which a
 * restore never touches, as it never touched it while it was ignored before a restore that made
 * it untracked (restoring that restore's checkpoint gives it back, left where it is). Only where
 * the restore changes a `.gitignore`: else the rules are those under which the working tree's
 * tree took the file, so none ignores it. A file is left only where neither the checkout's index,
 * HEAD's tree nor the index the target recorded (`trees`) holds it, no file is written in place
 * of a folder on its way, and nothing is written under it as a folder: any other is removed as
 * before (the checkpoint holds it). Names are byte strings throughout, so a name that is not
 * UTF-8 or holds a newline is read as any other.
 */
async function leaveIgnored(plumbing: Plumbing, layout: RepositoryLayout, current: string, trees: ReadonlyArray<string | null>, changes: TreeChange[]): Promise<TreeChange[]> {
  const isIgnoreFile = (raw: string): boolean => raw === '.gitignore' || raw.endsWith('/.gitignore');
  if (!changes.some((change) => isIgnoreFile(change.raw))) return changes;
  const written = new Set(changes.filter((change) => change.newMode !== ABSENT && change.newMode !== GITLINK).map((change) => change.raw));
  const folders = (raw: string): string[] => {
    const found = [''];
    for (let slash = raw.indexOf('/'); slash >= 0; slash = raw.indexOf('/', slash + 1)) found.push(raw.slice(0, slash));
    return found;
  };
  // The folders the target writes into: a file where one of them goes must make way for it.
  const writtenInto = new Set(changes.filter((change) => change.newMode !== ABSENT).flatMap((change) => folders(change.raw)));
  const index = scanIndex(await readFile(layout.indexFile).catch(() => null), layout.objectFormat);
  const unindexed = changes.filter((change) => change.newMode === ABSENT && ['100644', '100755', '120000'].includes(change.oldMode) && !isIgnoreFile(change.raw)
    && !folders(change.raw).some((folder) => written.has(folder)) && !writtenInto.has(change.raw));
  // The entries' paths are decoded as UTF-8: a name that is not UTF-8 is told by its decoding,
  // which may take a name it is not (that file is then removed as before, never left wrongly).
  const decoded = (raw: string): string => Buffer.from(raw, 'latin1').toString('utf8');
  const indexed = index.split ? null : new Set(index.select(unindexed.map((change) => change.raw), true).map((entry) => entry.path));
  let candidates = indexed === null ? [] : unindexed.filter((change) => !indexed.has(decoded(change.raw)));
  if (candidates.length === 0) return changes;
  for (const tree of trees) {
    if (tree === null) continue;
    const found = await entriesInTree(plumbing, layout.objectFormat, tree, candidates.map((change) => change.raw));
    if (found === null) return changes;
    candidates = candidates.filter((_, at) => found[at] === null);
    if (candidates.length === 0) return changes;
  }
  // The .gitignore of each folder on the way as the restore leaves it: the target's where the
  // restore changes it, else the working tree's (the checkpoint's tree holds it).
  const byRaw = new Map(changes.map((change) => [change.raw, change]));
  const ignoreFiles = [...new Set(candidates.flatMap((change) => folders(change.raw)))].map((folder) => (folder === '' ? '.gitignore' : `${folder}/.gitignore`));
  const kept = ignoreFiles.filter((raw) => !byRaw.has(raw));
  const inCurrent = kept.length === 0 ? [] : await entriesInTree(plumbing, layout.objectFormat, current, kept);
  if (inCurrent === null) return changes;
  const keptOids = new Map(kept.map((raw, at) => [raw, inCurrent[at]?.oid ?? null]));
  const sources = ignoreFiles.flatMap((raw): Array<{ raw: string; oid: string }> => {
    const change = byRaw.get(raw);
    if (change !== undefined) return change.newMode === '100644' || change.newMode === '100755' ? [{ raw, oid: change.newOid }] : [];
    const oid = keptOids.get(raw) ?? null;
    return oid === null ? [] : [{ raw, oid }];
  });
  const blobs = sources.length === 0 ? [] : await plumbing.readObjects(sources.map((source) => source.oid));
  if (blobs === null) return changes;
  const scratch = stagingFolder(layout.gitDir);
  try {
    await mkdir(scratch);
    for (const [at, source] of sources.entries()) {
      const blob = blobs[at];
      if (blob === null || blob === undefined || blob.type !== 'blob') continue;
      const slash = source.raw.lastIndexOf('/');
      if (slash > 0) await mkdir(rawPathOnDisk(scratch, source.raw.slice(0, slash)), { recursive: true });
      await writeFile(rawPathOnDisk(scratch, source.raw), blob.content);
    }
    const ignored = await plumbing.ignoredPaths(layout.gitDir, scratch, candidates.map((change) => change.raw));
    return ignored.size === 0 ? changes : changes.filter((change) => !ignored.has(change.raw) || !candidates.includes(change));
  } finally {
    await rm(scratch, { recursive: true, force: true }).catch(() => undefined);
  }
}

/**
 * What stands in the way of `changes`, sorted: files the checkpoint holds only as git stores them
 * (`inexact`, see {@link inexactFiles}), ignored files and repositories, folders it cannot
 * write, the caller's directory, and a file the checkpoint could not take (unreadable, too
 * large, ...), which is never overwritten.
 */
async function blockersOf(plumbing: Plumbing, layout: RepositoryLayout, cwd: string, changes: readonly TreeChange[], leftOut: readonly LeftOut[], inexact: readonly Blocker[], plain: PlainWrite): Promise<Blocker[]> {
  const top = layout.top;
  const blockers = [...inexact, ...await sameAsWritten(plumbing, layout, changes, await inTheWay(top, changes), plain), ...await unwritableFolders(top, changes)];
  const cwdBlocker = await cwdRemoved(top, cwd, changes);
  if (cwdBlocker !== null) blockers.push(cwdBlocker);
  const notHeld = new Map(leftOut.filter((entry) => entry.reason !== 'submodule' && entry.reason !== 'embedded-repository')
    .map((entry) => [Buffer.from(entry.path, 'utf8').toString('latin1'), entry.reason]));
  for (const change of changes) {
    // The path itself, or a folder on its way the checkpoint could not look into.
    let reason = notHeld.get(change.raw);
    for (let slash = change.raw.lastIndexOf('/'); reason === undefined && slash > 0; slash = change.raw.lastIndexOf('/', slash - 1)) reason = notHeld.get(change.raw.slice(0, slash));
    if (reason !== undefined) blockers.push({ raw: change.raw, why: `${reason}: the checkpoint could not take it${reason === 'too-large' ? ' (a larger --max-file-size, or the declaration\'s wip.maxFileSize, lets it)' : ''}` });
  }
  // One blocker a path: why the checkpoint could not take it says more than that it is in the
  // way (a file left out for its size is no ignored file), and comes last.
  const byPath = new Map<string, Blocker>();
  for (const blocker of blockers) byPath.set(blocker.raw, blocker);
  return [...byPath.values()].sort(compareRaw);
}

/**
 * What decides whether the restore writes a blob's bytes as they are: the trees whose
 * `.gitattributes` it may write through (the target's, and the working tree's for a partial
 * restore), whether a replace ref may stand for an object, and the environment git reads its
 * configuration in.
 */
interface PlainWrite {
  trees: readonly string[];
  replaced: boolean | undefined;
  env: Readonly<Record<string, string | undefined>>;
  /** The objects the call has read and checked already. */
  reads: CheckedReads;
}

/**
 * The files in the way (see {@link inTheWay}) less those that hold the very bytes, and the mode,
 * the restore writes there: overwriting one loses nothing, as the target holds it. An ignored
 * file that a restore to another `.gitignore` left where it was is such a file when that
 * restore's checkpoint, which holds it, is restored. Only where git's checkout writes the blob's
 * bytes as they are (no attribute or setting converts them, see {@link inexactFiles}): elsewhere a
 * file holding the blob's bytes is not what is written there (`eol=crlf` writes CRLFs over it).
 */
async function sameAsWritten(plumbing: Plumbing, layout: RepositoryLayout, changes: readonly TreeChange[], blockers: Blocker[], plain: PlainWrite): Promise<Blocker[]> {
  const written = new Map(changes.filter((change) => change.newMode === '100644' || change.newMode === '100755').map((change) => [change.raw, change]));
  const files = blockers.flatMap((blocker) => {
    const change = written.get(blocker.raw);
    if (change === undefined) return [];
    const stats = lstatSync(rawPathOnDisk(layout.top, blocker.raw), { throwIfNoEntry: false });
    return stats?.isFile() === true && ((stats.mode & 0o100) === 0 ? '100644' : '100755') === change.newMode ? [change] : [];
  });
  if (files.length === 0) return blockers;
  const asTheyAre = plain.replaced === false && !checkoutMayConvert(layout, plain.env)
    && plain.trees.every((tree) => treeAttributesConvertNothing(layout.objectsDir, tree, files.map((change) => change.raw), layout.objectFormat, plain.reads) === true);
  if (!asTheyAre) return blockers;
  const raws = await plumbing.hashRaw(layout.top, files.map((change) => change.raw), layout.objectFormat).catch((): string[] => []);
  const same = new Set(files.filter((change, at) => raws[at] === change.newOid).map((change) => change.raw));
  return blockers.filter((blocker) => !same.has(blocker.raw));
}

/** The paths `changes` write (added, changed, of another type) and remove, each sorted by bytes. */
function writtenAndRemoved(changes: readonly TreeChange[]): { write: string[]; remove: string[] } {
  const sorted = [...changes].sort(compareRaw);
  return {
    write: sorted.filter((change) => change.newMode !== ABSENT).map((change) => change.path),
    remove: sorted.filter((change) => change.newMode === ABSENT).map((change) => change.path),
  };
}

/**
 * Without descriptor-relative paths a restore is git's own two-tree checkout of the whole tree,
 * which cannot leave the other paths alone.
 */
function partialUnavailable(): WipError {
  return new WipError('write-usage-invalid', 'a partial restore needs descriptor-relative paths (/proc/self/fd, as on Linux), which this system lacks: restore the whole snapshot instead');
}

/** The tree the checkout's index holds, written through a link of it so the file is never touched. */
async function indexTree(plumbing: Plumbing, layout: RepositoryLayout): Promise<string | null> {
  const scratch = temporaryIndexFile(layout.gitDir);
  try {
    await seedIndex(layout.indexFile, scratch);
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === 'ENOENT') return null;
    throw new WipError('git-failed', `cannot copy the index: ${(error as Error).message}`, { cause: error });
  }
  try {
    return await plumbing.indexTree(scratch);
  } finally {
    rmSync(scratch, { force: true });
  }
}

/** Why a path is in `leftAsIs`. */
const TOO_LONG = 'its path from the root of the file system is longer than the system takes, so no restore can write or remove it: it is left as it is';

/** The `leftAsIs` field of a restore or a plan: present only when a path is left so. */
function leftAsIs(tooLong: readonly TreeChange[]): { leftAsIs?: Array<{ path: string; reason: string }> } {
  return tooLong.length === 0 ? {} : { leftAsIs: [...tooLong].sort(compareRaw).map((change) => ({ path: rawPathText(change.raw), reason: TOO_LONG })) };
}

/** Why a file is in `inexact`, or refused for it. */
const INEXACT = "git's attributes (an end-of-line conversion or a clean filter) store other bytes than the file holds, and git's checkout of what the checkpoint holds would not write them back: restoring the checkpoint could not give this file back as it is";

/** Why a symlink is in `inexact`, or refused for it. */
const LINK_AS_FILE = "a symlink, which git's checkout of what the checkpoint holds would write back as a file holding its target (core.symlinks is false): restoring the checkpoint could not give this symlink back as it is";

/**
 * The files the restore overwrites or removes that the checkpoint cannot give back byte for
 * byte: git's checkout of the blob the working tree's tree (the checkpoint's) holds for each
 * (what restoring the checkpoint would write: smudge filters, end-of-line conversion, as
 * `* eol=crlf` writes CRLFs) is written into a private folder and compared with the file. Where
 * nothing converts on checkout, a file whose bytes hash, as they are (`hash-object
 * --no-filters`), to that blob is given back as it is and is not checked out. Those that differ,
 * or whose checkout fails, are returned, each as a blocker with why.
 */
async function inexactFiles(plumbing: Plumbing, layout: RepositoryLayout, current: string, changes: readonly TreeChange[], replaced: boolean | undefined, env: Readonly<Record<string, string | undefined>>, reads: CheckedReads, found?: ReadonlyMap<string, string>, heldSinceRead: ReadonlySet<string> = new Set()): Promise<Blocker[]> {
  // Only what is a regular file on disk now: anything else (a FIFO, which a read would wait on
  // forever; a path gone) is no file's bytes to give back, and the other checks refuse it.
  const files = changes.filter((change) => (change.oldMode === '100644' || change.oldMode === '100755') && isRegularFile(rawPathOnDisk(layout.top, change.raw)));
  // And what is a symlink on disk: git's checkout writes it back as one unless a setting says
  // otherwise (`core.symlinks=false` writes a file holding its target).
  const links = changes.filter((change) => change.oldMode === '120000' && isSymlink(rawPathOnDisk(layout.top, change.raw)));
  if (files.length === 0 && links.length === 0) return [];
  // Where git's checkout writes a blob's bytes as they are (no attribute or setting converts on
  // the way out), a file whose raw bytes hash to the checkpoint's blob comes back as it is, and
  // only the others need a look. Elsewhere raw bytes equal to the blob prove nothing (`eol=crlf`
  // writes an LF file back with CRLFs): every file is compared with what the checkout writes.
  const mayConvert = checkoutMayConvert(layout, env);
  const plain = replaced === false && !mayConvert && treeAttributesConvertNothing(layout.objectsDir, current, files.map((change) => change.raw), layout.objectFormat, reads) === true;
  // A file that cannot be read is no file's bytes known: it is compared (and refused) below, and
  // the checks after name why (unreadable).
  // A file the look before the checkpoint hashed as it is and found holding the checkpoint's blob
  // (`heldSinceRead`, see unchangedSinceRead) is not read again: its stat data was taken before
  // that look (`found`), and a change since then is refused as a race after the checkpoint,
  // before any file is written, as one made after this hash is.
  const unhashed = plain ? files.filter((change) => !heldSinceRead.has(change.raw)) : [];
  const hashed = await plumbing.hashRaw(layout.top, unhashed.map((change) => change.raw), layout.objectFormat).catch((): string[] => []);
  const hashedAt = new Map(unhashed.map((change, index) => [change.raw, hashed[index]]));
  const raws = plain ? files.map((change) => (heldSinceRead.has(change.raw) ? change.oldOid : hashedAt.get(change.raw))) : [];
  // A blob of these whose loose file a crash or a power loss broke (saves since kept naming it,
  // as git does an object there loose) is put whole again from the file: the checkpoint names it.
  // So is one git holds nowhere, loose or packed (a `git gc --prune=now` between a save's writes
  // and its move of the ref took it, and the saves since took it from the hash cache as held by
  // the tip): the restore would otherwise remove or overwrite the file and its undo fail.
  const held = plain ? files.filter((change, index) => raws[index] === change.oldOid) : [];
  const absent = await absentBlobs(plumbing, layout, held.map((change) => change.oldOid));
  // Where the configuration shares the repository (or cannot be read), git gives its objects and
  // their folders permissions of its own: those git holds nowhere are written by git, as they are.
  const byGit = absent.size > 0 && looseTarget(layout, env) === null ? held.filter((change) => absent.has(change.oldOid)) : [];
  const writtenByGit = await writeAbsentByGit(plumbing, layout, byGit);
  const broken = held.filter((change) => (byGit.includes(change) ? !writtenByGit.has(change.raw) : !healed(layout, change, absent.has(change.oldOid), reads)));
  const converted = [...plain ? files.filter((change, index) => raws[index] !== change.oldOid || broken.includes(change)) : files, ...mayConvert ? links : []];
  if (converted.length === 0) return [];
  const scratch = stagingFolder(layout.gitDir);
  const scratchIndex = `${scratch}.index`;
  try {
    await mkdir(scratch);
    const given = await plumbing.checkoutPaths(layout.gitDir, scratchIndex, current, scratch, converted.map((change) => ({ raw: change.raw, mode: change.oldMode, oid: change.oldOid })), layout.objectFormat, replaced === false ? layout.objectsDir : null).then(() => true, () => false);
    const differing = converted.filter((change) => !given || !(change.oldMode === '120000' ? sameLink : sameBytes)(rawPathOnDisk(scratch, change.raw), rawPathOnDisk(layout.top, change.raw)));
    // A file another process wrote since the restore looked at it (`found`) differs for that
    // reason, not for git's attributes: the checks after the checkpoint refuse it as a race.
    const moved = new Set(found === undefined ? [] : changedSince(layout.top, new Map(differing.map((change) => [change.raw, found.get(change.raw) ?? '']))));
    return differing
      .filter((change) => !moved.has(change.raw))
      .map((change) => ({ raw: change.raw, why: `${change.oldMode === '120000' ? LINK_AS_FILE : INEXACT}; copy it aside, or restore with --allow-inexact (allowInexact) to overwrite it anyway` }));
  } finally {
    await rm(scratch, { recursive: true, force: true }).catch(() => undefined);
    await rm(scratchIndex, { force: true });
  }
}

/**
 * Whether the checkpoint's blob of `change`, whose file hashes to it as it is, can be read back:
 * there loose and whole, put whole again from the file where its loose file is broken or where
 * git holds it nowhere (`absent`), or not there loose (git reads it from a pack). False where a
 * broken or absent one could not be put back: the
 * file is then compared with what git's checkout of it writes, which fails, and the restore is
 * refused.
 */
function healed(layout: RepositoryLayout, change: TreeChange, absent: boolean, reads: CheckedReads): boolean {
  try {
    healBrokenLooseBlob(layout.objectsDir, change.oldOid, () => readFileSync(rawPathOnDisk(layout.top, change.raw)), layout.objectFormat, absent, reads);
    return true;
  } catch {
    return false;
  }
}

/**
 * Writes the blobs of `changes`' files, whose bytes hash to the checkpoint's blob of each, by
 * git, as they are; returns the paths whose blob is written so. A call that fails writes none:
 * those files are then compared with git's checkout of their blob, which fails, and refused.
 */
async function writeAbsentByGit(plumbing: Plumbing, layout: RepositoryLayout, changes: readonly TreeChange[]): Promise<Set<string>> {
  if (changes.length === 0) return new Set();
  const oids = await plumbing.writeRaw(layout.top, changes.map((change) => change.raw)).catch((): string[] => []);
  return new Set(changes.filter((change, at) => oids[at] === change.oldOid).map((change) => change.raw));
}

/**
 * Which of `oids` git holds nowhere: those not there loose are asked of git in one call (packed,
 * or in an alternate, they are held); none is asked when all are loose. A call that fails takes
 * them all as absent: writing a loose copy of a blob git holds costs room, never a file.
 */
async function absentBlobs(plumbing: Plumbing, layout: RepositoryLayout, oids: readonly string[]): Promise<Set<string>> {
  const notLoose = notThereLoose(layout.objectsDir, [...new Set(oids)]);
  if (notLoose.length === 0) return new Set();
  const info = await plumbing.objectInfo(notLoose).catch(() => null);
  return new Set(notLoose.filter((oid) => info === null || (info.get(oid) ?? null) === null));
}

/**
 * The permission bits of each regular file the restore removes, or replaces with something
 * else, where they are not what git gives a file it writes (its mode's, less the umask): git
 * records only the executable bit, and the undo, which writes the file anew, would leave a file
 * of mode 0600 readable by all.
 */
function removedModes(top: string, changes: readonly TreeChange[]): FileMode[] {
  const umask = process.umask();
  const modes: FileMode[] = [];
  for (const change of changes) {
    if ((change.oldMode !== '100644' && change.oldMode !== '100755') || change.newMode === '100644' || change.newMode === '100755') continue;
    const stats = lstatSync(rawPathOnDisk(top, change.raw), { throwIfNoEntry: false });
    if (stats === undefined || !stats.isFile()) continue;
    const mode = stats.mode & 0o7777;
    if (mode !== ((change.oldMode === '100755' ? 0o777 : 0o666) & ~umask)) modes.push({ raw: change.raw, mode });
  }
  return modes;
}

/**
 * Gives each regular file the restore wrote the permission bits `modes` records for it, never
 * through a symlink; one that cannot be set is left as written (the file is there all the same).
 * Only bits git gives such a file are taken (its mode's, less the umask): a trailer takes bits
 * away, never adds one (a set-user-ID bit, or a write bit for all, from a crafted snapshot).
 */
function setModes(top: string, changes: readonly TreeChange[], modes: readonly FileMode[]): void {
  if (modes.length === 0) return;
  const umask = process.umask();
  const written = new Map(changes.filter((change) => change.newMode === '100644' || change.newMode === '100755').map((change) => [change.raw, (change.newMode === '100755' ? 0o777 : 0o666) & ~umask]));
  for (const { raw, mode: recorded } of modes) {
    const allowed = written.get(raw);
    if (allowed === undefined) continue;
    const mode = recorded & allowed;
    let fd: number;
    try {
      fd = openSync(rawPathOnDisk(top, raw), constants.O_RDONLY | constants.O_NOFOLLOW | constants.O_NONBLOCK);
    } catch {
      continue;
    }
    try {
      if (fstatSync(fd).isFile()) fchmodSync(fd, mode);
    } catch {
      // Left as written.
    } finally {
      closeSync(fd);
    }
  }
}

/** Whether the entry at `path` is a symlink. */
function isSymlink(path: Buffer): boolean {
  try {
    return lstatSync(path).isSymbolicLink();
  } catch {
    return false;
  }
}

/** Whether two entries are symlinks to the same target. */
function sameLink(a: Buffer, b: Buffer): boolean {
  try {
    return lstatSync(a).isSymbolicLink() && lstatSync(b).isSymbolicLink() && readlinkSync(a, 'buffer').equals(readlinkSync(b, 'buffer'));
  } catch {
    return false;
  }
}

/** Whether the entry at `path` is a regular file itself (not followed through a symlink). */
function isRegularFile(path: Buffer): boolean {
  try {
    return lstatSync(path).isFile();
  } catch {
    return false;
  }
}

/** Whether two regular files (not followed through a symlink) hold the same bytes, read a block at a time. */
function sameBytes(a: Buffer, b: Buffer): boolean {
  try {
    const [x, y] = [lstatSync(a), lstatSync(b)];
    if (!x.isFile() || !y.isFile() || x.size !== y.size) return false;
  } catch {
    return false;
  }
  let fa: number | null = null;
  let fb: number | null = null;
  try {
    fa = openSync(a, 'r');
    fb = openSync(b, 'r');
    const [ba, bb] = [Buffer.alloc(1 << 20), Buffer.alloc(1 << 20)];
    for (;;) {
      const read = readSync(fa, ba, 0, ba.length, null);
      if (readSync(fb, bb, 0, bb.length, null) !== read) return false;
      if (read === 0) return true;
      if (!ba.subarray(0, read).equals(bb.subarray(0, read))) return false;
    }
  } catch {
    return false;
  } finally {
    if (fa !== null) closeSync(fa);
    if (fb !== null) closeSync(fb);
  }
}

/**
 * Moves the working tree from `current` to the target's tree. Where descriptor-relative paths
 * exist (Linux), git writes the target's files into a private staging folder in the git
 * directory, and the folder writer moves them into place and removes what goes, never through a
 * symlink: a process racing the restore cannot make it write or delete outside the working
 * tree. Elsewhere git's own two-tree checkout does it all. Either way, a failure partway puts
 * the working tree back, and the refusal says so.
 */
async function moveTree(plumbing: Plumbing, layout: RepositoryLayout, indexFile: string, current: string, target: Snapshot, changes: readonly TreeChange[], checkpoint: Snapshot, staging: Staged | null): Promise<void> {
  if (staging === null) {
    try {
      await plumbing.switchTree(layout.top, indexFile, current, target.tree);
    } catch (error) {
      throw await putBack(plumbing, layout, current, target, checkpoint, error);
    }
    return;
  }
  // What the move changed before it stopped is all a put-back writes: a path it never reached
  // holds what the checkpoint holds already, and writing it again could fail the same way (a
  // folder made read-only meanwhile) and stop the put-back of the others.
  const touched = new Set<string>();
  try {
    applyOps(layout.top, staging.folder, forwardOps(changes), { touched }, staging.names ?? undefined);
  } catch (error) {
    throw await moveBack(plumbing, layout, current, target, changes.filter((change) => touched.has(change.raw)), checkpoint, error);
  }
}

/** The private folder a restore's files are staged in, and where in it each is. */
interface Staged {
  folder: string;
  /** The name of each path's file in the folder, by path, where they were written side by side (see writePlainFiles); null where git wrote them under their paths. */
  names: Map<string, string> | null;
}

/**
 * Removes the staging folder: one written side by side is empty once every file was moved out of
 * it, and goes with one rmdir; anything else (git's checkout made folders in it, or files were
 * left in it by a move that did not happen) goes whole.
 */
async function removeStaging(staging: Staged): Promise<void> {
  if (staging.names !== null) {
    try {
      rmdirSync(staging.folder);
      return;
    } catch {
      // Not empty: removed whole below.
    }
  }
  await rm(staging.folder, { recursive: true, force: true }).catch(() => undefined);
}

/**
 * Writes the target's files into a private staging folder in the git directory, before the
 * checkpoint and before any file of the working tree is touched; the folder is removed on
 * failure. A smudge filter that fails (git-lfs with an object this clone lacks) refuses the
 * restore here, with nothing written.
 */
async function stageTarget(plumbing: Plumbing, layout: RepositoryLayout, indexFile: string, target: Snapshot, changes: readonly TreeChange[], replaced: boolean, env: Readonly<Record<string, string | undefined>>, attributesTree: string, reads: CheckedReads): Promise<Staged> {
  const staging = stagingFolder(layout.gitDir);
  try {
    await mkdir(staging);
    const written = changes.filter((change) => change.newMode !== ABSENT && change.newMode !== GITLINK);
    const entries = written.map((change) => ({ raw: change.raw, mode: change.newMode, oid: change.newOid }));
    // Written here from their loose blobs where git's checkout would convert nothing (under the
    // target's attributes too, where a .gitattributes it writes is taken from it); else by git.
    const plain = written.length > 0 && !replaced && !checkoutMayConvert(layout, env)
      && (attributesTree === target.tree || treeAttributesConvertNothing(layout.objectsDir, target.tree, entries.map((entry) => entry.raw), layout.objectFormat, reads) === true)
      && writePlainFiles(layout.objectsDir, staging, attributesTree, entries, layout.objectFormat, reads);
    // A .gitattributes the restore writes goes with the files (checkoutPaths takes it from them),
    // one it removes is no attribute of theirs.
    const removed = new Set(changes.filter((change) => change.newMode === ABSENT || change.newMode === GITLINK).map((change) => change.raw));
    if (written.length > 0 && !plain) await plumbing.checkoutPaths(layout.gitDir, indexFile, target.tree, staging, entries, layout.objectFormat, replaced ? null : layout.objectsDir, attributesTree, removed);
    return { folder: staging, names: plain ? plainStagedNames(entries) : null };
  } catch (error) {
    await rm(staging, { recursive: true, force: true }).catch(() => undefined);
    const failed = asWipError(error);
    const lfs = /filter lfs failed|git-lfs|Smudge error/i.test(failed.message)
      ? ": a file's Git LFS object is not in this clone and could not be downloaded; fetch the snapshots with their LFS objects (chant workspace wip fetch, or git lfs fetch --all) and restore again"
      : '';
    throw new WipError('git-failed', `${failed.message}; git failed writing the snapshot's files into a private staging folder, before the checkpoint and before any file of the working tree, so nothing was changed${lfs}`, { cause: error });
  }
}

/**
 * The moves from the old tree to the new: a path is removed unless a file or symlink replaces
 * it (a rename does that in one step), and a gitlink's place is an empty folder.
 */
function forwardOps(changes: readonly TreeChange[]): FolderOp[] {
  return changes.flatMap((change): FolderOp[] => {
    const replacedByFile = change.newMode !== ABSENT && change.newMode !== GITLINK && change.oldMode !== GITLINK;
    return [
      ...(change.oldMode !== ABSENT && !replacedByFile ? [{ raw: change.raw, kind: 'remove' as const }] : []),
      ...(change.newMode === GITLINK ? [{ raw: change.raw, kind: 'folder' as const }] : change.newMode !== ABSENT ? [{ raw: change.raw, kind: 'write' as const }] : []),
    ];
  });
}

/** The moves back from the new tree to the old, whatever of the forward moves was made. */
function backwardOps(changes: readonly TreeChange[]): FolderOp[] {
  return forwardOps(changes.map((change) => ({ ...change, oldMode: change.newMode, newMode: change.oldMode, oldOid: change.newOid, newOid: change.oldOid })));
}

/**
 * After the move into the working tree stopped partway: writes the checkpoint's files back the
 * same safe way, and says so; when even that fails, says which checkpoint to restore.
 */
async function moveBack(plumbing: Plumbing, layout: RepositoryLayout, current: string, target: Snapshot, changes: readonly TreeChange[], checkpoint: Snapshot, error: unknown): Promise<WipError> {
  const race = error instanceof FolderRaceError;
  const what = race
    ? `another process changed ${rawPathText(error.raw)} while the restore wrote (${error.message})`
    : `writing the working tree failed: ${error instanceof Error ? error.message : String(error)}`;
  const code = race ? 'wip-race' : 'git-failed';
  if (changes.length === 0) return new WipError(code, `${what}; restoring ${target.commit.slice(0, 12)} stopped before it wrote or removed any file, so every file is as it was (checkpoint ${checkpoint.commit} holds it too); nothing was written outside the working tree`, { cause: error });
  try {
    await writeBack(plumbing, layout, current, target, changes);
  } catch (again) {
    return new WipError(code, `${what}; restoring ${target.commit.slice(0, 12)} stopped partway and putting the working tree back failed too (${again instanceof Error ? again.message : String(again)}): restore checkpoint ${checkpoint.commit} to get it back (chant workspace wip restore ${checkpoint.commit}); nothing was written outside the working tree`, { cause: error });
  }
  return new WipError(code, `${what}; restoring ${target.commit.slice(0, 12)} stopped partway, and the working tree was put back as it was (checkpoint ${checkpoint.commit} holds it too); nothing was written outside the working tree`, { cause: error });
}

/**
 * Writes the checkpoint's files back over what the move wrote, the same safe way it wrote them.
 * A path that cannot be put back does not stop the others: each is tried, and the error names
 * every path left as the move made it.
 */
async function writeBack(plumbing: Plumbing, layout: RepositoryLayout, current: string, target: Snapshot, changes: readonly TreeChange[]): Promise<void> {
  if (!folderWriterAvailable()) {
    const scratch = temporaryIndexFile(layout.gitDir);
    try {
      await plumbing.switchTreeBack(layout.top, scratch, current, target.tree);
    } finally {
      rmSync(scratch, { force: true });
    }
    return;
  }
  const staging = stagingFolder(layout.gitDir);
  const scratch = `${staging}.index`;
  try {
    await mkdir(staging);
    const back = changes.filter((change) => change.oldMode !== ABSENT && change.oldMode !== GITLINK);
    if (back.length > 0) await plumbing.checkoutPaths(layout.gitDir, scratch, current, staging, back.map((change) => ({ raw: change.raw, mode: change.oldMode, oid: change.oldOid })), layout.objectFormat);
    const failures: Array<{ raw: string; error: unknown }> = [];
    applyOps(layout.top, staging, backwardOps(changes), { failures });
    if (failures.length > 0) {
      const first = failures[0] as { raw: string; error: unknown };
      const why = first.error instanceof Error ? first.error.message : String(first.error);
      throw new Error(`${failures.length} path${failures.length === 1 ? '' : 's'} could not be put back (${failures.slice(0, 10).map((failure) => rawPathText(failure.raw)).join(', ')}${failures.length > 10 ? ', ...' : ''}; ${rawPathText(first.raw)}: ${why}), the others were`);
    }
  } finally {
    await rm(staging, { recursive: true, force: true }).catch(() => undefined);
    await rm(scratch, { force: true });
  }
}

/**
 * A restore cancelled once its files were written: they go back as the checkpoint holds them,
 * and the call ends `wip-cancelled`; when putting them back fails, the error says which
 * checkpoint to restore.
 */
async function cancelledBack(plumbing: Plumbing, layout: RepositoryLayout, current: string, target: Snapshot, changes: readonly TreeChange[], checkpoint: Snapshot, cancelled: WipError): Promise<WipError> {
  try {
    await writeBack(plumbing, layout, current, target, changes);
  } catch (again) {
    return new WipError('git-failed', `the restore of ${target.commit.slice(0, 12)} was cancelled after it wrote the working tree, and putting it back failed (${again instanceof Error ? again.message : String(again)}): restore checkpoint ${checkpoint.commit} to get it back (chant workspace wip restore ${checkpoint.commit})`, { cause: cancelled });
  }
  return cancelled;
}

/** How long a restore waits, in turn, for another git process to let the index go before its reset. */
const INDEX_LOCK_WAITS_MS = [25, 50, 100, 200, 400];

/** What git says when an object of the tree it resets the index to cannot be read (asked of its words, paths taken out). */
const UNREADABLE_TREE = /unable to read tree|is corrupt|bad object|could not read [0-9a-f]{40}|unable to unpack|failed to unpack tree/i;

/** git's words in a message, without the paths it quotes or says an object is stored in. */
function gitWords(message: string): string {
  return message.replace(/'[^']*'/g, "''").replace(/\(stored in [^)]*\)/g, '()');
}

/**
 * The last step of a whole restore: the reset of the checkout's index to `resetTo`. git reads
 * the whole tree before it writes the index, and writes nothing when it fails.
 * - Where git could not read the tree (an object of the index tree a checkpoint recorded
 *   unreadable; only its root is checked before the first write), nothing will change that:
 *   the working tree is put back as the checkpoint holds it, so the restore changed nothing.
 * - An index another git process holds (an editor's `git status`; its lock file is there) is
 *   waited for a little, unless the caller cancels.
 * - Past that, and for any other failure (a lock that could not be made, a full disk), the
 *   refusal says the files were written and how to finish or undo, and leaves them: those
 *   failures go away, and putting the working tree back would overwrite whatever was written
 *   there since the move.
 * A reset git did although its exit said otherwise (git stopped after it renamed the new index
 * into place: the index holds the tree) is a reset.
 */
async function resetIndexOrBack(plumbing: Plumbing, layout: RepositoryLayout, current: string, target: Snapshot, changes: readonly TreeChange[], checkpoint: Snapshot, resetTo: string, signal: AbortSignal | undefined): Promise<void> {
  for (let attempt = 0; ; attempt += 1) {
    try {
      await plumbing.resetIndex(layout.top, resetTo);
      return;
    } catch (error) {
      if (await indexHoldsTree(layout.indexFile, layout.objectFormat, resetTo)) return;
      const message = asWipError(error).message;
      // git says so only when the lock file was there (EEXIST), which may be gone by now.
      const locked = /index\.lock': File exists/.test(message) || existsSync(`${layout.indexFile}.lock`);
      if (!locked && UNREADABLE_TREE.test(gitWords(message))) throw await resetFailedBack(plumbing, layout, current, target, changes, checkpoint, resetTo, error);
      const wait = locked ? INDEX_LOCK_WAITS_MS[attempt] : undefined;
      const finish = `run git read-tree --reset ${resetTo} to finish, or restore checkpoint ${checkpoint.commit} to undo (chant workspace wip restore ${checkpoint.commit})`;
      if (locked && signal?.aborted === true) {
        throw new WipError('wip-cancelled', `cancelled by the caller while the restore of ${target.commit.slice(0, 12)} waited to reset the index, which another git process held (${message}): its files were written and are left, and the index was not reset; ${finish}`, { cause: signal.reason });
      }
      if (wait === undefined) {
        const why = locked ? `another git process held the index (${message})` : `git could not reset the index (${message})`;
        throw new WipError('git-failed', `restoring ${target.commit.slice(0, 12)} wrote the working tree, but the index was not reset to ${resetTo}, since ${why}: ${locked ? 'when it ends, ' : ''}${finish}`, { cause: error });
      }
      await pause(wait, signal);
    }
  }
}

/** Waits `ms`, or less when `signal` aborts. */
function pause(ms: number, signal: AbortSignal | undefined): Promise<void> {
  return new Promise((resolve) => {
    const done = () => {
      clearTimeout(timer);
      signal?.removeEventListener('abort', done);
      resolve();
    };
    const timer = setTimeout(done, ms);
    signal?.addEventListener('abort', done, { once: true });
  });
}

/**
 * Where the reset of the checkout's index to `resetTo` failed since git could not read that tree:
 * git wrote no index, so the working tree is put back as the
 * checkpoint holds it, and the refusal says so; when even that fails, it says which checkpoint to
 * restore.
 */
async function resetFailedBack(plumbing: Plumbing, layout: RepositoryLayout, current: string, target: Snapshot, changes: readonly TreeChange[], checkpoint: Snapshot, resetTo: string, error: unknown): Promise<WipError> {
  const what = `resetting the index to ${resetTo} failed (${asWipError(error).message}), so the index was left as it was`;
  if (changes.length === 0) return new WipError('git-failed', `${what}; restoring ${target.commit.slice(0, 12)} changed no file`, { cause: error });
  try {
    await writeBack(plumbing, layout, current, target, changes);
  } catch (again) {
    return new WipError('git-failed', `${what}; restoring ${target.commit.slice(0, 12)} stopped after writing the working tree, and putting it back failed too (${again instanceof Error ? again.message : String(again)}): restore checkpoint ${checkpoint.commit} to get it back (chant workspace wip restore ${checkpoint.commit})`, { cause: error });
  }
  return new WipError('git-failed', `${what}; restoring ${target.commit.slice(0, 12)} stopped, and the working tree was put back as it was, so nothing in it was changed (checkpoint ${checkpoint.commit} holds it too)`, { cause: error });
}

/**
 * Where git's own checkout failed partway (without the folder writer): puts back the tree it
 * was moving from, and says so; when even that fails, says which checkpoint to restore.
 */
async function putBack(plumbing: Plumbing, layout: RepositoryLayout, current: string, target: Snapshot, checkpoint: Snapshot, error: unknown): Promise<WipError> {
  const failed = asWipError(error);
  const scratch = temporaryIndexFile(layout.gitDir);
  try {
    await plumbing.switchTreeBack(layout.top, scratch, current, target.tree);
  } catch (again) {
    return new WipError('git-failed', `${failed.message}; restoring ${target.commit.slice(0, 12)} stopped partway and putting the working tree back failed too (${asWipError(again).message}): restore checkpoint ${checkpoint.commit} to get it back (chant workspace wip restore ${checkpoint.commit})`, { cause: error });
  } finally {
    rmSync(scratch, { force: true });
  }
  return new WipError('git-failed', `${failed.message}; restoring ${target.commit.slice(0, 12)} stopped partway, and the working tree was put back as it was, so nothing in it was changed (checkpoint ${checkpoint.commit} holds it too)`, { cause: error });
}
