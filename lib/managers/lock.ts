import { randomBytes } from 'node:crypto';
import { closeSync, openSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { readFile, rm, stat } from 'node:fs/promises';
import { join } from 'node:path';
import { WipError } from '../errors.js';

/** How a lock waits. */
export interface LockOptions {
  /** Milliseconds to wait for another holder before refusing; 30,000 when absent. */
  waitMs?: number;
}

/**
 * The lock's file name in a worktree's git directory.
 * @internal
 */
export const LOCK_NAME = 'chant-wip.lock';

const POLL_MS = 25;
// A holder writes its pid right after creating the file: an empty lock older than this was left
// by a process killed in between. The breaker is held for a few file operations only.
const ORPHAN_MS = 5_000;

/**
 * Whether a process runs (a zombie counts as running until its parent reaps it).
 * @param pid - the process id
 * @returns true unless the system says there is no such process
 * @internal
 */
export function processAlive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch (error) {
    return (error as NodeJS.ErrnoException).code === 'EPERM';
  }
}

/** What a lock file says about its holder, or null when there is no lock file. */
async function readHolder(path: string): Promise<{ content: string; pid: number | null; stale: boolean } | null> {
  const [content, stats] = await Promise.all([readFile(path, 'utf8').catch(() => null), stat(path).catch(() => null)]);
  if (content === null || stats === null) return null;
  const pid = Number.parseInt(content, 10);
  if (Number.isInteger(pid) && pid > 0) return { content, pid, stale: !processAlive(pid) };
  return { content, pid: null, stale: Date.now() - stats.mtimeMs > ORPHAN_MS };
}

/**
 * Creates `path` holding `content`, or answers false when it exists. Synchronous: it is three
 * system calls on every save and restore, each of which would otherwise wait its turn on the
 * thread pool.
 */
function createExclusive(path: string, content: string): boolean {
  let fd: number;
  try {
    fd = openSync(path, 'wx');
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === 'EEXIST') return false;
    throw new WipError('git-failed', `cannot create ${path}: ${(error as Error).message}`, { cause: error });
  }
  try {
    writeFileSync(fd, content);
    closeSync(fd);
    return true;
  } catch (error) {
    // A full disk takes the file but not its content: an empty lock left here would hold others up.
    try {
      closeSync(fd);
    } catch {
      // Closed already, or never to be: the file goes either way.
    }
    rmSync(path, { force: true });
    throw new WipError('git-failed', `cannot write ${path}: ${(error as Error).message}`, { cause: error });
  }
}

/**
 * Removes a stale lock, unless another waiter is doing so. Waiters that found the same dead
 * holder would otherwise each remove "the stale lock", the later ones removing the lock a
 * faster one had just taken; so only the holder of `<lock>.break` removes, and only after
 * reading the lock again.
 */
async function breakStale(path: string): Promise<void> {
  const breaker = `${path}.break`;
  if (!createExclusive(breaker, `${process.pid}\n`)) {
    const age = Date.now() - ((await stat(breaker).catch(() => null))?.mtimeMs ?? Date.now());
    if (age > ORPHAN_MS) await rm(breaker, { force: true });
    else await new Promise((resolve) => setTimeout(resolve, 2));
    return;
  }
  try {
    // Nobody else removes a lock while this breaker is held, and a new lock cannot appear while the stale one exists.
    if ((await readHolder(path))?.stale === true) await rm(path, { force: true });
  } finally {
    await rm(breaker, { force: true });
  }
}

/**
 * Runs `work` holding the worktree's chant lock (`<git-dir>/chant-wip.lock`), so that saves and
 * restores of one worktree never interleave. A lock whose holder process is gone (or that was
 * left empty long ago) is taken over; a live holder is waited for, then refused with `wip-race`.
 */
export async function withWorktreeLock<T>(gitDir: string, work: () => Promise<T>, options: LockOptions = {}): Promise<T> {
  const path = join(gitDir, LOCK_NAME);
  const deadline = Date.now() + (options.waitMs ?? 30_000);
  const token = `${process.pid}\n${randomBytes(8).toString('hex')}\n`;
  for (;;) {
    if (createExclusive(path, token)) break;
    const holder = await readHolder(path);
    if (holder === null) continue;
    if (holder.stale) {
      await breakStale(path);
      continue;
    }
    if (Date.now() > deadline) {
      throw new WipError('wip-race', `another chant wip save or restore of this worktree holds ${path}${holder.pid === null ? '' : ` (process ${holder.pid})`}; try again when it ends`);
    }
    await new Promise((resolve) => setTimeout(resolve, POLL_MS));
  }
  try {
    return await work();
  } finally {
    // Only our own lock: one that was taken over (it never should be while we live) stays its new holder's.
    if (readOwn(path) === token) rmSync(path, { force: true });
  }
}

/** The lock file's content as its holder reads it back on release, or null when it is gone. */
function readOwn(path: string): string | null {
  try {
    return readFileSync(path, 'utf8');
  } catch {
    return null;
  }
}

