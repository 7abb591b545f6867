// `save`: a snapshot of the whole working tree onto the branch's wip ref.
import { rmSync } from 'node:fs';
import type { SecretFinding } from '../documents/replication.js';
import type { BranchPrune } from '../documents/storage.js';
import { isWipError, WipError } from '../errors.js';
import type { SaveResult } from '../documents/wip-write.js';
import { addedBlobs } from '../git/storage.js';
import { scanBlobs } from '../replication/secret-gate.js';
import { GIVEN_FIELDS } from '../snapshot/format.js';
import type { SnapshotNotes } from '../snapshot/format.js';
import { checkText } from '../text.js';
import { branchOf, openCheckout, readTip } from './checkout.js';
import { checkIdentity, loadDeclared, locked, replicatorOf } from './context.js';
import type { StoreContext } from './context.js';
import { prune } from './prune.js';
import { recordSnapshot } from './record.js';
import { stageWorkingTree, unsavedOf, unsavedPaths, viaStatus } from './staging.js';
import { workingTreeByStatus } from './working-tree.js';

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
}

/** Takes a snapshot; see {@link WipStore.save}. */
export async function save(context: StoreContext, options: SaveOptions): Promise<SaveResult> {
  // Each note the snapshot format takes from a caller, checked in the format's order.
  const notes: Record<string, string | null> = {};
  for (const { name, option } of GIVEN_FIELDS) notes[name] = checkText(option, options[name]);
  const by = notes.by ?? null;
  const opened = await openCheckout(context.plumbing, context.cwd, context.env ?? process.env);
  const layout = opened.layout;
  const { policy, retain } = await loadDeclared(context, layout);
  if (options.prune === true && retain === null) {
    throw new WipError('write-usage-invalid', 'save --prune applies the retain block of the workspace declaration, and no box declares retain; give one, or run wip prune with rules');
  }
  const checkout = branchOf(opened);
  await checkIdentity(context, layout, by);
  const { created, snapshot, unsaved } = await locked(context, layout, async () => {
    const fast = viaStatus(context.staging, layout) ? await workingTreeByStatus(context.plumbing, layout, checkout.head, checkout.ref) : null;
    if (fast !== null) {
      checkout.tip = fast.tip;
      return { ...(await recordSnapshot(context.plumbing, context.clock, checkout, fast.tree, 'save', notes, 'exact')), unsaved: unsavedOf(fast.gitlinks) };
    }
    // The tip is read while git stages the working tree: it is only needed after.
    const [tip, staged] = await Promise.allSettled([readTip(context.plumbing, checkout.ref), stageWorkingTree(context.plumbing, checkout)]);
    if (staged.status === 'rejected') throw staged.reason;
    const indexFile = staged.value;
    try {
      if (tip.status === 'rejected') throw tip.reason;
      checkout.tip = tip.value;
      const tree = await context.plumbing.writeTree(indexFile);
      // Reading the gitlinks from the index overlaps the commit and the ref update.
      const [recorded, unsaved] = await Promise.all([
        recordSnapshot(context.plumbing, context.clock, checkout, tree, 'save', notes, 'exact'),
        unsavedPaths(indexFile, layout.objectFormat),
      ]);
      return { ...recorded, unsaved };
    } finally {
      rmSync(indexFile, { force: true });
    }
  });
  const findings = options.scan === true ? (await scanSnapshot(context, snapshot.commit)).filter((finding) => !policy?.allow.includes(finding.id)) : null;
  let pruned: BranchPrune | null = null;
  if (retain !== null && (options.prune === true || retain.onSave)) {
    try {
      pruned = (await prune({ ...context, policy: null }, { branch: checkout.branch, ...retain.rules })).branches[0] ?? null;
    } catch (error) {
      // A save in another worktree moved the chain meanwhile: the snapshot stands, the next save prunes.
      if (!isWipError(error, 'wip-race')) throw error;
    }
  }
  // The snapshot is safe on disk by now: a push that fails is reported, never a failed save. A
  // chain the prune rewrote goes with a lease on what chant recorded of the remote, as prune --push.
  const rewritten = pruned !== null && pruned.next !== pruned.tip ? [checkout.ref] : [];
  const replication = policy?.has('save') ? await replicatorOf(context, policy).after('save', { leased: rewritten }) : null;
  return {
    branch: checkout.branch, ref: checkout.ref, created, snapshot, replication,
    ...(findings === null ? {} : { findings }), ...(pruned === null ? {} : { pruned }), ...(unsaved.length > 0 ? { unsaved } : {}),
  };
}


/** The secret findings in what a snapshot adds over the one below it (or over its head, for a first one). */
async function scanSnapshot(context: StoreContext, commit: string): Promise<SecretFinding[]> {
  const { blobs } = await addedBlobs(context.git, context.cwd, commit, [`${commit}^`]);
  return scanBlobs(context.git, context.cwd, blobs);
}
