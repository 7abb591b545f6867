// The memo of snapshot chains: what the read learned of each commit on a chain, kept in the git
// directory so that the next read does not ask git for it again. A commit's id names its
// content, so what it reads as (a snapshot or not) and where its chain goes on never change;
// only the tips move, and those are read from the refs on every read. Git is asked only for the
// commits the memo does not know: after a save, that is the new tip alone.
import { randomBytes } from 'node:crypto';
import { appendFile, readFile, rename, rm, writeFile } from 'node:fs/promises';
import { OBJECT_ID } from './git/object-format.js';
import { VERSION } from './version.js';
import type { ChainLink } from './snapshot.js';

/** The memo's file, in the git directory every worktree shares (the refs it follows are shared too). */
export const SNAPSHOT_MEMO_FILE = 'chant-snapshot-memo';

/** What the file says it is: a memo written by another chant version is not read, since reading rules may have changed. */
const FORMAT = 'chant-snapshot-memo';

/**
 * Raised whenever what a read learns, or how, changes within a version: 2 since tips are read
 * in UTF-8 through git log and nothing is learned of a shallow, grafted or replaced history.
 */
const REVISION = 2;

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
    if (!Array.isArray(batch)) return untrusted;
    for (const entry of batch as unknown[]) {
      const link = Array.isArray(entry) ? linkOf(entry) : null;
      if (link === null) return untrusted;
      memo.links.set((entry as string[])[0] as string, link);
      memo.stored += 1;
    }
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
    await appendFile(file, `\n${JSON.stringify(entriesOf(learned))}`).catch(() => undefined);
    return;
  }
  const temporary = `${file}.${process.pid}-${randomBytes(4).toString('hex')}.tmp`;
  try {
    await writeFile(temporary, `${JSON.stringify({ format: FORMAT, revision: REVISION, chant: VERSION, objectFormat })}\n${JSON.stringify(entriesOf(keep))}`);
    await rename(temporary, file);
  } catch {
    await rm(temporary, { force: true }).catch(() => undefined);
  }
}

/** Links as the file's entries: `[commit]` for a commit that is not a snapshot, else `[commit, next, tree, branch, head, kind, label, by, at]`. */
function entriesOf(links: ReadonlyMap<string, ChainLink>): unknown[] {
  return [...links].map(([commit, { snapshot, next }]) => (snapshot === null
    ? [commit]
    : [commit, next, snapshot.tree, snapshot.branch, snapshot.head, snapshot.kind, snapshot.label, snapshot.by, snapshot.at]));
}

function parseJson(text: string): unknown {
  try {
    return JSON.parse(text) as unknown;
  } catch {
    return undefined;
  }
}

/** A temporary file a memo write left behind: `chant-snapshot-memo.<pid>-<hex>.tmp`, its writer's pid captured. */
export const SNAPSHOT_MEMO_TEMPORARY = /^chant-snapshot-memo\.(\d+)-[0-9a-f]+\.tmp$/;

function isRecord(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

/**
 * The link an entry of the file holds, or null when it is not one a read could have written:
 * `[commit]` for a commit that is not a snapshot, `[commit, next, tree, branch, head, kind,
 * label, by, at]` for one that is (the snapshot's fields in their order, less its commit).
 */
function linkOf(entry: readonly unknown[]): ChainLink | null {
  const [commit, next, tree, branch, head, kind, label, by, at] = entry;
  if (typeof commit !== 'string' || !OBJECT_ID.test(commit)) return null;
  if (entry.length === 1) return { snapshot: null, next: null };
  const valid = entry.length === 9
    && (next === null || (typeof next === 'string' && OBJECT_ID.test(next)))
    && typeof tree === 'string' && OBJECT_ID.test(tree)
    && typeof branch === 'string' && branch !== ''
    && typeof head === 'string' && OBJECT_ID.test(head)
    && (kind === 'save' || kind === 'pre-restore')
    && (label === null || typeof label === 'string')
    && (by === null || typeof by === 'string')
    && typeof at === 'string';
  return valid ? { snapshot: { commit, tree, branch, head, kind, label, by, at }, next } : null;
}
