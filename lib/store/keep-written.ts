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

/**
 * What {@link writeBlobsAgain} does for a tree staged through a temporary index (git add wrote
 * its blobs, git write-tree its trees), where a gc took them. A gc that ran before the ref named
 * the tree took its root too (written loose, named by nothing), and one that ran after packed it:
 * while git holds the root, nothing is read. Otherwise the blobs of the index the checkout's
 * index does not name (a gc keeps every object that one names) are written again from their
 * files, then the trees by git write-tree again from a copy of the index (git writes again each
 * tree of the index's cache it finds missing).
 * @param plumbing - the checkout's plumbing
 * @param layout - the checkout's layout
 * @param root - the tree git write-tree gave
 * @param index - the temporary index that tree was written from, or its bytes as they were then
 *   (a restore stages its target into the same file after)
 */
export async function keepIndexWritten(plumbing: Plumbing, layout: RepositoryLayout, root: string, index: string | Buffer): Promise<void> {
  const { objectFormat, objectsDir, top } = layout;
  if (notThereLoose(objectsDir, [root]).length === 0) return;
  if (((await plumbing.objectInfo([root])).get(root) ?? null) !== null) return;
  // A checkout's index that cannot be read names nothing a gc keeps: every blob is looked at.
  const [data, held] = await Promise.all([typeof index === 'string' ? readFile(index) : index, readIndexEntries(layout.indexFile, objectFormat).catch((): IndexEntry[] => [])]);
  const kept = new Set(held.map((entry) => entry.oid));
  const written = selectIndexEntries(data, objectFormat, (entry) => entry.stage === 0 && entry.mode !== '160000').filter((entry) => !kept.has(entry.oid));
  await writeBlobsAgain(plumbing, objectsDir, top, written);
  const copy = temporaryIndexFile(layout.gitDir);
  try {
    await writeFile(copy, data, { flag: 'wx' });
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
