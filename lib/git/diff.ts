// What changed between trees, as git counts it: one command each, its arguments and its parser
// side by side. Line counts are git's --numstat with the diff settings fixed (myers, no
// textconv, no external diff, files up to 512 MiB read as text where they are), so a user's
// configuration never changes a count the memo keeps,
// and git reads no index for them (lib/git/no-index.ts): attributes come from the working tree,
// as for `git diff <a> <b>`.
import { rawPathText } from './formats/path-text.js';
import { withoutIndex } from './no-index.js';
import type { Plumbing } from './plumbing.js';

/** The diff options every count is made with. */
const COUNTING = ['--no-renames', '--no-textconv', '--no-ext-diff', '--diff-algorithm=myers'] as const;

/**
 * The environment of a count: no index, and `core.bigFileThreshold` at git's default (512 MiB),
 * above which git counts a file as binary: a user's lower setting would turn a text file's
 * counts into none.
 */
function countingEnv(): Record<string, string> {
  return { ...withoutIndex(), GIT_CONFIG_COUNT: '1', GIT_CONFIG_KEY_0: 'core.bigFileThreshold', GIT_CONFIG_VALUE_0: '512m' };
}

/** One path that differs between two trees, with its line counts (null for a binary file). */
export interface CountedChange {
  /** The path as documents print it: itself, or in git's C-style quoting when it is not UTF-8 (lib/git/formats/path-text.ts). */
  path: string;
  /** The path's bytes, one character a byte (as `latin1` decodes them). */
  raw: string;
  oldMode: string;
  newMode: string;
  oldOid: string;
  newOid: string;
  /** A added, D deleted, M modified, T type changed. */
  status: string;
  added: number | null;
  removed: number | null;
}

/** Totals of a diff. */
export interface Totals {
  files: number;
  added: number;
  removed: number;
}

/**
 * Every path that differs between two trees (or commits), recursively, with its modes, ids and
 * line counts, in git's order: one `diff-tree --raw --numstat` call.
 */
export async function diffWithCounts(plumbing: Plumbing, from: string, to: string, signal?: AbortSignal): Promise<CountedChange[]> {
  const chunks: Buffer[] = [];
  const stdout = await plumbing.run(['diff-tree', '-r', '-z', '--raw', '--numstat', ...COUNTING, '--no-commit-id', '--end-of-options', from, to], { env: countingEnv(), onStdout: (chunk) => chunks.push(chunk), ...(signal === undefined ? {} : { signal }) });
  // Paths are read as bytes, as listTree reads them: decoded as UTF-8, two names that are not
  // UTF-8 would print alike (U+FFFD) and take each other's counts. A runner that does not
  // stream hands over text only: names that are not UTF-8 are lost there.
  const out = chunks.length === 0 ? Buffer.from(stdout, 'utf8').toString('latin1') : Buffer.concat(chunks).toString('latin1');
  const fields = out.split('\0');
  const changes: CountedChange[] = [];
  let i = 0;
  // First the raw records (":modes ids status", then the path), then one numstat record per
  // path in the same order ("added\tremoved\tpath", "-" for binary).
  for (; i + 1 < fields.length && (fields[i] as string).startsWith(':'); i += 2) {
    const [oldMode, newMode, oldOid, newOid, status] = (fields[i] as string).slice(1).split(' ') as [string, string, string, string, string];
    const raw = fields[i + 1] as string;
    changes.push({ path: rawPathText(raw), raw, oldMode, newMode, oldOid, newOid, status, added: null, removed: null });
  }
  const counted = new Map<string, { added: number; removed: number } | null>();
  for (; i < fields.length; i += 1) {
    const record = fields[i] as string;
    const second = record.indexOf('\t', record.indexOf('\t') + 1);
    if (second > 0) counted.set(record.slice(second + 1), parseNumstat(record));
  }
  for (const change of changes) {
    const counts = counted.get(change.raw) ?? null;
    if (counts === null) continue;
    change.added = counts.added;
    change.removed = counts.removed;
  }
  return changes;
}

/**
 * The totals of each commit against the commit named beside it, in one `diff-tree --stdin`
 * call for them all: `pairs` of `[commit, against]`.
 */
export async function countChanges(plumbing: Plumbing, pairs: ReadonlyArray<readonly [string, string]>, signal?: AbortSignal): Promise<Map<string, Totals>> {
  const totals = new Map<string, Totals>();
  if (pairs.length === 0) return totals;
  const out = await plumbing.run(['diff-tree', '--stdin', '--always', '-r', '-z', '--numstat', ...COUNTING], {
    input: pairs.map(([commit, against]) => `${commit} ${against}\n`).join(''),
    env: countingEnv(),
    ...(signal === undefined ? {} : { signal }),
  });
  let current: Totals | null = null;
  // Each commit's output is its id, then a numstat record per path; a record always holds tabs.
  for (const field of out.split('\0')) {
    if (field === '') continue;
    const id = field.replace(/^\n/, '');
    if (!id.includes('\t') && /^[0-9a-f]{40,64}$/.test(id)) {
      current = { files: 0, added: 0, removed: 0 };
      totals.set(id, current);
      continue;
    }
    if (current === null) continue;
    current.files += 1;
    const counts = parseNumstat(field);
    if (counts !== null) {
      current.added += counts.added;
      current.removed += counts.removed;
    }
  }
  return totals;
}

/** One file of a tree. */
export interface TreeFile {
  /** The path as documents print it: itself, or in git's C-style quoting when it is not UTF-8 (lib/git/formats/path-text.ts). */
  path: string;
  /** The path's bytes, one character a byte (as `latin1` decodes them). */
  raw: string;
  mode: string;
  oid: string;
}

/**
 * Every file a tree holds, recursively, in git's order (bytewise by path). Paths are read as
 * bytes, so names that are not UTF-8 stay distinct and exact.
 */
export async function listTree(plumbing: Plumbing, tree: string, signal?: AbortSignal): Promise<TreeFile[]> {
  const chunks: Buffer[] = [];
  const stdout = await plumbing.run(['ls-tree', '-r', '-z', '--full-tree', '--end-of-options', tree], { onStdout: (chunk) => chunks.push(chunk), ...(signal === undefined ? {} : { signal }) });
  // A runner that does not stream hands over text only: names that are not UTF-8 are lost there.
  const out = chunks.length === 0 ? Buffer.from(stdout, 'utf8').toString('latin1') : Buffer.concat(chunks).toString('latin1');
  const files: TreeFile[] = [];
  for (const record of out.split('\0')) {
    const tab = record.indexOf('\t');
    if (tab < 0) continue;
    const [mode, , oid] = record.slice(0, tab).split(' ') as [string, string, string];
    const raw = record.slice(tab + 1);
    files.push({ path: rawPathText(raw), raw, mode, oid });
  }
  return files;
}

/** `added\tremoved\tpath` as counts, or null for a binary file (`-\t-\t`). */
function parseNumstat(record: string): { added: number; removed: number } | null {
  const first = record.indexOf('\t');
  const second = record.indexOf('\t', first + 1);
  const added = Number(record.slice(0, first));
  const removed = Number(record.slice(first + 1, second));
  return first > 0 && second > first && Number.isInteger(added) && Number.isInteger(removed) && record[0] !== '-' ? { added, removed } : null;
}
