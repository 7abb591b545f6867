import { Builtins, Cli } from 'clipanion';
import { VERSION, WipError, WRITE_ACTIONS, writeFailureDocument } from '../lib/index.js';
import type { WriteAction } from '../lib/index.js';
import { printDocument } from './base-command.js';
import type { ChantContext } from './base-command.js';
import { WipReadCommand } from './commands/workspace/wip.js';
import { WipFetchCommand } from './commands/workspace/wip/fetch.js';
import { WipPushCommand } from './commands/workspace/wip/push.js';
import { WipRestoreCommand } from './commands/workspace/wip/restore.js';
import { WipSaveCommand } from './commands/workspace/wip/save.js';

/** Every command class the CLI registers, in the order `--help` lists them. */
export const COMMANDS = [WipReadCommand, WipSaveCommand, WipRestoreCommand, WipPushCommand, WipFetchCommand] as const;

const VERBS: readonly WriteAction[] = WRITE_ACTIONS;

/** The clipanion CLI of chant-wip. */
export function buildCli(): Cli<ChantContext> {
  const cli = new Cli<ChantContext>({ binaryLabel: 'chant-wip', binaryName: 'chant', binaryVersion: VERSION, enableColors: false });
  for (const command of COMMANDS) cli.register(command);
  cli.register(Builtins.HelpCommand);
  cli.register(Builtins.VersionCommand);
  return cli;
}

/** The write verb a command line names, or null. */
function actionOf(argv: readonly string[]): WriteAction | null {
  const verb = argv[0] === 'workspace' && argv[1] === 'wip' ? argv[2] : undefined;
  return VERBS.find((candidate) => candidate === verb) ?? null;
}

/**
 * Runs the CLI on `argv` and resolves with the exit code. A command line clipanion cannot
 * parse becomes a `write-usage-invalid` document, not clipanion's own text.
 */
export async function main(argv: readonly string[], context: ChantContext): Promise<number> {
  const cli = buildCli();
  let command;
  try {
    command = cli.process([...argv], context);
  } catch (error) {
    const reason = ((error instanceof Error ? error.message : String(error)).split('\n').map((line) => line.trim()).find((line) => line.length > 0) ?? 'unknown usage').replace(/\.$/, '');
    printDocument(context, writeFailureDocument(actionOf(argv), new WipError('write-usage-invalid', `${reason}; see chant --help`)));
    return 1;
  }
  return cli.run(command, context);
}
