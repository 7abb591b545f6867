import assert from 'node:assert/strict';
import { existsSync, readFileSync } from 'node:fs';
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
    const synced: Array<{ path: string; overwritten: boolean }> = [];
    const before = setSyncPath(async (path) => {
      // What the working tree holds when each sync is issued: nothing of it written yet.
      const overwritten = readFileSync(join(dir, 'deep/dir/a.txt'), 'utf8') !== 'unsaved work\n' || !existsSync(join(dir, 'gone.txt'));
      synced.push({ path: underGit(path), overwritten });
      await before(path);
    });
    let checkpoint: string;
    try {
      const result = await store.restore({ snapshot: saved.snapshot.commit });
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
      '.git/chant-last-restore',
      '.git/chant-restoring',
      '.git',
    ];
    const paths = synced.map((entry) => entry.path);
    for (const path of expected) assert.ok(paths.includes(path), `${path} synced (synced: ${paths.join(', ')})`);
    assert.deepEqual(synced.filter((entry) => entry.overwritten), [], 'every sync issued before the first file is written or removed');
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
