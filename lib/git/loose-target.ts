// How chant writes a loose object where git would write it itself (a save's trees and commit):
// with the permissions git's `core.sharedRepository` gives, and synced to disk when the
// configuration asks git to sync loose objects (`core.fsync`, `core.fsyncObjectFiles`).
import { randomBytes } from 'node:crypto';
import { chmodSync, closeSync, existsSync, fchmodSync, fstatSync, fsyncSync, linkSync, mkdirSync, openSync, renameSync, statSync, unlinkSync, writeSync } from 'node:fs';
import { join } from 'node:path';
import { configMentions } from './config-files.js';

/**
 * Where and how loose objects are written.
 * @internal
 */
export interface LooseTarget {
  /** The objects folder. */
  objectsDir: string;
  /**
   * The objects folder's mode when it is group-shared (set-group-id, as `core.sharedRepository`
   * makes it), else 0: a fan-out folder made takes it, and an object file the read bits it grants.
   */
  shared: number;
  /** Whether each object file is synced to disk before it is linked into place. */
  fsync: boolean;
}

/**
 * The target of a checkout's loose objects, read from its objects folder and the configuration
 * files git reads (see {@link syncsLooseObjects}).
 * @param layout - the checkout's git directories and objects folder
 * @param ambient - the environment chant runs in (the runner's source)
 * @internal
 */
export function looseTarget(layout: { objectsDir: string; commonDir: string; gitDir: string }, ambient: Readonly<Record<string, string | undefined>> = process.env): LooseTarget {
  let mode = 0;
  try {
    mode = statSync(layout.objectsDir).mode;
  } catch {
    // Written as git's default then; a write that cannot be made says why.
  }
  return { objectsDir: layout.objectsDir, shared: (mode & 0o2000) !== 0 ? mode & 0o7777 : 0, fsync: syncsLooseObjects(layout, ambient) };
}

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
 * the object is whole or absent. In a group-shared objects folder (set-group-id, as git's
 * `core.sharedRepository` makes it) a fan-out folder it makes takes the folder's mode, and the
 * file the read bits the folder grants, as git's own writes there do. Nothing is written when
 * the object is there loose already.
 * @internal
 * @returns whether it was written (false: it was there loose already)
 * @throws the file system's error when the object cannot be written
 */
export function placeLooseObject(target: LooseTarget, oid: string, file: Buffer): boolean {
  const folder = join(target.objectsDir, oid.slice(0, 2));
  const path = join(folder, oid.slice(2));
  if (existsSync(path)) return false;
  try {
    mkdirSync(folder);
    if (target.shared !== 0) chmodSync(folder, target.shared);
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code !== 'EEXIST') throw error;
  }
  const temporary = join(folder, `tmp_obj_${randomBytes(6).toString('hex')}`);
  const fd = openSync(temporary, 'wx', 0o444);
  try {
    try {
      // The umask takes its share of 0444 first; sharing adds the group's (and others') read bits back.
      if (target.shared !== 0) fchmodSync(fd, (fstatSync(fd).mode & 0o777) | (target.shared & 0o444));
      for (let at = 0; at < file.length;) at += writeSync(fd, file, at);
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
