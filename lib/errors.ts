import { GitCommandError, subcommandOf } from './git/runner.js';
import type { WipErrorCode } from './error-codes.js';

export { WIP_ERROR_CODES } from './error-codes.js';
export type { WipErrorCode } from './error-codes.js';

/**
 * Options of a {@link WipError}.
 * @public
 */
export interface WipErrorOptions {
  /** The foreign error this one wraps. */
  cause?: unknown;
  /** Repository-relative paths the refusal is about (`wip-restore-blocked`). */
  paths?: readonly string[];
}

/**
 * The one error class of the SDK: every refusal and every failure of git carries a stable code.
 * A refusal by a write has changed nothing; a restore's `git-failed` may follow its checkpoint,
 * and then says whether the working tree was put back or which checkpoint to restore.
 * @public
 */
export class WipError extends Error {
  /** The stable code, one of {@link WIP_ERROR_CODES}. */
  readonly code: WipErrorCode;
  /** Repository-relative paths the refusal is about, when it names any. */
  readonly paths: readonly string[];

  /**
   * A refusal or failure with its code.
   * @param code - the refusal's code
   * @param message - what went wrong, for people; credentials in URLs are redacted
   * @param options - the wrapped cause and the paths concerned
   */
  constructor(code: WipErrorCode, message: string, options: WipErrorOptions = {}) {
    super(redactCredentials(message), options.cause === undefined ? undefined : { cause: options.cause });
    this.name = 'WipError';
    this.code = code;
    this.paths = options.paths ?? [];
  }
}

/** How many paths a message names before it says how many more there are. */
const PATHS_IN_MESSAGE = 10;

/**
 * A list of paths for a refusal's message: the first ten, then how many more, so a refusal about
 * 100,000 files is one readable line. The full list belongs in the error's `paths`, where
 * `error.paths` of the document carries it. Every message that names paths is built with this.
 * @param paths - the paths, already sorted
 * @returns `a, b, c` or `a, b, ... and 90 more (error.paths lists them all)`
 * @internal
 */
export function pathsInMessage(paths: readonly string[]): string {
  const named = paths.slice(0, PATHS_IN_MESSAGE).join(', ');
  return paths.length > PATHS_IN_MESSAGE ? `${named}, and ${paths.length - PATHS_IN_MESSAGE} more (error.paths lists them all)` : named;
}

/**
 * Whether a value is a {@link WipError}, optionally of one code.
 * @param value - anything caught
 * @param code - the code it must carry, when given
 * @returns true when it is
 * @public
 */
export function isWipError(value: unknown, code?: WipErrorCode): value is WipError {
  return value instanceof WipError && (code === undefined || value.code === code);
}

/**
 * Hides the user-info part of every URL in a text (`https://user:token@host` becomes
 * `https://***@host`), so a credential a host put in a remote URL never reaches a document.
 * @param text - a message, typically git's stderr
 * @returns the text with credentials replaced
 * @public
 */
export function redactCredentials(text: string): string {
  return text
    // The user-info runs to the last `@` before the path, the end of the line or a quote: a
    // password may hold a raw `@` or a space, which git takes as they are.
    .replace(/([a-z][a-z0-9+.-]*:\/\/)[^/\r\n'"]*@/gi, '$1***@')
    // git also names a host without the scheme ("unable to look up alice:token@host"): a
    // user:secret@ standing as a word of its own is hidden too, to its last `@`. A password with a
    // space there is hidden only where the remote's secrets are known (lib/git/remote.ts).
    .replace(/(^|[\s'"(])[^\s'"(/@:]+:[^\s'"/]+@(?=[^\s@])/g, '$1***@');
}

/**
 * Wraps a foreign failure at the seam: a WipError stays as it is, anything else is `git-failed`.
 * @internal
 */
export function asWipError(error: unknown): WipError {
  if (error instanceof WipError) return error;
  if (error instanceof GitCommandError) {
    // git never ran: the spawn failed, and what simple-git reports is Node's stack.
    if (/\bspawn \S*git\S* ENOENT\b/.test(error.stderr)) {
      return new WipError('git-failed', 'git could not be started (spawn git ENOENT): git is not on the PATH chant runs with, or the folder it runs in is gone', { cause: error });
    }
    // The summary keeps git's `error:` lines, which name the path and the system's reason; the
    // last `fatal:` line alone often says only "adding files failed".
    return new WipError('git-failed', `git ${subcommandOf(error.args)} failed: ${error.summary}`, { cause: error });
  }
  return new WipError('git-failed', `git failed: ${error instanceof Error ? error.message : String(error)}`, { cause: error });
}

/**
 * The refusal of a call its caller cancelled through its `signal`.
 * @param signal - the signal that was aborted
 * @returns a `wip-cancelled` error carrying the signal's reason as its cause
 */
export function cancelledError(signal: AbortSignal): WipError {
  return new WipError('wip-cancelled', 'cancelled by the caller; nothing was written', { cause: signal.reason });
}

/**
 * Throws `wip-cancelled` when the signal has been aborted: called between the steps of a call,
 * before each one that would write.
 * @param signal - the caller's signal, when it gave one
 */
export function checkNotAborted(signal: AbortSignal | undefined): void {
  if (signal?.aborted === true) throw cancelledError(signal);
}

/**
 * The options object a public method was given, checked at the boundary: absent or null reads
 * as no options; anything else that is not an object, a `signal` that is not an `AbortSignal`,
 * or an `onProgress` that is not a function is `write-usage-invalid`, naming the method, instead
 * of a TypeError from deep inside the call (or, for a signal, a crash of the process when git
 * ends).
 * @param options - what the caller passed
 * @param method - the method, as the message names it (`save`, `Replicator.push`)
 * @returns the options, `{}` for absent or null
 * @internal
 */
export function callOptions<T extends object>(options: T | null | undefined, method: string): T {
  if (options === undefined || options === null) return {} as T;
  if (typeof options !== 'object' || Array.isArray(options)) {
    throw new WipError('write-usage-invalid', `${method} takes an options object; it was given ${describe(options)}`);
  }
  const { signal, onProgress } = options as { signal?: unknown; onProgress?: unknown };
  if (signal !== undefined && !isAbortSignal(signal)) {
    throw new WipError('write-usage-invalid', `${method}'s signal must be an AbortSignal; it was given ${describe(signal)}`);
  }
  if (onProgress !== undefined && typeof onProgress !== 'function') {
    throw new WipError('write-usage-invalid', `${method}'s onProgress must be a function; it was given ${describe(onProgress)}`);
  }
  return options;
}

/** Whether a value is an `AbortSignal`, or one of another realm or a polyfill with its shape. */
function isAbortSignal(value: unknown): value is AbortSignal {
  if (value instanceof AbortSignal) return true;
  const candidate = value as { aborted?: unknown; addEventListener?: unknown; removeEventListener?: unknown } | null;
  return typeof candidate === 'object' && candidate !== null && typeof candidate.aborted === 'boolean'
    && typeof candidate.addEventListener === 'function' && typeof candidate.removeEventListener === 'function';
}

/** A value as a message names it: its JSON for a primitive, its kind otherwise. */
function describe(value: unknown): string {
  if (value === null) return 'null';
  if (Array.isArray(value)) return 'an array';
  if (typeof value === 'function') return 'a function';
  if (typeof value === 'object') return 'an object';
  if (typeof value === 'string') return JSON.stringify(value.length > 40 ? `${value.slice(0, 40)}...` : value);
  return String(value);
}

/**
 * Refuses the options of a constructor that cannot name a checkout: absent, not an object, a
 * `cwd` that is not a non-empty string, a `clock` that is not a function.
 * @internal
 */
export function checkStoreOptions(options: unknown, name: string): void {
  if (typeof options !== 'object' || options === null || Array.isArray(options)) {
    throw new WipError('write-usage-invalid', `${name} takes an options object with cwd, the folder of the checkout; it was given ${options === null ? 'null' : Array.isArray(options) ? 'an array' : typeof options}`);
  }
  const { cwd, clock } = options as { cwd?: unknown; clock?: unknown };
  if (typeof cwd !== 'string' || cwd === '') throw new WipError('write-usage-invalid', `${name}'s cwd must be the path of a folder inside the checkout; it was given ${typeof cwd === 'string' ? 'an empty string' : cwd === null ? 'null' : typeof cwd}`);
  if (clock !== undefined && typeof clock !== 'function') throw new WipError('write-usage-invalid', `${name}'s clock must be a function returning a Date; it was given ${clock === null ? 'null' : typeof clock}`);
}
