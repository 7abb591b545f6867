// How chant moves a wip ref where `git update-ref --create-reflog -m <reason> <ref> <new> <old>`
// would move it, without the process: git's own lock protocol on the files backend (the ref's
// `.lock` file, created exclusively, the old value checked under it, the new one renamed into
// place) and git's own reflog line, appended before the rename as git appends it. Only the usual
// case is done here, the ref a loose file already naming the expected commit and its reflog
// already there; everything else is handed back to git, which then says what is wrong.
import { closeSync, constants, fstatSync, lstatSync, openSync, readFileSync, renameSync, rmSync, unlinkSync } from 'node:fs';
import { join } from 'node:path';
import { configMentions } from './config-files.js';
import { EXACT_OBJECT_ID } from './formats/object-format.js';
import { readCheckedLoose } from './loose-objects.js';
import { writeAll } from './loose-target.js';
import { gitEnvironment } from './runner.js';

/**
 * One compare-and-swap of a ref under `refs/chant/`, as `update-ref` takes it.
 * @internal
 */
export interface RefMove {
  /** The git directory every worktree shares, which holds `refs/chant/` and its reflogs. */
  commonDir: string;
  /** This worktree's git directory (its `config.worktree`). */
  gitDir: string;
  /** The full refname, under `refs/chant/`. */
  ref: string;
  /** The commit the ref is to name. */
  next: string;
  /** Where loose objects are kept: `next` must be there, a whole commit, as git checks before it moves a ref. */
  objectsDir: string;
  /** The commit it must name now. */
  expected: string;
  /** The reflog message, as given to `update-ref -m`. */
  reason: string;
  /** `Name <email>`, the committer ident git found itself for this repository (no fallback of chant's). */
  committer: Buffer;
}

/**
 * What in the configuration makes git write a ref otherwise than this does: another ref backend
 * (`extensions.refStorage`), a sync of refs to disk (`core.fsync`), permissions of its own
 * (`core.sharedRepository`), or a file this does not read (`include`).
 */
const OTHERWISE = /refstorage|fsync|sharedrepository|include/i;

/**
 * Moves the ref as `update-ref` would, or hands it back untouched.
 * @param move - the ref, its old and new commit, the reflog's message and committer
 * @param ambient - the environment chant runs in (the runner's source)
 * @param now - the clock, in milliseconds
 * @returns true when the ref was moved and its reflog line written; null when nothing was
 *   done and git is to do it: the ref is not a loose file naming `expected` (moved by another
 *   writer, packed, absent), its lock is held, its reflog is absent, or git would write
 *   something else (the configuration or the environment says so; see {@link OTHERWISE})
 * @internal
 */
export function moveRefInProcess(move: RefMove, ambient: Readonly<Record<string, string | undefined>> = process.env, now: () => number = Date.now): true | null {
  const { ref, next, expected } = move;
  if (!/^refs\/chant\/[^\0\n]+$/.test(ref) || !EXACT_OBJECT_ID.test(next) || !EXACT_OBJECT_ID.test(expected) || next.length !== expected.length) return null;
  // git dates its reflog from GIT_COMMITTER_DATE when it is set, and from the local zone it
  // finds without TZ (chant does not pass TZ on): where either could differ, git writes it.
  const env = gitEnvironment({}, ambient);
  if (env.GIT_COMMITTER_DATE !== undefined || ambient.TZ !== undefined) return null;
  if (configMentions(move, OTHERWISE, ambient)) return null;
  const path = join(move.commonDir, ref);
  const log = join(move.commonDir, 'logs', ref);
  // Held by another writer, or a folder missing: git waits for the lock, or says why not.
  return underRefLock(path, (lock): true | null => {
    // Under the lock, the ref must be the plain loose file git writes, naming `expected`.
    if (!lstatSync(path).isFile() || readFileSync(path, 'latin1') !== `${expected}\n`) return null;
    // git refuses to point a ref at an object it cannot read: only a whole loose commit is taken here.
    if (readCheckedLoose(move.objectsDir, next, 'commit', next.length === 40 ? 'sha1' : 'sha256') === null) return null;
    lock.write(`${next}\n`);
    if (!lock.held()) return null;
    const logFd = openReflog(log);
    if (logFd === null) return null;
    try {
      writeAll(logFd, reflogLine(move, now()));
    } finally {
      closeSync(logFd);
    }
    lock.place();
    return true;
  });
}

/** A ref's lock file as {@link underRefLock} holds it. */
interface RefLock {
  /** Writes the whole of `text` into the lock and closes it. */
  write(text: string): void;
  /** Whether the lock file at its path is still the one made here. */
  held(): boolean;
  /** Renames the lock into the ref's place, while it is still the one made here; throws otherwise. */
  place(): void;
}

/**
 * Runs `body` under git's lock on the ref file at `path`: the lock file made anew (null at once
 * when another writer holds it), then put in the ref's place by `place` or removed. It is renamed
 * or removed only while it is still the file made here: a writer paused past
 * {@link STALE_REF_LOCK_MS} may have had its lock taken as stale by another chant process, whose
 * own lock then stands at that path, and renaming that one would put its half-written value in
 * place (both writers then believing their move done).
 * @returns what `body` returns; null when the lock could not be made or `body` threw
 */
function underRefLock<T>(path: string, body: (lock: RefLock) => T): T | null {
  const file = `${path}.lock`;
  let fd: number;
  try {
    fd = openSync(file, constants.O_WRONLY | constants.O_CREAT | constants.O_EXCL, 0o666);
  } catch {
    return null;
  }
  let open = true;
  let placed = false;
  // The lock as made here: its inode, and its change time once written (an inode freed by a
  // removal can be the next file's).
  let mine: { ino: number; ctimeMs: number } | null = null;
  const close = (): void => {
    if (!open) return;
    open = false;
    try {
      closeSync(fd);
    } catch {
      // The lock is removed below all the same.
    }
  };
  const held = (): boolean => {
    const now = lstatSync(file, { throwIfNoEntry: false });
    return mine !== null && now !== undefined && now.ino === mine.ino && now.ctimeMs === mine.ctimeMs;
  };
  try {
    mine = { ino: fstatSync(fd).ino, ctimeMs: fstatSync(fd).ctimeMs };
    return body({
      write: (text) => {
        try {
          writeAll(fd, Buffer.from(text, 'latin1'));
        } finally {
          // A write that fails (a full disk) has dated the file all the same: still the lock made here, to remove.
          const stats = fstatSync(fd);
          mine = { ino: stats.ino, ctimeMs: stats.ctimeMs };
        }
        // A close that fails (NFS, a full quota) may have lost the write: the move goes to git.
        open = false;
        closeSync(fd);
      },
      held,
      place: () => {
        close();
        if (!held()) throw new Error(`${file} is no longer the lock this process made`);
        renameSync(file, path);
        placed = true;
      },
    });
  } catch {
    return null;
  } finally {
    close();
    if (!placed && held()) {
      try {
        unlinkSync(file);
      } catch {
        // Gone already.
      }
    }
  }
}

/** The reflog, opened for appending as git opens one that exists; null where it is absent or not a file. */
function openReflog(log: string): number | null {
  let fd: number;
  try {
    fd = openSync(log, constants.O_WRONLY | constants.O_APPEND | constants.O_NOFOLLOW);
  } catch {
    return null;
  }
  if (!fstatSync(fd).isFile()) {
    closeSync(fd);
    return null;
  }
  return fd;
}

/**
 * The line git appends to a ref's reflog: `<old> <new> <committer> <seconds> <zone>`, a tab and
 * the message as git normalizes it, then a newline.
 * @internal
 */
export function reflogLine(move: Pick<RefMove, 'next' | 'expected' | 'reason' | 'committer'>, ms: number): Buffer {
  const seconds = Math.floor(ms / 1000);
  const message = reflogMessage(move.reason);
  return Buffer.concat([
    Buffer.from(`${move.expected} ${move.next} `, 'latin1'),
    move.committer,
    Buffer.from(` ${seconds} ${zoneOf(seconds)}${message.length > 0 ? '\t' : ''}`, 'latin1'),
    Buffer.from(message, 'utf8'),
    Buffer.from('\n', 'latin1'),
  ]);
}

/** The local zone at `seconds`, as git prints it: `+hhmm` or `-hhmm`. */
function zoneOf(seconds: number): string {
  const minutes = -new Date(seconds * 1000).getTimezoneOffset();
  const sign = minutes < 0 ? '-' : '+';
  const abs = Math.abs(minutes);
  return `${sign}${String(Math.floor(abs / 60)).padStart(2, '0')}${String(abs % 60).padStart(2, '0')}`;
}

/**
 * A reflog message as git keeps it: leading white space dropped, each run of white space one
 * space, trailing space dropped (git's `copy_reflog_msg`, on git's own `isspace`: space, tab, newline and
 * carriage return, not C's vertical tab and form feed).
 * @internal
 */
export function reflogMessage(reason: string): string {
  let out = '';
  let wasSpace = true;
  for (const c of reason) {
    const space = c === ' ' || c === '\t' || c === '\n' || c === '\r';
    if (wasSpace && space) continue;
    wasSpace = space;
    out += space ? ' ' : c;
  }
  return out.replace(/ +$/, '');
}

/**
 * How old a wip ref's lock file must be to be one a killed process left: git and chant hold one
 * for the few file operations of a move.
 */
const STALE_REF_LOCK_MS = 10_000;

/**
 * Removes the lock file of a ref under `refs/chant/` that a process killed while it moved the ref
 * left behind (older than {@link STALE_REF_LOCK_MS}, or dated as far ahead of the clock); git
 * takes the ref as held by it forever.
 * @param commonDir - the git directory every worktree shares
 * @param ref - the full refname
 * @param now - the clock, in milliseconds
 * @returns whether a stale lock was removed
 * @internal
 */
export function removeStaleRefLock(commonDir: string, ref: string, now: number = Date.now()): boolean {
  if (!/^refs\/chant\/[^\0\n]+$/.test(ref)) return false;
  const lock = join(commonDir, `${ref}.lock`);
  try {
    const stats = lstatSync(lock);
    // Ahead of the clock as far: the clock was set back since (a wrong time after a power loss).
    if (!stats.isFile() || Math.abs(now - stats.mtimeMs) < STALE_REF_LOCK_MS) return false;
    unlinkSync(lock);
    return true;
  } catch {
    return false;
  }
}

/**
 * Whether the loose file of `ref` is there but names nothing: neither an object id of the
 * repository's length and a newline nor a symbolic ref, as a crash or a power loss leaves a file
 * emptied or cut short. git takes such a ref as absent (`for-each-ref` warns "ignoring broken
 * ref") and refuses to move or delete it.
 * @param commonDir - the git directory every worktree shares
 * @param ref - the full refname
 * @param length - the length of the repository's object ids (40 or 64)
 * @internal
 */
export function brokenRefFile(commonDir: string, ref: string, length: number): boolean {
  let text: string;
  try {
    text = readFileSync(join(commonDir, ref), 'latin1');
  } catch {
    return false;
  }
  const value = text.endsWith('\n') ? text.slice(0, -1) : text;
  return !value.startsWith('ref: ') && !(value.length === length && EXACT_OBJECT_ID.test(value));
}

/**
 * The values the reflog of `ref` moved it to, newest first: each line's second id, where it is
 * whole and of the repository's length (a last line cut short is passed over).
 * @internal
 */
export function reflogValues(commonDir: string, ref: string, length: number): string[] {
  let text: string;
  try {
    text = readFileSync(join(commonDir, 'logs', ref), 'latin1');
  } catch {
    return [];
  }
  const values: string[] = [];
  for (const line of text.split('\n').reverse()) {
    const value = line.slice(length + 1, 2 * length + 1);
    if (line.charAt(length) === ' ' && line.charAt(2 * length + 1) === ' ' && value.length === length && EXACT_OBJECT_ID.test(value) && !values.includes(value)) values.push(value);
  }
  return values;
}

/**
 * Removes a ref whose loose file is broken ({@link brokenRefFile}), and its reflog, under git's
 * lock on it and only while it is still broken, as update-ref deletes a ref (which it refuses to
 * do for a broken one).
 * @returns whether the ref is gone
 * @internal
 */
export function removeBrokenRef(commonDir: string, ref: string, length: number): boolean {
  if (!/^refs\/chant\/[^\0\n]+$/.test(ref)) return false;
  const path = join(commonDir, ref);
  return underRefLock(path, (): boolean => {
    if (!lstatSync(path).isFile() || !brokenRefFile(commonDir, ref, length)) return false;
    unlinkSync(path);
    rmSync(join(commonDir, 'logs', ref), { force: true });
    return true;
  }) === true;
}

/**
 * Writes `next` into a ref whose loose file is broken ({@link brokenRefFile}), under git's lock
 * on it and only while it is still broken, as update-ref would had it taken the ref. No reflog
 * line: the reflog already moved the ref there.
 * @returns whether the ref now names `next`
 * @internal
 */
export function replaceBrokenRef(commonDir: string, ref: string, next: string): boolean {
  if (!/^refs\/chant\/[^\0\n]+$/.test(ref) || !EXACT_OBJECT_ID.test(next)) return false;
  const path = join(commonDir, ref);
  return underRefLock(path, (lock): boolean => {
    if (!lstatSync(path).isFile() || !brokenRefFile(commonDir, ref, next.length)) return false;
    lock.write(`${next}\n`);
    lock.place();
    return true;
  }) === true;
}
