// The memo of change counts: what each snapshot changed against its first parent, kept in the
// git directory so that a read with change counts asks git only about snapshots it has not
// counted before (after a save, the new tip alone). A commit's id names its content and the
// counts are made with fixed diff settings (lib/git/diff.ts), so an entry never goes stale.
import { appendFile, readFile } from 'node:fs/promises';
import { OBJECT_ID } from '../git/formats/object-format.js';
import { VERSION } from '../version.js';
import { replaceCacheFile } from './cache-file.js';

/** The memo's file, in the git directory every worktree shares. */
export const CHANGE_MEMO_FILE = 'chant-change-memo';

const FORMAT = 'chant-change-memo';
const REVISION = 1;
/** A file may hold this many entries more than twice what the read reached before it is written anew. */
const SLACK = 16;

/** What one snapshot changed against `against`, its first parent. */
export interface CountedCommit {
  against: string;
  files: number;
  added: number;
  removed: number;
}

/** The memo as a read found it. */
export interface ChangeMemo {
  counts: Map<string, CountedCommit>;
  /** How many entries the file holds, repeated ones counted. */
  stored: number;
  /** Whether new entries may be appended: the file is there, of this version, and trusted. */
  appendable: boolean;
}

/**
 * The counts the memo holds: none when the file is missing, unreadable, of another version or
 * object format, or holds anything a read could not have written; a line that is not JSON is a
 * read killed while appending, and only that line is left out.
 */
export async function readChangeMemo(file: string, objectFormat: string): Promise<ChangeMemo> {
  const untrusted: ChangeMemo = { counts: new Map(), stored: 0, appendable: false };
  const text = await readFile(file, 'utf8').catch(() => null);
  if (text === null) return untrusted;
  const headerEnd = text.indexOf('\n') < 0 ? text.length : text.indexOf('\n');
  const header = parse(text.slice(0, headerEnd)) as Record<string, unknown> | undefined;
  if (typeof header !== 'object' || header === null || header.format !== FORMAT || header.revision !== REVISION || header.chant !== VERSION || header.objectFormat !== objectFormat) return untrusted;
  const memo: ChangeMemo = { counts: new Map(), stored: 0, appendable: true };
  // Indexed loops and no destructuring: a read with change counts parses every entry of the
  // chain, and a short-lived process runs most of this before it is optimized.
  for (let start = headerEnd; start < text.length;) {
    let end = text.indexOf('\n', start + 1);
    if (end < 0) end = text.length;
    const line = text.slice(start + 1, end);
    start = end;
    if (line === '') continue;
    const batch = parse(line);
    if (batch === undefined) continue;
    if (!Array.isArray(batch)) return untrusted;
    for (let i = 0; i < batch.length; i += 1) {
      const entry = batch[i] as unknown;
      if (!Array.isArray(entry) || entry.length !== 5) return untrusted;
      const commit = entry[0] as unknown;
      const against = entry[1] as unknown;
      const files = entry[2] as unknown;
      const added = entry[3] as unknown;
      const removed = entry[4] as unknown;
      if (typeof commit !== 'string' || !OBJECT_ID.test(commit) || typeof against !== 'string' || !OBJECT_ID.test(against)
        || !count(files) || !count(added) || !count(removed)) return untrusted;
      memo.counts.set(commit, { against, files, added, removed });
      memo.stored += 1;
    }
  }
  return memo;
}

/**
 * Records what a read counted: appended as one line when the file can take it, else the file is
 * replaced by `keep` (what the read reached). A memo that cannot be written costs the next read
 * its time, never its answer.
 */
export async function recordChangeMemo(file: string, objectFormat: string, memo: ChangeMemo, learned: ReadonlyMap<string, CountedCommit>, keep: ReadonlyMap<string, CountedCommit>): Promise<void> {
  if (learned.size === 0) return;
  if (memo.appendable && memo.stored + learned.size <= 2 * keep.size + SLACK) {
    await appendFile(file, `\n${lineOf(learned)}`).catch(() => undefined);
    return;
  }
  await replaceCacheFile(file, `${JSON.stringify({ format: FORMAT, revision: REVISION, chant: VERSION, objectFormat })}\n${lineOf(keep)}`);
}

function lineOf(counts: ReadonlyMap<string, CountedCommit>): string {
  return JSON.stringify([...counts].map(([commit, { against, files, added, removed }]) => [commit, against, files, added, removed]));
}

function count(value: unknown): value is number {
  return typeof value === 'number' && Number.isInteger(value) && value >= 0;
}

function parse(text: string): unknown {
  try {
    return JSON.parse(text) as unknown;
  } catch {
    return undefined;
  }
}
