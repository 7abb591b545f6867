// The memo of snapshot chains: what the read learned of each commit on a chain, kept in the git
// directory so that the next read does not ask git for it again. A commit's id names its
// content, so what it reads as (a snapshot or not) and where its chain goes on never change;
// only the tips move, and those are read from the refs on every read. Git is asked only for the
// commits the memo does not know: after a save, that is the new tip alone.
import { randomBytes } from 'node:crypto';
import { readFile, rename, rm, writeFile } from 'node:fs/promises';
import { OBJECT_ID } from './git/object-format.js';
import { VERSION } from './version.js';
import type { ChainLink } from './snapshot.js';

/** The memo's file, in the git directory every worktree shares (the refs it follows are shared too). */
export const SNAPSHOT_MEMO_FILE = 'chant-snapshot-memo';

/** What the file says it is: a memo written by another chant version is not read, since reading rules may have changed. */
const FORMAT = 'chant-snapshot-memo';

/**
 * The links the memo holds, or none when the file is missing, unreadable, written by another
 * version or for another object format, or holds anything that is not a link a read could
 * have written (a memo that cannot be trusted whole is not used at all).
 */
export async function readSnapshotMemo(file: string, objectFormat: string): Promise<Map<string, ChainLink>> {
  const links = new Map<string, ChainLink>();
  let parsed: unknown;
  try {
    parsed = JSON.parse(await readFile(file, 'utf8'));
  } catch {
    return links;
  }
  if (!isRecord(parsed) || parsed.format !== FORMAT || parsed.chant !== VERSION || parsed.objectFormat !== objectFormat || !Array.isArray(parsed.links)) return links;
  for (const entry of parsed.links as unknown[]) {
    const link = Array.isArray(entry) ? linkOf(entry) : null;
    if (link === null) return new Map();
    links.set((entry as string[])[0] as string, link);
  }
  return links;
}

/**
 * Replaces the memo with `links`, whole or not at all: a memo that cannot be written costs the
 * next read its time, never its answer.
 */
export async function writeSnapshotMemo(file: string, objectFormat: string, links: ReadonlyMap<string, ChainLink>): Promise<void> {
  const temporary = `${file}.${process.pid}-${randomBytes(4).toString('hex')}.tmp`;
  const entries = [...links].map(([commit, { snapshot, next }]) => (snapshot === null
    ? [commit]
    : [commit, next, snapshot.tree, snapshot.branch, snapshot.head, snapshot.kind, snapshot.label, snapshot.by, snapshot.at]));
  try {
    await writeFile(temporary, JSON.stringify({ format: FORMAT, chant: VERSION, objectFormat, links: entries }));
    await rename(temporary, file);
  } catch {
    await rm(temporary, { force: true }).catch(() => undefined);
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
