import type { CommitRecord } from './git/plumbing.js';
import type { Snapshot, SnapshotKind } from './documents/snapshot.js';

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
  const paragraphs = commit.message.replace(/\n+$/, '').split(/\n[ \t]*\n/);
  const last = paragraphs.length > 1 ? paragraphs.at(-1) ?? '' : '';
  const trailers = new Map<string, string>();
  for (const line of last.split('\n')) {
    const match = /^([A-Za-z0-9-]+):(.*)$/.exec(line);
    if (!match) continue;
    const key = (match[1] as string).toLowerCase();
    if (!trailers.has(key)) trailers.set(key, (match[2] as string).replace(/^ /, ''));
  }
  const branch = trailers.get('chant-wip-branch');
  const head = trailers.get('chant-wip-head')?.trim();
  if (branch === undefined || branch === '' || head === undefined || !/^[0-9a-f]{40,64}$/.test(head)) return null;
  return {
    commit: commit.commit,
    tree: commit.tree,
    branch,
    head,
    kind: trailers.get('chant-wip-kind')?.trim() === 'pre-restore' ? 'pre-restore' : 'save',
    label: trailers.get('chant-wip-label') ?? null,
    by: trailers.get('chant-wip-by') ?? null,
    at: new Date(commit.committedAt * 1000).toISOString(),
  };
}

/**
 * A branch's checkpoint history: the first-parent chain from `tip`, newest first, ending at
 * the first commit that is not a snapshot (or that the walk did not reach).
 */
export function snapshotChain(tip: string, commits: ReadonlyMap<string, CommitRecord>): Snapshot[] {
  const chain: Snapshot[] = [];
  const seen = new Set<string>();
  let next: string | undefined = tip;
  while (next !== undefined && !seen.has(next)) {
    seen.add(next);
    const record = commits.get(next);
    if (!record) break;
    const snapshot = readSnapshot(record);
    if (!snapshot) break;
    chain.push(snapshot);
    // The first snapshot of a chain has HEAD as its only parent, and HEAD is no snapshot.
    next = record.parents.length > 1 ? record.parents[0] : undefined;
  }
  return chain;
}
