// What chant believes the remote holds is what the remote said: a replica ref chant recorded from
// the remote's own answer, at the URL the remote has now. Remote-tracking refs are never proof,
// a remote re-pointed or recreated is asked again, and the read says when it last answered.
import assert from 'node:assert/strict';
import { join } from 'node:path';
import { test } from 'node:test';
import { readDocument, writeDocument } from '../lib/documents/document.js';
import type { PolicyDocument } from '../lib/documents/replication.js';
import { Replicator } from '../lib/replication/replicator.js';
import { git, makeRepo, tempDir } from './helpers.js';
import { assertDocument, bareRemote, recreateEmpty } from './remotes.js';

const POLICY: PolicyDocument = { box: 'app', remote: 'origin', refs: ['work', 'kept', 'wip', 'ledger'], on: ['save', 'release'], every: null };
const REFS = ['refs/chant/kept/W-001/tok', 'refs/chant/wip/chant/work/W-001', 'refs/heads/chant/lifecycle', 'refs/heads/chant/work/W-001'];

/** A checkout with one ref of each class and `url` as origin. */
function checkout(url: string): string {
  const dir = makeRepo();
  const tree = git(dir, ['rev-parse', 'HEAD^{tree}']).trim();
  const base = git(dir, ['rev-parse', 'HEAD']).trim();
  const work = git(dir, ['commit-tree', tree, '-p', base, '-m', 'work 1']).trim();
  git(dir, ['update-ref', 'refs/heads/chant/work/W-001', work]);
  git(dir, ['update-ref', 'refs/chant/kept/W-001/tok', git(dir, ['commit-tree', tree, '-p', work, '-m', 'kept 1']).trim()]);
  git(dir, ['update-ref', 'refs/chant/wip/chant/work/W-001', git(dir, ['commit-tree', tree, '-p', work, '-m', 'wip 1']).trim()]);
  git(dir, ['update-ref', 'refs/heads/chant/lifecycle', git(dir, ['commit-tree', tree, '-m', 'ledger 1']).trim()]);
  git(dir, ['remote', 'add', 'origin', url]);
  return dir;
}

function remoteRefs(bare: string): string[] {
  return git(bare, ['for-each-ref', '--format=%(refname)']).split('\n').filter((line) => line.length > 0).sort();
}

test('a remote re-pointed at a new empty mirror: the read stops saying replicated, and push sends every ref', async () => {
  const first = bareRemote();
  const dir = checkout(first);
  const replicator = new Replicator({ cwd: dir, policy: POLICY });
  assert.deepEqual((await replicator.push()).replication.pushed.map((ref) => ref.ref), REFS);
  assert.equal((await replicator.state())?.replicated, true);

  const mirror = bareRemote();
  git(dir, ['remote', 'set-url', 'origin', mirror]);
  const before = await replicator.state();
  assert.equal(before?.replicated, false, 'nothing was ever confirmed at the new URL');
  assert.ok(before?.refs.every((ref) => !ref.replicated));
  assertDocument(readDocument({ checkout: { branch: 'main', head: git(dir, ['rev-parse', 'HEAD']).trim() }, branches: [], replication: before }));

  const pushed = await replicator.push();
  assert.deepEqual(pushed.replication.pushed.map((ref) => ref.ref), REFS);
  assert.equal(pushed.replication.upToDate, 0);
  assert.deepEqual(remoteRefs(mirror), REFS);
  assert.equal((await replicator.state())?.replicated, true);
});

test('a remote re-pointed by url.<base>.insteadOf, its url unchanged: the read stops saying replicated, and push sends every ref', async () => {
  const first = bareRemote();
  const dir = checkout(first);
  const replicator = new Replicator({ cwd: dir, policy: POLICY });
  await replicator.push();
  assert.equal((await replicator.state())?.replicated, true);
  const mirror = bareRemote();
  git(dir, ['config', `url.${mirror}.insteadOf`, first]);
  assert.equal(git(dir, ['remote', 'get-url', 'origin']).trim(), mirror);
  assert.equal((await replicator.state())?.replicated, false, 'nothing was confirmed where the remote now is');
  const pushed = await replicator.pushOrReport();
  assert.deepEqual(pushed.pushed.map((ref) => ref.ref), REFS);
  assert.deepEqual(remoteRefs(mirror), REFS);
  assert.equal((await replicator.state())?.replicated, true);
});

test('a remote recreated empty at the same URL: wip push asks it, and sends every ref again', async () => {
  const remote = bareRemote();
  const dir = checkout(remote);
  const replicator = new Replicator({ cwd: dir, policy: POLICY });
  await replicator.push();
  recreateEmpty(remote);
  const pushed = await replicator.push();
  assert.deepEqual(pushed.replication.pushed.map((ref) => ref.ref), REFS);
  assert.deepEqual(remoteRefs(remote), REFS);
  // Asking again finds everything there.
  const again = await replicator.push();
  assert.deepEqual(again.replication.pushed, []);
  assert.equal(again.replication.upToDate, REFS.length);
});

test('remote-tracking refs are never proof: after wip fetch then wip push, the ledger and work branch are pushed', async () => {
  const old = bareRemote();
  const dir = checkout(old);
  // The host pushed the branches with plain git once: git wrote refs/remotes/origin/chant/...
  git(dir, ['push', '-q', 'origin', 'refs/heads/chant/work/W-001', 'refs/heads/chant/lifecycle']);
  assert.ok(git(dir, ['for-each-ref', 'refs/remotes/origin/chant/']).length > 0);
  const mirror = bareRemote();
  git(dir, ['remote', 'set-url', 'origin', mirror]);
  const replicator = new Replicator({ cwd: dir, policy: POLICY });
  const state = await replicator.state();
  for (const ref of state?.refs ?? []) {
    assert.equal(ref.replica, null, `${ref.ref} has no replica chant recorded`);
    assert.equal(ref.replicated, false);
  }
  const fetched = await replicator.fetch();
  assert.equal(fetched.failed, null);
  const pushed = await replicator.push();
  assert.deepEqual(pushed.replication.pushed.map((ref) => ref.ref), REFS);
  assert.deepEqual(remoteRefs(mirror), REFS);
});

test('the read says when the remote last answered for the refs, and replicated only on that answer', async () => {
  const remote = bareRemote();
  const dir = checkout(remote);
  const replicator = new Replicator({ cwd: dir, policy: POLICY });
  const never = await replicator.state();
  assert.equal(never?.confirmedAt ?? null, null);
  const started = Date.now();
  await replicator.push();
  const state = await replicator.state();
  assert.equal(state?.replicated, true);
  const at = Date.parse(state?.confirmedAt ?? '');
  assert.match(state?.confirmedAt ?? '', /^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z$/);
  assert.ok(at >= started - 1_000 && at <= Date.now() + 1_000, `confirmed at ${state?.confirmedAt}`);
  assertDocument(readDocument({ checkout: { branch: 'main', head: git(dir, ['rev-parse', 'HEAD']).trim() }, branches: [], replication: state }));

  // A fetch from a replacement box is an answer from the remote too.
  const box = makeRepo();
  git(box, ['remote', 'add', 'origin', remote]);
  const fresh = new Replicator({ cwd: box, policy: POLICY });
  await fresh.fetch();
  const boxState = await fresh.state();
  assert.equal(boxState?.replicated, true);
  assert.ok(boxState?.confirmedAt);
});

test('a save-triggered push with every ref proven at this URL does not touch the network', async () => {
  const remote = bareRemote();
  const dir = checkout(remote);
  const replicator = new Replicator({ cwd: dir, policy: POLICY });
  await replicator.push();
  // A remote that is gone: a push that tried it would reject every ref.
  const moved = join(tempDir(), 'moved.git');
  git(tempDir(), ['clone', '-q', '--bare', remote, moved]);
  recreateEmpty(remote);
  const after = await replicator.after('save');
  assert.deepEqual(after, { remote: 'origin', pushed: [], rejected: [], upToDate: REFS.length });
});

test('a remote whose pushes go to another URL than its fetches: what a fetch saw is no proof, and the save\'s push sends the refs the push URL lacks', async () => {
  const old = bareRemote();
  const dir = checkout(old);
  const replicator = new Replicator({ cwd: dir, policy: POLICY });
  assert.deepEqual((await replicator.push()).replication.pushed.map((ref) => ref.ref), REFS);
  // The host moves its pushes to a new server and still fetches from the old one.
  const next = bareRemote();
  git(dir, ['remote', 'set-url', '--push', 'origin', next]);
  const fetched = await replicator.fetch();
  assert.equal(fetched.failed, null);
  const state = await replicator.state();
  assert.ok(state?.refs.every((ref) => !ref.replicated), 'the push URL was never asked');
  const after = await replicator.after('save');
  assert.deepEqual(after?.pushed.map((ref) => ref.ref), REFS);
  assert.deepEqual(remoteRefs(next), REFS);
  assert.equal((await replicator.state())?.replicated, true);
});
