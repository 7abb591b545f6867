import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { getEventListeners } from 'node:events';
import { describe, it } from 'node:test';
import { git, makeRepo, writeFiles } from './helpers.js';
import { WipStore } from '../lib/index.js';
import { SimpleGitRunner } from '../lib/git/runner.js';
import type { GitRunner } from '../lib/git/runner.js';
import type { RefsChanged } from '../lib/index.js';

/** Resolves with the next event the watch hears, or null after `ms`. */
function next(events: RefsChanged[], ms: number): Promise<RefsChanged | null> {
  const seen = events.length;
  return new Promise((resolve) => {
    const started = Date.now();
    const poll = setInterval(() => {
      if (events.length > seen) {
        clearInterval(poll);
        resolve(events[events.length - 1] as RefsChanged);
      } else if (Date.now() - started > ms) {
        clearInterval(poll);
        resolve(null);
      }
    }, 10);
  });
}

describe('events', () => {
  it('emits snapshot after each save and restore after each restore, and a listener that throws fails nothing', async () => {
    const dir = makeRepo();
    const store = new WipStore({ cwd: dir, policy: null });
    const heard: string[] = [];
    store.on('snapshot', () => {
      throw new Error('a broken panel');
    });
    const off = store.on('snapshot', ({ snapshot, created }) => heard.push(`snapshot ${snapshot.label} ${created}`));
    store.on('restore', ({ snapshot, paths }) => heard.push(`restore ${snapshot.label} ${paths.join(',')}`));
    writeFiles(dir, { 'a.txt': '1\n' });
    const one = await store.save({ label: 'one' });
    await store.save({ label: 'one' });
    writeFiles(dir, { 'a.txt': '2\n' });
    await store.restore({ snapshot: one.snapshot.commit });
    off();
    await store.save({ label: 'after' });
    assert.deepEqual(heard, ['snapshot one true', 'snapshot one false', 'restore one a.txt']);
  });

  it('tells a watcher when another process moves a wip ref, packed or loose, and only when a tip changed', async () => {
    const dir = makeRepo();
    const store = new WipStore({ cwd: dir, policy: null });
    const events: RefsChanged[] = [];
    const watch = await store.watchRefs((event) => events.push(event), { debounceMs: 20 });
    try {
      // Another process: the CLI's own git, not this store.
      writeFiles(dir, { 'a.txt': '1\n' });
      const other = new WipStore({ cwd: dir, policy: null });
      const saved = await other.save({ label: 'elsewhere' });
      const first = await next(events, 5000);
      assert.deepEqual(first?.tips, [{ ref: 'refs/chant/wip/main', commit: saved.snapshot.commit }]);

      git(dir, ['branch', '-q', 'unrelated']);
      assert.equal(await next(events, 400), null, 'a ref outside refs/chant/wip changes no tip');

      git(dir, ['pack-refs', '--all']);
      assert.equal(await next(events, 400), null, 'packing the refs moves no tip');

      const moved = spawnSync('git', ['update-ref', '-d', 'refs/chant/wip/main'], { cwd: dir });
      assert.equal(moved.status, 0);
      const deleted = await next(events, 5000);
      assert.deepEqual(deleted?.tips, [], 'a deleted packed ref is heard of too');
    } finally {
      watch.close();
    }
    const count = events.length;
    writeFiles(dir, { 'a.txt': '3\n' });
    await store.save({ label: 'closed' });
    assert.equal(await next(events, 300), null, 'nothing after close');
    assert.equal(events.length, count);
  });

  it('keeps hearing every save of another store however often the ref file is rewritten, after its folders are removed, and on a branch with a slash', async () => {
    const dir = makeRepo();
    const store = new WipStore({ cwd: dir, policy: null });
    const events: RefsChanged[] = [];
    const watch = await store.watchRefs((event) => events.push(event), { debounceMs: 20 });
    const other = new WipStore({ cwd: dir, policy: null });
    const saveAndHear = async (n: number): Promise<void> => {
      writeFiles(dir, { 'a.txt': `${n}\n` });
      const heard = next(events, 5000);
      const saved = await other.save({ label: `turn:${n}` });
      const event = await heard;
      assert.ok(event?.tips.some((tip) => tip.commit === saved.snapshot.commit), `save ${n} (${saved.ref}) was heard: ${JSON.stringify(events.at(-1))}`);
    };
    try {
      // Node 20's recursive watch on Linux followed the ref file's inode: from the third save on
      // (the second rename over it) the watch heard nothing.
      for (const n of [1, 2, 3, 4, 5]) await saveAndHear(n);
      // The only loose ref deleted: git removes refs/chant/wip/ and refs/chant/ with it.
      git(dir, ['update-ref', '-d', 'refs/chant/wip/main']);
      assert.deepEqual((await next(events, 5000))?.tips, []);
      for (const n of [6, 7, 8]) await saveAndHear(n);
      git(dir, ['checkout', '-q', '-b', 'feature/deep/x']);
      for (const n of [9, 10, 11]) await saveAndHear(n);
    } finally {
      watch.close();
    }
  });

  it('hears a save made while the watch is being set up, after the tips were read', async () => {
    const dir = makeRepo();
    const other = new WipStore({ cwd: dir, policy: null });
    await other.save({});
    // Another process saves just after watchRefs read the tips, before its watchers are set up.
    let between: (() => Promise<unknown>) | null = async () => {
      writeFiles(dir, { 'a.txt': 'between\n' });
      return other.save({});
    };
    const inner = new SimpleGitRunner(dir);
    const runner: GitRunner = {
      run: async (args, options) => {
        const out = await inner.run(args, options);
        if (between !== null && args.includes('for-each-ref')) {
          const save = between;
          between = null;
          await save();
        }
        return out;
      },
    };
    const store = new WipStore({ cwd: dir, policy: null, git: runner });
    const events: RefsChanged[] = [];
    const heard = next(events, 5000);
    const watch = await store.watchRefs((event) => events.push(event), { debounceMs: 20 });
    try {
      const tip = git(dir, ['rev-parse', 'refs/chant/wip/main']).trim();
      assert.deepEqual((await heard)?.tips.map((entry) => entry.commit), [tip], 'the save made meanwhile is heard');
    } finally {
      watch.close();
    }
  });

  it('keeps hearing saves after the wip refs folder is removed and made again within one quiet spell', async () => {
    const dir = makeRepo();
    const store = new WipStore({ cwd: dir, policy: null });
    const first = await store.save({});
    const events: RefsChanged[] = [];
    const watch = await store.watchRefs((event) => events.push(event), { debounceMs: 1500 });
    try {
      // git pack-refs --prune removes the loose ref and its folders; a save makes them again
      // before the watch has read the tips: the folder watched before is gone for good.
      git(dir, ['pack-refs', '--all', '--prune']);
      git(dir, ['update-ref', '-d', 'refs/chant/wip/main']);
      git(dir, ['update-ref', 'refs/chant/wip/main', first.snapshot.commit]);
      await new Promise((resolve) => setTimeout(resolve, 2500));
      for (const n of [1, 2]) {
        writeFiles(dir, { 'a.txt': `${n}\n` });
        const heard = next(events, 10000);
        const saved = await store.save({});
        assert.ok((await heard)?.tips.some((tip) => tip.commit === saved.snapshot.commit), `save ${n} was heard`);
      }
    } finally {
      watch.close();
    }
  });

  it('lets go of a signal that outlives it once closed, so that watches opened and closed on one app-wide signal are not kept', async () => {
    const dir = makeRepo();
    const store = new WipStore({ cwd: dir, policy: null });
    const app = new AbortController();
    for (let i = 0; i < 12; i++) (await store.watchRefs(() => undefined, { signal: app.signal })).close();
    assert.equal(getEventListeners(app.signal, 'abort').length, 0);
    const open = await store.watchRefs(() => undefined, { signal: app.signal });
    assert.equal(getEventListeners(app.signal, 'abort').length, 1);
    app.abort();
    assert.equal(getEventListeners(app.signal, 'abort').length, 0);
    open.close();
  });
});
