import { Command, Option } from 'clipanion';
import { WipStore } from '../../../../lib/index.js';
import { WriteCommand } from '../../../base-command.js';

export class WipDiffCommand extends WriteCommand<'diff'> {
  static override paths = [['workspace', 'wip', 'diff']];
  static override usage = Command.Usage({
    description: 'Say what differs between two snapshots, a snapshot and another commit, or a snapshot and the working tree.',
    details: 'Each side is a snapshot or any commit git resolves (HEAD, a branch); without <b> the second side is the working tree as a save would record it. Every path that differs, with its change, modes, object ids and line counts. Reads only; prints the document with or without --json.',
    examples: [
      ['What a turn changed', 'chant workspace wip diff 4b76a2ec 9c1d0e22 --json'],
      ['A snapshot against the working tree', 'chant workspace wip diff 4b76a2ec'],
      ['A snapshot against HEAD', 'chant workspace wip diff 4b76a2ec HEAD'],
    ],
  });
  readonly action = 'diff';
  a = Option.String({ required: true, name: 'a' });
  b = Option.String({ required: false, name: 'b' });

  perform() {
    return new WipStore({ cwd: this.context.cwd, env: this.context.env }).diff({ from: this.a, to: this.b ?? null });
  }
}
