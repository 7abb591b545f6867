// The checkout around a folder read from its files, where that is what `git rev-parse` would
// print for it: the layout, HEAD's commit and tree, the branch HEAD names, and whether replace
// refs exist. Only the plain case is read here (a `.git` folder owned by this user at the top of
// the working tree, its repository configuration saying nothing of work trees, extensions or
// bareness, HEAD's commit loose or absent, no replace refs); every other is git's to read.
import { accessSync, constants, lstatSync, readdirSync, readFileSync, realpathSync, statSync } from 'node:fs';
import type { Stats } from 'node:fs';
import { dirname, join } from 'node:path';
import { EXACT_OBJECT_ID } from './formats/object-format.js';
import { readCheckedLoose } from './loose-objects.js';
import { gitEnvironment } from './runner.js';

/**
 * What {@link Plumbing.checkout} reads, as this reads it.
 * @internal
 */
export interface CheckoutFiles {
  layout: { top: string; gitDir: string; commonDir: string; indexFile: string; objectsDir: string; objectFormat: string };
  headRef: string | null;
  head: string | null;
  headTree: string | null;
  replaced: boolean;
}

const SHA1 = /^[0-9a-f]{40}$/;

/** Config of the repository that makes git find its work tree or its objects elsewhere, or read another file. */
const ELSEWHERE = /worktree|extensions|include/i;

/**
 * The checkout around `cwd`, read from its files, or null for git to read it.
 * @param cwd - the folder chant runs in
 * @param ambient - the environment chant runs in (the runner's source)
 * @internal
 */
export function checkoutFromFiles(cwd: string, ambient: Readonly<Record<string, string | undefined>> = process.env): CheckoutFiles | null {
  try {
    return read(cwd, ambient);
  } catch {
    return null;
  }
}

function read(cwd: string, ambient: Readonly<Record<string, string | undefined>>): CheckoutFiles | null {
  const env = gitEnvironment({}, ambient);
  // Configuration given in the environment could name a work tree or say the repository is bare.
  if (Object.entries(env).some(([name, value]) => name.startsWith('GIT_CONFIG') && /worktree|bare|include/i.test(value))) return null;
  const uid = process.geteuid?.();
  // As root under sudo git takes SUDO_UID as the owner to compare with: left to git.
  if (uid === undefined || (uid === 0 && ambient.SUDO_UID !== undefined)) return null;
  const top = findTop(realpathSync(cwd));
  if (top === null) return null;
  const gitDir = join(top, '.git');
  // git refuses a repository another user owns unless safe.directory says otherwise: left to git.
  if (statSync(top).uid !== uid || lstatSync(gitDir).uid !== uid) return null;
  const names = new Set(readdirSync(gitDir));
  // A linked work tree's or a submodule's git directory, another ref backend, grafts, a shallow boundary.
  if (['commondir', 'gitdir', 'reftable', 'shallow'].some((name) => names.has(name))) return null;
  if (!lstatSync(join(gitDir, 'objects')).isDirectory() || !lstatSync(join(gitDir, 'refs')).isDirectory()) return null;
  const config = readFileSync(join(gitDir, 'config'), 'latin1');
  if (ELSEWHERE.test(config) || !plainConfig(config)) return null;
  const layout = { top, gitDir, commonDir: gitDir, indexFile: join(gitDir, 'index'), objectsDir: join(gitDir, 'objects'), objectFormat: 'sha1' };
  // Replace refs make git read other commits for these: left to git.
  const packed = readIfThere(join(gitDir, 'packed-refs'));
  if (packed === undefined) return null;
  if (hasFiles(join(gitDir, 'refs', 'replace')) || (packed !== null && packed.includes(' refs/replace/'))) return null;
  if (readIfThere(join(gitDir, 'info', 'grafts')) !== null) return null;
  const headText = regularText(join(gitDir, 'HEAD'));
  if (headText === null) return null;
  let headRef: string | null;
  let head: string | null;
  const symbolic = /^ref: (refs\/heads\/[^\0\n\r]+)\n$/.exec(headText);
  if (symbolic !== null) {
    headRef = symbolic[1] as string;
    // A branch whose name git would read as something else, or one it would not check out: left to git.
    if (!plainRefName(headRef)) return null;
    const named = refTarget(gitDir, headRef, packed);
    if (named === undefined) return null;
    head = named;
  } else if (SHA1.test(headText.slice(0, -1)) && headText.endsWith('\n') && headText.length === 41) {
    headRef = null;
    head = headText.slice(0, -1);
  } else {
    return null;
  }
  if (head === null) return { layout, headRef, head: null, headTree: null, replaced: false };
  const commit = readCheckedLoose(layout.objectsDir, head, 'commit', 'sha1');
  const tree = commit === null ? null : /^tree ([0-9a-f]{40})\n/.exec(commit.toString('latin1'));
  if (tree === null || tree === undefined) return null;
  return { layout, headRef, head, headTree: tree[1] as string, replaced: false };
}

/**
 * The top of the working tree around `start`, as git's discovery finds it: the nearest folder
 * holding a `.git` folder that is a repository. Null, for git to find it, where the way up
 * holds a `.git` file (a linked work tree, a submodule), a `.git` that is not a repository, a
 * folder that is itself a git directory (a bare repository, or inside `.git`), or crosses into
 * another file system (where git stops looking).
 */
function findTop(start: string): string | null {
  let dir = start;
  let device: number | null = null;
  for (;;) {
    const here = lstatSync(dir);
    if (device !== null && here.dev !== device) return null;
    device = here.dev;
    const dotGit = lstatOrNull(join(dir, '.git'));
    if (dotGit !== null) {
      if (!dotGit.isDirectory()) return null;
      return isGitDirectory(join(dir, '.git')) ? dir : null;
    }
    if (isGitDirectory(dir)) return null;
    const parent = dirname(dir);
    if (parent === dir) return null;
    dir = parent;
  }
}

/** Whether a folder looks like a git directory to git: HEAD, and `objects` and `refs` it may search. */
function isGitDirectory(dir: string): boolean {
  return lstatOrNull(join(dir, 'HEAD')) !== null && searchable(join(dir, 'objects')) && searchable(join(dir, 'refs'));
}

function searchable(dir: string): boolean {
  try {
    accessSync(dir, constants.X_OK);
    return true;
  } catch {
    return false;
  }
}

/**
 * Whether the repository's configuration is one git reads as a plain non-bare repository of
 * format 0 or 1: each `bare` line says false, each `repositoryformatversion` 0 or 1.
 */
function plainConfig(config: string): boolean {
  for (const line of config.split('\n')) {
    const setting = /^\s*(bare|repositoryformatversion)\b\s*(?:=\s*(.*?))?\s*$/i.exec(line);
    if (setting === null) {
      if (/\b(?:bare|repositoryformatversion)\b/i.test(line)) return false;
      continue;
    }
    const value = (setting[2] ?? '').toLowerCase();
    if ((setting[1] as string).toLowerCase() === 'bare' ? value !== 'false' : value !== '0' && value !== '1') return false;
  }
  return true;
}

/** A refname under `refs/heads/` made of plain characters, which every git reads as itself. */
function plainRefName(ref: string): boolean {
  return /^refs\/heads\/[A-Za-z0-9._/-]+$/.test(ref) && !/(?:^|\/)\.|\.\.|\/\/|\/$|\.lock(?:\/|$)|\.$/.test(ref) && ref !== 'refs/heads/HEAD';
}

/**
 * The commit a branch names: its loose file (which wins over packed-refs in git too), else its
 * line in packed-refs, else null (a branch with no commit yet). Undefined where git is to say:
 * a loose file that is not a plain id, a link, a folder.
 */
function refTarget(commonDir: string, ref: string, packed: string | null): string | null | undefined {
  const stats = lstatOrNull(join(commonDir, ref));
  if (stats !== null) {
    if (!stats.isFile()) return undefined;
    const text = readFileSync(join(commonDir, ref), 'latin1');
    return text.length === 41 && text.endsWith('\n') && SHA1.test(text.slice(0, -1)) ? text.slice(0, -1) : undefined;
  }
  return packed === null ? null : packedRefTarget(packed, ref);
}

/**
 * The id `packed-refs` gives `ref`, or null when it names it nowhere. Undefined, for git to
 * read it, where the file is not one git would read the same: a first line starting `#` that
 * is not git's header, a last line with no newline, or `ref` named on more than one line.
 * @internal
 */
export function packedRefTarget(packed: string, ref: string): string | null | undefined {
  if (packed.length === 0) return null;
  if (!packed.endsWith('\n') || (packed.startsWith('#') && !packed.startsWith('# pack-refs with:'))) return undefined;
  const line = ` ${ref}\n`;
  const at = packed.indexOf(line);
  if (at < 0) return null;
  if (packed.indexOf(line, at + 1) >= 0) return undefined;
  const oid = packed.slice(packed.lastIndexOf('\n', at) + 1, at);
  return EXACT_OBJECT_ID.test(oid) ? oid : undefined;
}

/** Whether a folder holds any file, at any depth; false when it does not exist. */
function hasFiles(dir: string): boolean {
  let entries;
  try {
    entries = readdirSync(dir, { withFileTypes: true });
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === 'ENOENT') return false;
    throw error;
  }
  return entries.some((entry) => !entry.isDirectory() || hasFiles(join(dir, entry.name)));
}

function lstatOrNull(path: string): Stats | null {
  try {
    return lstatSync(path);
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === 'ENOENT') return null;
    throw error;
  }
}

/** A regular file's text (one character a byte), or null where it is a link or anything but a file. */
function regularText(path: string): string | null {
  const stats = lstatOrNull(path);
  return stats !== null && stats.isFile() ? readFileSync(path, 'latin1') : null;
}

/**
 * A file's text (one character a byte); null when it does not exist; undefined when it cannot be read.
 * @internal
 */
export function readIfThere(path: string): string | null | undefined {
  try {
    return readFileSync(path, 'latin1');
  } catch (error) {
    return (error as NodeJS.ErrnoException).code === 'ENOENT' ? null : undefined;
  }
}
