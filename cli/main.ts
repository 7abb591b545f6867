import { Builtins, Cli } from 'clipanion';
import { checkText, isVerb, readFailureDocument, VERSION, WipError, writeFailureDocument } from '../lib/index.js';
import { printDocument, refusalOf } from './base-command.js';
import type { ChantContext } from './base-command.js';
import { printHelp } from './commands/help.js';
import { commandAt, nearest, nextWords } from './definitions.js';
import type { CliDefinition } from './definitions.js';
import { cliDefinition, commandClasses } from './registry.js';

const READ_PATH = 'workspace wip';

/** The clipanion CLI of chant-wip: every command, or only those given. */
export function buildCli(commands: ReadonlyArray<ReturnType<typeof commandClasses>[number]> = commandClasses()): Cli<ChantContext> {
  const cli = new Cli<ChantContext>({ binaryLabel: 'chant-wip', binaryName: 'chant', binaryVersion: VERSION, enableColors: false });
  for (const command of commands) cli.register(command);
  if (commands.length > 1) cli.register(Builtins.VersionCommand);
  return cli;
}

/**
 * The command `argv` runs, parsed first by a CLI of the one command its words name: clipanion
 * builds its parser over every command it holds on each run, which took 13 to 16 ms of a CLI
 * save's start against 3 to 5 for one command. A line that the one command parses is parsed to
 * the same by every command (`test/cli-parse.test.ts` holds the two to it on every command line
 * of the CLI's tests and docs); a line it refuses (or parses as clipanion's own help), or that
 * names no command, is parsed by the whole CLI, so a usage error reads as it always has.
 */
export function parseCommand(argv: readonly string[], context: ChantContext, path: readonly string[]): { cli: Cli<ChantContext>; command: ReturnType<Cli<ChantContext>['process']> } {
  const words = path.join(' ');
  const named = commandClasses().filter((command) => command.paths?.some((each) => each.join(' ') === words));
  if (named.length === 1) {
    const narrow = buildCli(named);
    try {
      const command = narrow.process([...argv], context);
      // Not clipanion's own help, which it gives for some lines it cannot parse.
      if (command instanceof (named[0] as (typeof named)[number])) return { cli: narrow, command };
    } catch {
      // Parsed again below by every command, for the error the whole CLI gives.
    }
  }
  const cli = buildCli();
  return { cli, command: cli.process([...argv], context) };
}

/** How a command line reads before it is parsed: the command it names and what is left over. */
export interface Reading {
  /** The longest path of known words (`['workspace', 'wip']`). */
  path: string[];
  /** The first word that does not continue the path and is not an option's value. */
  stray: string | null;
  /** Options (before `--`), as typed. */
  options: string[];
  help: boolean;
  json: boolean;
}

export function read(argv: readonly string[], definition: CliDefinition): Reading {
  const valueOptions = new Set(definition.commands.flatMap((command) => command.options.filter((option) => option.value !== null).map((option) => option.name)));
  const reading: Reading = { path: [], stray: null, options: [], help: false, json: false };
  for (let index = 0; index < argv.length; index += 1) {
    const arg = argv[index] as string;
    if (arg === '--') break;
    if (arg.startsWith('-') && arg.length > 1) {
      reading.options.push(arg);
      if (arg === '--help' || arg === '-h') reading.help = true;
      if (arg === '--json') reading.json = true;
      if (valueOptions.has(arg)) index += 1;
      continue;
    }
    if (reading.stray === null && nextWords(definition, reading.path).includes(arg)) reading.path.push(arg);
    else reading.stray ??= arg;
  }
  return reading;
}

/** What is wrong with a command line clipanion could not parse, said with what would be right. */
function diagnose(reading: Reading, definition: CliDefinition, parserMessage: string, argv: readonly string[]): string {
  const { path, stray } = reading;
  const command = commandAt(definition, path);
  const next = nextWords(definition, path);
  const where = ['chant', ...path].join(' ');
  if (stray !== null && next.length > 0 && (command === undefined || command.positionals.length === 0)) {
    const guess = nearest(stray, next);
    return `${where} has no command ${JSON.stringify(stray)}${guess === null ? '' : `; did you mean ${[where, guess].join(' ')}`}; it takes ${next.join(', ')}`;
  }
  if (command === undefined) return `${where} needs one of: ${next.join(', ')}`;
  const known = command.options.map((option) => option.name);
  const unknown = reading.options.map((option) => option.replace(/=.*$/s, '')).find((option) => !known.includes(option) && option !== '--help' && option !== '-h');
  if (unknown !== undefined) {
    const guess = nearest(unknown, known);
    return `${where} has no option ${unknown}${guess === null ? '' : `; did you mean ${guess}`}${known.length > 0 ? `; it takes ${known.join(', ')}` : ''}`;
  }
  // A value option with no value after it, or with one that starts with -, which the parser
  // reads as another option: clipanion says only "Not enough arguments to option --label".
  const valueless = optionWithoutValue(argv, command.options.filter((option) => option.value !== null).map((option) => option.name));
  if (valueless !== null) {
    return valueless.next === undefined
      ? `${valueless.option} needs a value`
      : `${valueless.option} needs a value, and ${JSON.stringify(valueless.next)} after it is read as an option, not as its value: give a value that starts with - as ${valueless.option}=<value>`;
  }
  // Too many or too few positionals: clipanion's words for it ("Command not found; did you mean
  // one of:", then a list) are not for a document.
  const words = positionalWords(argv, definition, path.length);
  const wanted = command.positionals;
  const shape = wanted.map((positional) => (positional.repeated === true ? `[-- <${positional.name}>...]` : positional.required ? `<${positional.name}>` : `[<${positional.name}>]`)).join(' ');
  const most = wanted.some((positional) => positional.repeated === true) ? Infinity : wanted.length;
  if (words.length > most) {
    return most === 0
      ? `${where} takes no positional argument; it was given ${JSON.stringify(words[0])}`
      : `${where} takes at most ${most} positional argument${most === 1 ? '' : 's'} (${shape}); ${JSON.stringify(words[most])} is one too many`;
  }
  const missing = wanted.filter((positional) => positional.required).slice(words.length);
  if (missing.length > 0) return `${where} needs ${missing.map((positional) => `<${positional.name}>`).join(' ')}`;
  return parserMessage;
}

/**
 * The first of `names` (value options) given with no value after it, or with a word after it
 * that starts with - (other than - alone), which clipanion reads as an option; null when none is.
 */
function optionWithoutValue(argv: readonly string[], names: readonly string[]): { option: string; next: string | undefined } | null {
  for (let index = 0; index < argv.length; index += 1) {
    const arg = argv[index] as string;
    if (arg === '--') return null;
    if (!names.includes(arg)) continue;
    const next = argv[index + 1];
    if (next === undefined || (next.startsWith('-') && next !== '-')) return { option: arg, next };
    index += 1;
  }
  return null;
}

/** The words of a command line after its command's path that are neither options nor their values; every word after `--`. */
function positionalWords(argv: readonly string[], definition: CliDefinition, pathLength: number): string[] {
  const valueOptions = new Set(definition.commands.flatMap((command) => command.options.filter((option) => option.value !== null).map((option) => option.name)));
  const words: string[] = [];
  let skipped = 0;
  for (let index = 0; index < argv.length; index += 1) {
    const arg = argv[index] as string;
    if (arg === '--') return [...words, ...argv.slice(index + 1)];
    if (arg.startsWith('-') && arg.length > 1) {
      if (valueOptions.has(arg)) index += 1;
    } else if (skipped < pathLength) {
      skipped += 1;
    } else {
      words.push(arg);
    }
  }
  return words;
}

/**
 * The first of --label and --by whose value's bytes were not UTF-8, or null. In the order the
 * values are checked: a --label refused for another reason comes first, and is left to that check.
 */
function textNotUtf8(argv: readonly string[], notUtf8: readonly number[]): string | null {
  if (notUtf8.length === 0) return null;
  const end = argv.indexOf('--');
  for (const option of ['--label', '--by']) {
    let value: { text: string; index: number } | null = null;
    for (let index = 0; index < (end < 0 ? argv.length : end); index += 1) {
      const arg = argv[index] as string;
      if (arg === option && index + 1 < argv.length) value = { text: argv[index + 1] as string, index: index + 1 };
      else if (arg.startsWith(`${option}=`)) value = { text: arg.slice(option.length + 1), index };
    }
    if (value === null) continue;
    if (notUtf8.includes(value.index)) return option;
    try {
      checkText(option, value.text);
    } catch {
      return null;
    }
  }
  return null;
}

/** The failure document a command line gets: the read's for the read, its verb's for a verb, a write's otherwise. */
function failureDocument(reading: Reading, error: WipError): unknown {
  if (reading.path.join(' ') === READ_PATH && reading.stray === null) return readFailureDocument(error);
  const verb = reading.path[0] === 'workspace' && reading.path[1] === 'wip' ? reading.path[2] : undefined;
  return writeFailureDocument(isVerb(verb) ? verb : null, error);
}

/**
 * Prints the document of a fault that escaped everything else (the bin's last resort), so even
 * then stdout holds a document and not a stack trace.
 */
export function printFault(argv: readonly string[], context: ChantContext, error: unknown): void {
  let reading: Reading = { path: [], stray: null, options: [], help: false, json: false };
  try {
    reading = read(argv, cliDefinition());
  } catch {
    // The write document with a null action, then.
  }
  printDocument(context, failureDocument(reading, refusalOf(error)));
}

/**
 * Runs the CLI on `argv` and resolves with the exit code. Whatever happens, stdout gets one
 * document (or help, when help was asked for), never a stack trace: a command line clipanion
 * cannot parse is a `write-usage-invalid` document, a folder that no longer exists is
 * `not-a-git-repository`, and a fault of chant-wip itself is `internal-error`.
 */
export async function main(argv: readonly string[], context: ChantContext): Promise<number> {
  let reading: Reading = { path: [], stray: null, options: [], help: false, json: false };
  try {
    const definition = cliDefinition();
    reading = read(argv, definition);
    if (argv.length === 0 || reading.help) return printHelp(context, reading.path, reading.json);
    if (typeof context.cwd !== 'string' || context.cwd.length === 0) {
      printDocument(context, failureDocument(reading, new WipError('not-a-git-repository', 'the folder chant was run in no longer exists (it was deleted or moved away); run it from inside a checkout')));
      return 1;
    }
    const notUtf8 = textNotUtf8(argv, context.argvNotUtf8 ?? []);
    if (notUtf8 !== null) {
      printDocument(context, failureDocument(reading, new WipError('write-usage-invalid', `${notUtf8} is not valid UTF-8: its bytes would be recorded as U+FFFD, not as given`)));
      return 1;
    }
    let parsed;
    try {
      parsed = parseCommand(argv, context, reading.path);
    } catch (error) {
      const parserMessage = ((error instanceof Error ? error.message : String(error)).split('\n').map((line) => line.trim()).find((line) => line.length > 0) ?? 'unknown usage').replace(/\.$/, '');
      printDocument(context, failureDocument(reading, new WipError('write-usage-invalid', `${diagnose(reading, definition, parserMessage, argv)}; see chant --help`)));
      return 1;
    }
    return await parsed.cli.run(parsed.command, { ...context, argv });
  } catch (error) {
    printDocument(context, failureDocument(reading, refusalOf(error)));
    return 1;
  }
}
