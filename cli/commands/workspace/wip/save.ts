import { Command, Option } from 'clipanion';
import { parseDuration, parseSize, WipStore } from '../../../../lib/index.js';
import { interruptible, timeoutMs, timeoutOption, WriteCommand } from '../../../base-command.js';

export class WipSaveCommand extends WriteCommand<'save'> {
  static override paths = [['workspace', 'wip', 'save']];
  static override usage = Command.Usage({
    description: "Take a snapshot of the checkout's working tree onto refs/chant/wip/<branch>.",
    details: 'Staged, unstaged and untracked files are kept, ignored files left out; the index, HEAD and branch never move. When the tip already holds the same tree on the same head with the same label and principal, nothing is written and created is false. A path the save cannot take (unreadable, vanished while it read, a FIFO at a tracked path, a new file over --max-file-size, a submodule\'s files) never fails it: each is listed in unsaved with its reason, and recorded in the snapshot commit. A SIGINT, SIGTERM or SIGHUP before the snapshot is recorded ends the save as wip-cancelled with nothing written; one after lets it finish and print what it did (a second one ends it at once).',
    examples: [
      ['Save after an agent turn', 'chant workspace wip save --label turn:7 --by github:alex --json'],
      ['Save, and say at once whether the snapshot holds a likely secret', 'chant workspace wip save --scan --json'],
      ['Save, then prune the chain by the declaration\'s retain block', 'chant workspace wip save --label turn:8 --prune --json'],
      ['Save, leaving out new untracked files over 64 MiB', 'chant workspace wip save --max-file-size 64M --json'],
    ],
  });
  readonly action = 'save';
  label = Option.String('--label', { description: 'What to call the snapshot, such as turn:7 (one line, at most 200 characters).' });
  by = Option.String('--by', { description: 'Who takes it, such as github:alex (one line, at most 200 characters).' });
  timeout = timeoutOption();
  scan = Option.Boolean('--scan', false, { description: 'Scan what the snapshot adds for likely secrets and list them in findings (path, rule, line).' });
  prune = Option.Boolean('--prune', false, { description: 'Then prune the branch\'s chain by the retain block of the workspace declaration (a block with onSave true prunes on every save).' });
  maxFileSize = Option.String('--max-file-size', { description: 'Leave out new untracked files over this size, listing them in unsaved: bytes, or 512k, 64M, 2G (default: the declaration\'s wip.maxFileSize, else 32M).' });

  deadline = Option.String('--deadline', { description: 'Refuse the save with wip-timeout, writing nothing, when it takes longer: 90s, 5m, 1h (default: the declaration\'s wip.saveTimeout, else 300s).' });

  perform() {
    // Read here, so a refusal names the option given rather than the SDK's.
    const maxFileSize = this.maxFileSize === undefined ? {} : { maxFileSize: parseSize(this.maxFileSize, '--max-file-size') };
    const saveTimeout = this.deadline === undefined ? {} : { saveTimeout: parseDuration(this.deadline, '--deadline') };
    const store = new WipStore({ cwd: this.context.cwd, env: this.context.env, networkTimeoutMs: timeoutMs(this.timeout), ...maxFileSize, ...saveTimeout });
    // A supervisor's SIGTERM (or a Ctrl-C) before the snapshot is recorded ends the save with its
    // wip-cancelled document, nothing written; after, the save finishes and prints what it did.
    return interruptible(this.context, (signal) => store.save({ label: this.label ?? null, by: this.by ?? null, scan: this.scan, prune: this.prune, signal }));
  }
}
