// What a snapshot does not hold, path by path, and the local edits it holds although git was
// told not to look at them: reported by the save, and what it left out recorded in the snapshot
// commit itself (one Chant-Wip-Unsaved trailer, JSON), so the read and a box that fetched the
// snapshot know too.
import type { UNSAVED_REASONS, FLAGGED_REASONS } from '../documents/ids.js';
import type { Unsaved, UnsavedEntry } from '../documents/snapshot.js';
import { WipError } from '../errors.js';
import { compareBytes } from '../order.js';

/** One path a snapshot does not hold. @internal */
export interface LeftOut {
  path: string;
  reason: (typeof UNSAVED_REASONS)[number];
  /** For `too-large`: the file's size in bytes. */
  size?: number;
  /** For a gitlink: the commit it is at. */
  commit?: string;
}

/** A tracked path whose local edit the snapshot holds although git was told not to look at it. @internal */
export interface FlaggedPath {
  path: string;
  reason: (typeof FLAGGED_REASONS)[number];
}

/**
 * The size over which a new untracked file is left out when none is set: 32 MiB. git hashes and
 * compresses about that much in a second on a 2-core machine (random bytes; text is faster), so
 * a save stays within an agent turn's budget, and a dataset or a core dump that is not ignored
 * costs no save its time or the object store its size.
 * @public
 */
export const DEFAULT_MAX_FILE_SIZE = 32 * 1024 * 1024;

/**
 * Reads a size: bytes, or a number with `k`, `m` or `g` (binary multiples, any case, an optional
 * `b` or `ib` after them), such as `512k` or `1.5GiB`.
 * @param text - the size as written, or a number of bytes
 * @param what - the option or field it came from, for the message
 * @returns the size in bytes
 * @throws {@link WipError} `write-usage-invalid` when it is not a size
 * @public
 */
export function parseSize(text: string | number, what = '--max-file-size'): number {
  if (typeof text === 'number') {
    if (Number.isSafeInteger(text) && text >= 0) return text;
    throw new WipError('write-usage-invalid', `${what} must be a whole number of bytes, at least 0; it is ${text}`);
  }
  const match = /^\s*(\d+(?:\.\d+)?)\s*(?:([kmg])(?:i?b)?|b)?\s*$/i.exec(text);
  if (match === null) throw new WipError('write-usage-invalid', `${what} must be a size such as 1048576, 512k, 32M or 2G; it is ${JSON.stringify(text)}`);
  const unit = { k: 1024, m: 1024 ** 2, g: 1024 ** 3 }[(match[2] ?? '').toLowerCase() as 'k' | 'm' | 'g'] ?? 1;
  const bytes = Math.floor(Number(match[1]) * unit);
  // Past 2^53 it is no whole number of bytes: refused here, under the name given, not by the SDK's option.
  if (!Number.isSafeInteger(bytes)) throw new WipError('write-usage-invalid', `${what} must be a size such as 1048576, 512k, 32M or 2G; it is ${JSON.stringify(text)}`);
  return bytes;
}

/** What a save document says of a path left out. @internal */
export function leftOutMessage(entry: LeftOut): string {
  switch (entry.reason) {
    case 'submodule': return `${entry.path} is a submodule: the snapshot keeps the commit it is at (${(entry.commit ?? '').slice(0, 12)}), not its files`;
    case 'embedded-repository': return entry.commit === undefined
      ? `${entry.path} is a git repository inside this one with no commit yet: the snapshot holds nothing there, not its files`
      : `${entry.path} is a git repository inside this one (not in .gitmodules): the snapshot keeps the commit it is at (${entry.commit.slice(0, 12)}), not its files`;
    case 'unreadable': return `${entry.path} could not be read: the snapshot holds what the index holds there, or nothing for an untracked file`;
    case 'vanished': return `${entry.path} was deleted while the save read it: the snapshot holds what the index holds there, or nothing for an untracked file`;
    case 'not-a-file': return `${entry.path} is a FIFO, socket or device, not a file: the snapshot holds what the index holds there`;
    case 'too-large': return `${entry.path} is a new file of ${entry.size ?? 0} bytes, over the size limit (--max-file-size): it is not in the snapshot`;
    case 'invalid-path': return `${entry.path} is a path git, or a remote that checks what it receives, refuses to hold (other systems read a name in it as .git, or it is a symlink named .gitmodules, or under a folder named .gitmodules or .gitattributes): the snapshot holds what the index holds there (HEAD's entry, where a remote would refuse the index's), or nothing`;
  }
}

/** What a save document says of a local edit taken under a flag. @internal */
export function flaggedMessage(entry: FlaggedPath): string {
  return `${entry.path} is marked ${entry.reason} in the index: the snapshot holds the local edit in the working tree`;
}

/** At most this many paths a snapshot leaves out are named in its commit; `count` says how many there were. */
export const TRAILER_PATHS = 100;

/** What a snapshot's commit records of the paths it left out, or undefined when there are none. @internal */
export function unsavedOf(leftOut: readonly LeftOut[]): Unsaved | undefined {
  if (leftOut.length === 0) return undefined;
  const sorted = [...leftOut].sort((a, b) => compareBytes(a.path, b.path));
  return {
    count: sorted.length,
    paths: sorted.slice(0, TRAILER_PATHS).map((entry) => ({ path: entry.path, reason: entry.reason, ...(entry.size === undefined ? {} : { size: entry.size }) })),
  };
}

/** The trailer's value: one line of JSON, whatever bytes a path holds. @internal */
export function writeUnsaved(value: Unsaved | undefined): string | null {
  return value === undefined ? null : JSON.stringify({ count: value.count, paths: value.paths });
}

/**
 * A trailer's value read back. A value that does not read (another version's shape, a damaged
 * message) still says that something was left out: `{count: 1, paths: []}`, never nothing.
 * @internal
 */
export function readUnsaved(text: string | undefined): Unsaved | undefined {
  if (text === undefined) return undefined;
  let value: unknown;
  try {
    value = JSON.parse(text);
  } catch {
    value = null;
  }
  return unsavedValue(value) ?? { count: 1, paths: [] };
}

/** A value of the shape {@link Unsaved}, checked, or null. @internal */
export function unsavedValue(value: unknown): Unsaved | null {
  if (typeof value !== 'object' || value === null) return null;
  const { count, paths } = value as { count?: unknown; paths?: unknown };
  if (typeof count !== 'number' || !Number.isSafeInteger(count) || count < 1 || !Array.isArray(paths)) return null;
  const entries: UnsavedEntry[] = [];
  for (const entry of paths as unknown[]) {
    if (typeof entry !== 'object' || entry === null) return null;
    const { path, reason, size } = entry as { path?: unknown; reason?: unknown; size?: unknown };
    if (typeof path !== 'string' || path === '' || typeof reason !== 'string' || !(size === undefined || (typeof size === 'number' && Number.isSafeInteger(size) && size >= 0))) return null;
    entries.push({ path, reason, ...(size === undefined ? {} : { size }) });
  }
  return { count: Math.max(count, entries.length), paths: entries };
}
