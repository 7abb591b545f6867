import { Command, Option } from 'clipanion';
import { checkText, parseSize, WipError, WipStore, writeDocument, writeFailureDocument } from '../../../../lib/index.js';
import { interruptible, printDocument, refusalOf, WriteCommand } from '../../../base-command.js';

export class WipRestoreCommand extends WriteCommand<'restore'> {
  static override paths = [['workspace', 'wip', 'restore']];
  static override usage = Command.Usage({
    description: 'Put the working tree back as a snapshot holds it, after a pre-restore checkpoint of how it is.',
    details: "Restores the branch's newest save, or the snapshot named by its commit (a checkpoint is restored by naming it). Restoring the checkpoint undoes the restore, index included. The index is reset to HEAD, so everything restored reads as uncommitted; HEAD and the branch stay where they are; ignored files, submodules and embedded repositories are never touched. Paths after the snapshot (after -- when one could read as an option) limit the restore to those files and folders, from the repository root, leaving the rest of the working tree and the index alone; the checkpoint still holds the whole tree. --dry-run writes nothing and prints the plan (a wip-changes document, action plan): what would be written, removed or refused, and a fingerprint that --expect takes, so the restore is refused with wip-plan-stale when the working tree, the index or HEAD changed since, or when it restores another snapshot or other paths than the dry run did.",
    examples: [
      ['Restore the newest save', 'chant workspace wip restore'],
      ['Restore one snapshot by its commit', 'chant workspace wip restore 4b76a2ec --json'],
      ['Restore one folder from a snapshot', 'chant workspace wip restore 4b76a2ec -- src/parser'],
      ['Preview, then restore what was previewed', 'chant workspace wip restore 4b76a2ec --dry-run && chant workspace wip restore 4b76a2ec --expect <fingerprint>'],
    ],
  });
  static positionals = [{ name: 'snapshot', required: false }, { name: 'path', required: false, repeated: true }];
  readonly action = 'restore';
  // One list: clipanion hands an optional positional beside a rest to the rest. The first is the
  // snapshot, any after it (after -- when one could read as an option) the paths.
  targets = Option.Rest({ name: 'snapshot' });
  by = Option.String('--by', { description: 'Who restores, recorded on the checkpoint (one line, at most 200 characters).' });
  dryRun = Option.Boolean('--dry-run', false, { description: 'Say what the restore would write, remove or refuse, and its fingerprint; write nothing.' });
  maxFileSize = Option.String('--max-file-size', { description: 'The checkpoint leaves out new untracked files over this size, and the restore refuses to write over them: bytes, or 512k, 64M, 2G (default: the declaration\'s wip.maxFileSize, else 32M); give the size a snapshot was saved with to put back a file that large.' });
  allowInexact = Option.Boolean('--allow-inexact', false, { description: 'Overwrite or remove files the checkpoint cannot give back byte for byte (git\'s attributes, an end-of-line conversion or a clean filter, change what it stores of them), which are otherwise refused; they are named in inexact.' });
  expect = Option.String('--expect', { description: 'The fingerprint a --dry-run printed: refuse (wip-plan-stale) when the working tree, the index or HEAD changed since, or the dry run was of another snapshot or other paths.' });

  override async execute(): Promise<number> {
    if (!this.dryRun) return super.execute();
    let document;
    try {
      // The restore checks --expect; a dry run only makes a new plan, and would print it as if the
      // fingerprint given still held: refused, so that a stale one is never read as confirmed.
      if (this.expect !== undefined) {
        throw new WipError('write-usage-invalid', '--expect is checked by the restore, not by --dry-run, which makes a new plan and prints its own fingerprint: run the restore with --expect, or compare the two fingerprints');
      }
      document = writeDocument('plan', await this.#store().plan({ snapshot: this.targets[0] ?? null, paths: this.#paths(), allowInexact: this.allowInexact }));
    } catch (error) {
      printDocument(this.context, writeFailureDocument('plan', refusalOf(error)));
      return 1;
    }
    printDocument(this.context, document);
    return 0;
  }

  perform() {
    const store = this.#store();
    // Checked here, --by first as the SDK checks it, so a refusal names --expect as typed.
    checkText('--by', this.by ?? null);
    if (this.expect !== undefined && !/^[0-9a-f]{64}$/.test(this.expect)) {
      throw new WipError('write-usage-invalid', `--expect takes the fingerprint a --dry-run printed (64 lower-case hex digits); it was given ${JSON.stringify(this.expect)}`);
    }
    // A signal cancels the restore, which then puts back what it moved: ended outright, it
    // could stop between moving the files and resetting the index.
    return interruptible(this.context, (signal) => store.restore({ snapshot: this.targets[0] ?? null, by: this.by ?? null, paths: this.#paths(), expect: this.expect ?? null, allowInexact: this.allowInexact, signal }));
  }

  #store(): WipStore {
    return new WipStore({ cwd: this.context.cwd, env: this.context.env, ...(this.maxFileSize === undefined ? {} : { maxFileSize: parseSize(this.maxFileSize, '--max-file-size') }) });
  }

  #paths(): string[] | null {
    if (this.targets.length > 1) return this.targets.slice(1);
    // A -- with no path after it (a script's empty list of paths) names no path, which the SDK
    // refuses, rather than none, which restores the whole tree. clipanion drops the --, so it is
    // looked for in the words given.
    return endsWithDashes(this.context.argv ?? []) ? [] : null;
  }
}

/** The options of restore that take a value: the word after one is its value, even `--`. */
const VALUED = new Set(['--by', '--max-file-size', '--expect']);

/** Whether the words' first `--` that is no option's value is their last. */
function endsWithDashes(words: readonly string[]): boolean {
  for (let at = 0; at < words.length; at += 1) {
    const word = words[at] as string;
    if (word === '--') return at === words.length - 1;
    if (VALUED.has(word)) at += 1;
  }
  return false;
}
