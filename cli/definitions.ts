// One description of the CLI, read from the command classes themselves: the help text, the
// machine-readable help, the shell completions and docs/cli.md are all made from it, so none of
// them can drift from what the parser accepts.
import { Cli } from 'clipanion';
import type { CommandClass } from 'clipanion';
import { VERSION, WIP_ERROR_CODES } from '../lib/index.js';
import type { WipErrorCode } from '../lib/index.js';
import type { ChantContext } from './base-command.js';

/**
 * What an option's value is called in help (`--label <text>`): clipanion prints `#0` for every
 * value, which tells a reader nothing.
 */
const VALUE_NAMES: Readonly<Record<string, string>> = {
  '--label': 'text',
  '--by': 'principal',
  '--branch': 'branch',
  '--limit': 'n',
  '--before': 'snapshot',
  '--timeout': 'seconds',
  '--expect': 'fingerprint',
};

/** One option of a command. */
export interface OptionDefinition {
  /** `--label`. */
  name: string;
  /** What its value is called (`text`), or null for a flag. */
  value: string | null;
  description: string;
}

/** One command line the CLI accepts. */
export interface CommandDefinition {
  /** The words after `chant`: `['workspace', 'wip', 'save']`. */
  path: string[];
  /** `chant workspace wip save [--label <text>] ...`. */
  usage: string;
  description: string;
  details: string;
  options: OptionDefinition[];
  /**
   * Positional arguments, in order: `[{name: 'snapshot', required: false}]`; `repeated` for a
   * list after `--` (`[-- <path>...]`).
   */
  positionals: Array<{ name: string; required: boolean; repeated?: boolean }>;
  examples: Array<{ title: string; command: string }>;
  /** The `$id` of the schema its output follows, or null when it prints text (help, completions). */
  document: string | null;
}

/** What the CLI is: its commands, the groups above them, and the codes a document can carry. */
export interface CliDefinition {
  binary: string;
  version: string;
  commands: CommandDefinition[];
  /** Paths that only group commands (`['workspace']`), each with the words that may follow it. */
  groups: Array<{ path: string[]; next: string[] }>;
  codes: readonly WipErrorCode[];
}

/** Undoes clipanion's wrapping: each consumer wraps as it needs. */
export function flat(text: string | undefined): string {
  return (text ?? '').replace(/\s*\n\s*/g, ' ').trim();
}

/** The definitions of `commands`, in the order given. */
export function describeCli(commands: ReadonlyArray<CommandClass<ChantContext> & { document?: string | null; positionals?: CommandDefinition['positionals'] }>): CliDefinition {
  const described: CommandDefinition[] = [];
  for (const command of commands) {
    const cli = new Cli<ChantContext>({ binaryName: 'chant', enableColors: false });
    cli.register(command);
    const [definition] = cli.definitions({ colored: false });
    if (definition === undefined) continue;
    const path = definition.path.split(' ').slice(1);
    const options: OptionDefinition[] = definition.options.map((option) => {
      const [name = ''] = option.definition.split(/[ ,]/);
      const takesValue = / #0/.test(option.definition);
      return { name, value: takesValue ? (VALUE_NAMES[name] ?? 'value') : null, description: flat(option.description) };
    });
    // Positionals follow the path in clipanion's usage, the optional ones bracketed.
    // A command whose positionals are one rest list (clipanion hands an optional positional beside
    // a rest to the rest) names them itself.
    const positionals: CommandDefinition['positionals'] = command.positionals ?? definition.usage.split(' ').slice(path.length + 1)
      .filter((word) => !word.startsWith('[-') && !word.startsWith('-') && word.length > 0)
      .map((word) => ({ name: word.replace(/^\[|\]$/g, '').replace(/^<|>$/g, ''), required: !word.startsWith('[') }));
    const usage = ['chant', ...path,
      ...options.map((option) => `[${option.name}${option.value === null ? '' : ` <${option.value}>`}]`),
      ...positionals.map((positional) => (positional.repeated === true ? `[-- <${positional.name}>...]` : positional.required ? `<${positional.name}>` : `[<${positional.name}>]`))].join(' ');
    described.push({
      path,
      usage,
      description: flat(command.usage?.description),
      details: flat(command.usage?.details),
      options,
      positionals,
      examples: (command.usage?.examples ?? []).map(([title, line]) => ({ title: flat(title), command: line.trim() })),
      document: command.document ?? null,
    });
  }
  const groups = new Map<string, Set<string>>();
  for (const command of described) {
    for (let depth = 0; depth < command.path.length; depth += 1) {
      const key = command.path.slice(0, depth).join(' ');
      const words = groups.get(key) ?? new Set<string>();
      words.add(command.path[depth] as string);
      groups.set(key, words);
    }
  }
  return {
    binary: 'chant',
    version: VERSION,
    commands: described,
    groups: [...groups].map(([key, words]) => ({ path: key === '' ? [] : key.split(' '), next: [...words] })),
    codes: WIP_ERROR_CODES,
  };
}

/** The command whose path is exactly `path`, or undefined. */
export function commandAt(definition: CliDefinition, path: readonly string[]): CommandDefinition | undefined {
  return definition.commands.find((command) => command.path.join(' ') === path.join(' '));
}

/** The words that may follow `path` (`['wip']` after `['workspace']`), empty when none. */
export function nextWords(definition: CliDefinition, path: readonly string[]): string[] {
  return definition.groups.find((group) => group.path.join(' ') === path.join(' '))?.next ?? [];
}

/** The candidate nearest `word` when it is close enough to be a typo, else null. */
export function nearest(word: string, candidates: readonly string[]): string | null {
  let best: string | null = null;
  let bestDistance = Infinity;
  for (const candidate of candidates) {
    const distance = editDistance(word.toLowerCase(), candidate.toLowerCase());
    if (distance < bestDistance) {
      best = candidate;
      bestDistance = distance;
    }
  }
  // A prefix is a typo too (`sav`), and so is up to a third of the word mistyped.
  if (best !== null && (best.startsWith(word) && word.length >= 2)) return best;
  return best !== null && bestDistance <= Math.max(1, Math.floor(best.length / 3)) ? best : null;
}

/** Damerau-Levenshtein distance (optimal string alignment): a swapped pair counts once. */
function editDistance(a: string, b: string): number {
  const rows = a.length + 1;
  const cols = b.length + 1;
  const d: number[][] = Array.from({ length: rows }, (_, i) => Array.from({ length: cols }, (_, j) => (i === 0 ? j : j === 0 ? i : 0)));
  for (let i = 1; i < rows; i += 1) {
    for (let j = 1; j < cols; j += 1) {
      const cost = a[i - 1] === b[j - 1] ? 0 : 1;
      const row = d[i] as number[];
      const above = d[i - 1] as number[];
      row[j] = Math.min((above[j] as number) + 1, (row[j - 1] as number) + 1, (above[j - 1] as number) + cost);
      if (i > 1 && j > 1 && a[i - 1] === b[j - 2] && a[i - 2] === b[j - 1]) row[j] = Math.min(row[j] as number, ((d[i - 2] as number[])[j - 2] as number) + 1);
    }
  }
  return (d[rows - 1] as number[])[cols - 1] as number;
}
