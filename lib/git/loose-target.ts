// How chant writes a loose object where git would write it itself (a save's blobs, trees and
// commit): with the permissions git gives its own (the umask's; a repository whose configuration
// mentions `core.sharedRepository`, where git adds its own, is left to git), and synced to disk
// when the configuration asks git to sync loose objects (`core.fsync`, `core.fsyncObjectFiles`).
import { randomBytes } from 'node:crypto';
import { closeSync, existsSync, fchmodSync, fsyncSync, linkSync, mkdirSync, openSync, renameSync, rmSync, statSync, unlinkSync, utimesSync, writeSync } from 'node:fs';
import { join } from 'node:path';
import { configMentions } from './config-files.js';
import { looseObject } from './formats/loose.js';
import { readCheckedLoose } from './loose-objects.js';
import type { CheckedReads } from './loose-objects.js';

/**
 * Where and how loose objects are written.
 * @internal
 */
export interface LooseTarget {
  /** The objects folder. */
  objectsDir: string;
  /** Whether each object file is synced to disk before it is linked into place. */
  fsync: boolean;
}

/**
 * The target of a checkout's loose objects, read from the configuration files git reads (see
 * {@link syncsLooseObjects}); null, for git to write them, where any of them mentions
 * `sharedRepository` (git then gives its objects and their folders permissions of its own, from
 * a value this does not read) or cannot be read.
 * @param layout - the checkout's git directories and objects folder
 * @param ambient - the environment chant runs in (the runner's source)
 * @internal
 */
export function looseTarget(layout: { objectsDir: string; commonDir: string; gitDir: string }, ambient: Readonly<Record<string, string | undefined>> = process.env): LooseTarget | null {
  if (configMentions(layout, SHARED, ambient)) return null;
  return { objectsDir: layout.objectsDir, fsync: syncsLooseObjects(layout, ambient) };
}

/** What in a configuration's text may make git give its objects other permissions than the umask's. */
const SHARED = /sharedrepository|include/i;

/** What in a configuration's text may make git sync loose objects, or read a file this does not. */
const MAY_SYNC = /fsync|include/i;

/**
 * Whether git may sync loose objects to disk here: any configuration it reads (system, global,
 * the repository's, the worktree's, or given in the environment) that mentions `fsync`
 * (`core.fsync`, `core.fsyncObjectFiles`, `core.fsyncMethod`) or includes another file, or one
 * that cannot be read. git's own default does not sync loose objects; this says yes whenever it
 * cannot tell, since a sync costs time and a missing one costs a snapshot after a power loss.
 * @internal
 */
export function syncsLooseObjects(layout: { commonDir: string; gitDir: string }, ambient: Readonly<Record<string, string | undefined>> = process.env): boolean {
  return configMentions(layout, MAY_SYNC, ambient);
}

/**
 * Puts a loose object's file in place as git's own write does: a `tmp_obj_` file of mode 0444 in
 * its fan-out folder, synced to disk first where git's configuration may ask git to (see
 * {@link LooseTarget}), then linked into place (renamed where the file system has no links), so
 * the object is whole or absent, with the permissions the umask leaves. Nothing is written when
 * the object is there loose already.
 * @internal
 * @returns whether it was written (false: it was there loose already)
 * @throws the file system's error when the object cannot be written
 */
export function placeLooseObject(target: LooseTarget, oid: string, file: Buffer): boolean {
  const folder = join(target.objectsDir, oid.slice(0, 2));
  const path = join(folder, oid.slice(2));
  if (existsSync(path)) return false;
  const temporary = join(folder, `tmp_obj_${randomBytes(6).toString('hex')}`);
  let fd: number;
  try {
    fd = openSync(temporary, 'wx', 0o444);
  } catch (error) {
    // The fan-out folder is made only when it is missing: most objects land in one that exists.
    if ((error as NodeJS.ErrnoException).code !== 'ENOENT') throw error;
    try {
      mkdirSync(folder);
    } catch (made) {
      if ((made as NodeJS.ErrnoException).code !== 'EEXIST') throw made;
    }
    fd = openSync(temporary, 'wx', 0o444);
  }
  try {
    try {
      writeAll(fd, file);
      if (target.fsync) fsyncSync(fd);
    } finally {
      closeSync(fd);
    }
    try {
      linkSync(temporary, path);
    } catch (error) {
      const code = (error as NodeJS.ErrnoException).code;
      if (code !== 'EEXIST') renameSync(temporary, path);
    }
  } finally {
    try {
      unlinkSync(temporary);
    } catch {
      // Renamed into place.
    }
  }
  return true;
}

/**
 * Writes all of `bytes` at the descriptor's position, however many writes the system takes.
 * @internal
 */
export function writeAll(fd: number, bytes: Uint8Array): void {
  for (let at = 0; at < bytes.length;) at += writeSync(fd, bytes, at);
}

/** A loose object written or refreshed within this many milliseconds is not refreshed again. */
const FRESH_MS = 60 * 60 * 1000;

/**
 * Whether the object is on disk as a loose object, its time refreshed where it is older than an
 * hour, as git refreshes an object it would write again: an unreachable object (a snapshot pruned
 * away held it) is taken by a prune once it is two weeks old by git's default, and one running
 * while a new snapshot comes to name it again must not take it. False where it is not there or
 * its time cannot be refreshed: the caller writes it anew.
 * @internal
 */
export function keepLooseObject(objectsDir: string, oid: string): boolean {
  const path = join(objectsDir, oid.slice(0, 2), oid.slice(2));
  const stats = statSync(path, { throwIfNoEntry: false });
  if (stats === undefined) return false;
  if (stats.mtimeMs > Date.now() - FRESH_MS) return true;
  try {
    const now = new Date();
    utimesSync(path, now, now);
    return true;
  } catch {
    return false;
  }
}

/** Loose files up to this size are read back by {@link healBrokenLooseBlob}. */
const HEALED_BYTES = 32 * 1024 * 1024;

/**
 * Puts whole again the loose blob `oid` whose file a crash or a power loss emptied or cut short
 * (it does not read back as `oid`), from what `content` reads, bytes known to hash to it (a file
 * of the working tree git writes back as it is), read only once the loose file is found broken:
 * git takes an object there loose as held, writes it never again, and the snapshots that name it
 * (every later save of an unchanged file too) could give nothing back. The new file is written
 * beside it, with its permissions, and renamed over it. With `absent`, the caller knows git holds
 * the blob nowhere (neither loose nor packed: a `git gc --prune=now` took it between a save's
 * writes and its move of the ref), and it is written as a loose object anew, with the umask's
 * permissions (the caller leaves a repository whose configuration shares it to git).
 * @returns false where the object is not there loose (and not `absent`), reads back whole
 *   already, or `content` is not its bytes; true where it was put back
 * @throws the file system's error when it cannot be written
 * @param reads - the objects this call has read and checked already, which it adds to
 * @internal
 */
export function healBrokenLooseBlob(objectsDir: string, oid: string, content: () => Buffer, objectFormat: string, absent = false, reads?: CheckedReads): boolean {
  const folder = join(objectsDir, oid.slice(0, 2));
  const path = join(folder, oid.slice(2));
  const stats = statSync(path, { throwIfNoEntry: false });
  // A large one is not read whole into memory for this look.
  if (stats === undefined ? !absent : stats.size > HEALED_BYTES || readCheckedLoose(objectsDir, oid, 'blob', objectFormat, reads) !== null) return false;
  const object = looseObject('blob', content(), objectFormat);
  if (object.oid !== oid) return false;
  if (stats === undefined) mkdirSync(folder, { recursive: true });
  const temporary = join(folder, `tmp_obj_${randomBytes(6).toString('hex')}`);
  const fd = openSync(temporary, 'wx', 0o444);
  try {
    try {
      // The permissions of the file it replaces, which git gave it (a repository whose
      // configuration shares it has git add the group's to the umask's), readable by its owner.
      if (stats !== undefined) fchmodSync(fd, (stats.mode & 0o777) | 0o400);
      writeAll(fd, object.file);
      fsyncSync(fd);
    } finally {
      closeSync(fd);
    }
    renameSync(temporary, path);
  } catch (error) {
    rmSync(temporary, { force: true });
    throw error;
  }
  return true;
}
