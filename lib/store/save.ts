// `save`: a snapshot of the whole working tree onto the branch's wip ref.
import { rmSync } from 'node:fs';
import type { SecretFinding } from '../documents/replication.js';
import type { BranchPrune } from '../documents/storage.js';
import { isWipError, WipError } from '../errors.js';
import type { SaveResult } from '../documents/wip-write.js';
import { addedBlobs, recordLeftBehind } from '../git/storage.js';
import { replicaRef } from '../replication/ref-classes.js';
import { scanBlobs } from '../replication/secret-gate.js';
import { GIVEN_FIELDS } from '../snapshot/format.js';
import type { SnapshotNotes } from '../snapshot/format.js';
import { DEFAULT_MAX_FILE_SIZE, flaggedMessage, leftOutMessage, unsavedOf } from '../snapshot/left-out.js';
import type { FlaggedPath, LeftOut } from '../snapshot/left-out.js';
import { checkText } from '../text.js';
import { branchOf, openCheckout, readTip } from './checkout.js';
import { repairBrokenRefs } from '../git/ref-repair.js';
import { interruptedRestore } from '../managers/restore-marker.js';
import { cancellable, checkIdentity, loadDeclared, locked, replicatorOf, timedOut, withDeadline } from './context.js';
import type { SaveBudget } from './context.js';
import { DEFAULT_SAVE_TIMEOUT_MS } from '../deadline.js';
import { cancelledError, checkNotAborted } from '../errors.js';
import { report } from '../events.js';
import type { ProgressListener } from '../events.js';
import type { StoreContext } from './context.js';
import { pruneChains } from './prune.js';
import { PinnedTipMoved, recordSnapshot } from './record.js';
import { checksumFails, corruptIndex, gitlinksLeftOut, sortByPath, stageWorkingTree, viaStatus } from './staging.js';
import { workingTreeByStatus } from './working-tree.js';
import { keepIndexWritten } from './keep-written.js';

/** How long a save's prune waits for the lock of another worktree (see pruneChains): its snapshot is recorded already. */
const SAVE_PRUNE_LOCK_WAIT_MS = 2_000;

/**
 * Options of {@link WipStore.save}: the notes to record on the snapshot (`label`, `by`), each
 * one line of at most 200 characters.
 * @public
 */
export interface SaveOptions extends SnapshotNotes {
  /**
   * Scan the files the snapshot adds over the one below it for likely secrets, with the rules
   * the push's secret gate uses, and report them in `findings` (the snapshot is recorded either way).
   */
  scan?: boolean;
  /**
   * Prune the branch's chain after the snapshot is recorded, by the rules of the declaration's
   * `retain` block (which needs one); a block with `onSave: true` does it on every save.
   */
  prune?: boolean;
  /**
   * Cancels the save until it records the snapshot: it then rejects with `wip-cancelled`,
   * having moved no ref. Once the snapshot is recorded the save finishes (a push after it is
   * not cancelled either).
   */
  signal?: AbortSignal;
  /** Receives where the save stands: `staging`, `recording`, then the push's phases when the policy pushes on save. */
  onProgress?: ProgressListener;
}

/** Takes a snapshot; see {@link WipStore.save}. */
export async function save(context: StoreContext, options: SaveOptions): Promise<SaveResult> {
  // Each note the snapshot format takes from a caller, checked in the format's order.
  const notes: Record<string, string | null> = {};
  for (const { name, option } of GIVEN_FIELDS) notes[name] = checkText(option, options[name]);
  const by = notes.by ?? null;
  const { signal, onProgress } = options;
  checkNotAborted(signal);
  // Until the snapshot is recorded every git call stops on the signal and at the deadline; the
  // record itself does not. The budget counts from the call; a declaration that sets it is read
  // only later, and moves the deadline then.
  const started = Date.now();
  const budget: SaveBudget = { timeoutMs: context.saveTimeoutMs ?? DEFAULT_SAVE_TIMEOUT_MS, deadline: 0 };
  budget.deadline = started + budget.timeoutMs;
  const work = withDeadline(cancellable(context, signal), budget);
  const stopped = (error: unknown): never => {
    if (signal?.aborted === true) throw cancelledError(signal);
    throw error;
  };
  const opened = await openCheckout(work.plumbing, context.cwd, context.env ?? process.env).catch(stopped);
  const layout = opened.layout;
  const { policy, retain, settings } = await loadDeclared(work, layout).catch(stopped);
  const maxFileSize = context.maxFileSize ?? settings.maxFileSize ?? DEFAULT_MAX_FILE_SIZE;
  if (context.saveTimeoutMs === undefined && settings.saveTimeoutMs !== undefined) {
    budget.timeoutMs = settings.saveTimeoutMs;
    budget.deadline = started + budget.timeoutMs;
  }
  const beforeRecording = (): void => {
    if (Date.now() >= budget.deadline) throw timedOut(budget, 'waiting to record the snapshot');
  };
  if (options.prune === true && retain === null) {
    throw new WipError('write-usage-invalid', 'save --prune applies the retain block of the workspace declaration, and no box declares retain; give one, or run wip prune with rules');
  }
  const checkout = branchOf(opened);
  await checkIdentity(work, layout, by).catch(stopped);
  const { created, snapshot, leftOut, flagged } = await locked(context, layout, async (): Promise<{ created: boolean; snapshot: SaveResult['snapshot']; leftOut: LeftOut[]; flagged: FlaggedPath[] }> => {
    checkNotAborted(signal);
    await repairBrokenRefs(work.plumbing, layout, [checkout.ref]).catch(stopped);
    report(onProgress, 'staging', 0, 1);
    // A corrupt index fails git status: the save then stages into an empty index (stageWorkingTree).
    const fast = viaStatus(context.staging) ? await workingTreeByStatus(work.plumbing, layout, checkout.head, checkout.ref, { maxFileSize, env: context.env ?? process.env, replaced: opened.replaced, keep: true }).catch(async (error: unknown) => ((corruptIndex(error) || (isWipError(error, 'git-failed') && await checksumFails(layout.indexFile, layout.objectFormat))) && signal?.aborted !== true ? null : stopped(error))) : null;
    if (fast !== null) {
      checkout.tip = fast.tip;
      checkNotAborted(signal);
      report(onProgress, 'staging', 1, 1);
      report(onProgress, 'recording', 0, 1);
      beforeRecording();
      const leftOut = sortByPath([...fast.leftOut, ...await gitlinksLeftOut(layout.top, fast.gitlinks)]);
      try {
        const recorded = await recordSnapshot(context.plumbing, context.clock, checkout, fast.tree, { kind: 'save', unsaved: unsavedOf(leftOut) }, notes, 'exact', null, fast.pinned);
        // The snapshot is recorded: what puts back objects a gc took meanwhile never fails the save.
        await fast.keepWritten().catch(() => undefined);
        // The private index git status read is kept for the next save only once the ref holds this snapshot.
        await fast.keepStatusIndex(recorded.snapshot.commit);
        return { ...recorded, leftOut, flagged: fast.flagged };
      } catch (error) {
        // The tip moved off the commit that kept the objects taken from the caches on disk: the
        // tree is staged again through a temporary index, every object written anew.
        if (!(error instanceof PinnedTipMoved)) throw error;
        report(onProgress, 'staging', 0, 1);
      }
    }
    // The tip is read while git stages the working tree: it is only needed after.
    const [tip, staged] = await Promise.allSettled([readTip(work.plumbing, checkout.ref, opened.replaced ? null : layout), stageWorkingTree(work.plumbing, checkout, maxFileSize)]);
    if (staged.status === 'rejected') stopped(staged.reason);
    const { indexFile, leftOut, flagged } = (staged as PromiseFulfilledResult<Awaited<ReturnType<typeof stageWorkingTree>>>).value;
    try {
      if (tip.status === 'rejected') stopped(tip.reason);
      checkout.tip = (tip as PromiseFulfilledResult<Awaited<ReturnType<typeof readTip>>>).value;
      const tree = await work.plumbing.writeTree(indexFile).catch(stopped);
      checkNotAborted(signal);
      report(onProgress, 'staging', 1, 1);
      report(onProgress, 'recording', 0, 1);
      beforeRecording();
      const recorded = await recordSnapshot(context.plumbing, context.clock, checkout, tree, { kind: 'save', unsaved: unsavedOf(leftOut) }, notes, 'exact');
      // As from status above: what puts back objects a gc took meanwhile never fails the save.
      await keepIndexWritten(context.plumbing, layout, tree, indexFile).catch(() => undefined);
      return { ...recorded, leftOut, flagged };
    } finally {
      rmSync(indexFile, { force: true });
    }
  }, () => {
    // Waiting for another save or restore of this worktree counts against the save's own budget.
    checkNotAborted(signal);
    if (Date.now() >= budget.deadline) throw timedOut(budget, 'waiting for the worktree lock another chant process holds');
  });
  report(onProgress, 'recording', 1, 1);
  const unsaved = leftOut.map((entry) => ({ path: entry.path, reason: entry.reason, ...(entry.size === undefined ? {} : { size: entry.size }), message: leftOutMessage(entry) }));
  // The snapshot is recorded: from here a step that fails is reported in skipped, never as a
  // failed save (which said the snapshot was not taken, and kept the push after it from running).
  const skipped: NonNullable<SaveResult['skipped']> = [];
  const skip = (step: 'scan' | 'prune', error: unknown): void => {
    const refusal = isWipError(error) ? error : new WipError('internal-error', error instanceof Error ? error.message : String(error), { cause: error });
    skipped.push({ step, code: refusal.code, message: refusal.message });
  };
  let findings: SecretFinding[] | null = null;
  if (options.scan === true) {
    try {
      findings = (await scanSnapshot(context, snapshot.commit)).filter((finding) => !policy?.allow.includes(finding.id));
    } catch (error) {
      skip('scan', error);
    }
  }
  let pruned: BranchPrune | null = null;
  const pruning = retain !== null && (options.prune === true || retain.onSave);
  if (pruning) {
    try {
      // With the declared policy, so that the prune marker names what the remote held (see prune).
      // The prune takes every worktree's lock; one another save or restore holds is waited for a
      // short while only, since the snapshot is safe already: the save returns, the prune
      // skipped (wip-race), and the next save prunes.
      const lockWaitMs = Math.min(context.lockWaitMs ?? SAVE_PRUNE_LOCK_WAIT_MS, SAVE_PRUNE_LOCK_WAIT_MS);
      pruned = (await pruneChains({ ...context, policy, lockWaitMs }, { branch: checkout.branch, ...retain.rules }, checkout.ref)).branches[0] ?? null;
    } catch (error) {
      // A save in another worktree moved the chain meanwhile (the next save prunes), a commit
      // under the chain is not a snapshot, a lock stayed held: wip prune's to see through.
      skip('prune', error);
    }
  }
  // The snapshot is safe on disk by now: a push that fails is reported, never a failed save. A
  // chain the prune rewrote goes with a lease on what chant recorded of the remote, as prune --push.
  // So does one an earlier save's prune rewrote while the remote was away (its push failed), which
  // is no fast-forward of the record either: without the lease it was refused until a prune
  // dropped something again. The lease goes only on a replica the chain holds (the replicator's
  // heldLeases), so a chain another box pushed above stays refused.
  // A restore killed partway before this save: the snapshot holds the tree it left, and the checkpoint what was there before it.
  const interrupted = interruptedRestore(layout.gitDir);
  const pushing = policy?.has('save') === true;
  const rewritten = pruned !== null && pruned.next !== pruned.tip;
  const leased = rewritten || (pushing && pruning && policy !== null && await leftBehindByPrune(context, policy.remote, checkout.ref)) ? [checkout.ref] : [];
  const replication = pushing && policy !== null ? await replicatorOf(context, policy).after('save', { leased, ...(onProgress === undefined ? {} : { onProgress }) }) : null;
  return {
    branch: checkout.branch, ref: checkout.ref, created, snapshot, replication,
    ...(findings === null ? {} : { findings }), ...(pruned === null ? {} : { pruned }), ...(skipped.length > 0 ? { skipped } : {}), ...(unsaved.length > 0 ? { unsaved } : {}),
    ...(flagged.length > 0 ? { flagged: flagged.map((entry) => ({ ...entry, message: flaggedMessage(entry) })) } : {}),
    ...(interrupted === null ? {} : { interruptedRestore: interrupted }),
  };
}


/**
 * Whether chant recorded the remote holding a value of `ref` that its chain does not reach: a
 * prune rewrote the chain since (or another box pushed; the lease then goes on no such replica).
 */
async function leftBehindByPrune(context: StoreContext, remote: string, ref: string): Promise<boolean> {
  try {
    return await recordLeftBehind(context.git, context.cwd, replicaRef(remote, ref), ref);
  } catch {
    // The snapshot is recorded: a record that cannot be read (its commit gone) leaves the push plain.
    return false;
  }
}

/** The secret findings in what a snapshot adds over the one below it (or over its head, for a first one). */
async function scanSnapshot(context: StoreContext, commit: string): Promise<SecretFinding[]> {
  const { blobs } = await addedBlobs(context.git, context.cwd, commit, [`${commit}^`]);
  return scanBlobs(context.git, context.cwd, blobs);
}
