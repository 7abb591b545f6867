// The retain block of the workspace declaration: wip prune with no rule applies it, a save applies
// it when asked (save --prune) or on every save (onSave), and a save that pushes on save sends the
// chain it pruned under a lease on the recorded replica. Real repositories, a real bare remote.
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { existsSync, mkdirSync, readdirSync, readFileSync, renameSync, rmSync, writeFileSync } from 'node:fs';
import fs from 'node:fs';
import { syncBuiltinESMExports } from 'node:module';
import { join } from 'node:path';
import { describe, it } from 'node:test';
import { isWipError, Policy, Replicator, WipStore } from '../lib/index.js';
import { buildChain } from './chains.js';
import { assertRefusal, assertValidDocument, git, gitStandIn, makeRepo, REAL_GIT, ROOT, runBin, runCli, shellQuote, stateOf, tempDir, writeFiles } from './helpers.js';
import { bareRemote } from './remotes.js';
import { SimpleGitRunner } from '../lib/git/runner.js';
import { withWorktreeLock } from '../lib/managers/lock.js';
import type { GitRunner } from '../lib/git/runner.js';

function declared(box: Record<string, unknown>): Record<string, string> {
  return { 'README.md': 'hello\n', 'chant.workspace.json': `${JSON.stringify({ members: [{ name: 'app', box }] }, null, 2)}\n` };
}

function chainLength(dir: string): number {
  return (new Set(git(dir, ['rev-list', '--first-parent', 'refs/chant/wip/main']).trim().split('\n')).size) - 1; // less main's commit
}

/**
 * A checkout pruned to one snapshot on every save: a.txt saved as `one`, then made `precious`,
 * the first save restored over it, a.txt made `after the restore` and saved as `label`.
 */
async function restoredThenSaved(label: string) {
  const dir = makeRepo(declared({ retain: { keepLast: 1, onSave: true } }));
  const store = new WipStore({ cwd: dir });
  writeFiles(dir, { 'a.txt': 'one\n' });
  const first = await store.save({ label: 'one' });
  writeFiles(dir, { 'a.txt': 'precious\n' });
  const done = await store.restore({ snapshot: first.snapshot.commit });
  writeFiles(dir, { 'a.txt': 'after the restore\n' });
  const saved = await store.save({ label });
  return { dir, store, first, done, saved };
}

/** That the chain still holds a snapshot of the checkpoint's tree, and its restore gives a.txt back as `precious`. */
async function assertUndoes(store: WipStore, dir: string, checkpointTree: string, message: string): Promise<void> {
  const chain = (await store.list()).branches[0]?.snapshots ?? [];
  const undo = chain.find((snapshot) => snapshot.tree === checkpointTree);
  assert.ok(undo !== undefined, message);
  await store.restore({ snapshot: undo.commit });
  assert.equal(readFileSync(join(dir, 'a.txt'), 'utf8'), 'precious\n');
}

describe('the retain block of the declaration', () => {
  it('is what wip prune applies when given no rule, and its document says which rules', async () => {
    const dir = makeRepo(declared({ retain: { keepLast: 5, keepLabelled: true } }));
    buildChain(dir, 40, (i) => i === 3);
    const run = await runCli(dir, ['workspace', 'wip', 'prune', '--json']);
    assert.equal(run.code, 0, run.stdout);
    assert.deepEqual(run.doc.rules, { keepLast: 5, keepWithin: null, keepLabelled: true });
    assert.equal(run.doc.branches[0].kept, 6);
    assert.equal(run.doc.branches[0].dropped.length, 34);
    await assertValidDocument(run.doc, { oursOnly: true });
    assert.equal(chainLength(dir), 6);
    // Rules given on the command line replace the declared ones whole.
    const given = await new WipStore({ cwd: dir }).prune({ keepLast: 2, dryRun: true });
    assert.deepEqual(given.rules, { keepLast: 2, keepWithin: null, keepLabelled: false });
    assert.equal(given.branches[0]?.dropped.length, 4);
  });

  it('is applied by save --prune after the snapshot is recorded, and only to the saved branch', async () => {
    const dir = makeRepo(declared({ retain: { keepLast: 3 } }));
    buildChain(dir, 12);
    writeFileSync(join(dir, 'notes.txt'), 'turn 13\n');
    const plain = await runCli(dir, ['workspace', 'wip', 'save', '--label', 'turn:13']);
    assert.equal(plain.code, 0, plain.stdout);
    assert.equal(plain.doc.pruned, undefined, 'without --prune or onSave a save prunes nothing');
    assert.equal(chainLength(dir), 13);
    writeFileSync(join(dir, 'notes.txt'), 'turn 14\n');
    const run = await runCli(dir, ['workspace', 'wip', 'save', '--label', 'turn:14', '--prune', '--json']);
    assert.equal(run.code, 0, run.stdout);
    await assertValidDocument(run.doc);
    assert.equal(run.doc.pruned.kept, 3);
    assert.equal(run.doc.pruned.dropped.length, 11);
    assert.equal(run.doc.pruned.tip, run.doc.snapshot.commit);
    const tip = git(dir, ['rev-parse', 'refs/chant/wip/main']).trim();
    assert.equal(run.doc.pruned.next, tip);
    assert.equal(chainLength(dir), 3);
    // The rewritten tip is the same snapshot: same tree, label and date.
    const list = await new WipStore({ cwd: dir }).list();
    assert.equal(list.branches[0]?.snapshots[0]?.label, 'turn:14');
    assert.equal(list.branches[0]?.snapshots[0]?.at, run.doc.snapshot.at);
    assert.equal(git(dir, ['rev-parse', `${tip}^{tree}`]).trim(), git(dir, ['rev-parse', `${run.doc.snapshot.commit}^{tree}`]).trim());
  });

  it('prunes on every save with onSave, through the SDK as through the CLI', async () => {
    const dir = makeRepo(declared({ retain: { keepLast: 2, onSave: true } }));
    const store = new WipStore({ cwd: dir });
    for (let turn = 1; turn <= 4; turn += 1) {
      writeFileSync(join(dir, 'notes.txt'), `turn ${turn}\n`);
      const result = await store.save({ label: `turn:${turn}` });
      assert.equal(result.pruned?.kept, Math.min(turn, 2));
      assert.equal(result.pruned?.dropped.length, turn > 2 ? 1 : 0);
      assert.equal(chainLength(dir), Math.min(turn, 2));
    }
    const { branches } = await store.list();
    assert.deepEqual(branches[0]?.snapshots.map((snapshot) => snapshot.label), ['turn:4', 'turn:3']);
  });

  it('a save pruning on save while a save or restore of another worktree holds its lock returns at once, its prune skipped, and the next save prunes', async () => {
    const dir = makeRepo(declared({ retain: { keepLast: 1, onSave: true } }));
    const linked = join(tempDir(), 'linked');
    git(dir, ['worktree', 'add', '-q', '-b', 'other', linked]);
    const store = new WipStore({ cwd: dir });
    writeFileSync(join(dir, 'notes.txt'), 'turn 1\n');
    await store.save({ label: 'turn:1' });
    writeFileSync(join(dir, 'notes.txt'), 'turn 2\n');
    const linkedGitDir = git(linked, ['rev-parse', '--absolute-git-dir']).trim();
    const started = Date.now();
    const held = await withWorktreeLock(linkedGitDir, () => store.save({ label: 'turn:2' }));
    assert.ok(Date.now() - started < 20_000, 'the save did not wait for the lock as a save waits (30 s)');
    assert.deepEqual(held.skipped?.map((step) => [step.step, step.code]), [['prune', 'wip-race']]);
    assert.equal(chainLength(dir), 2, 'nothing pruned while the other worktree held its lock');
    writeFileSync(join(dir, 'notes.txt'), 'turn 3\n');
    const next = await store.save({ label: 'turn:3' });
    assert.equal(next.pruned?.dropped.length, 2);
    assert.equal(chainLength(dir), 1);
  });
  it('a save pruning on save succeeds when another process holds the wip ref\'s lock as its reflog is expired', async () => {
    const dir = makeRepo(declared({ retain: { keepLast: 1, onSave: true } }));
    writeFileSync(join(dir, 'notes.txt'), 'one\n');
    assert.equal((await runCli(dir, ['workspace', 'wip', 'save', '--label', 'one', '--json'])).code, 0);
    // A fetch moving the ref, or git's pack-refs, holds its lock just then.
    const lock = join(dir, '.git', 'refs', 'chant', 'wip', 'main.lock');
    const { env } = gitStandIn('chant-reflog-lock-', () => [
      `case " $* " in *" reflog expire "*) touch ${shellQuote(lock)}; ${shellQuote(REAL_GIT)} "$@"; rc=$?; rm -f ${shellQuote(lock)}; exit $rc;; esac`,
      `exec ${shellQuote(REAL_GIT)} "$@"`,
    ]);
    writeFileSync(join(dir, 'notes.txt'), 'two\n');
    const run = runBin(dir, ['workspace', 'wip', 'save', '--label', 'two', '--json'], env);
    assert.equal(run.code, 0, run.stdout);
    assert.equal(run.doc.pruned.dropped.length, 1);
    const { branches } = await new WipStore({ cwd: dir }).list();
    assert.deepEqual(branches[0]?.snapshots.map((snapshot) => snapshot.label), ['two']);
  });

  it('a save pruning on save whose prune is refused (a commit under the chain that is not a snapshot) still succeeds and pushes', async () => {
    const remote = bareRemote();
    const dir = makeRepo(declared({ replicate: { remote: 'origin', refs: ['wip'], on: ['save'] }, retain: { keepLast: 1, onSave: true } }));
    git(dir, ['remote', 'add', 'origin', remote]);
    git(dir, ['update-ref', 'refs/chant/wip/main', git(dir, ['commit-tree', 'HEAD^{tree}', '-p', 'HEAD', '-m', 'another tool\'s commit']).trim()]);
    const store = new WipStore({ cwd: dir });
    writeFileSync(join(dir, 'notes.txt'), 'one\n');
    await store.save({ label: 'one' });
    writeFileSync(join(dir, 'notes.txt'), 'two\n');
    const saved = await store.save({ label: 'two' });
    assert.equal(saved.pruned, undefined);
    // The save says which step it did not take, and why, as wip prune would.
    assert.deepEqual(saved.skipped?.map(({ step, code }) => ({ step, code })), [{ step: 'prune', code: 'wip-snapshot-unknown' }]);
    assert.match(saved.skipped?.[0]?.message ?? '', /does not read as a snapshot/);
    assert.deepEqual(saved.replication?.pushed.map((ref) => ref.commit), [saved.snapshot.commit]);
    assert.equal(git(remote, ['rev-parse', 'refs/chant/wip/main']).trim(), saved.snapshot.commit);
    await assertRefusal(() => store.prune({}), 'wip-snapshot-unknown');
    writeFileSync(join(dir, 'notes.txt'), 'three\n');
    const run = await runCli(dir, ['workspace', 'wip', 'save', '--label', 'three', '--json']);
    assert.equal(run.code, 0, run.stdout + run.stderr);
    assert.deepEqual(run.doc.skipped.map(({ step, code }: { step: string; code: string }) => ({ step, code })), [{ step: 'prune', code: 'wip-snapshot-unknown' }]);
    await assertValidDocument(run.doc);
  });

  it('says a prune with gc collected only once the dropped snapshots\' objects are gone, the reflog expiry tried again when a lock held it', async () => {
    const dir = makeRepo();
    const inner = new SimpleGitRunner(dir);
    const lock = join(dir, '.git', 'refs', 'chant', 'wip', 'main.lock');
    // Another process holds the wip ref's lock while the first `times` expiries run.
    let times = 0;
    const runner: GitRunner = {
      run: async (args, options) => {
        if (!(args.includes('reflog') && args.includes('expire') && args.includes('--expire-unreachable=now')) || times === 0) return inner.run(args, options);
        times -= 1;
        writeFileSync(lock, '');
        try {
          return await inner.run(args, options);
        } finally {
          rmSync(lock, { force: true });
        }
      },
    };
    const store = new WipStore({ cwd: dir, policy: null, git: runner });
    const dropped = async (): Promise<string> => {
      writeFileSync(join(dir, 'notes.txt'), `${Math.random()}\n`);
      const saved = await store.save({});
      writeFileSync(join(dir, 'notes.txt'), 'kept\n');
      await store.save({});
      return git(dir, ['rev-parse', `${saved.snapshot.commit}:notes.txt`]).trim();
    };
    const onDisk = (blob: string): boolean => spawnSync('git', ['cat-file', '-e', blob], { cwd: dir }).status === 0;
    // Held once: the gc tries the expiry again, and the objects go.
    let blob = await dropped();
    times = 1;
    let result = await store.prune({ keepLast: 1, gc: true });
    assert.equal(onDisk(blob), false, 'the dropped snapshot\'s file is gone');
    assert.equal(result.collected, true);
    // Held throughout: the reflog still names it, so nothing is said collected.
    blob = await dropped();
    times = 2;
    result = await store.prune({ keepLast: 1, gc: true });
    assert.equal(onDisk(blob), true);
    assert.equal(result.collected, false, 'a gc frees nothing the reflog names');
  });

  it('refuses save --prune with no retain block, writing nothing', async () => {
    const dir = makeRepo();
    writeFileSync(join(dir, 'notes.txt'), 'work\n');
    const before = stateOf(dir);
    const run = await runCli(dir, ['workspace', 'wip', 'save', '--prune']);
    assert.equal(run.code, 1);
    assert.equal(run.doc.action, 'save');
    assert.equal(run.doc.error.code, 'write-usage-invalid');
    assert.match(run.doc.error.message, /no box declares retain/);
    await assertValidDocument(run.doc);
    assert.deepEqual(stateOf(dir), before);
    await assertRefusal(() => new WipStore({ cwd: dir }).prune({}), 'write-usage-invalid', /needs a rule/);
  });

  it('refuses a retain block that breaks its rules, naming the field and where it is, on every verb', async () => {
    const dir = makeRepo(declared({ retain: { keepLast: 0 } }));
    const save = await runCli(dir, ['workspace', 'wip', 'save']);
    assert.equal(save.doc.error.code, 'declaration-invalid');
    assert.match(save.doc.error.message, /chant\.workspace\.json:\d+:\d+: members\[0\]\.box\.retain\.keepLast must be a whole number of at least 1; it is 0/);
    const read = await runCli(dir, ['workspace', 'wip', '--json']);
    assert.equal(read.doc.error.code, 'declaration-invalid');
    await assertRefusal(() => Policy.load({ cwd: dir }), 'declaration-invalid', /retain\.keepLast/);
    const none = makeRepo(declared({ retain: { onSave: true, keepLabelled: false } }));
    await assertRefusal(() => new WipStore({ cwd: none }).save({}), 'declaration-invalid', /members\[0\]\.box\.retain needs a rule/);
  });

  it('is replaced by the store\'s retain option: given, it is what prune and save apply; null, there is none', async () => {
    const dir = makeRepo(declared({ retain: { keepLast: 5 } }));
    buildChain(dir, 20, (i) => i === 2);
    const given = new WipStore({ cwd: dir, retain: { keepLast: 3, keepLabelled: true } });
    const plan = await given.prune({ dryRun: true });
    assert.deepEqual(plan.rules, { keepLast: 3, keepWithin: null, keepLabelled: true });
    assert.equal(plan.branches[0]?.kept, 4);
    // Rules given to the call still replace the store's whole.
    assert.deepEqual((await given.prune({ keepLast: 7, dryRun: true })).rules, { keepLast: 7, keepWithin: null, keepLabelled: false });
    const none = new WipStore({ cwd: dir, retain: null });
    await assertRefusal(() => none.prune({}), 'write-usage-invalid', /needs a rule/);
    writeFileSync(join(dir, 'notes.txt'), 'work\n');
    await assertRefusal(() => none.save({ prune: true }), 'write-usage-invalid', /no box declares retain/);
    assert.equal(chainLength(dir), 20, 'nothing was written');
    // onSave in the option prunes on every save, the declaration's block left aside.
    const onSave = new WipStore({ cwd: dir, retain: { keepLast: 2, onSave: true } });
    const saved = await onSave.save({ label: 'after' });
    assert.equal(saved.pruned?.kept, 2);
    assert.equal(chainLength(dir), 2);
  });

  it('refuses a retain option that breaks the block\'s rules when the store is made, naming the field', () => {
    const dir = makeRepo();
    assert.throws(() => new WipStore({ cwd: dir, retain: { keepLast: 0 } }), (error: Error & { code?: string }) => {
      assert.equal(error.code, 'declaration-invalid');
      assert.equal(error.message, 'retain.keepLast must be a whole number of at least 1; it is 0');
      return true;
    });
    assert.throws(() => new WipStore({ cwd: dir, retain: { onSave: true } }), /retain needs a rule/);
    assert.throws(() => new WipStore({ cwd: dir, retain: { keepLast: 2, keepEvery: 3 } as never }), /retain\.keepEvery is not a retain key/);
  });

  it('sends a chain a save pruned while the remote was away under a lease on the next save too, which prunes nothing', async () => {
    const remote = bareRemote();
    const box = { replicate: { remote: 'origin', refs: ['wip'], on: ['save'] }, retain: { keepWithin: '1h', onSave: true } };
    const a = makeRepo(declared(box));
    git(a, ['remote', 'add', 'origin', remote]);
    git(a, ['push', '-q', 'origin', 'main']);
    let now = Date.parse('2026-06-01T10:00:00Z');
    const store = new WipStore({ cwd: a, clock: () => new Date(now) });
    writeFileSync(join(a, 'notes.txt'), 'turn 1\n');
    assert.equal((await store.save({})).replication?.pushed.length, 1);
    // Two hours on, the first snapshot is past the age: this save drops it, and its push fails.
    now += 2 * 3_600_000;
    renameSync(remote, `${remote}.away`);
    writeFileSync(join(a, 'notes.txt'), 'turn 2\n');
    const second = await store.save({});
    assert.equal(second.pruned?.dropped.length, 1);
    assert.equal(second.replication?.rejected.length, 1);
    renameSync(`${remote}.away`, remote);
    // The next save drops nothing, so rewrites nothing; its push still has to carry the pruned chain.
    now += 60_000;
    writeFileSync(join(a, 'notes.txt'), 'turn 3\n');
    const third = await store.save({});
    assert.deepEqual(third.pruned?.dropped, []);
    const tip = git(a, ['rev-parse', 'refs/chant/wip/main']).trim();
    assert.deepEqual(third.replication?.rejected, [], JSON.stringify(third.replication));
    assert.deepEqual(third.replication?.pushed, [{ ref: 'refs/chant/wip/main', commit: tip }]);
    assert.equal(git(remote, ['rev-parse', 'refs/chant/wip/main']).trim(), tip);
  });

  it('sends the chain a save pruned under a lease when the policy pushes on save, and the lease refuses when another box pushed', async () => {
    const remote = bareRemote();
    const box = { replicate: { remote: 'origin', refs: ['wip'], on: ['save'] }, retain: { keepLast: 2, onSave: true } };
    const a = makeRepo(declared(box));
    git(a, ['remote', 'add', 'origin', remote]);
    git(a, ['push', '-q', 'origin', 'main']);
    const store = new WipStore({ cwd: a });
    for (let turn = 1; turn <= 3; turn += 1) {
      writeFileSync(join(a, 'notes.txt'), `turn ${turn}\n`);
      const result = await store.save({ label: `turn:${turn}` });
      const tip = git(a, ['rev-parse', 'refs/chant/wip/main']).trim();
      assert.deepEqual(result.replication?.rejected, [], `turn ${turn}: ${JSON.stringify(result.replication)}`);
      assert.deepEqual(result.replication?.pushed, [{ ref: 'refs/chant/wip/main', commit: tip }]);
      assert.equal(git(remote, ['rev-parse', 'refs/chant/wip/main']).trim(), tip);
    }
    assert.equal(chainLength(a), 2);
    // Another box fetches, saves and pushes: a's next pruned chain must not overwrite it.
    const b = tempDir();
    git(b, ['clone', '-q', remote, '.']);
    const policy = Policy.from({ remote: 'origin', refs: ['wip'], on: [] }, { box: 'app' });
    await new Replicator({ cwd: b, policy }).fetch();
    // b declares no retention of its own, so its save only adds to the chain.
    writeFileSync(join(b, 'chant.workspace.json'), '{}\n');
    await new WipStore({ cwd: b, policy }).save({ label: 'b' });
    assert.equal((await new Replicator({ cwd: b, policy }).push()).replication.pushed.length, 1);
    const remoteTip = git(remote, ['rev-parse', 'refs/chant/wip/main']).trim();
    writeFileSync(join(a, 'notes.txt'), 'turn 4\n');
    const result = await store.save({ label: 'turn:4' });
    assert.equal(result.pruned?.dropped.length, 1);
    assert.deepEqual(result.replication?.pushed, []);
    assert.match(result.replication?.rejected[0]?.reason ?? '', /stale info/);
    assert.equal(git(remote, ['rev-parse', 'refs/chant/wip/main']).trim(), remoteTip, 'the remote keeps b\'s snapshot');
  });
  it('keeps the checkpoint of the last restore through a save that prunes to one snapshot, so the restore can still be undone', async () => {
    const { dir, store, first, done, saved: later } = await restoredThenSaved('later');
    assert.equal(done.checkpoint.created, true);
    assert.deepEqual(later.pruned?.dropped, [first.snapshot.commit], 'the restored snapshot goes by the rule; the checkpoint stays');
    let chain = (await store.list()).branches[0]?.snapshots ?? [];
    assert.deepEqual(chain.map((snapshot) => [snapshot.kind, snapshot.label]), [['save', 'later'], ['pre-restore', `before ${first.snapshot.commit.slice(0, 12)}`]]);
    assert.equal(chain[1]?.tree, done.checkpoint.snapshot.tree);
    // The undo of the restore gives back what it overwrote. Its own checkpoint is the tip, a save
    // that holds the working tree as it is: no new snapshot, and nothing on the chain says so.
    const undo = await store.restore({ snapshot: (chain[1] as { commit: string }).commit });
    assert.equal(readFileSync(join(dir, 'a.txt'), 'utf8'), 'precious\n');
    assert.equal(undo.checkpoint.created, false);
    assert.equal(undo.checkpoint.snapshot.commit, chain[0]?.commit);
    // The next save keeps that checkpoint, a save, and drops the older one by the rule.
    writeFiles(dir, { 'a.txt': 'again\n' });
    const again = await store.save({ label: 'again' });
    assert.equal(again.pruned?.dropped.length, 1);
    chain = (await store.list()).branches[0]?.snapshots ?? [];
    assert.deepEqual(chain.map((snapshot) => snapshot.label), ['again', 'later']);
    await store.restore({ snapshot: (chain[1] as { commit: string }).commit });
    assert.equal(readFileSync(join(dir, 'a.txt'), 'utf8'), 'after the restore\n', 'the undo of the last restore still gives back what it overwrote');
  });
  it('keeps the checkpoint of the last restore through a later restore cancelled once its files were written, which changed nothing', async () => {
    const { dir, store, first, done } = await restoredThenSaved('second');
    // A restore cancelled as it writes puts the working tree back: it changed nothing, so the
    // restore before it is still the last, and its checkpoint the one that undoes it.
    const controller = new AbortController();
    await assert.rejects(store.restore({ snapshot: first.snapshot.commit, signal: controller.signal, onProgress: (progress) => {
      if (progress.phase === 'writing' && progress.done === 0) controller.abort();
    } }), /cancel/);
    assert.equal(readFileSync(join(dir, 'a.txt'), 'utf8'), 'after the restore\n');
    writeFiles(dir, { 'a.txt': 'later\n' });
    await store.save({ label: 'later' });
    await assertUndoes(store, dir, done.checkpoint.snapshot.tree, 'the checkpoint of the last restore that changed the working tree stays');
  });
  it('keeps the checkpoint of the last restore when a prune stopped right after it moved the chain, before it could rename the record', async () => {
    const dir = makeRepo({ 'a.txt': 'one\n' });
    const store = new WipStore({ cwd: dir });
    const first = await store.save({ label: 'one' });
    writeFiles(dir, { 'a.txt': 'precious\n' });
    const done = await store.restore({ snapshot: first.snapshot.commit });
    for (const text of ['two', 'three']) {
      writeFiles(dir, { 'a.txt': `${text}\n` });
      await store.save({ label: text });
    }
    // The prune's move goes through, then it stops as a kill would stop it: nothing after the move runs.
    const inner = new SimpleGitRunner(dir);
    const runner: GitRunner = {
      run: async (args, options) => {
        const output = await inner.run(args, options);
        if (args.includes('update-ref') && args.includes('chant wip: prune')) throw new Error('killed');
        return output;
      },
    };
    await assert.rejects(new WipStore({ cwd: dir, policy: null, git: runner }).prune({ keepLast: 1 }));
    writeFiles(dir, { 'a.txt': 'four\n' });
    await store.save({ label: 'four' });
    await store.prune({ keepLast: 1, gc: true });
    await assertUndoes(store, dir, done.checkpoint.snapshot.tree, 'the checkpoint of the last restore stays');
  });
  it('keeps the checkpoint of a restore in another worktree that takes its chain\'s tip as checkpoint while a prune of that chain runs from this one', async () => {
    const dir = makeRepo({ 'a.txt': 'one\n' });
    const linked = join(tempDir(), 'linked');
    git(dir, ['worktree', 'add', '-q', '-b', 'other', linked]);
    const store = new WipStore({ cwd: linked, policy: null });
    writeFiles(linked, { 'a.txt': 'two\n' });
    const first = await store.save({ label: 'two' });
    writeFiles(linked, { 'a.txt': 'precious\n' });
    const tip = await store.save({ label: 'precious' });
    // The linked worktree's restore holds its lock; its checkpoint is the tip, which holds the
    // working tree as it is. Right then (no record written yet) this worktree prunes that chain,
    // in a process of its own that gives up at once on a lock held.
    const code = `const { WipStore } = await import(${JSON.stringify(join(ROOT, 'lib', 'index.ts'))});
      const pruned = await new WipStore({ cwd: ${JSON.stringify(dir)}, policy: null, lockWaitMs: 0 }).prune({ branch: 'other', keepLast: 1 }).then((result) => result.branches.map((chain) => chain.dropped.length), (error) => error.code);
      process.stdout.write(JSON.stringify(pruned));`;
    const prunes: Array<{ status: number | null; stdout: string; stderr: string }> = [];
    const done = await store.restore({ snapshot: first.snapshot.commit, onProgress: (progress) => {
      if (progress.phase === 'checkpoint' && progress.done === 1) prunes.push(spawnSync(process.execPath, ['--import', 'tsx', '--input-type=module', '-e', code], { cwd: ROOT, encoding: 'utf8' }));
    } });
    assert.equal(done.checkpoint.created, false);
    assert.equal(done.checkpoint.snapshot.commit, tip.snapshot.commit);
    assert.deepEqual(prunes.map((prune) => [prune.status, prune.stdout]), [[0, '"wip-race"']], prunes[0]?.stderr);
    assert.equal(readFileSync(join(linked, 'a.txt'), 'utf8'), 'two\n');
    // The restore's checkpoint outlives the prunes of later saves, and gives back what it overwrote.
    for (const text of ['three', 'four']) {
      writeFiles(linked, { 'a.txt': `${text}\n` });
      await store.save({ label: text });
      await new WipStore({ cwd: dir, policy: null }).prune({ branch: 'other', keepLast: 1, gc: true });
    }
    const chain = (await store.list()).branches[0]?.snapshots ?? [];
    const undo = chain.find((snapshot) => snapshot.tree === done.checkpoint.snapshot.tree);
    assert.ok(undo !== undefined, 'the checkpoint of the linked worktree\'s last restore stays');
    await store.restore({ snapshot: undo.commit });
    assert.equal(readFileSync(join(linked, 'a.txt'), 'utf8'), 'precious\n');
  });
  it('refuses a restore whose record of its checkpoint cannot be written, changing nothing, and removes what a killed one left half written', async () => {
    const dir = makeRepo({ 'a.txt': 'one\n' });
    const store = new WipStore({ cwd: dir, policy: null });
    writeFiles(dir, { 'a.txt': 'two\n' });
    const first = await store.save({ label: 'two' });
    writeFiles(dir, { 'a.txt': 'precious\n' });
    // A folder where the record goes: nothing can be written there. Without the record a pruning
    // save would drop the checkpoint, the only snapshot of the precious file.
    const record = join(dir, '.git', 'chant-last-restore');
    mkdirSync(join(record, 'in-the-way'), { recursive: true });
    const before = stateOf(dir);
    await assert.rejects(store.restore({ snapshot: first.snapshot.commit }), (error) => {
      assert.ok(isWipError(error, 'git-failed'), String(error));
      assert.match(error.message, /cannot write the record of this restore's checkpoint .*so nothing was changed/);
      return true;
    });
    assert.equal(readFileSync(join(dir, 'a.txt'), 'utf8'), 'precious\n');
    const after = stateOf(dir);
    assert.deepEqual([after.tree, after.index, after.status, after.head], [before.tree, before.index, before.status, before.head], 'working tree, index and HEAD as they were');
    assert.deepEqual(readdirSync(join(dir, '.git')).filter((name) => name.startsWith('chant-restoring') || name.startsWith('chant-last-restore.')), [], 'no notice, no half-written record');
    assert.equal((await store.list()).interruptedRestore, undefined);
    rmSync(record, { recursive: true });
    // What a restore killed between writing its record and renaming it leaves goes with the next one.
    const left = ['chant-last-restore', 'chant-restoring'].map((name) => join(dir, '.git', `${name}.999999999-0a1b2c3d.tmp`));
    for (const file of left) writeFileSync(file, '{"bra');
    const done = await store.restore({ snapshot: first.snapshot.commit });
    assert.deepEqual(left.filter((file) => existsSync(file)), []);
    assert.equal(JSON.parse(readFileSync(record, 'utf8')).checkpoint, done.checkpoint.snapshot.commit);
  });
  it('refuses a prune while the record of the last restore or a restore mark is cut short (a power loss), dropping nothing, and a save pruning on save skips its prune', async () => {
    for (const [name, cut] of [['chant-last-restore', ''], ['chant-last-restore', '{"branch":"main","snapshot":"'], ['chant-restoring', '{"branch":"main","snap']]) {
      const { dir, store, done } = await restoredThenSaved('later');
      // Cut short as a power loss may leave a file renamed in place before its bytes reached the
      // disk: it names no checkpoint, and a prune reading it as no record dropped the only undo.
      writeFileSync(join(dir, '.git', name as string), cut as string);
      writeFiles(dir, { 'a.txt': 'again\n' });
      const again = await store.save({ label: 'again' });
      assert.equal(again.pruned, undefined, `${name} cut to ${JSON.stringify(cut)}: the save's prune is skipped`);
      assert.deepEqual(again.skipped?.map((step) => [step.step, step.code]), [['prune', 'wip-snapshot-unknown']]);
      assert.match(again.skipped?.[0]?.message ?? '', new RegExp(`${name} in the git directory .* does not read whole`));
      await assert.rejects(store.prune({ keepLast: 1 }), (error) => isWipError(error, 'wip-snapshot-unknown'));
      await assert.rejects(store.prune({ keepLast: 1, dryRun: true }), (error) => isWipError(error, 'wip-snapshot-unknown'));
      assert.equal((await store.list()).branches[0]?.snapshots.length, 3, 'nothing dropped');
      await assertUndoes(store, dir, done.checkpoint.snapshot.tree, `${name} cut to ${JSON.stringify(cut)}: the checkpoint of the last restore stays`);
    }
  });
  it('refuses a prune that cannot write the record of the last restore naming its checkpoint as written again, moving nothing', async () => {
    const dir = makeRepo({ 'a.txt': 'one\n' });
    const store = new WipStore({ cwd: dir, policy: null });
    writeFiles(dir, { 'a.txt': 'two\n' });
    const first = await store.save({ label: 'two' });
    writeFiles(dir, { 'a.txt': 'precious\n' });
    const done = await store.restore({ snapshot: first.snapshot.commit });
    for (const text of ['later', 'again']) {
      writeFiles(dir, { 'a.txt': `${text}\n` });
      await store.save({ label: text });
    }
    const tip = git(dir, ['rev-parse', 'refs/chant/wip/main']).trim();
    // The record cannot be replaced (a full disk): a prune that moved the chain all the same left
    // it naming only the checkpoint the rewrite replaced, and the next prune dropped the new one.
    const renameSync = fs.renameSync;
    fs.renameSync = (from: fs.PathLike, to: fs.PathLike) => {
      if (String(to).endsWith('chant-last-restore')) throw Object.assign(new Error('ENOSPC: no space left on device'), { code: 'ENOSPC' });
      renameSync(from, to);
    };
    syncBuiltinESMExports();
    try {
      await assert.rejects(new WipStore({ cwd: dir, policy: null }).prune({ keepLast: 1 }), (error) => {
        assert.ok(isWipError(error, 'git-failed'), String(error));
        assert.match(error.message, /nothing was pruned/);
        return true;
      });
    } finally {
      fs.renameSync = renameSync;
      syncBuiltinESMExports();
    }
    assert.equal(git(dir, ['rev-parse', 'refs/chant/wip/main']).trim(), tip, 'the chain did not move');
    await store.prune({ keepLast: 1, gc: true });
    await assertUndoes(store, dir, done.checkpoint.snapshot.tree, 'the checkpoint of the last restore stays');
  });
  it('syncs the record of the last restore and its folder to the disk before the restore touches a file', async () => {
    const dir = makeRepo({ 'a.txt': 'one\n' });
    const store = new WipStore({ cwd: dir, policy: null });
    writeFiles(dir, { 'a.txt': 'two\n' });
    const first = await store.save({ label: 'two' });
    writeFiles(dir, { 'a.txt': 'precious\n' });
    // Every fsync of the restore, by what it synced (a file's inode, or a folder), and what a.txt
    // held then: the record must be on the disk while a.txt is still the precious one.
    const synced: Array<{ ino: number; folder: boolean; text: string }> = [];
    // On the main thread or the thread pool (the record is synced with the undo's batch).
    const fsyncSync = fs.fsyncSync;
    const fsync = fs.fsync;
    const seen = (fd: number): void => {
      const stats = fs.fstatSync(fd);
      synced.push({ ino: stats.ino, folder: stats.isDirectory(), text: readFileSync(join(dir, 'a.txt'), 'utf8') });
    };
    fs.fsyncSync = (fd: number) => {
      seen(fd);
      fsyncSync(fd);
    };
    (fs as { fsync: typeof fs.fsync }).fsync = ((fd: number, callback: (error: NodeJS.ErrnoException | null) => void) => {
      seen(fd);
      fsync(fd, callback);
    }) as typeof fs.fsync;
    syncBuiltinESMExports();
    let record: { ino: number; checkpoint: string } | null = null;
    try {
      await store.restore({ snapshot: first.snapshot.commit, onProgress: (progress) => {
        if (progress.phase === 'writing' && progress.done === 0) {
          const file = join(dir, '.git', 'chant-last-restore');
          record = { ino: fs.statSync(file).ino, checkpoint: JSON.parse(readFileSync(file, 'utf8')).checkpoint };
        }
      } });
    } finally {
      fs.fsyncSync = fsyncSync;
      (fs as { fsync: typeof fs.fsync }).fsync = fsync;
      syncBuiltinESMExports();
    }
    assert.ok(record !== null);
    const written = record as { ino: number; checkpoint: string };
    assert.ok(synced.some((sync) => !sync.folder && sync.ino === written.ino && sync.text === 'precious\n'), 'the record was synced before a file was written');
    const gitDir = fs.statSync(join(dir, '.git')).ino;
    assert.ok(synced.some((sync) => sync.folder && sync.ino === gitDir && sync.text === 'precious\n'), 'the git directory, where it was renamed, was synced before a file was written');
    assert.equal(readFileSync(join(dir, 'a.txt'), 'utf8'), 'two\n');
  });
  it('keeps the checkpoint of a restore killed partway, and the notice names it as the prune wrote it again, so restoring it still gives back what was there', async () => {
    const dir = makeRepo({ 'a.txt': 'one\n' });
    const store = new WipStore({ cwd: dir });
    writeFiles(dir, { 'a.txt': 'two\n' });
    const first = await store.save({ label: 'two' });
    writeFiles(dir, { 'a.txt': 'precious\n' });
    const done = await store.restore({ snapshot: first.snapshot.commit });
    // As a restore killed partway leaves it: its mark, naming the checkpoint that holds the precious file.
    writeFileSync(join(dir, '.git', 'chant-restoring'), `${JSON.stringify({ branch: 'main', snapshot: first.snapshot.commit, checkpoint: done.checkpoint.snapshot.commit })}\n`);
    writeFiles(dir, { 'a.txt': 'later\n' });
    await store.save({ label: 'later' });
    await store.prune({ keepLast: 1, gc: true });
    const notice = (await store.list()).interruptedRestore;
    assert.ok(notice !== undefined, 'the notice stays until a restore ends');
    await store.restore({ snapshot: notice.checkpoint });
    assert.equal(readFileSync(join(dir, 'a.txt'), 'utf8'), 'precious\n');
  });
});
