import { Command } from 'clipanion';
import { Replicator } from '../../../../lib/index.js';
import { interruptible, timeoutMs, timeoutOption, WriteCommand } from '../../../base-command.js';

export class WipFetchCommand extends WriteCommand<'fetch'> {
  static override paths = [['workspace', 'wip', 'fetch']];
  static override usage = Command.Usage({
    description: "Bring the policy's refs back from the remote, as a replacement box does.",
    details: 'Mirrors what the remote holds of the policy\'s refs into refs/chant/replica/<remote>/, checking objects as they arrive, creates each local ref that is missing and fast-forwards each that is behind. A branch checked out in any worktree, a local ref that moved on (ahead) and one that forked (diverged) are reported and left alone. When stderr is a terminal, git\'s progress is shown there; stdout carries the document only. A SIGINT, SIGTERM or SIGHUP stops git and ends the fetch as wip-cancelled, with nothing recorded locally after it (a second one ends it at once).',
    examples: [['On a replacement box, a fresh clone of the remote', 'chant workspace wip fetch --json']],
  });
  readonly action = 'fetch';
  timeout = timeoutOption();

  async perform() {
    // git's progress is for a person at a terminal: never on stdout, never into a pipe or a log.
    const stderr = this.context.stderr as NodeJS.WriteStream;
    const progress = stderr.isTTY === true ? (line: string) => void stderr.write(line) : undefined;
    const replicator = await Replicator.open({ cwd: this.context.cwd, progress, timeoutMs: timeoutMs(this.timeout) });
    // A supervisor's SIGTERM (or a Ctrl-C) stops git and ends the fetch with its wip-cancelled
    // document: nothing is recorded locally after it.
    return interruptible(this.context, (signal) => replicator.fetch({ signal }));
  }
}
