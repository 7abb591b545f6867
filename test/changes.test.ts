import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { chmodSync, readFileSync, symlinkSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, it } from 'node:test';
import { git, makeRepo, numstat, refsOf, ROOT, tempDir, writeFiles } from './helpers.js';
import { isWipError, WipStore } from '../lib/index.js';
import { validateDocument } from '../lib/documents/index.js';
import { changesFailureDocument, diffDocument, showDocument } from '../lib/documents/document.js';
import type { GitRunner } from '../lib/index.js';
import { SimpleGitRunner } from '../lib/index.js';

/** A runner that counts the git processes of each command. */
function counting(dir: string): { runner: GitRunner; calls: string[][] } {
  const inner = new SimpleGitRunner(dir);
  const calls: string[][] = [];
  return { calls, runner: { run: (args, options) => (calls.push([...args]), inner.run(args, options)) } };
}

describe('what changed', () => {
  it('diffs two snapshots path by path: kind, modes, ids and line counts, as git sees them', async () => {
    const dir = makeRepo({ 'keep.txt': 'same\n', 'edit.txt': 'a\nb\nc\n', 'gone.txt': 'bye\n', 'tool.sh': 'echo\n' });
    const store = new WipStore({ cwd: dir, policy: null });
    const one = (await store.save({ label: 'one' })).snapshot;
    writeFiles(dir, { 'edit.txt': 'a\nB\nc\nd\n', 'gone.txt': null, 'new/file.md': 'hello\nworld\n', 'blob.bin': '\0\u0001binary' });
    chmodSync(join(dir, 'tool.sh'), 0o755);
    symlinkSync('keep.txt', join(dir, 'link'));
    const two = (await store.save({ label: 'two' })).snapshot;
    const result = await store.diff({ from: one.commit, to: two.commit });
    assert.equal(result.from.snapshot?.commit, one.commit);
    assert.equal(result.to.snapshot?.label, 'two');
    const raw = git(dir, ['diff-tree', '-r', '--no-renames', one.commit, two.commit]).trim().split('\n');
    assert.equal(result.paths.length, raw.length, 'every path git lists');
    const byPath = Object.fromEntries(result.paths.map((change) => [change.path, change]));
    assert.deepEqual(byPath['edit.txt'] && { ...byPath['edit.txt'], oldId: undefined, newId: undefined },
      { path: 'edit.txt', change: 'modified', oldMode: '100644', newMode: '100644', oldId: undefined, newId: undefined, added: 2, removed: 1 });
    assert.equal(byPath['edit.txt']?.newId, git(dir, ['rev-parse', `${two.commit}:edit.txt`]).trim());
    assert.deepEqual([byPath['gone.txt']?.change, byPath['gone.txt']?.newMode, byPath['gone.txt']?.newId, byPath['gone.txt']?.removed], ['removed', null, null, 1]);
    assert.deepEqual([byPath['new/file.md']?.change, byPath['new/file.md']?.oldMode, byPath['new/file.md']?.added], ['added', null, 2]);
    assert.deepEqual([byPath['blob.bin']?.added, byPath['blob.bin']?.removed], [null, null], 'a binary file has no line counts');
    assert.equal(byPath['link']?.newMode, '120000');
    assert.deepEqual([byPath['tool.sh']?.oldMode, byPath['tool.sh']?.newMode], ['100644', '100755']);
    assert.deepEqual({ files: result.files, added: result.added, removed: result.removed }, numstat(dir, one.commit, two.commit));
    assert.deepEqual(result.paths.map((change) => change.path), [...result.paths.map((change) => change.path)].sort());
    assert.deepEqual(validateDocument(diffDocument(result)), []);
  });

  it('diffs a snapshot against HEAD and against the working tree, untracked files included, ignored ones not, and writes nothing', async () => {
    const dir = makeRepo({ 'a.txt': '1\n', '.gitignore': '*.log\n' });
    const store = new WipStore({ cwd: dir, policy: null });
    writeFiles(dir, { 'a.txt': '1\n2\n' });
    const saved = (await store.save({ label: 'turn' })).snapshot;
    const head = await store.diff({ from: saved.commit, to: 'HEAD' });
    assert.equal(head.to.snapshot, null, 'HEAD is no snapshot');
    assert.equal(head.to.commit, git(dir, ['rev-parse', 'HEAD']).trim());
    assert.deepEqual(head.paths.map((change) => [change.path, change.added, change.removed]), [['a.txt', 0, 1]]);

    writeFiles(dir, { 'a.txt': '1\n2\n3\n', 'notes.md': 'untracked\n', 'debug.log': 'ignored\n' });
    const index = readFileSync(join(dir, '.git', 'index'));
    const refs = refsOf(dir);
    const status = git(dir, ['status', '--porcelain']);
    const working = await store.diff({ from: saved.commit });
    assert.equal(working.to.commit, null);
    assert.deepEqual(working.paths.map((change) => [change.path, change.change, change.added]), [['a.txt', 'modified', 1], ['notes.md', 'added', 1]]);
    assert.deepEqual(readFileSync(join(dir, '.git', 'index')), index, 'the index is not written');
    assert.equal(refsOf(dir), refs);
    assert.equal(git(dir, ['status', '--porcelain']), status);
    assert.deepEqual(git(dir, ['ls-files', '--others', '--exclude-standard', '--', '.git']), '');
  });

  it('prints a path that is not UTF-8 as show does, each with its own line counts, where two such names read alike', async () => {
    const dir = makeRepo({ 'a.txt': '1\n' });
    const store = new WipStore({ cwd: dir, policy: null });
    writeFileSync(Buffer.concat([Buffer.from(`${dir}/`), Buffer.from([0x66, 0xfe])]), 'one\n');
    writeFileSync(Buffer.concat([Buffer.from(`${dir}/`), Buffer.from([0x66, 0xff])]), 'one\ntwo\nthree\n');
    writeFiles(dir, { 'a.txt': '1\n2\n' });
    const saved = (await store.save({})).snapshot;
    const shown = await store.show({ snapshot: saved.commit });
    assert.deepEqual(shown.files.map((file) => file.path), ['a.txt', '"f\\376"', '"f\\377"']);
    for (const turn of [await store.diff({ from: 'HEAD', to: saved.commit }), await store.diff({ from: 'HEAD' })]) {
      assert.deepEqual(turn.paths.map((change) => [change.path, change.added]), [['a.txt', 1], ['"f\\376"', 1], ['"f\\377"', 3]], 'in the order of their bytes, as show lists them');
      assert.equal(turn.added, 5);
    }
    // A name that is UTF-8 but quoted itself is quoted again, as show prints it: printed as it is,
    // it would read as the name inside the quotes.
    writeFiles(dir, { '"a.txt"': 'quoted\n' });
    assert.deepEqual((await store.diff({ from: saved.commit })).paths.map((change) => change.path), ['"\\"a.txt\\""']);
  });

  it('diffs a snapshot against the working tree while a save of the same worktree runs, never taking every file for removed', async () => {
    const dir = makeRepo({ 'a.txt': '1\n', 'b.txt': 'b\n' });
    const saved = (await new WipStore({ cwd: dir, policy: null }).save()).snapshot;
    writeFiles(dir, { 'a.txt': '2\n' });
    const inner = new SimpleGitRunner(dir);
    const saves: Array<{ status: number | null; stdout: string; stderr: string }> = [];
    // Just before the diff writes the tree of its temporary index, another process saves the
    // same worktree, giving up at once on a lock held: a save's cleanup takes any temporary
    // index of the worktree it did not write.
    // A diff of its own, given up as the save is, is refused with a document of its schema.
    const code = `const { changesFailureDocument, WipStore } = await import(${JSON.stringify(join(ROOT, 'lib', 'index.ts'))}); const { validateDocument } = await import(${JSON.stringify(join(ROOT, 'lib', 'documents', 'index.ts'))});
      const store = new WipStore({ cwd: ${JSON.stringify(dir)}, policy: null, lockWaitMs: 0 });
      await store.save({ label: 'meanwhile' }).catch(() => undefined);
      const refused = await store.diff({ from: ${JSON.stringify(saved.commit)} }).then(() => null, (error) => error);
      process.stdout.write(JSON.stringify(refused === null ? null : [refused.code, validateDocument(changesFailureDocument('diff', refused))]));`;
    const runner: GitRunner = {
      run: (args, options) => {
        if (args.includes('write-tree') && options?.env?.GIT_INDEX_FILE !== undefined && saves.length === 0) {
          saves.push(spawnSync(process.execPath, ['--import', 'tsx', '--input-type=module', '-e', code], { cwd: ROOT, encoding: 'utf8' }));
        }
        return inner.run(args, options);
      },
    };
    const working = await new WipStore({ cwd: dir, policy: null, git: runner }).diff({ from: saved.commit });
    assert.deepEqual(saves.map((save) => save.status), [0], saves[0]?.stderr);
    assert.deepEqual(JSON.parse(saves[0]?.stdout ?? ''), ['wip-race', []]);
    assert.deepEqual(working.paths.map((change) => [change.path, change.change]), [['a.txt', 'modified']]);
  });

  it('counts lines whatever core.bigFileThreshold the user set, as git does at its default', async () => {
    const dir = makeRepo({ 'a.txt': '1\n2\n3\n' });
    git(dir, ['config', 'core.bigFileThreshold', '1']);
    const store = new WipStore({ cwd: dir, policy: null });
    writeFiles(dir, { 'a.txt': '1\n3\n4\n', 'b.txt': 'new\n' });
    const saved = (await store.save({})).snapshot;
    const counts = { files: 2, added: 2, removed: 1 };
    assert.deepEqual(numstat(dir, saved.head, saved.commit), { files: 2, added: 0, removed: 0 }, 'git itself reads both files as binary under the setting');
    assert.deepEqual((await store.list({ changes: true })).branches[0]?.snapshots[0]?.changes, { against: saved.head, ...counts });
    assert.deepEqual((await store.show({ snapshot: saved.commit })).changes, { against: saved.head, ...counts });
    const turn = await store.diff({ from: 'HEAD', to: saved.commit });
    assert.deepEqual(turn.paths.map((change) => [change.path, change.added, change.removed]), [['a.txt', 1, 1], ['b.txt', 1, 0]]);
  });

  it('shows one snapshot with its files and what it changed against the one before it', async () => {
    const dir = makeRepo({ 'a.txt': '1\n' });
    const store = new WipStore({ cwd: dir, policy: null });
    writeFiles(dir, { 'b/c.txt': 'x\ny\n' });
    const first = (await store.save({ label: 'one' })).snapshot;
    writeFiles(dir, { 'a.txt': '2\n', 'b/c.txt': null });
    const second = (await store.save({ label: 'two' })).snapshot;
    const shown = await store.show({ snapshot: second.commit });
    assert.equal(shown.snapshot.commit, second.commit);
    assert.deepEqual(shown.files.map((file) => [file.path, file.mode, file.id]), [['a.txt', '100644', git(dir, ['rev-parse', `${second.commit}:a.txt`]).trim()]]);
    assert.deepEqual(shown.changes, { against: first.commit, ...numstat(dir, first.commit, second.commit) });
    const firstShown = await store.show({ snapshot: first.commit });
    assert.deepEqual(firstShown.changes, { against: first.head, ...numstat(dir, first.head, first.commit) }, 'the first of a chain counts against the commit it was taken on');
    assert.deepEqual(validateDocument(showDocument(shown)), []);

    await assert.rejects(store.show({ snapshot: 'HEAD' }), (error) => isWipError(error, 'wip-snapshot-unknown'));
    await assert.rejects(store.show({ snapshot: '--output=x' }), (error) => isWipError(error, 'wip-snapshot-unknown'));
    await assert.rejects(store.diff({ from: 'no-such-thing' }), (error) => isWipError(error, 'wip-snapshot-unknown'));
    await assert.rejects(store.show({ snapshot: '' }), (error) => isWipError(error, 'write-usage-invalid'));
    assert.deepEqual(validateDocument(changesFailureDocument('show', await store.show({ snapshot: 'HEAD' }).catch((error) => error))), []);
  });

  it('gives each snapshot of the read its change counts, asking git only about the snapshots it has not counted before', async () => {
    const dir = makeRepo({ 'a.txt': '0\n' });
    const { runner, calls } = counting(dir);
    const store = new WipStore({ cwd: dir, policy: null, git: runner });
    const saved = [];
    for (let i = 1; i <= 5; i += 1) {
      writeFiles(dir, { 'a.txt': `${'line\n'.repeat(i)}`, [`f${i}.txt`]: `${i}\n` });
      saved.push((await store.save({ label: `turn:${i}` })).snapshot);
    }
    const plain = await store.list();
    assert.equal(plain.branches[0]?.snapshots[0]?.changes, undefined, 'only when asked');
    calls.length = 0;
    const read = await store.list({ changes: true });
    const snapshots = read.branches[0]?.snapshots ?? [];
    assert.equal(snapshots.length, 5);
    for (const [index, snapshot] of snapshots.entries()) {
      const against = snapshots[index + 1]?.commit ?? snapshot.head;
      assert.deepEqual(snapshot.changes, { against, ...numstat(dir, against, snapshot.commit) }, `counts of ${snapshot.label}`);
    }
    assert.equal(calls.filter((args) => args[0] === 'diff-tree').length, 1, 'one git process counts them all');

    writeFiles(dir, { 'a.txt': 'six\n' });
    await store.save({ label: 'turn:6' });
    calls.length = 0;
    const after = await store.list({ changes: true });
    const counted = calls.filter((args) => args[0] === 'diff-tree');
    assert.equal(counted.length, 1);
    assert.equal(after.branches[0]?.snapshots[0]?.label, 'turn:6');
    assert.deepEqual(after.branches[0]?.snapshots.slice(1).map((snapshot) => snapshot.changes), snapshots.map((snapshot) => snapshot.changes));
    calls.length = 0;
    await store.list({ changes: true });
    assert.equal(calls.filter((args) => args[0] === 'diff-tree').length, 0, 'a read with nothing new counts nothing');
  });

  it('stops on a cancelled signal with wip-cancelled, not git-failed', async () => {
    const dir = makeRepo();
    const store = new WipStore({ cwd: dir, policy: null });
    const saved = (await store.save()).snapshot;
    const controller = new AbortController();
    controller.abort(new Error('the panel closed'));
    await assert.rejects(store.diff({ from: saved.commit, signal: controller.signal }), (error) => isWipError(error, 'wip-cancelled'));
    await assert.rejects(store.show({ snapshot: saved.commit, signal: controller.signal }), (error) => isWipError(error, 'wip-cancelled'));
  });

  it('diffs two snapshots named by their ids with one git process (their loose commits read in-process), other names with two side by side, and refuses an unknown side, a folder outside git and a cancel each with its own code', async () => {
    const dir = makeRepo();
    writeFiles(dir, { 'a.txt': 'one\n' });
    const { runner, calls } = counting(dir);
    const store = new WipStore({ cwd: dir, policy: null, git: runner });
    const one = (await store.save()).snapshot;
    writeFiles(dir, { 'a.txt': 'one\ntwo\n', 'b.txt': 'b\n' });
    const two = (await store.save()).snapshot;
    calls.length = 0;
    const diffed = await store.diff({ from: one.commit, to: two.commit });
    assert.deepEqual(diffed.paths.map((path) => [path.change, path.path, path.added, path.removed]), [['modified', 'a.txt', 1, 0], ['added', 'b.txt', 1, 0]]);
    assert.deepEqual([diffed.from.snapshot?.commit, diffed.to.snapshot?.commit], [one.commit, two.commit]);
    assert.deepEqual(calls.map((args) => args[0]), ['diff-tree']);
    calls.length = 0;
    const named = await store.diff({ from: one.commit.slice(0, 12), to: 'refs/chant/wip/main' });
    assert.deepEqual(named.paths, diffed.paths);
    assert.deepEqual([named.from.snapshot?.commit, named.to.snapshot?.commit], [one.commit, two.commit]);
    assert.deepEqual(calls.map((args) => args[0]).sort(), ['cat-file', 'diff-tree']);
    // A packed commit is read by git.
    git(dir, ['gc', '-q']);
    calls.length = 0;
    assert.deepEqual((await store.diff({ from: one.commit, to: two.commit })).paths, diffed.paths);
    assert.deepEqual(calls.map((args) => args[0]).sort(), ['cat-file', 'diff-tree']);
    await assert.rejects(store.diff({ from: '0'.repeat(40), to: two.commit }), (error) => isWipError(error, 'wip-snapshot-unknown') && /0{40}/.test(error.message));
    await assert.rejects(store.diff({ from: one.commit, to: 'no-such-thing' }), (error) => isWipError(error, 'wip-snapshot-unknown') && /no-such-thing/.test(error.message));
    const outside = new WipStore({ cwd: tempDir(), policy: null });
    await assert.rejects(outside.diff({ from: 'HEAD~1', to: 'HEAD' }), (error) => isWipError(error, 'not-a-git-repository'));
    const controller = new AbortController();
    controller.abort(new Error('the panel closed'));
    await assert.rejects(store.diff({ from: one.commit, to: two.commit, signal: controller.signal }), (error) => isWipError(error, 'wip-cancelled'));
  });

  it('diffs two snapshots as git sees them when a replace ref stands for one: both are then read by git', async () => {
    const dir = makeRepo();
    writeFiles(dir, { 'a.txt': 'one\n' });
    const store = new WipStore({ cwd: dir, policy: null });
    const one = (await store.save()).snapshot;
    writeFiles(dir, { 'a.txt': 'two\n' });
    const two = (await store.save()).snapshot;
    assert.equal((await store.diff({ from: one.commit, to: two.commit })).files, 1);
    git(dir, ['replace', two.commit, one.commit]);
    const replaced = await store.diff({ from: one.commit, to: two.commit });
    assert.deepEqual([replaced.files, replaced.to.tree], [0, one.tree]);
    git(dir, ['pack-refs', '--all']);
    assert.deepEqual((await store.diff({ from: one.commit, to: two.commit })).to.tree, one.tree);
  });

  it('counts lines with the working tree\'s attributes as git diff does, and reads both sides in one process whatever their names and labels', async () => {
    const dir = makeRepo();
    writeFiles(dir, { '.gitattributes': '*.dat -diff\n', 'data.dat': 'one\n', 'a.txt': 'one\n' });
    git(dir, ['add', '-A']);
    git(dir, ['commit', '-q', '-m', 'attributes']);
    const store = new WipStore({ cwd: dir, policy: null });
    writeFiles(dir, { 'data.dat': 'two\n', 'a.txt': 'one\ntwo\n' });
    const one = (await store.save({ label: 'naïve ✓ turn' })).snapshot;
    writeFiles(dir, { 'data.dat': 'three\n', 'a.txt': 'three\n' });
    const two = (await store.save({ label: 'größer 🙂' })).snapshot;
    const diffed = await store.diff({ from: one.commit, to: two.commit });
    assert.deepEqual(diffed.paths.map((path) => [path.path, path.added, path.removed]), [['a.txt', 1, 2], ['data.dat', null, null]]);
    assert.deepEqual({ files: diffed.files, added: diffed.added, removed: diffed.removed }, numstat(dir, one.commit, two.commit));
    assert.deepEqual([diffed.from.snapshot?.label, diffed.to.snapshot?.label], ['naïve ✓ turn', 'größer 🙂']);
    const named = await store.diff({ from: 'HEAD', to: `${two.commit.slice(0, 12)}` });
    assert.deepEqual([named.from.commit, named.to.commit], [git(dir, ['rev-parse', 'HEAD']).trim(), two.commit]);
    // git dies on @{u} without an upstream: each side is then read on its own, and the refusal names it.
    await assert.rejects(store.diff({ from: '@{u}', to: two.commit }), (error) => isWipError(error, 'wip-snapshot-unknown') && /@\{u\}/.test(error.message));
    await assert.rejects(store.diff({ from: one.commit, to: '@{u}' }), (error) => isWipError(error, 'wip-snapshot-unknown') && /@\{u\}/.test(error.message));
  });

  it('compares the last snapshot of a page with the one before it on the chain, not with its head', async () => {
    const dir = makeRepo({ 'a.txt': '0\n' });
    const store = new WipStore({ cwd: dir, policy: null });
    for (let i = 1; i <= 5; i += 1) {
      writeFiles(dir, { 'a.txt': 'line\n'.repeat(i) });
      await store.save({ label: `turn:${i}` });
    }
    const whole = (await store.list({ changes: true })).branches[0]?.snapshots ?? [];
    for (const options of [{ limit: 2 }, { limit: 2, before: whole[1]?.commit ?? null }, { limit: 1, before: whole[3]?.commit ?? null }]) {
      const page = (await store.list({ ...options, changes: true })).branches[0]?.snapshots ?? [];
      const from = whole.findIndex((snapshot) => snapshot.commit === page[0]?.commit);
      assert.deepEqual(page, whole.slice(from, from + page.length), JSON.stringify(options));
      const last = page[page.length - 1];
      const against = whole[from + page.length]?.commit ?? last?.head;
      assert.deepEqual(last?.changes, { against, ...numstat(dir, against as string, last?.commit as string) }, `the last of ${JSON.stringify(options)}`);
    }
  });

  it('pages the read: limit keeps the newest, before goes further back, older counts what is left', async () => {
    const dir = makeRepo();
    const store = new WipStore({ cwd: dir, policy: null });
    for (let i = 1; i <= 5; i += 1) {
      writeFiles(dir, { 'a.txt': `${i}\n` });
      await store.save({ label: `turn:${i}` });
    }
    const labels = (result: Awaited<ReturnType<WipStore['list']>>) => result.branches[0]?.snapshots.map((snapshot) => snapshot.label);
    const first = await store.list({ branch: 'main', limit: 2 });
    assert.deepEqual(labels(first), ['turn:5', 'turn:4']);
    assert.equal(first.branches[0]?.older, 3);
    const second = await store.list({ branch: 'main', limit: 2, before: first.branches[0]?.snapshots[1]?.commit ?? null, changes: true });
    assert.deepEqual(labels(second), ['turn:3', 'turn:2']);
    assert.equal(second.branches[0]?.older, 1);
    assert.equal(second.branches[0]?.snapshots[0]?.changes?.files, 1);
    const last = await store.list({ branch: 'main', limit: 2, before: second.branches[0]?.snapshots[1]?.commit ?? null });
    assert.deepEqual([labels(last), last.branches[0]?.older], [['turn:1'], 0]);
    assert.equal((await store.list()).branches[0]?.older, undefined, 'no page asked, no older');
    await assert.rejects(store.list({ limit: 0 }), (error) => isWipError(error, 'write-usage-invalid'));
    await assert.rejects(store.list({ before: 'HEAD' }), (error) => isWipError(error, 'write-usage-invalid'));
    // A prune rewrites the chain: the cursor of a page read before it is in no chain, and the read
    // says so, where an empty page with no older snapshots would say history ends there.
    const cursor = first.branches[0]?.snapshots[1]?.commit as string;
    await store.prune({ keepLast: 3 });
    await assert.rejects(store.list({ branch: 'main', limit: 2, before: cursor }), (error) => isWipError(error, 'write-usage-invalid') && /no wip chain read \(main\) holds/.test(error.message));
    const fresh = await store.list({ branch: 'main', limit: 2 });
    assert.deepEqual([labels(fresh), fresh.branches[0]?.older], [['turn:5', 'turn:4'], 1]);
  });

});
