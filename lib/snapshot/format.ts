import { OBJECT_ID } from '../git/formats/object-format.js';
import type { CommitRecord } from '../git/plumbing.js';
import type { Snapshot, SnapshotKind } from '../documents/snapshot.js';

/** The ref namespace snapshots live under. */
export const WIP_REF_PREFIX = 'refs/chant/wip/';

/**
 * The ref a branch's snapshots live on.
 * @param branch - the branch's full name without `refs/heads/`
 * @returns `refs/chant/wip/<branch>`
 * @public
 */
export function wipRef(branch: string): string {
  return `${WIP_REF_PREFIX}${branch}`;
}

/** What a snapshot commit's message records. */
export interface SnapshotFields {
  branch: string;
  head: string;
  kind: SnapshotKind;
  label: string | null;
  by: string | null;
}

/**
 * The commit message of a snapshot: subject `chant wip: <branch>` (with ` (<label>)`), a blank
 * line, then the `Chant-Wip-*` trailers.
 */
export function snapshotMessage(fields: SnapshotFields): string {
  const subject = `chant wip: ${fields.branch}${fields.label === null ? '' : ` (${fields.label})`}`;
  const trailers = [
    `Chant-Wip-Branch: ${fields.branch}`,
    `Chant-Wip-Head: ${fields.head}`,
    `Chant-Wip-Kind: ${fields.kind}`,
    ...(fields.label === null ? [] : [`Chant-Wip-Label: ${fields.label}`]),
    ...(fields.by === null ? [] : [`Chant-Wip-By: ${fields.by}`]),
  ];
  return `${subject}\n\n${trailers.join('\n')}\n`;
}

/**
 * Reads a commit as a snapshot: null unless its last paragraph carries both `Chant-Wip-Branch`
 * and `Chant-Wip-Head` (keys match without regard to case; a kind other than `pre-restore`
 * reads as `save`).
 */
export function readSnapshot(commit: CommitRecord): Snapshot | null {
  // Walks the last paragraph backwards, line by line: the read parses one message per
  // snapshot, ten thousand at a time, so no pass over the whole message is spent on the rest.
  const message = commit.message;
  let end = message.length;
  while (end > 0 && message.charCodeAt(end - 1) === 10) end -= 1;
  let branch: string | undefined;
  let head: string | undefined;
  let kind: string | undefined;
  let label: string | undefined;
  let by: string | undefined;
  let closed = false;
  while (end > 0) {
    const start = message.lastIndexOf('\n', end - 1) + 1;
    if (isBlank(message, start, end)) {
      closed = true;
      break;
    }
    // Only the five Chant-Wip keys matter, and each is a valid trailer key, so matching the text
    // before the colon against them, without regard to case, is the whole check. Indices rather
    // than slices: the read does this for every line of ten thousand messages.
    const colon = message.indexOf(':', start);
    if (colon > start + KEY_PREFIX.length && colon < end && startsWithFolded(message, start, KEY_PREFIX)) {
      const key = keyAt(message, start + KEY_PREFIX.length, colon);
      if (key !== null) {
        const from = message.charCodeAt(colon + 1) === 32 && colon + 1 < end ? colon + 2 : colon + 1;
        const value = message.slice(from, end);
        // Going backwards, so the earliest occurrence of a key is the one left standing.
        switch (key) {
          case 'branch': branch = value; break;
          case 'head': head = value.trim(); break;
          case 'kind': kind = value.trim(); break;
          case 'label': label = value; break;
          case 'by': by = value; break;
        }
      }
    }
    end = start - 1;
  }
  // A message of one paragraph has a subject and no trailers.
  if (!closed || branch === undefined || branch === '' || head === undefined || !OBJECT_ID.test(head)) return null;
  return {
    commit: commit.commit,
    tree: commit.tree,
    branch,
    head,
    kind: kind === 'pre-restore' ? 'pre-restore' : 'save',
    label: label ?? null,
    by: by ?? null,
    at: new Date(commit.committedAt * 1000).toISOString(),
  };
}

const KEY_PREFIX = 'chant-wip-';
const KEYS = ['branch', 'head', 'kind', 'label', 'by'] as const;

/** Whether `text` from `at` starts with the lower-case `prefix`, without regard to ASCII case. */
function startsWithFolded(text: string, at: number, prefix: string): boolean {
  for (let i = 0; i < prefix.length; i += 1) {
    const want = prefix.charCodeAt(i);
    const code = text.charCodeAt(at + i);
    // Folding by the 0x20 bit is only right for letters: '-' must be '-' itself.
    if (code !== want && !(want >= 0x61 && want <= 0x7a && (code | 0x20) === want)) return false;
  }
  return true;
}

/** Which Chant-Wip key `text[from, to)` names, without regard to case, or null. */
function keyAt(text: string, from: number, to: number): (typeof KEYS)[number] | null {
  for (const key of KEYS) {
    if (key.length === to - from && startsWithFolded(text, from, key)) return key;
  }
  return null;
}

/** A line of only spaces and tabs ends a paragraph. */
function isBlank(text: string, from: number, to: number): boolean {
  for (let i = from; i < to; i += 1) {
    const code = text.charCodeAt(i);
    if (code !== 32 && code !== 9) return false;
  }
  return true;
}

/** One commit of a chain: its snapshot (null: it is not one) and the commit the chain goes on to (null: it ends there). */
export interface ChainLink {
  snapshot: Snapshot | null;
  next: string | null;
}

/**
 * What a commit is on a chain: its snapshot, and the commit the chain goes on to. The first
 * snapshot of a chain has HEAD as its only parent, and HEAD is no snapshot, so a chain goes on
 * only from a snapshot with two parents.
 */
export function chainLink(record: CommitRecord): ChainLink {
  const snapshot = readSnapshot(record);
  return { snapshot, next: snapshot !== null && record.parents.length > 1 ? (record.parents[0] as string) : null };
}

/**
 * The commits of a chain from `tip`, newest first, through `links` as far as they go: up to
 * the first commit that is not a snapshot or ends the chain, or to the first one `links` does
 * not hold.
 * @returns the commits walked, and the commit the walk stopped at for want of its link (or null)
 */
export function walkChain(tip: string, links: ReadonlyMap<string, ChainLink>): { walked: string[]; unknown: string | null } {
  const walked: string[] = [];
  const seen = new Set<string>();
  let next: string | null = tip;
  while (next !== null && !seen.has(next)) {
    const link = links.get(next);
    if (link === undefined) return { walked, unknown: next };
    seen.add(next);
    walked.push(next);
    next = link.snapshot === null ? null : link.next;
  }
  return { walked, unknown: null };
}

/**
 * A branch's checkpoint history from the commits a walk from its tip went through (see
 * {@link walkChain}), newest first, ending at the first commit that is not a snapshot.
 */
export function snapshotChain(walked: readonly string[], links: ReadonlyMap<string, ChainLink>): Snapshot[] {
  const chain: Snapshot[] = [];
  for (const commit of walked) {
    const snapshot = links.get(commit)?.snapshot;
    if (snapshot === null || snapshot === undefined) break;
    chain.push(snapshot);
  }
  return chain;
}
