import assert from 'node:assert/strict';
import { writeFileSync, chmodSync, existsSync, readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, it } from 'node:test';
import { git, makeRepo, stateOf, tempDir, writeFiles } from './helpers.js';
import { WipStore } from '../lib/store/wip-store.js';
import { SimpleGitRunner } from '../lib/git/runner.js';
import type { GitRunner } from '../lib/git/runner.js';
import { isWipError } from '../lib/errors.js';

const FIXED = () => new Date('2026-10-03T23:04:24.000Z');

function lsTree(dir: string, treeish: string): Record<string, string> {
  const out: Record<string, string> = {};
  for (const line of git(dir, ['ls-tree', '-r', '-z', treeish]).split('\0')) {
    if (line === '') continue;
    const [meta, path] = line.split('\t') as [string, string];
    const [mode, , oid] = meta.split(' ') as [string, string, string];
    out[path] = `${mode} ${git(dir, ['cat-file', '-p', oid])}`;
  }
  return out;
}

describe('wip save', () => {
  it('captures staged, unstaged and untracked files and leaves ignored ones out', async () => {
    const dir = makeRepo({ 'README.md': 'hello\n', 'src/a.txt': 'a\n', '.gitignore': 'build/\n*.log\n' });
    writeFiles(dir, { 'staged.txt': 'staged\n' });
    git(dir, ['add', 'staged.txt']);
    writeFiles(dir, { 'src/a.txt': 'a changed\n', 'new/untracked.txt': 'untracked\n', 'build/out.bin': 'ignored\n', 'debug.log': 'ignored\n' });
    const result = await new WipStore({ cwd: dir, clock: FIXED }).save({ label: 'turn:7', by: 'github:alex' });
    assert.equal(result.created, true);
    const files = lsTree(dir, result.snapshot.commit);
    assert.deepEqual(Object.keys(files).sort(), ['.gitignore', 'README.md', 'new/untracked.txt', 'src/a.txt', 'staged.txt']);
    assert.equal(files['src/a.txt'], '100644 a changed\n');
    assert.equal(files['staged.txt'], '100644 staged\n');
    assert.equal(result.snapshot.tree, git(dir, ['rev-parse', `${result.snapshot.commit}^{tree}`]).trim());
  });

  it('leaves the index file, HEAD, the branch and git status exactly as they were', async () => {
    const dir = makeRepo({ 'README.md': 'hello\n', 'a.txt': 'a\n' });
    writeFiles(dir, { 'b.txt': 'b\n' });
    git(dir, ['add', 'b.txt']);
    writeFiles(dir, { 'a.txt': 'changed\n', 'c.txt': 'c\n' });
    const before = stateOf(dir);
    const { statSync } = await import('node:fs');
    const indexBefore = statSync(join(dir, '.git', 'index'));
    await new WipStore({ cwd: dir }).save({});
    // Before stateOf, whose git status may refresh the index itself.
    const indexAfter = statSync(join(dir, '.git', 'index'));
    const after = stateOf(dir);
    assert.equal(after.index, before.index);
    assert.deepEqual([indexAfter.ino, indexAfter.nlink, indexAfter.mtimeMs, indexAfter.mode], [indexBefore.ino, indexBefore.nlink, indexBefore.mtimeMs, indexBefore.mode], 'the index file itself is the same file, untouched');
    assert.equal(after.head, before.head);
    assert.equal(after.status, before.status);
    assert.deepEqual(after.tree, before.tree);
    assert.equal(after.refs.replace(/^refs\/chant\/wip\/main .*\n/m, ''), before.refs);
    assert.equal(readdirSync(join(dir, '.git')).filter((name) => name.startsWith('chant-wip')).length, 0, 'no temporary index is left behind');
  });

  it('gives the first snapshot HEAD as its only parent and the next the previous snapshot first and HEAD last', async () => {
    const dir = makeRepo();
    const store = new WipStore({ cwd: dir, clock: FIXED });
    const head = git(dir, ['rev-parse', 'HEAD']).trim();
    writeFiles(dir, { 'one.txt': '1\n' });
    const first = await store.save({ label: 'turn:1' });
    assert.deepEqual(git(dir, ['rev-list', '--parents', '-1', first.snapshot.commit]).trim().split(' ').slice(1), [head]);
    writeFiles(dir, { 'two.txt': '2\n' });
    const second = await store.save({ label: 'turn:2' });
    assert.deepEqual(git(dir, ['rev-list', '--parents', '-1', second.snapshot.commit]).trim().split(' ').slice(1), [first.snapshot.commit, head]);
    assert.equal(git(dir, ['rev-parse', 'refs/chant/wip/main']).trim(), second.snapshot.commit);
    assert.equal(git(dir, ['log', '--format=%H', 'main']).trim(), head, 'git log on the branch never shows a snapshot');
  });

  it('writes the subject and the Chant-Wip trailers, and they read back', async () => {
    const dir = makeRepo();
    const result = await new WipStore({ cwd: dir, clock: FIXED }).save({ label: 'turn:7', by: 'github:alex' });
    const head = git(dir, ['rev-parse', 'HEAD']).trim();
    const message = git(dir, ['log', '-1', '--format=%B', result.snapshot.commit]);
    assert.equal(message, `chant wip: main (turn:7)\n\nChant-Wip-Branch: main\nChant-Wip-Head: ${head}\nChant-Wip-Kind: save\nChant-Wip-Label: turn:7\nChant-Wip-By: github:alex\n\n`);
    const trailers = git(dir, ['log', '-1', '--format=%(trailers:only,unfold)', result.snapshot.commit]);
    assert.match(trailers, /^Chant-Wip-Branch: main$/m);
    assert.deepEqual(result.snapshot, {
      commit: result.snapshot.commit, tree: result.snapshot.tree, branch: 'main', head, kind: 'save', label: 'turn:7', by: 'github:alex', at: '2026-10-03T23:04:24.000Z',
    });
    assert.equal(git(dir, ['log', '-1', '--format=%cI', result.snapshot.commit]).trim(), '2026-10-03T23:04:24+00:00');
  });

  it('records a label and principal exactly as given, spaces and unicode included', async () => {
    const dir = makeRepo();
    const label = '  turn: 7 — «überprüft» ';
    const result = await new WipStore({ cwd: dir }).save({ label, by: 'gitlab:zoë' });
    assert.equal(result.snapshot.label, label);
    const listed = await new WipStore({ cwd: dir }).list();
    assert.equal(listed.branches[0]?.snapshots[0]?.label, label);
    assert.equal(listed.branches[0]?.snapshots[0]?.by, 'gitlab:zoë');
  });

  it('takes no new snapshot when the tip holds the same tree, head, label and principal', async () => {
    const dir = makeRepo();
    const store = new WipStore({ cwd: dir });
    writeFiles(dir, { 'x.txt': 'x\n' });
    const first = await store.save({ label: 'turn:1', by: 'github:alex' });
    const again = await store.save({ label: 'turn:1', by: 'github:alex' });
    assert.equal(again.created, false);
    assert.deepEqual(again.snapshot, first.snapshot);
    const relabelled = await store.save({ label: 'turn:2', by: 'github:alex' });
    assert.equal(relabelled.created, true);
    assert.notEqual(relabelled.snapshot.commit, first.snapshot.commit);
    const otherBy = await store.save({ label: 'turn:2', by: 'github:sam' });
    assert.equal(otherBy.created, true);
    writeFiles(dir, { 'x.txt': 'y\n' });
    assert.equal((await store.save({ label: 'turn:2', by: 'github:sam' })).created, true, 'a new tree is a new snapshot');
  });

  it('keeps a reflog for the wip ref, so a bad move can be undone', async () => {
    const dir = makeRepo();
    const store = new WipStore({ cwd: dir });
    await store.save({ label: 'a' });
    await store.save({ label: 'b' });
    const reflog = git(dir, ['reflog', 'show', '--format=%H %gs', 'refs/chant/wip/main']).trim().split('\n');
    assert.equal(reflog.length, 2);
    assert.match(reflog[0] as string, / chant wip: save$/);
  });

  it('names the snapshot ref from the full branch name, slashes included, even when a tag shares the name', async () => {
    const dir = makeRepo();
    git(dir, ['checkout', '-q', '-b', 'chant/work/W-001']);
    git(dir, ['tag', 'chant/work/W-001', 'HEAD']);
    const result = await new WipStore({ cwd: dir }).save({});
    assert.equal(result.branch, 'chant/work/W-001');
    assert.equal(result.ref, 'refs/chant/wip/chant/work/W-001');
    assert.equal(git(dir, ['rev-parse', 'refs/chant/wip/chant/work/W-001']).trim(), result.snapshot.commit);
  });

  it('keeps executable bits and symlinks', async () => {
    const dir = makeRepo();
    writeFiles(dir, { 'run.sh': '#!/bin/sh\necho hi\n' });
    chmodSync(join(dir, 'run.sh'), 0o755);
    git(dir, ['config', 'core.symlinks', 'true']);
    const { symlinkSync } = await import('node:fs');
    symlinkSync('README.md', join(dir, 'link'));
    const result = await new WipStore({ cwd: dir }).save({});
    const files = lsTree(dir, result.snapshot.commit);
    assert.equal(files['run.sh'], '100755 #!/bin/sh\necho hi\n');
    assert.equal(files['link'], '120000 README.md');
  });

  it('works from a subfolder of the checkout', async () => {
    const dir = makeRepo({ 'README.md': 'hi\n', 'sub/deep/file.txt': 'f\n' });
    writeFiles(dir, { 'top.txt': 'top\n' });
    const result = await new WipStore({ cwd: join(dir, 'sub', 'deep') }).save({});
    assert.ok(Object.keys(lsTree(dir, result.snapshot.commit)).includes('top.txt'));
  });

  it('commits as chant <chant@localhost> when git has no identity', async () => {
    const dir = makeRepo();
    git(dir, ['config', 'user.useConfigOnly', 'true']);
    const home = tempDir('chant-wip-nohome-');
    const saved = { HOME: process.env.HOME, XDG: process.env.XDG_CONFIG_HOME };
    process.env.HOME = home;
    process.env.XDG_CONFIG_HOME = join(home, '.config');
    try {
      assert.equal(git(dir, ['var', 'GIT_COMMITTER_IDENT'], { allowFail: true, env: { HOME: home, XDG_CONFIG_HOME: join(home, '.config') } }).trim(), '', 'git itself has no identity here');
      const result = await new WipStore({ cwd: dir }).save({});
      assert.equal(git(dir, ['log', '-1', '--format=%an <%ae>|%cn <%ce>', result.snapshot.commit]).trim(), 'chant <chant@localhost>|chant <chant@localhost>');
    } finally {
      process.env.HOME = saved.HOME;
      process.env.XDG_CONFIG_HOME = saved.XDG;
    }
  });

  it('uses the configured identity when there is one', async () => {
    const dir = makeRepo();
    const result = await new WipStore({ cwd: dir }).save({});
    assert.equal(git(dir, ['log', '-1', '--format=%an <%ae>', result.snapshot.commit]).trim(), 'Test User <test@example.com>');
  });

  it('never runs a hook and never signs', async () => {
    const dir = makeRepo();
    const sentinel = join(tempDir(), 'hook-ran');
    for (const hook of ['pre-commit', 'prepare-commit-msg', 'commit-msg', 'post-commit']) {
      writeFileSync(join(dir, '.git', 'hooks', hook), `#!/bin/sh\ntouch '${sentinel}'\n`);
      chmodSync(join(dir, '.git', 'hooks', hook), 0o755);
    }
    git(dir, ['config', 'commit.gpgSign', 'true']);
    git(dir, ['config', 'gpg.program', '/bin/false']);
    const result = await new WipStore({ cwd: dir }).save({});
    assert.equal(result.created, true);
    assert.equal(git(dir, ['cat-file', 'commit', result.snapshot.commit]).includes('gpgsig'), false);
    assert.equal(existsSync(sentinel), false, 'no commit hook ran');
  });

  it('serializes concurrent saves so each lands on the chain exactly once', async () => {
    const dir = makeRepo();
    writeFiles(dir, { 'x.txt': 'x\n' });
    const labels = Array.from({ length: 6 }, (_, i) => `turn:${i}`);
    const results = await Promise.all(labels.map((label) => new WipStore({ cwd: dir }).save({ label })));
    assert.ok(results.every((result) => result.created));
    const chain = (await new WipStore({ cwd: dir }).list()).branches[0]?.snapshots.map((snapshot) => snapshot.label) ?? [];
    assert.deepEqual([...chain].sort(), labels);
  });

  it('re-reads the tip when another writer moves it between read and swap, and reports wip-race when that never stops', async () => {
    const dir = makeRepo();
    const store0 = new WipStore({ cwd: dir });
    await store0.save({ label: 'base' });
    let moves = 0;
    let limit = 2;
    // A clock that, as each attempt dates its commit (after the tip is read, before the swap),
    // lets "another writer" move the ref: however the swap is made, by update-ref or in-process.
    const racing = (): Date => {
      if (moves < limit) {
        moves += 1;
        const tip = git(dir, ['rev-parse', 'refs/chant/wip/main']).trim();
        const tree = git(dir, ['rev-parse', `${tip}^{tree}`]).trim();
        const head = git(dir, ['rev-parse', 'HEAD']).trim();
        const other = git(dir, ['commit-tree', tree, '-p', tip, '-p', head, '-m', `chant wip: main (other ${moves})\n\nChant-Wip-Branch: main\nChant-Wip-Head: ${head}\nChant-Wip-Kind: save\nChant-Wip-Label: other ${moves}`]).trim();
        git(dir, ['update-ref', 'refs/chant/wip/main', other, tip]);
      }
      return new Date();
    };
    const result = await new WipStore({ cwd: dir, clock: racing }).save({ label: 'mine' });
    assert.equal(result.created, true);
    const labels = (await store0.list()).branches[0]?.snapshots.map((snapshot) => snapshot.label);
    assert.deepEqual(labels, ['mine', 'other 2', 'other 1', 'base']);
    moves = 0;
    limit = Number.POSITIVE_INFINITY;
    const before = git(dir, ['rev-parse', 'refs/chant/wip/main']).trim();
    await assert.rejects(new WipStore({ cwd: dir, clock: racing }).save({ label: 'never' }), (error) => isWipError(error, 'wip-race'));
    assert.notEqual(git(dir, ['rev-parse', 'refs/chant/wip/main']).trim(), before, 'the other writer kept moving it');
    const chain = (await store0.list()).branches[0]?.snapshots.map((snapshot) => snapshot.label) ?? [];
    assert.equal(chain.includes('never'), false);
  });

  it('saves a repository whose index file does not exist yet', async () => {
    const dir = makeRepo();
    const { rmSync } = await import('node:fs');
    rmSync(join(dir, '.git', 'index'));
    writeFiles(dir, { 'fresh.txt': 'fresh\n' });
    const result = await new WipStore({ cwd: dir }).save({});
    assert.ok(Object.keys(lsTree(dir, result.snapshot.commit)).includes('fresh.txt'));
    assert.equal(existsSync(join(dir, '.git', 'index')), false, "the checkout's index is still not written");
  });
});

describe('wip save and racy git', () => {
  it('sees a same-size edit made in the same second the index was written', async () => {
    const { utimesSync, readFileSync: read } = await import('node:fs');
    const dir = makeRepo({ 'README.md': 'project\n' });
    // Without ctime to tell them apart, only the index's mtime makes git look at the contents.
    git(dir, ['config', 'core.trustctime', 'false']);
    const when = new Date('2026-10-03T12:00:00Z');
    utimesSync(join(dir, 'README.md'), when, when);
    git(dir, ['add', 'README.md']);
    writeFiles(dir, { 'README.md': 'changed\n' });
    utimesSync(join(dir, 'README.md'), when, when);
    utimesSync(join(dir, '.git', 'index'), when, when);
    assert.equal(git(dir, ['status', '--porcelain'], { env: { GIT_OPTIONAL_LOCKS: '0' } }), ' M README.md\n', 'git itself sees the edit');
    const saved = await new WipStore({ cwd: dir }).save({});
    assert.equal(git(dir, ['cat-file', '-p', `${saved.snapshot.commit}:README.md`]), 'changed\n');
    assert.equal(read(join(dir, 'README.md'), 'utf8'), 'changed\n');
  });
});

describe('the wip tip a save reads', () => {
  /** The git subcommands a store's calls run, in order. */
  function counting(dir: string): { runner: GitRunner; calls: string[] } {
    const inner = new SimpleGitRunner(dir);
    const calls: string[] = [];
    return { calls, runner: { run: (args, options) => { calls.push(args[0] as string); return inner.run(args, options); } } };
  }

  it('reads the tip a save left from its loose ref and loose commit, and what git reads otherwise: packed, replaced', async () => {
    const dir = makeRepo();
    const { runner: fresh, calls: freshCalls } = counting(dir);
    // No ref yet, neither loose nor packed: no tip, read without a process.
    writeFiles(dir, { 'a.txt': 'zero\n' });
    await new WipStore({ cwd: dir, git: fresh, staging: 'index', policy: null }).save({});
    assert.ok(!freshCalls.includes('for-each-ref'), freshCalls.join(' '));
    git(dir, ['update-ref', '-d', 'refs/chant/wip/main']);
    const { runner, calls } = counting(dir);
    const store = new WipStore({ cwd: dir, git: runner, staging: 'index', policy: null });
    writeFiles(dir, { 'a.txt': 'one\n' });
    const first = await store.save({ label: 'turn:1 "quoted" ünïcode', by: 'github:alex' });
    writeFiles(dir, { 'a.txt': 'two\n' });
    calls.length = 0;
    const second = await store.save({ label: 'turn:2' });
    assert.ok(!calls.includes('for-each-ref'), calls.join(' '));
    assert.equal(git(dir, ['rev-parse', `${second.snapshot.commit}^1`]).trim(), first.snapshot.commit);
    // The same snapshot again is the tip already: found from the loose tip, nothing written.
    calls.length = 0;
    assert.equal((await store.save({ label: 'turn:2' })).created, false);
    assert.ok(!calls.includes('for-each-ref'), calls.join(' '));
    // Packed, the ref has no loose file: its line in packed-refs names it.
    git(dir, ['pack-refs', '--all']);
    assert.equal(existsSync(join(dir, '.git', 'refs', 'chant', 'wip', 'main')), false);
    calls.length = 0;
    assert.equal((await store.save({ label: 'turn:2' })).created, false);
    assert.ok(!calls.includes('for-each-ref'), calls.join(' '));
    // Its commit packed too: git reads it, and the chain goes on from it.
    git(dir, ['gc', '--quiet']);
    calls.length = 0;
    assert.equal((await store.save({ label: 'turn:2' })).created, false);
    assert.ok(calls.includes('for-each-ref'), calls.join(' '));
    writeFiles(dir, { 'a.txt': 'three\n' });
    const third = await store.save({ label: 'turn:3' });
    assert.equal(git(dir, ['rev-parse', `${third.snapshot.commit}^1`]).trim(), second.snapshot.commit);
    // With a replace ref, what git reads of a commit may not be its object: git reads the tip.
    const blob = (text: string) => git(dir, ['hash-object', '-w', '--stdin'], { input: text }).trim();
    git(dir, ['replace', blob('unused one\n'), blob('unused two\n')]);
    writeFiles(dir, { 'a.txt': 'four\n' });
    calls.length = 0;
    const fourth = await store.save({ label: 'turn:4' });
    assert.ok(calls.includes('for-each-ref'), calls.join(' '));
    assert.equal(git(dir, ['rev-parse', `${fourth.snapshot.commit}^1`]).trim(), third.snapshot.commit);
  });

  it('finds the packed tip of a branch whose name is not ASCII, and restores from it', async () => {
    const dir = makeRepo();
    git(dir, ['checkout', '-q', '-b', 'fé/ünï']);
    const { runner, calls } = counting(dir);
    const store = new WipStore({ cwd: dir, git: runner, staging: 'index', policy: null });
    writeFiles(dir, { 'a.txt': 'saved\n' });
    const saved = await store.save({ label: 'before packing' });
    git(dir, ['pack-refs', '--all']);
    assert.equal(existsSync(join(dir, '.git', 'refs', 'chant', 'wip', 'fé', 'ünï')), false);
    writeFiles(dir, { 'a.txt': 'lost?\n' });
    calls.length = 0;
    const restored = await store.restore({});
    assert.equal(restored.snapshot.commit, saved.snapshot.commit);
    assert.ok(!calls.includes('for-each-ref'), calls.join(' '));
    assert.equal(readFileSync(join(dir, 'a.txt'), 'utf8'), 'saved\n');
  });
});
