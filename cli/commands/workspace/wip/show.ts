import { Command, Option } from 'clipanion';
import { WipStore } from '../../../../lib/index.js';
import { WriteCommand } from '../../../base-command.js';

export class WipShowCommand extends WriteCommand<'show'> {
  static override paths = [['workspace', 'wip', 'show']];
  static override usage = Command.Usage({
    description: 'Show one snapshot: what it changed against the commit before it, and every file it holds.',
    details: 'The snapshot is named by its commit (any name git resolves to it). Reads only; prints the document with or without --json.',
    examples: [['One snapshot', 'chant workspace wip show 4b76a2ec --json']],
  });
  readonly action = 'show';
  snapshot = Option.String({ required: true, name: 'snapshot' });

  perform() {
    return new WipStore({ cwd: this.context.cwd, env: this.context.env }).show({ snapshot: this.snapshot });
  }
}
