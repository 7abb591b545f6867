import { Command, Option } from 'clipanion';
import { printDocument } from '../base-command.js';
import type { ChantContext } from '../base-command.js';
import { helpDocument, helpText } from '../help.js';
import { cliDefinition } from '../registry.js';

export class HelpCommand extends Command<ChantContext> {
  static override paths = [['help']];
  static override usage = Command.Usage({
    description: 'Describe a command for people, or every command, option and error code for programs.',
    details: 'chant help <command> is chant <command> --help. With --json it prints every command with its options, positionals, examples and the schema of what it prints, the exit codes and every error code a document can carry, so a host can discover them.',
    examples: [
      ['Help on a verb', 'chant help workspace wip save'],
      ['Everything, for a program', 'chant help --json'],
    ],
  });
  static document: string | null = null;
  json = Option.Boolean('--json', false, { description: 'Describe every command as JSON, for programs.' });
  words = Option.Rest({ name: 'command' });

  async execute(): Promise<number> {
    return printHelp(this.context, this.words, this.json);
  }
}

/** Prints the help of `words` (or, with `json`, of the whole CLI); 1 when nothing is there. */
export function printHelp(context: ChantContext, words: readonly string[], json: boolean): number {
  const definition = cliDefinition();
  if (json) {
    printDocument(context, helpDocument(definition));
    return 0;
  }
  // The longest path that names something: `chant workspace wip sav --help` is wip's help.
  for (let length = words.length; length >= 0; length -= 1) {
    const text = helpText(definition, words.slice(0, length));
    if (text !== null) {
      context.stdout.write(text);
      return 0;
    }
  }
  return 1;
}
