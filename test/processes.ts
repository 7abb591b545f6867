// Watching the processes a test started: whether they are gone, and which pids a script noted.
import { existsSync, readFileSync } from 'node:fs';

/** Whether `/proc` can be read here (Linux): the tests that look at process groups need it. */
export const PROC = process.platform === 'linux' && existsSync('/proc/self/stat');

/** Whether a process is still there (a zombie waiting to be reaped counts as gone). */
export function alive(pid: number): boolean {
  if (PROC) {
    try {
      const stat = readFileSync(`/proc/${pid}/stat`, 'latin1');
      return stat.slice(stat.lastIndexOf(')') + 2, stat.lastIndexOf(')') + 3) !== 'Z';
    } catch {
      return false;
    }
  }
  try {
    process.kill(pid, 0);
    return true;
  } catch {
    return false;
  }
}

/** Waits up to `ms` for every pid to be gone; returns those still alive. */
export async function survivors(pids: readonly number[], ms = 5_000): Promise<number[]> {
  const until = Date.now() + ms;
  let left = pids.filter(alive);
  while (left.length > 0 && Date.now() < until) {
    await new Promise((resolve) => setTimeout(resolve, 50));
    left = left.filter(alive);
  }
  return left;
}

/** The pids a script wrote to `file`, one a line; none when it wrote nothing. */
export function pidsIn(file: string): number[] {
  return existsSync(file) ? readFileSync(file, 'utf8').split('\n').filter((line) => /^\d+$/.test(line)).map(Number) : [];
}
