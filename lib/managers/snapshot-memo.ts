// The memo of snapshot chains: what the read learned of each commit on a chain, kept in the git
// directory so that the next read does not ask git for it again. A commit's id names its
// content, so what it reads as (a snapshot or not), where its chain goes on and how many
// snapshots the chain holds from it never change; only the tips move, and those are read from
// the refs on every read. Git is asked only for the commits the memo does not know: after a
// save, that is the new tip alone. A snapshot's entry may also carry what it changed against
// the commit before it, once a read with change counts counted it, so that such a read costs
// one memo, not two.
import { appendFile, open, readFile } from 'node:fs/promises';
import type { FileHandle } from 'node:fs/promises';
import { replaceCacheFile } from './cache-file.js';
import { OBJECT_ID } from '../git/formats/object-format.js';
import { VERSION } from '../version.js';
import type { ChangeCounts } from '../documents/snapshot.js';
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
 * what it left out (Chant-Wip-Unsaved), one more value in each entry; 5 since each snapshot
 * entry ends with its depth and lines hold at most {@link LINE_ENTRIES} entries, the newest last,
 * so that a read with a limit takes the lines it needs from the file's end; 6 since a snapshot
 * entry may end with its change counts (the change memo, `chant-change-memo`, is no longer read).
 */
const REVISION = 6;

/** A file may hold this many links more than twice what the tips reach before a read writes it anew. */
const SLACK = 16;

/** At most this many entries a line: a read from the end parses whole lines, so a line is what it pays at least. */
const LINE_ENTRIES = 256;

/** The first read from the end takes this many bytes (about 500 entries); each further read twice the one before. */
const TAIL_BYTES = 64 * 1024;

/** A header longer than this is no header a read wrote. */
const HEADER_BYTES = 4096;

/**
 * The memo as a read found it. The file is a header line, then lines of what reads learned,
 * each the JSON of at most {@link LINE_ENTRIES} links, each begun with its own newline so that a
 * line a killed read left unfinished ends where the next begins. Within one write, links nearer
 * a tip come later, and later writes come after earlier ones: the file's end holds the newest
 * of every chain.
 */
export interface SnapshotMemo {
  /** The links read so far. */
  links: Map<string, ChainLink>;
  /** How many entries the lines read hold, repeated ones counted: what a read weighs a rewrite by. */
  stored: number;
  /** Whether the next links may be appended: the file is there, of this version, and nothing read of it was untrusted. */
  appendable: boolean;
  /** Whether every line has been read. */
  complete: boolean;
  /**
   * False once a line read holds anything a read could not have written: the memo is then not
   * to be used at all, and `links` is emptied.
   */
  trusted: boolean;
  /** Reads lines further back from the end (a no-op once complete). */
  readOlder(): Promise<void>;
  /** Lets the file go: a memo read from its end holds it open, so a rewrite beside it changes nothing it reads. */
  close(): Promise<void>;
}

/** A memo with nothing in it: missing, not of this version, or not to be trusted. */
export function emptySnapshotMemo(trusted = true): SnapshotMemo {
  return { links: new Map(), stored: 0, appendable: false, complete: true, trusted, readOlder: async () => undefined, close: async () => undefined };
}

/**
 * Opens the memo: its header, and either every line (`whole`) or the lines at its end, with
 * `readOlder` to go further back. Nothing is used when the file is missing, unreadable,
 * written by another version or for another object format (an empty memo), or holds anything
 * that is not a link a read could have written (`trusted` false: a memo that cannot be trusted
 * whole is not used at all); a line that is not JSON is a read killed while appending, and
 * only that line is left out.
 */
export async function openSnapshotMemo(file: string, objectFormat: string, whole: boolean): Promise<SnapshotMemo> {
  if (whole) return readWhole(file, objectFormat);
  const handle = await open(file, 'r').catch(() => null);
  if (handle === null) return emptySnapshotMemo();
  let reader: TailReader | null = null;
  try {
    const { size } = await handle.stat();
    if (size <= TAIL_BYTES) return await readWhole(file, objectFormat, await handle.readFile('utf8'));
    const first = Buffer.alloc(HEADER_BYTES);
    const { bytesRead } = await handle.read(first, 0, HEADER_BYTES, 0);
    const headerEnd = first.subarray(0, bytesRead).indexOf(0x0a);
    if (headerEnd < 0 || !headerFits(first.toString('utf8', 0, headerEnd), objectFormat)) return emptySnapshotMemo(false);
    reader = new TailReader(handle, headerEnd, size);
    await reader.readOlder();
    return reader;
  } catch {
    return emptySnapshotMemo();
  } finally {
    if (reader === null) await handle.close().catch(() => undefined);
  }
}

async function readWhole(file: string, objectFormat: string, read?: string): Promise<SnapshotMemo> {
  const text = read ?? await readFile(file, 'utf8').catch(() => null);
  if (text === null) return emptySnapshotMemo();
  const firstLine = text.indexOf('\n');
  if (!headerFits(firstLine < 0 ? text : text.slice(0, firstLine), objectFormat)) return emptySnapshotMemo(false);
  const memo: SnapshotMemo = { links: new Map(), stored: 0, appendable: true, complete: true, trusted: true, readOlder: async () => undefined, close: async () => undefined };
  for (let start = firstLine; start >= 0;) {
    const end = text.indexOf('\n', start + 1);
    const line = text.slice(start + 1, end < 0 ? text.length : end);
    start = end;
    const added = addLine(line, memo.links, true);
    if (added === null) return emptySnapshotMemo(false);
    memo.stored += added;
  }
  return memo;
}

/** The lines of a memo read from its end, a block at a time, the newest first. */
class TailReader implements SnapshotMemo {
  links = new Map<string, ChainLink>();
  stored = 0;
  appendable = true;
  complete = false;
  trusted = true;
  /** Where the bytes not read yet end; they start at the header's newline. */
  #end: number;
  /** The start of a line that began before #end: the bytes read of it so far. */
  #carry = Buffer.alloc(0);
  #block = TAIL_BYTES;
  readonly #handle: FileHandle;
  readonly #headerEnd: number;

  constructor(handle: FileHandle, headerEnd: number, size: number) {
    this.#handle = handle;
    this.#headerEnd = headerEnd;
    this.#end = size;
  }

  async close(): Promise<void> {
    await this.#handle.close().catch(() => undefined);
  }

  /** Reads the next block back, and every line it completes, newest first. */
  async readOlder(): Promise<void> {
    if (this.complete) return;
    const start = Math.max(this.#headerEnd, this.#end - this.#block);
    const block = Buffer.alloc(this.#end - start);
    const { bytesRead } = await this.#handle.read(block, 0, block.length, start).catch(() => ({ bytesRead: -1 }));
    // The file was cut short under the read: what it said is not known any more.
    if (bytesRead !== block.length) return this.#distrust();
    this.#end = start;
    this.#block *= 2;
    const data = this.#carry.length === 0 ? block : Buffer.concat([block, this.#carry]);
    // The bytes before the first newline belong to a line that began before this block, unless
    // the block reached the header, whose newline begins the first line.
    let at = data.indexOf(0x0a);
    if (start === this.#headerEnd) this.complete = true;
    if (at < 0) {
      this.#carry = data;
      return;
    }
    this.#carry = data.subarray(0, at);
    const lines: Array<[number, number]> = [];
    for (let next = data.indexOf(0x0a, at + 1); ; next = data.indexOf(0x0a, at + 1)) {
      lines.push([at + 1, next < 0 ? data.length : next]);
      if (next < 0) break;
      at = next;
    }
    for (let i = lines.length - 1; i >= 0; i -= 1) {
      const [from, to] = lines[i] as [number, number];
      const added = addLine(data.toString('utf8', from, to), this.links, false);
      if (added === null) return this.#distrust();
      this.stored += added;
    }
  }

  #distrust(): void {
    this.links.clear();
    this.trusted = false;
    this.appendable = false;
    this.complete = true;
  }
}

function headerFits(line: string, objectFormat: string): boolean {
  const header = parseJson(line);
  return isRecord(header) && header.format === FORMAT && header.revision === REVISION && header.chant === VERSION && header.objectFormat === objectFormat;
}

/**
 * Records what a read learned (`learned`, the links nearer a tip last; links it only counted
 * are in it again, with their counts): appended as lines when the file can take them, or else
 * the file is replaced, whole or not at all, by `keep.links()` (what the read's tips reach, or
 * everything when it read one branch; about `keep.size` of them): when it is missing or
 * untrusted, or, read whole, would hold more than twice `keep.size` and a little, or when the
 * read learned more than a line's worth and more than half of what it keeps (a first read with
 * change counts over a memo without them: appending would make every later read parse the
 * chain twice). A read of the file's end (`keep.size` null) only appends: it does not know
 * what the rest holds. Links whose depth is not known are not kept. A memo that cannot be
 * written costs the next read its time, never its answer.
 */
export async function recordSnapshotMemo(
  file: string, objectFormat: string, memo: SnapshotMemo, learned: ReadonlyArray<readonly [string, ChainLink]>,
  keep: { size: number | null; links: () => ReadonlyArray<readonly [string, ChainLink]> },
): Promise<void> {
  if (learned.length === 0) return;
  const append = keep.size === null
    || (memo.stored + learned.length <= 2 * keep.size + SLACK && !(learned.length > LINE_ENTRIES && 2 * learned.length > keep.size));
  if (memo.appendable && append) {
    // One write, opened for appending: a concurrent read's lines go before or after these.
    await appendFile(file, linesOf(learned)).catch(() => undefined);
    return;
  }
  await replaceCacheFile(file, `${JSON.stringify({ format: FORMAT, revision: REVISION, chant: VERSION, objectFormat })}${linesOf(keep.links())}`);
}

/** Links as lines of the file, each begun with a newline, at most {@link LINE_ENTRIES} a line. */
function linesOf(links: ReadonlyArray<readonly [string, ChainLink]>): string {
  const known = links.filter(([, link]) => link.depth !== null);
  let text = '';
  for (let at = 0; at < known.length; at += LINE_ENTRIES) text += `\n${lineOf(known.slice(at, at + LINE_ENTRIES))}`;
  return text;
}

/**
 * Links as one line of the file: `[strings, entries]`. Each entry is `[commit]` for a commit
 * that is not a snapshot, else `[commit, next, ...the snapshot, depth]`: `next` the position in
 * this line of the entry it goes on to (or the commit's id, or null), the snapshot as
 * `storeSnapshot` (lib/snapshot/format.ts) keeps it, with the strings a chain repeats (tree,
 * branch, head, label, principal) named by their position in `strings`, and `depth` how many
 * snapshots the chain holds from it, then, once counted, `against, files, added, removed`: the
 * change counts, `against` null for the snapshot's head, else named as `next` is. A field added
 * to the snapshot makes every entry longer, so a memo written before is not trusted and is
 * written anew.
 */
function lineOf(links: ReadonlyArray<readonly [string, ChainLink]>): string {
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
  const order = new Map(links.map(([commit], index) => [commit, index]));
  const entries = links.map(([commit, { snapshot, next, depth, changes }]) => {
    if (snapshot === null) return [commit];
    const entry = [commit, next === null ? null : order.get(next) ?? next, ...storeSnapshot(snapshot, text), depth];
    if (changes !== null) {
      const { against, files, added, removed } = changes;
      entry.push(against === snapshot.head ? null : order.get(against) ?? against, files, added, removed);
    }
    return entry;
  });
  return JSON.stringify([strings, entries]);
}

/** The length of a snapshot's entry (see {@link lineOf}), and of one with its change counts. */
const ENTRY_LENGTH = 2 + STORED_SNAPSHOT_LENGTH + 1;
const COUNTED_LENGTH = ENTRY_LENGTH + 4;

/**
 * Adds the links a line holds to `links` (over those there when `replace`, else only the ones
 * not there; change counts either holds are kept, as both entries are facts of one commit):
 * how many it held, 0 for a line that is not JSON (a read killed while appending), or null
 * when it is not a line a read could have written (see {@link lineOf}).
 */
function addLine(line: string, links: Map<string, ChainLink>, replace: boolean): number | null {
  if (line === '') return 0;
  const batch = parseJson(line);
  if (batch === undefined) return 0;
  if (!Array.isArray(batch) || batch.length !== 2 || !Array.isArray(batch[0]) || !Array.isArray(batch[1])) return null;
  const [strings, entries] = batch as [unknown[], unknown[]];
  for (const value of strings) if (typeof value !== 'string') return null;
  for (const entry of entries) {
    if (!Array.isArray(entry) || typeof entry[0] !== 'string' || !OBJECT_ID.test(entry[0])) return null;
  }
  const commitAt = (at: number): string | undefined => (entries[at] as unknown[] | undefined)?.[0] as string | undefined;
  const named = (at: unknown): string | null | undefined => (at === null ? null
    : typeof at === 'number' ? (Number.isInteger(at) ? commitAt(at) ?? undefined : undefined)
      : typeof at === 'string' && OBJECT_ID.test(at) ? at : undefined);
  // Each string is checked once however many entries name it: 1 an id, 2 not one.
  const checked = new Uint8Array(strings.length);
  const string = (at: unknown, id: boolean): string | null => {
    if (typeof at !== 'number' || !Number.isInteger(at) || at < 0 || at >= strings.length) return null;
    const value = strings[at] as string;
    if (id) {
      if (checked[at] === 0) checked[at] = OBJECT_ID.test(value) ? 1 : 2;
      if (checked[at] !== 1) return null;
    }
    return value;
  };
  for (const entry of entries as unknown[][]) {
    const commit = entry[0] as string;
    if (entry.length === 1) {
      if (replace || !links.has(commit)) links.set(commit, { snapshot: null, next: null, depth: 0, changes: null });
      continue;
    }
    if (entry.length !== ENTRY_LENGTH && entry.length !== COUNTED_LENGTH) return null;
    const next = named(entry[1]);
    if (next === undefined) return null;
    const depth = entry[ENTRY_LENGTH - 1];
    if (typeof depth !== 'number' || !Number.isSafeInteger(depth) || depth < 1 || (next === null && depth !== 1)) return null;
    const snapshot = loadSnapshot(commit, entry, string, 2);
    if (snapshot === null) return null;
    let changes: ChangeCounts | null = null;
    if (entry.length === COUNTED_LENGTH) {
      const against = named(entry[ENTRY_LENGTH]);
      const files = entry[ENTRY_LENGTH + 1];
      const added = entry[ENTRY_LENGTH + 2];
      const removed = entry[ENTRY_LENGTH + 3];
      if (against === undefined || !isCount(files) || !isCount(added) || !isCount(removed)) return null;
      changes = { against: against ?? snapshot.head, files, added, removed };
    }
    const there = links.get(commit);
    if (there === undefined || replace) links.set(commit, { snapshot, next, depth, changes: changes ?? there?.changes ?? null });
    else if (there.changes === null) there.changes = changes;
  }
  return entries.length;
}

function parseJson(text: string): unknown {
  try {
    return JSON.parse(text) as unknown;
  } catch {
    return undefined;
  }
}

function isCount(value: unknown): value is number {
  return typeof value === 'number' && Number.isSafeInteger(value) && value >= 0;
}

function isRecord(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}
