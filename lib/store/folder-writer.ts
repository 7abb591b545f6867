// Moves files git wrote into a private staging folder into the working tree, and removes files
// from it, without ever following a symlink on the way: every folder is opened relative to its
// parent's descriptor, with O_NOFOLLOW, and every rename, unlink, mkdir and rmdir goes through
// `/proc/self/fd/<folder>/<name>`, which names the entry in the folder that descriptor holds,
// wherever that folder has moved since. At most HELD_FOLDERS are held open at once; one closed
// and opened again must be the same folder (device and inode), else the move stops as a race. A process racing the restore that swaps a folder
// for a symlink to somewhere outside either makes the open fail (the restore stops and puts back
// what it did) or has moved the real folder, which the restore keeps writing into: never through
// the symlink. Linux only (where /proc/self/fd is), which `available()` answers.
import { chmodSync, closeSync, constants, existsSync, fstatSync, lstatSync, mkdirSync, openSync, readdirSync, readFileSync, readlinkSync, renameSync, rmdirSync, symlinkSync, unlinkSync, fchmodSync } from 'node:fs';
import { writeAll } from '../git/loose-target.js';
import { rawPathOnDisk, rawPathText } from '../git/formats/path-text.js';

const FOLDER_FLAGS = constants.O_RDONLY | constants.O_DIRECTORY | constants.O_NOFOLLOW;

/** How many folder descriptors a move holds open at most, well under a low open files limit (ulimit -n 64). */
const HELD_FOLDERS = 32;

/**
 * A folder of the working tree is not where or what the restore found it to be: another process
 * changed it while the restore wrote.
 * @internal
 */
export class FolderRaceError extends Error {
  /** The folder, a byte string. */
  readonly raw: string;

  constructor(raw: string, why: string) {
    super(why);
    this.name = 'FolderRaceError';
    this.raw = raw;
  }
}

/**
 * A path of the working tree the folder writer could not change: its message names the path
 * (not the descriptor path the call went through) and the system's reason.
 * @internal
 */
export class FolderOpError extends Error {
  /** The path, a byte string. */
  readonly raw: string;

  constructor(raw: string, what: string, cause: unknown) {
    const why = cause instanceof Error ? cause.message.split(', ')[0] as string : String(cause);
    super(`cannot ${what} ${rawPathText(raw)}: ${why}`, { cause });
    this.name = 'FolderOpError';
    this.raw = raw;
  }
}

/** What {@link applyOps} did, and, for a put-back that goes on past failures, what it could not do. */
export interface ApplyProgress {
  /** Receives each path (a byte string) an op changed, or began to change. */
  touched?: Set<string>;
  /** When given, receives each op that failed, and the others are still made. */
  failures?: Array<{ raw: string; error: unknown }>;
}

/** One change to make: remove a path, or put the staged file of a path in its place. */
export interface FolderOp {
  /** The path, a byte string (one character a byte). */
  raw: string;
  /** `remove`, `write` (from staging), or `folder` (an empty folder, a gitlink's place). */
  kind: 'remove' | 'write' | 'folder';
}

/**
 * Whether descriptor-relative paths are available here.
 * @internal
 */
export function available(): boolean {
  return process.platform === 'linux' && existsSync('/proc/self/fd');
}

/**
 * Makes `ops` in the working tree at `top`: first every removal (files, and the folders that
 * are left empty by them and receive nothing), then every write, each a rename of the staged
 * file (`<staging>/<path>`, or the name `stagedAs` gives it), or a copy where the staging folder
 * is on another file system.
 * @param top - the top of the working tree
 * @param staging - the folder the staged files are in, under the same relative paths unless
 *   `stagedAs` names them
 * @param ops - what to do
 * @param progress - `touched` receives each path an op changed (or began to change, where it
 *   takes more than one step), so that a caller putting things back after a failure puts back
 *   only those; with `failures`, an op that fails is recorded there and the others are still
 *   made (a put-back does all it can), else the first failure is thrown
 * @param stagedAs - the name in `staging` of each path's staged file, by path, where they were
 *   staged side by side rather than under their paths
 * @throws {@link FolderRaceError} when a folder on the way is a symlink or not a folder, or was
 *   moved while the restore wrote; any other file system error as it is
 * @internal
 */
export function applyOps(top: string, staging: string, ops: readonly FolderOp[], progress: ApplyProgress = {}, stagedAs?: ReadonlyMap<string, string>): void {
  const { touched, failures } = progress;
  // A failure names the path of the working tree, not the descriptor path it went through.
  const attempt = (raw: string, what: string, make: () => void): void => {
    try {
      make();
    } catch (error) {
      const failed = error instanceof FolderRaceError ? error : new FolderOpError(raw, what, error);
      if (failures === undefined) throw failed;
      failures.push({ raw, error: failed });
    }
  };
  const folders = new Map<string, number>();
  // Folders whose descriptor was closed to stay under the open files limit (a restore into
  // thousands of folders): each is known by its device and inode, checked when it is opened again
  // and at the end, as a held one is.
  const closed = new Map<string, { dev: number; ino: number }>();
  const topFd = openSync(top, constants.O_RDONLY | constants.O_DIRECTORY);
  folders.set('', topFd);
  try {
    const entry = (fd: number, name: string): Buffer => Buffer.concat([Buffer.from(`/proc/self/fd/${fd}/`), Buffer.from(name, 'latin1')]);
    const open = (raw: string, create: boolean): number | null => {
      const known = folders.get(raw);
      if (known !== undefined) return known;
      const slash = raw.lastIndexOf('/');
      const parent = open(slash < 0 ? '' : raw.slice(0, slash), create);
      if (parent === null) return null;
      const path = entry(parent, raw.slice(slash + 1));
      if (folders.size >= HELD_FOLDERS) {
        for (const [held, heldFd] of folders) {
          if (held === '' || raw.startsWith(`${held}/`)) continue;
          const { dev, ino } = fstatSync(heldFd);
          closed.set(held, { dev, ino });
          closeSync(heldFd);
          folders.delete(held);
        }
      }
      let fd: number;
      try {
        fd = openSync(path, FOLDER_FLAGS);
      } catch (error) {
        const code = (error as NodeJS.ErrnoException).code;
        if (code === 'ENOENT' && create) {
          try {
            mkdirSync(path);
          } catch (made) {
            if ((made as NodeJS.ErrnoException).code !== 'EEXIST') throw made;
          }
          return open(raw, false) ?? raceOn(raw, 'it vanished as it was made');
        }
        if (code === 'ENOENT') return null;
        if (code === 'ELOOP' || code === 'ENOTDIR') raceOn(raw, 'it is a symlink or a file where a folder should be');
        throw error;
      }
      const before = closed.get(raw);
      if (before !== undefined) {
        const now = fstatSync(fd);
        if (now.dev !== before.dev || now.ino !== before.ino) {
          closeSync(fd);
          raceOn(raw, 'another process moved or replaced it while the restore wrote in it');
        }
        closed.delete(raw);
      }
      folders.set(raw, fd);
      return fd;
    };
    const writes = ops.filter((op) => op.kind !== 'remove');
    const receiving = new Set<string>();
    for (const op of writes) {
      for (let slash = op.raw.indexOf('/'); slash > 0; slash = op.raw.indexOf('/', slash + 1)) receiving.add(op.raw.slice(0, slash));
    }
    // Removals: files first, then the folders they leave empty, deepest first.
    const emptied = new Set<string>();
    for (const op of ops) {
      if (op.kind !== 'remove') continue;
      const slash = op.raw.lastIndexOf('/');
      attempt(op.raw, 'remove', () => {
        const parent = open(slash < 0 ? '' : op.raw.slice(0, slash), false);
        if (parent === null) return;
        const path = entry(parent, op.raw.slice(slash + 1));
        try {
          unlinkSync(path);
          touched?.add(op.raw);
        } catch (error) {
          const code = (error as NodeJS.ErrnoException).code;
          // A gitlink's place is an (empty) folder, which unlink refuses (EISDIR on Linux, EPERM
          // where POSIX says so); anything else not there is already gone. A file that cannot be
          // removed (a sticky folder another user owns, an immutable file) fails the move: it is
          // never reported removed while it is still there.
          if ((code === 'EISDIR' || code === 'EPERM') && isFolder(path)) {
            if (rmdirQuietly(path)) touched?.add(op.raw);
          } else if (code !== 'ENOENT') {
            throw error;
          }
        }
        for (let at = slash; at > 0; at = op.raw.lastIndexOf('/', at - 1)) emptied.add(op.raw.slice(0, at));
      });
    }
    for (const folder of [...emptied].sort((a, b) => b.length - a.length)) {
      if (receiving.has(folder)) continue;
      const slash = folder.lastIndexOf('/');
      // Its parent may be opened again here, and found replaced: a put-back goes on with the others.
      attempt(folder, 'remove', () => {
        const parent = open(slash < 0 ? '' : folder.slice(0, slash), false);
        if (parent === null) return;
        if (rmdirQuietly(entry(parent, folder.slice(slash + 1)))) {
          const fd = folders.get(folder);
          if (fd !== undefined) closeSync(fd);
          folders.delete(folder);
          closed.delete(folder);
        }
      });
    }
    for (const op of writes) attempt(op.raw, 'write', () => {
      const slash = op.raw.lastIndexOf('/');
      const parent = open(slash < 0 ? '' : op.raw.slice(0, slash), true) as number;
      const path = entry(parent, op.raw.slice(slash + 1));
      if (op.kind === 'folder') {
        try {
          mkdirSync(path);
          touched?.add(op.raw);
        } catch (error) {
          if ((error as NodeJS.ErrnoException).code !== 'EEXIST') throw error;
        }
        return;
      }
      const name = stagedAs?.get(op.raw);
      const from = Buffer.concat([Buffer.from(`${staging}/`), name === undefined ? Buffer.from(op.raw, 'latin1') : Buffer.from(name, 'utf8')]);
      // The folder in the file's place was emptied of its files above, but untracked empty
      // folders (which git never records) can remain in it: they go, and nothing else can.
      const clearFolder = (): void => {
        for (const [raw, fd] of folders) {
          if (raw === op.raw || raw.startsWith(`${op.raw}/`)) {
            closeSync(fd);
            folders.delete(raw);
          }
        }
        for (const raw of closed.keys()) {
          if (raw === op.raw || raw.startsWith(`${op.raw}/`)) closed.delete(raw);
        }
        removeEmptyTree(path);
      };
      keepPermissions(from, path);
      try {
        renameSync(from, path);
        touched?.add(op.raw);
      } catch (error) {
        const code = (error as NodeJS.ErrnoException).code;
        if (code === 'EISDIR') {
          clearFolder();
          renameSync(from, path);
          touched?.add(op.raw);
        } else if (code === 'EXDEV') {
          // Across file systems the rename fails before it looks at what is in the way. The
          // copy takes steps (the old entry goes first): the path counts as changed from its first.
          if (lstatSync(path, { throwIfNoEntry: false })?.isDirectory() === true) clearFolder();
          touched?.add(op.raw);
          copyInto(from, path);
        } else {
          throw error;
        }
      }
    });
    // Every folder written in is still the one at its path: else another process moved it, and
    // what was written there is not where the working tree has it.
    const checked = [...[...folders].map(([raw, fd]) => [raw, () => fstatSync(fd)] as const), ...[...closed].map(([raw, known]) => [raw, () => known] as const)];
    for (const [raw, was] of checked) {
      if (raw === '') continue;
      attempt(raw, 'check', () => {
        const held = was();
        const now = (() => {
          try {
            return lstatSync(rawPathOnDisk(top, raw));
          } catch {
            return null;
          }
        })();
        if (now === null || now.ino !== held.ino || now.dev !== held.dev) raceOn(raw, 'another process moved or replaced it while the restore wrote in it');
      });
    }
  } finally {
    for (const fd of folders.values()) closeSync(fd);
  }
}

/**
 * Gives the staged file the read and write bits of the file it replaces, so a restore leaves a
 * 0600 `.env` as private as it found it (git records only the executable bit, and a new file gets
 * the umask's): the executable bits are the snapshot's, set where the old file could be read.
 */
function keepPermissions(from: Buffer, to: Buffer): void {
  const old = lstatSync(to, { throwIfNoEntry: false });
  if (old === undefined || !old.isFile()) return;
  const staged = lstatSync(from);
  if (!staged.isFile()) return;
  const mode = (old.mode & 0o666) | ((staged.mode & 0o100) === 0 ? 0 : (old.mode & 0o444) >> 2);
  if (mode !== (staged.mode & 0o777)) chmodSync(from, mode);
}

function raceOn(raw: string, why: string): never {
  throw new FolderRaceError(raw, why);
}

/**
 * Removes a folder that holds nothing but (nested) empty folders: rmdir only, never unlink, so
 * a folder holding any file or symlink fails with ENOTEMPTY and nothing of it is lost.
 */
function removeEmptyTree(path: Buffer): void {
  for (const name of readdirSync(path, { encoding: 'buffer' })) {
    const child = Buffer.concat([path, Buffer.from('/'), name]);
    if (lstatSync(child).isDirectory()) removeEmptyTree(child);
  }
  rmdirSync(path);
}

/** Whether the entry at `path` is a folder itself (not followed through a symlink). */
function isFolder(path: Buffer): boolean {
  try {
    return lstatSync(path).isDirectory();
  } catch {
    return false;
  }
}

function rmdirQuietly(path: Buffer): boolean {
  try {
    rmdirSync(path);
    return true;
  } catch {
    return false;
  }
}

/** A staged file or symlink copied into place, the place's own entry replaced, never followed. */
function copyInto(from: Buffer, to: Buffer): void {
  const stats = lstatSync(from);
  try {
    unlinkSync(to);
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code !== 'ENOENT') throw error;
  }
  if (stats.isSymbolicLink()) {
    symlinkSync(readlinkSync(from, { encoding: 'buffer' }), to);
    return;
  }
  const fd = openSync(to, constants.O_WRONLY | constants.O_CREAT | constants.O_EXCL | constants.O_NOFOLLOW, stats.mode & 0o777);
  try {
    // A write may take only part of what it is given (a file size limit, a disk that fills)
    // and say so: the rest is written, or the error that stops it fails the move.
    writeAll(fd, readFileSync(from));
    fchmodSync(fd, stats.mode & 0o777);
  } finally {
    closeSync(fd);
  }
}
