// The memo of snapshot chains: what the read learned of each commit on a chain, kept in the git
// directory so that the next read does not ask git for it again. A commit's id names its
// content, so what it reads as (a snapshot or not) and where its chain goes on never change;
// only the tips move, and those are read from the refs on every read. Git is asked only for the
// commits the memo does not know: after a save, that is the new tip alone.
import { appendFile, readFile } from 'node:fs/promises';
import { replaceCacheFile } from './cache-file.js';
import { OBJECT_ID } from '../git/formats/object-format.js';
import { VERSION } from '../version.js';
import type { ChainLink } from '../snapshot/chain.js';
import { loadSnapshot, STORED_SNAPSHOT_LENGTH, storeSnapshot } from '../snapshot/format.js';

/** The memo's file, in the git directory every worktree shares (the refs it follows are shared too). */
export const SNAPSHOT_MEMO_FILE = 'chant-snapshot-memo';

/** What the file says it is: a memo written by another chant version is not read, since reading rules may have changed. */
const FORMAT = 'chant-snapshot-memo';

/**
 * Raised whenever what a read learns, or how it is written, changes within a version: 2 since
 * tips are read in UTF-8 through git log and nothing is learned of a shallow, grafted or
 * replaced history; 3 since a line names repeated strings once; 4 since a snapshot may carry
 * what it left out (Chant-Wip-Unsaved), one more value in each entry.
 */
const REVISION = 4;

/** A file may hold this many links more than twice what the tips reach before a read writes it anew. */
const SLACK = 16;

/**
 * The memo as a read found it. The file is a header line, then one line per read that learned
 * something, each the JSON array of what it learned and each begun with its own newline, so
 * that a line a killed read left unfinished ends where the next begins.
 */
export interface SnapshotMemo {
  /** What the file holds; empty when it is missing or cannot be trusted. */
  links: Map<string, ChainLink>;
  /** How many entries the file holds, repeated ones counted: what a read weighs a rewrite by. */
  stored: number;
  /** Whether the next links may be appended: the file is there, of this version, and trusted. */
  appendable: boolean;
}

/**
 * The links the memo holds. None when the file is missing, unreadable, written by another
 * version or for another object format, or holds anything that is not a link a read could
 * have written (a memo that cannot be trusted whole is not used at all); a line that is not
 * JSON is a read killed while appending, and only that line is left out.
 */
export async function readSnapshotMemo(file: string, objectFormat: string): Promise<SnapshotMemo> {
  const untrusted: SnapshotMemo = { links: new Map(), stored: 0, appendable: false };
  const text = await readFile(file, 'utf8').catch(() => null);
  if (text === null) return untrusted;
  const lines = text.split('\n');
  const header = parseJson(lines[0] as string);
  if (!isRecord(header) || header.format !== FORMAT || header.revision !== REVISION || header.chant !== VERSION || header.objectFormat !== objectFormat) return untrusted;
  const memo: SnapshotMemo = { links: new Map(), stored: 0, appendable: true };
  for (const line of lines.slice(1)) {
    if (line === '') continue;
    const batch = parseJson(line);
    if (batch === undefined) continue;
    const read = linksOf(batch);
    if (read === null) return untrusted;
    for (const [commit, link] of read) memo.links.set(commit, link);
    memo.stored += read.length;
  }
  return memo;
}

/**
 * Records what a read learned: appended as one line when the file can take it, or else the file
 * is replaced, whole or not at all, by `keep` (what the read's tips reach, or everything when
 * it read one branch): when it is missing or untrusted, or would hold more than twice `keep`
 * and a little. A memo that cannot be written costs the next read its time, never its answer.
 */
export async function recordSnapshotMemo(file: string, objectFormat: string, memo: SnapshotMemo, learned: ReadonlyMap<string, ChainLink>, keep: ReadonlyMap<string, ChainLink>): Promise<void> {
  if (learned.size === 0) return;
  if (memo.appendable && memo.stored + learned.size <= 2 * keep.size + SLACK) {
    // One write of one line, opened for appending: a concurrent read's line goes before or after it.
    await appendFile(file, `\n${lineOf(learned)}`).catch(() => undefined);
    return;
  }
  await replaceCacheFile(file, `${JSON.stringify({ format: FORMAT, revision: REVISION, chant: VERSION, objectFormat })}\n${lineOf(keep)}`);
}

/**
 * Links as one line of the file: `[strings, entries]`. Each entry is `[commit]` for a commit
 * that is not a snapshot, else `[commit, next, ...the snapshot]`: `next` the position in this
 * line of the entry it goes on to (or the commit's id, or null), and the snapshot as
 * `storeSnapshot` (lib/snapshot/format.ts) keeps it, with the strings a chain repeats (tree,
 * branch, head, label, principal) named by their position in `strings`. A field added to the
 * snapshot makes every entry longer, so a memo written before is not trusted and is written anew.
 */
function lineOf(links: ReadonlyMap<string, ChainLink>): string {
  const strings: string[] = [];
  const positions = new Map<string, number>();
  const text = (value: string): number => {
    let at = positions.get(value);
    if (at === undefined) {
      at = strings.length;
      strings.push(value);
      positions.set(value, at);
    }
    return at;
  };
  const order = new Map([...links.keys()].map((commit, index) => [commit, index]));
  const entries = [...links].map(([commit, { snapshot, next }]) => (snapshot === null
    ? [commit]
    : [commit, next === null ? null : order.get(next) ?? next, ...storeSnapshot(snapshot, text)]));
  return JSON.stringify([strings, entries]);
}

/** The links a line holds, or null when it is not a line a read could have written (see {@link lineOf}). */
function linksOf(batch: unknown): Array<[string, ChainLink]> | null {
  if (!Array.isArray(batch) || batch.length !== 2 || !Array.isArray(batch[0]) || !Array.isArray(batch[1])) return null;
  const [strings, entries] = batch as [unknown[], unknown[]];
  if (!strings.every((value) => typeof value === 'string')) return null;
  const commits = entries.map((entry) => (Array.isArray(entry) && typeof entry[0] === 'string' && OBJECT_ID.test(entry[0]) ? entry[0] : null));
  // Each string is checked once however many entries name it.
  const checked = new Map<number, boolean>();
  const string = (at: unknown, id: boolean): string | null => {
    if (typeof at !== 'number' || !Number.isInteger(at) || at < 0 || at >= strings.length) return null;
    const value = strings[at] as string;
    if (id) {
      let ok = checked.get(at);
      if (ok === undefined) checked.set(at, (ok = OBJECT_ID.test(value)));
      if (!ok) return null;
    }
    return value;
  };
  const read: Array<[string, ChainLink]> = [];
  for (const [index, entry] of entries.entries()) {
    const commit = commits[index];
    if (commit === null || commit === undefined || !Array.isArray(entry)) return null;
    if (entry.length === 1) {
      read.push([commit, { snapshot: null, next: null }]);
      continue;
    }
    if (entry.length !== 2 + STORED_SNAPSHOT_LENGTH) return null;
    const nextAt = entry[1] as unknown;
    const next = nextAt === null ? null
      : typeof nextAt === 'number' ? (Number.isInteger(nextAt) ? commits[nextAt] ?? null : null)
        : typeof nextAt === 'string' && OBJECT_ID.test(nextAt) ? nextAt : undefined;
    if (next === undefined || (nextAt !== null && next === null)) return null;
    const snapshot = loadSnapshot(commit, entry.slice(2), string);
    if (snapshot === null) return null;
    read.push([commit, { snapshot, next }]);
  }
  return read;
}

function parseJson(text: string): unknown {
  try {
    return JSON.parse(text) as unknown;
  } catch {
    return undefined;
  }
}

function isRecord(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

