import { Command, Option } from 'clipanion';
import { readDocument, readFailureDocument, WipStore } from '../../../lib/index.js';
import { printDocument, READ_DOCUMENT, refusalOf } from '../../base-command.js';
import type { ChantContext } from '../../base-command.js';
import { formatListing } from '../../listing.js';

export class WipReadCommand extends Command<ChantContext> {
  static override paths = [['workspace', 'wip']];
  static override usage = Command.Usage({
    description: "List every branch's snapshots, newest first, and where replication stands.",
    details: 'Reads local refs only and never fetches. Without --json it prints a listing for people; with --json, or when it fails, the document.',
    examples: [
      ['Every branch, as JSON', 'chant workspace wip --json'],
      ['One branch', 'chant workspace wip --branch chant/work/W-001'],
    ],
  });
  static document: string | null = READ_DOCUMENT;
  branch = Option.String('--branch', { description: "Only this branch's snapshots (its full name, without refs/heads/)." });
  json = Option.Boolean('--json', false, { description: 'Print the JSON document instead of the listing.' });

  async execute(): Promise<number> {
    try {
      const result = await new WipStore({ cwd: this.context.cwd }).list({ branch: this.branch ?? null });
      if (this.json) printDocument(this.context, readDocument(result));
      else this.context.stdout.write(formatListing(result));
      return 0;
    } catch (error) {
      printDocument(this.context, readFailureDocument(refusalOf(error)));
      return 1;
    }
  }
}
