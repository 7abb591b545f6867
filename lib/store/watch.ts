// `watchRefs`: tells a panel when any process moved a wip ref, without polling git. The file
// system says when something under the refs folder or the packed-refs file changed; only then,
// after a short quiet spell, git is asked for the wip tips once, and the listener hears of it
// only when they differ from what it last heard.
import { readdirSync, statSync, watch } from 'node:fs';
import type { Dirent, FSWatcher } from 'node:fs';
import { join } from 'node:path';
import type { Plumbing, RepositoryLayout } from '../git/plumbing.js';
import { settled } from '../events.js';
import { WIP_REF_PREFIX } from '../snapshot/format.js';

/**
 * What {@link WipStore.watchRefs} tells its listener: the wip tips as they are now.
 * @public
 */
export interface RefsChanged {
  /** Each wip ref and the commit it names, sorted by ref; a deleted ref is absent. */
  tips: Array<{ ref: string; commit: string }>;
}

/**
 * Options of {@link WipStore.watchRefs}.
 * @public
 */
export interface WatchRefsOptions {
  /** Milliseconds of quiet after a change before the tips are read; 100 when absent. */
  debounceMs?: number;
  /** Stops watching when aborted, as {@link RefWatcher.close} does. */
  signal?: AbortSignal;
}

/**
 * A running watch; {@link RefWatcher.close} ends it.
 * @public
 */
export interface RefWatcher {
  /** Stops watching; no listener call comes after it. */
  close(): void;
}

/** Watches the wip refs of the repository `layout` describes. */
export function watchWipRefs(plumbing: Plumbing, layout: RepositoryLayout, initial: ReadonlyArray<{ ref: string; commit: string }>, listener: (event: RefsChanged) => void, options: WatchRefsOptions): RefWatcher {
  const debounceMs = options.debounceMs ?? 100;
  let last = key(initial);
  let timer: NodeJS.Timeout | null = null;
  let closed = false;
  let reading: Promise<void> = Promise.resolve();
  // One watcher per folder, never fs.watch's recursive mode: on Linux, Node 20 builds that mode
  // from watchers of each file, which follow a ref file's inode, so once git renamed a new ref
  // file over it twice, nothing more was heard. A folder's own watcher hears every rename into
  // it. The folders are refs/, refs/chant/, refs/chant/wip/ and every folder under it (a branch
  // with a slash), found again before each read, so a folder made since is watched from then on.
  // Each is kept with the folder it watches (inode and birth time): a folder deleted and made
  // again between two reads (git pack-refs --prune, then a save) is another folder, which the
  // watcher of the one gone never hears, so it is watched anew.
  const watchers = new Map<string, { watcher: FSWatcher; identity: string }>();
  const refs = join(layout.commonDir, 'refs');
  const chant = join(refs, 'chant');
  const wip = join(layout.commonDir, ...WIP_REF_PREFIX.split('/').filter((part) => part !== ''));

  const read = async (): Promise<void> => {
    if (closed) return;
    follow();
    const tips = (await plumbing.readRefs([WIP_REF_PREFIX]).catch(() => null))?.map((record) => ({ ref: record.ref, commit: record.commit }))
      .sort((a, b) => (a.ref < b.ref ? -1 : a.ref > b.ref ? 1 : 0));
    if (closed || tips === undefined) return;
    const now = key(tips);
    if (now === last) return;
    last = now;
    try {
      settled(listener({ tips }));
    } catch {
      // The panel's own failure is its own; the watch goes on.
    }
  };
  const changed = (): void => {
    if (closed) return;
    if (timer !== null) clearTimeout(timer);
    timer = setTimeout(() => {
      timer = null;
      reading = reading.then(read);
    }, debounceMs);
  };
  const close = (): void => {
    closed = true;
    // A signal that outlives the watch (one for the whole app) would otherwise keep every watch closed on it.
    options.signal?.removeEventListener('abort', close);
    if (timer !== null) clearTimeout(timer);
    for (const { watcher } of watchers.values()) watcher.close();
    watchers.clear();
  };
  const add = (path: string, only?: (name: string) => boolean): void => {
    const identity = identityOf(path);
    const known = watchers.get(path);
    if (known !== undefined) {
      if (known.identity === identity) return;
      known.watcher.close();
      watchers.delete(path);
    }
    if (identity === null) return;
    try {
      const watcher = watch(path, { persistent: false }, (_event, name) => {
        if (only === undefined || (name !== null && only(String(name)))) changed();
      });
      watcher.on('error', () => {
        // The folder went (every ref under it deleted): watched again once it is back.
        watcher.close();
        if (watchers.get(path)?.watcher === watcher) watchers.delete(path);
      });
      watchers.set(path, { watcher, identity });
    } catch {
      // A folder that does not exist yet is watched once it does; the others go on watching.
    }
  };
  /** Watches every folder the wip refs live in now, and stops watching those gone. */
  const follow = (): void => {
    const folders = [refs, chant, ...foldersUnder(wip)];
    for (const [path, { watcher }] of watchers) {
      if (path !== layout.commonDir && !folders.includes(path)) {
        watcher.close();
        watchers.delete(path);
      }
    }
    add(refs, (name) => name === 'chant');
    add(chant, (name) => name === 'wip');
    for (const folder of folders.slice(2)) add(folder);
  };
  // Packed refs live in packed-refs, which git replaces by a rename in the common directory.
  add(layout.commonDir, (name) => name === 'packed-refs' || name === 'refs');
  follow();
  // The tips the caller read came before the watchers: a ref moved in between is heard of no
  // other way, so the tips are read once now (the listener hears only if they differ).
  changed();
  options.signal?.addEventListener('abort', close, { once: true });
  if (options.signal?.aborted === true) close();
  return { close };
}

/** Which folder is at `path` now (its inode and birth time), or null when there is none. */
function identityOf(path: string): string | null {
  try {
    const stats = statSync(path);
    return `${stats.dev}:${stats.ino}:${stats.birthtimeMs}`;
  } catch {
    return null;
  }
}

/** A folder and every folder under it, or none when it does not exist. */
function foldersUnder(root: string): string[] {
  const found: string[] = [];
  const visit = (folder: string): void => {
    let entries: Dirent[];
    try {
      entries = readdirSync(folder, { withFileTypes: true });
    } catch {
      return;
    }
    found.push(folder);
    for (const entry of entries) if (entry.isDirectory()) visit(join(folder, entry.name));
  };
  visit(root);
  return found;
}

function key(tips: ReadonlyArray<{ ref: string; commit: string }>): string {
  return tips.map((tip) => `${tip.ref} ${tip.commit}`).join('\n');
}
