// The save's deadline: its default, how a setting is read, and the step a deadline ran out in.
import { WipError } from './errors.js';

/**
 * How long a save may take, from the call to the ref update, when nothing sets it: 300 s. A save
 * of a 38,000-file checkout takes a second or two here, and new untracked files over 32 MiB are
 * never read, so only something stuck (a filter that sleeps, a network file system that stopped
 * answering) gets near it; an agent host then gets `wip-timeout` instead of a save that hangs.
 * @public
 */
export const DEFAULT_SAVE_TIMEOUT_MS = 300_000;

/**
 * Reads a duration: milliseconds as a number, or a text such as `90s`, `5m`, `1h`, `1500ms` (a
 * bare number in a text is seconds). It must be more than zero.
 * @param value - the duration as given
 * @param what - the option or field it came from, for the message
 * @returns milliseconds
 * @throws {@link WipError} `write-usage-invalid` when it is not a duration
 * @public
 */
export function parseDuration(value: string | number, what = '--timeout'): number {
  if (typeof value === 'number') {
    if (Number.isSafeInteger(value) && value > 0) return value;
    throw new WipError('write-usage-invalid', `${what} must be a whole number of milliseconds, more than 0; it is ${value}`);
  }
  const match = /^\s*(\d+(?:\.\d+)?)\s*(ms|s|m|h)?\s*$/.exec(value);
  const ms = match === null ? NaN : Number(match[1]) * { ms: 1, s: 1_000, m: 60_000, h: 3_600_000 }[(match[2] ?? 's') as 'ms' | 's' | 'm' | 'h'];
  if (!Number.isSafeInteger(Math.floor(ms)) || Math.floor(ms) <= 0) throw new WipError('write-usage-invalid', `${what} must be a duration such as 90s, 5m or 1h; it is ${JSON.stringify(value)}`);
  return Math.floor(ms);
}

/** What a save is doing while git runs `verb`, as a refusal names the step. */
const STEPS: Readonly<Record<string, string>> = {
  'rev-parse': 'reading the checkout',
  'symbolic-ref': 'reading the branch',
  'for-each-ref': 'reading the wip ref',
  'cat-file': 'reading objects',
  'log': 'reading the wip ref',
  'status': "reading the working tree's status",
  'hash-object': 'hashing changed files',
  'ls-files': 'listing untracked files',
  'update-index': 'taking local edits under assume-unchanged or skip-worktree',
  'add': 'staging the working tree',
  'write-tree': 'writing the tree',
  'unpack-objects': 'writing the tree',
  'commit-tree': 'writing the snapshot commit',
  'update-ref': 'moving the wip ref',
  'var': "reading git's identity",
  'config': "reading git's configuration",
  'show': 'reading the declaration at base',
};

/**
 * The step of a save a git call is, named for a refusal: `staging the working tree (git add)`.
 * @internal
 */
export function stepOf(args: readonly string[]): string {
  let i = 0;
  while (args[i] === '-c') i += 2;
  const verb = args[i] ?? '';
  const step = STEPS[verb];
  return step === undefined ? `git ${verb}` : `${step} (git ${verb})`;
}

/**
 * A duration as messages give it: `2 s`, `1.5 s`, `300 s`.
 * @internal
 */
export function seconds(ms: number): string {
  return `${Number((ms / 1000).toFixed(3))} s`;
}
