// How chant writes a loose object where git would write it itself (a save's trees and commit):
// with the permissions git's `core.sharedRepository` gives, and synced to disk when the
// configuration asks git to sync loose objects (`core.fsync`, `core.fsyncObjectFiles`).
import { statSync } from 'node:fs';
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
