import { Command, Option } from 'clipanion';
import { WipError, WipStore } from '../../../../lib/index.js';
import { branchOption, interruptible, timeoutMs, timeoutOption, WriteCommand } from '../../../base-command.js';

export class WipPruneCommand extends WriteCommand<'prune'> {
  static override paths = [['workspace', 'wip', 'prune']];
  static override usage = Command.Usage({
    description: 'Rewrite chains down to the snapshots the retention rules keep.',
    details: 'A snapshot stays when any rule keeps it; the newest, and the checkpoint of the last restore (so it can be undone), always stay. With no rule given, the rules of the retain block of the workspace declaration apply. The kept snapshots are written again with the same trees, messages and dates; the dropped ones\' reflog entries are expired and their objects go with git\'s gc, or at once with --gc. wip push never carries a pruned chain to the remote: wip prune --push does, with a lease on what chant recorded the remote to hold, and is refused when another box pushed meanwhile. A SIGINT, SIGTERM or SIGHUP before the chains move ends the prune as wip-cancelled with no chain moved; one after lets it finish and print what it did, its --gc left undone (a second one ends it at once).',
    examples: [
      ['What a prune would drop', 'chant workspace wip prune --keep-last 100 --keep-within 7d --keep-labelled --dry-run'],
      ['Keep a week, and free the space now', 'chant workspace wip prune --keep-within 7d --gc'],
      ['Keep the newest 100 here and on the remote', 'chant workspace wip prune --keep-last 100 --push'],
    ],
  });
  readonly action = 'prune';
  branch = Option.String('--branch', { description: "Only this branch's chain; every chain when absent." });
  keepLast = Option.String('--keep-last', { description: 'Keep the newest n snapshots.' });
  keepWithin = Option.String('--keep-within', { description: 'Keep every snapshot taken within this age: a number and s, m, h, d or w (7d).' });
  keepLabelled = Option.Boolean('--keep-labelled', false, { description: 'Keep every snapshot with a label.' });
  dryRun = Option.Boolean('--dry-run', false, { description: 'Say what would be dropped; write nothing.' });
  push = Option.Boolean('--push', false, { description: 'Push the pruned chains, each with a lease on the value chant recorded for the remote; refused for a ref another box pushed to meanwhile.' });
  timeout = timeoutOption();
  gc = Option.Boolean('--gc', false, { description: 'Run git gc --prune=now afterwards (a repack of the whole repository).' });

  perform() {
    // Digits only: Number() would take 0x2, 1e1, +2 and ' 2' as numbers, and '' as 0.
    if (this.keepLast !== undefined && !/^[1-9][0-9]{0,14}$/.test(this.keepLast)) throw new WipError('write-usage-invalid', `--keep-last takes a whole number from 1, in digits; it was given ${JSON.stringify(this.keepLast)}`);
    const store = new WipStore({ cwd: this.context.cwd, networkTimeoutMs: timeoutMs(this.timeout) });
    const branch = branchOption(this.branch);
    return interruptible(this.context, (signal) => store.prune({ branch, keepLast: this.keepLast === undefined ? null : Number(this.keepLast), keepWithin: this.keepWithin ?? null, keepLabelled: this.keepLabelled, dryRun: this.dryRun, push: this.push, gc: this.gc, signal }));
  }
}
