import assert from 'node:assert/strict';
import fs, { existsSync, readdirSync, readFileSync, statSync } from 'node:fs';
import { syncBuiltinESMExports } from 'node:module';
import { join } from 'node:path';
import { describe, it } from 'node:test';
import { git, makeRepo, writeFiles } from './helpers.js';
import { WipStore } from '../lib/store/wip-store.js';
import { setSyncPath, writtenBackMs } from '../lib/store/undo-durable.js';

/** A path as it stands under the git directory (`.git/objects/ab/cd...`), or `.git` itself. */
function underGit(path: string): string {
  const at = path.lastIndexOf('/.git/');
  return at >= 0 ? path.slice(at + 1) : path.endsWith('/.git') ? '.git' : path;
}

function objectFile(oid: string): string {
  return `.git/objects/${oid.slice(0, 2)}/${oid.slice(2)}`;
}

describe('restore durability', () => {
  it('takes a file as written back after the time the kernel says, and none where it holds writeback back', () => {
    const vm = (values: Record<string, string>) => (name: string): string | null => values[name] ?? null;
    assert.equal(writtenBackMs(vm({ dirty_expire_centisecs: '3000\n', dirty_writeback_centisecs: '500\n', laptop_mode: '0\n' })), 35_000, "Linux's defaults");
    assert.equal(writtenBackMs(vm({ dirty_expire_centisecs: '6000\n', dirty_writeback_centisecs: '1500\n', laptop_mode: '0\n' })), 75_000, 'a longer expiry and a slower flusher');
    assert.equal(writtenBackMs(vm({ dirty_expire_centisecs: '3000\n', dirty_writeback_centisecs: '0\n', laptop_mode: '0\n' })), Infinity, 'periodic writeback off');
    assert.equal(writtenBackMs(vm({ dirty_expire_centisecs: '3000\n', dirty_writeback_centisecs: '500\n', laptop_mode: '5\n' })), Infinity, 'laptop mode');
    assert.equal(writtenBackMs(vm({ dirty_expire_centisecs: '3000\n', dirty_writeback_centisecs: '500\n' })), 35_000, 'no laptop mode to read');
    assert.equal(writtenBackMs(vm({})), 35_000, 'nothing to read: another system');
    assert.equal(writtenBackMs(vm({ dirty_expire_centisecs: 'x', dirty_writeback_centisecs: '500' })), 35_000, 'a value that is no number');
  });

  it('syncs to disk what its undo needs (the old blobs, the checkpoint\'s trees and commit, its ref, the record and the mark, their folders) before it overwrites or removes a file', async () => {
    const dir = makeRepo({ 'README.md': 'hello\n', 'deep/dir/a.txt': 'committed\n' });
    const store = new WipStore({ cwd: dir });
    writeFiles(dir, { 'deep/dir/a.txt': 'saved\n' });
    const saved = await store.save({ label: 'target' });
    writeFiles(dir, { 'deep/dir/a.txt': 'unsaved work\n', 'gone.txt': 'untracked work\n' });
    const synced: Array<{ path: string; overwritten: boolean; ino: number | null; record: string | null }> = [];
    const recordFile = join(dir, '.git', 'chant-last-restore');
    const before = setSyncPath(async (path) => {
      // What the working tree holds when each sync is issued: nothing of it written yet.
      const overwritten = readFileSync(join(dir, 'deep/dir/a.txt'), 'utf8') !== 'unsaved work\n' || !existsSync(join(dir, 'gone.txt'));
      synced.push({ path: underGit(path), overwritten, ino: statSync(path, { throwIfNoEntry: false })?.ino ?? null, record: existsSync(recordFile) ? readFileSync(recordFile, 'utf8') : null });
      await before(path);
    });
    let checkpoint: string;
    // The record as it stood when the first file was written: its inode is the file a sync must have reached.
    let placed: number | null = null;
    try {
      const result = await store.restore({ snapshot: saved.snapshot.commit, onProgress: (progress) => {
        if (progress.phase === 'writing' && progress.done === 0) placed = statSync(recordFile).ino;
      } });
      checkpoint = result.checkpoint.snapshot.commit;
    } finally {
      setSyncPath(before);
    }
    assert.equal(readFileSync(join(dir, 'deep/dir/a.txt'), 'utf8'), 'saved\n');
    assert.equal(existsSync(join(dir, 'gone.txt')), false);
    const objects = [
      git(dir, ['rev-parse', `${checkpoint}:deep/dir/a.txt`]).trim(),
      git(dir, ['rev-parse', `${checkpoint}:gone.txt`]).trim(),
      git(dir, ['rev-parse', `${checkpoint}^{tree}`]).trim(),
      git(dir, ['rev-parse', `${checkpoint}:deep`]).trim(),
      git(dir, ['rev-parse', `${checkpoint}:deep/dir`]).trim(),
      checkpoint,
    ];
    const expected = [
      ...objects.map(objectFile),
      ...objects.map((oid) => `.git/objects/${oid.slice(0, 2)}`),
      '.git/refs/chant/wip/main',
      '.git/refs/chant/wip',
      '.git',
    ];
    const paths = synced.map((entry) => entry.path);
    for (const path of expected) assert.ok(paths.includes(path), `${path} synced (synced: ${paths.join(', ')})`);
    // The record and the mark are synced as the temporary files renamed in place after (the
    // record's inode is the one in place when the first file is written), and the git
    // directory once the record there names the checkpoint.
    assert.ok(placed !== null && synced.some((entry) => /^\.git\/chant-last-restore\.\d+-[0-9a-f]+\.tmp$/.test(entry.path) && entry.ino === placed), `the record in place was synced (synced: ${paths.join(', ')})`);
    assert.ok(synced.some((entry) => /^\.git\/chant-restoring\.\d+-[0-9a-f]+\.tmp$/.test(entry.path)), `the mark was synced (synced: ${paths.join(', ')})`);
    assert.ok(synced.some((entry) => entry.path === '.git' && entry.record !== null && JSON.parse(entry.record).checkpoint === checkpoint), 'the git directory was synced once the record named the checkpoint');
    assert.deepEqual(synced.filter((entry) => entry.overwritten), [], 'every sync issued before the first file is written or removed');
  });

  it('syncs the record and the mark in the undo\'s batch, with no sync of its own on the main thread before the first file is written and one after it (the record written again, its folder not)', async () => {
    const dir = makeRepo({ 'README.md': 'hello\n', 'a.txt': 'committed\n' });
    const store = new WipStore({ cwd: dir });
    writeFiles(dir, { 'a.txt': 'saved\n' });
    const saved = await store.save({ label: 'target' });
    // A restore before: the record then names a checkpoint the next one holds until it ends done.
    writeFiles(dir, { 'a.txt': 'earlier work\n' });
    await store.restore({ snapshot: saved.snapshot.commit });
    assert.ok(JSON.parse(readFileSync(join(dir, '.git', 'chant-last-restore'), 'utf8')).checkpoint);
    writeFiles(dir, { 'a.txt': 'unsaved work\n' });
    // Each sync that blocks the main thread (fsyncSync, a few ms each on a disk), by whether a.txt was written then.
    const blocking: boolean[] = [];
    const fsyncSync = fs.fsyncSync;
    fs.fsyncSync = (fd: number) => {
      blocking.push(readFileSync(join(dir, 'a.txt'), 'utf8') !== 'unsaved work\n');
      fsyncSync(fd);
    };
    syncBuiltinESMExports();
    try {
      await store.restore({ snapshot: saved.snapshot.commit });
    } finally {
      fs.fsyncSync = fsyncSync;
      syncBuiltinESMExports();
    }
    assert.equal(readFileSync(join(dir, 'a.txt'), 'utf8'), 'saved\n');
    assert.deepEqual(blocking, [true], 'no blocking sync before the first file is written, one after');
    assert.equal(existsSync(join(dir, '.git', 'chant-restoring')), false, 'the mark is taken back');
    assert.equal(readdirSync(join(dir, '.git')).filter((name) => name.endsWith('.tmp')).length, 0, 'no temporary file is left');
  });

  it('refuses with nothing of the working tree written when a sync says the bytes did not reach the disk, and goes on where the system cannot sync a folder', async () => {
    const dir = makeRepo({ 'README.md': 'hello\n', 'a.txt': 'committed\n' });
    const store = new WipStore({ cwd: dir });
    writeFiles(dir, { 'a.txt': 'saved\n' });
    const saved = await store.save({ label: 'target' });
    writeFiles(dir, { 'a.txt': 'unsaved work\n' });
    const failing = (code: string, only: (path: string) => boolean) => async (path: string): Promise<void> => {
      if (only(path)) throw Object.assign(new Error(`${code}: fsync`), { code });
    };
    const before = setSyncPath(failing('EIO', (path) => path.includes('/objects/')));
    try {
      await assert.rejects(store.restore({ snapshot: saved.snapshot.commit }), (error: unknown) => (error as { code?: string }).code === 'git-failed' && /cannot sync/.test((error as Error).message));
      assert.equal(readFileSync(join(dir, 'a.txt'), 'utf8'), 'unsaved work\n');
      assert.equal(existsSync(join(dir, '.git', 'chant-restoring')), false, 'the mark is taken back');
      setSyncPath(failing('EINVAL', (path) => path.endsWith('/.git') || path.endsWith('/wip')));
      await store.restore({ snapshot: saved.snapshot.commit });
      assert.equal(readFileSync(join(dir, 'a.txt'), 'utf8'), 'saved\n');
    } finally {
      setSyncPath(before);
    }
  });
});
