import { assertValidDocument, git, makeRepo, runBin, runCli, tempDir, treeOf, writeFiles } from './helpers.js';
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { existsSync, mkdirSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, it } from 'node:test';
import { isWipError } from '../lib/errors.js';
import { WipStore } from '../lib/store/wip-store.js';
import { Replicator } from '../lib/replication/replicator.js';

/** save, edit, restore, and check the working tree came back exactly. */
async function roundTrip(dir: string, edit: Readonly<Record<string, string | null>> = { 'edited.txt': 'edited\n' }): Promise<void> {
  const store = new WipStore({ cwd: dir });
  const saved = await store.save({ label: 'odd' });
  const expected = treeOf(dir);
  writeFiles(dir, edit);
  const restored = await store.restore({ snapshot: saved.snapshot.commit });
  assert.deepEqual(treeOf(dir), expected);
  assert.equal(restored.snapshot.commit, saved.snapshot.commit);
}

describe('odd repositories', () => {
  it('saves, lists and restores in a SHA-256 repository', async () => {
    const dir = makeRepo({ 'README.md': 'sha256\n' }, { initArgs: ['--object-format=sha256'] });
    writeFiles(dir, { 'a.txt': 'work\n', 'dir/b.bin': '\u0000\u0001' });
    const saved = await runCli(dir, ['workspace', 'wip', 'save', '--label', 'sha256']);
    assert.equal(saved.code, 0, saved.stdout);
    assert.match(saved.doc.snapshot.commit, /^[0-9a-f]{64}$/);
    await assertValidDocument(saved.doc);
    const listed = await runCli(dir, ['workspace', 'wip', '--json']);
    assert.equal(listed.doc.branches[0].snapshots[0].commit, saved.doc.snapshot.commit);
    await assertValidDocument(listed.doc);
    const expected = treeOf(dir);
    writeFiles(dir, { 'a.txt': null, 'dir': null, 'c.txt': 'later\n' });
    const restored = await runCli(dir, ['workspace', 'wip', 'restore', saved.doc.snapshot.commit]);
    assert.equal(restored.code, 0, restored.stdout);
    assert.deepEqual(treeOf(dir), expected);
    assert.match(restored.doc.checkpoint.snapshot.commit, /^[0-9a-f]{64}$/);
  });

  it('keeps a linked worktree\'s snapshots on its own branch\'s ref, and restores them in it', async () => {
    const dir = makeRepo();
    const worktree = join(tempDir(), 'linked tree');
    git(dir, ['worktree', 'add', '-q', '-b', 'feature', worktree]);
    writeFiles(worktree, { 'feature.txt': 'in the worktree\n' });
    writeFiles(dir, { 'main.txt': 'in the main checkout\n' });
    const inWorktree = await new WipStore({ cwd: worktree }).save({ label: 'wt' });
    const inMain = await new WipStore({ cwd: dir }).save({ label: 'main' });
    assert.equal(inWorktree.ref, 'refs/chant/wip/feature');
    assert.equal(inMain.ref, 'refs/chant/wip/main');
    assert.equal(git(dir, ['rev-parse', 'refs/chant/wip/feature']).trim(), inWorktree.snapshot.commit, 'one ref store for every worktree');
    const expected = treeOf(worktree);
    writeFiles(worktree, { 'feature.txt': 'changed\n', 'more.txt': 'more\n' });
    await new WipStore({ cwd: join(worktree) }).restore({});
    assert.deepEqual(treeOf(worktree), expected);
    assert.equal(readFileSync(join(dir, 'main.txt'), 'utf8'), 'in the main checkout\n', 'the main checkout is untouched');
    await assert.rejects(new WipStore({ cwd: dir }).restore({ snapshot: inWorktree.snapshot.commit }), (error) => isWipError(error, 'wip-branch-other'));
    const worktreeGitDir = git(worktree, ['rev-parse', '--absolute-git-dir']).trim();
    assert.deepEqual(readdirSync(worktreeGitDir).filter((name) => name.startsWith('chant-wip')), []);
  });

  it('keeps a submodule as its gitlink and says in the save document that its files were not saved', async () => {
    const sub = makeRepo({ 'lib.txt': 'library\n' });
    const dir = makeRepo();
    git(dir, ['-c', 'protocol.file.allow=always', 'submodule', 'add', '-q', sub, 'vendor/lib']);
    git(dir, ['commit', '-qm', 'add the submodule']);
    const subHead = git(join(dir, 'vendor/lib'), ['rev-parse', 'HEAD']).trim();
    writeFiles(join(dir, 'vendor/lib'), { 'lib.txt': 'dirty inside the submodule\n' });
    // An embedded repository, never added as a submodule, is a gitlink to git all the same.
    const embedded = join(dir, 'embedded');
    mkdirSync(embedded);
    git(embedded, ['init', '-q', '-b', 'main', '.']);
    writeFiles(embedded, { 'e.txt': 'e\n' });
    git(embedded, ['add', '-A']);
    git(embedded, ['commit', '-qm', 'embedded']);
    writeFiles(dir, { 'outer.txt': 'outer work\n' });
    const saved = await runCli(dir, ['workspace', 'wip', 'save']);
    assert.equal(saved.code, 0, saved.stdout);
    await assertValidDocument(saved.doc);
    assert.deepEqual(saved.doc.unsaved.map((entry: { path: string; reason: string }) => [entry.path, entry.reason]), [['embedded', 'embedded-repository'], ['vendor/lib', 'submodule']]);
    assert.match(saved.doc.unsaved[1].message, new RegExp(`commit it is at \\(${subHead.slice(0, 12)}\\), not its files`));
    assert.match(git(dir, ['ls-tree', saved.doc.snapshot.tree, 'vendor/lib']), new RegExp(`^160000 commit ${subHead}\tvendor/lib`));
    writeFiles(dir, { 'outer.txt': 'changed\n' });
    const restored = await runCli(dir, ['workspace', 'wip', 'restore']);
    assert.equal(restored.code, 0, restored.stdout);
    assert.deepEqual(restored.doc.paths, ['outer.txt']);
    assert.equal(readFileSync(join(dir, 'outer.txt'), 'utf8'), 'outer work\n');
    assert.equal(readFileSync(join(dir, 'vendor/lib/lib.txt'), 'utf8'), 'dirty inside the submodule\n', 'the submodule\'s files are left alone');
    const clean = makeRepo();
    const plain = await runCli(clean, ['workspace', 'wip', 'save']);
    assert.equal('unsaved' in plain.doc, false, 'no unsaved field when everything was saved');
  });

  for (const mode of ['cone', 'cone with a sparse index']) it(`keeps the skip-worktree bits of a sparse checkout (${mode}), and saves and keeps files outside the cone`, async () => {
    const dir = makeRepo({ 'README.md': 'x\n', 'in/a.txt': 'a\n', 'out/b.txt': 'b\n', 'out/deep/c.txt': 'c\n' });
    git(dir, ['sparse-checkout', 'set', ...(mode === 'cone' ? [] : ['--sparse-index']), 'in']);
    const bits = git(dir, ['ls-files', '-t']);
    assert.match(bits, /^S out\/b\.txt$/m);
    writeFiles(dir, { 'in/a.txt': 'edited in the cone\n', 'in/new.txt': 'new\n', 'out/untracked.txt': 'outside the cone\n' });
    const store = new WipStore({ cwd: dir });
    const saved = await store.save({});
    assert.match(git(dir, ['ls-tree', '-r', '--name-only', saved.snapshot.tree]), /^out\/untracked\.txt$/m, 'a file outside the cone is saved too');
    assert.match(git(dir, ['ls-tree', '-r', '--name-only', saved.snapshot.tree]), /^out\/b\.txt$/m, 'a skip-worktree entry keeps its committed content');
    const expected = treeOf(dir);
    writeFiles(dir, { 'in/a.txt': 'later\n', 'in/new.txt': null });
    await store.restore({ snapshot: saved.snapshot.commit });
    assert.deepEqual(treeOf(dir), expected);
    assert.equal(git(dir, ['ls-files', '-t']), bits, 'skip-worktree bits survive the restore');
  });

  it('restores byte for byte through core.autocrlf and a .gitattributes filter, saving what git\'s filters clean', async () => {
    const dir = makeRepo({ 'README.md': 'x\n', '.gitattributes': '*.rot filter=rot13\n' });
    git(dir, ['config', 'core.autocrlf', 'true']);
    git(dir, ['config', 'filter.rot13.clean', "tr 'A-Za-z' 'N-ZA-Mn-za-m'"]);
    git(dir, ['config', 'filter.rot13.smudge', "tr 'A-Za-z' 'N-ZA-Mn-za-m'"]);
    writeFiles(dir, { 'crlf.txt': 'one\r\ntwo\r\n', 'secret.rot': 'Hello\r\n', 'data.bin': 'bin\u0000\n' });
    const store = new WipStore({ cwd: dir });
    const saved = await store.save({});
    assert.equal(git(dir, ['cat-file', 'blob', `${saved.snapshot.tree}:crlf.txt`]), 'one\ntwo\n', 'git normalizes line endings in the snapshot');
    assert.equal(git(dir, ['cat-file', 'blob', `${saved.snapshot.tree}:secret.rot`]), 'Uryyb\n', 'the clean filter ran');
    const expected = treeOf(dir);
    writeFiles(dir, { 'crlf.txt': 'changed\r\n', 'secret.rot': 'Bye\r\n', 'data.bin': null });
    await store.restore({ snapshot: saved.snapshot.commit });
    assert.deepEqual(treeOf(dir), expected, 'the smudge filter and CRLF conversion gave back the same bytes');
  });

  it('writes an LF file back with CRLF under core.autocrlf=true, as git\'s own checkout does', async () => {
    const dir = makeRepo();
    git(dir, ['config', 'core.autocrlf', 'true']);
    writeFiles(dir, { 'lf.txt': 'lf only\n' });
    const store = new WipStore({ cwd: dir });
    const saved = await store.save({});
    writeFiles(dir, { 'lf.txt': null });
    await store.restore({ snapshot: saved.snapshot.commit });
    git(dir, ['add', 'lf.txt']);
    git(dir, ['commit', '-qm', 'lf']);
    const restored = readFileSync(join(dir, 'lf.txt'), 'utf8');
    writeFiles(dir, { 'lf.txt': null });
    git(dir, ['checkout', '--', 'lf.txt']);
    assert.equal(restored, 'lf only\r\n');
    assert.equal(readFileSync(join(dir, 'lf.txt'), 'utf8'), restored, 'git checkout writes the same bytes');
  });

  it('works in a repository whose own path holds spaces, unicode and a leading dash', async () => {
    const dir = join(tempDir(), '-my repo é 日本 [x]');
    mkdirSync(dir);
    git(dir, ['init', '-q', '-b', 'main', '.']);
    writeFiles(dir, { 'README.md': 'x\n' });
    git(dir, ['add', '-A']);
    git(dir, ['commit', '-qm', 'initial']);
    writeFiles(dir, { 'a b/c d.txt': 'spaces\n' });
    await roundTrip(dir);
    const saved = await runCli(join(dir, 'a b'), ['workspace', 'wip', 'save', '--label', 'from a subfolder']);
    assert.equal(saved.code, 0, saved.stdout);
  });

  it('keeps branches with slashes on refs/chant/wip/<branch> and lists them by their full name', async () => {
    const dir = makeRepo();
    for (const branch of ['feature/x/y', 'chant/work/W-001']) {
      git(dir, ['checkout', '-q', '-b', branch, 'main']);
      writeFiles(dir, { 'branch.txt': `${branch}\n` });
      const saved = await new WipStore({ cwd: dir }).save({});
      assert.equal(saved.ref, `refs/chant/wip/${branch}`);
      await roundTrip(dir);
      writeFiles(dir, { 'branch.txt': null, 'edited.txt': null });
    }
    const { branches } = await new WipStore({ cwd: dir }).list();
    assert.deepEqual(branches.map((entry) => entry.branch), ['chant/work/W-001', 'feature/x/y']);
  });

  it('signs snapshots as chant <chant@localhost> when git has no identity configured', () => {
    const dir = makeRepo();
    const home = tempDir('chant-no-identity-');
    git(dir, ['config', 'user.useConfigOnly', 'true']);
    // Only the fixtures' own identity lived in HOME; without it git has none to give.
    const env: NodeJS.ProcessEnv = { PATH: process.env.PATH, HOME: home, XDG_CONFIG_HOME: join(home, '.config'), GIT_CONFIG_NOSYSTEM: '1' };
    assert.notEqual(spawnSync('git', ['var', 'GIT_COMMITTER_IDENT'], { cwd: dir, env }).status, 0, 'git has no identity here');
    writeFiles(dir, { 'a.txt': 'a\n' });
    const saved = runBin(dir, ['workspace', 'wip', 'save'], env);
    assert.equal(saved.code, 0, saved.stdout + saved.stderr);
    assert.equal(git(dir, ['log', '-1', '--format=%an <%ae> %cn <%ce>', saved.doc.snapshot.commit]), 'chant <chant@localhost> chant <chant@localhost>\n');
    writeFiles(dir, { 'a.txt': 'b\n' });
    const restored = runBin(dir, ['workspace', 'wip', 'restore'], env);
    assert.equal(restored.code, 0, restored.stdout + restored.stderr);
    assert.equal(restored.doc.checkpoint.created, true);
    assert.equal(readFileSync(join(dir, 'a.txt'), 'utf8'), 'a\n');
  });

  it('answers not-a-git-repository in a bare repository, where there is no working tree to save', async () => {
    const dir = tempDir();
    git(dir, ['init', '-q', '--bare', '.']);
    const run = await runCli(dir, ['workspace', 'wip', 'save']);
    assert.equal(run.code, 1);
    assert.equal(run.doc.error.code, 'not-a-git-repository');
  });

  it('answers not-a-git-repository, naming the folder, when the SDK is given a cwd that does not exist or is a file', async () => {
    const dir = makeRepo();
    const missing = join(dir, 'no', 'such', 'folder');
    const file = join(dir, 'README.md');
    writeFileSync(file, 'hello\n');
    for (const cwd of [missing, file]) {
      for (const [what, run] of [['save', () => new WipStore({ cwd }).save({})], ['list', () => new WipStore({ cwd }).list()], ['open', () => Replicator.open({ cwd })]] as const) {
        const error = await run().then(() => null, (caught: unknown) => caught);
        assert.ok(isWipError(error, 'not-a-git-repository'), `${what} in ${cwd}: ${String(error)}`);
        assert.ok(error.message.startsWith(cwd), error.message);
      }
    }
  });

  it('answers git-failed, not wip-no-branch, when the commit HEAD names is missing', async () => {
    const dir = makeRepo();
    const head = git(dir, ['rev-parse', 'HEAD']).trim();
    rmSync(join(dir, '.git', 'objects', head.slice(0, 2), head.slice(2)));
    writeFiles(dir, { 'README.md': 'changed\n' });
    const store = new WipStore({ cwd: dir, policy: null });
    await assert.rejects(store.save({}), (error: unknown) => isWipError(error) && error.code === 'git-failed');
    await assert.rejects(store.restore({}), (error: unknown) => isWipError(error) && error.code === 'wip-none');
    assert.deepEqual((await store.list()).checkout, { branch: 'main', head });
  });

  for (const staging of ['index', 'status'] as const) {
    it(`saves the whole working tree when the checkout's index is corrupt, never touching it (${staging} staging)`, async () => {
      const dir = makeRepo({ 'README.md': 'corrupt\n', 'src/a.txt': 'a\n' });
      writeFiles(dir, { 'src/a.txt': 'edited\n', 'new.txt': 'untracked\n', '.gitignore': 'ignored.log\n', 'ignored.log': 'no\n' });
      // What git add --all gives from an empty index: the tree the snapshot must hold.
      const scratch = join(tempDir('chant-wip-corrupt-'), 'index');
      git(dir, ['add', '--all'], { env: { GIT_INDEX_FILE: scratch } });
      const expected = git(dir, ['write-tree'], { env: { GIT_INDEX_FILE: scratch } }).trim();
      const indexFile = join(dir, '.git', 'index');
      const bytes = readFileSync(indexFile);
      bytes.write('XXXX', 0, 'latin1');
      writeFileSync(indexFile, bytes);
      assert.match(spawnSync('git', ['status'], { cwd: dir, encoding: 'utf8' }).stderr, /index file corrupt/);
      const saved = await new WipStore({ cwd: dir, staging }).save({ label: 'corrupt index' });
      assert.equal(saved.snapshot.tree, expected);
      assert.deepEqual(readFileSync(indexFile), bytes);
      // The CLI says the same, in a valid document.
      writeFiles(dir, { 'later.txt': 'later\n' });
      const cli = await runCli(dir, ['workspace', 'wip', 'save', '--json']);
      assert.equal(cli.code, 0, cli.stdout);
      await assertValidDocument(cli.doc);
      assert.equal(git(dir, ['ls-tree', '--name-only', cli.doc.snapshot.commit, 'later.txt']).trim(), 'later.txt');
      assert.deepEqual(readFileSync(indexFile), bytes);
    });

    it(`saves and restores the whole working tree when the checkout's index was cut short where git reads it without a word, not checking its checksum, and git add fails on it (${staging} staging)`, async () => {
      const dir = makeRepo({ 'a.txt': 'a\n', 'd/b.txt': 'b\n', 'x.sh': '#!/bin/sh\n' });
      const first = await new WipStore({ cwd: dir, staging }).save({});
      writeFiles(dir, { 'd/b.txt': 'edited\n', 'new.txt': 'untracked\n' });
      const scratch = join(tempDir('chant-wip-cut-'), 'index');
      git(dir, ['add', '--all'], { env: { GIT_INDEX_FILE: scratch } });
      const expected = git(dir, ['write-tree'], { env: { GIT_INDEX_FILE: scratch } }).trim();
      // Cut short (a crash as the file was written): what is left reads as entries of garbage.
      const indexFile = join(dir, '.git', 'index');
      const bytes = readFileSync(indexFile).subarray(0, 120);
      writeFileSync(indexFile, bytes);
      const plain = spawnSync('git', ['add', '--all'], { cwd: dir, encoding: 'utf8', env: { ...process.env, GIT_INDEX_FILE: join(dir, '.git', 'index') } });
      assert.notEqual(plain.status, 0, 'git add fails on it');
      assert.doesNotMatch(plain.stderr, /index file corrupt|smaller than expected/, plain.stderr);
      writeFileSync(indexFile, bytes);
      const saved = await new WipStore({ cwd: dir, staging }).save({});
      assert.equal(saved.snapshot.tree, expected);
      assert.deepEqual(readFileSync(indexFile), bytes, 'the index is not touched');
      writeFiles(dir, { 'd/b.txt': 'edited again\n' });
      const restored = await new WipStore({ cwd: dir, staging }).restore({ snapshot: first.snapshot.commit });
      assert.equal(readFileSync(join(dir, 'd', 'b.txt'), 'utf8'), 'b\n');
      assert.equal(git(dir, ['cat-file', 'blob', `${restored.checkpoint.snapshot.commit}:d/b.txt`]), 'edited again\n');
    });

    it(`saves the whole working tree when a byte of the checkout's index went bad where git status stops on it with no word of corruption (${staging} staging)`, async () => {
      const dir = makeRepo({ 'a.txt': 'a\n', 'd/b.txt': 'b\n' });
      writeFiles(dir, { 'd/b.txt': 'edited\n', 'new.txt': 'untracked\n' });
      const scratch = join(tempDir('chant-wip-flip-'), 'index');
      git(dir, ['add', '--all'], { env: { GIT_INDEX_FILE: scratch } });
      const expected = git(dir, ['write-tree'], { env: { GIT_INDEX_FILE: scratch } }).trim();
      // The first entry's mode (after the header's 12 bytes and the entry's 24 of times, device
      // and inode) made one git has no file type for, as a disk fault would.
      const indexFile = join(dir, '.git', 'index');
      const bytes = readFileSync(indexFile);
      bytes.writeUInt32BE(0o144244, 12 + 24);
      writeFileSync(indexFile, bytes);
      const status = spawnSync('git', ['status', '--porcelain'], { cwd: dir, encoding: 'utf8' });
      assert.notEqual(status.status, 0, 'git status stops on it');
      assert.doesNotMatch(status.stderr, /index file corrupt|smaller than expected/, status.stderr);
      const saved = await new WipStore({ cwd: dir, staging }).save({});
      assert.equal(saved.snapshot.tree, expected);
      assert.deepEqual(readFileSync(indexFile), bytes, 'the index is not touched');
    });

    it(`holds the local edits of flagged files whose entries a split index keeps in its shared index (${staging} staging)`, async () => {
      const dir = makeRepo({ 'README.md': 'split\n', 'src/a.txt': 'a\n', 'src/b.txt': 'b\n', 'sub/c.txt': 'c\n' });
      git(dir, ['update-index', '--assume-unchanged', 'src/a.txt']);
      git(dir, ['update-index', '--skip-worktree', 'sub/c.txt']);
      // Flagged and not edited: nothing to list.
      git(dir, ['update-index', '--assume-unchanged', 'README.md']);
      // Every entry goes to the shared index; the index file itself holds none of them. Under
      // core.splitIndex, git splits every index it writes, the save's temporary ones included.
      git(dir, ['update-index', '--split-index']);
      git(dir, ['config', 'core.splitIndex', 'true']);
      git(dir, ['config', 'splitIndex.maxPercentChange', '0']);
      writeFiles(dir, { 'src/a.txt': 'local edit under assume-unchanged\n', 'sub/c.txt': 'local edit under skip-worktree\n', 'src/b.txt': 'edited\n', 'new.txt': 'untracked\n' });
      writeFiles(dir, { 'new2.txt': 'untracked\n' });
      git(dir, ['add', 'new2.txt']);
      const indexFile = join(dir, '.git', 'index');
      const bytes = readFileSync(indexFile);
      const shared = () => readdirSync(join(dir, '.git')).filter((name) => name.startsWith('sharedindex.')).sort();
      const sharedBefore = shared();
      const saved = await new WipStore({ cwd: dir, staging }).save({ label: 'split index' });
      // The save's temporary indexes are written whole: no shared index of theirs is left behind.
      assert.deepEqual(shared(), sharedBefore);
      const holds = (path: string) => git(dir, ['show', `${saved.snapshot.commit}:${path}`]);
      assert.equal(holds('src/a.txt'), 'local edit under assume-unchanged\n');
      assert.equal(holds('sub/c.txt'), 'local edit under skip-worktree\n');
      assert.equal(holds('src/b.txt'), 'edited\n');
      assert.equal(holds('new.txt'), 'untracked\n');
      assert.equal(holds('new2.txt'), 'untracked\n');
      assert.deepEqual(saved.flagged?.map((entry) => [entry.path, entry.reason]), [['src/a.txt', 'assume-unchanged'], ['sub/c.txt', 'skip-worktree']]);
      assert.deepEqual(readFileSync(indexFile), bytes, 'the checkout\'s index is not written');
      assert.match(git(dir, ['ls-files', '-v', 'src/a.txt', 'sub/c.txt']), /^h src\/a\.txt\nS sub\/c\.txt\n$/);
    });

    it(`saves the whole working tree when a split index's shared index is gone (${staging} staging)`, async () => {
      const dir = makeRepo({ 'README.md': 'split\n', 'src/a.txt': 'a\n' });
      git(dir, ['update-index', '--split-index']);
      writeFiles(dir, { 'src/a.txt': 'edited\n', 'new.txt': 'untracked\n' });
      const scratch = join(tempDir('chant-wip-split-'), 'index');
      git(dir, ['add', '--all'], { env: { GIT_INDEX_FILE: scratch } });
      const expected = git(dir, ['write-tree'], { env: { GIT_INDEX_FILE: scratch } }).trim();
      for (const name of readdirSync(join(dir, '.git'))) if (name.startsWith('sharedindex.')) rmSync(join(dir, '.git', name));
      assert.match(spawnSync('git', ['status'], { cwd: dir, encoding: 'utf8' }).stderr, /sharedindex\.[0-9a-f]+: index file open failed/);
      const saved = await new WipStore({ cwd: dir, staging }).save({ label: 'shared index gone' });
      assert.equal(saved.snapshot.tree, expected);
    });
  }

  for (const staging of ['index', 'status'] as const) {
    it(`saves a file whose name differs from a tracked one only by case, where core.ignorecase=true on a file system that tells them apart, and restores both (${staging} staging)`, async (t) => {
      const dir = makeRepo({ 'README.md': 'hello\n', readme: 'lower\n' });
      if (existsSync(join(dir, '.GIT'))) return t.skip('this file system ignores case');
      // As a repository copied from macOS or Windows says.
      git(dir, ['config', 'core.ignorecase', 'true']);
      writeFiles(dir, { README: 'upper\n', 'ReadMe.md': 'mixed\n' });
      const store = new WipStore({ cwd: dir, staging });
      const saved = await store.save({});
      const expected = treeOf(dir);
      assert.equal(git(dir, ['show', `${saved.snapshot.commit}:README`]), 'upper\n');
      assert.equal(git(dir, ['show', `${saved.snapshot.commit}:ReadMe.md`]), 'mixed\n');
      rmSync(join(dir, 'README'));
      rmSync(join(dir, 'ReadMe.md'));
      await store.restore({ snapshot: saved.snapshot.commit });
      assert.deepEqual(treeOf(dir), expected);
    });
  }
});
