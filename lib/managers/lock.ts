import { randomBytes } from 'node:crypto';
import { closeSync, existsSync, mkdirSync, openSync, readdirSync, readFileSync, readlinkSync, rmSync, statSync, utimesSync, writeFileSync } from 'node:fs';
import { readFile, rm, stat } from 'node:fs/promises';
import { hostname } from 'node:os';
import { dirname, join, resolve } from 'node:path';
import { WipError } from '../errors.js';

/** How a lock waits. */
export interface LockOptions {
  /** Milliseconds to wait for another holder before refusing; 30,000 when absent. */
  waitMs?: number;
  /**
   * Called before each wait for another holder: it throws to end the wait (the caller's signal
   * was aborted, or its own deadline passed), so that a wait never outlives the call it is for.
   */
  stopWaiting?: () => void;
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

/**
 * Who this process is, beyond its pid: the boot it runs in, its PID namespace and its start
 * time (in clock ticks since boot), each null where the system does not say (no /proc). Read
 * once; a pid alone names another process after a crash, a reboot or across namespaces.
 */
interface Identity {
  boot: string | null;
  pidns: string | null;
  start: string | null;
}

let self: Identity | undefined;

function ownIdentity(): Identity {
  self ??= { boot: readText('/proc/sys/kernel/random/boot_id'), pidns: readLink('/proc/self/ns/pid'), start: startTime('self') };
  return self;
}

function readText(path: string): string | null {
  try {
    return readFileSync(path, 'utf8').trim() || null;
  } catch {
    return null;
  }
}

function readLink(path: string): string | null {
  try {
    return readlinkSync(path);
  } catch {
    return null;
  }
}

/** Field 22 of `/proc/<pid>/stat`: when the process started, in clock ticks since boot. */
function startTime(pid: number | 'self'): string | null {
  const stat = readText(`/proc/${pid}/stat`);
  if (stat === null) return null;
  // The command name (field 2) is in parentheses and may hold spaces or parentheses itself.
  return stat.slice(stat.lastIndexOf(')') + 2).split(' ')[19] ?? null;
}

/** When the system booted, in seconds since the epoch (`btime` of /proc/stat), or null. */
function bootTime(): number | null {
  const line = /^btime (\d+)$/m.exec(readText('/proc/stat') ?? '');
  return line === null ? null : Number(line[1]);
}

/** Ticks a second in /proc's times: USER_HZ, 100 on every Linux architecture. */
const TICKS = 100;

/**
 * The lock file's content: the pid first, as older versions read it, a random token the holder
 * knows its own lock by, then what identifies the holder beyond the pid.
 */
function lockContent(token: string): string {
  const { boot, pidns, start } = ownIdentity();
  return `${process.pid}\n${token}\n${boot === null ? '' : `boot ${boot}\n`}${pidns === null ? '' : `pidns ${pidns}\n`}${start === null ? '' : `start ${start}\n`}`;
}

/**
 * The content of each lock and marker this process could not remove (its file system was
 * read-only then). Only those are known to be held no longer: a lock naming this process may be
 * held by another copy of this module in it (a host that both imports and requires the package,
 * a worker thread), which keeps its own set.
 */
const leftHere = new Set<string>();

/** How often a holder touches its lock, so that a waiter in another PID namespace can tell it lives. */
const HEARTBEAT_MS = 2_000;
/** A lock from another PID namespace untouched this long has lost its holder. */
const HEARTBEAT_STALE_MS = 15_000;

/**
 * Whether the holder a lock file names is gone. The pid alone cannot say: after a crash it may
 * belong to an unrelated process, after a reboot to anything, and in another PID namespace it
 * names another process altogether. So a lock from another boot is stale; one from another PID
 * namespace is judged by its heartbeat (the holder touches it every few seconds); and one from
 * this namespace is stale when its pid runs no process, or a process started at another time
 * than the holder's (for a lock that does not record it, started after the lock was written).
 * @internal
 */
export function holderGone(content: string, mtimeMs: number, now = Date.now()): boolean {
  const lines = content.split('\n');
  const pid = Number.parseInt(lines[0] ?? '', 10);
  if (!Number.isInteger(pid) || pid <= 0) return now - mtimeMs > ORPHAN_MS;
  const fields = new Map(lines.slice(2).map((line) => [line.slice(0, line.indexOf(' ')), line.slice(line.indexOf(' ') + 1)]));
  const own = ownIdentity();
  const boot = fields.get('boot');
  if (boot !== undefined && own.boot !== null && boot !== own.boot) return true;
  const pidns = fields.get('pidns');
  if (pidns !== undefined && own.pidns !== null && pidns !== own.pidns) return now - mtimeMs > HEARTBEAT_STALE_MS;
  if (!processAlive(pid)) return true;
  // This very process, which knows the locks it could not remove (its file system was read-only
  // then): one of them would otherwise hold up its every later call.
  if (pid === process.pid && own.start !== null && fields.get('start') === own.start && leftHere.has(content)) return true;
  const running = startTime(pid);
  if (running === null) return false;
  const start = fields.get('start');
  if (start !== undefined) return start !== running;
  // A lock of an older version: its holder started before it wrote the lock.
  const booted = bootTime();
  return booted !== null && (booted + Number(running) / TICKS) * 1000 > mtimeMs + 1_000;
}

/**
 * What a lock file says about its holder, or null when there is no lock file. A lock whose
 * holder is gone still holds while a `git gc` runs in the repository (`gc`, its pid): a prune
 * with `gc` holds the lock of every worktree while its `git gc --prune=now` runs, so that no
 * save writes objects that gc would delete before a ref names them, and a prune killed meanwhile
 * leaves that gc running, in a session of its own, under locks that read as stale.
 */
async function readHolder(path: string): Promise<{ content: string; pid: number | null; stale: boolean; gc: number | null } | null> {
  const [content, stats] = await Promise.all([readFile(path, 'utf8').catch(() => null), stat(path).catch(() => null)]);
  if (content === null || stats === null) return null;
  const pid = Number.parseInt(content, 10);
  const gone = holderGone(content, stats.mtimeMs);
  const gc = gone ? gcRunning(dirname(path)) : null;
  return { content, pid: Number.isInteger(pid) && pid > 0 ? pid : null, stale: gone && gc === null, gc };
}

/**
 * The pid of a `git gc` running in the repository of the git directory `gitDir`, or null: its
 * `gc.pid` in the common directory, as git writes it (`<pid> <host>`, removed when gc ends),
 * naming this host and a live process that started before the file was written (a pid reused
 * since a gc was killed names a later process). git itself trusts the file for 12 hours at most.
 * @internal
 */
export function gcRunning(gitDir: string, now = Date.now()): number | null {
  const common = readText(join(gitDir, 'commondir'));
  const file = join(common === null ? gitDir : resolve(gitDir, common), 'gc.pid');
  let text: string;
  let mtimeMs: number;
  try {
    text = readFileSync(file, 'utf8');
    mtimeMs = statSync(file).mtimeMs;
  } catch {
    return null;
  }
  const found = /^(\d+) (\S+)/.exec(text);
  if (found === null || found[2] !== hostname() || now - mtimeMs > GC_TRUSTED_MS) return null;
  const pid = Number(found[1]);
  if (!processAlive(pid)) return null;
  const running = startTime(pid);
  const booted = bootTime();
  if (running !== null && booted !== null && (booted + Number(running) / TICKS) * 1000 > mtimeMs + 1_000) return null;
  return pid;
}

/** How long git trusts a `gc.pid` to name a running gc. */
const GC_TRUSTED_MS = 12 * 60 * 60 * 1000;

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
 * restores of one worktree never interleave. A lock whose holder is gone (see {@link holderGone};
 * or that was left empty long ago) is taken over; a live holder is waited for, then refused with
 * `wip-race`.
 */
export async function withWorktreeLock<T>(gitDir: string, work: () => Promise<T>, options: LockOptions = {}): Promise<T> {
  return withLockFile(join(gitDir, LOCK_NAME), 'another chant wip save or restore of this worktree', work, options);
}

/**
 * Runs `work` holding the chant lock of each of `gitDirs` (every worktree's git directory),
 * taken in the order of their paths by every caller alike, so two never hold up each other; each
 * is waited for as {@link withWorktreeLock} waits. A worktree gone meanwhile holds nothing. A
 * lock still held after the wait, or one that cannot be taken, rejects with what `notTaken`
 * makes of its refusal; what `work` throws is thrown as it is.
 * @internal
 */
export async function withEveryWorktreeLock<T>(gitDirs: readonly string[], work: () => Promise<T>, notTaken: (refusal: unknown) => unknown, options: LockOptions = {}): Promise<T> {
  const dirs = [...new Set(gitDirs)].sort();
  const under = async (index: number): Promise<T> => {
    if (index === dirs.length) return work();
    const dir = dirs[index] as string;
    let taken = false;
    try {
      return await withWorktreeLock(dir, () => {
        taken = true;
        return under(index + 1);
      }, options);
    } catch (error) {
      // What failed under this lock (a lock further on, the work) is not this lock's.
      if (taken) throw error;
      // A linked worktree removed while the locks were taken: nothing of it can be saved.
      if (!existsSync(dir)) return under(index + 1);
      if (!(error instanceof WipError)) throw error;
      throw notTaken(error);
    }
  };
  return under(0);
}

/**
 * The file, in the common git directory, of the lock fetches of the repository take.
 * @internal
 */
export const FETCH_LOCK_NAME = 'chant-fetch.lock';

/**
 * Runs `fetch` holding the repository's fetch lock (`<common-dir>/chant-fetch.lock`), so that
 * fetches of one repository, in any process, run one after the other: they share the staging
 * refs, and one planned from a namespace another had just emptied told of no ref the remote
 * holds and deleted every replica. Taken, waited for and refused as {@link withWorktreeLock}.
 * @internal
 */
export async function withFetchLock<T>(commonDir: string, fetch: () => Promise<T>, options: LockOptions = {}): Promise<T> {
  return withLockFile(join(commonDir, FETCH_LOCK_NAME), 'another chant wip fetch of this repository', fetch, options);
}

/** Runs `work` holding the lock file `path`; `holders` names who else takes it, for the refusal. */
async function withLockFile<T>(path: string, holders: string, work: () => Promise<T>, options: LockOptions): Promise<T> {
  const deadline = Date.now() + (options.waitMs ?? 30_000);
  const token = lockContent(randomBytes(8).toString('hex'));
  for (;;) {
    if (createExclusive(path, token)) break;
    const holder = await readHolder(path);
    if (holder === null) {
      // Gone since: free to take. There but unreadable (another user's): held, and waited for.
      if (!existsSync(path)) continue;
      options.stopWaiting?.();
      if (Date.now() > deadline) throw new WipError('wip-race', `${path} is held by a chant process whose lock cannot be read here; try again when it ends`);
      await new Promise((resolve) => setTimeout(resolve, POLL_MS));
      continue;
    }
    if (holder.stale) {
      await breakStale(path);
      continue;
    }
    options.stopWaiting?.();
    if (Date.now() > deadline) {
      if (holder.gc !== null) throw new WipError('wip-race', `git gc (process ${holder.gc}) is running in this repository, and ${path} was left by a chant process that ended while it ran (a wip prune with gc, killed); nothing is saved or restored until that gc ends, since it may delete objects a snapshot is being written with: try again when it ends`);
      throw new WipError('wip-race', `${holders} holds ${path}${holder.pid === null ? '' : ` (process ${holder.pid})`}; try again when it ends`);
    }
    await new Promise((resolve) => setTimeout(resolve, POLL_MS));
  }
  // The heartbeat: a waiter in another PID namespace cannot ask whether our pid lives.
  const stopHeartbeat = keepTouched(path);
  try {
    return await work();
  } finally {
    stopHeartbeat();
    // Only our own lock: one that was taken over (it never should be while we live) stays its new holder's.
    // One that cannot be removed (its file system turned read-only) must not stand in for what the work did or
    // why it failed: it is left, as a killed holder leaves one, to be taken over.
    if (readOwn(path) === token) {
      try {
        rmSync(path, { force: true });
      } catch {
        // Left behind, and known here to be held no longer; another process waits for this live
        // one, so it goes as soon as its file system lets it.
        leftHere.add(token);
        removeWhenAble(path, token);
      }
    }
  }
}

/** Tries again every few seconds to remove a lock this process left behind, while it is still that lock. */
function removeWhenAble(path: string, token: string): void {
  const retry = setInterval(() => {
    try {
      if (readOwn(path) === token) rmSync(path, { force: true });
      clearInterval(retry);
    } catch {
      // Still refused: tried again.
    }
  }, HEARTBEAT_MS);
  retry.unref();
}

/** The lock file's content as its holder reads it back on release, or null when it is gone. */
function readOwn(path: string): string | null {
  try {
    return readFileSync(path, 'utf8');
  } catch {
    return null;
  }
}

/**
 * The folder of the common git directory where each running fetch leaves a marker while git
 * brings objects no ref names yet.
 * @internal
 */
export const FETCH_MARKERS = 'chant-fetching';

/**
 * The marker a prune's `git gc --prune=now` leaves in the common git directory from before it
 * looks for fetches until it ends.
 * @internal
 */
export const COLLECT_MARKER = 'chant-collecting';

/** Touches `path` every few seconds, for a waiter in another PID namespace; the returned function stops it. */
function keepTouched(path: string): () => void {
  const heartbeat = setInterval(() => {
    try {
      const now = new Date();
      utimesSync(path, now, now);
    } catch {
      // Gone or unwritable: its holder finds out on release.
    }
  }, HEARTBEAT_MS);
  heartbeat.unref();
  return () => clearInterval(heartbeat);
}

/**
 * Runs `fetch` (a git fetch, whose objects no ref names until it ends) with a marker in the
 * common git directory `commonDir`, after waiting for a prune's `git gc --prune=now` running
 * there: that gc deletes every object no ref names, and took a fetch's pack from under it (the
 * fetch failed, its staging refs naming objects that were gone). The marker is written before
 * the gc's is looked for, and a prune writes its own before it looks for fetches (see
 * {@link collectUnlessFetching}), so at least one of the two sees the other: the gc is then left
 * undone, or the fetch waits for it. A marker that cannot be written leaves the fetch as it was.
 * @throws {@link WipError} `wip-race` when the gc still runs after the wait; what `stopWaiting` throws
 * @internal
 */
export async function whileFetching<T>(commonDir: string, fetch: () => Promise<T>, options: LockOptions = {}): Promise<T> {
  const folder = join(commonDir, FETCH_MARKERS);
  const path = join(folder, `${process.pid}-${randomBytes(6).toString('hex')}`);
  try {
    mkdirSync(folder, { recursive: true });
    writeFileSync(path, lockContent(''));
  } catch {
    rmSync(path, { force: true });
    return fetch();
  }
  const stop = keepTouched(path);
  try {
    const deadline = Date.now() + (options.waitMs ?? 30_000);
    for (;;) {
      const marker = join(commonDir, COLLECT_MARKER);
      const collecting = await readHolder(marker);
      // There but unreadable (another user's): a gc running, as a lock that cannot be read is held.
      if (collecting === null ? !existsSync(marker) : collecting.stale) break;
      options.stopWaiting?.();
      if (Date.now() > deadline) {
        throw new WipError('wip-race', `a wip prune's git gc --prune=now${collecting?.pid == null ? ` (${marker})` : ` (chant process ${collecting.pid})`} is running in this repository, and would delete what a fetch brings before a ref names it; nothing was fetched: try again when it ends`);
      }
      await new Promise((resolve) => setTimeout(resolve, POLL_MS));
    }
    return await fetch();
  } finally {
    stop();
    rmSync(path, { force: true });
  }
}

/**
 * Runs `gc` (a `git gc --prune=now`, its caller holding every worktree's chant lock) unless a
 * fetch is running in the common git directory `commonDir` (see {@link whileFetching}): its
 * marker is written first, then the fetches' are looked at. False, leaving the gc undone, when
 * a fetch runs or the marker cannot be written. Markers whose fetch is gone are removed; one
 * that cannot be read (another user's) counts as a live fetch's.
 * @internal
 */
export async function collectUnlessFetching(commonDir: string, gc: () => Promise<void>): Promise<boolean> {
  const path = join(commonDir, COLLECT_MARKER);
  const token = lockContent(randomBytes(8).toString('hex'));
  // Every worktree's lock is held, so no other prune collects: a marker there was left by one
  // killed, and stands only while its gc runs on.
  const created = (): boolean => {
    try {
      return createExclusive(path, token);
    } catch {
      // Without its marker a gc could take a fetch's objects from under it: left undone.
      return false;
    }
  };
  if (!created()) {
    const holder = await readHolder(path);
    if (holder === null || !holder.stale) return false;
    rmSync(path, { force: true });
    if (!created()) return false;
  }
  const stop = keepTouched(path);
  try {
    if (fetchRunning(commonDir)) return false;
    await gc();
    return true;
  } finally {
    stop();
    if (readOwn(path) === token) {
      try {
        rmSync(path, { force: true });
      } catch (error) {
        leftHere.add(token);
        throw error;
      }
    }
  }
}

/** Whether a fetch's marker names a live fetch; the markers of fetches gone are removed. */
function fetchRunning(commonDir: string): boolean {
  const folder = join(commonDir, FETCH_MARKERS);
  let names: string[];
  try {
    names = readdirSync(folder);
  } catch (error) {
    // A folder that cannot be read (another user's) may hold a live fetch's marker.
    return (error as NodeJS.ErrnoException).code !== 'ENOENT';
  }
  let running = false;
  for (const name of names) {
    const path = join(folder, name);
    try {
      if (!holderGone(readFileSync(path, 'utf8'), statSync(path).mtimeMs)) running = true;
      else rmSync(path, { force: true });
    } catch {
      // Gone meanwhile: its fetch ended. There but unreadable (another user's): taken as live.
      if (existsSync(path)) running = true;
    }
  }
  return running;
}
