import { Command, Option } from 'clipanion';
import { WipStore } from '../../../../lib/index.js';
import { branchOption, WriteCommand } from '../../../base-command.js';

export class WipStorageCommand extends WriteCommand<'storage'> {
  static override paths = [['workspace', 'wip', 'storage']];
  static override usage = Command.Usage({
    description: 'Say what each chain of snapshots costs: how many, how old, and how many bytes on disk.',
    details: 'bytes counts what the chain\'s objects take as stored, leaving out everything a branch, tag, remote-tracking ref or HEAD reaches: about what deleting the chain frees. total counts objects two chains share once. Reads local refs only; prints the document with or without --json.',
    examples: [['Every chain', 'chant workspace wip storage --json']],
  });
  readonly action = 'storage';
  branch = Option.String('--branch', { description: "Only this branch's chain (its full name, without refs/heads/)." });

  perform() {
    return new WipStore({ cwd: this.context.cwd }).storage({ branch: branchOption(this.branch) });
  }
}
