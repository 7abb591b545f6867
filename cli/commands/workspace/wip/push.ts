import { Command, Option } from 'clipanion';
import { Replicator } from '../../../../lib/index.js';
import { interruptible, timeoutMs, timeoutOption, WriteCommand } from '../../../base-command.js';

export class WipPushCommand extends WriteCommand<'push'> {
  static override paths = [['workspace', 'wip', 'push']];
  static override usage = Command.Usage({
    description: "Push every ref the policy names that the remote doesn't hold as it is locally.",
    details: 'Each ref goes under its own name and is never forced; a ref that would rewrite the remote is listed in rejected with git\'s reason. No pre-push hook runs and git never prompts: a remote that wants a credential the host did not provide is a refused push. The host runs it on the schedule the policy\'s every states. When stderr is a terminal, git\'s progress is shown there; stdout carries the document only. Before anything goes, the files new wip snapshots add are scanned for likely secrets: a snapshot holding one stays local, with those above it, and heldBack lists the path, rule and line of each finding (never the secret) until it is allowed or the file changes. A SIGINT, SIGTERM or SIGHUP stops git and ends the push as wip-cancelled: refs git sent before it are found up to date by the next push, and nothing is recorded locally after it (a second one ends it at once).',
    examples: [
      ['Push what is not yet replicated', 'chant workspace wip push --json'],
      ['Let a finding that is no secret go', 'chant workspace wip push --allow 3f2a9c1e0b7d4a6f8e21'],
      ['Give up on a remote silent for 20 seconds', 'chant workspace wip push --timeout 20 --json'],
    ],
  });
  readonly action = 'push';
  timeout = timeoutOption();
  allow = Option.Array('--allow', { description: 'A secret finding\'s id that is no secret (a test fixture, an example key): the snapshots holding it go. Repeatable.' });

  async perform() {
    // git's progress is for a person at a terminal: never on stdout, never into a pipe or a log.
    const stderr = this.context.stderr as NodeJS.WriteStream;
    const progress = stderr.isTTY === true ? (line: string) => void stderr.write(line) : undefined;
    const replicator = await Replicator.open({ cwd: this.context.cwd, progress, timeoutMs: timeoutMs(this.timeout) });
    // A supervisor's SIGTERM (or a Ctrl-C) stops git and ends the push with its wip-cancelled
    // document: nothing is recorded locally after it.
    return interruptible(this.context, (signal) => replicator.push({ allow: this.allow ?? [], signal }));
  }
}
