import assert from 'node:assert/strict';
import { chmodSync, readdirSync, readFileSync, rmSync, statSync, symlinkSync, writeFileSync } from 'node:fs';
import { createRequire, syncBuiltinESMExports } from 'node:module';
import { join } from 'node:path';
import { describe, it } from 'node:test';
import { git, makeRepo, stateOf, treeOf, writeFiles } from './helpers.js';
import { Plumbing } from '../lib/git/plumbing.js';
import { SimpleGitRunner } from '../lib/git/runner.js';
import type { GitRunner } from '../lib/git/runner.js';
import { WipStore } from '../lib/store/wip-store.js';
import { HASH_CACHE_FILE } from '../lib/managers/hash-cache.js';
import { isWipError } from '../lib/errors.js';

/** The index entries (path -> stat data) of `git ls-files --debug`. */
function indexStat(dir: string): Map<string, string> {
  const entries = new Map<string, string>();
  let path = '';
  for (const line of git(dir, ['ls-files', '--debug']).split('\n')) {
    if (!line.startsWith(' ')) path = line;
    else entries.set(path, `${entries.get(path) ?? ''}${line.trim()};`);
  }
  return entries;
}

describe('wip restore', () => {
  it('brings back exact contents, modes and symlinks and removes what the snapshot lacks', async () => {
    const dir = makeRepo({ 'README.md': 'hello\n', 'keep.txt': 'keep\n', 'gone.txt': 'tracked\n' });
    const store = new WipStore({ cwd: dir });
    writeFiles(dir, { 'keep.txt': 'edited\n', 'new/nested/file.txt': 'nested\n', 'run.sh': '#!/bin/sh\n' });
    chmodSync(join(dir, 'run.sh'), 0o755);
    symlinkSync('keep.txt', join(dir, 'link'));
    symlinkSync('missing-target', join(dir, 'dangling'));
    writeFiles(dir, { 'gone.txt': null });
    const saved = await store.save({ label: 'work' });
    const expected = treeOf(dir);
    writeFiles(dir, { 'keep.txt': 'later\n', 'new': null, 'extra.txt': 'extra\n', 'gone.txt': 'back\n', 'link': null });
    chmodSync(join(dir, 'run.sh'), 0o644);
    const result = await store.restore({ snapshot: saved.snapshot.commit });
    assert.deepEqual(treeOf(dir), expected);
    assert.equal(result.snapshot.commit, saved.snapshot.commit);
    assert.deepEqual(result.paths, ['extra.txt', 'gone.txt', 'keep.txt', 'link', 'new/nested/file.txt', 'run.sh']);
  });

  it('leaves a file it overwrites as private as it found it: a 0600 .env stays 0600, the executable bit is the snapshot\'s', async () => {
    const dir = makeRepo({ 'README.md': 'hello\n', 'tool.sh': 'echo one\n' });
    const store = new WipStore({ cwd: dir });
    writeFiles(dir, { '.env': 'KEY=one\n' });
    chmodSync(join(dir, '.env'), 0o600);
    chmodSync(join(dir, 'tool.sh'), 0o640);
    const saved = await store.save({ label: 'one' });
    writeFiles(dir, { '.env': 'KEY=two\n', 'tool.sh': 'echo two\n' });
    chmodSync(join(dir, '.env'), 0o600);
    chmodSync(join(dir, 'tool.sh'), 0o750);
    const result = await store.restore({ snapshot: saved.snapshot.commit });
    assert.deepEqual(result.paths, ['.env', 'tool.sh']);
    assert.equal(readFileSync(join(dir, '.env'), 'utf8'), 'KEY=one\n');
    assert.equal(statSync(join(dir, '.env')).mode & 0o777, 0o600, 'not widened to the umask\'s 0644');
    assert.equal(readFileSync(join(dir, 'tool.sh'), 'utf8'), 'echo one\n');
    assert.equal(statSync(join(dir, 'tool.sh')).mode & 0o777, 0o640, 'not executable, as the snapshot holds it, and no wider');
    // Undoing the restore keeps them so too, and makes the script executable again where it could be read.
    await store.restore({ snapshot: result.checkpoint.snapshot.commit });
    assert.equal(readFileSync(join(dir, '.env'), 'utf8'), 'KEY=two\n');
    assert.equal(statSync(join(dir, '.env')).mode & 0o777, 0o600);
    assert.equal(statSync(join(dir, 'tool.sh')).mode & 0o777, 0o750);
  });

  it('restores the latest snapshot when none is named', async () => {
    const dir = makeRepo();
    const store = new WipStore({ cwd: dir });
    writeFiles(dir, { 'a.txt': 'one\n' });
    await store.save({ label: 'one' });
    writeFiles(dir, { 'a.txt': 'two\n' });
    const latest = await store.save({ label: 'two' });
    writeFiles(dir, { 'a.txt': 'three\n' });
    const result = await store.restore({});
    assert.equal(result.snapshot.commit, latest.snapshot.commit);
    assert.equal(readFileSync(join(dir, 'a.txt'), 'utf8'), 'two\n');
  });

  it('turns files into folders and folders into files, both ways', async () => {
    const dir = makeRepo({ 'README.md': 'x\n', 'thing': 'a file\n', 'folder/inner.txt': 'inner\n' });
    const store = new WipStore({ cwd: dir });
    const original = await store.save({ label: 'original' });
    const originalTree = treeOf(dir);
    writeFiles(dir, { 'thing': null, 'folder': null });
    writeFiles(dir, { 'thing/now/deep.txt': 'deep\n', 'folder': 'now a file\n' });
    const swapped = await store.save({ label: 'swapped' });
    const swappedTree = treeOf(dir);
    await store.restore({ snapshot: original.snapshot.commit });
    assert.deepEqual(treeOf(dir), originalTree);
    await store.restore({ snapshot: swapped.snapshot.commit });
    assert.deepEqual(treeOf(dir), swappedTree);
  });

  it('resets the index to HEAD so everything restored reads as uncommitted, and never moves HEAD or the branch', async () => {
    const dir = makeRepo({ 'README.md': 'x\n', 'a.txt': 'a\n' });
    const store = new WipStore({ cwd: dir });
    writeFiles(dir, { 'a.txt': 'changed\n', 'staged.txt': 'staged\n' });
    git(dir, ['add', 'staged.txt']);
    const saved = await store.save({});
    writeFiles(dir, { 'a.txt': 'a\n', 'staged.txt': null });
    git(dir, ['add', '-A']);
    const head = git(dir, ['rev-parse', 'HEAD']).trim();
    const headFile = readFileSync(join(dir, '.git', 'HEAD'), 'utf8');
    await store.restore({ snapshot: saved.snapshot.commit });
    assert.equal(git(dir, ['rev-parse', 'HEAD']).trim(), head);
    assert.equal(readFileSync(join(dir, '.git', 'HEAD'), 'utf8'), headFile);
    assert.equal(git(dir, ['diff', '--cached', '--name-only']), '', 'nothing is staged');
    assert.equal(git(dir, ['status', '--porcelain']), ' M a.txt\n?? staged.txt\n');
  });

  it('leaves an index that holds HEAD already as it is, since the reset would leave it so, and resets one with anything staged', async () => {
    const dir = makeRepo({ 'README.md': 'x\n', 'a.txt': 'a\n', 'deep/b.txt': 'b\n' });
    const calls: string[] = [];
    const runner = new SimpleGitRunner(dir);
    const store = new WipStore({ cwd: dir, git: { run: (args, options) => (calls.push(args.slice(0, 2).join(' ')), runner.run(args, options)) } });
    writeFiles(dir, { 'a.txt': 'changed\n', 'deep/b.txt': null, 'new.txt': 'new\n' });
    const saved = await store.save({});
    writeFiles(dir, { 'a.txt': 'a\n', 'deep/b.txt': 'b\n', 'new.txt': null });
    git(dir, ['status', '--porcelain']);
    const index = readFileSync(join(dir, '.git', 'index'));
    calls.length = 0;
    await store.restore({ snapshot: saved.snapshot.commit });
    assert.equal(calls.includes('read-tree --reset'), false, 'no reset of an index that holds HEAD');
    assert.deepEqual(readFileSync(join(dir, '.git', 'index')), index, 'the index file is not written');
    const after = { stage: git(dir, ['ls-files', '--stage']), status: git(dir, ['status', '--porcelain']) };
    assert.equal(after.status, ' M a.txt\n D deep/b.txt\n?? new.txt\n');
    git(dir, ['read-tree', '--reset', 'HEAD']);
    assert.deepEqual({ stage: git(dir, ['ls-files', '--stage']), status: git(dir, ['status', '--porcelain']) }, after, 'a reset now changes nothing');

    git(dir, ['add', 'new.txt']);
    calls.length = 0;
    await store.restore({ snapshot: saved.snapshot.commit });
    assert.equal(calls.includes('read-tree --reset'), true, 'an index with something staged is reset');
    assert.equal(git(dir, ['diff', '--cached', '--name-only']), '', 'nothing is staged');
  });

  it('reads the snapshot\'s trees and hashes the files it overwrites without a process, and asks git where a replace ref or a special file could change the answer', async () => {
    const dir = makeRepo({ 'README.md': 'x\n', '.gitattributes': '*.crlf eol=crlf\n', 'deep/a.txt': 'a\n', 'deep/x.crlf': 'one\ntwo\n' });
    const calls: string[] = [];
    const runner = new SimpleGitRunner(dir);
    const counted: GitRunner = { run: (args, options) => (calls.push(args.slice(0, 2).join(' ')), runner.run(args, options)) };
    const store = new WipStore({ cwd: dir, git: counted });
    writeFiles(dir, { 'deep/a.txt': 'saved\n', 'deep/x.crlf': 'saved\nlines\n', 'deep/sub/new.txt': 'new\n' });
    const saved = await store.save({});
    const work = { 'deep/a.txt': 'work\n', 'deep/x.crlf': 'work\r\n', 'deep/sub/new.txt': null };
    writeFiles(dir, work);
    calls.length = 0;
    const restored = await store.restore({ snapshot: saved.snapshot.commit });
    assert.deepEqual(calls.filter((call) => call.startsWith('cat-file') || call === 'hash-object --no-filters'), [], calls.join(' '));
    assert.equal(readFileSync(join(dir, 'deep', 'x.crlf'), 'utf8'), 'saved\r\nlines\r\n', 'the tree\'s .gitattributes, read without git, applies');
    assert.equal(readFileSync(join(dir, 'deep', 'sub', 'new.txt'), 'utf8'), 'new\n');
    // The overwritten x.crlf held CRLF bytes, which git stores as LF and its checkout (eol=crlf)
    // turns back into the same CRLF bytes: the checkpoint gives it back as it was.
    assert.equal(restored.inexact, undefined);

    // A path lstat does not call a file is hashed by git, which follows a symlink: the same ids either way.
    const plumbing = new Plumbing(counted, dir);
    symlinkSync('x.crlf', join(dir, 'deep', 'link'));
    const raw = (path: string) => git(dir, ['hash-object', '--no-filters', path]).trim();
    calls.length = 0;
    assert.deepEqual(await plumbing.hashRaw(dir, ['deep/a.txt', 'deep/x.crlf'], 'sha1'), [raw('deep/a.txt'), raw('deep/x.crlf')]);
    assert.deepEqual(calls, []);
    assert.deepEqual(await plumbing.hashRaw(dir, ['deep/a.txt', 'deep/link'], 'sha1'), [raw('deep/a.txt'), raw('deep/link')]);
    assert.deepEqual(calls, ['hash-object --no-filters']);
    rmSync(join(dir, 'deep', 'link'));

    // With a replace ref git may read other objects than the ids name: git reads the trees.
    const blob = (text: string) => git(dir, ['hash-object', '-w', '--stdin'], { input: text }).trim();
    git(dir, ['replace', blob('unused one\n'), blob('unused two\n')]);
    writeFiles(dir, work);
    calls.length = 0;
    await store.restore({ snapshot: saved.snapshot.commit });
    assert.ok(calls.includes('cat-file --batch'), calls.join(' '));
    assert.equal(readFileSync(join(dir, 'deep', 'x.crlf'), 'utf8'), 'saved\r\nlines\r\n');
  });

  // The file edited after it was staged (git refuses the reset as things are), left as staged (it
  // would refuse once the restore wrote the file), and either in a split index (whose own file
  // holds none of the entries).
  /** A snapshot of f and g saved, then f staged at another content, away from HEAD and the snapshot. */
  const stagedAwayFromSaved = async () => {
    const dir = makeRepo({ f: 'one\n', g: 'x\n' });
    const store = new WipStore({ cwd: dir, policy: null });
    writeFiles(dir, { f: 'saved\n', g: 'saved\n' });
    const saved = (await store.save({})).snapshot;
    writeFiles(dir, { f: 'two\n', g: 'x\n' });
    git(dir, ['add', 'f']);
    return { dir, store, saved };
  };
  const cases = [['--skip-worktree', 'edited'], ['--assume-unchanged', 'edited'], ['--skip-worktree', 'as staged'], ['--assume-unchanged', 'as staged'], ['--skip-worktree', 'split'], ['--assume-unchanged', 'split']] as const;
  for (const [flag, how] of cases) {
    it(`refuses before writing anything, and its plan says so, where git would refuse the index's reset: an entry under ${flag} staged away from HEAD (${how})`, async () => {
      const { dir, store, saved } = await stagedAwayFromSaved();
      git(dir, ['update-index', flag, 'f']);
      if (how !== 'as staged') writeFiles(dir, { f: 'three\n' });
      if (how === 'split') git(dir, ['update-index', '--split-index']);
      // The index's entries and flags, not its bytes: git status refreshes racily clean stat data.
      const written = () => {
        const { refs, tree, head } = stateOf(dir);
        return { refs, tree, head, index: git(dir, ['ls-files', '-s', '-v']) };
      };
      const before = written();
      const plan = await store.plan({ snapshot: saved.commit });
      assert.equal(plan.refusal?.code, 'git-failed');
      assert.match(plan.refusal?.message ?? '', /nothing was changed/);
      await assert.rejects(store.restore({ snapshot: saved.commit }), (error) => isWipError(error, 'git-failed') && /(not uptodate|"f", under a flag)/.test(error.message) && /--no-skip-worktree/.test(error.message));
      assert.deepEqual(written(), before, 'nothing was written: files, index, refs');
      assert.equal(readFileSync(join(dir, 'f'), 'utf8'), how === 'as staged' ? 'two\n' : 'three\n');
      // With the flag cleared, the same restore runs whole.
      git(dir, ['update-index', flag.replace('--', '--no-'), 'f']);
      await store.restore({ snapshot: saved.commit });
      assert.deepEqual([readFileSync(join(dir, 'f'), 'utf8'), readFileSync(join(dir, 'g'), 'utf8')], ['saved\n', 'saved\n']);
    });
  }

  it('names in its refusal over an entry under both flags the commands that clear them, after which the restore runs whole', async () => {
    const { dir, store, saved } = await stagedAwayFromSaved();
    git(dir, ['update-index', '--assume-unchanged', 'f']);
    git(dir, ['update-index', '--skip-worktree', 'f']);
    writeFiles(dir, { f: 'three\n' });
    let message = '';
    await assert.rejects(store.restore({ snapshot: saved.commit }), (error) => isWipError(error, 'git-failed') && (message = error.message) !== '');
    // Each command as the refusal words it, run on the path: update-index sets only the last flag option it reads.
    const commands = [...message.matchAll(/git update-index ([^;)]*?) -- <path>/g)].map((match) => (match[1] as string).split(' '));
    assert.ok(commands.length > 0, message);
    for (const options of commands) git(dir, ['update-index', ...options, '--', 'f']);
    assert.match(git(dir, ['ls-files', '-v', 'f']), /^H f$/m, `no flag is left: ${message}`);
    await store.restore({ snapshot: saved.commit });
    assert.deepEqual([readFileSync(join(dir, 'f'), 'utf8'), readFileSync(join(dir, 'g'), 'utf8')], ['saved\n', 'saved\n']);
  });

  it('takes a pre-restore checkpoint first, and restoring it undoes the restore', async () => {
    const dir = makeRepo();
    const store = new WipStore({ cwd: dir });
    writeFiles(dir, { 'a.txt': 'saved\n' });
    const saved = await store.save({ label: 'saved' });
    writeFiles(dir, { 'a.txt': 'edited since\n', 'b.txt': 'new since\n' });
    const edited = treeOf(dir);
    const result = await store.restore({ snapshot: saved.snapshot.commit, by: 'github:alex' });
    assert.equal(result.checkpoint.created, true);
    assert.equal(result.checkpoint.snapshot.kind, 'pre-restore');
    assert.equal(result.checkpoint.snapshot.label, `before ${saved.snapshot.commit.slice(0, 12)}`);
    assert.equal(result.checkpoint.snapshot.by, 'github:alex');
    assert.equal(git(dir, ['rev-parse', 'refs/chant/wip/main']).trim(), result.checkpoint.snapshot.commit);
    assert.equal(readFileSync(join(dir, 'a.txt'), 'utf8'), 'saved\n');
    const undo = await store.restore({ snapshot: result.checkpoint.snapshot.commit });
    assert.deepEqual(treeOf(dir), edited);
    assert.equal(undo.checkpoint.created, true, 'the undo checkpoints the restored state');
    assert.deepEqual(undo.paths, ['a.txt', 'b.txt']);
  });

  it('reuses the tip as the checkpoint when it already holds the working tree on this head', async () => {
    const dir = makeRepo();
    const store = new WipStore({ cwd: dir });
    writeFiles(dir, { 'a.txt': 'one\n' });
    const one = await store.save({ label: 'one' });
    writeFiles(dir, { 'a.txt': 'two\n' });
    const two = await store.save({ label: 'two' });
    const result = await store.restore({ snapshot: one.snapshot.commit });
    assert.equal(result.checkpoint.created, false);
    assert.deepEqual(result.checkpoint.snapshot, two.snapshot);
  });

  it('puts the files back over a HEAD that moved on and says so', async () => {
    const dir = makeRepo({ 'README.md': 'x\n', 'a.txt': 'a\n' });
    const store = new WipStore({ cwd: dir });
    writeFiles(dir, { 'a.txt': 'wip\n' });
    const saved = await store.save({});
    writeFiles(dir, { 'a.txt': 'a\n', 'b.txt': 'b\n' });
    git(dir, ['add', '-A']);
    git(dir, ['commit', '-q', '-m', 'moved on']);
    const head = git(dir, ['rev-parse', 'HEAD']).trim();
    const result = await store.restore({ snapshot: saved.snapshot.commit });
    assert.equal(result.headMoved, true);
    assert.equal(result.head, head);
    assert.equal(git(dir, ['rev-parse', 'HEAD']).trim(), head);
    assert.equal(readFileSync(join(dir, 'a.txt'), 'utf8'), 'wip\n');
    assert.equal(git(dir, ['status', '--porcelain']), ' M a.txt\n D b.txt\n');
    assert.deepEqual(result.paths, ['a.txt', 'b.txt']);
  });

  it('says headMoved is false and lists no path when nothing differs', async () => {
    const dir = makeRepo();
    const store = new WipStore({ cwd: dir });
    const saved = await store.save({});
    const result = await store.restore({});
    assert.equal(result.headMoved, false);
    assert.deepEqual(result.paths, []);
    assert.equal(result.snapshot.commit, saved.snapshot.commit);
  });

  it('leaves ignored files as they are', async () => {
    const dir = makeRepo({ 'README.md': 'x\n', '.gitignore': '*.log\nbuild/\n' });
    const store = new WipStore({ cwd: dir });
    writeFiles(dir, { 'a.txt': 'a\n', 'debug.log': 'log one\n', 'build/out': 'out one\n' });
    const saved = await store.save({});
    writeFiles(dir, { 'a.txt': null, 'debug.log': 'log two\n', 'build/out': 'out two\n', 'build/more': 'more\n' });
    await store.restore({ snapshot: saved.snapshot.commit });
    assert.equal(readFileSync(join(dir, 'debug.log'), 'utf8'), 'log two\n');
    assert.equal(readFileSync(join(dir, 'build/out'), 'utf8'), 'out two\n');
    assert.equal(readFileSync(join(dir, 'build/more'), 'utf8'), 'more\n');
    assert.equal(readFileSync(join(dir, 'a.txt'), 'utf8'), 'a\n');
  });

  it('refuses with wip-restore-blocked, changing nothing, when an ignored file is in the way', async () => {
    const dir = makeRepo({ 'README.md': 'x\n', '.gitignore': '*.log\nbuild/\n' });
    const store = new WipStore({ cwd: dir });
    // The snapshot holds files the working tree now ignores: it was taken without .gitignore.
    writeFiles(dir, { '.gitignore': null, 'debug.log': 'saved log\n', 'build/out': 'saved out\n', 'cache': 'saved file\n' });
    const saved = await store.save({});
    writeFiles(dir, { '.gitignore': '*.log\nbuild/\ncache/\n', 'debug.log': 'precious log\n', 'build/out': 'precious out\n', 'cache': null, 'cache/blob.bin': 'precious blob\n' });
    git(dir, ['add', '.gitignore']);
    const before = stateOf(dir);
    await assert.rejects(store.restore({ snapshot: saved.snapshot.commit }), (error) => {
      assert.ok(isWipError(error, 'wip-restore-blocked'));
      assert.deepEqual(error.paths, ['build/out', 'cache/blob.bin', 'debug.log']);
      assert.match(error.message, /build\/out \(an ignored file[^;]*; cache\/blob\.bin \(an ignored file[^;]*; debug\.log \(an ignored file/);
      return true;
    });
    assert.deepEqual(stateOf(dir), before, 'nothing changed: refs, index, files, status');
  });

  it('keeps the index stat data of paths it did not change, so git status re-reads nothing', async () => {
    const files: Record<string, string> = { 'README.md': 'x\n' };
    for (let i = 0; i < 50; i += 1) files[`src/file-${i}.txt`] = `content ${i}\n`;
    const dir = makeRepo(files);
    git(dir, ['status', '--porcelain']);
    const store = new WipStore({ cwd: dir });
    writeFiles(dir, { 'src/file-1.txt': 'changed\n', 'src/file-2.txt': 'changed\n' });
    const saved = await store.save({});
    git(dir, ['checkout', '--', '.']);
    git(dir, ['status', '--porcelain']);
    const before = indexStat(dir);
    await new Promise((resolve) => setTimeout(resolve, 20));
    const result = await store.restore({ snapshot: saved.snapshot.commit });
    assert.deepEqual(result.paths, ['src/file-1.txt', 'src/file-2.txt']);
    const after = indexStat(dir);
    for (const [path, stat] of before) {
      if (result.paths.includes(path)) continue;
      assert.equal(after.get(path), stat, `${path} kept its stat data`);
    }
    assert.notEqual(before.get('src/file-3.txt'), undefined);
    assert.match(before.get('src/file-3.txt') ?? '', /size: 10/);
    assert.ok(statSync(join(dir, 'src/file-1.txt')).size === 8);
  });

  it('refuses over unmerged index entries left by a conflict, which no snapshot holds, and changes nothing', async () => {
    const dir = makeRepo({ 'README.md': 'x\n', 'c.txt': 'base\n' });
    git(dir, ['checkout', '-q', '-b', 'side']);
    writeFiles(dir, { 'c.txt': 'side\n' });
    git(dir, ['commit', '-qam', 'side']);
    git(dir, ['checkout', '-q', 'main']);
    writeFiles(dir, { 'c.txt': 'main\n' });
    git(dir, ['commit', '-qam', 'main']);
    const store = new WipStore({ cwd: dir });
    const clean = await store.save({ label: 'clean' });
    git(dir, ['merge', '-q', 'side'], { allowFail: true });
    assert.match(git(dir, ['status', '--porcelain']), /^UU c\.txt/m);
    const before = stateOf(dir);
    await assert.rejects(store.restore({ snapshot: clean.snapshot.commit }), (error) => isWipError(error, 'wip-restore-blocked') && /a merge is in progress/.test(error.message) && error.paths.join() === 'c.txt');
    assert.deepEqual(stateOf(dir), before);
    // The same conflict without the merge's own files (git update-index can leave one so).
    rmSync(join(dir, '.git', 'MERGE_HEAD'));
    await assert.rejects(store.restore({ snapshot: clean.snapshot.commit }), (error) => isWipError(error, 'wip-restore-blocked') && /the index holds a conflict/.test(error.message));
    git(dir, ['checkout', '-q', '-f', 'main']);
    const result = await store.restore({ snapshot: clean.snapshot.commit });
    assert.deepEqual(result.paths, []);
  });
  it('clears the notice of a restore killed partway once a later one ends, even one that had nothing left to write', async () => {
    const dir = makeRepo({ 'a.txt': 'one\n' });
    const store = new WipStore({ cwd: dir });
    writeFiles(dir, { 'a.txt': 'two\n' });
    const first = await store.save({ label: 'two' });
    writeFiles(dir, { 'a.txt': 'three\n' });
    await store.save({ label: 'three' });
    const done = await store.restore({ snapshot: first.snapshot.commit });
    // As a restore killed after its last file, before it could end, leaves it.
    writeFileSync(join(dir, '.git', 'chant-restoring'), `${JSON.stringify({ branch: 'main', snapshot: first.snapshot.commit, checkpoint: done.checkpoint.snapshot.commit })}\n`);
    assert.equal((await store.list()).interruptedRestore?.checkpoint, done.checkpoint.snapshot.commit);
    const again = await store.restore({ snapshot: first.snapshot.commit });
    assert.deepEqual(again.paths, []);
    assert.equal((await store.list()).interruptedRestore, undefined, 'the working tree is the snapshot whole: nothing is partway any more');
  });

  it('reads a file it overwrites for the save of the working tree and for the look before the checkpoint, not a third time to know the checkpoint gives it back', async () => {
    const dir = makeRepo({ 'a.txt': 'a\n', 'b.txt': 'b\n' });
    const store = new WipStore({ cwd: dir });
    const saved = await store.save({ label: 'target' });
    writeFiles(dir, { 'a.txt': 'edited\n' });
    const file = join(dir, 'a.txt');
    const fs = createRequire(import.meta.url)('node:fs') as typeof import('node:fs');
    const { openSync, readFileSync: readWhole } = fs;
    // Each read of the file: an open of it, or a readFileSync (whose own open is not counted again).
    const reads: string[] = [];
    let inReadFile = false;
    fs.openSync = ((path: Parameters<typeof openSync>[0], ...rest: unknown[]) => {
      if (!inReadFile && String(path) === file) reads.push('openSync');
      return (openSync as (...args: unknown[]) => number)(path, ...rest);
    }) as typeof openSync;
    fs.readFileSync = ((path: Parameters<typeof readWhole>[0], ...rest: unknown[]) => {
      if (String(path) === file) reads.push('readFileSync');
      inReadFile = true;
      try {
        return (readWhole as (...args: unknown[]) => unknown)(path, ...rest);
      } finally {
        inReadFile = false;
      }
    }) as typeof readWhole;
    syncBuiltinESMExports();
    try {
      const result = await store.restore({ snapshot: saved.snapshot.commit });
      assert.deepEqual(result.paths, ['a.txt']);
    } finally {
      fs.openSync = openSync;
      fs.readFileSync = readWhole;
      syncBuiltinESMExports();
    }
    assert.equal(readFileSync(file, 'utf8'), 'a\n');
    // Once hashed for the checkpoint's tree, once by the look that refuses a file changed since.
    assert.equal(reads.length, 2, reads.join(', '));
  });

  it('reads each tree and blob from its loose file once a restore and once a plan, the checks taking what the diff of the two trees read', async () => {
    const dir = makeRepo({ 'src/a/one.txt': 'one\n', 'src/b/two.txt': 'two\n', 'top.txt': 'top\n' });
    const store = new WipStore({ cwd: dir });
    const saved = await store.save({ label: 'target' });
    writeFiles(dir, { 'src/a/one.txt': 'one edited\n', 'src/b/two.txt': 'two edited\n' });
    const objects = join(dir, '.git', 'objects');
    const fs = createRequire(import.meta.url)('node:fs') as typeof import('node:fs');
    const { readFileSync: readWhole } = fs;
    /** The loose objects read whole by `call`, each as often as it was read. */
    const readsOf = async (call: () => Promise<unknown>): Promise<string[]> => {
      const read: string[] = [];
      fs.readFileSync = ((path: Parameters<typeof readWhole>[0], ...rest: unknown[]) => {
        const text = String(path);
        if (text.startsWith(`${objects}/`) && /\/[0-9a-f]{2}\/[0-9a-f]{38}$/.test(text)) read.push(text.slice(-41).replace('/', ''));
        return (readWhole as (...args: unknown[]) => unknown)(path, ...rest);
      }) as typeof readWhole;
      syncBuiltinESMExports();
      try {
        await call();
      } finally {
        fs.readFileSync = readWhole;
        syncBuiltinESMExports();
      }
      return read;
    };
    // Trees and blobs read more than once: commits are other reads' (the tip's, the new checkpoint's).
    const again = (read: string[]): string[] => [...new Set(read.filter((oid, at) => read.indexOf(oid) !== at))]
      .filter((oid) => git(dir, ['cat-file', '-t', oid]).trim() !== 'commit');
    const planned = await readsOf(() => store.plan({ snapshot: saved.snapshot.commit }));
    assert.ok(planned.length > 0, 'the plan read loose objects');
    assert.deepEqual(again(planned), []);
    const restored = await readsOf(() => store.restore({ snapshot: saved.snapshot.commit }));
    assert.ok(restored.length > 0, 'the restore read loose objects');
    assert.deepEqual(again(restored), []);
    assert.equal(readFileSync(join(dir, 'src/a/one.txt'), 'utf8'), 'one\n');
    assert.equal(readFileSync(join(dir, 'src/b/two.txt'), 'utf8'), 'two\n');
  });

  it('stages the files it writes itself side by side in its staging folder, so no folder is made there or left to remove', async () => {
    const dir = makeRepo({ 'src/a/one.txt': 'one\n', 'src/b/deep/two.txt': 'two\n', 'top.txt': 'top\n' });
    const store = new WipStore({ cwd: dir });
    const saved = await store.save({ label: 'target' });
    writeFiles(dir, { 'src/a/one.txt': 'one edited\n', 'src/b/deep/two.txt': 'two edited\n', 'top.txt': 'top edited\n' });
    const gitDir = join(dir, '.git');
    const fs = createRequire(import.meta.url)('node:fs') as typeof import('node:fs');
    const { renameSync, mkdirSync } = fs;
    const moved: string[] = [];
    const made: string[] = [];
    fs.renameSync = ((from: Parameters<typeof renameSync>[0], to: Parameters<typeof renameSync>[1]) => {
      const text = Buffer.isBuffer(from) ? from.toString('latin1') : String(from);
      if (/\.staging\//.test(text)) moved.push(text.slice(text.indexOf('.staging/') + '.staging/'.length));
      return renameSync(from, to);
    }) as typeof renameSync;
    fs.mkdirSync = ((path: Parameters<typeof mkdirSync>[0], ...rest: unknown[]) => {
      const text = Buffer.isBuffer(path) ? path.toString('latin1') : String(path);
      if (text.startsWith(gitDir) && /\.staging\//.test(text)) made.push(text);
      return (mkdirSync as (...args: unknown[]) => unknown)(path, ...rest);
    }) as typeof mkdirSync;
    syncBuiltinESMExports();
    let result;
    try {
      result = await store.restore({ snapshot: saved.snapshot.commit });
    } finally {
      fs.renameSync = renameSync;
      fs.mkdirSync = mkdirSync;
      syncBuiltinESMExports();
    }
    assert.deepEqual(result.paths, ['src/a/one.txt', 'src/b/deep/two.txt', 'top.txt']);
    assert.equal(moved.length, 3, moved.join(', '));
    assert.deepEqual(moved.filter((name) => name.includes('/')), [], 'each staged file was in the staging folder itself');
    assert.deepEqual(made, []);
    assert.equal(readFileSync(join(dir, 'src/b/deep/two.txt'), 'utf8'), 'two\n');
    assert.equal(readFileSync(join(dir, 'top.txt'), 'utf8'), 'top\n');
    assert.deepEqual(git(dir, ['status', '--porcelain']), '');
    assert.deepEqual(readdirSync(gitDir).filter((name) => name.startsWith('chant-wip-') && name.endsWith('.staging')), []);
  });

  it('looks for the configuration and attributes files that are not there without reading them', async () => {
    const dir = makeRepo({ 'src/a/one.txt': 'one\n', 'top.txt': 'top\n' });
    const store = new WipStore({ cwd: dir });
    const saved = await store.save({ label: 'target' });
    writeFiles(dir, { 'src/a/one.txt': 'one edited\n' });
    const fs = createRequire(import.meta.url)('node:fs') as typeof import('node:fs');
    const { readFileSync: readWhole } = fs;
    // Each read that failed for a file not there: configuration and attributes files are looked for first.
    const missed: string[] = [];
    fs.readFileSync = ((path: Parameters<typeof readWhole>[0], ...rest: unknown[]) => {
      try {
        return (readWhole as (...args: unknown[]) => unknown)(path, ...rest);
      } catch (error) {
        const text = Buffer.isBuffer(path) ? path.toString('latin1') : String(path);
        if ((error as NodeJS.ErrnoException).code === 'ENOENT' && /(config|config\.worktree|attributes)$/.test(text)) missed.push(text);
        throw error;
      }
    }) as typeof readWhole;
    syncBuiltinESMExports();
    try {
      assert.deepEqual((await store.restore({ snapshot: saved.snapshot.commit })).paths, ['src/a/one.txt']);
    } finally {
      fs.readFileSync = readWhole;
      syncBuiltinESMExports();
    }
    assert.deepEqual(missed, []);
  });

  it('starts git status without waiting for the read of a hash cache too small to make a private index of', async () => {
    const dir = makeRepo({ 'src/a/one.txt': 'one\n', 'top.txt': 'top\n' });
    writeFiles(dir, { 'top.txt': 'top edited\n' });
    const runner = new SimpleGitRunner(dir);
    let statusAt = Number.POSITIVE_INFINITY;
    const store = new WipStore({ cwd: dir, git: { run: (args, options) => {
      if (args.includes('status')) statusAt = Math.min(statusAt, performance.now());
      return runner.run(args, options);
    } } });
    const saved = await store.save({ label: 'target' });
    writeFiles(dir, { 'src/a/one.txt': 'one edited\n' });
    const cacheFile = join(dir, '.git', HASH_CACHE_FILE);
    assert.ok(statSync(cacheFile).size > 0, 'the save left a hash cache');
    const promises = createRequire(import.meta.url)('node:fs/promises') as typeof import('node:fs/promises');
    const { readFile } = promises;
    let cacheReadAt = Number.POSITIVE_INFINITY;
    promises.readFile = (async (path: Parameters<typeof readFile>[0], ...rest: unknown[]) => {
      if (String(path) !== cacheFile) return (readFile as (...args: unknown[]) => Promise<unknown>)(path, ...rest);
      await new Promise((resolve) => setTimeout(resolve, 300));
      const read = await (readFile as (...args: unknown[]) => Promise<unknown>)(path, ...rest);
      cacheReadAt = Math.min(cacheReadAt, performance.now());
      return read;
    }) as typeof readFile;
    syncBuiltinESMExports();
    statusAt = Number.POSITIVE_INFINITY;
    try {
      assert.deepEqual((await store.restore({ snapshot: saved.snapshot.commit })).paths, ['src/a/one.txt']);
    } finally {
      promises.readFile = readFile;
      syncBuiltinESMExports();
    }
    assert.ok(Number.isFinite(cacheReadAt), 'the restore read the hash cache');
    assert.ok(statusAt < cacheReadAt, `git status started at ${statusAt.toFixed(1)} ms, the cache was read at ${cacheReadAt.toFixed(1)} ms`);
    assert.equal(readFileSync(join(dir, 'src/a/one.txt'), 'utf8'), 'one\n');
  });
});
