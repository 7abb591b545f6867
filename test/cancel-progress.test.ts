import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, it } from 'node:test';
import { git, makeRepo, refsOf, stateOf, treeOf, writeFiles } from './helpers.js';
import { bareRemote } from './remotes.js';
import { isWipError, Policy, Replicator, SimpleGitRunner, WipStore } from '../lib/index.js';
import type { GitRunner, Progress, RefsChanged } from '../lib/index.js';

/** A runner that aborts `controller` when git is asked for `when`, before or after running it. */
function abortingOn(dir: string, controller: AbortController, when: (args: readonly string[]) => boolean, after = false): GitRunner {
  const inner = new SimpleGitRunner(dir);
  return {
    run: async (args, options) => {
      if (!after && when(args)) controller.abort(new Error('the user pressed cancel'));
      const result = await inner.run(args, options);
      if (after && when(args)) controller.abort(new Error('the user pressed cancel'));
      return result;
    },
  };
}

describe('cancellation', () => {
  it('a save cancelled before it starts, or while git stages, is wip-cancelled and moves no ref', async () => {
    const dir = makeRepo();
    writeFiles(dir, { 'a.txt': 'work\n' });
    const before = refsOf(dir);
    const early = new AbortController();
    early.abort();
    await assert.rejects(new WipStore({ cwd: dir, policy: null }).save({ signal: early.signal }), (error) => isWipError(error, 'wip-cancelled'));
    for (const step of ['add', 'write-tree']) {
      const controller = new AbortController();
      const store = new WipStore({ cwd: dir, policy: null, staging: 'index', git: abortingOn(dir, controller, (args) => args[0] === step) });
      await assert.rejects(store.save({ label: step, signal: controller.signal }), (error) => isWipError(error, 'wip-cancelled'), step);
      assert.equal(refsOf(dir), before, `cancelled at ${step}: no ref moved`);
    }
    // Once the snapshot is being recorded the save finishes: a ref half moved is worse than a late cancel.
    const late = new AbortController();
    const store = new WipStore({ cwd: dir, policy: null, staging: 'index', git: abortingOn(dir, late, (args) => args[0] === 'commit-tree') });
    const saved = await store.save({ label: 'late', signal: late.signal });
    assert.equal(git(dir, ['rev-parse', 'refs/chant/wip/main']).trim(), saved.snapshot.commit);
  });

  it('a restore cancelled after its checkpoint puts the working tree back as the checkpoint holds it, index untouched', async () => {
    const dir = makeRepo({ 'a.txt': '1\n', 'b.txt': 'b\n' });
    const plain = new WipStore({ cwd: dir, policy: null });
    writeFiles(dir, { 'a.txt': 'turn 1\n' });
    const turn1 = (await plain.save({ label: 'turn:1' })).snapshot;
    writeFiles(dir, { 'a.txt': 'turn 2\n', 'c.txt': 'new\n', 'b.txt': null });
    git(dir, ['add', 'c.txt']);
    const state = stateOf(dir);
    const controller = new AbortController();
    // Cancelled the moment the checkpoint is on the ref (its ref is moved without a process).
    const onProgress = (progress: Progress) => {
      if (progress.phase === 'checkpoint' && progress.done === 1) controller.abort(new Error('the user pressed cancel'));
    };
    await assert.rejects(plain.restore({ snapshot: turn1.commit, signal: controller.signal, onProgress }), (error) => isWipError(error, 'wip-cancelled'));
    const after = stateOf(dir);
    assert.deepEqual(after.tree, state.tree, 'the working tree is as it was');
    assert.equal(after.index, state.index, 'the index is as it was');
    assert.equal(after.status, state.status);
    const tip = git(dir, ['log', '-1', '--format=%(trailers:key=Chant-Wip-Kind,valueonly)', 'refs/chant/wip/main']).trim();
    assert.equal(tip, 'pre-restore', 'the checkpoint stays on the ref');

    const early = new AbortController();
    early.abort();
    const refs = refsOf(dir);
    await assert.rejects(plain.restore({ snapshot: turn1.commit, signal: early.signal }), (error) => isWipError(error, 'wip-cancelled'));
    assert.equal(refsOf(dir), refs);
    assert.deepEqual(treeOf(dir), state.tree);
  });

  it('a list, a push and a fetch cancelled are wip-cancelled, not git-failed', async () => {
    const dir = makeRepo();
    const remote = bareRemote();
    git(dir, ['remote', 'add', 'origin', remote]);
    const controller = new AbortController();
    controller.abort();
    const policy = Policy.from({ remote: 'origin', on: [] }, { box: 'app' });
    await assert.rejects(new WipStore({ cwd: dir, policy }).list({ signal: controller.signal }), (error) => isWipError(error, 'wip-cancelled'));
    const replicator = new Replicator({ cwd: dir, policy });
    await assert.rejects(replicator.push({ signal: controller.signal }), (error) => isWipError(error, 'wip-cancelled'));
    await assert.rejects(replicator.fetch({ signal: controller.signal }), (error) => isWipError(error, 'wip-cancelled'));
    const midway = new AbortController();
    const aborting = new Replicator({ cwd: dir, policy, git: abortingOn(dir, midway, (args) => args.includes('push')) });
    await new WipStore({ cwd: dir, policy: null }).save({ label: 'to push' });
    await assert.rejects(aborting.push({ signal: midway.signal }), (error) => isWipError(error, 'wip-cancelled'));
  });
});

describe('progress and events', () => {
  it('reports a save and a restore phase by phase, done never past total', async () => {
    const dir = makeRepo();
    const store = new WipStore({ cwd: dir, policy: null });
    const seen: Progress[] = [];
    writeFiles(dir, { 'a.txt': '1\n', 'b.txt': '2\n' });
    const saved = await store.save({ label: 'one', onProgress: (progress) => seen.push(progress) });
    assert.deepEqual(seen.map((p) => `${p.phase} ${p.done}/${p.total}`), ['staging 0/1', 'staging 1/1', 'recording 0/1', 'recording 1/1']);
    seen.length = 0;
    writeFiles(dir, { 'a.txt': 'changed\n', 'b.txt': null });
    await store.restore({ snapshot: saved.snapshot.commit, onProgress: (progress) => seen.push(progress) });
    assert.deepEqual([...new Set(seen.map((p) => p.phase))], ['staging', 'checkpoint', 'writing', 'index']);
    assert.deepEqual(seen.filter((p) => p.phase === 'writing').map((p) => [p.done, p.total]), [[0, 2], [2, 2]]);
    assert.equal(readFileSync(join(dir, 'a.txt'), 'utf8'), '1\n');
  });

  it('a progress, event or watch listener that is an async function and rejects fails nothing, and the restore ends whole', async () => {
    const dir = makeRepo({ 'a.txt': '1\n' });
    const store = new WipStore({ cwd: dir, policy: null });
    const rejecting = async (): Promise<void> => {
      throw new Error('the panel was closed');
    };
    store.on('snapshot', rejecting);
    store.on('restore', rejecting);
    const heard: RefsChanged[] = [];
    const watch = await store.watchRefs(async (event) => {
      heard.push(event);
      throw new Error('the timeline was closed');
    }, { debounceMs: 10 });
    try {
      writeFiles(dir, Object.fromEntries(Array.from({ length: 50 }, (_, i) => [`f${i}.txt`, `turn 1 ${i}\n`])));
      const saved = await store.save({ label: 'turn:1', onProgress: rejecting });
      const turn1 = treeOf(dir);
      writeFiles(dir, Object.fromEntries(Array.from({ length: 50 }, (_, i) => [`f${i}.txt`, `turn 2 ${i}\n`])));
      const restored = await store.restore({ snapshot: saved.snapshot.commit, onProgress: rejecting });
      assert.equal(restored.written.length, 50);
      assert.deepEqual(treeOf(dir), turn1, 'every file of the snapshot is back');
      // The listeners' rejections surface on later turns of the event loop: the process is still here after them.
      while (heard.length === 0) await new Promise((resolve) => setTimeout(resolve, 20));
      await new Promise((resolve) => setTimeout(resolve, 50));
    } finally {
      watch.close();
    }
  });

  it('a replicator\'s progress sink, or a runner\'s onStderr, that is an async function and rejects fails nothing: the push and the fetch end whole', async () => {
    const dir = makeRepo();
    const remote = bareRemote();
    git(dir, ['remote', 'add', 'origin', remote]);
    writeFiles(dir, { 'a.txt': '1\n' });
    const saved = await new WipStore({ cwd: dir, policy: null }).save({ label: 'one' });
    const policy = Policy.from({ remote: 'origin', refs: ['wip'], on: [] }, { box: 'app' });
    const rejecting = async (): Promise<void> => {
      throw new Error('the panel was closed');
    };
    const { replication } = await new Replicator({ cwd: dir, policy, progress: rejecting }).push();
    assert.deepEqual(replication.pushed.map((ref) => ref.commit), [saved.snapshot.commit]);
    const fresh = makeRepo();
    git(fresh, ['remote', 'add', 'origin', remote]);
    const fetched = await new Replicator({ cwd: fresh, policy, progress: rejecting }).fetch();
    assert.deepEqual(fetched.refs.map((ref) => ref.result), ['created']);
    await new SimpleGitRunner(fresh).run(['fetch', '--progress', 'origin', 'refs/chant/wip/main'], { onStderr: rejecting });
    // The sinks' rejections surface on later turns of the event loop: the process is still here after them.
    await new Promise((resolve) => setTimeout(resolve, 50));
  });

  it('hands a push and a fetch git\'s progress as {phase, done, total}, and emits push and fetch', async () => {
    const dir = makeRepo();
    const remote = bareRemote();
    git(dir, ['remote', 'add', 'origin', remote]);
    writeFiles(dir, Object.fromEntries(Array.from({ length: 30 }, (_, i) => [`f${i}.txt`, `${i}\n`.repeat(50)])));
    await new WipStore({ cwd: dir, policy: null }).save({ label: 'big' });
    const policy = Policy.from({ remote: 'origin', refs: ['wip'], on: [] }, { box: 'app' });
    const replicator = new Replicator({ cwd: dir, policy });
    const events: string[] = [];
    replicator.on('push', ({ pushed }) => events.push(`push ${pushed.length}`));
    replicator.on('fetch', ({ refs }) => events.push(`fetch ${refs.length}`));
    const seen: Progress[] = [];
    const { replication } = await replicator.push({ onProgress: (progress) => seen.push(progress) });
    assert.equal(replication.pushed.length, 1);
    const phases = new Set(seen.map((p) => p.phase));
    assert.ok(phases.has('writing objects'), `git's phases: ${[...phases].join(', ')}`);
    assert.ok(seen.every((p) => p.total === null || p.done <= p.total));
    assert.deepEqual(seen.at(-1), { phase: 'refs', done: 1, total: 1 });

    const fresh = makeRepo();
    git(fresh, ['remote', 'add', 'origin', remote]);
    const fetched: Progress[] = [];
    await new Replicator({ cwd: fresh, policy }).fetch({ onProgress: (progress) => fetched.push(progress) });
    assert.ok(fetched.some((p) => p.phase === 'receiving objects' || p.phase === 'unpacking objects'), fetched.map((p) => p.phase).join(', '));
    await replicator.fetch();
    assert.deepEqual(events, ['push 1', 'fetch 1']);
  });
});
