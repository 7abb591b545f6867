import { Command, Option } from 'clipanion';
import { WipError, writeFailureDocument } from '../../lib/index.js';
import { printDocument } from '../base-command.js';
import type { ChantContext } from '../base-command.js';
import { completionScript, SHELLS } from '../completion.js';
import type { Shell } from '../completion.js';
import { cliDefinition } from '../registry.js';

export class CompletionCommand extends Command<ChantContext> {
  static override paths = [['completion']];
  static override usage = Command.Usage({
    description: 'Print the completion script of a shell: bash, zsh or fish.',
    details: 'The script is made from the same definitions as the help, so it completes exactly the commands and options chant accepts, and the branches that have snapshots after --branch.',
    examples: [
      ['In ~/.bashrc', 'source <(chant completion bash)'],
      ['In ~/.zshrc', 'source <(chant completion zsh)'],
      ['In fish', 'chant completion fish > ~/.config/fish/completions/chant.fish'],
    ],
  });
  static document: string | null = null;
  shell = Option.String({ name: 'shell' });

  async execute(): Promise<number> {
    if (!(SHELLS as readonly string[]).includes(this.shell)) {
      const message = `no completion for the shell ${JSON.stringify(this.shell)}; chant completion knows ${SHELLS.join(', ')}`;
      printDocument(this.context, writeFailureDocument(null, new WipError('write-usage-invalid', message)));
      return 1;
    }
    this.context.stdout.write(completionScript(cliDefinition(), this.shell as Shell));
    return 0;
  }
}
