import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { git, makeRepo, writeFiles } from './helpers.js';
import { WipStore } from '../lib/store/wip-store.js';

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

  it('reads a chain whole when clocks were out of step and git prints a commit of it before the commit that leads to it', async () => {
    const dir = makeRepo();
    const h0 = git(dir, ['rev-parse', 'HEAD']).trim();
    const commit = (tree: string, parents: string[], date: number, message: string): string => git(dir, ['commit-tree', tree, ...parents.flatMap((parent) => ['-p', parent])], {
      input: message,
      env: { ...process.env, GIT_COMMITTER_DATE: `${date} +0000`, GIT_AUTHOR_DATE: `${date} +0000` },
    }).trim();
    const tree = git(dir, ['rev-parse', 'HEAD^{tree}']).trim();
    const snapshot = (branch: string, head: string, label: string): string => `chant wip: ${branch} (${label})\n\nChant-Wip-Branch: ${branch}\nChant-Wip-Head: ${head}\nChant-Wip-Kind: save\nChant-Wip-Label: ${label}\n`;
    // Chain a: a1 -> a2 -> a3 -> first, where a2's clock ran behind a3's.
    const first = commit(tree, [h0], 1_800_001_000, snapshot('a', h0, 'first'));
    const a3 = commit(tree, [first, h0], 1_800_002_000, snapshot('a', h0, 'a3'));
    const a2 = commit(tree, [a3, h0], 1_800_001_500, snapshot('a', h0, 'a2'));
    const a1 = commit(tree, [a2, h0], 1_800_003_000, snapshot('a', h0, 'a1'));
    // Branch b was started on a3, so git reaches a3 from b's chain before it reaches a2.
    const b1 = commit(tree, [a3], 1_800_002_500, 'work on b\n');
    const bFirst = commit(tree, [b1], 1_800_002_600, snapshot('b', b1, 'b first'));
    const bTip = commit(tree, [bFirst, b1], 1_800_002_700, snapshot('b', b1, 'b tip'));
    git(dir, ['update-ref', 'refs/chant/wip/a', a1]);
    git(dir, ['update-ref', 'refs/chant/wip/b', bTip]);
    const order = git(dir, ['log', '--first-parent', '--format=%H', a1, bTip]).trim().split('\n');
    assert.ok(order.indexOf(a3) < order.indexOf(a2), 'git prints a3 before a2');
    const { branches } = await new WipStore({ cwd: dir, policy: null }).list();
    assert.deepEqual(branches.map((entry) => [entry.branch, entry.snapshots.map((one) => one.label)]), [
      ['a', ['a1', 'a2', 'a3', 'first']],
      ['b', ['b tip', 'b first']],
    ]);
  });
});
