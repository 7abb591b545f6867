// `restore`: the working tree put back as a snapshot holds it, after a pre-restore checkpoint.
import { rmSync } from 'node:fs';
import type { RestoreResult } from '../documents/wip-write.js';
import { indexHoldsTree } from '../git/formats/index-file.js';
import { sortPaths } from '../order.js';
import { checkText } from '../text.js';
import { checkoutOf, openCheckout, restoreTarget } from './checkout.js';
import { checkIdentity, locked } from './context.js';
import type { StoreContext } from './context.js';
import { recordSnapshot } from './record.js';
import { checkWritable, ignoredInTheWay, indexNotLocked } from './restore-checks.js';
import { stageWorkingTree } from './staging.js';
import { pathsInMessage, WipError } from '../errors.js';

/**
 * Options of {@link WipStore.restore}.
 * @public
 */
export interface RestoreOptions {
  /** The snapshot to restore, by commit (any name git resolves); the branch's latest when absent. */
  snapshot?: string | null;
  /** Who restores, recorded on the pre-restore checkpoint. */
  by?: string | null;
}

/** Restores a snapshot; see {@link WipStore.restore}. */
export async function restore(context: StoreContext, options: RestoreOptions): Promise<RestoreResult> {
  const by = checkText('--by', options.by);
  const opened = await openCheckout(context.plumbing, context.cwd, context.env ?? process.env);
  const layout = opened.layout;
  const checkout = await checkoutOf(context.plumbing, opened);
  const target = await restoreTarget(context.plumbing, checkout, options.snapshot ?? null);
  await checkIdentity(context, layout, by);
  return locked(context, layout, async () => {
    const indexFile = await stageWorkingTree(context.plumbing, checkout);
    try {
      const current = await context.plumbing.writeTree(indexFile);
      const changes = await context.plumbing.diffTrees(current, target.tree);
      // Checked before anything is written, the checkpoint included: git would refuse some of
      // these only after writing other files.
      await checkWritable(context.plumbing, layout, target, changes);
      const blocked = await ignoredInTheWay(layout.top, changes);
      if (blocked.length > 0) {
        throw new WipError(
          'wip-restore-blocked',
          `restoring ${target.commit.slice(0, 12)} would delete or overwrite ignored files, so nothing was changed: ${pathsInMessage(blocked)}`,
          { paths: blocked },
        );
      }
      await indexNotLocked(layout);
      const checkpoint = await recordSnapshot(context.plumbing, context.clock, checkout, current, 'pre-restore', { label: `before ${target.commit.slice(0, 12)}`, by }, 'tree-and-head');
      // The checkout's index is reset to HEAD unless it holds HEAD's tree already (the usual
      // case: nothing staged), when the reset would leave it as it is. It is read while git
      // writes the working tree, which leaves that index alone.
      const [, reset] = await Promise.all([
        changes.length > 0 ? context.plumbing.switchTree(layout.top, indexFile, current, target.tree) : null,
        opened.headTree === null ? true : indexHoldsTree(layout.indexFile, layout.objectFormat, opened.headTree).then((holds) => !holds),
      ]);
      if (reset) await context.plumbing.resetIndex(layout.top, checkout.head);
      return {
        branch: checkout.branch,
        ref: checkout.ref,
        head: checkout.head,
        snapshot: target,
        checkpoint,
        headMoved: target.head !== checkout.head,
        paths: sortPaths(changes.map((change) => change.path)),
      };
    } finally {
      rmSync(indexFile, { force: true });
    }
  });
}
