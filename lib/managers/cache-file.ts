// The memos chant keeps in the git directory (folder trees, snapshot chains) are caches: each is
// replaced whole or not at all, through a temporary file beside it and a rename, and a cache
// that cannot be written costs the next run its time, never its answer.
import { randomBytes } from 'node:crypto';
import { rename, rm, writeFile } from 'node:fs/promises';

/**
 * Replaces `file` with `data` (text in `encoding`, or bytes), whole or not at all; a failure is
 * swallowed, and the temporary file removed.
 */
export async function replaceCacheFile(file: string, data: string | Uint8Array, encoding: BufferEncoding = 'utf8'): Promise<void> {
  const temporary = `${file}.${process.pid}-${randomBytes(4).toString('hex')}.tmp`;
  try {
    await writeFile(temporary, data, encoding);
    await rename(temporary, file);
  } catch {
    await rm(temporary, { force: true }).catch(() => undefined);
  }
}

/** The temporary files {@link replaceCacheFile} writes for a cache named `name`, its writer's pid captured. */
export function cacheTemporaries(name: string): RegExp {
  return new RegExp(`^${name.replace(/[.*+?^${}()|[\]\\]/g, '\\$&')}\\.(\\d+)-[0-9a-f]+\\.tmp$`);
}
