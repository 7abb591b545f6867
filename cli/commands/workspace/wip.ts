import { Command, Option } from 'clipanion';
import { readDocument, readFailureDocument, WipError, WipStore } from '../../../lib/index.js';
import { branchOption, printDocument, READ_DOCUMENT, refusalOf } from '../../base-command.js';
import type { ChantContext } from '../../base-command.js';
import { DEFAULT_SHOWN, formatListing } from '../../listing.js';

export class WipReadCommand extends Command<ChantContext> {
  static override paths = [['workspace', 'wip']];
  static override usage = Command.Usage({
    description: "List every branch's snapshots, newest first, and where replication stands.",
    details: 'Reads local refs only and never fetches. Without --json it prints a listing for people, the 10 newest snapshots of each branch unless --limit or --all says otherwise, with anything a snapshot carries shown escaped; with --json, or when it fails, the document, every snapshot unless --limit says otherwise. --before pages back from a snapshot; --changes adds what each snapshot changed against the one before it.',
    examples: [
      ['Every branch, as JSON', 'chant workspace wip --json'],
      ['One branch, its 50 newest snapshots', 'chant workspace wip --branch chant/work/W-001 --limit 50'],
      ['The newest snapshot of each branch, for a panel', 'chant workspace wip --json --limit 1'],
      ['A timeline page with what each turn changed, then the page before it', 'chant workspace wip --json --changes --limit 20 && chant workspace wip --json --changes --limit 20 --before <last commit of the page>'],
    ],
  });
  static document: string | null = READ_DOCUMENT;
  branch = Option.String('--branch', { description: "Only this branch's snapshots: its name, or refs/heads/<name>." });
  limit = Option.String('--limit', { description: 'At most this many snapshots per branch, the newest (a whole number from 1).' });
  all = Option.Boolean('--all', false, { description: 'Show every snapshot in the listing (the document holds them all anyway).' });
  before = Option.String('--before', { description: 'A page further back: only the snapshots older than this one (its full commit id), on the chain that holds it; one no chain holds (pruned since) is refused.' });
  changes = Option.Boolean('--changes', false, { description: 'Give each snapshot what it changed against the one before it: files, lines added and removed.' });
  json = Option.Boolean('--json', false, { description: 'Print the JSON document instead of the listing.' });

  async execute(): Promise<number> {
    try {
      const limit = this.#limit();
      if (this.before !== undefined && !/^[0-9a-f]{40,64}$/.test(this.before)) {
        throw new WipError('write-usage-invalid', `--before takes a snapshot's full commit id (40 to 64 lower-case hex digits); it was given ${JSON.stringify(this.before)}`);
      }
      const store = new WipStore({ cwd: this.context.cwd, env: this.context.env });
      const branch = branchOption(this.branch, true);
      const result = await store.list({ branch, limit: this.json ? limit : null, before: this.before ?? null, changes: this.changes });
      if (this.json) {
        printDocument(this.context, readDocument(result));
        return 0;
      }
      const otherBranches = branch !== null && result.branches.length === 0 ? (await store.list({ limit: 1 })).branches.map((entry) => entry.branch) : [];
      this.context.stdout.write(formatListing(result, { limit: this.all ? null : (limit ?? DEFAULT_SHOWN), branch, otherBranches }));
      return 0;
    } catch (error) {
      printDocument(this.context, readFailureDocument(refusalOf(error)));
      return 1;
    }
  }

  #limit(): number | null {
    if (this.limit === undefined) return null;
    if (this.all) throw new WipError('write-usage-invalid', '--limit and --all contradict each other; give one');
    if (!/^[1-9][0-9]{0,8}$/.test(this.limit)) throw new WipError('write-usage-invalid', `--limit takes a whole number from 1; it was given ${JSON.stringify(this.limit)}`);
    return Number(this.limit);
  }
}
