import assert from 'node:assert/strict';
import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, it } from 'node:test';
import { buildCli, parseCommand, read } from '../cli/main.js';
import { cliDefinition } from '../cli/registry.js';
import type { ChantContext } from '../cli/base-command.js';

const TEST_DIR = import.meta.dirname;

/**
 * Every command line the tests run whose words are all string literals
 * (`['workspace', 'wip', 'save', '--label', 'x']`), every example of the CLI's docs, and lines
 * written to trip a parse: values that are command words, options where positionals go, `--`.
 */
function commandLines(): string[][] {
  const lines: string[][] = [];
  const literalArray = /\[((?:'[^'\\\n]*'(?:, )?)+)\]/g;
  for (const file of readdirSync(TEST_DIR).filter((name) => name.endsWith('.ts'))) {
    for (const match of readFileSync(join(TEST_DIR, file), 'utf8').matchAll(literalArray)) {
      const words = [...(match[1] as string).matchAll(/'([^']*)'/g)].map((word) => word[1] as string);
      if (['workspace', 'help', 'completion'].includes(words[0] as string)) lines.push(words);
    }
  }
  for (const command of cliDefinition().commands) {
    for (const example of command.examples) lines.push(example.command.split(' ').slice(1).filter((word) => word.length > 0));
  }
  lines.push(
    ['workspace', 'wip', 'save', '--label', 'save'],
    ['workspace', 'wip', '--label', 'save'],
    ['workspace', 'wip', 'save', '--label=restore', '--json'],
    ['workspace', 'wip', 'save', 'extra'],
    ['workspace', 'wip', 'save', '--label'],
    ['workspace', 'wip', 'save', '--no-such-option'],
    ['workspace', 'wip', 'restore', 'save'],
    ['workspace', 'wip', 'restore', '--', 'save', 'diff'],
    ['workspace', 'wip', 'restore', 'abc', 'def'],
    ['workspace', 'wip', 'diff', 'show'],
    ['workspace', 'wip', 'diff', 'a', 'b', 'c'],
    ['workspace', 'wip', 'diff'],
    ['workspace', 'wip', 'show'],
    ['workspace', 'wip', 'show', '--json', 'HEAD'],
    ['workspace', 'wip', 'push', '--allow', 'push'],
    ['workspace', 'wip', 'prune', '--keep', '3', '--keep', '4'],
    ['workspace', 'wip', 'fetch', 'save'],
    ['workspace', 'wip', '--limit', '5', '--json'],
    ['workspace', 'wip', '--limit'],
    ['workspace', 'wipe'],
    ['workspace'],
    ['workspace', 'wip', 'save', '-v'],
    ['workspace', 'wip', 'save', '--version'],
    ['help', 'workspace', 'wip', 'save'],
    ['completion', 'bash'],
    ['completion'],
    ['-v'],
    ['--version'],
  );
  return lines;
}

/** What a parsed command holds: its class and the values of its options and positionals. */
function parsedAs(command: object): { kind: string; values: string } {
  const values = Object.fromEntries(Object.entries(command).filter(([key]) => !['cli', 'context', 'path'].includes(key)));
  return { kind: command.constructor.name, values: JSON.stringify(values) };
}

describe('parsing a command line', () => {
  it('gives the command and values the whole CLI gives, through the CLI of the one command the words name, and the whole CLI\'s refusal for a line that one refuses', () => {
    const context = { cwd: TEST_DIR, env: {}, colorDepth: 1 } as unknown as ChantContext;
    const definition = cliDefinition();
    const lines = commandLines();
    assert.ok(lines.length > 100, `only ${lines.length} command lines were found`);
    let narrowed = 0;
    for (const argv of lines) {
      const path = read(argv, definition).path;
      let whole: { kind: string; values: string } | { refused: string };
      try {
        whole = parsedAs(buildCli().process([...argv], context));
      } catch (error) {
        whole = { refused: (error as Error).message };
      }
      let parsed: { kind: string; values: string } | { refused: string };
      try {
        const result = parseCommand(argv, context, path);
        parsed = parsedAs(result.command);
        if (result.cli.definitions().length === 1) narrowed += 1;
      } catch (error) {
        parsed = { refused: (error as Error).message };
      }
      assert.deepEqual(parsed, whole, `chant ${argv.join(' ')}`);
    }
    assert.ok(narrowed > 50, `only ${narrowed} lines named a command`);
  });
});
