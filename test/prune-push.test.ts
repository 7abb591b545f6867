// A pruned chain and the remote: wip push never carries it, an explicit prune push does under a
// lease on the replica chant recorded, and the lease refuses when another clone pushed meanwhile.
// Real bare remotes, real clones.
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { mkdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, it } from 'node:test';
import { Policy, Replicator, WipStore } from '../lib/index.js';
import { buildChain } from './chains.js';
import { assertValidDocument, git, makeRepo, ROOT, runCli, tempDir } from './helpers.js';
import { bareRemote } from './remotes.js';

/**
 * Box b restores over a file holding `precious` (its checkpoint holds it), saves again and pushes;
 * box a takes b's chain and prunes it to its newest, pushing the prune: a cannot know b's
 * checkpoint is one to keep.
 */
async function prunedOverRestore(): Promise<{ b: string; storeB: WipStore; replicatorB: Replicator; done: Awaited<ReturnType<WipStore['restore']>> }> {
  const { a, b, policy } = boxes({ 'a.txt': 'one\n' });
  const storeB = new WipStore({ cwd: b, policy });
  writeFileSync(join(b, 'a.txt'), 'first\n');
  const first = await storeB.save({ label: 'first' });
  writeFileSync(join(b, 'a.txt'), 'precious\n');
  const done = await storeB.restore({ snapshot: first.snapshot.commit });
  assert.equal(done.checkpoint.created, true);
  writeFileSync(join(b, 'a.txt'), 'later\n');
  await storeB.save({ label: 'later' });
  const replicatorB = new Replicator({ cwd: b, policy });
  await replicatorB.push();
  await new Replicator({ cwd: a, policy }).fetch();
  await new WipStore({ cwd: a, policy }).prune({ keepLast: 1, push: true });
  return { b, storeB, replicatorB, done };
}

function boxes(files?: Record<string, string>): { remote: string; a: string; b: string; policy: Policy } {
  const remote = bareRemote();
  const a = makeRepo(files);
  git(a, ['remote', 'add', 'origin', remote]);
  git(a, ['push', '-q', 'origin', 'main']);
  const b = tempDir();
  git(b, ['clone', '-q', remote, '.']);
  const policy = Policy.from({ remote: 'origin', refs: ['wip'], on: [] }, { box: 'app' });
  return { remote, a, b, policy };
}

/** A snapshot on main taken with plain git (main need not be checked out): the tip's tree again, on the tip. */
function snapshotOnTop(dir: string): string {
  const tip = git(dir, ['rev-parse', 'refs/chant/wip/main']).trim();
  const next = git(dir, ['commit-tree', '-p', tip, '-p', 'main', '-m', `chant wip: main\n\nChant-Wip-Branch: main\nChant-Wip-Head: ${git(dir, ['rev-parse', 'main']).trim()}\nChant-Wip-Kind: save\n`, `${tip}^{tree}`]).trim();
  git(dir, ['update-ref', 'refs/chant/wip/main', next, tip]);
  return next;
}

describe('a pruned chain and the remote', () => {
  it('is never carried by wip push, and goes with a prune push under a lease on the recorded replica', async () => {
    const { remote, a, policy } = boxes();
    buildChain(a, 1000);
    const replicator = new Replicator({ cwd: a, policy });
    assert.equal((await replicator.push()).replication.pushed.length, 1);
    await new WipStore({ cwd: a, policy }).prune({ keepLast: 3 });
    const local = git(a, ['rev-parse', 'refs/chant/wip/main']).trim();
    const plain = await replicator.push();
    assert.equal(plain.replication.pushed.length, 0);
    assert.match(plain.replication.rejected[0]?.reason ?? '', /non-fast-forward|fetch first/);
    assert.notEqual(git(remote, ['rev-parse', 'refs/chant/wip/main']).trim(), local);
    // A prune of the remote's chain is the prune push's to send: nothing goes aside.
    assert.equal(git(remote, ['for-each-ref', 'refs/chant/wip-aside/']), '');
    assert.doesNotMatch(plain.replication.rejected[0]?.reason ?? '', /went to the remote as/);
    const pruned = await replicator.pushPruned();
    assert.deepEqual(pruned.replication.pushed, [{ ref: 'refs/chant/wip/main', commit: local }]);
    assert.equal(git(remote, ['rev-parse', 'refs/chant/wip/main']).trim(), local);
    assert.equal(git(a, ['rev-parse', 'refs/chant/replica/origin/chant/wip/main']).trim(), local);
    assert.equal((await replicator.state())?.replicated, true);
    assert.equal(git(remote, ['rev-list', '--count', '--first-parent', 'refs/chant/wip/main']).trim(), '4'); // three snapshots and main's commit
  });

  it('is refused by the lease, and the remote keeps the other clone\'s snapshot, when that clone pushed in between', async () => {
    const { remote, a, b, policy } = boxes();
    buildChain(a, 30);
    const replicatorA = new Replicator({ cwd: a, policy });
    await replicatorA.push();
    const replicatorB = new Replicator({ cwd: b, policy });
    assert.equal((await replicatorB.fetch()).refs[0]?.result, 'created');
    writeFileSync(join(b, 'from-b.txt'), 'b\n');
    await new WipStore({ cwd: b, policy }).save({ label: 'b' });
    assert.equal((await replicatorB.push()).replication.pushed.length, 1);
    const remoteTip = git(remote, ['rev-parse', 'refs/chant/wip/main']).trim();
    await new WipStore({ cwd: a, policy }).prune({ keepLast: 2 });
    const refused = await replicatorA.pushPruned();
    assert.equal(refused.replication.pushed.length, 0);
    assert.match(refused.replication.rejected[0]?.reason ?? '', /stale info/);
    assert.equal(git(remote, ['rev-parse', 'refs/chant/wip/main']).trim(), remoteTip);
    assert.equal(git(remote, ['log', '-1', '--format=%s', 'refs/chant/wip/main']).trim(), 'chant wip: main (b)');
    // After a fetch (the replica now names b's snapshot; a's pruned chain goes aside whole and its
    // ref takes the remote's) and a prune again, the lease holds and b's snapshot stays.
    const pruned = git(a, ['rev-parse', 'refs/chant/wip/main']).trim();
    const fetched = await replicatorA.fetch();
    assert.deepEqual(fetched.refs.map(({ result, aside }) => ({ result, aside })), [{ result: 'fast-forward', aside: `refs/chant/wip-aside/${pruned}` }]);
    assert.equal(git(a, ['rev-parse', 'refs/chant/wip/main']).trim(), remoteTip);
    writeFileSync(join(a, 'chant.workspace.json'), JSON.stringify({ members: [{ name: 'app', box: { replicate: { remote: 'origin', refs: ['wip'], on: [] } } }] }));
    const again = await runCli(a, ['workspace', 'wip', 'prune', '--keep-last', '2', '--push']);
    assert.equal(again.code, 0, again.stdout);
    assert.deepEqual(again.doc.replication.pushed.map((entry: { ref: string }) => entry.ref).sort(), [`refs/chant/wip-aside/${pruned}`, 'refs/chant/wip/main']);
    await assertValidDocument(again.doc, { oursOnly: true });
    assert.equal(git(remote, ['log', '-1', '--format=%s', 'refs/chant/wip/main']).trim(), 'chant wip: main (b)');
  });

  it('names no replica its chain never held: after a fetch found the chains diverged, the prune push is refused, and the other box keeps its snapshot there and at home', async () => {
    const { remote, a, b, policy } = boxes();
    buildChain(a, 5);
    const replicatorA = new Replicator({ cwd: a, policy });
    await replicatorA.push();
    const replicatorB = new Replicator({ cwd: b, policy });
    await replicatorB.fetch();
    writeFileSync(join(b, 'from-b.txt'), 'b\n');
    const bSnapshot = (await new WipStore({ cwd: b, policy }).save({ label: 'b' })).snapshot.commit;
    assert.equal((await replicatorB.push()).replication.pushed.length, 1);
    // a saves on its own chain; its fetch records b's snapshot as the remote's and says diverged.
    writeFileSync(join(a, 'from-a.txt'), 'a\n');
    await new WipStore({ cwd: a, policy }).save({ label: 'a' });
    assert.equal((await replicatorA.fetch()).refs[0]?.result, 'diverged');
    await new WipStore({ cwd: a, policy }).prune({ keepLast: 1 });
    assert.doesNotMatch(git(a, ['log', '-1', '--format=%B', 'refs/chant/wip/main']), new RegExp(bSnapshot), 'the marker does not name what a never held');
    const refused = await replicatorA.pushPruned();
    assert.equal(refused.replication.pushed.length, 0);
    assert.match(refused.replication.rejected[0]?.reason ?? '', /non-fast-forward|fetch first/);
    assert.equal(git(remote, ['rev-parse', 'refs/chant/wip/main']).trim(), bSnapshot);
    const fetched = await replicatorB.fetch();
    assert.equal(fetched.refs[0]?.result, 'up-to-date');
    assert.equal(git(b, ['rev-parse', 'refs/chant/wip/main']).trim(), bSnapshot);
  });

  it('goes on save under the declared retain block as a prune push does: over what the chain held, never over another box\'s snapshot it did not take', async () => {
    const { remote, a, b } = boxes();
    const declaration = `${JSON.stringify({ members: [{ name: 'app', box: { retain: { keepLast: 1, onSave: true }, replicate: { remote: 'origin', refs: ['wip'], on: ['save'] } } }] })}\n`;
    for (const dir of [a, b]) writeFileSync(join(dir, 'chant.workspace.json'), declaration);
    writeFileSync(join(a, 'a.txt'), 'a 1\n');
    const first = await new WipStore({ cwd: a }).save({ label: 'a 1' });
    assert.equal(first.replication?.pushed.length, 1);
    await (await Replicator.open({ cwd: b })).fetch();
    // b's own save prunes its chain (a's snapshot dropped by the rule) and pushes it over what it fetched.
    writeFileSync(join(b, 'b.txt'), 'b 1\n');
    const fromB = await new WipStore({ cwd: b }).save({ label: 'b 1' });
    assert.deepEqual(fromB.replication?.pushed.map((ref) => ref.commit), [fromB.pruned?.next]);
    // a saves again before it fetched: its lease on its own push is stale, and its push refused.
    writeFileSync(join(a, 'a.txt'), 'a 2\n');
    assert.equal((await new WipStore({ cwd: a }).save({ label: 'a 2' })).replication?.pushed.length, 0);
    // Its fetch finds b's chain pruned past what a held, over a chain with a snapshot of a's own:
    // a's chain goes aside whole, and the ref takes b's. a's next save goes on b's chain, and
    // prunes it under the declared rule, which now applies to b's snapshot: it took it.
    const aTip = git(a, ['rev-parse', 'refs/chant/wip/main']).trim();
    const fetched = await (await Replicator.open({ cwd: a })).fetch();
    assert.deepEqual(fetched.refs.map(({ result, aside }) => ({ result, aside })), [{ result: 'fast-forward', aside: `refs/chant/wip-aside/${aTip}` }]);
    assert.equal(git(a, ['rev-parse', 'refs/chant/wip/main']).trim(), fromB.pruned?.next);
    writeFileSync(join(a, 'a.txt'), 'a 3\n');
    const third = await new WipStore({ cwd: a }).save({ label: 'a 3' });
    assert.deepEqual(third.replication?.rejected, []);
    assert.equal(third.pruned?.ref, 'refs/chant/wip/main', 'the save prunes its own chain, not the one set aside');
    assert.deepEqual(third.replication?.pushed.map((ref) => ref.ref).sort(), [`refs/chant/wip-aside/${aTip}`, 'refs/chant/wip/main']);
    assert.equal(git(remote, ['rev-parse', 'refs/chant/wip/main']).trim(), third.pruned?.next);
    assert.equal(git(remote, ['rev-parse', `refs/chant/wip-aside/${aTip}`]).trim(), aTip, 'a\'s own chain is on the remote too');
    assert.match(git(remote, ['log', '-1', '--format=%B', 'refs/chant/wip/main']), new RegExp(`Chant-Wip-Pruned-Remote: ${fromB.pruned?.next}`), 'the marker names b\'s chain, which a held');
    // b learns of it: the marker names its tip.
    const learnt = await (await Replicator.open({ cwd: b })).fetch();
    assert.deepEqual(learnt.refs.map(({ ref, result, pruned: was, aside }) => ({ ref, result, was, aside })), [
      { ref: `refs/chant/wip-aside/${aTip}`, result: 'created', was: undefined, aside: undefined },
      { ref: 'refs/chant/wip/main', result: 'fast-forward', was: true, aside: undefined },
    ]);
  });

  it('is learnt by a fetching box whose tip the prune replaced, and a box with a snapshot of its own moves its chain aside whole and sends it', async () => {
    const { a, b, policy } = boxes();
    buildChain(a, 40);
    const replicatorA = new Replicator({ cwd: a, policy });
    await replicatorA.push();
    const replicatorB = new Replicator({ cwd: b, policy });
    await replicatorB.fetch();
    const c = tempDir();
    git(c, ['clone', '-q', git(a, ['remote', 'get-url', 'origin']).trim(), '.']);
    const replicatorC = new Replicator({ cwd: c, policy });
    await replicatorC.fetch();
    git(c, ['checkout', '-q', '-b', 'elsewhere']);
    git(c, ['update-ref', '-d', 'refs/chant/wip/elsewhere'], { allowFail: true });
    // c takes a snapshot on main of its own (via plain git, since main is not checked out there).
    const own = snapshotOnTop(c);
    await new WipStore({ cwd: a, policy }).prune({ keepLast: 4 });
    assert.equal((await replicatorA.pushPruned()).replication.pushed.length, 1);
    const pruned = git(a, ['rev-parse', 'refs/chant/wip/main']).trim();
    git(b, ['checkout', '-q', '-b', 'elsewhere']);
    const fetched = await replicatorB.fetch();
    assert.deepEqual(fetched.refs.map(({ ref, result, pruned: was }) => ({ ref, result, was })), [{ ref: 'refs/chant/wip/main', result: 'fast-forward', was: true }]);
    assert.equal(git(b, ['rev-parse', 'refs/chant/wip/main']).trim(), pruned);
    const run = await runCli(b, ['workspace', 'wip', '--json']);
    assert.equal(run.doc.branches[0]?.snapshots.length, 4);
    // c's chain holds a snapshot the pruning box never saw: it goes aside whole, and the ref takes the pruned chain.
    const other = await replicatorC.fetch();
    assert.deepEqual(other.refs.map(({ result, pruned: was, aside }) => ({ result, was, aside })), [{ result: 'fast-forward', was: true, aside: `refs/chant/wip-aside/${own}` }]);
    assert.equal(git(c, ['rev-parse', 'refs/chant/wip/main']).trim(), pruned);
    assert.equal(git(c, ['rev-parse', `refs/chant/wip-aside/${own}`]).trim(), own);
    const sent = await replicatorC.push();
    assert.deepEqual(sent.replication.pushed, [{ ref: `refs/chant/wip-aside/${own}`, commit: own }]);
    assert.equal(git(git(a, ['remote', 'get-url', 'origin']).trim(), ['rev-parse', `refs/chant/wip-aside/${own}`]).trim(), own, 'the remote holds c\'s snapshot');
    // c's next snapshot goes on the pruned chain, and its push is a fast-forward.
    assert.equal(git(c, ['rev-parse', 'refs/chant/wip/main']).trim(), pruned);
    const next = snapshotOnTop(c);
    assert.deepEqual((await replicatorC.push()).replication.pushed, [{ ref: 'refs/chant/wip/main', commit: next }]);
  });

  it('sets its own pruned chain aside when another box pushed above what the prune replaced first, so the snapshots of both reach the remote', async () => {
    const { remote, a, b, policy } = boxes();
    buildChain(a, 10);
    const replicatorA = new Replicator({ cwd: a, policy });
    await replicatorA.push();
    const replicatorB = new Replicator({ cwd: b, policy });
    await replicatorB.fetch();
    await new WipStore({ cwd: a, policy }).prune({ keepLast: 3 });
    const mine = snapshotOnTop(a);
    // b saves above the chain a's prune replaced, and pushes first.
    git(b, ['checkout', '-q', '-b', 'elsewhere']);
    const theirs = snapshotOnTop(b);
    assert.deepEqual((await replicatorB.push()).replication.pushed, [{ ref: 'refs/chant/wip/main', commit: theirs }]);
    const refused = await replicatorA.pushPruned();
    assert.match(refused.replication.rejected[0]?.reason ?? '', /stale info/);
    assert.equal(git(remote, ['rev-parse', 'refs/chant/wip/main']).trim(), theirs);
    // a's fetch moves its pruned chain aside whole, and its ref takes the remote's chain.
    const fetched = await replicatorA.fetch();
    assert.deepEqual(fetched.refs.map(({ ref, result, pruned, aside }) => ({ ref, result, pruned, aside })), [
      { ref: 'refs/chant/wip/main', result: 'fast-forward', pruned: undefined, aside: `refs/chant/wip-aside/${mine}` },
    ]);
    assert.equal(git(a, ['rev-parse', 'refs/chant/wip/main']).trim(), theirs);
    assert.equal(git(a, ['rev-parse', `refs/chant/wip-aside/${mine}`]).trim(), mine);
    // Its next snapshot goes on the remote's chain, and every push is one again.
    const next = snapshotOnTop(a);
    const sent = await replicatorA.push();
    assert.deepEqual(sent.replication.rejected, []);
    assert.deepEqual(sent.replication.pushed.map((entry) => entry.commit).sort(), [mine, next].sort());
    assert.equal(git(remote, ['rev-parse', `refs/chant/wip-aside/${mine}`]).trim(), mine, 'the remote holds the snapshot a took after its prune');
    assert.equal(git(remote, ['rev-parse', 'refs/chant/wip/main']).trim(), next);
    git(remote, ['merge-base', '--is-ancestor', theirs, next]);
  });

  it('leaves its own pruned chain as it is when it fetches before the prune push went, the remote holding nothing above what the prune replaced, and the prune push then goes', async () => {
    const { remote, a, policy } = boxes();
    buildChain(a, 6);
    const replicator = new Replicator({ cwd: a, policy });
    await replicator.push();
    const full = git(a, ['rev-parse', 'refs/chant/wip/main']).trim();
    await new WipStore({ cwd: a, policy }).prune({ keepLast: 2 });
    const pruned = git(a, ['rev-parse', 'refs/chant/wip/main']).trim();
    const fetched = await replicator.fetch();
    assert.deepEqual(fetched.refs.map(({ ref, result, pruned: marked, aside }) => ({ ref, result, pruned: marked, aside })), [
      { ref: 'refs/chant/wip/main', result: 'ahead', pruned: undefined, aside: undefined },
    ]);
    assert.equal(git(a, ['rev-parse', 'refs/chant/wip/main']).trim(), pruned, 'the prune stands');
    assert.equal(git(a, ['for-each-ref', 'refs/chant/wip-aside/']), '');
    const sent = await replicator.pushPruned();
    assert.deepEqual(sent.replication.pushed, [{ ref: 'refs/chant/wip/main', commit: pruned }]);
    assert.equal(git(remote, ['rev-parse', 'refs/chant/wip/main']).trim(), pruned);
    assert.equal(git(remote, ['for-each-ref', 'refs/chant/wip-aside/']), '');
    assert.notEqual(pruned, full);
  });

  it('leaves its own pruned chain as it is when the remote holds less than the prune replaced (snapshots saved after the last push)', async () => {
    const { remote, a, policy } = boxes();
    buildChain(a, 4);
    const replicator = new Replicator({ cwd: a, policy });
    await replicator.push();
    snapshotOnTop(a);
    snapshotOnTop(a);
    await new WipStore({ cwd: a, policy }).prune({ keepLast: 2 });
    const pruned = git(a, ['rev-parse', 'refs/chant/wip/main']).trim();
    const fetched = await replicator.fetch();
    assert.deepEqual(fetched.refs.map(({ result, aside }) => ({ result, aside })), [{ result: 'ahead', aside: undefined }]);
    assert.equal(git(a, ['rev-parse', 'refs/chant/wip/main']).trim(), pruned);
    await replicator.pushPruned();
    assert.equal(git(remote, ['rev-parse', 'refs/chant/wip/main']).trim(), pruned);
    assert.equal(git(remote, ['for-each-ref', 'refs/chant/wip-aside/']), '');
  });

  it('goes under a lease on the recorded replica after a fetch from a remote whose push URL is its own, which withdrew the proof', async () => {
    const { remote, a, policy } = boxes();
    git(a, ['remote', 'set-url', '--push', 'origin', `file://${remote}`]);
    buildChain(a, 5);
    const replicator = new Replicator({ cwd: a, policy });
    await replicator.push();
    await replicator.fetch();
    await new WipStore({ cwd: a, policy }).prune({ keepLast: 2 });
    const pruned = git(a, ['rev-parse', 'refs/chant/wip/main']).trim();
    const sent = await replicator.pushPruned();
    assert.deepEqual(sent.replication.rejected, []);
    assert.deepEqual(sent.replication.pushed, [{ ref: 'refs/chant/wip/main', commit: pruned }]);
    assert.equal(git(remote, ['rev-parse', 'refs/chant/wip/main']).trim(), pruned);
  });

  it('is refused by the push URL when it holds another box\'s snapshot above the replica a fetch recorded, and the push URL keeps it', async () => {
    const { remote, a, b, policy } = boxes();
    const pushTo = bareRemote();
    git(a, ['push', '-q', pushTo, 'main']);
    git(a, ['remote', 'set-url', '--push', 'origin', pushTo]);
    buildChain(a, 5);
    await new Replicator({ cwd: a, policy }).push();
    git(a, ['push', '-q', remote, 'refs/chant/wip/main:refs/chant/wip/main']);
    // Another box saves above the chain at the push URL; the fetch URL still holds a's chain.
    git(b, ['fetch', '-q', pushTo, 'refs/chant/wip/main:refs/chant/wip/main']);
    const theirs = snapshotOnTop(b);
    git(b, ['push', '-q', pushTo, 'refs/chant/wip/main:refs/chant/wip/main']);
    const replicator = new Replicator({ cwd: a, policy });
    await replicator.fetch();
    await new WipStore({ cwd: a, policy }).prune({ keepLast: 2 });
    const sent = await replicator.pushPruned();
    assert.deepEqual(sent.replication.pushed, []);
    assert.match(sent.replication.rejected[0]?.reason ?? '', /stale info/);
    assert.equal(git(pushTo, ['rev-parse', 'refs/chant/wip/main']).trim(), theirs, 'the push URL keeps the other box\'s snapshot');
  });

  it('goes to a new empty mirror the remote was pointed at, on the first prune push, the recorded replica being the old mirror\'s', async () => {
    const { a, policy } = boxes();
    buildChain(a, 5);
    const replicator = new Replicator({ cwd: a, policy });
    await replicator.push();
    const mirror = bareRemote();
    git(a, ['remote', 'set-url', 'origin', mirror]);
    await new WipStore({ cwd: a, policy }).prune({ keepLast: 2 });
    const pruned = git(a, ['rev-parse', 'refs/chant/wip/main']).trim();
    const sent = await replicator.pushPruned();
    assert.deepEqual(sent.replication, { remote: 'origin', pushed: [{ ref: 'refs/chant/wip/main', commit: pruned }], rejected: [], upToDate: 0 });
    assert.equal(git(mirror, ['rev-parse', 'refs/chant/wip/main']).trim(), pruned);
  });

  it('brings a box that fell behind a prune to the pruned chain, its own chain set aside whole', async () => {
    const { a, b, policy } = boxes();
    buildChain(a, 10);
    const replicatorA = new Replicator({ cwd: a, policy });
    await replicatorA.push();
    const replicatorB = new Replicator({ cwd: b, policy });
    await replicatorB.fetch();
    const behind = git(b, ['rev-parse', 'refs/chant/wip/main']).trim();
    // a goes on past what b fetched, pushes, then prunes: its marker names its own tip, never b's.
    for (let i = 0; i < 3; i += 1) snapshotOnTop(a);
    assert.equal((await replicatorA.push()).replication.pushed.length, 1);
    await new WipStore({ cwd: a, policy }).prune({ keepLast: 2 });
    assert.equal((await replicatorA.pushPruned()).replication.pushed.length, 1);
    const pruned = git(a, ['rev-parse', 'refs/chant/wip/main']).trim();
    assert.ok(!git(a, ['log', '--format=%B', 'refs/chant/wip/main']).includes(behind), 'no marker names the tip b holds');
    git(b, ['checkout', '-q', '-b', 'elsewhere']);
    // Even where b holds nothing the remote did not (its tip is the replica it recorded), what
    // the remote held since is not proven to cover it (a remote made anew, a force push): its
    // chain is set aside, never dropped.
    const fetched = await replicatorB.fetch();
    assert.deepEqual(fetched.refs.map(({ result, pruned: was, aside }) => ({ result, was, aside })), [{ result: 'fast-forward', was: true, aside: `refs/chant/wip-aside/${behind}` }]);
    assert.equal(git(b, ['rev-parse', 'refs/chant/wip/main']).trim(), pruned);
    assert.equal(git(b, ['rev-parse', `refs/chant/wip-aside/${behind}`]).trim(), behind);
    assert.deepEqual((await replicatorB.push()).replication.pushed, [{ ref: `refs/chant/wip-aside/${behind}`, commit: behind }]);
    assert.equal((await replicatorB.state())?.replicated, true);
  });

  it('sets aside, never drops, the chain of a box whose recorded replica is stale: a remote made anew, then pruned by another box', async () => {
    const { remote, a, b, policy } = boxes();
    const replicatorA = new Replicator({ cwd: a, policy });
    const replicatorB = new Replicator({ cwd: b, policy });
    writeFileSync(join(a, 'f.txt'), 'a1\n');
    await new WipStore({ cwd: a, policy }).save({ label: 'a1' });
    await replicatorA.push();
    await replicatorB.fetch();
    writeFileSync(join(b, 'f.txt'), 'b1 precious\n');
    const b1 = (await new WipStore({ cwd: b, policy }).save({ label: 'b1' })).snapshot.commit;
    assert.equal((await replicatorB.push()).replication.pushed.length, 1);
    // The remote is made anew, empty, at the same place; a pushes its chain there again, goes on and prunes.
    rmSync(remote, { recursive: true, force: true });
    git(tempDir(), ['init', '-q', '--bare', remote]);
    git(a, ['push', '-q', 'origin', 'main']);
    await replicatorA.push();
    writeFileSync(join(a, 'f.txt'), 'a2\n');
    await new WipStore({ cwd: a, policy }).save({ label: 'a2' });
    await replicatorA.push();
    await new WipStore({ cwd: a, policy }).prune({ keepLast: 1 });
    assert.equal((await replicatorA.pushPruned()).replication.pushed.length, 1);
    git(b, ['checkout', '-q', '-b', 'elsewhere']);
    const fetched = await replicatorB.fetch();
    assert.deepEqual(fetched.refs.map(({ result, aside }) => ({ result, aside })), [{ result: 'fast-forward', aside: `refs/chant/wip-aside/${b1}` }]);
    assert.equal(git(b, ['rev-parse', `refs/chant/wip-aside/${b1}`]).trim(), b1, 'b1 is held');
  });

  it('takes the aside chain the remote holds already, written once: two boxes that pruned alike', async () => {
    const { remote, a, b, policy } = boxes();
    buildChain(a, 3);
    const replicatorA = new Replicator({ cwd: a, policy });
    await replicatorA.push();
    const c = tempDir();
    git(c, ['clone', '-q', remote, '.']);
    const replicatorB = new Replicator({ cwd: b, policy });
    const replicatorC = new Replicator({ cwd: c, policy });
    await replicatorB.fetch();
    await replicatorC.fetch();
    // b and c prune alike: the same rewrite, the same tip.
    await new WipStore({ cwd: b, policy }).prune({ keepLast: 1 });
    await new WipStore({ cwd: c, policy }).prune({ keepLast: 1 });
    const same = git(b, ['rev-parse', 'refs/chant/wip/main']).trim();
    assert.equal(git(c, ['rev-parse', 'refs/chant/wip/main']).trim(), same);
    snapshotOnTop(a);
    await replicatorA.push();
    await new WipStore({ cwd: a, policy }).prune({ keepLast: 1 });
    await replicatorA.pushPruned();
    for (const dir of [b, c]) git(dir, ['checkout', '-q', '-b', 'elsewhere']);
    assert.equal((await replicatorB.fetch()).refs[0]?.aside, `refs/chant/wip-aside/${same}`);
    await replicatorB.push();
    const fetched = await replicatorC.fetch();
    assert.deepEqual(fetched.refs.map(({ ref, result, aside }) => ({ ref, result, aside })), [
      { ref: `refs/chant/wip-aside/${same}`, result: 'created', aside: undefined },
      { ref: 'refs/chant/wip/main', result: 'fast-forward', aside: `refs/chant/wip-aside/${same}` },
    ]);
    assert.equal(git(c, ['rev-parse', `refs/chant/wip-aside/${same}`]).trim(), same);
    assert.equal(git(c, ['rev-parse', 'refs/chant/wip/main']).trim(), git(remote, ['rev-parse', 'refs/chant/wip/main']).trim());
  });

  it('leaves a chain diverged, nothing lost, where its aside name holds another chain on the remote or is locked here, and fetches the rest', async () => {
    const { remote, a, b, policy } = boxes();
    buildChain(a, 3);
    const replicatorA = new Replicator({ cwd: a, policy });
    await replicatorA.push();
    const replicatorB = new Replicator({ cwd: b, policy });
    await replicatorB.fetch();
    const bTip = git(b, ['rev-parse', 'refs/chant/wip/main']).trim();
    // a goes on and prunes; the remote holds, under b's aside name, something else.
    const next = snapshotOnTop(a);
    await replicatorA.push();
    await new WipStore({ cwd: a, policy }).prune({ keepLast: 1 });
    await replicatorA.pushPruned();
    git(b, ['checkout', '-q', '-b', 'elsewhere']);
    // First: an aside ref of that name locked here: the chain stays, the rest of the fetch goes on.
    const lock = join(b, '.git', 'refs', 'chant', 'wip-aside', `${bTip}.lock`);
    mkdirSync(join(b, '.git', 'refs', 'chant', 'wip-aside'), { recursive: true });
    writeFileSync(lock, '');
    const locked = await replicatorB.fetch();
    assert.deepEqual(locked.refs.map(({ result, aside }) => ({ result, aside })), [{ result: 'diverged', aside: undefined }]);
    assert.equal(git(b, ['rev-parse', 'refs/chant/wip/main']).trim(), bTip);
    rmSync(lock);
    // Then: the remote holds another commit under that name.
    git(remote, ['update-ref', `refs/chant/wip-aside/${bTip}`, next]);
    for (let round = 0; round < 2; round += 1) {
      const fetched = await replicatorB.fetch();
      const main = fetched.refs.find((ref) => ref.ref === 'refs/chant/wip/main');
      assert.equal(main?.result, 'diverged');
      assert.equal(main?.aside, undefined);
      assert.equal(git(b, ['rev-parse', 'refs/chant/wip/main']).trim(), bTip, 'nothing of b\'s chain is dropped');
    }
  });

  it('sets aside, never takes, a pruned chain that dropped the checkpoint of the last restore of the fetching box, so that restore can still be undone after git\'s gc', async () => {
    const { b, storeB, replicatorB } = await prunedOverRestore();
    const tipB = git(b, ['rev-parse', 'refs/chant/wip/main']).trim();
    const fetched = await replicatorB.fetch();
    assert.equal(fetched.refs[0]?.aside, `refs/chant/wip-aside/${tipB}`, 'b\'s chain goes aside whole, its checkpoint with it');
    // What git's own gc would do in time: unreachable reflog entries expire, then their objects go.
    git(b, ['reflog', 'expire', '--expire-unreachable=now', '--all']);
    git(b, ['gc', '-q', '--prune=now']);
    const record = JSON.parse(readFileSync(join(b, '.git', 'chant-last-restore'), 'utf8')) as { checkpoint: string };
    const listed = (await storeB.list()).branches.flatMap((chain) => chain.snapshots.map((snapshot) => snapshot.commit));
    assert.ok(listed.includes(record.checkpoint), 'the checkpoint of the last restore is still on a chain');
    await storeB.restore({ snapshot: record.checkpoint });
    assert.equal(readFileSync(join(b, 'a.txt'), 'utf8'), 'precious\n', 'the undo of the restore gives back what it overwrote');
  });
  it('sets aside, never takes, a pruned chain while the record of the last restore of the fetching box is cut short (a power loss), since it could name any snapshot', async () => {
    const { b, storeB, replicatorB, done } = await prunedOverRestore();
    // Read as no record, it let the fetch take a's chain, which dropped b's checkpoint.
    writeFileSync(join(b, '.git', 'chant-last-restore'), '{"branch":"main","snapsh');
    const tipB = git(b, ['rev-parse', 'refs/chant/wip/main']).trim();
    const fetched = await replicatorB.fetch();
    assert.equal(fetched.refs[0]?.aside, `refs/chant/wip-aside/${tipB}`, 'b\'s chain goes aside whole, its checkpoint with it');
    git(b, ['reflog', 'expire', '--expire-unreachable=now', '--all']);
    git(b, ['gc', '-q', '--prune=now']);
    await storeB.restore({ snapshot: done.checkpoint.snapshot.commit });
    assert.equal(readFileSync(join(b, 'a.txt'), 'utf8'), 'precious\n', 'the undo of the restore gives back what it overwrote');
  });
  it('takes a pruned chain only under every worktree\'s lock: a restore here that took the chain\'s tip as its checkpoint meanwhile keeps it, so that restore can still be undone after git\'s gc', async () => {
    const { a, b, policy } = boxes({ 'a.txt': 'one\n' });
    const storeB = new WipStore({ cwd: b, policy });
    writeFileSync(join(b, 'a.txt'), 'first\n');
    const first = await storeB.save({ label: 'first' });
    writeFileSync(join(b, 'a.txt'), 'precious\n');
    const tip = await storeB.save({ label: 'precious' });
    const replicatorB = new Replicator({ cwd: b, policy });
    await replicatorB.push();
    // a takes b's chain and prunes it to its newest, written again: the tip b holds is replaced.
    await new Replicator({ cwd: a, policy }).fetch();
    await new WipStore({ cwd: a, policy }).prune({ keepLast: 1, push: true });
    // b restores; its checkpoint is the tip, which holds the working tree. Right then, before the
    // restore records it, a fetch of b's in another process finds a's pruned chain.
    const code = `const { Policy, Replicator } = await import(${JSON.stringify(join(ROOT, 'lib', 'index.ts'))});
      const policy = Policy.from({ remote: 'origin', refs: ['wip'], on: [] }, { box: 'app' });
      const fetched = await new Replicator({ cwd: ${JSON.stringify(b)}, policy }).fetch({ signal: AbortSignal.timeout(4000) }).then((result) => result.refs.map((ref) => ref.result), (error) => error.code);
      process.stdout.write(JSON.stringify(fetched));`;
    const fetches: Array<{ status: number | null; stdout: string; stderr: string }> = [];
    const done = await storeB.restore({ snapshot: first.snapshot.commit, onProgress: (progress) => {
      if (progress.phase === 'checkpoint' && progress.done === 1) fetches.push(spawnSync(process.execPath, ['--import', 'tsx', '--input-type=module', '-e', code], { cwd: ROOT, encoding: 'utf8' }));
    } });
    assert.equal(done.checkpoint.snapshot.commit, tip.snapshot.commit, 'the checkpoint is the tip');
    assert.deepEqual(fetches.map((fetch) => [fetch.status, fetch.stdout]), [[0, '"wip-cancelled"']], fetches[0]?.stderr);
    assert.equal(git(b, ['rev-parse', 'refs/chant/wip/main']).trim(), tip.snapshot.commit, 'the chain was not taken');
    // The next fetch sees the record: b's chain goes aside whole, its checkpoint with it.
    const fetched = await replicatorB.fetch();
    assert.equal(fetched.refs[0]?.aside, `refs/chant/wip-aside/${tip.snapshot.commit}`);
    for (const text of ['later', 'again']) {
      writeFileSync(join(b, 'a.txt'), `${text}\n`);
      await storeB.save({ label: text });
      await storeB.prune({ keepLast: 1 });
    }
    git(b, ['reflog', 'expire', '--expire-unreachable=now', '--all']);
    git(b, ['gc', '-q', '--prune=now']);
    // The record names the checkpoint as the prunes wrote it again.
    const record = JSON.parse(readFileSync(join(b, '.git', 'chant-last-restore'), 'utf8')) as { checkpoint: string };
    await storeB.restore({ snapshot: record.checkpoint });
    assert.equal(readFileSync(join(b, 'a.txt'), 'utf8'), 'precious\n', 'the undo of the restore gives back what it overwrote');
  });
  // git's %(trailers) reads trailers through trailer.separators and core.commentChar: with a
  // separator other than ':', or the comment character C, it read no prune marker, so a pruned
  // chain was never proven to hold the replica it replaced.
  for (const [key, value] of [['trailer.separators', '#'], ['core.commentChar', 'C']] as const) {
    it(`reads the prune markers as written whatever ${key} says: the prune push goes, and a fetching box takes the pruned chain`, async () => {
      const { remote, a, b, policy } = boxes();
      git(a, ['config', key, value]);
      git(b, ['config', key, value]);
      buildChain(a, 10);
      const replicatorA = new Replicator({ cwd: a, policy });
      assert.equal((await replicatorA.push()).replication.pushed.length, 1);
      const replicatorB = new Replicator({ cwd: b, policy });
      await replicatorB.fetch();
      await new WipStore({ cwd: a, policy }).prune({ keepLast: 3 });
      const pruned = git(a, ['rev-parse', 'refs/chant/wip/main']).trim();
      assert.deepEqual((await replicatorA.pushPruned()).replication.pushed, [{ ref: 'refs/chant/wip/main', commit: pruned }]);
      assert.equal(git(remote, ['rev-parse', 'refs/chant/wip/main']).trim(), pruned);
      git(b, ['checkout', '-q', '-b', 'elsewhere']);
      const fetched = await replicatorB.fetch();
      assert.deepEqual(fetched.refs.map(({ ref, result, pruned: was, aside }) => ({ ref, result, was, aside })), [{ ref: 'refs/chant/wip/main', result: 'fast-forward', was: true, aside: undefined }]);
      assert.equal(git(b, ['rev-parse', 'refs/chant/wip/main']).trim(), pruned);
    });
  }
});
