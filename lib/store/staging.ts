// The staging choice: how a save finds the working tree's tree (from `git status`, or by staging
// everything into a temporary copy of the index), and what the staged tree does not hold.
import { linkSync, statSync } from 'node:fs';
import { copyFile, rm, stat, utimes } from 'node:fs/promises';
import type { SaveResult } from '../documents/wip-write.js';
import { WipError } from '../errors.js';
import { readGitlinks } from '../git/formats/index-file.js';
import type { Gitlink } from '../git/formats/index-file.js';
import type { Plumbing, RepositoryLayout } from '../git/plumbing.js';
import { temporaryIndexFile } from '../managers/temporaries.js';
import { compareBytes } from '../order.js';
import type { BranchCheckout } from './checkout.js';

/**
 * How a save finds the working tree's tree; see {@link WipStoreOptions.staging}.
 * @public
 */
export type StagingMode = 'auto' | 'status' | 'index';

/** The index size from which `auto` staging builds the tree from `git status`. */
const STATUS_STAGING_MIN_INDEX_BYTES = 2 * 1024 * 1024;

/**
 * Whether a save builds its tree from `git status` (see {@link WipStoreOptions.staging}).
 * @param staging - the store's mode
 * @param layout - where the checkout's index is
 */
export function viaStatus(staging: StagingMode, layout: RepositoryLayout): boolean {
  if (staging !== 'auto') return staging === 'status';
  try {
    return (statSync(layout.indexFile, { throwIfNoEntry: false })?.size ?? 0) >= STATUS_STAGING_MIN_INDEX_BYTES;
  } catch {
    return false;
  }
}

/** A temporary index, seeded from the checkout's so git reuses its stat data, holding the whole working tree. */
export async function stageWorkingTree(plumbing: Plumbing, checkout: BranchCheckout): Promise<string> {
  const indexFile = temporaryIndexFile(checkout.layout.gitDir);
  try {
    await seedIndex(checkout.layout.indexFile, indexFile);
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code !== 'ENOENT') {
      await rm(indexFile, { force: true });
      throw new WipError('git-failed', `cannot copy the index: ${(error as Error).message}`, { cause: error });
    }
  }
  try {
    await plumbing.addAll(checkout.layout.top, indexFile);
  } catch (error) {
    await rm(indexFile, { force: true });
    throw error;
  }
  return indexFile;
}

/**
 * Makes `copy` a copy of the checkout's index for git to stage into. A hard link, where the file
 * system has them: git never writes an index in place (it writes `<index>.lock` and renames it
 * over), so the checkout's index is never touched, and the link carries the original's mtime,
 * which git's racy-clean check reads: an entry whose file changed in the same second the index
 * was written is only re-read while the index's mtime says so. Elsewhere a copy, given the
 * original's mtime (taken before copying, rounded down, so never newer than its contents).
 */
export async function seedIndex(original: string, copy: string): Promise<void> {
  try {
    // Synchronous, as the save waits on it before its first git call.
    linkSync(original, copy);
    return;
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === 'ENOENT') throw error;
  }
  const stats = await stat(original);
  await copyFile(original, copy);
  const seconds = Math.floor(stats.mtimeMs / 1000);
  await utimes(copy, seconds, seconds);
}

/** The gitlinks of a staged index, as what the snapshot does not hold. */
export async function unsavedPaths(indexFile: string, objectFormat: string): Promise<NonNullable<SaveResult['unsaved']>> {
  return unsavedOf(await readGitlinks(indexFile, objectFormat));
}

/** A snapshot's gitlinks, as what it does not hold. */
export function unsavedOf(gitlinks: readonly Gitlink[]): NonNullable<SaveResult['unsaved']> {
  return sortByPath(gitlinks.map((link) => ({
    path: link.path,
    reason: 'submodule' as const,
    message: `${link.path} is a submodule: the snapshot keeps the commit it is at (${link.commit.slice(0, 12)}), not its files`,
  })));
}

function sortByPath<T extends { path: string }>(entries: T[]): T[] {
  return entries.sort((a, b) => compareBytes(a.path, b.path));
}
