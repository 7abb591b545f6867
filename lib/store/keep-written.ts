// The objects a save or a restore's checkpoint wrote, written again where a `git gc --prune=now`
// run by hand took them meanwhile (git's own gc prunes only what is weeks old): until the ref
// names the snapshot, every loose object it wrote is one no ref names. Called once it does; no
// git process runs unless an object is not there loose.
import { lstatSync } from 'node:fs';
import { readFile, rm, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import type { Plumbing, RepositoryLayout } from '../git/plumbing.js';
import { readIndexEntries, selectIndexEntries } from '../git/formats/index-file.js';
import type { IndexEntry } from '../git/formats/index-file.js';
import { notThereLoose } from '../git/loose-objects.js';
import { WipError } from '../errors.js';
import { temporaryIndexFile } from '../managers/temporaries.js';

/**
 * Writes again, each from its file, the blobs of `written` git holds nowhere, of the files still
 * there. One hash-object stops at the first file it cannot open, and a file deleted meanwhile
 * left the blobs of all those after it unwritten: should one go between the look and the call,
 * each is hashed on its own, and only a file gone by then is let go (a restore must not touch a
 * file whose blob its checkpoint could not hold; one whose bytes changed meanwhile is refused by
 * the restore's own look at what moved).
 * @param plumbing - the checkout's plumbing
 * @param objectsDir - the repository's objects folder
 * @param top - the working tree's top
 * @param written - each blob written, with the path it was hashed from
 */
export async function writeBlobsAgain(plumbing: Plumbing, objectsDir: string, top: string, written: ReadonlyArray<{ path: string; oid: string }>): Promise<void> {
  const notLoose = new Set(notThereLoose(objectsDir, written.map(({ oid }) => oid)));
  const blobs = written.filter(({ oid }) => notLoose.has(oid));
  if (blobs.length === 0) return;
  const held = await plumbing.objectInfo(blobs.map(({ oid }) => oid));
  const gone = blobs.filter(({ oid }) => (held.get(oid) ?? null) === null);
  const paths = [...new Set(gone.map(({ path }) => path))].filter((path) => isFile(top, path));
  if (paths.length === 0) return;
  await plumbing.hashFiles(top, paths).catch(async () => {
    for (const path of paths) {
      await plumbing.hashFiles(top, [path]).catch((error: unknown) => {
        if (isFile(top, path)) throw error;
      });
    }
  });
}

/** What a tree staged through a temporary index wrote that a gc may take: see {@link indexWrites}. */
export interface IndexWrites {
  /** The blobs git add wrote: those of the temporary index the checkout's index does not name (a gc keeps every object that one names). */
  written: Array<{ path: string; oid: string }>;
  /** The temporary index's bytes, which the trees are written again from. */
  index: Buffer;
}

/**
 * What a tree staged through `indexFile` (git add wrote its blobs, git write-tree its trees)
 * wrote that a gc may take before the ref names it. Read while `indexFile` holds that tree: a
 * restore stages its target into the same file after.
 * @param layout - the checkout's layout
 * @param indexFile - the temporary index the tree was written from
 */
export async function indexWrites(layout: RepositoryLayout, indexFile: string): Promise<IndexWrites> {
  const { objectFormat } = layout;
  // A checkout's index that cannot be read names nothing a gc keeps: every blob is looked at.
  const [index, held] = await Promise.all([readFile(indexFile), readIndexEntries(layout.indexFile, objectFormat).catch((): IndexEntry[] => [])]);
  const kept = new Set(held.map((entry) => entry.oid));
  const written = selectIndexEntries(index, objectFormat, (entry) => entry.stage === 0 && entry.mode !== '160000').filter((entry) => !kept.has(entry.oid)).map(({ path, oid }) => ({ path, oid }));
  return { written, index };
}

/**
 * What {@link writeBlobsAgain} does for a tree staged through a temporary index: the blobs git
 * add wrote, then, where the root tree is gone, the trees, by git write-tree again from a copy of
 * the index (git writes again each tree of the index's cache it finds missing).
 * @param plumbing - the checkout's plumbing
 * @param layout - the checkout's layout
 * @param writes - what {@link indexWrites} read
 * @param root - the tree git write-tree gave
 */
export async function keepIndexWritten(plumbing: Plumbing, layout: RepositoryLayout, writes: IndexWrites, root: string): Promise<void> {
  await writeBlobsAgain(plumbing, layout.objectsDir, layout.top, writes.written);
  if (notThereLoose(layout.objectsDir, [root]).length === 0) return;
  if (((await plumbing.objectInfo([root])).get(root) ?? null) !== null) return;
  const copy = temporaryIndexFile(layout.gitDir);
  try {
    await writeFile(copy, writes.index, { flag: 'wx' });
    const again = await plumbing.writeTree(copy);
    if (again !== root) throw new WipError('git-failed', `git wrote the tree ${again.slice(0, 12)} again where ${root.slice(0, 12)} was gone`);
  } finally {
    await rm(copy, { force: true });
  }
}

function isFile(top: string, path: string): boolean {
  try {
    return lstatSync(join(top, path), { throwIfNoEntry: false })?.isFile() === true;
  } catch {
    return false;
  }
}
