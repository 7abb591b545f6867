import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { git, makeRepo, writeFiles } from './helpers.js';
import { WipStore } from '../lib/wip-store.js';

describe('the read', () => {
  it("lists each branch's chain exactly, however long the history it started from", async () => {
    const dir = makeRepo();
    const stream = Array.from({ length: 300 }, (_, i) => `commit refs/heads/main\ncommitter T <t@example.com> ${1790000000 + i} +0000\ndata 4\nc${String(i).padStart(2, '0')}\n\n`).join('');
    git(dir, ['fast-import', '--quiet', '--force'], { input: stream });
    git(dir, ['reset', '-q', '--hard']);
    const store = new WipStore({ cwd: dir });
    for (let i = 0; i < 3; i += 1) {
      writeFiles(dir, { 'a.txt': `${i}\n` });
      await store.save({ label: `main ${i}` });
    }
    git(dir, ['checkout', '-q', '-b', 'side', 'main~150']);
    writeFiles(dir, { 'a.txt': 'side\n' });
    await store.save({ label: 'side 0' });
    const { branches } = await store.list();
    assert.deepEqual(branches.map((entry) => [entry.branch, entry.snapshots.map((snapshot) => snapshot.label)]), [
      ['main', ['main 2', 'main 1', 'main 0']],
      ['side', ['side 0']],
    ]);
  });

  it('keeps a chain whole even when a branch has merged a snapshot, and lists no snapshot for a tip that is none', async () => {
    const dir = makeRepo();
    const store = new WipStore({ cwd: dir });
    writeFiles(dir, { 'a.txt': '1\n' });
    await store.save({ label: 'one' });
    writeFiles(dir, { 'a.txt': '2\n' });
    await store.save({ label: 'two' });
    git(dir, ['branch', 'archive', 'refs/chant/wip/main']);
    assert.deepEqual((await store.list()).branches[0]?.snapshots.map((snapshot) => snapshot.label), ['two', 'one']);
    git(dir, ['update-ref', 'refs/chant/wip/other', 'HEAD']);
    const other = (await store.list({ branch: 'other' })).branches;
    assert.deepEqual(other.map((entry) => [entry.branch, entry.snapshots.length]), [['other', 0]]);
  });
});
