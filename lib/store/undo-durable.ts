// What a restore's undo needs is put on disk before the restore overwrites or removes a file:
// git's default `core.fsync` syncs neither loose objects nor refs, so a power loss seconds after
// a restore could leave the checkpoint's blob of an overwritten file empty while the file itself
// is already overwritten. The syncs are issued together (the thread pool batches them into few
// journal commits), and only of files and folders changed within the kernel's writeback interval:
// older ones are on disk already.
import { closeSync, constants, fsync, openSync, readFileSync, statSync } from 'node:fs';
import { dirname, join } from 'node:path';
import type { RepositoryLayout, TreeChange } from '../git/plumbing.js';
import { readLooseTreeFolders } from '../git/loose-objects.js';
import type { CheckedReads } from '../git/loose-objects.js';

/** Where the kernel does not say (not Linux): Linux's defaults, dirty pages written back after 30 s by a flusher that wakes every 5. */
const WRITTEN_BACK_MS = 35_000;

/**
 * How long after a change a file's bytes are taken as written back, from what Linux says in
 * /proc/sys/vm: its dirty pages expire after `dirty_expire_centisecs` and go at the flusher's
 * next wake-up, every `dirty_writeback_centisecs`. Nothing is taken as written back (Infinity)
 * where periodic writeback is off (an interval of 0) or laptop mode holds it back until the disk
 * spins; 35 s where the values cannot be read (another system).
 * @param read - a value of /proc/sys/vm by name, or null where it cannot be read
 * @internal
 */
export function writtenBackMs(read: (name: string) => string | null = readVm): number {
  const value = (name: string): number | null => {
    const text = read(name)?.trim();
    return text !== undefined && /^\d+$/.test(text) ? Number(text) : null;
  };
  const expire = value('dirty_expire_centisecs');
  const interval = value('dirty_writeback_centisecs');
  if (expire === null || interval === null) return WRITTEN_BACK_MS;
  if (interval === 0 || (value('laptop_mode') ?? 0) !== 0) return Infinity;
  return (expire + interval) * 10;
}

/** A value of /proc/sys/vm, or null where there is none to read. */
function readVm(name: string): string | null {
  try {
    return readFileSync(`/proc/sys/vm/${name}`, 'utf8');
  } catch {
    return null;
  }
}

/** Syncs in flight at once. */
const AT_ONCE = 8;

/**
 * Syncs one file or folder to disk; replaced in tests to see what is synced, and when.
 * @internal
 */
export let syncPath: (path: string) => Promise<void> = async (path) => {
  // Opened and closed here, synced on the thread pool: one trip there a path, all at once.
  const fd = openSync(path, constants.O_RDONLY);
  try {
    await new Promise<void>((resolve, reject) => {
      fsync(fd, (error) => (error === null ? resolve() : reject(error)));
    });
  } finally {
    closeSync(fd);
  }
};

/**
 * Replaces {@link syncPath} (tests only); returns the one it replaced.
 * @internal
 */
export function setSyncPath(sync: (path: string) => Promise<void>): (path: string) => Promise<void> {
  const before = syncPath;
  syncPath = sync;
  return before;
}

/**
 * Puts on disk what undoing a restore needs, before it writes a file: the loose blobs of the
 * files it overwrites or removes, the checkpoint's loose commit and the loose trees on the way to
 * each changed path, the checkpoint's ref file, the temporary files of the restore's record and
 * mark (renamed in place after, see {@link syncPlaced}), and the folders that name them. Packed
 * objects and refs are git's to sync (its default syncs packs). A file that is not there
 * (packed) is passed over.
 * @param checkpoint - the checkpoint's commit and tree
 * @param ref - the checkpoint's ref (`refs/chant/wip/<branch>`)
 * @param temporaries - files synced with the rest, each written now: the record's and the mark's temporary files
 * @throws the file system's error when a sync says the bytes did not reach the disk
 * @internal
 */
export async function syncUndo(layout: RepositoryLayout, checkpoint: { commit: string; tree: string }, ref: string, changes: readonly TreeChange[], reads?: CheckedReads, temporaries: readonly string[] = []): Promise<void> {
  const objects = new Set<string>([checkpoint.commit]);
  const zero = /^0+$/;
  const folders = new Set<string>();
  for (const change of changes) {
    if (!zero.test(change.oldOid) && change.oldMode !== '160000') objects.add(change.oldOid);
    for (let at = change.raw.lastIndexOf('/'); ; at = change.raw.lastIndexOf('/', at - 1)) {
      const folder = at < 0 ? '' : change.raw.slice(0, at);
      if (folders.has(folder)) break;
      folders.add(folder);
      if (at < 0) break;
    }
  }
  // A tree on the way that is not loose is packed, on disk with what it names (a gc packs them
  // together): then the root alone is looked for loose.
  const trees = readLooseTreeFolders(layout.objectsDir, checkpoint.tree, [...folders], layout.objectFormat, true, reads);
  if (trees === null) objects.add(checkpoint.tree);
  else for (const tree of trees) if (tree !== null) objects.add(tree.oid);
  const files = [...objects].map((oid) => join(layout.objectsDir, oid.slice(0, 2), oid.slice(2)));
  // The ref where git packed it (a ref packed long ago is passed over as written back).
  files.push(join(layout.commonDir, ref), join(layout.commonDir, 'packed-refs'), ...temporaries);
  const all = new Set(files);
  for (const file of files) all.add(dirname(file));
  for (let folder = dirname(join(layout.commonDir, ref)); folder.length > layout.commonDir.length; folder = dirname(folder)) all.add(dirname(folder));
  const since = Date.now() - writtenBackMs();
  // Out of descriptors with others in flight: synced again one at a time once those are closed.
  const later: string[] = [];
  const syncFresh = async (path: string): Promise<void> => {
    const stats = statSync(path, { throwIfNoEntry: false });
    if (stats === undefined || stats.mtimeMs < since && stats.ctimeMs < since) return;
    await syncPath(path).catch((error: unknown) => {
      const code = (error as NodeJS.ErrnoException).code;
      if (code === 'EMFILE' || code === 'ENFILE') later.push(path);
      else if (notWritten(error)) throw error;
    });
  };
  // A few at a time, enough to keep the thread pool busy (four threads by default) while holding
  // few descriptors open: a low open files limit must not refuse the restore.
  const queue = [...all].reverse();
  await Promise.all(Array.from({ length: Math.min(AT_ONCE, queue.length) }, async () => {
    for (let path = queue.pop(); path !== undefined; path = queue.pop()) await syncFresh(path);
  }));
  for (const path of later) {
    await syncPath(path).catch((error: unknown) => {
      if (notWritten(error)) throw error;
    });
  }
}

/**
 * Syncs `paths` (the temporary files of a restore's record and mark, when it has nothing else
 * to sync), all at once, or the git directory once they are renamed in place.
 * @throws the file system's error when a sync says the bytes did not reach the disk
 * @internal
 */
export async function syncPlaced(paths: readonly string[]): Promise<void> {
  await Promise.all(paths.map((path) => syncPath(path).catch((error: unknown) => {
    if (notWritten(error)) throw error;
  })));
}

/**
 * Whether a failed sync says the bytes did not reach the disk (the restore then refuses); a file
 * gone meanwhile, or a system that cannot open or sync a folder (Windows, some network and FUSE
 * file systems answer EISDIR, EINVAL or EPERM), is passed over.
 */
function notWritten(error: unknown): boolean {
  const code = (error as NodeJS.ErrnoException).code;
  return code === 'EIO' || code === 'ENOSPC' || code === 'EDQUOT' || code === 'EMFILE' || code === 'ENFILE' || code === undefined;
}
