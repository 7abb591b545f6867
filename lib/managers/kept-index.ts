// The private index a save hands to `git status` (lib/store/status-index.ts), kept from one save
// to the next: `chant-status-index` in the worktree's git directory, and beside it its key,
// `chant-status-index-key`, which names everything the copy was made from (the checkout's index
// file, the hash cache's fingerprint, the stat data of the `.gitattributes` on the way to each
// entry it vouches for) and the wip tip the last save that used it left, whose chain holds every
// blob the copy names. Invariant: a copy is used only while each of those is what its key says,
// and the copy is the very file the key names, whole; the key is written only after the ref
// moved, and removed on any doubt. Delete both and the next save makes the copy again.
// Beside them, `chant-status-index-staged` holds what status said of the copy against HEAD
// (which holds as long as the copy and HEAD do, and HEAD is in the fingerprint): a save that
// uses the copy then compares only the working tree with it (see planFromParts). The key names
// its hash.
import { createHash } from 'node:crypto';
import type { BigIntStats } from 'node:fs';
import { closeSync, fstatSync, openSync, readSync, rmSync } from 'node:fs';
import { open, readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { replaceCacheFile } from './cache-file.js';

/** The kept copy, in the worktree's git directory. */
export const KEPT_INDEX_FILE = 'chant-status-index';

/** Its key, beside it. */
export const KEPT_INDEX_KEY_FILE = 'chant-status-index-key';

/** What status said of the copy against HEAD, beside it (see readStatus's `staged`). */
export const KEPT_STAGED_FILE = 'chant-status-index-staged';

const VERSION = 'chant-status-index 2';

/** What a kept copy was made from, and the tip it holds for. */
export interface KeptIndexKey {
  /** The checkout's index the copy was made from, as {@link fileIdentity} gives it. */
  index: string;
  /** The copy itself, as {@link fileIdentity} gives it. */
  copy: string;
  /** The hash cache's fingerprint (lib/managers/hash-cache.ts) the copy was made under. */
  fingerprint: string;
  /** The wip tip the last save that used the copy (or made it) left. */
  tip: string;
  /** Each folder on the way to an entry the copy vouches for, with its `.gitattributes`' stat key (`-`: none). */
  attributes: ReadonlyArray<readonly [string, string]>;
  /** How many entries the copy vouches for. */
  vouched: number;
  /** The sha256 of {@link KEPT_STAGED_FILE} as written for the copy. */
  staged: string;
}

/**
 * A file's identity as a key compares it: its size, device, inode, mtime and ctime in
 * nanoseconds, and its last `hashBytes` bytes (an index file's checksum). Null where the
 * checksum is all zeros (git's `index.skipHash`), which names no content.
 */
export function identityOf(stats: BigIntStats, tail: Buffer): string | null {
  if (tail.every((byte) => byte === 0)) return null;
  return `${stats.size}:${stats.dev}:${stats.ino}:${stats.mtimeNs}:${stats.ctimeNs}:${tail.toString('hex')}`;
}

/** The identity of a file as it is now (see {@link identityOf}); null where it cannot be read. */
export function fileIdentity(file: string, hashBytes: number): string | null {
  let fd: number;
  try {
    fd = openSync(file, 'r');
  } catch {
    return null;
  }
  try {
    const stats = fstatSync(fd, { bigint: true });
    if (stats.size < BigInt(12 + hashBytes)) return null;
    const tail = Buffer.alloc(hashBytes);
    if (readSync(fd, tail, 0, hashBytes, Number(stats.size) - hashBytes) !== hashBytes) return null;
    return identityOf(stats, tail);
  } catch {
    return null;
  } finally {
    closeSync(fd);
  }
}

/** A file's bytes and its identity, read through one descriptor; nulls where it cannot be read. */
export async function readIdentified(file: string, hashBytes: number): Promise<{ data: Buffer | null; identity: string | null; mtimeMs: number }> {
  const handle = await open(file, 'r').catch(() => null);
  if (handle === null) return { data: null, identity: null, mtimeMs: 0 };
  try {
    const stats = await handle.stat({ bigint: true });
    const data = await handle.readFile();
    const identity = data.length >= 12 + hashBytes && BigInt(data.length) === stats.size ? identityOf(stats, data.subarray(data.length - hashBytes)) : null;
    return { data, identity, mtimeMs: Number(stats.mtimeMs) };
  } catch {
    return { data: null, identity: null, mtimeMs: 0 };
  } finally {
    await handle.close();
  }
}

/**
 * Whether the kept copy is the file `identity` names, whole: read through one descriptor, its
 * stat data and checksum those of the key, and its checksum the hash of its bytes (git does not
 * check an index's checksum when it reads one).
 */
export async function keptCopyWhole(gitDir: string, identity: string, algorithm: 'sha1' | 'sha256', hashBytes: number): Promise<boolean> {
  const read = await readIdentified(join(gitDir, KEPT_INDEX_FILE), hashBytes);
  if (read.data === null || read.identity !== identity) return false;
  const end = read.data.length - hashBytes;
  return createHash(algorithm).update(read.data.subarray(0, end)).digest().equals(read.data.subarray(end));
}

/** The key's text, ending with a line that holds the hash of the lines before it. */
function keyText(key: KeptIndexKey): string {
  const body = [
    VERSION, `index ${key.index}`, `copy ${key.copy}`, `fingerprint ${key.fingerprint}`, `tip ${key.tip}`, `vouched ${key.vouched}`, `staged ${key.staged}`,
    ...key.attributes.map(([folder, stat]) => `attributes ${folder}\0${stat}`),
  ].join('\n');
  return `${body}\nend ${createHash('sha256').update(body).digest('hex')}\n`;
}

/** The key of the kept copy, or null where there is none or it does not read whole. */
export async function readKeptIndexKey(gitDir: string): Promise<KeptIndexKey | null> {
  const text = await readFile(join(gitDir, KEPT_INDEX_KEY_FILE), 'utf8').catch(() => null);
  if (text === null || !text.endsWith('\n')) return null;
  const endAt = text.lastIndexOf('\nend ');
  if (endAt < 0) return null;
  const body = text.slice(0, endAt);
  if (text.slice(endAt + 5, -1) !== createHash('sha256').update(body).digest('hex')) return null;
  const lines = body.split('\n');
  if (lines[0] !== VERSION) return null;
  const field = (at: number, name: string): string | null => (lines[at]?.startsWith(`${name} `) === true ? (lines[at] as string).slice(name.length + 1) : null);
  const [index, copy, fingerprint, tip, vouched, staged] = [field(1, 'index'), field(2, 'copy'), field(3, 'fingerprint'), field(4, 'tip'), field(5, 'vouched'), field(6, 'staged')];
  if (index === null || copy === null || fingerprint === null || tip === null || vouched === null || staged === null || !/^\d+$/.test(vouched)) return null;
  const attributes: Array<readonly [string, string]> = [];
  for (let at = 7; at < lines.length; at += 1) {
    const value = field(at, 'attributes');
    const split = value === null ? -1 : value.indexOf('\0');
    if (value === null || split < 0) return null;
    attributes.push([value.slice(0, split), value.slice(split + 1)]);
  }
  return { index, copy, fingerprint, tip, vouched: Number(vouched), staged, attributes };
}

/** Writes what status said of the copy against HEAD, and gives its hash for the key (one not written reads as none: the next save makes the copy again). */
export async function writeKeptStaged(gitDir: string, text: string): Promise<string> {
  await replaceCacheFile(join(gitDir, KEPT_STAGED_FILE), text);
  return createHash('sha256').update(text).digest('hex');
}

/** What status said of the copy against HEAD, where the file's hash is `hash`; null otherwise. */
export async function readKeptStaged(gitDir: string, hash: string): Promise<string | null> {
  const text = await readFile(join(gitDir, KEPT_STAGED_FILE), 'utf8').catch(() => null);
  return text !== null && createHash('sha256').update(text).digest('hex') === hash ? text : null;
}

/** Writes the key of the kept copy; one that cannot be written only costs the next save the copy. */
export async function writeKeptIndexKey(gitDir: string, key: KeptIndexKey): Promise<void> {
  await replaceCacheFile(join(gitDir, KEPT_INDEX_KEY_FILE), keyText(key));
}

/** Removes the key (so the copy is used no more) and the copy. */
export function dropKeptIndex(gitDir: string): void {
  for (const name of [KEPT_INDEX_KEY_FILE, KEPT_INDEX_FILE, KEPT_STAGED_FILE]) {
    try {
      rmSync(join(gitDir, name), { force: true });
    } catch {
      // A key left behind is checked again in full by the next save: it costs time, never the answer.
    }
  }
}
