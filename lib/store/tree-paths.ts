// The paths a restore may write. git's checkout refuses some of them itself, but only after the
// checkpoint is recorded, and some only halfway through writing the tree (a name too long for
// the file system fails after earlier files were written). A snapshot chant took never holds any
// of them, so one that does was made by hand, and is refused before anything is written.
import type { Plumbing, TreeChange } from '../git/plumbing.js';
import { rawPathText } from '../git/formats/path-text.js';
import { treeEntry } from '../git/formats/tree.js';

/**
 * The longest file name Linux, macOS and Windows file systems take, in bytes.
 * @internal
 */
export const NAME_MAX = 255;
/**
 * The longest path the system calls take (PATH_MAX), terminator included, in bytes.
 * @internal
 */
export const PATH_MAX = 4096;

// git's verify_path with its defaults (core.protectNTFS on): `.git` in any case, and the forms
// NTFS reads as `.git` (trailing dots and spaces, the 8.3 name `git~1`), also after a backslash.
const DOTGIT = /^(?:\.git|git~1)[. ]*$/i;
// A symlink may not be named `.gitmodules` (git follows it when it reads submodule config).
const DOTGITMODULES = /^(?:\.gitmodules|gitmod~\d|gi7eba~\d)[. ]*$/i;

/**
 * Why a path may not be written by a restore, or null when it may.
 * @param path - repository-relative, `/`-separated, as git lists it
 * @param mode - its mode in the tree (`120000` for a symlink)
 * @param raw - whether `path` is a byte string (one character a byte) rather than text
 * @returns a reason for people, or null
 * @internal
 */
export function unwritablePath(path: string, mode: string, raw = false): string | null {
  const parts = path.split('/');
  for (const [index, part] of parts.entries()) {
    if (part === '') return 'it has an empty name';
    if (part === '.' || part === '..') return `it holds a ${part} component`;
    if (part.split('\\').some((piece) => DOTGIT.test(piece))) return 'it holds a .git component';
    if ((raw ? part.length : Buffer.byteLength(part)) > NAME_MAX) return `a name in it is longer than ${NAME_MAX} bytes`;
    if (index === parts.length - 1 && mode === '120000' && DOTGITMODULES.test(part)) return 'it is a symlink named .gitmodules';
  }
  return null;
}

// git fsck's checks of a tree entry's name (fsck_tree), which a remote running
// receive.fsckObjects (GitHub, GitLab) applies to whatever is pushed to it, on every system: a
// name HFS+ reads as .git (it ignores some invisible code points) or NTFS does (also after a
// colon), and a .gitmodules or .gitattributes in those forms that is not a file. git add on
// Linux takes all of them, and one snapshot holding one would keep its chain off such a remote
// for good, every later snapshot with it.
const HFS_IGNORED = /[\u200c-\u200f\u202a-\u202e\u206a-\u206f\ufeff]/g;
/** git's is_hfs_dot_generic: `.<needle>` in any ASCII case once the code points HFS+ ignores are gone. */
function hfsDotName(needle: string): RegExp {
  return new RegExp(`^\\.${needle}$`, 'i');
}
/** git's is_ntfs_dot_generic: `.<needle>`, the short name `<six>~1` to `~4`, or a fallback short name, then only dots and spaces up to the end or a colon. */
function ntfsDotName(needle: string, shortPrefix: string): RegExp {
  const fallback = Array.from({ length: 7 }, (_, kept) => `${shortPrefix.slice(0, kept)}~[1-9]\\d{${6 - kept}}`).join('|');
  return new RegExp(`^(?:\\.${needle}|${needle.slice(0, 6)}~[1-4]|${fallback})[. ]*(?::|$)`, 'i');
}
const HFS_DOTGIT = hfsDotName('git');
const NTFS_DOTGIT = /^(?:\.git|git~1)[. ]*(?:[:\\]|$)/i;
const HFS_DOTGITMODULES = hfsDotName('gitmodules');
const NTFS_DOTGITMODULES = ntfsDotName('gitmodules', 'gi7eba');
const HFS_DOTGITATTRIBUTES = hfsDotName('gitattributes');
const NTFS_DOTGITATTRIBUTES = ntfsDotName('gitattributes', 'gi7d29');
// Every name any of them reads starts so (or holds a backslash): the rest are passed at a glance.
const MAY_BE_READ = /^[.gG~\u200c-\u200f\u202a-\u202e\u206a-\u206f\ufeff]|\\/;
/** Whether any name of a path may be read so (see MAY_BE_READ). */
const PATH_MAY_BE_READ = /(?:^|\/)[.gG~\u200c-\u200f\u202a-\u202e\u206a-\u206f\ufeff]|\\/;
/** The name, then what follows each backslash in it: fsck reads each as a name of its own on NTFS. */
function afterBackslashes(name: string): string[] {
  const found = [name];
  for (let at = name.indexOf('\\'); at >= 0; at = name.indexOf('\\', at + 1)) found.push(name.slice(at + 1));
  return found;
}
/** What fsck reads a name as: `.git`, `.gitmodules`, `.gitattributes`, or nothing of these. */
function readAs(name: string): { dotgit: boolean; dotgitmodules: boolean; dotgitattributes: boolean } {
  if (!MAY_BE_READ.test(name)) return { dotgit: false, dotgitmodules: false, dotgitattributes: false };
  const hfs = name.replace(HFS_IGNORED, '');
  const pieces = afterBackslashes(name);
  return {
    dotgit: HFS_DOTGIT.test(hfs) || pieces.some((piece) => NTFS_DOTGIT.test(piece)),
    dotgitmodules: HFS_DOTGITMODULES.test(hfs) || pieces.some((piece) => NTFS_DOTGITMODULES.test(piece)),
    dotgitattributes: HFS_DOTGITATTRIBUTES.test(hfs) || NTFS_DOTGITATTRIBUTES.test(name),
  };
}

/**
 * Whether a remote that checks what it receives (receive.fsckObjects) would refuse a tree
 * holding this path, by its names alone.
 * @param path - repository-relative, `/`-separated, as text
 * @param mode - its mode in the tree (`120000` for a symlink, `160000` for a gitlink)
 * @internal
 */
export function refusedByObjectChecks(path: string, mode: string): boolean {
  // No name in it that fsck could read as one of these: passed at a glance, unsplit (a save
  // with 10,000 files modified since HEAD checks them all).
  if (!PATH_MAY_BE_READ.test(path)) return false;
  const parts = path.split('/');
  return parts.some((part, index) => {
    const last = index === parts.length - 1;
    const read = readAs(part);
    return read.dotgit
      || ((!last || mode === '160000') && (read.dotgitmodules || read.dotgitattributes))
      || (last && mode === '120000' && read.dotgitmodules);
  });
}

/**
 * The paths of `changes` a restore under `top` may not write, each with why, sorted as given:
 * invalid names, paths too long for the system, and a path written both as a file and as a
 * folder (a tree listing one name twice).
 * @param top - the top of the working tree
 * @param changes - what the restore would change
 * @returns one line per refused path
 * @internal
 */
export function unwritableChanges(top: string, changes: readonly TreeChange[]): string[] {
  const problems: string[] = [];
  const written = changes.filter((change) => change.newMode !== '000000');
  const files = new Set<string>();
  // Names are checked as bytes (raw: one character a byte), so a name that is not UTF-8 is one
  // name of its own, and its length is its length on disk.
  for (const change of written) {
    if (files.has(change.raw)) problems.push(`${JSON.stringify(change.path)}: the tree lists it twice`);
    files.add(change.raw);
  }
  const topBytes = Buffer.byteLength(top);
  for (const change of written) {
    const reason = unwritablePath(change.raw, change.newMode, true)
      ?? (topBytes + 1 + change.raw.length >= PATH_MAX ? `the path is longer than ${PATH_MAX - 1} bytes` : null)
      ?? parentWritten(change.raw, files);
    if (reason !== null) problems.push(`${JSON.stringify(change.path)}: ${reason}`);
  }
  return problems;
}

function parentWritten(path: string, files: ReadonlySet<string>): string | null {
  let slash = path.indexOf('/');
  while (slash > 0) {
    const parent = path.slice(0, slash);
    if (files.has(parent)) return `the tree also lists ${JSON.stringify(rawPathText(parent))} as a file`;
    slash = path.indexOf('/', slash + 1);
  }
  return null;
}

/**
 * The entry of each of `raws` (byte strings, paths from the top) in `tree`, or null where it
 * holds none: its tree objects read by id, a folder at a time, so that any name, one that is not
 * UTF-8 or holds a newline with the rest, is found (`<tree>:<path>` cannot name those). Null as
 * a whole when the objects cannot be read as bytes (see {@link Plumbing.readObjects}). `tree` is
 * any name `cat-file` resolves to a tree (`<commit>^{tree}`).
 * @internal
 */
export async function entriesInTree(plumbing: Plumbing, objectFormat: string, tree: string, raws: readonly string[]): Promise<Array<{ mode: string; oid: string } | null> | null> {
  const found: Array<{ mode: string; oid: string } | null> = raws.map(() => null);
  const contents = new Map<string, Buffer | null>();
  let walks = raws.map((raw, at) => ({ at, oid: tree, names: raw.split('/') }));
  while (walks.length > 0) {
    const unread = [...new Set(walks.map((walk) => walk.oid))].filter((oid) => !contents.has(oid));
    if (unread.length > 0) {
      const objects = await plumbing.readObjects(unread);
      if (objects === null) return null;
      for (const [at, oid] of unread.entries()) {
        const object = objects[at];
        contents.set(oid, object !== null && object !== undefined && object.type === 'tree' ? object.content : null);
      }
    }
    const next: typeof walks = [];
    for (const walk of walks) {
      const content = contents.get(walk.oid);
      const [name, ...rest] = walk.names;
      const entry = content === null || content === undefined || name === undefined ? null : treeEntry(content, name, objectFormat);
      if (entry === null) continue;
      if (rest.length === 0) found[walk.at] = entry;
      else if (entry.mode === '40000') next.push({ at: walk.at, oid: entry.oid, names: rest });
    }
    walks = next;
  }
  return found;
}
