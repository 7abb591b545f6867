import { Command, Option } from 'clipanion';
import { changesFailureDocument, showDocument, WipStore, WIP_CHANGES_ID } from '../../../../lib/index.js';
import { printDocument, refusalOf } from '../../../base-command.js';
import type { ChantContext } from '../../../base-command.js';

export class WipShowCommand extends Command<ChantContext> {
  static override paths = [['workspace', 'wip', 'show']];
  static override usage = Command.Usage({
    description: 'Show one snapshot: what it changed against the commit before it, and every file it holds.',
    details: 'The snapshot is named by its commit (any name git resolves to it). Reads only; prints the document with or without --json.',
    examples: [['One snapshot', 'chant workspace wip show 4b76a2ec --json']],
  });
  static document: string | null = WIP_CHANGES_ID;
  snapshot = Option.String({ required: true, name: 'snapshot' });
  json = Option.Boolean('--json', false, { description: 'Print the JSON document (printed either way).' });

  async execute(): Promise<number> {
    try {
      printDocument(this.context, showDocument(await new WipStore({ cwd: this.context.cwd, env: this.context.env }).show({ snapshot: this.snapshot })));
      return 0;
    } catch (error) {
      printDocument(this.context, changesFailureDocument('show', refusalOf(error)));
      return 1;
    }
  }
}
