import { describeCli } from './definitions.js';
import type { CliDefinition } from './definitions.js';
import { CompletionCommand } from './commands/completion.js';
import { HelpCommand } from './commands/help.js';
import { WipReadCommand } from './commands/workspace/wip.js';
import { WipFetchCommand } from './commands/workspace/wip/fetch.js';
import { WipPushCommand } from './commands/workspace/wip/push.js';
import { WipRestoreCommand } from './commands/workspace/wip/restore.js';
import { WipPruneCommand } from './commands/workspace/wip/prune.js';
import { WipSaveCommand } from './commands/workspace/wip/save.js';
import { WipShowCommand } from './commands/workspace/wip/show.js';
import { WipDiffCommand } from './commands/workspace/wip/diff.js';
import { WipStorageCommand } from './commands/workspace/wip/storage.js';

/**
 * Every command class the CLI registers, in the order help lists them. A function, because the
 * help and completion commands read {@link cliDefinition} in turn: the list is made when first
 * asked for, after every module has loaded.
 */
export function commandClasses() {
  return [WipReadCommand, WipSaveCommand, WipRestoreCommand, WipShowCommand, WipDiffCommand, WipPushCommand, WipFetchCommand, WipStorageCommand, WipPruneCommand, HelpCommand, CompletionCommand] as const;
}

let described: CliDefinition | undefined;

/** The CLI's definitions, made once from {@link COMMANDS}. */
export function cliDefinition(): CliDefinition {
  described ??= describeCli(commandClasses());
  return described;
}
