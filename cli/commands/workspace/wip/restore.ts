import { Command, Option } from 'clipanion';
import { WipStore } from '../../../../lib/index.js';
import { WriteCommand } from '../../../base-command.js';

export class WipRestoreCommand extends WriteCommand<'restore'> {
  static override paths = [['workspace', 'wip', 'restore']];
  static override usage = Command.Usage({
    description: 'Put the working tree back as a snapshot holds it, after a pre-restore checkpoint of how it is.',
    details: "Restores the branch's newest save, or the snapshot named by its commit (a checkpoint is restored by naming it). Restoring the checkpoint undoes the restore, index included. The index is reset to HEAD, so everything restored reads as uncommitted; HEAD and the branch stay where they are; ignored files, submodules and embedded repositories are never touched.",
    examples: [
      ['Restore the newest save', 'chant workspace wip restore'],
      ['Restore one snapshot by its commit', 'chant workspace wip restore 4b76a2ec --json'],
    ],
  });
  readonly action = 'restore';
  snapshot = Option.String({ required: false, name: 'snapshot' });
  by = Option.String('--by', { description: 'Who restores, recorded on the checkpoint (one line, at most 200 characters).' });

  perform() {
    return new WipStore({ cwd: this.context.cwd, env: this.context.env }).restore({ snapshot: this.snapshot ?? null, by: this.by ?? null });
  }
}
