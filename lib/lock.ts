import { open, readFile, rm, stat } from 'node:fs/promises';
import { join } from 'node:path';
import { WipError } from './errors.js';

/** How a lock waits. */
export interface LockOptions {
  /** Milliseconds to wait for another holder before refusing; 30,000 when absent. */
  waitMs?: number;
}

const POLL_MS = 25;

function alive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch (error) {
    return (error as NodeJS.ErrnoException).code === 'EPERM';
  }
}

/**
 * Runs `work` holding the worktree's chant lock (`<git-dir>/chant-wip.lock`), so that saves and
 * restores of one worktree never interleave. A lock whose holder process is gone is taken over;
 * a live holder is waited for, then refused with `wip-race`.
 */
export async function withWorktreeLock<T>(gitDir: string, work: () => Promise<T>, options: LockOptions = {}): Promise<T> {
  const path = join(gitDir, 'chant-wip.lock');
  const deadline = Date.now() + (options.waitMs ?? 30_000);
  for (;;) {
    try {
      const handle = await open(path, 'wx');
      await handle.writeFile(`${process.pid}\n`);
      await handle.close();
      break;
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code !== 'EEXIST') throw new WipError('git-failed', `cannot create ${path}: ${(error as Error).message}`, { cause: error });
    }
    const holder = Number.parseInt(await readFile(path, 'utf8').catch(() => ''), 10);
    const known = Number.isInteger(holder) && holder > 0;
    // A holder killed between creating the file and writing its pid leaves it empty.
    const orphan = !known && Date.now() - ((await stat(path).catch(() => null))?.mtimeMs ?? Date.now()) > 5_000;
    if ((known && !alive(holder)) || orphan) {
      await rm(path, { force: true });
      continue;
    }
    if (Date.now() > deadline) {
      throw new WipError('wip-race', `another chant wip save or restore of this worktree holds ${path}${known ? ` (process ${holder})` : ''}; try again when it ends`);
    }
    await new Promise((resolve) => setTimeout(resolve, POLL_MS));
  }
  try {
    return await work();
  } finally {
    await rm(path, { force: true });
  }
}
