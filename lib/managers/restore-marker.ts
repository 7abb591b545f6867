// The mark a restore leaves in the worktree's git directory from its checkpoint until it ends:
// written before the first file of the working tree or the index is touched, removed once the
// restore ends in any way it can tell (done, or refused with the working tree put back or the
// checkpoint named). A mark with no live restore holding the worktree's lock is one a kill or
// a crash stopped partway: the working tree may be part snapshot, part what it was, and the
// checkpoint the mark names gives it back. The list and the save say so.
import { readdirSync, readFileSync, renameSync, rmSync, statSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { replaceFileSync, writeBesideSync } from './cache-file.js';
import { holderGone, LOCK_NAME } from './lock.js';

/** The mark's file name, in the worktree's git directory. */
export const RESTORE_MARKER = 'chant-restoring';

/**
 * The record of the last restore in the worktree that went past its checkpoint, as a mark names
 * it, kept once the restore ended: its checkpoint may be a snapshot of kind `save` (the tip,
 * when it held the working tree as it was), which nothing on the chain tells from any other, and
 * a prune keeps it so that restore can be undone.
 */
export const LAST_RESTORE = 'chant-last-restore';

/**
 * A restore stopped partway (a kill, a crash, a power loss) before it could say so.
 * @internal
 */
export interface RestoreMark {
  /** The branch whose chain the checkpoint is on. */
  branch: string;
  /** The snapshot it was restoring. */
  snapshot: string;
  /** Its pre-restore checkpoint, which holds the working tree and index as they were before it. */
  checkpoint: string;
  /**
   * In the last-restore record only, until the restore ends done: the checkpoints the record
   * named before it. A restore that fails or is cancelled may have put everything back, and the
   * one before it is then still the last to have changed anything; absent when none.
   */
  held?: string[];
}

/**
 * Leaves the mark before the restore touches the working tree; a mark that cannot be written
 * costs only the notice.
 * @internal
 */
export function markRestoring(gitDir: string, mark: RestoreMark, name: string = RESTORE_MARKER): void {
  try {
    writeMark(gitDir, mark, name);
  } catch {
    // The restore goes on: the mark is a notice, not a lock.
  }
}

/**
 * Writes a mark or a record whole or not at all: into a temporary file beside it, then renamed
 * over it, so a kill or a power loss never leaves one cut short (a record that cannot be read
 * names no checkpoint, and a prune would then drop it). Throws where it cannot be written.
 */
function writeMark(gitDir: string, mark: RestoreMark, name: string): void {
  replaceFileSync(join(gitDir, name), `${JSON.stringify(mark)}\n`);
}

/**
 * Removes the mark once the restore ended in a way it reports.
 * @internal
 */
export function unmarkRestoring(gitDir: string): void {
  try {
    rmSync(join(gitDir, RESTORE_MARKER), { force: true });
  } catch {
    // A later restore that ends removes it.
  }
}

/**
 * The restore a kill or a crash stopped partway in this worktree, or null: no mark, or a mark a
 * restore that still runs holds (the worktree's lock names a live holder). A mark that cannot be
 * read whole names no commit, and is no notice.
 * @internal
 */
export function interruptedRestore(gitDir: string): RestoreMark | null {
  const mark = readMark(gitDir);
  if (mark === null) return null;
  try {
    const lock = join(gitDir, LOCK_NAME);
    if (!holderGone(readFileSync(lock, 'utf8'), statSync(lock).mtimeMs)) return null;
  } catch {
    // No lock: no restore runs.
  }
  return mark;
}

/** The mark in `gitDir` (or the record `name`), whether or not a restore still holds it; null where there is none whole. */
function readMark(gitDir: string, name: string = RESTORE_MARKER): RestoreMark | null {
  const mark = readMarkFile(gitDir, name);
  return mark === 'unreadable' ? null : mark;
}

/** The mark or record `name` in `gitDir`: null where there is none, `unreadable` where one is there that does not read whole. */
function readMarkFile(gitDir: string, name: string): RestoreMark | null | 'unreadable' {
  let text: string;
  try {
    text = readFileSync(join(gitDir, name), 'utf8');
  } catch (error) {
    return (error as NodeJS.ErrnoException).code === 'ENOENT' ? null : 'unreadable';
  }
  try {
    const mark = JSON.parse(text) as Partial<RestoreMark>;
    const id = /^[0-9a-f]{40,64}$/;
    if (typeof mark.branch !== 'string' || typeof mark.snapshot !== 'string' || typeof mark.checkpoint !== 'string' || !id.test(mark.snapshot) || !id.test(mark.checkpoint)) return 'unreadable';
    const held = Array.isArray(mark.held) ? mark.held.filter((commit): commit is string => typeof commit === 'string' && id.test(commit)) : [];
    return { branch: mark.branch, snapshot: mark.snapshot, checkpoint: mark.checkpoint, ...(held.length > 0 ? { held } : {}) };
  } catch {
    return 'unreadable';
  }
}

/**
 * The marks and last-restore records of `gitDirs` that are there but do not read whole (cut
 * short by a power loss, written by hand, unreadable), as paths: each names a checkpoint a prune
 * must keep, which could be any snapshot, so a prune keeps everything while one is there.
 * @internal
 */
export function unreadableMarks(gitDirs: readonly string[]): string[] {
  return gitDirs.flatMap((gitDir) => [RESTORE_MARKER, LAST_RESTORE].filter((name) => readMarkFile(gitDir, name) === 'unreadable').map((name) => join(gitDir, name)));
}

/**
 * The checkpoints the marks and the last-restore records of `gitDirs` name: a prune keeps each,
 * the only snapshot that holds what a restore stopped partway, or the last restore, overwrote.
 * @internal
 */
export function markedCheckpoints(gitDirs: readonly string[]): Set<string> {
  return new Set(gitDirs.flatMap((gitDir) => [RESTORE_MARKER, LAST_RESTORE].map((name) => readMark(gitDir, name))).flatMap((mark) => (mark === null ? [] : [mark.checkpoint, ...(mark.held ?? [])])));
}

/**
 * The record of a restore going past its checkpoint as the last: the mark, with the checkpoints
 * the record named before still held (see {@link RestoreMark.held}) until {@link restoreEnded}
 * says it ended done.
 */
function recordOf(gitDir: string, mark: RestoreMark): RestoreMark {
  const before = readMark(gitDir, LAST_RESTORE);
  const held = before === null ? [] : [before.checkpoint, ...(before.held ?? [])].filter((commit, index, all) => commit !== mark.checkpoint && all.indexOf(commit) === index);
  return { ...mark, ...(held.length > 0 ? { held } : {}) };
}

/**
 * The record and the mark of a restore going past its checkpoint, written beside their places
 * and not yet synced: the restore syncs `temporaries` with its undo, in one batch, then puts
 * them in place with {@link placeRestoreMarks} (or removes them with {@link dropRestoreMarks}).
 * @internal
 */
export interface PendingMarks {
  gitDir: string;
  /** The record's temporary file, then the mark's where it could be written (the mark is a notice). */
  temporaries: string[];
  /** Whether the mark's temporary file was written. */
  notice: boolean;
}

/**
 * Writes the record of the last restore (see {@link recordOf}) and the mark (see
 * {@link markRestoring}) into temporary files beside them, unsynced; throws where the record
 * cannot be written (unlike the notice, the record must be written: without it a prune may drop
 * the checkpoint, and the restore must then change nothing), the mark's failure costing only
 * the notice.
 * @internal
 */
export function pendingRestoreMarks(gitDir: string, mark: RestoreMark): PendingMarks {
  // Windows syncs a file only through a handle that can write it, where the batch opens each to
  // read: there they are synced as they are written, as before the batch took them.
  const now = process.platform === 'win32';
  const record = writeBesideSync(join(gitDir, LAST_RESTORE), `${JSON.stringify(recordOf(gitDir, mark))}\n`, now);
  let notice: string | null = null;
  try {
    notice = writeBesideSync(join(gitDir, RESTORE_MARKER), `${JSON.stringify(mark)}\n`, now);
  } catch {
    // The restore goes on: the mark is a notice, not a lock.
  }
  return { gitDir, temporaries: notice === null ? [record] : [record, notice], notice: notice !== null };
}

/**
 * Renames the synced temporary files of {@link pendingRestoreMarks} over the record and the
 * mark; throws where the record cannot be put in place (the mark's failure costs only the
 * notice). The caller syncs the git directory after it, before the restore touches a file.
 * @internal
 */
export function placeRestoreMarks(pending: PendingMarks): void {
  const [record, notice] = pending.temporaries;
  renameSync(record as string, join(pending.gitDir, LAST_RESTORE));
  if (notice === undefined) return;
  try {
    renameSync(notice, join(pending.gitDir, RESTORE_MARKER));
  } catch {
    rmSync(notice, { force: true });
  }
}

/**
 * Removes what is left of the temporary files of {@link pendingRestoreMarks} (none once placed).
 * @internal
 */
export function dropRestoreMarks(pending: PendingMarks): void {
  for (const temporary of pending.temporaries) rmSync(temporary, { force: true });
}

/**
 * Records a restore that ended done as the last, alone: the checkpoints of the restores before
 * it go by the rules like any snapshot. The file is synced before its rename, the folder not: a
 * power loss may bring back the record as the restore left it, which keeps those checkpoints
 * too, never one cut short.
 * @internal
 */
export function restoreEnded(gitDir: string, mark: RestoreMark): void {
  const ended = { branch: mark.branch, snapshot: mark.snapshot, checkpoint: mark.checkpoint };
  try {
    replaceFileSync(join(gitDir, LAST_RESTORE), `${JSON.stringify(ended)}\n`, false);
  } catch {
    // The record keeps the checkpoints before it: a prune keeps more, never less.
  }
}

/**
 * The git directories of every worktree of a repository: the main one (`commonDir`) and each
 * linked one's (`<common>/worktrees/<name>`), where their marks and last-restore records are.
 * @internal
 */
export function worktreeGitDirs(commonDir: string): string[] {
  let linked: string[] = [];
  try {
    linked = readdirSync(join(commonDir, 'worktrees'), { withFileTypes: true }).filter((entry) => entry.isDirectory()).map((entry) => join(commonDir, 'worktrees', entry.name));
  } catch {
    // No linked worktree.
  }
  return [commonDir, ...linked].map((dir) => resolve(dir));
}

/**
 * Has each mark and last-restore record of `gitDirs` hold its checkpoints as a prune will write
 * them again (`renamed`: old id to new) besides as they are, before the prune moves any chain: a
 * prune stopped between its move and {@link renameMarkedCheckpoints} leaves the new ones kept.
 * Throws where one cannot be written: the prune must then move nothing, or the record would name
 * only commits no chain holds.
 * @internal
 */
export function holdRenamedCheckpoints(gitDirs: readonly string[], renamed: ReadonlyMap<string, string>): void {
  for (const gitDir of gitDirs) {
    for (const name of [RESTORE_MARKER, LAST_RESTORE]) {
      const mark = readMark(gitDir, name);
      if (mark === null) continue;
      const held = mark.held ?? [];
      const added = [mark.checkpoint, ...held].flatMap((commit) => { const next = renamed.get(commit); return next === undefined || next === commit || held.includes(next) ? [] : [next]; });
      if (added.length > 0) writeMark(gitDir, { ...mark, held: [...held, ...added] }, name);
    }
  }
}

/**
 * Has each mark and last-restore record of `gitDirs` name its checkpoint as a prune wrote it
 * again (`renamed`: old id to new).
 * @internal
 */
export function renameMarkedCheckpoints(gitDirs: readonly string[], renamed: ReadonlyMap<string, string>): void {
  for (const gitDir of gitDirs) {
    for (const name of [RESTORE_MARKER, LAST_RESTORE]) {
      const mark = readMark(gitDir, name);
      if (mark === null) continue;
      const checkpoint = renamed.get(mark.checkpoint) ?? mark.checkpoint;
      // What holdRenamedCheckpoints added is the new ids already; each id is held once, never the checkpoint's.
      const held = (mark.held ?? []).map((commit) => renamed.get(commit) ?? commit).filter((commit, index, all) => commit !== checkpoint && all.indexOf(commit) === index);
      if (checkpoint !== mark.checkpoint || held.join() !== (mark.held ?? []).join()) markRestoring(gitDir, { branch: mark.branch, snapshot: mark.snapshot, checkpoint, ...(held.length > 0 ? { held } : {}) }, name);
    }
  }
}
