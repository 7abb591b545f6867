// The memos chant keeps in the git directory (folder trees, snapshot chains) are caches: each is
// replaced whole or not at all, through a temporary file beside it and a rename, and a cache
// that cannot be written costs the next run its time, never its answer.
import { randomBytes } from 'node:crypto';
import { closeSync, constants, fsyncSync, openSync, renameSync, rmSync, writeFileSync } from 'node:fs';
import { rename, rm, writeFile } from 'node:fs/promises';
import { dirname } from 'node:path';

/** A temporary file's name beside `file`, its writer's pid and a random part in it. */
function temporaryBeside(file: string): string {
  return `${file}.${process.pid}-${randomBytes(4).toString('hex')}.tmp`;
}

/**
 * Replaces `file` with `data` (text in `encoding`, or bytes), whole or not at all; a failure is
 * swallowed, and the temporary file removed.
 */
export async function replaceCacheFile(file: string, data: string | Uint8Array, encoding: BufferEncoding = 'utf8'): Promise<void> {
  const temporary = temporaryBeside(file);
  try {
    await writeFile(temporary, data, encoding);
    await rename(temporary, file);
  } catch {
    await rm(temporary, { force: true }).catch(() => undefined);
  }
}

/**
 * Replaces `file` with `text` whole or not at all, as {@link replaceCacheFile} does, but at once,
 * on the disk, and throwing where it cannot: for a record whose loss matters, so a kill or a
 * power loss never leaves one cut short. The temporary file is synced before the rename (a
 * rename can reach the disk before the bytes it names, leaving an empty file in the record's
 * place) and the folder after it (else the record may come back as it was before), unless
 * `folder` is false: for a record whose one before is as safe to find again (the rename then
 * reaches the disk with the folder's next sync). The temporary file is removed on failure.
 */
export function replaceFileSync(file: string, text: string, folder = true): void {
  const temporary = writeBesideSync(file, text, true);
  try {
    renameSync(temporary, file);
  } catch (error) {
    rmSync(temporary, { force: true });
    throw error;
  }
  if (folder) syncFolder(dirname(file));
}

/**
 * Writes `text` into a new temporary file beside `file` (synced to the disk when `sync`), and
 * returns its path, for the caller to rename over `file` once it is synced; throws where it
 * cannot be written, with nothing left behind.
 */
export function writeBesideSync(file: string, text: string, sync: boolean): string {
  const temporary = temporaryBeside(file);
  try {
    const fd = openSync(temporary, 'wx', 0o666);
    try {
      writeFileSync(fd, text);
      if (sync) fsyncSync(fd);
    } finally {
      closeSync(fd);
    }
  } catch (error) {
    rmSync(temporary, { force: true });
    throw error;
  }
  return temporary;
}

/**
 * Syncs a folder's entries to the disk, where the system can: Windows opens no folder, and some
 * file systems refuse to sync one (EINVAL); the record is in place all the same.
 */
function syncFolder(folder: string): void {
  if (process.platform === 'win32') return;
  let fd: number;
  try {
    fd = openSync(folder, constants.O_RDONLY | constants.O_DIRECTORY);
  } catch {
    return;
  }
  try {
    fsyncSync(fd);
  } catch (error) {
    const code = (error as NodeJS.ErrnoException).code;
    if (code !== 'EINVAL' && code !== 'ENOTSUP' && code !== 'EBADF' && code !== 'EPERM') throw error;
  } finally {
    closeSync(fd);
  }
}

/** The temporary files {@link replaceCacheFile} and {@link replaceFileSync} writes for a cache named `name`, its writer's pid captured. */
export function cacheTemporaries(name: string): RegExp {
  return new RegExp(`^${name.replace(/[.*+?^${}()|[\]\\]/g, '\\$&')}\\.(\\d+)-[0-9a-f]+\\.tmp$`);
}
