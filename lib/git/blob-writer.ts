// Blobs written without `git hash-object -w`, where git's clean side would store a file's bytes
// as they are: no attribute asks for a clean filter, `ident` or `working-tree-encoding`, and the
// file holds no carriage return, so no line-ending conversion (`text`, `eol`, `core.autocrlf`)
// changes it (convert.c: convert_to_git runs those four steps and no other). A save's changed
// files are then hashed in-process, a git process less; anything else is git's to hash.
import { closeSync, constants, fstatSync, lstatSync, openSync, readlinkSync, readSync } from 'node:fs';
import { join } from 'node:path';
import { looseObjectSoon, objectId } from './formats/loose.js';
import { rawPathOnDisk } from './formats/path-text.js';
import { configOrAttributesMention, fileMentions } from './config-files.js';
import { keepLooseObject, placeLooseObject } from './loose-target.js';
import type { LooseTarget } from './loose-target.js';

/**
 * What in an attributes file may make git's clean side rewrite a file's bytes beyond its line
 * endings: `filter`, `ident`, `working-tree-encoding`, and a macro (its definition names them).
 */
const REWRITES = /filter|ident|encoding/i;

/**
 * Configuration that makes git read attributes this does not look at (`core.attributesFile`, an
 * include, later gits' `attr.tree`, in a file's `[attr]` section or given in the environment).
 */
const ELSEWHERE = /attributesfile|include|\[attr|attr\.tree/i;

/** Up to this many bytes a file, and in all, a save hashes files itself. */
const FILE_BYTES = 4 * 1024 * 1024;
const ALL_BYTES = 32 * 1024 * 1024;

/**
 * Up to this many files a save hashes itself; more go to hash-object, which hashes them on
 * another core while the save reads its trees. In-process, a blob costs 0.1 to 0.3 ms of the
 * main thread: 5,000 files held a save at 20,000 files to 900 ms, against 480 with hash-object.
 */
const MOST_FILES = 100;

/**
 * Whether attributes from outside the working tree may rewrite what git stores for a file: a
 * configuration git reads names an attributes file or includes one, or the repository's
 * `info/attributes`, the global or the system's attributes file may ask for a rewrite (see
 * {@link REWRITES}); a file that exists but cannot be read says yes too.
 * @param dirs - the git directory every worktree shares, and this worktree's
 * @param ambient - the environment chant runs in
 * @internal
 */
export function attributesElsewhere(dirs: { commonDir: string; gitDir: string }, ambient: Readonly<Record<string, string | undefined>> = process.env): boolean {
  return configOrAttributesMention(dirs, ELSEWHERE, REWRITES, ambient);
}

/**
 * Whether a working tree's `.gitattributes` file (at `file`) may ask git to rewrite the bytes it
 * stores; false where there is none.
 * @internal
 */
export function attributesRewrite(file: string | Buffer): boolean {
  return fileMentions(file, REWRITES);
}

/**
 * Writes the blobs of the regular files at `paths` (from `top`), as `git hash-object -w` would
 * where no attribute rewrites them (the caller's to know), as loose objects: each id, or null
 * for git to hash, where the file holds a carriage return, is larger than this hashes itself,
 * is no longer a regular file, or cannot be read or written here (all of them, where there are
 * more files than this hashes itself). A blob there loose already is kept as
 * {@link keepLooseObject} keeps it, so that no prune takes it before a ref holds it.
 * @param target - where and how loose objects are written
 * @param top - the working tree's top folder
 * @param paths - the files, from `top`
 * @param objectFormat - `sha1` or `sha256`
 * @internal
 */
export async function writeFileBlobs(target: LooseTarget, top: string, paths: readonly string[], objectFormat: string): Promise<Array<string | null>> {
  if (paths.length > MOST_FILES) return paths.map(() => null);
  let budget = ALL_BYTES;
  const contents = paths.map((path) => {
    const content = readPlainFile(join(top, path), Math.min(FILE_BYTES, budget));
    if (content === null || content.includes(0x0d)) return null;
    budget -= content.length;
    return content;
  });
  const objects = await Promise.all(contents.map((content) => (content === null ? null : looseObjectSoon('blob', content, objectFormat))));
  return objects.map((object) => {
    if (object === null) return null;
    try {
      return placeLooseObject(target, object.oid, object.file) || keepLooseObject(target.objectsDir, object.oid) ? object.oid : null;
    } catch {
      return null;
    }
  });
}

/**
 * Whether each path (a byte string from `top`, one character a byte) still holds the blob of
 * `oid`, told without git where that needs no attribute: a symlink whose target is those bytes,
 * or a regular file of the mode's executable bit whose bytes (no carriage return, no larger than
 * a save hashes itself) are, every folder on its way a folder (not a symlink to one). The caller
 * knows that no attribute may rewrite the file's bytes (git add would then store them as they
 * are). False says only that it was not told here: git compares those, through its filters.
 * @param top - the working tree's top folder
 * @param entries - each path, the mode and the blob it held when the working tree was read
 * @param objectFormat - `sha1` or `sha256`
 * @internal
 */
export function blobsStillHeld(top: string, entries: ReadonlyArray<{ raw: string; mode: string; oid: string }>, objectFormat: string): boolean[] {
  let budget = ALL_BYTES;
  // Only the last name is opened without following a symlink: each folder on the way must be a
  // folder itself, or the bytes read would be another place's (git counts a path under a
  // symlinked folder as gone).
  const folders = new Map<string, boolean>();
  const isFolder = (raw: string): boolean => {
    let known = folders.get(raw);
    if (known === undefined) {
      try {
        known = lstatSync(rawPathOnDisk(top, raw), { throwIfNoEntry: false })?.isDirectory() === true;
      } catch {
        known = false;
      }
      folders.set(raw, known);
    }
    return known;
  };
  return entries.map(({ raw, mode, oid }) => {
    for (let slash = raw.indexOf('/'); slash >= 0; slash = raw.indexOf('/', slash + 1)) {
      if (!isFolder(raw.slice(0, slash))) return false;
    }
    const path = rawPathOnDisk(top, raw);
    if (mode === '120000') {
      try {
        return objectId('blob', readlinkSync(path, { encoding: 'buffer' }), objectFormat) === oid;
      } catch {
        return false;
      }
    }
    if (mode !== '100644' && mode !== '100755') return false;
    const content = readPlainFile(path, Math.min(FILE_BYTES, budget), mode === '100755');
    if (content === null || content.includes(0x0d)) return false;
    budget -= content.length;
    return objectId('blob', content, objectFormat) === oid;
  });
}

/**
 * A regular file's bytes, read without following a symlink or waiting on a FIFO put there since
 * it was looked at; null when it is not one, holds more than `limit` bytes, or cannot be read,
 * or (`executable` given) when its owner's executable bit is not that.
 */
function readPlainFile(path: string | Buffer, limit: number, executable?: boolean): Buffer | null {
  let fd: number;
  try {
    fd = openSync(path, constants.O_RDONLY | constants.O_NOFOLLOW | constants.O_NONBLOCK);
  } catch {
    return null;
  }
  try {
    const stats = fstatSync(fd);
    if (!stats.isFile() || stats.size > limit) return null;
    if (executable !== undefined && ((stats.mode & 0o100) !== 0) !== executable) return null;
    // Read to the end, not to the size looked at: a file growing meanwhile is read as it is then, as git would.
    const chunks: Buffer[] = [];
    let total = 0;
    for (;;) {
      const chunk = Buffer.allocUnsafe(Math.max(stats.size - total, 0) + 1);
      const read = readSync(fd, chunk, 0, chunk.length, null);
      if (read === 0) break;
      total += read;
      if (total > limit) return null;
      chunks.push(read === chunk.length ? chunk : chunk.subarray(0, read));
    }
    return Buffer.concat(chunks, total);
  } catch {
    return null;
  } finally {
    closeSync(fd);
  }
}
