import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, it } from 'node:test';
import { assertRefusal, assertValidDocument, git, makeRepo, refsOf, runCli, stateOf, treeOf, writeFiles } from './helpers.js';
import { bareRemote } from './remotes.js';
import { Replicator, Policy, SimpleGitRunner, WipStore } from '../lib/index.js';

const read = (dir: string, path: string) => readFileSync(join(dir, path), 'utf8');

/** A repository with a saved turn, then a working tree that moved on from it. */
async function movedOn(): Promise<{ dir: string; store: WipStore; turn: string }> {
  const dir = makeRepo({ 'a.txt': 'a\n', 'src/x.ts': 'x 0\n', 'src/y.ts': 'y 0\n', 'notes.md': 'notes 0\n' });
  const store = new WipStore({ cwd: dir, policy: null });
  writeFiles(dir, { 'a.txt': 'a 1\n', 'src/x.ts': 'x 1\n', 'b.txt': 'b 1\n' });
  const turn = (await store.save({ label: 'turn:1' })).snapshot.commit;
  writeFiles(dir, { 'a.txt': 'a 2\n', 'src/x.ts': 'x 2\n', 'src/new.ts': 'new 2\n', 'b.txt': null, 'notes.md': 'notes 2\n' });
  git(dir, ['add', 'notes.md']);
  return { dir, store, turn };
}

describe('a restore plan', () => {
  it('says what a restore would write and remove, writes nothing, and the restore it previews goes through with its fingerprint', async () => {
    const { dir, store, turn } = await movedOn();
    const before = stateOf(dir);
    const plan = await store.plan({ snapshot: turn });
    assert.deepEqual(stateOf(dir), before, 'no ref, index or file written');
    assert.equal(plan.snapshot.commit, turn);
    assert.deepEqual(plan.write, ['a.txt', 'b.txt', 'notes.md', 'src/x.ts']);
    assert.deepEqual(plan.remove, ['src/new.ts']);
    assert.deepEqual(plan.refused, []);
    assert.equal(plan.refusal, null);
    assert.equal(plan.only, null);
    assert.match(plan.fingerprint, /^[0-9a-f]{64}$/);
    assert.equal((await store.plan({ snapshot: turn })).fingerprint, plan.fingerprint, 'the same tree, index and HEAD give the same fingerprint');

    const restored = await store.restore({ snapshot: turn, expect: plan.fingerprint });
    assert.deepEqual(restored.written, plan.write);
    assert.deepEqual(restored.removed, plan.remove);
    assert.deepEqual(restored.paths, [...plan.write, ...plan.remove].sort());
    assert.equal(restored.only, undefined, 'a whole restore has no only');
    assert.equal(read(dir, 'b.txt'), 'b 1\n');
  });

  it('builds its tree from git status where a save would, and the restore (staged through an index) takes its fingerprint', async () => {
    const { dir, turn } = await movedOn();
    // b.txt, which the turn holds, comes back too large for the checkpoint to take.
    writeFiles(dir, { 'b.txt': 'x'.repeat(64) });
    // status staging, as a large index gets by default.
    const store = new WipStore({ cwd: dir, policy: null, staging: 'status', maxFileSize: 32 });
    const plan = await store.plan({ snapshot: turn, paths: ['a.txt', 'src'] });
    assert.deepEqual([plan.write, plan.remove, plan.refusal], [['a.txt', 'src/x.ts'], ['src/new.ts'], null]);
    const whole = await store.plan({ snapshot: turn });
    assert.ok(whole.refused.some((path) => path.path === 'b.txt' && path.reason.startsWith('too-large: the checkpoint could not take it')), 'a file the checkpoint cannot take is in the way');
    assert.equal(whole.refusal?.code, 'wip-restore-blocked');
    const index = new WipStore({ cwd: dir, policy: null, staging: 'index', maxFileSize: 32 });
    assert.deepEqual((await index.plan({ snapshot: turn })).refused, whole.refused, 'as the plan through an index finds it');
    const viaIndex = await index.plan({ snapshot: turn, paths: ['a.txt', 'src'] });
    assert.equal(viaIndex.fingerprint, plan.fingerprint, 'both stagings see the same tree');
    const restored = await store.restore({ snapshot: turn, paths: ['a.txt', 'src'], expect: plan.fingerprint });
    assert.deepEqual([restored.written, restored.removed], [plan.write, plan.remove]);
  });

  it('plans a snapshot named by its id with the git processes of a save: no wip tip, target commit, object type or diff read through git', async () => {
    const dir = makeRepo({ 'a.txt': 'a\n', 'src/x.ts': 'x 0\n' });
    const inner = new SimpleGitRunner(dir);
    const calls: string[][] = [];
    const store = new WipStore({ cwd: dir, policy: null, staging: 'status', git: { run: (args, options) => (calls.push(args.filter((arg) => arg !== '-c' && !arg.startsWith('core.'))), inner.run(args, options)) } });
    writeFiles(dir, { 'a.txt': 'a 1\n' });
    const turn = (await store.save({ label: 'turn:1' })).snapshot.commit;
    writeFiles(dir, { 'a.txt': 'a 2\n', 'src/x.ts': null });
    calls.length = 0;
    const plan = await store.plan({ snapshot: turn });
    assert.deepEqual([plan.write, plan.remove, plan.refusal], [['a.txt', 'src/x.ts'], [], null]);
    const commands = calls.map((args) => args.slice(0, 2).join(' '));
    assert.deepEqual(commands.filter((command) => /^(for-each-ref|cat-file)/.test(command)), [], 'the trees a save reads are read from their loose files too');
    assert.deepEqual(commands.filter((command) => command.startsWith('diff-tree')), [], 'the diff is read from the trees\' loose files');
    // By a name git resolves, the target is read through git, as before; the fingerprint is the same.
    calls.length = 0;
    const named = await store.plan({ snapshot: turn.slice(0, 12) });
    assert.equal(named.fingerprint, plan.fingerprint);
    assert.equal(calls.filter((args) => args[0] === 'cat-file').length, 1);
  });

  it('refuses a restore with wip-plan-stale, changing nothing, when a file, the index or HEAD moved since the plan', async () => {
    const { dir, store, turn } = await movedOn();
    const moves: Array<[string, () => void]> = [
      ['a file changed', () => writeFiles(dir, { 'a.txt': 'a 3\n' })],
      ['a file staged', () => git(dir, ['add', 'a.txt'])],
      ['HEAD moved', () => git(dir, ['commit', '-q', '--no-verify', '-m', 'moved', '--', 'a.txt'])],
    ];
    for (const [what, move] of moves) {
      const { fingerprint } = await store.plan({ snapshot: turn });
      move();
      const before = stateOf(dir);
      await assertRefusal(() => store.restore({ snapshot: turn, expect: fingerprint }), 'wip-plan-stale', /changed since the plan/);
      assert.deepEqual(stateOf(dir), before, `${what}: nothing changed, no checkpoint taken`);
    }
    await assertRefusal(() => store.restore({ snapshot: turn, expect: 'not a fingerprint' }), 'write-usage-invalid');
  });

  it('binds its fingerprint to the snapshot and the paths planned: the restore of another, or of the whole tree, refuses it', async () => {
    const { dir, store, turn } = await movedOn();
    writeFiles(dir, { 'c.txt': 'c\n' });
    const other = (await store.save({ label: 'turn:2' })).snapshot.commit;
    const ofOther = await store.plan({ snapshot: other });
    const ofPaths = await store.plan({ snapshot: turn, paths: ['a.txt'] });
    const before = stateOf(dir);
    await assertRefusal(() => store.restore({ snapshot: turn, expect: ofOther.fingerprint }), 'wip-plan-stale', /another snapshot or other paths/);
    await assertRefusal(() => store.restore({ snapshot: turn, expect: ofPaths.fingerprint }), 'wip-plan-stale');
    await assertRefusal(() => store.restore({ snapshot: turn, paths: ['src'], expect: ofPaths.fingerprint }), 'wip-plan-stale');
    assert.deepEqual(stateOf(dir), before, 'nothing written, no checkpoint taken');
    const done = await store.restore({ snapshot: turn, paths: ['a.txt'], expect: ofPaths.fingerprint });
    assert.deepEqual(done.written, ['a.txt']);
  });

  it('binds its fingerprint to the list of paths itself: paths a and b are not the path "a\\nb", nor a path named whole the whole tree', async () => {
    const dir = makeRepo({ 'a': 'a 0\n', 'b': 'b 0\n', 'a\nb': 'ab 0\n', 'whole': 'whole 0\n' });
    writeFiles(dir, { 'a': 'a 1\n', 'b': 'b 1\n', 'a\nb': 'ab 1\n', 'whole': 'whole 1\n' });
    const turn = (await runCli(dir, ['workspace', 'wip', 'save', '--json'])).doc.snapshot.commit;
    writeFiles(dir, { 'a': 'a 2\n', 'b': 'b 2\n', 'a\nb': 'ab 2\n', 'whole': 'whole 2\n' });
    // Refs and files, not the index's bytes: the git status stateOf runs may rewrite the stat data
    // of entries written in the same second as the index.
    const before = { refs: refsOf(dir), tree: treeOf(dir) };
    const cases: Array<[string[], string[]]> = [[['a', 'b'], ['a\nb']], [[], ['whole']]];
    for (const [planned, restored] of cases) {
      const dry = await runCli(dir, ['workspace', 'wip', 'restore', turn, '--dry-run', ...(planned.length > 0 ? ['--', ...planned] : [])]);
      assert.equal(dry.code, 0, dry.stdout);
      const run = await runCli(dir, ['workspace', 'wip', 'restore', turn, '--expect', dry.doc.fingerprint, '--', ...restored]);
      assert.deepEqual([run.code, run.doc.error?.code], [1, 'wip-plan-stale'], run.stdout);
    }
    assert.deepEqual({ refs: refsOf(dir), tree: treeOf(dir) }, before, 'nothing written, no checkpoint taken');
  });

  it('names a file the checkpoint left out for its size once, by why, not as an ignored file', async () => {
    const dir = makeRepo({ 'base.txt': 'base\n' });
    const store = new WipStore({ cwd: dir, policy: null, maxFileSize: 1000 });
    writeFiles(dir, { 'big.bin': 'small\n' });
    const turn = (await store.save({ label: 'small' })).snapshot.commit;
    writeFiles(dir, { 'big.bin': 'x'.repeat(5000) });
    const plan = await store.plan({ snapshot: turn });
    assert.deepEqual(plan.refused.map((entry) => entry.path), ['big.bin']);
    assert.match(plan.refused[0]?.reason ?? '', /^too-large: /);
    await assertRefusal(() => store.restore({ snapshot: turn }), 'wip-restore-blocked', /big\.bin \(too-large/);
  });

  it('meets a conflict in the index as the restore does: the plan and the restore refuse with it, writing nothing', async () => {
    const dir = makeRepo({ 'c.txt': 'base\n' });
    const store = new WipStore({ cwd: dir, policy: null });
    const turn = (await store.save({ label: 'clean' })).snapshot.commit;
    // A conflict's stages with no operation's files beside them (git update-index can leave one so).
    const blob = git(dir, ['hash-object', '-w', '--stdin'], { input: 'theirs\n' }).trim();
    git(dir, ['update-index', '--index-info'], { input: `0 ${'0'.repeat(40)}\tc.txt\n100644 ${blob} 1\tc.txt\n100644 ${blob} 3\tc.txt\n` });
    writeFiles(dir, { 'c.txt': 'mine\n' });
    const before = stateOf(dir);
    await assertRefusal(() => store.plan({ snapshot: turn }), 'wip-restore-blocked', /the index holds a conflict/);
    await assertRefusal(() => store.restore({ snapshot: turn }), 'wip-restore-blocked', /the index holds a conflict/);
    assert.deepEqual(stateOf(dir), before);
  });

  it('lists what is in the way and the refusal the restore would end with', async () => {
    const dir = makeRepo();
    const store = new WipStore({ cwd: dir, policy: null });
    writeFiles(dir, { 'build.log': 'in the snapshot\n', 'a.txt': 'one\n' });
    const turn = (await store.save({})).snapshot.commit;
    writeFiles(dir, { '.gitignore': '*.log\n', 'build.log': 'precious and ignored\n', 'a.txt': 'two\n' });
    const before = stateOf(dir);
    const plan = await store.plan({ snapshot: turn });
    assert.deepEqual(plan.refused.map((entry) => entry.path), ['build.log']);
    assert.match(plan.refused[0]?.reason ?? '', /ignored/);
    assert.equal(plan.refusal?.code, 'wip-restore-blocked');
    assert.deepEqual(plan.write, ['a.txt', 'build.log']);
    assert.deepEqual(plan.remove, ['.gitignore']);
    await assertRefusal(() => store.restore({ snapshot: turn }), 'wip-restore-blocked');
    assert.deepEqual(stateOf(dir), before);
    // Limited to a.txt, nothing is in the way.
    const partial = await store.plan({ snapshot: turn, paths: ['a.txt'] });
    assert.deepEqual([partial.write, partial.remove, partial.refused, partial.refusal], [['a.txt'], [], [], null]);
  });
});

describe('a partial restore', () => {
  it('puts back only the named folder and file, leaves the rest and the index alone, and its checkpoint undoes it', async () => {
    const { dir, store, turn } = await movedOn();
    const before = stateOf(dir);
    const staged = git(dir, ['diff', '--cached', '--name-only']);
    const restored = await store.restore({ snapshot: turn, paths: ['src/', 'b.txt'] });
    assert.deepEqual(restored.only, ['b.txt', 'src']);
    assert.deepEqual(restored.written, ['b.txt', 'src/x.ts']);
    assert.deepEqual(restored.removed, ['src/new.ts']);
    assert.deepEqual(restored.paths, ['b.txt', 'src/new.ts', 'src/x.ts']);
    assert.equal(read(dir, 'src/x.ts'), 'x 1\n');
    assert.equal(read(dir, 'b.txt'), 'b 1\n');
    assert.equal(read(dir, 'a.txt'), 'a 2\n', 'a path not named is left alone');
    assert.equal(read(dir, 'notes.md'), 'notes 2\n');
    assert.equal(git(dir, ['diff', '--cached', '--name-only']), staged, 'the index is left alone');
    assert.equal(restored.checkpoint.snapshot.kind, 'pre-restore');

    await store.restore({ snapshot: restored.checkpoint.snapshot.commit });
    const after = stateOf(dir);
    assert.deepEqual(after.tree, before.tree, 'the undo puts every file back');
    assert.equal(after.status, before.status, 'and the index');
  });

  it('plans a partial restore as it runs, and refuses paths that name nothing or leave the repository', async () => {
    const { dir, store, turn } = await movedOn();
    const plan = await store.plan({ snapshot: turn, paths: ['src'] });
    assert.deepEqual([plan.only, plan.write, plan.remove], [['src'], ['src/x.ts'], ['src/new.ts']]);
    const restored = await store.restore({ snapshot: turn, paths: ['src'], expect: plan.fingerprint });
    assert.deepEqual([restored.written, restored.removed], [plan.write, plan.remove]);
    const refs = refsOf(dir);
    for (const paths of [['nowhere.txt'], ['../a.txt'], ['/etc/passwd'], []]) {
      await assertRefusal(() => store.restore({ snapshot: turn, paths }), 'write-usage-invalid');
      await assertRefusal(() => store.plan({ snapshot: turn, paths }), 'write-usage-invalid');
    }
    assert.equal(refsOf(dir), refs, 'no checkpoint taken');
    // A path both sides hold alike is no error: there is nothing to do.
    assert.deepEqual((await store.plan({ snapshot: turn, paths: ['src/y.ts'] })).write, []);
  });
});

describe('restore --dry-run, --expect and paths on the CLI', () => {
  it('takes --max-file-size, so that a file saved under a larger limit can be put back over a changed one', async () => {
    const dir = makeRepo({ 'chant.workspace.json': `${JSON.stringify({ wip: { maxFileSize: '1k' }, members: [{ name: 'app', box: {} }] })}\n` });
    writeFiles(dir, { 'model.bin': 'a'.repeat(5000) });
    const saved = await runCli(dir, ['workspace', 'wip', 'save', '--max-file-size', '10k', '--json']);
    assert.equal(saved.code, 0, saved.stdout);
    writeFiles(dir, { 'model.bin': 'b'.repeat(6000) });
    const refused = await runCli(dir, ['workspace', 'wip', 'restore', saved.doc.snapshot.commit, '--json']);
    assert.equal(refused.code, 1, refused.stdout);
    assert.match(refused.doc.error.message, /model\.bin \(too-large: the checkpoint could not take it \(a larger --max-file-size/);
    const restored = await runCli(dir, ['workspace', 'wip', 'restore', saved.doc.snapshot.commit, '--max-file-size', '10k', '--json']);
    assert.equal(restored.code, 0, restored.stdout);
    assert.equal(read(dir, 'model.bin'), 'a'.repeat(5000));
    // The checkpoint took the changed file under the same limit: the undo gives it back.
    await runCli(dir, ['workspace', 'wip', 'restore', restored.doc.checkpoint.snapshot.commit, '--max-file-size', '10k', '--json']);
    assert.equal(read(dir, 'model.bin'), 'b'.repeat(6000));
  });

  it('prints the plan as a wip-changes document, refuses a stale --expect, and restores paths after --', async () => {
    const { dir, turn } = await movedOn();
    const before = stateOf(dir);
    const dry = await runCli(dir, ['workspace', 'wip', 'restore', turn, '--dry-run', '--json']);
    assert.equal(dry.code, 0, dry.stdout);
    assert.equal(dry.doc.action, 'plan');
    assert.equal(dry.doc.$schema, 'https://intentius.io/chant/schemas/workspace/wip-changes/v1/wip-changes.schema.json');
    assert.deepEqual(dry.doc.remove, ['src/new.ts']);
    await assertValidDocument(dry.doc, { oursOnly: true });
    assert.deepEqual(stateOf(dir), before, 'a dry run writes nothing');

    writeFiles(dir, { 'a.txt': 'a 3\n' });
    const stale = await runCli(dir, ['workspace', 'wip', 'restore', turn, '--expect', dry.doc.fingerprint]);
    assert.equal(stale.code, 1);
    assert.equal(stale.doc.action, 'restore');
    assert.equal(stale.doc.error.code, 'wip-plan-stale');
    await assertValidDocument(stale.doc, { oursOnly: true });

    // A dry run given --expect would print a plan with no refusal for a stale fingerprint.
    const dryStale = await runCli(dir, ['workspace', 'wip', 'restore', turn, '--dry-run', '--expect', dry.doc.fingerprint]);
    assert.equal(dryStale.code, 1, dryStale.stdout);
    assert.deepEqual([dryStale.doc.action, dryStale.doc.error.code], ['plan', 'write-usage-invalid']);
    assert.match(dryStale.doc.error.message, /--expect is checked by the restore, not by --dry-run/);
    await assertValidDocument(dryStale.doc, { oursOnly: true });

    const partial = await runCli(dir, ['workspace', 'wip', 'restore', turn, '--', 'src']);
    assert.equal(partial.code, 0, partial.stdout);
    assert.deepEqual([partial.doc.only, partial.doc.written, partial.doc.removed], [['src'], ['src/x.ts'], ['src/new.ts']]);
    assert.equal(read(dir, 'a.txt'), 'a 3\n');
    await assertValidDocument(partial.doc);
    // A restore document of an earlier v1 writer, without written and removed, still follows v1.
    const { written: _written, removed: _removed, ...earlier } = partial.doc;
    await assertValidDocument(earlier);

    const refusedPlan = await runCli(dir, ['workspace', 'wip', 'restore', 'HEAD', '--dry-run']);
    assert.equal(refusedPlan.code, 1);
    assert.deepEqual([refusedPlan.doc.action, refusedPlan.doc.error.code], ['plan', 'wip-snapshot-unknown']);
    await assertValidDocument(refusedPlan.doc, { oursOnly: true });
  });
});

describe('restore -- with no path after it', () => {
  it('names no path, which is refused, rather than restoring the whole tree; with --dry-run too', async () => {
    const { dir, turn } = await movedOn();
    const before = stateOf(dir);
    // What a script's empty list of paths gives: restore S -- "${paths[@]}".
    const lines = [[turn, '--'], [turn, '--dry-run', '--'], ['--dry-run', turn, '--'], ['--'], [turn, '--by', 'me', '--'], [turn, '--by=me', '--max-file-size', '1M', '--']];
    for (const words of lines) {
      const run = await runCli(dir, ['workspace', 'wip', 'restore', ...words]);
      assert.deepEqual([run.code, run.doc.error?.code], [1, 'write-usage-invalid'], `${words.join(' ')}: ${run.stdout}`);
      assert.match(run.doc.error.message, /names no path/);
    }
    assert.deepEqual(stateOf(dir), before, 'nothing written, no checkpoint taken');
    // A -- before the snapshot still ends the options alone, and one after it with paths names them.
    const dry = await runCli(dir, ['workspace', 'wip', 'restore', '--dry-run', '--', turn]);
    assert.deepEqual([dry.code, dry.doc.only], [0, null], dry.stdout);
    const partial = await runCli(dir, ['workspace', 'wip', 'restore', '--dry-run', turn, '--', 'src']);
    assert.deepEqual([partial.code, partial.doc.only], [0, ['src']], partial.stdout);
  });
});

describe('one Policy for both classes', () => {
  it('a WipStore takes the policy a Replicator exposes, and its save pushes by it', async () => {
    const dir = makeRepo();
    const remote = bareRemote();
    git(dir, ['remote', 'add', 'origin', remote]);
    const replicator = new Replicator({ cwd: dir, policy: Policy.from({ remote: 'origin', refs: ['wip'], on: ['save'] }, { box: 'app' }) });
    const store = new WipStore({ cwd: dir, policy: replicator.policy });
    writeFiles(dir, { 'a.txt': 'pushed\n' });
    const saved = await store.save({ label: 'turn:1' });
    assert.deepEqual(saved.replication?.pushed.map((entry) => entry.ref), ['refs/chant/wip/main']);
    assert.equal(git(remote, ['rev-parse', 'refs/chant/wip/main']).trim(), saved.snapshot.commit);
  });
});
