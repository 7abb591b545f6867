// Loose objects read without a process, where a caller only wants an object's bytes and a git
// process costs more than the reading (the secret gate reads the files a save just wrote, which
// are loose). The folder is found as git finds its git directory; whatever is read is checked
// against its id, so a wrong guess (a folder of another repository, a file that does not read)
// is only a miss, and the caller asks git for what is missing.
import { closeSync, existsSync, openSync, readdirSync, readFileSync, readSync, realpathSync, statSync } from 'node:fs';
import { dirname, join, resolve } from 'node:path';
import type { GitObject } from './formats/batch.js';
import { objectId, readLoose, readLooseHeader } from './formats/loose.js';
import { treeEntry } from './formats/tree.js';

/**
 * The objects folder of the checkout `cwd` is in, without a process: `GIT_OBJECT_DIRECTORY`, else
 * that of `GIT_DIR`, else of the first `.git` from `cwd` up (a folder, or a file naming one),
 * with a worktree's `commondir` followed; null when none is found.
 * @param cwd - a folder inside the checkout
 * @param env - the environment git would run with
 * @returns the folder, a guess every read checks
 * @internal
 */
export function looseObjectsDir(cwd: string, env: NodeJS.ProcessEnv = process.env): string | null {
  if (env.GIT_OBJECT_DIRECTORY) return resolve(cwd, env.GIT_OBJECT_DIRECTORY);
  const common = looseCommonDir(cwd, env);
  return common === null ? null : join(common, 'objects');
}

/**
 * The common git directory of the checkout `cwd` is in, without a process, as git finds it from
 * there (chant runs git with no `GIT_DIR`: lib/git/runner.ts); null when none is found. A guess:
 * for markers other chant processes look for, never for what a write reads.
 * @param cwd - a folder inside the checkout
 * @returns the folder, or null
 * @internal
 */
export function commonDirFromFiles(cwd: string): string | null {
  return looseCommonDir(cwd, {});
}

/**
 * The common git directory of the checkout `cwd` is in, found as {@link looseObjectsDir} finds its
 * objects and as git does: up from the folder's real path (git runs there; a symlink's own
 * parents are not git's), past a `.git` folder that is no git directory, and at a folder that is
 * one itself.
 */
function looseCommonDir(cwd: string, env: NodeJS.ProcessEnv): string | null {
  if (env.GIT_DIR) return commonDir(resolve(cwd, env.GIT_DIR));
  let start = resolve(cwd);
  try {
    start = realpathSync(start);
  } catch {
    // Gone or unreadable: git finds nothing there either; the path as given is the guess.
  }
  for (let folder = start; ; folder = dirname(folder)) {
    const gitDir = gitDirAt(join(folder, '.git'));
    if (gitDir !== null) return commonDir(gitDir);
    if (isGitDirectory(folder)) return commonDir(folder);
    if (dirname(folder) === folder) return null;
  }
}

/** Whether `dir` is a git directory as git tells one: a `HEAD`, and `objects` and `refs` folders in its common directory. */
function isGitDirectory(dir: string): boolean {
  const common = commonDir(dir);
  return existsSync(join(dir, 'HEAD')) && existsSync(join(common, 'objects')) && existsSync(join(common, 'refs'));
}

/**
 * The commits `names` name, when each is a full object id of a commit there loose: read without
 * a process and checked against its id, as `git cat-file --batch` prints `<name>^{commit}` in
 * the checkout `cwd` is in (git runs with no `GIT_DIR`: lib/git/runner.ts). Null, for the caller
 * to ask git, when any name is something else (a ref, a short id, a tag), when a commit is not
 * loose, and when git might read another commit for an id: the repository has replace refs, or
 * keeps its refs where they cannot be looked at (reftable).
 * @param cwd - a folder inside the checkout
 * @param names - what a user named
 * @returns each commit's content, in the order asked, or null
 * @internal
 */
export function readLooseCommits(cwd: string, names: readonly string[]): Buffer[] | null {
  if (!names.every((name) => FULL_ID.test(name))) return null;
  const common = looseCommonDir(cwd, {});
  if (common === null || mayReplace(common)) return null;
  const found: Buffer[] = [];
  for (const name of names) {
    const content = readCheckedLoose(join(common, 'objects'), name, 'commit', name.length === 64 ? 'sha256' : 'sha1');
    if (content === null) return null;
    found.push(content);
  }
  return found;
}

const FULL_ID = /^(?:[0-9a-f]{40}|[0-9a-f]{64})$/;

/** Whether git might follow a replace ref here: any entry under `refs/replace`, a packed one, or refs git keeps in a reftable. */
function mayReplace(common: string): boolean {
  if (existsSync(join(common, 'reftable'))) return true;
  try {
    if (readdirSync(join(common, 'refs', 'replace')).length > 0) return true;
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code !== 'ENOENT') return true;
  }
  try {
    return readFileSync(join(common, 'packed-refs'), 'latin1').includes(' refs/replace/');
  } catch (error) {
    return (error as NodeJS.ErrnoException).code !== 'ENOENT';
  }
}

/** The git directory `.git` at this path names: itself as a folder, or the `gitdir:` of a file. */
function gitDirAt(dotGit: string): string | null {
  try {
    // A folder that is no git directory (an empty .git) is passed over, as git passes it over.
    if (statSync(dotGit).isDirectory()) return isGitDirectory(dotGit) ? dotGit : null;
    const named = /^gitdir: (.+)$/m.exec(readFileSync(dotGit, 'utf8'))?.[1]?.trim();
    return named === undefined ? null : resolve(dirname(dotGit), named);
  } catch {
    return null;
  }
}

/** The folder shared by a git directory's worktrees: its `commondir` when it has one. */
function commonDir(gitDir: string): string {
  try {
    return resolve(gitDir, readFileSync(join(gitDir, 'commondir'), 'utf8').trim());
  } catch {
    return gitDir;
  }
}

/**
 * Blobs read from their loose files, each checked against its id (SHA-1 or SHA-256, by the id's
 * length) and cut to its first `limit` bytes; an id not there loose, or not a blob, or whose bytes
 * do not hash to it, is left out for the caller to ask git.
 * @param dir - an objects folder ({@link looseObjectsDir})
 * @param oids - blob ids
 * @param limit - the most bytes of each kept
 * @returns what was read, by id
 * @internal
 */
export function readLooseBlobs(dir: string, oids: readonly string[], limit: number): Map<string, Buffer> {
  const found = new Map<string, Buffer>();
  for (const oid of oids) {
    const content = readCheckedLoose(dir, oid, 'blob', oid.length === 64 ? 'sha256' : 'sha1');
    if (content !== null) found.set(oid, Buffer.from(content.subarray(0, limit)));
  }
  return found;
}

/**
 * The content of the object `oid` from its loose file, when it is there, of `type`, and its
 * bytes hash to `oid` in `objectFormat`; null otherwise, for the caller to ask git.
 * @internal
 */
export function readCheckedLoose(dir: string, oid: string, type: string, objectFormat: string, reads?: CheckedReads): Buffer | null {
  const key = `${type} ${oid}`;
  const known = reads?.get(key);
  if (known !== undefined) return known;
  let file: Buffer;
  try {
    file = readFileSync(join(dir, oid.slice(0, 2), oid.slice(2)));
  } catch {
    return null;
  }
  const object = readLoose(file);
  if (object === null || object.type !== type || objectId(type, object.content, objectFormat) !== oid) return null;
  reads?.set(key, object.content);
  return object.content;
}

/**
 * The objects one call has read from their loose files and checked against their ids (see
 * {@link readCheckedLoose}), by type and id: a restore reads the same trees to diff the two
 * sides, to look for `.gitattributes` on the way to the files it overwrites, and to write the
 * target's files, and each is read and checked once. Made for one call and dropped with it: an
 * object's bytes are what its id says, but whether its loose file is still there and whole is
 * asked again by the next call. Callers never change the bytes they are given.
 * @internal
 */
export type CheckedReads = Map<string, Buffer>;

/** The bytes of a loose file read for its header. */
const HEADER_BYTES = 1024;

/**
 * The type and size of each object there loose, from its file's header alone, as
 * `cat-file --batch-check` reads them; an id not there loose, or whose header does not read, is
 * left out for the caller to ask git. A replace ref, which git would follow, is not looked at.
 * @param dir - an objects folder
 * @param oids - object ids
 * @returns what was read, by id
 * @internal
 */
export function readLooseInfo(dir: string, oids: readonly string[]): Map<string, { type: string; size: number }> {
  const found = new Map<string, { type: string; size: number }>();
  const buffer = Buffer.alloc(HEADER_BYTES);
  for (const oid of oids) {
    let fd: number;
    try {
      fd = openSync(join(dir, oid.slice(0, 2), oid.slice(2)), 'r');
    } catch {
      continue;
    }
    let read = 0;
    try {
      read = readSync(fd, buffer, 0, HEADER_BYTES, 0);
    } catch {
      continue;
    } finally {
      closeSync(fd);
    }
    const info = readLooseHeader(buffer.subarray(0, read));
    if (info !== null) found.set(oid, info);
  }
  return found;
}

/**
 * The trees of `folders` (paths from the top, `''` for it) in the commit `commit`, each read from
 * its loose file and checked against its id, as `git cat-file --batch` would print `<commit>:<folder>`:
 * null for a folder the commit does not hold, or holds as something other than a tree (nothing a
 * save builds on). Null for the whole read when an object on the way is not there loose (packed,
 * or not read whole): the caller asks git. A save's trees and its HEAD after a commit are loose;
 * reading them here spares the save a cat-file process. Replace refs, which git would follow,
 * are the caller's to rule out. `reads`: the objects this call has read and checked already,
 * which it adds to (see {@link CheckedReads}).
 * @internal
 */
export function readLooseFolderTrees(dir: string, commit: string, folders: readonly string[], objectFormat: string, reads?: CheckedReads): Array<GitObject | null> | null {
  if (folders.length === 0) return [];
  const commitContent = readCheckedLoose(dir, commit, 'commit', objectFormat, reads);
  const root = commitContent === null ? null : /^tree ([0-9a-f]+)\n/.exec(commitContent.toString('latin1', 0, 100))?.[1];
  if (root === undefined || root === null) return null;
  return readLooseTreeFolders(dir, root, folders, objectFormat, false, reads);
}

/**
 * The trees of `folders` (paths from the top, `''` for it) under the tree `root`, as
 * {@link readLooseFolderTrees} reads them under a commit, and as `git cat-file --batch` prints
 * `<root>:<folder>`. Null for the whole read when an object on the way is not there loose.
 * Replace refs are the caller's to rule out.
 * @param raw - whether the folders are byte strings (one character a byte), not text (whose names are looked for as their UTF-8 bytes)
 * @param reads - the objects this call has read and checked already, which it adds to
 * @internal
 */
export function readLooseTreeFolders(dir: string, root: string, folders: readonly string[], objectFormat: string, raw = false, reads?: CheckedReads): Array<GitObject | null> | null {
  if (folders.length === 0) return [];
  const trees = new Map<string, GitObject | null>();
  const treeAt = (folder: string): GitObject | null | undefined => {
    const known = trees.get(folder);
    if (known !== undefined || trees.has(folder)) return known;
    let oid: string | null = root;
    if (folder !== '') {
      const slash = folder.lastIndexOf('/');
      const parent = treeAt(slash < 0 ? '' : folder.slice(0, slash));
      if (parent === undefined) return undefined;
      // Entry names are looked for as their bytes, one character a byte.
      const name = folder.slice(slash + 1);
      const entry = parent === null ? null : treeEntry(parent.content, raw ? name : Buffer.from(name, 'utf8').toString('latin1'), objectFormat);
      oid = entry === null || entry.mode !== '40000' ? null : entry.oid;
    }
    let tree: GitObject | null = null;
    if (oid !== null) {
      const content = readCheckedLoose(dir, oid, 'tree', objectFormat, reads);
      if (content === null) return undefined;
      tree = { oid, type: 'tree', content };
    }
    trees.set(folder, tree);
    return tree;
  };
  const found: Array<GitObject | null> = [];
  for (const folder of folders) {
    const tree = treeAt(folder);
    if (tree === undefined) return null;
    found.push(tree);
  }
  return found;
}

/** Past this many ids, {@link notThereLoose} lists each fan-out folder once rather than looking for each file. */
const LISTED_FROM = 256;

/**
 * Which of `oids` have no loose file in the objects folder `dir` (packed, or gone): a look for
 * each file, or, for many, one listing of each fan-out folder they fall in (a stat each costs
 * more than a listing of a folder's few dozen names). A folder that cannot be listed holds none.
 * @internal
 */
export function notThereLoose(dir: string, oids: readonly string[]): string[] {
  if (oids.length <= LISTED_FROM) return oids.filter((oid) => !existsSync(join(dir, oid.slice(0, 2), oid.slice(2))));
  const listed = new Map<string, Set<string>>();
  return oids.filter((oid) => {
    const folder = oid.slice(0, 2);
    let names = listed.get(folder);
    if (names === undefined) {
      try {
        names = new Set(readdirSync(join(dir, folder)));
      } catch {
        names = new Set();
      }
      listed.set(folder, names);
    }
    return !names.has(oid.slice(2));
  });
}
