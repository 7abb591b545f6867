// `watchRefs`: tells a panel when any process moved a wip ref, without polling git. The file
// system says when something under the refs folder or the packed-refs file changed; only then,
// after a short quiet spell, git is asked for the wip tips once, and the listener hears of it
// only when they differ from what it last heard.
import { watch } from 'node:fs';
import type { FSWatcher } from 'node:fs';
import { join } from 'node:path';
import type { Plumbing, RepositoryLayout } from '../git/plumbing.js';
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
  const watchers: FSWatcher[] = [];

  const read = async (): Promise<void> => {
    const tips = (await plumbing.readRefs([WIP_REF_PREFIX]).catch(() => null))?.map((record) => ({ ref: record.ref, commit: record.commit }))
      .sort((a, b) => (a.ref < b.ref ? -1 : a.ref > b.ref ? 1 : 0));
    if (closed || tips === undefined) return;
    const now = key(tips);
    if (now === last) return;
    last = now;
    try {
      listener({ tips });
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
    if (timer !== null) clearTimeout(timer);
    for (const watcher of watchers) watcher.close();
  };
  // Loose refs live under refs/ (recursively: refs/chant/wip may not exist yet), packed ones in
  // packed-refs, which git replaces by a rename in the common directory.
  const add = (path: string, recursive: boolean, only?: (name: string) => boolean): void => {
    try {
      const watcher = watch(path, { recursive, persistent: false }, (_event, name) => {
        if (only === undefined || (name !== null && only(String(name)))) changed();
      });
      watcher.on('error', () => undefined);
      watchers.push(watcher);
    } catch {
      // A folder that cannot be watched leaves the other one watching.
    }
  };
  add(join(layout.commonDir, 'refs'), true, (name) => name === 'chant' || name.startsWith('chant/') || name.startsWith('chant\\'));
  add(layout.commonDir, false, (name) => name === 'packed-refs');
  options.signal?.addEventListener('abort', close, { once: true });
  if (options.signal?.aborted === true) close();
  return { close };
}

function key(tips: ReadonlyArray<{ ref: string; commit: string }>): string {
  return tips.map((tip) => `${tip.ref} ${tip.commit}`).join('\n');
}
