import { BIN, git, makeRepo, startBin, stateOf, tempDir, treeOf, writeFiles, parseDocument, stagedTree } from './helpers.js';
import type { BinProcess } from './helpers.js';
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { existsSync, rmSync, utimesSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, it } from 'node:test';
import { isWipError } from '../lib/errors.js';
import { LOCK_NAME, withWorktreeLock } from '../lib/managers/lock.js';
import { WipStore } from '../lib/store/wip-store.js';

interface BinRun extends BinProcess { doc: any }

/** Starts the built bin as a process of its own, without waiting for the others; its document read. */
async function startBinRun(cwd: string, args: readonly string[], env: NodeJS.ProcessEnv = process.env): Promise<BinRun> {
  const run = await startBin(cwd, args, env);
  return { ...run, doc: parseDocument(run.stdout) };
}

/** The pid of a process that has exited (and been reaped). */
function deadPid(): number {
  const child = spawnSync(process.execPath, ['-e', 'process.stdout.write(String(process.pid))'], { encoding: 'utf8' });
  return Number(child.stdout);
}

/** Many files that differ between two states, so a mixture of them could not go unnoticed. */
function manyFiles(tag: string, count = 200): Record<string, string> {
  const files: Record<string, string> = {};
  for (let i = 0; i < count; i += 1) files[`bulk/d${i % 10}/f${i}.txt`] = `${tag} ${i}\n`;
  return files;
}

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

describe('concurrent saves and restores', () => {
  it('records 16 concurrent save processes on one branch, each exactly once in the chain', async () => {
    assert.ok(existsSync(BIN), 'npm run build first');
    const dir = makeRepo();
    writeFiles(dir, { 'work.txt': 'in progress\n', ...manyFiles('save', 50) });
    const labels = Array.from({ length: 16 }, (_, index) => `writer-${index}`);
    const runs = await Promise.all(labels.map((label) => startBinRun(dir, ['workspace', 'wip', 'save', '--label', label])));
    for (const [index, run] of runs.entries()) {
      assert.equal(run.code, 0, `writer ${index}: ${run.stdout}${run.stderr}`);
      assert.equal(run.doc.created, true);
      assert.equal(run.doc.snapshot.label, labels[index]);
    }
    const { branches } = await new WipStore({ cwd: dir }).list();
    const chain = branches[0]?.snapshots ?? [];
    assert.equal(chain.length, 16, 'the first-parent chain holds every save');
    assert.deepEqual(chain.map((snapshot) => snapshot.label).sort(), [...labels].sort(), 'each label exactly once');
    assert.deepEqual(new Set(chain.map((snapshot) => snapshot.commit)), new Set(runs.map((run) => run.doc.snapshot.commit)), 'each reported commit is in the chain');
    assert.equal(existsSync(join(dir, '.git', LOCK_NAME)), false, 'the lock is gone');
  });

  it('serializes two restores started at once: the working tree ends as one snapshot, and each checkpoint holds a whole tree', async () => {
    const dir = makeRepo();
    const store = new WipStore({ cwd: dir });
    writeFiles(dir, manyFiles('a'));
    const a = await store.save({ label: 'a' });
    const treeA = treeOf(dir);
    writeFiles(dir, { ...manyFiles('b'), 'only-b.txt': 'b\n' });
    const b = await store.save({ label: 'b' });
    const treeB = treeOf(dir);
    writeFiles(dir, { ...manyFiles('w'), 'only-b.txt': null, 'only-w.txt': 'w\n' });
    const treeW = stagedTree(dir);
    // Held by this (live) process, so both restores wait and then race for the lock at once.
    const lock = join(dir, '.git', LOCK_NAME);
    writeFileSync(lock, `${process.pid}\n`);
    const runs = [startBinRun(dir, ['workspace', 'wip', 'restore', a.snapshot.commit]), startBinRun(dir, ['workspace', 'wip', 'restore', b.snapshot.commit])];
    await sleep(400);
    assert.ok(existsSync(lock), 'neither restore broke a live holder\'s lock');
    rmSync(lock);
    const [runA, runB] = await Promise.all(runs) as [BinRun, BinRun];
    assert.equal(runA.code, 0, runA.stdout);
    assert.equal(runB.code, 0, runB.stdout);
    const final = treeOf(dir);
    const aLast = JSON.stringify(final) === JSON.stringify(treeA);
    assert.ok(aLast || JSON.stringify(final) === JSON.stringify(treeB), 'the working tree is exactly one of the two snapshots, never a mixture');
    const [first, second] = aLast ? [runB, runA] : [runA, runB];
    assert.equal(first.doc.checkpoint.snapshot.tree, treeW, 'the first checkpoint holds the working tree as it was');
    assert.equal(second.doc.checkpoint.snapshot.tree, first.doc.snapshot.tree, 'the second checkpoint holds what the first restored');
  });

  it('serializes a save taken during a restore: the snapshot is the tree before or after, never a mixture', async () => {
    const dir = makeRepo();
    const store = new WipStore({ cwd: dir });
    writeFiles(dir, manyFiles('target'));
    const target = await store.save({ label: 'target' });
    const targetTree = treeOf(dir);
    writeFiles(dir, manyFiles('now'));
    const nowTree = stagedTree(dir);
    const lock = join(dir, '.git', LOCK_NAME);
    writeFileSync(lock, `${process.pid}\n`);
    const restoring = startBinRun(dir, ['workspace', 'wip', 'restore', target.snapshot.commit]);
    await sleep(150);
    const saving = startBinRun(dir, ['workspace', 'wip', 'save', '--label', 'during']);
    await sleep(300);
    rmSync(lock);
    const [restore, save] = await Promise.all([restoring, saving]);
    assert.equal(restore.code, 0, restore.stdout);
    assert.equal(save.code, 0, save.stdout);
    assert.ok([nowTree, target.snapshot.tree].includes(save.doc.snapshot.tree), `the save holds a whole tree: ${save.doc.snapshot.tree}`);
    assert.deepEqual(treeOf(dir), targetTree, 'the restore finished whole');
  });

  it('waits a bounded time for a live holder, then refuses with wip-race and changes nothing', async () => {
    const dir = makeRepo();
    const store = new WipStore({ cwd: dir, lockWaitMs: 200 });
    writeFiles(dir, { 'a.txt': 'a\n' });
    await store.save({});
    writeFiles(dir, { 'a.txt': 'edited\n' });
    writeFileSync(join(dir, '.git', LOCK_NAME), `${process.pid}\n`);
    const before = stateOf(dir);
    for (const attempt of [() => store.save({ label: 'x' }), () => store.restore({})]) {
      const started = Date.now();
      await assert.rejects(attempt(), (error) => {
        assert.ok(isWipError(error, 'wip-race'), String(error));
        assert.match(error.message, new RegExp(`process ${process.pid}`));
        return true;
      });
      assert.ok(Date.now() - started < 5_000, 'the wait is bounded');
    }
    assert.deepEqual(stateOf(dir), before, 'nothing changed');
    assert.ok(existsSync(join(dir, '.git', LOCK_NAME)), 'a live holder keeps its lock');
  });

  it('ends a wait for a live holder at the save\'s deadline (wip-timeout) and on a cancel (wip-cancelled), well before the lock wait would', async () => {
    const dir = makeRepo();
    writeFiles(dir, { 'a.txt': 'a\n' });
    await new WipStore({ cwd: dir }).save({});
    writeFiles(dir, { 'a.txt': 'edited\n' });
    writeFileSync(join(dir, '.git', LOCK_NAME), `${process.pid}\n`);
    const before = stateOf(dir);
    // The lock wait alone would last a minute: the save's 1 s budget ends it.
    let started = Date.now();
    await assert.rejects(new WipStore({ cwd: dir, lockWaitMs: 60_000, saveTimeout: '1s' }).save({}), (error) => {
      assert.ok(isWipError(error, 'wip-timeout'), String(error));
      assert.match(error.message, /waiting for the worktree lock/);
      return true;
    });
    assert.ok(Date.now() - started < 20_000, `the deadline ended the wait (${Date.now() - started} ms)`);
    for (const attempt of [(signal: AbortSignal) => new WipStore({ cwd: dir, lockWaitMs: 60_000 }).save({ signal }), (signal: AbortSignal) => new WipStore({ cwd: dir, lockWaitMs: 60_000 }).restore({ signal })]) {
      const controller = new AbortController();
      started = Date.now();
      setTimeout(() => controller.abort(), 300);
      await assert.rejects(attempt(controller.signal), (error) => isWipError(error, 'wip-cancelled') || assert.fail(String(error)));
      assert.ok(Date.now() - started < 20_000, `the cancel ended the wait (${Date.now() - started} ms)`);
    }
    assert.deepEqual(stateOf(dir), before, 'nothing changed');
    assert.ok(existsSync(join(dir, '.git', LOCK_NAME)), 'a live holder keeps its lock');
  });

  it('takes over a lock left by a killed process: one whose pid is dead, or one left empty long ago', async () => {
    const dir = makeRepo();
    const store = new WipStore({ cwd: dir, lockWaitMs: 2_000 });
    const lock = join(dir, '.git', LOCK_NAME);
    writeFileSync(lock, `${deadPid()}\n`);
    writeFiles(dir, { 'a.txt': 'one\n' });
    const one = await store.save({ label: 'dead pid' });
    assert.equal(one.created, true);
    assert.equal(existsSync(lock), false);
    writeFileSync(lock, '');
    utimesSync(lock, new Date(Date.now() - 60_000), new Date(Date.now() - 60_000));
    writeFiles(dir, { 'a.txt': 'two\n' });
    const two = await store.save({ label: 'old empty lock' });
    assert.equal(two.created, true);
    assert.equal(existsSync(lock), false);
  });

  it('does not take over an empty lock that was just created, since its holder may be about to write its pid', async () => {
    const dir = makeRepo();
    writeFileSync(join(dir, '.git', LOCK_NAME), '');
    await assert.rejects(new WipStore({ cwd: dir, lockWaitMs: 300 }).save({}), (error) => isWipError(error, 'wip-race'));
  });

  it('lets exactly one of many waiters take over a stale lock, never two at once', async () => {
    const dir = makeRepo();
    const gitDir = join(dir, '.git');
    const dead = deadPid();
    let inside = 0;
    let most = 0;
    let entered = 0;
    // Waiters that find a live holder give up at once (waitMs 0), so each round is the takeover
    // alone: before the breaker, two or three of 16 got in together in about one round in six.
    for (let round = 0; round < 100; round += 1) {
      writeFileSync(join(gitDir, LOCK_NAME), `${dead}\n`);
      let refused = 0;
      await Promise.all(Array.from({ length: 16 }, () => withWorktreeLock(gitDir, async () => {
        inside += 1;
        entered += 1;
        most = Math.max(most, inside);
        // The holder stays until every other waiter has given up, so that none can take the lock
        // legitimately after it is released, and the count of takers a round is exact.
        for (let waited = 0; refused + entered - round < 16 && waited < 2_000; waited += 5) await sleep(5);
        inside -= 1;
      }, { waitMs: 0 }).catch((error: unknown) => {
        assert.ok(isWipError(error, 'wip-race'), String(error));
        refused += 1;
      })));
    }
    assert.equal(most, 1, 'never two holders at once');
    assert.equal(entered, 100, 'one taker a round');
  });

  it('never lets two copies of chant in one process hold a worktree\'s lock at once (an ESM and a CommonJS import, or two bundles)', async () => {
    const dir = makeRepo();
    const gitDir = join(dir, '.git');
    // A second instance of the module, as a host that both imports and requires the package has.
    const other = await import(new URL('../lib/managers/lock.ts?another-copy', import.meta.url).href) as typeof import('../lib/managers/lock.js');
    assert.notEqual(other.withWorktreeLock, withWorktreeLock);
    let inside = 0;
    let most = 0;
    const hold = async (): Promise<void> => {
      inside += 1;
      most = Math.max(most, inside);
      await sleep(200);
      inside -= 1;
    };
    // Each copy took the other's lock, which names this live process, for one it no longer held.
    await Promise.all([withWorktreeLock(gitDir, hold, { waitMs: 5_000 }), other.withWorktreeLock(gitDir, hold, { waitMs: 5_000 })]);
    assert.equal(most, 1, 'never two holders at once');
    assert.equal(existsSync(join(gitDir, LOCK_NAME)), false, 'the lock is gone');
  });

  it('takes over a stale lock even when a killed waiter left its breaker behind', async () => {
    const dir = makeRepo();
    const gitDir = join(dir, '.git');
    writeFileSync(join(gitDir, LOCK_NAME), `${deadPid()}\n`);
    const breaker = join(gitDir, `${LOCK_NAME}.break`);
    writeFileSync(breaker, `${deadPid()}\n`);
    utimesSync(breaker, new Date(Date.now() - 60_000), new Date(Date.now() - 60_000));
    writeFiles(dir, { 'a.txt': 'a\n' });
    const saved = await new WipStore({ cwd: dir, lockWaitMs: 2_000 }).save({});
    assert.equal(saved.created, true);
    assert.equal(existsSync(breaker), false);
  });
});
