import { Command, Option } from 'clipanion';
import { asWipError, storageDocument, storageFailureDocument, WIP_STORAGE_ID, WipStore } from '../../../../lib/index.js';
import { printDocument } from '../../../base-command.js';
import type { ChantContext } from '../../../base-command.js';

export class WipStorageCommand extends Command<ChantContext> {
  static override paths = [['workspace', 'wip', 'storage']];
  static override usage = Command.Usage({
    description: 'Say what each chain of snapshots costs: how many, how old, and how many bytes on disk.',
    details: 'bytes counts what the chain\'s objects take as stored, leaving out everything a branch, tag, remote-tracking ref or HEAD reaches: about what deleting the chain frees. total counts objects two chains share once. Reads local refs only; prints the document with or without --json.',
    examples: [['Every chain', 'chant workspace wip storage --json']],
  });
  static document: string | null = WIP_STORAGE_ID;
  branch = Option.String('--branch', { description: "Only this branch's chain (its full name, without refs/heads/)." });
  json = Option.Boolean('--json', false, { description: 'Print the JSON document (printed either way).' });

  async execute(): Promise<number> {
    try {
      printDocument(this.context, storageDocument(await new WipStore({ cwd: this.context.cwd }).storage({ branch: this.branch ?? null })));
      return 0;
    } catch (error) {
      printDocument(this.context, storageFailureDocument('storage', asWipError(error)));
      return 1;
    }
  }
}
