// The secret gate reads the files a save wrote from their loose objects, without a cat-file
// process: what it reads is checked against each id, whatever folder it guessed, and git is asked
// for the rest (packed objects, a guess that does not hold).
import assert from 'node:assert/strict';
import { mkdirSync, readFileSync, rmSync, statSync, truncateSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { test } from 'node:test';
import { randomBytes } from 'node:crypto';
import { spawnSync } from 'node:child_process';
import { deflateSync } from 'node:zlib';
import { looseObjectsDir, notThereLoose, readLooseBlobs, readLooseInfo } from '../lib/git/loose-objects.js';
import { SimpleGitRunner } from '../lib/git/runner.js';
import type { GitRunner } from '../lib/git/runner.js';
import { readBlobs } from '../lib/git/storage.js';
import { healBrokenLooseBlob, looseTarget, syncsLooseObjects } from '../lib/git/loose-target.js';
import { WipStore } from '../lib/store/wip-store.js';
import { git, makeRepo, stagedTree, tempDir, writeFiles } from './helpers.js';

function recording(cwd: string): { git: GitRunner; calls: string[][] } {
  const inner = new SimpleGitRunner(cwd);
  const calls: string[][] = [];
  return { calls, git: { run: (args, options) => (calls.push([...args]), inner.run(args, options)) } };
}

test('blobs a save wrote are read from their loose files, packed ones through one cat-file, each byte for byte', async () => {
  const dir = makeRepo({ 'old.txt': 'packed content\n' });
  git(dir, ['gc', '-q']);
  const packed = git(dir, ['rev-parse', 'HEAD:old.txt']).trim();
  const loose = git(dir, ['hash-object', '-w', '--stdin'], { input: 'written loose\n' }).trim();
  const big = git(dir, ['hash-object', '-w', '--stdin'], { input: 'x'.repeat(5000) }).trim();

  const only = recording(dir);
  const looseOnly = await readBlobs(only.git, dir, [loose, big, loose], 100);
  assert.deepEqual(only.calls, [], 'no process for loose blobs');
  assert.equal(looseOnly.get(loose)?.toString(), 'written loose\n');
  assert.equal(looseOnly.get(big)?.toString(), 'x'.repeat(100), 'cut to the limit');

  const mixed = recording(dir);
  const both = await readBlobs(mixed.git, dir, [loose, packed], 1024);
  assert.deepEqual(mixed.calls, [['cat-file', '--batch']], 'git is asked for the packed one only');
  assert.equal(both.get(packed)?.toString(), 'packed content\n');
  assert.equal(both.get(loose)?.toString(), 'written loose\n');
});

test('a loose file whose bytes do not hash to its id is not taken: git answers for it', async () => {
  const dir = makeRepo({ 'a.txt': 'the real content\n' });
  git(dir, ['gc', '-q']);
  const oid = git(dir, ['rev-parse', 'HEAD:a.txt']).trim();
  // A loose file under that id holding other bytes (git itself reads the pack first here).
  mkdirSync(join(dir, '.git', 'objects', oid.slice(0, 2)), { recursive: true });
  const forged = Buffer.from('forged content\n');
  writeFileSync(join(dir, '.git', 'objects', oid.slice(0, 2), oid.slice(2)), deflateSync(Buffer.concat([Buffer.from(`blob ${forged.length}\0`), forged])));
  assert.equal(readLooseBlobs(join(dir, '.git', 'objects'), [oid], 1024).size, 0);
  const reading = recording(dir);
  const contents = await readBlobs(reading.git, dir, [oid], 1024);
  assert.equal(contents.get(oid)?.toString(), 'the real content\n');
  assert.deepEqual(reading.calls, [['cat-file', '--batch']]);
});

test('the objects folder is found as git finds it: from a sub-folder, a linked worktree, GIT_DIR and GIT_OBJECT_DIRECTORY', () => {
  const dir = makeRepo({ 'sub/deep/a.txt': 'a\n' });
  const objects = git(dir, ['rev-parse', '--path-format=absolute', '--git-path', 'objects']).trim();
  assert.equal(looseObjectsDir(join(dir, 'sub', 'deep'), {}), objects);
  const linked = join(tempDir(), 'linked');
  git(dir, ['worktree', 'add', '-q', linked]);
  assert.equal(looseObjectsDir(join(linked, 'sub'), {}), objects, 'a linked worktree shares the main objects folder');
  assert.equal(looseObjectsDir(tempDir(), { GIT_DIR: join(dir, '.git') }), objects);
  assert.equal(looseObjectsDir(dir, { GIT_OBJECT_DIRECTORY: '/nowhere/objects' }), '/nowhere/objects');
  const outside = tempDir();
  const found = looseObjectsDir(outside, {});
  // A folder in no repository finds none (or one above the temporary folder; never this one's).
  assert.ok(found === null || !found.startsWith(outside));
});

test('the type and size of loose objects are read from their headers as cat-file --batch-check reads them; packed and missing ones are left to git', () => {
  const dir = makeRepo({ 'old.txt': 'packed content\n' });
  git(dir, ['gc', '-q']);
  const packed = git(dir, ['rev-parse', 'HEAD:old.txt']).trim();
  const hashed = (input: string) => git(dir, ['hash-object', '-w', '--stdin'], { input }).trim();
  // Small, empty, compressible and incompressible (the stream begins with Huffman tables), 1 MiB.
  const blobs = [hashed('written loose\n'), hashed(''), hashed('x'.repeat(100_000)), hashed(randomBytes(3000).toString('base64')), hashed(randomBytes(1 << 20).toString('base64'))];
  const tree = git(dir, ['mktree'], { input: `100644 blob ${blobs[0] as string}\tone.txt\n` }).trim();
  const commit = git(dir, ['commit-tree', '-m', 'loose', tree]).trim();
  const missing = '1'.repeat(40);
  const asked = [...blobs, tree, commit, packed, missing];
  const found = readLooseInfo(join(dir, '.git', 'objects'), asked);
  const checked = git(dir, ['cat-file', '--batch-check=%(objectname) %(objecttype) %(objectsize)'], { input: asked.map((oid) => `${oid}\n`).join('') }).trim().split('\n');
  for (const [index, oid] of [...blobs, tree, commit].entries()) {
    const [, type, size] = (checked[index] as string).split(' ');
    assert.deepEqual(found.get(oid), { type, size: Number(size) }, `object ${index}`);
  }
  assert.equal(found.has(packed), false, 'a packed object is left to git');
  assert.equal(found.has(missing), false);
});

test('a save\'s blobs, trees and commit in a group-shared repository get the modes git gives its own objects there', async () => {
  const before = process.umask(0o077);
  try {
    const dir = tempDir();
    git(dir, ['init', '-q', '-b', 'main', '--shared=group']);
    writeFiles(dir, { 'd/e/a.txt': 'a\n' });
    git(dir, ['add', '-A']);
    git(dir, ['commit', '-qm', 'first']);
    const objects = join(dir, '.git', 'objects');
    assert.notEqual(statSync(objects).mode & 0o2000, 0, 'git made the objects folder set-group-id');
    writeFiles(dir, { 'd/e/a.txt': 'changed\n' });
    const { snapshot } = await new WipStore({ cwd: dir, policy: null, staging: 'status' }).save({ label: 'shared' });
    const modeOf = (oid: string): number => statSync(join(objects, oid.slice(0, 2), oid.slice(2))).mode & 0o7777;
    const gits = modeOf(git(dir, ['hash-object', '-w', '--stdin'], { input: 'written by git\n' }).trim());
    assert.equal(gits & 0o040, 0o040, 'git gives the group read');
    for (const oid of [snapshot.commit, snapshot.tree, git(dir, ['rev-parse', `${snapshot.tree}:d`]).trim(), git(dir, ['rev-parse', `${snapshot.tree}:d/e`]).trim()]) {
      assert.equal(modeOf(oid), gits, `${oid}: the mode of git's own object`);
    }
    git(dir, ['fsck', '--strict', '--no-dangling']);
  } finally {
    process.umask(before);
  }
});

test('loose objects are synced to disk where git\'s configuration may ask git to sync them', () => {
  const dir = makeRepo();
  const home = tempDir();
  const layout = { commonDir: join(dir, '.git'), gitDir: join(dir, '.git'), objectsDir: join(dir, '.git', 'objects') };
  const ambient = { HOME: home, PATH: process.env.PATH, GIT_CONFIG_NOSYSTEM: '1' };
  assert.equal(syncsLooseObjects(layout, ambient), false, 'git\'s default syncs no loose object');
  assert.equal(looseTarget(layout, ambient)?.fsync, false);
  git(dir, ['config', 'core.fsync', 'loose-object']);
  assert.equal(syncsLooseObjects(layout, ambient), true);
  git(dir, ['config', '--unset', 'core.fsync']);
  writeFileSync(join(home, '.gitconfig'), '[core]\n\tfsyncObjectFiles = true\n');
  assert.equal(syncsLooseObjects(layout, ambient), true, 'the global configuration');
  writeFileSync(join(home, '.gitconfig'), '[include]\n\tpath = other\n');
  assert.equal(syncsLooseObjects(layout, ambient), true, 'a file it does not read may say so');
  writeFileSync(join(home, '.gitconfig'), '[user]\n\tname = n\n');
  assert.equal(syncsLooseObjects(layout, ambient), false);
  assert.equal(syncsLooseObjects(layout, { ...ambient, GIT_CONFIG_COUNT: '1', GIT_CONFIG_KEY_0: 'core.fsync', GIT_CONFIG_VALUE_0: 'all' }), true, 'configuration given in the environment');
  assert.notEqual(looseTarget(layout, ambient), null, 'not shared: chant writes');
  git(dir, ['config', 'core.sharedRepository', 'group']);
  assert.equal(looseTarget(layout, ambient), null, 'shared: git writes, with the permissions it gives');
});

test('a loose blob is put whole again from its file only where it is broken, the file read then alone (a restore hashes every file it replaces, some past what one read can hold)', () => {
  const dir = makeRepo();
  writeFiles(dir, { 'a.txt': 'some bytes\n' });
  const oid = git(dir, ['hash-object', '-w', 'a.txt']).trim();
  const objects = join(dir, '.git', 'objects');
  let reads = 0;
  const content = (): Buffer => {
    reads += 1;
    return readFileSync(join(dir, 'a.txt'));
  };
  assert.equal(healBrokenLooseBlob(objects, oid, content, 'sha1'), false, 'whole');
  assert.equal(reads, 0, 'a whole loose blob is not read from the file');
  truncateSync(join(objects, oid.slice(0, 2), oid.slice(2)), 5);
  assert.equal(healBrokenLooseBlob(objects, oid, content, 'sha1'), true, 'cut short');
  assert.equal(reads, 1);
  assert.equal(git(dir, ['cat-file', 'blob', oid]), 'some bytes\n');
  git(dir, ['add', 'a.txt']);
  git(dir, ['commit', '-qm', 'a']);
  git(dir, ['repack', '-adq']);
  git(dir, ['prune-packed']);
  assert.equal(healBrokenLooseBlob(objects, oid, content, 'sha1'), false, 'packed');
  assert.equal(reads, 1, 'a packed blob is not read from the file');
});

test('a loose blob put whole again keeps the permissions of the file it replaces, which git gave it (in a repository whose configuration shares it, not the umask\'s)', () => {
  const dir = makeRepo();
  git(dir, ['config', 'core.sharedRepository', 'group']);
  writeFiles(dir, { 'a.txt': 'some bytes\n' });
  const objects = join(dir, '.git', 'objects');
  // A umask that takes the group's bits: git gives them back to what it writes.
  const umask = process.umask(0o077);
  try {
    const oid = git(dir, ['hash-object', '-w', 'a.txt']).trim();
    const file = join(objects, oid.slice(0, 2), oid.slice(2));
    assert.equal(statSync(file).mode & 0o777, 0o440, 'as git writes it');
    truncateSync(file, 5);
    assert.equal(healBrokenLooseBlob(objects, oid, () => readFileSync(join(dir, 'a.txt')), 'sha1'), true);
    assert.equal(statSync(file).mode & 0o777, 0o440, 'the group may still read it');
    assert.equal(git(dir, ['cat-file', 'blob', oid]), 'some bytes\n');
  } finally {
    process.umask(umask);
  }
});

/**
 * A runner that runs `git gc --prune=now` right after the first `git hash-object` of the call, as
 * a user's gc in the window between a save's writes and its move of the ref; `before` sees each
 * command first.
 */
function gcAfterHashObject(dir: string, before: (args: readonly string[], collected: number) => void = () => undefined): { runner: GitRunner; collected: () => number } {
  const inner = new SimpleGitRunner(dir);
  let collected = 0;
  const runner: GitRunner = {
    run: async (args, options) => {
      before(args, collected);
      const out = await inner.run(args, options);
      if (args.includes('hash-object') && collected === 0) {
        collected += 1;
        git(dir, ['gc', '-q', '--prune=now']);
      }
      return out;
    },
  };
  return { runner, collected: () => collected };
}

/** `git fsck` finds nothing missing or broken. */
function assertWhole(dir: string): void {
  const fsck = spawnSync('git', ['fsck', '--no-dangling'], { cwd: dir, encoding: 'utf8' });
  assert.equal(fsck.status, 0, `${fsck.stdout}${fsck.stderr}`);
}

test('a save writes again the blobs a git gc --prune=now took between git writing them and the ref naming the snapshot, so the snapshot is whole', async () => {
  const dir = makeRepo();
  // More files than a save hashes itself: git's hash-object writes their blobs, and the gc runs right after it.
  writeFiles(dir, Object.fromEntries(Array.from({ length: 150 }, (_, index) => [`d/f${index}.txt`, `work ${index}\n`])));
  const { runner, collected } = gcAfterHashObject(dir);
  const saved = await new WipStore({ cwd: dir, git: runner }).save({});
  assert.equal(collected(), 1, 'the gc ran after hash-object');
  assertWhole(dir);
  assert.equal(git(dir, ['cat-file', 'blob', `${saved.snapshot.commit}:d/f7.txt`]), 'work 7\n');
});

test('a save writes again the blobs a git gc --prune=now took of the files still there when one of its files is gone meanwhile', async () => {
  const dir = makeRepo();
  writeFiles(dir, Object.fromEntries(Array.from({ length: 150 }, (_, index) => [`d/f${index}.txt`, `work ${index}\n`])));
  let removed = 0;
  const { runner } = gcAfterHashObject(dir, (args, collected) => {
    // Once the ref names the snapshot, the save asks git which of the blobs not there loose it
    // holds: the first file, whose blob the gc took, is deleted then.
    if (args.includes('cat-file') && collected === 1 && removed === 0) {
      removed += 1;
      rmSync(join(dir, 'd', 'f0.txt'));
    }
  });
  const saved = await new WipStore({ cwd: dir, git: runner }).save({});
  assert.equal(removed, 1, 'the file was deleted as the save wrote the blobs again');
  for (const index of [1, 7, 149]) assert.equal(git(dir, ['cat-file', 'blob', `${saved.snapshot.commit}:d/f${index}.txt`], { allowFail: true }), `work ${index}\n`, `d/f${index}.txt`);
});

test('a restore writes again the blobs of its checkpoint a git gc --prune=now took between git writing them and the ref naming the checkpoint, those of files it leaves alone too, so the checkpoint is whole', async () => {
  const dir = makeRepo();
  const plain = new WipStore({ cwd: dir });
  writeFiles(dir, { 'a.txt': 'first\n' });
  const first = (await plain.save({})).snapshot.commit;
  writeFiles(dir, { 'a.txt': 'second\n', ...Object.fromEntries(Array.from({ length: 150 }, (_, index) => [`d/f${index}.txt`, `work ${index}\n`])) });
  const { runner, collected } = gcAfterHashObject(dir);
  // Of a.txt alone: the checkpoint holds the new files, which the restore leaves as they are.
  const restored = await new WipStore({ cwd: dir, git: runner }).restore({ snapshot: first, paths: ['a.txt'] });
  assert.equal(collected(), 1, 'the gc ran after hash-object');
  assertWhole(dir);
  assert.equal(git(dir, ['cat-file', 'blob', `${restored.checkpoint.snapshot.commit}:d/f7.txt`]), 'work 7\n');
});

test('a save and a restore staged through a temporary index write again the blobs and trees a git gc --prune=now took between git writing them and the ref naming the snapshot', async () => {
  const dir = makeRepo();
  writeFiles(dir, { 'a.txt': 'first\n' });
  // The identity memo trusts a configuration file only once it has not changed for a moment: the
  // first save then learns the identity, and the saves after write their commits themselves.
  // (Where git commit-tree writes one, it refuses a tree a gc took: the save fails, nothing recorded.)
  await new Promise((resolve) => setTimeout(resolve, 250));
  const first = (await new WipStore({ cwd: dir }).save({})).snapshot.commit;
  // git add writes the blobs, git write-tree the trees; the commit and its ref are chant's own,
  // and the gc runs as the commit is dated, between the two.
  const gcAsDated = (): { clock: () => Date; collected: () => number } => {
    let collected = 0;
    return { collected: () => collected, clock: () => {
      if (collected === 0) git(dir, ['gc', '-q', '--prune=now']);
      collected += 1;
      return new Date();
    } };
  };
  writeFiles(dir, Object.fromEntries(Array.from({ length: 150 }, (_, index) => [`d/f${index}.txt`, `work ${index}\n`])));
  const saving = gcAsDated();
  const saved = await new WipStore({ cwd: dir, clock: saving.clock, staging: 'index' }).save({});
  assert.ok(saving.collected() > 0, 'the gc ran');
  assertWhole(dir);
  assert.equal(git(dir, ['cat-file', 'blob', `${saved.snapshot.commit}:d/f7.txt`]), 'work 7\n');
  // The restore's checkpoint: new files again, and a.txt changed, which the restore overwrites.
  writeFiles(dir, { 'a.txt': 'second\n', ...Object.fromEntries(Array.from({ length: 150 }, (_, index) => [`e/f${index}.txt`, `more ${index}\n`])) });
  const restoring = gcAsDated();
  const restored = await new WipStore({ cwd: dir, clock: restoring.clock, staging: 'index' }).restore({ snapshot: first, paths: ['a.txt'] });
  assert.ok(restoring.collected() > 0, 'the gc ran');
  assertWhole(dir);
  assert.equal(git(dir, ['cat-file', 'blob', `${restored.checkpoint.snapshot.commit}:a.txt`]), 'second\n', 'the undo holds what was overwritten');
  assert.equal(git(dir, ['cat-file', 'blob', `${restored.checkpoint.snapshot.commit}:e/f7.txt`]), 'more 7\n');
});

test('the ids with no loose file are found by a look at each, or for many by one listing of each fan-out folder, with the same answer', () => {
  const dir = makeRepo();
  const objects = join(dir, '.git', 'objects');
  const oids = git(dir, ['hash-object', '-w', '--stdin-paths'], { input: Array.from({ length: 300 }, (_, index) => {
    writeFiles(dir, { [`f${index}.txt`]: `content ${index}\n` });
    return `f${index}.txt\n`;
  }).join('') }).trim().split('\n');
  const removed = [oids[3] as string, oids[250] as string];
  for (const oid of removed) rmSync(join(objects, oid.slice(0, 2), oid.slice(2)));
  const never = 'f'.repeat(40);
  assert.deepEqual(notThereLoose(objects, [...oids, never]), [...removed, never], 'many: listed');
  assert.deepEqual(notThereLoose(objects, [...oids.slice(0, 10), oids[250] as string, never]), [oids[3] as string, oids[250] as string, never], 'few: looked at');
});

test('a restore whose checkpoint\'s objects a gc took and that cannot write them again is refused before any file is touched, saying nothing was changed', async () => {
  const dir = makeRepo();
  const plain = new WipStore({ cwd: dir });
  writeFiles(dir, { 'a.txt': 'first\n' });
  const first = (await plain.save({})).snapshot.commit;
  writeFiles(dir, { 'a.txt': 'second\n', ...Object.fromEntries(Array.from({ length: 150 }, (_, index) => [`d/f${index}.txt`, `work ${index}\n`])) });
  let retried = false;
  // The first hash-object writes the blobs and a gc takes them; every later one (the write again) fails, as on a full disk.
  const { runner } = gcAfterHashObject(dir, (args, collected) => {
    if (!args.includes('hash-object') || collected === 0) return;
    retried = true;
    throw new Error('error: unable to write loose object: No space left on device');
  });
  await assert.rejects(new WipStore({ cwd: dir, git: runner }).restore({ snapshot: first, paths: ['a.txt'] }), (error: unknown) => {
    assert.equal((error as { code?: string }).code, 'git-failed');
    assert.match((error as Error).message, /a git gc took meanwhile .*No space left on device.*nothing was changed; the checkpoint [0-9a-f]{12} is on the chain/s);
    return true;
  });
  assert.ok(retried, 'the objects were written again, and that failed');
  assert.equal(readFileSync(join(dir, 'a.txt'), 'utf8'), 'second\n', 'the file the restore was to overwrite is as it was');
});

/** Cuts the loose file of `oid` to half its bytes, as a crash while git wrote it, or a disk fault, leaves it. */
function cutShort(dir: string, oid: string): void {
  const file = join(dir, '.git', 'objects', oid.slice(0, 2), oid.slice(2));
  const bytes = readFileSync(file);
  rmSync(file, { force: true });
  writeFileSync(file, bytes.subarray(0, Math.floor(bytes.length / 2)));
}

test('a save and a restore read the working tree through git add where a loose tree of HEAD on the way to a change is cut short, which git add does not read, where both failed as git-failed', async () => {
  const dir = makeRepo({ 'README.md': 'hello\n', 'd/b.txt': 'b\n', 'd/e/y.txt': 'y\n' });
  const store = new WipStore({ cwd: dir });
  writeFiles(dir, { 'd/b.txt': 'first\n' });
  const first = await store.save({});
  cutShort(dir, git(dir, ['rev-parse', 'HEAD:d']).trim());
  writeFiles(dir, { 'd/b.txt': 'second, unsaved\n', 'd/e/new.txt': 'new\n' });
  const saved = await store.save({});
  assert.equal(saved.created, true);
  assert.equal(saved.snapshot.tree, stagedTree(dir), 'the tree git add --all gives');
  writeFiles(dir, { 'd/b.txt': 'third, unsaved\n' });
  const restored = await store.restore({ snapshot: first.snapshot.commit });
  assert.equal(readFileSync(join(dir, 'd', 'b.txt'), 'utf8'), 'first\n');
  assert.equal(git(dir, ['cat-file', 'blob', `${restored.checkpoint.snapshot.commit}:d/b.txt`]), 'third, unsaved\n', 'the checkpoint holds what the restore overwrote');
});
