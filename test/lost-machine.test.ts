import assert from 'node:assert/strict';
import { existsSync, readFileSync, rmSync } from 'node:fs';
import { join } from 'node:path';
import { describe, it } from 'node:test';
import { assertValidDocument, git, makeRepo, runCli, tempDir, treeOf, writeFiles } from './helpers.js';
import { bareRemote } from './remotes.js';
import { Replicator } from '../lib/replication/replicator.js';
import { Policy } from '../lib/replication/policy.js';

function declare(replicate: Record<string, unknown>): string {
  return `${JSON.stringify({ members: [{ name: 'app', box: { replicate } }] }, null, 2)}\n`;
}

/** A checkout on a work branch with a remote, a declaration, a kept attempt and a ledger. */
function workCheckout(replicate: Record<string, unknown>, remote: string): string {
  const dir = makeRepo({ 'README.md': 'project\n', '.gitignore': '*.log\nrecords/*.tmp\n', 'chant.workspace.json': declare(replicate), 'src/app.ts': 'export const v = 1;\n' });
  git(dir, ['remote', 'add', 'origin', remote]);
  git(dir, ['push', '-q', 'origin', 'main']);
  git(dir, ['checkout', '-q', '-b', 'chant/work/W-001']);
  writeFiles(dir, { 'src/app.ts': 'export const v = 2;\n' });
  git(dir, ['commit', '-qam', 'half the work']);
  const attempt = git(dir, ['commit-tree', '-p', 'HEAD', '-m', 'an attempt that ended not_done', 'HEAD^{tree}']).trim();
  git(dir, ['update-ref', 'refs/chant/kept/W-001/t0001', attempt]);
  const ledger = git(dir, ['commit-tree', '-m', 'ledger', git(dir, ['mktree'], { input: '' }).trim()]).trim();
  git(dir, ['update-ref', 'refs/heads/chant/lifecycle', ledger]);
  return dir;
}

describe('replication through save and the read', () => {
  it('pushes the snapshot, the work branch, the kept attempt and the ledger on save, and the read then says replicated', async () => {
    const remote = bareRemote();
    const dir = workCheckout({ remote: 'origin' }, remote);
    writeFiles(dir, { 'notes.md': 'uncommitted\n' });
    const save = await runCli(dir, ['workspace', 'wip', 'save', '--label', 'turn:1', '--json']);
    assert.equal(save.code, 0, save.stdout);
    await assertValidDocument(save.doc);
    const pushed = save.doc.replication.pushed.map((entry: { ref: string }) => entry.ref);
    assert.deepEqual(pushed, ['refs/chant/kept/W-001/t0001', 'refs/chant/wip/chant/work/W-001', 'refs/heads/chant/lifecycle', 'refs/heads/chant/work/W-001']);
    assert.deepEqual(save.doc.replication.rejected, []);
    for (const ref of pushed) assert.equal(git(remote, ['rev-parse', ref]).trim(), git(dir, ['rev-parse', ref]).trim(), `the remote holds ${ref}`);
    const read = await runCli(dir, ['workspace', 'wip', '--json']);
    await assertValidDocument(read.doc);
    assert.equal(read.doc.replication.replicated, true);
    assert.equal(read.doc.replication.remoteConfigured, true);
    assert.deepEqual(read.doc.replication.policy, { box: 'app', remote: 'origin', refs: ['work', 'kept', 'wip', 'ledger'], on: ['save', 'release'], every: null });
    assert.ok(read.doc.replication.refs.every((entry: { ahead: number; replicated: boolean }) => entry.replicated && entry.ahead === 0));
    assert.match((await runCli(dir, ['workspace', 'wip'])).stdout, /Replication: all 4 refs are on origin\./);
  });

  it('does not push on save when on leaves save out; the release trigger does', async () => {
    const remote = bareRemote();
    const dir = workCheckout({ on: ['release'] }, remote);
    const save = await runCli(dir, ['workspace', 'wip', 'save']);
    assert.equal(save.doc.replication, null);
    assert.equal(git(remote, ['for-each-ref', 'refs/chant/']), '');
    const read = await runCli(dir, ['workspace', 'wip', '--json']);
    assert.equal(read.doc.replication.replicated, false);
    const wip = read.doc.replication.refs.find((entry: { class: string }) => entry.class === 'wip');
    assert.equal(wip.replica, null);
    assert.ok(wip.ahead >= 1);
    const policy = await Policy.load({ cwd: dir });
    const released = await new Replicator({ cwd: dir, policy }).after('release');
    assert.equal(released?.pushed.length, 4);
    assert.equal(await new Replicator({ cwd: dir, policy }).after('save'), null);
  });

  it('still saves when the policy names a remote the checkout lacks, rejecting every ref with the reason', async () => {
    const remote = bareRemote();
    const dir = workCheckout({ remote: 'backup' }, remote);
    const save = await runCli(dir, ['workspace', 'wip', 'save', '--json']);
    assert.equal(save.code, 0, save.stdout);
    assert.equal(save.doc.created, true);
    assert.deepEqual(save.doc.replication.pushed, []);
    assert.equal(save.doc.replication.rejected.length, 4);
    for (const entry of save.doc.replication.rejected) assert.match(entry.reason, /backup/);
    await assertValidDocument(save.doc);
    const push = await runCli(dir, ['workspace', 'wip', 'push']);
    assert.equal(push.code, 1);
    assert.equal(push.doc.error.code, 'wip-remote-unknown');
    const fetch = await runCli(dir, ['workspace', 'wip', 'fetch']);
    assert.equal(fetch.doc.error.code, 'wip-remote-unknown');
    await assertValidDocument(fetch.doc);
  });

  it('refuses push and fetch without a policy, and outside a repository before that', async () => {
    const dir = makeRepo();
    for (const verb of ['push', 'fetch']) {
      const run = await runCli(dir, ['workspace', 'wip', verb]);
      assert.equal(run.code, 1);
      assert.equal(run.doc.action, verb);
      assert.equal(run.doc.error.code, 'wip-policy-none');
      await assertValidDocument(run.doc);
      const outside = await runCli(tempDir(), ['workspace', 'wip', verb]);
      assert.equal(outside.doc.error.code, 'not-a-git-repository');
    }
  });
});

describe('a lost machine', () => {
  it('costs nothing: fetch on a fresh clone, check the branch out, restore, and every file is back', async () => {
    const remote = bareRemote();
    const dir = workCheckout({}, remote);
    writeFiles(dir, { 'records/W-001.json': '{"state":"uncommitted"}\n', 'src/app.ts': 'export const v = 3; // not yet committed\n', '.gitignore': null, 'debug.log': 'was ignored, now kept\n' });
    const saved = await runCli(dir, ['workspace', 'wip', 'save', '--label', 'turn:7', '--by', 'github:alex']);
    assert.equal(saved.code, 0, saved.stdout);
    assert.equal(saved.doc.replication.rejected.length, 0);
    const expected = treeOf(dir);
    const kept = git(dir, ['rev-parse', 'refs/chant/kept/W-001/t0001']).trim();
    rmSync(dir, { recursive: true, force: true });

    const fresh = join(tempDir(), 'replacement');
    git(tempDir(), ['clone', '-q', remote, fresh]);
    const fetched = await runCli(fresh, ['workspace', 'wip', 'fetch', '--json']);
    assert.equal(fetched.code, 0, fetched.stdout);
    await assertValidDocument(fetched.doc);
    assert.equal(fetched.doc.failed, null);
    const results = Object.fromEntries(fetched.doc.refs.map((entry: { ref: string; result: string }) => [entry.ref, entry.result]));
    assert.deepEqual(results, {
      'refs/chant/kept/W-001/t0001': 'created',
      'refs/chant/wip/chant/work/W-001': 'created',
      'refs/heads/chant/lifecycle': 'created',
      'refs/heads/chant/work/W-001': 'created',
    });
    git(fresh, ['checkout', '-q', 'chant/work/W-001']);
    const restored = await runCli(fresh, ['workspace', 'wip', 'restore', '--json']);
    assert.equal(restored.code, 0, restored.stdout);
    await assertValidDocument(restored.doc);
    assert.equal(restored.doc.snapshot.label, 'turn:7');
    assert.deepEqual(treeOf(fresh), expected);
    assert.equal(existsSync(join(fresh, '.gitignore')), false);
    assert.equal(readFileSync(join(fresh, 'records/W-001.json'), 'utf8'), '{"state":"uncommitted"}\n');
    assert.equal(git(fresh, ['rev-parse', 'refs/chant/kept/W-001/t0001']).trim(), kept);

    const again = await runCli(fresh, ['workspace', 'wip', 'fetch', '--json']);
    const second = Object.fromEntries(again.doc.refs.map((entry: { ref: string; result: string }) => [entry.ref, entry.result]));
    assert.deepEqual(second, {
      'refs/chant/kept/W-001/t0001': 'up-to-date',
      'refs/chant/wip/chant/work/W-001': 'ahead',
      'refs/heads/chant/lifecycle': 'up-to-date',
      'refs/heads/chant/work/W-001': 'up-to-date',
    });
    assert.equal(restored.doc.checkpoint.created, true, "the restore's checkpoint is what leaves the wip ref ahead");
  });
});
