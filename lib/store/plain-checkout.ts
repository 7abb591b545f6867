// A restore's files written into its private staging folder from their loose blobs, without
// `git checkout-index`, where git's checkout would write the blobs' bytes as they are: no
// attribute that applies (the target tree's .gitattributes on the way to the files, the
// repository's info/attributes, the global and system ones) names a smudge filter, `ident`,
// `working-tree-encoding` or a line-ending conversion, and no configuration turns one on
// (`core.autocrlf`, `core.eol`) or writes symlinks as files (`core.symlinks`). convert_to_working_tree
// runs those steps and no other. Anything else is checkout-index's to write, as before.
import { closeSync, mkdirSync, openSync, rmSync, symlinkSync } from 'node:fs';
import { join } from 'node:path';
import { configOrAttributesMention } from '../git/config-files.js';
import type { NewIndexEntry } from '../git/formats/index-file.js';
import { foldersOnTheWay, treeEntry } from '../git/formats/tree.js';
import { readCheckedLoose, readLooseInfo, readLooseTreeFolders } from '../git/loose-objects.js';
import type { CheckedReads } from '../git/loose-objects.js';
import { writeAll } from '../git/loose-target.js';
import { unwritablePath } from './tree-paths.js';

/** Configuration that changes what git's checkout writes, or makes it read attributes this does not. */
const CHECKOUT_CONFIG = /autocrlf|eol|symlinks|attributesfile|include|\[attr|attr\.tree/i;

/** What in an attributes file may make git's checkout write other bytes than the blob's. */
const SMUDGES = /filter|ident|encoding|text|eol|crlf/i;

/** Up to this many bytes a file, and in all, a restore writes files itself. */
const FILE_BYTES = 4 * 1024 * 1024;
const ALL_BYTES = 32 * 1024 * 1024;

/**
 * Whether the configuration, or an attributes file from outside the working tree, may make git's
 * checkout write other bytes than a blob holds (see the file's head); a file that exists but
 * cannot be read says yes.
 * @param dirs - the git directory every worktree shares, and this worktree's
 * @param ambient - the environment chant runs in
 * @internal
 */
export function checkoutMayConvert(dirs: { commonDir: string; gitDir: string }, ambient: Readonly<Record<string, string | undefined>>): boolean {
  return configOrAttributesMention(dirs, CHECKOUT_CONFIG, SMUDGES, ambient);
}

/**
 * Whether no `.gitattributes` of `tree` on the way to `raws` (byte strings) may make git's
 * checkout write other bytes than a blob holds; null when a tree on the way, or an attributes
 * file, is not there loose to be read (the caller then asks git's checkout). The caller rules out
 * replace refs and the configuration ({@link checkoutMayConvert}). `reads`: the objects this call
 * has read and checked already, which it adds to.
 * @internal
 */
export function treeAttributesConvertNothing(objectsDir: string, tree: string, raws: readonly string[], objectFormat: string, reads?: CheckedReads): boolean | null {
  const trees = readLooseTreeFolders(objectsDir, tree, foldersOnTheWay(raws), objectFormat, true, reads);
  if (trees === null) return null;
  for (const object of trees) {
    const found = object === null ? null : treeEntry(object.content, '.gitattributes', objectFormat);
    if (found === null) continue;
    const content = found.mode === '100644' || found.mode === '100755' ? readCheckedLoose(objectsDir, found.oid, 'blob', objectFormat, reads) : null;
    if (content === null) return null;
    if (SMUDGES.test(content.toString('latin1'))) return false;
  }
  return true;
}

/**
 * Writes the files `entries` name (paths of `tree`, byte strings) into `staging`, an empty
 * folder, from their loose blobs, as git's checkout writes them where it converts nothing: a
 * file of mode 0666 or 0777 less the umask, a symlink to what its blob holds. Each is written
 * under its place in `entries` (`<staging>/0`, `<staging>/1`, ...), not under its path: no folder
 * is made, so none is left to remove once the files are moved out (see {@link plainStagedNames}). False, with
 * `staging` left empty, for git to write them: a .gitattributes of `tree` on their way may
 * convert, a tree or a blob is not there loose (or not what its id says), a file is larger
 * than this writes itself, or a write fails. The caller rules out replace refs and the
 * configuration ({@link checkoutMayConvert}). `reads`: the objects this call has read and checked
 * already, which it adds to.
 * @internal
 */
export function writePlainFiles(objectsDir: string, staging: string, tree: string, entries: readonly NewIndexEntry[], objectFormat: string, reads?: CheckedReads): boolean {
  if (treeAttributesConvertNothing(objectsDir, tree, entries.map((entry) => entry.raw), objectFormat, reads) !== true) return false;
  // Every blob is looked at before anything is written.
  const sizes = readLooseInfo(objectsDir, entries.map((entry) => entry.oid));
  let total = 0;
  for (const entry of entries) {
    const size = sizes.get(entry.oid)?.size;
    if (size === undefined || size > FILE_BYTES || (total += size) > ALL_BYTES) return false;
    if (!['100644', '100755', '120000'].includes(entry.mode) || unwritablePath(entry.raw, entry.mode, true) !== null) return false;
  }
  const contents: Buffer[] = [];
  for (const entry of entries) {
    const content = readCheckedLoose(objectsDir, entry.oid, 'blob', objectFormat, reads);
    if (content === null || (entry.mode === '120000' && (content.length === 0 || content.includes(0)))) return false;
    contents.push(content);
  }
  try {
    entries.forEach((entry, index) => {
      const path = join(staging, String(index));
      const content = contents[index] as Buffer;
      if (entry.mode === '120000') {
        symlinkSync(content, path);
        return;
      }
      const fd = openSync(path, 'wx', entry.mode === '100755' ? 0o777 : 0o666);
      try {
        writeAll(fd, content);
      } finally {
        closeSync(fd);
      }
    });
  } catch {
    rmSync(staging, { recursive: true, force: true });
    mkdirSync(staging);
    return false;
  }
  return true;
}

/**
 * The name in the staging folder of each file {@link writePlainFiles} wrote there, by path (a
 * byte string): its place in `entries`.
 * @internal
 */
export function plainStagedNames(entries: readonly NewIndexEntry[]): Map<string, string> {
  return new Map(entries.map((entry, index) => [entry.raw, String(index)]));
}
