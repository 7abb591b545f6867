import { WIP_READ_ID, WIP_WRITE_ID } from '../lib/index.js';
import { commandAt } from './definitions.js';
import type { CliDefinition, CommandDefinition } from './definitions.js';

const WIDTH = 80;

function wrap(text: string, indent = ''): string[] {
  const lines: string[] = [];
  let line = '';
  for (const word of text.split(/\s+/).filter((part) => part.length > 0)) {
    if (line.length > 0 && indent.length + line.length + 1 + word.length > WIDTH) {
      lines.push(indent + line);
      line = word;
    } else {
      line = line.length === 0 ? word : `${line} ${word}`;
    }
  }
  if (line.length > 0) lines.push(indent + line);
  return lines;
}

function optionLabel(option: CommandDefinition['options'][number]): string {
  return option.value === null ? option.name : `${option.name} <${option.value}>`;
}

/** The commands at or under `path`, in the order they were registered. */
function under(definition: CliDefinition, path: readonly string[]): CommandDefinition[] {
  return definition.commands.filter((command) => path.every((word, index) => command.path[index] === word));
}

/**
 * The help for people of `path`: a command's usage, options, details and examples, followed by
 * the verbs under it; a group's (`chant workspace`) verbs. Null when nothing is at `path`.
 */
export function helpText(definition: CliDefinition, path: readonly string[]): string | null {
  const command = commandAt(definition, path);
  const below = under(definition, path).filter((entry) => entry !== command);
  if (command === undefined && below.length === 0) return null;
  const lines: string[] = [];
  if (command !== undefined) {
    lines.push(...wrap(command.description), '', 'Usage', '', `  ${command.usage}`, '');
    if (command.options.length > 0) {
      const width = Math.max(...command.options.map((option) => optionLabel(option).length));
      lines.push('Options', '');
      for (const option of command.options) {
        const [first = '', ...rest] = wrap(option.description, ' '.repeat(width + 6));
        lines.push(`  ${optionLabel(option).padEnd(width)}    ${first.trimStart()}`, ...rest);
      }
      lines.push('');
    }
    if (command.details.length > 0) lines.push('Details', '', ...wrap(command.details, '  '), '');
    if (command.examples.length > 0) {
      lines.push('Examples', '');
      for (const example of command.examples) lines.push(`  ${example.title}:`, `    $ ${example.command}`);
      lines.push('');
    }
    if (command.document !== null) {
      lines.push('Output', '', ...wrap(`A JSON document following ${command.document}${command.document === WIP_READ_ID ? ' (with --json, or when it fails)' : ', with or without --json'}; exit 0 on success, 1 on a refusal, whose error.code is one of the codes chant help --json lists.`, '  '), '');
    }
  } else {
    lines.push(path.length === 0 ? `chant ${definition.version}: snapshots of a git checkout's work in progress, replicated to a git remote.` : `The commands under chant ${path.join(' ')}.`, '');
  }
  if (below.length > 0) {
    lines.push(command === undefined ? 'Commands' : 'Verbs', '');
    const width = Math.max(...below.map((entry) => entry.path.join(' ').length)) + 6;
    for (const entry of below) {
      const [first = '', ...rest] = wrap(entry.description, ' '.repeat(width + 6));
      lines.push(`  chant ${entry.path.join(' ').padEnd(width - 6)}    ${first.trimStart()}`, ...rest);
    }
    lines.push('', `chant <command> --help describes one; chant help --json describes them all for programs.`, '');
  }
  return `${lines.join('\n').replace(/\n+$/, '')}\n`;
}

/**
 * The help for programs (`chant help --json`): every command with its options, positionals and
 * the schema of what it prints, the groups, the exit codes and every error code a document can
 * carry.
 */
export function helpDocument(definition: CliDefinition): Record<string, unknown> {
  return {
    chant: definition.version,
    binary: definition.binary,
    schemas: { read: WIP_READ_ID, write: WIP_WRITE_ID },
    exitCodes: { 0: 'success: the document has no error', 1: 'refusal or failure: the document holds error: {code, message}' },
    commands: definition.commands,
    groups: definition.groups,
    codes: definition.codes,
  };
}
