import { OBJECT_ID } from '../git/formats/object-format.js';
import type { CommitRecord } from '../git/formats/commit.js';
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
