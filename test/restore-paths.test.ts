import assert from 'node:assert/strict';
import { chmodSync, existsSync, lutimesSync, readFileSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, it } from 'node:test';
import { GitProcessRunner } from '../lib/git/runner.js';
import type { GitRunner } from '../lib/git/runner.js';
import { indexFileOf } from '../lib/git/formats/index-file.js';
import { treeEntry } from '../lib/git/formats/tree.js';
import { WipStore } from '../lib/store/wip-store.js';
import { isWipError } from '../lib/index.js';
import { git, makeRepo, tempDir, treeOf, writeFiles } from './helpers.js';

// A restore checks out only the paths that differ, through an index holding them and the
// target's .gitattributes on their way, and, from git status, writes no index of the working
// tree at all; the files it writes are the ones git's checkout of the whole tree writes.

/** A runner noting each command, and the index each checkout-index reads, listed as git lists it. */
function watching(cwd: string): GitRunner & { calls: string[]; checkedOut: string[] } {
  const inner = new GitProcessRunner(cwd);
  const calls: string[] = [];
  const checkedOut: string[] = [];
  return {
    calls,
    checkedOut,
    run: async (args, options = {}) => {
      calls.push(args[0] as string);
      const index = options.env?.GIT_INDEX_FILE;
      if (args[0] === 'checkout-index' && index !== undefined) checkedOut.push(git(cwd, ['ls-files', '--stage'], { env: { GIT_INDEX_FILE: index } }));
      return inner.run(args, options);
    },
  };
}

/** A checkout with attributes at two levels (end-of-line conversion, a smudge filter) and many files no restore touches. */
function attributed(): string {
  const files: Record<string, string> = { '.gitattributes': '*.txt text eol=crlf\n', 'sub/.gitattributes': '*.dat filter=up\n', 'sub/deep/x.dat': 'x data\n', 'sub/deep/y.txt': 'y\n', 'top.txt': 'top\n' };
  for (let i = 0; i < 40; i += 1) files[`other/f${i}.txt`] = `other ${i}\n`;
  const dir = makeRepo(files);
  git(dir, ['config', 'filter.up.smudge', 'tr a-z A-Z']);
  git(dir, ['config', 'filter.up.clean', 'tr A-Z a-z']);
  return dir;
}

describe('what a restore checks out', () => {
  for (const staging of ['index', 'status'] as const) {
    it(`writes only the paths that differ, with the target's attributes, as a checkout of the whole tree would (${staging} staging)`, async () => {
      const dir = attributed();
      const runner = watching(dir);
      const store = new WipStore({ cwd: dir, git: runner, staging });
      writeFiles(dir, { 'sub/deep/x.dat': 'target data\n', 'sub/deep/y.txt': 'target y\n', 'sub/new.dat': 'new\n', 'top.txt': 'target top\n', 'tool.sh': '#!/bin/sh\n' });
      chmodSync(join(dir, 'tool.sh'), 0o755);
      const target = await store.save({ label: 'target' });
      writeFiles(dir, { 'sub/deep/x.dat': 'work\n', 'sub/deep/y.txt': null, 'sub/new.dat': null, 'top.txt': 'work top\n', 'tool.sh': null, 'work.txt': 'work\n' });
      // What git's own checkout of the whole target tree writes, in a clone of its own.
      const reference = tempDir('chant-reference-');
      git(reference, ['init', '-q', '.']);
      git(reference, ['config', 'filter.up.smudge', 'tr a-z A-Z']);
      git(reference, ['fetch', '-q', dir, `${target.snapshot.commit}:refs/heads/target`]);
      git(reference, ['checkout', '-q', 'target']);
      runner.calls.length = 0;
      // The work the fixture wrote is LF under eol=crlf, and lower case under a filter whose
      // smudge writes upper case: the checkpoint cannot give it back as it is, which is allowed here.
      await assert.rejects(store.restore({ snapshot: target.snapshot.commit }), (error) => isWipError(error, 'wip-restore-blocked'));
      runner.calls.length = 0;
      runner.checkedOut.length = 0;
      const restored = await store.restore({ snapshot: target.snapshot.commit, allowInexact: true });
      assert.deepEqual(restored.inexact?.map((entry) => entry.path), ['sub/deep/x.dat', 'top.txt', 'work.txt']);
      assert.deepEqual(restored.paths, ['sub/deep/x.dat', 'sub/deep/y.txt', 'sub/new.dat', 'tool.sh', 'top.txt', 'work.txt']);
      // The files the fixture wrote and the restore did not touch keep their own line ends; every path written is git's.
      const written = (tree: Record<string, string>) => Object.fromEntries(restored.paths.filter((path) => path in tree).map((path) => [path, tree[path]]));
      assert.deepEqual(written(treeOf(dir)), written(treeOf(reference)), 'each path written is what git checks out, end-of-line conversion, filter and mode');
      assert.deepEqual(Object.keys(written(treeOf(dir))), ['sub/deep/x.dat', 'sub/deep/y.txt', 'sub/new.dat', 'tool.sh', 'top.txt']);
      assert.equal(readFileSync(join(dir, 'sub/deep/x.dat'), 'utf8'), 'TARGET DATA\n');
      assert.equal(readFileSync(join(dir, 'top.txt'), 'utf8'), 'target top\r\n');
      // Two checkouts: the checkpoint's blobs of the files it overwrites or removes, compared
      // with them; then the target's. The index of the second holds the written paths and the
      // attributes on their way, nothing else.
      assert.equal(runner.checkedOut.length, 2);
      const listed = (runner.checkedOut[1] as string).split('\n').filter((line) => line.length > 0).map((line) => line.split('\t')[1]);
      assert.deepEqual(listed, ['.gitattributes', 'sub/.gitattributes', 'sub/deep/x.dat', 'sub/deep/y.txt', 'sub/new.dat', 'tool.sh', 'top.txt']);
      assert.ok(!runner.calls.includes('read-tree'), runner.calls.join(' '));
      if (staging === 'status') {
        for (const call of ['add', 'write-tree', 'ls-files']) assert.ok(!runner.calls.includes(call), `no ${call}: ${runner.calls.join(' ')}`);
      }
      // And back: the checkpoint gives the work back.
      await store.restore({ snapshot: restored.checkpoint.snapshot.commit });
      assert.equal(readFileSync(join(dir, 'sub/deep/x.dat'), 'utf8'), 'WORK\n');
      assert.ok(!existsSync(join(dir, 'sub/new.dat')));
      assert.equal(readFileSync(join(dir, 'work.txt'), 'utf8'), 'work\r\n');
    });
  }

  // Paths that change type both ways (mode, symlink, folder, a tracked file matching .gitignore),
  // restored from a working tree that is exactly the index, with stat data git trusts: git add
  // --all then writes no index, so a temporary index seeded as a hard link of the checkout's
  // stays one, and the index of the few paths checked out must not be written through it.
  for (const staging of ['index', 'status'] as const) {
    it(`changes paths of every type both ways from a clean checkout, and leaves its index as it was (${staging} staging)`, async () => {
      const head = { 'mode.sh': 'mode\n', 'link-to-file': 'file\n', 'dir-to-file/inner.txt': 'inner\n', 'file-to-dir': 'file\n', 'tracked.ign': 'tracked, ignored\n', 'same.txt': 'same\n' };
      const dir = makeRepo({ ...head, '.gitignore': '*.ign\n' });
      git(dir, ['add', '--force', 'tracked.ign']);
      git(dir, ['commit', '-q', '-m', 'tracked.ign']);
      writeFiles(dir, { 'untracked.ign': 'ignored, untracked\n' });
      chmodSync(join(dir, 'untracked.ign'), 0o755);
      const store = new WipStore({ cwd: dir, staging });
      const headState = treeOf(dir);
      // The other side: each path of another type, the ignored tracked file gone, a new file.
      chmodSync(join(dir, 'mode.sh'), 0o755);
      rmSync(join(dir, 'link-to-file'));
      symlinkSync('same.txt', join(dir, 'link-to-file'));
      rmSync(join(dir, 'dir-to-file'), { recursive: true });
      writeFiles(dir, { 'dir-to-file': 'a file now\n', 'file-to-dir': null, 'file-to-dir/inner.txt': 'a folder now\n', 'tracked.ign': null, 'new.txt': 'new\n' });
      const otherState = treeOf(dir);
      const other = await store.save({ label: 'types changed' });
      // Back to HEAD, with the files' times settled and the index refreshed: git add trusts every entry.
      git(dir, ['reset', '-q', '--hard']);
      rmSync(join(dir, 'new.txt'));
      for (const path of Object.keys(treeOf(dir))) lutimesSync(join(dir, path), 1_600_000_000, 1_600_000_000);
      git(dir, ['update-index', '-q', '--refresh']);
      assert.deepEqual(treeOf(dir), headState);
      const index = git(dir, ['ls-files', '--stage', '-z']);
      const restored = await store.restore({ snapshot: other.snapshot.commit });
      assert.deepEqual(treeOf(dir), otherState, 'the snapshot, mode, symlink, folder and file, the untracked ignored file untouched');
      assert.deepEqual(restored.paths, ['dir-to-file', 'dir-to-file/inner.txt', 'file-to-dir', 'file-to-dir/inner.txt', 'link-to-file', 'mode.sh', 'new.txt', 'tracked.ign']);
      assert.equal(git(dir, ['ls-files', '--stage', '-z']), index, "the checkout's index is HEAD's, whole");
      // And back the other way, from a tree whose index entries are all settled again.
      for (const path of Object.keys(treeOf(dir))) lutimesSync(join(dir, path), 1_600_000_000, 1_600_000_000);
      git(dir, ['update-index', '-q', '--refresh']);
      await store.restore({ snapshot: restored.checkpoint.snapshot.commit });
      assert.deepEqual(treeOf(dir), headState, 'the checkpoint gives HEAD\'s tree back, types and modes');
      assert.equal(git(dir, ['ls-files', '--stage', '-z']), index);
      assert.equal(git(dir, ['status', '--porcelain', '-z']), '', 'and git sees a clean checkout');
    });
  }

  it('takes a .gitattributes the restore itself changes from the target, not the working tree', async () => {
    const dir = attributed();
    const store = new WipStore({ cwd: dir, staging: 'status' });
    writeFiles(dir, { 'sub/.gitattributes': '', 'sub/deep/x.dat': 'plain now\n' });
    const target = await store.save({ label: 'no filter' });
    writeFiles(dir, { 'sub/.gitattributes': '*.dat filter=up\n', 'sub/deep/x.dat': 'FILTERED\n' });
    await store.restore({ snapshot: target.snapshot.commit });
    assert.equal(readFileSync(join(dir, 'sub/deep/x.dat'), 'utf8'), 'plain now\n');
    assert.equal(readFileSync(join(dir, 'sub/.gitattributes'), 'utf8'), '');
  });

  it('writes the files of a partial restore that leaves .gitattributes alone as the working tree\'s attributes say, so they read back as the snapshot\'s blobs', async () => {
    const dir = makeRepo({ 'README.md': 'x\n' });
    const store = new WipStore({ cwd: dir, policy: null });
    writeFiles(dir, { '.gitattributes': '*.txt eol=crlf\n', 'a.txt': 'l1\nl2\n', 'b.txt': 'b\n' });
    const saved = await store.save({});
    writeFiles(dir, { '.gitattributes': null, 'a.txt': 'other\n' });
    await store.restore({ snapshot: saved.snapshot.commit, paths: ['a.txt'] });
    assert.equal(readFileSync(join(dir, 'a.txt'), 'latin1'), 'l1\nl2\n', 'as git restore --source writes it');
    assert.equal(git(dir, ['hash-object', 'a.txt']).trim(), git(dir, ['rev-parse', `${saved.snapshot.commit}:a.txt`]).trim());
    // With the .gitattributes among the paths, the files go as the target's attributes say.
    writeFiles(dir, { 'a.txt': 'other\n' });
    await store.restore({ snapshot: saved.snapshot.commit, paths: ['a.txt', '.gitattributes'] });
    assert.equal(readFileSync(join(dir, 'a.txt'), 'latin1'), 'l1\r\nl2\r\n');
  });

  it('writes the files of a partial restore that restores another folder\'s .gitattributes as the attributes it leaves say, folder by folder', async () => {
    const dir = makeRepo({ 'README.md': 'x\n' });
    const store = new WipStore({ cwd: dir, policy: null });
    writeFiles(dir, { '.gitattributes': '*.txt eol=crlf\n', 'a.txt': 'l1\nl2\n', 'sub/.gitattributes': '*.bin binary\n' });
    const saved = await store.save({});
    // The root's eol=crlf is gone from the working tree, and stays gone: only sub's comes back.
    writeFiles(dir, { '.gitattributes': null, 'a.txt': 'other\n', 'sub/.gitattributes': '*.dat binary\n' });
    await store.restore({ snapshot: saved.snapshot.commit, paths: ['a.txt', 'sub/.gitattributes'] });
    assert.equal(readFileSync(join(dir, 'a.txt'), 'latin1'), 'l1\nl2\n');
    assert.equal(git(dir, ['hash-object', 'a.txt']).trim(), git(dir, ['rev-parse', `${saved.snapshot.commit}:a.txt`]).trim());
    assert.equal(readFileSync(join(dir, 'sub/.gitattributes'), 'utf8'), '*.bin binary\n');
  });

  it('builds index files git reads, and finds tree entries by name', () => {
    const dir = makeRepo();
    const blob = git(dir, ['hash-object', '-w', '--stdin'], { input: 'x\n' }).trim();
    const index = join(dir, '.git', 'probe.index');
    const long = `${'d'.repeat(300)}/${'n'.repeat(4000)}`;
    writeFileSync(index, indexFileOf([{ raw: 'b/z', mode: '100755', oid: blob }, { raw: 'a', mode: '100644', oid: blob }, { raw: 'l', mode: '120000', oid: blob }, { raw: long, mode: '100644', oid: blob }, { raw: 'caf\u00c3\u00a9', mode: '100644', oid: blob }], 'sha1'));
    assert.equal(git(dir, ['ls-files', '--stage', '-z'], { env: { GIT_INDEX_FILE: index } }),
      [`100644 ${blob} 0\ta`, `100755 ${blob} 0\tb/z`, `100644 ${blob} 0\tcafé`, `100644 ${blob} 0\t${long}`, `120000 ${blob} 0\tl`, ''].join('\0'));
    assert.throws(() => indexFileOf([{ raw: 'a', mode: '100644', oid: blob }, { raw: 'a', mode: '100644', oid: blob }], 'sha1'));
    const tree = Buffer.from(git(dir, ['cat-file', 'tree', 'HEAD^{tree}'], {}), 'latin1');
    assert.equal(treeEntry(tree, 'nothing', 'sha1'), null);
    const readme = git(dir, ['rev-parse', 'HEAD:README.md']).trim();
    const raw = Buffer.concat([Buffer.from('40000 .gitattributes\0', 'latin1'), Buffer.alloc(20), Buffer.from('100644 README.md\0', 'latin1'), Buffer.from(readme, 'hex')]);
    assert.deepEqual(treeEntry(raw, 'README.md', 'sha1'), { mode: '100644', oid: readme });
    assert.deepEqual(treeEntry(raw, '.gitattributes', 'sha1'), { mode: '40000', oid: '0'.repeat(40) });
    assert.ok(tree.length > 0);
  });
});
