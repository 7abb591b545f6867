// `storage`: what each chain of snapshots costs. The counts and dates come from the read's own
// walk (and its memo); the bytes from one rev-list per chain and one for all of them.
import type { BranchStorage, StorageResult } from '../documents/storage.js';
import type { ListResult } from '../documents/wip-read.js';
import { uniqueDiskUsage } from '../git/storage.js';
import type { StoreContext } from './context.js';
import { list } from './list.js';
import type { GitRunner } from '../git/runner.js';

/**
 * Options of {@link WipStore.storage}.
 * @public
 */
export interface StorageOptions {
  /** Only this branch's chain (exact name, without `refs/heads/`). */
  branch?: string | null;
}

/**
 * What each chain of snapshots costs: how many snapshots, when the oldest and newest were
 * taken, and the bytes its objects take on disk beyond what branches, tags, remote-tracking
 * refs and HEAD reach. Reads local refs only; its cost does not grow with the object store.
 * @param context - what the store hands each verb
 * @param options - `branch` to read one chain only
 * @returns each chain sorted by branch, and the total (shared objects counted once)
 * @throws {@link WipError} `not-a-git-repository` or `git-failed`
 * @example
 * ```ts
 * const { branches, total } = await new WipStore({ cwd: process.cwd() }).storage();
 * for (const chain of branches) console.log(chain.branch, chain.snapshots, chain.oldest, chain.bytes);
 * ```
 */
export async function storage(context: StoreContext, options: StorageOptions = {}): Promise<StorageResult> {
  // git counts the bytes from the tips the read found as soon as it has read the refs, while the
  // read walks the chains on this thread; a read that started over, or found other tips, has
  // them counted again from its own.
  const started: Usage[] = [];
  const counting = (tips: readonly string[]): Usage => {
    const usage = diskUsage(context.git, context.cwd, tips);
    started.push(usage);
    return usage;
  };
  let branches: ListResult['branches'];
  const each: number[] = [];
  let total: number;
  try {
    ({ branches } = await list({ ...context, policy: null }, { branch: options.branch ?? null }, { tips: (tips) => counting(tips) }));
    const tips = branches.map((entry) => entry.tip);
    const early = started.at(-1);
    const usage = early !== undefined && sameTips(early.tips, tips) ? early : counting(tips);
    total = await usage.total;
    for (const entry of branches) each.push(await (usage.each.get(entry.tip) as Promise<number>));
  } finally {
    // No git process of the report outlives it, whatever it ends with.
    await Promise.all(started.map((usage) => usage.settled));
  }
  const rows: BranchStorage[] = branches.map((entry, index) => ({
    branch: entry.branch,
    ref: entry.ref,
    tip: entry.tip,
    snapshots: entry.snapshots.length,
    oldest: entry.snapshots.at(-1)?.at ?? null,
    newest: entry.snapshots[0]?.at ?? null,
    bytes: each[index] as number,
  }));
  return { branches: rows, total: { snapshots: rows.reduce((sum, row) => sum + row.snapshots, 0), bytes: total } };
}

/** The bytes of some chains being counted: of all of them, and of each tip's alone. */
interface Usage {
  tips: readonly string[];
  total: Promise<number>;
  each: Map<string, Promise<number>>;
  /** Settles once every count has, never rejecting. */
  settled: Promise<unknown>;
}

/**
 * Starts counting the bytes of the chains at `tips`: one chain at a time beside the total, so
 * that a repository with a hundred chains starts no hundred processes at once; one process for
 * both where there is one tip, whose total is its own.
 */
function diskUsage(git: GitRunner, cwd: string, tips: readonly string[]): Usage {
  const unique = [...new Set(tips)];
  const total = uniqueDiskUsage(git, cwd, unique);
  const each = new Map<string, Promise<number>>();
  let previous: Promise<unknown> = Promise.resolve();
  for (const tip of unique) {
    const bytes = unique.length === 1 ? total : previous.then(() => uniqueDiskUsage(git, cwd, [tip]), () => uniqueDiskUsage(git, cwd, [tip]));
    each.set(tip, bytes);
    previous = bytes;
  }
  // Counts a read that started over, or found other tips, leaves unread fail unseen.
  for (const bytes of [total, ...each.values()]) bytes.catch(() => undefined);
  return { tips, total, each, settled: Promise.allSettled([total, ...each.values()]) };
}

/** Whether two lists hold the same tips, in any order. */
function sameTips(a: readonly string[], b: readonly string[]): boolean {
  return a.length === b.length && [...a].sort().join(' ') === [...b].sort().join(' ');
}
