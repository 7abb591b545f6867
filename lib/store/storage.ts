// `storage`: what each chain of snapshots costs. The counts and dates come from the read's own
// walk (and its memo); the bytes from one rev-list per chain and one for all of them.
import type { BranchStorage, StorageResult } from '../documents/storage.js';
import { uniqueDiskUsage } from '../git/storage.js';
import type { StoreContext } from './context.js';
import { list } from './list.js';

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
  const { branches } = await list({ ...context, policy: null }, { branch: options.branch ?? null });
  // One chain at a time beside the total: a repository with a hundred chains starts no hundred
  // processes at once.
  const totalBytes = uniqueDiskUsage(context.git, context.cwd, branches.map((entry) => entry.tip));
  const each: number[] = [];
  for (const entry of branches) each.push(await uniqueDiskUsage(context.git, context.cwd, [entry.tip]));
  const total = await totalBytes;
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
