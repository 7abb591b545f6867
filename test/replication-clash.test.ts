// Branch names that clash across boxes: git cannot hold refs/chant/wip/feat beside
// refs/chant/wip/feat/x, so once one box's chain holds one name on the remote, another box's chain
// under the other is refused there for ever. That box's snapshots must still reach the remote
// (under a flat aside name no branch's can be in the way of), the first box's chain stays as it is,
// and a third box fetches and restores both.
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, it } from 'node:test';
import type { PolicyDocument } from '../lib/documents/replication.js';
import { Replicator } from '../lib/replication/replicator.js';
import { WipStore } from '../lib/index.js';
import { assertRefusal, assertValidDocument, git, makeRepo, runCli, tempDir, treeOf, writeFiles } from './helpers.js';
import { bareRemote, missingLfs, refsIn } from './remotes.js';

const POLICY: PolicyDocument = { box: 'app', remote: 'origin', refs: ['work', 'kept', 'wip', 'ledger'], on: ['save'], every: null };
const ASIDE = 'refs/chant/wip-aside/';

/** A clone of `remote` on a branch of its own, `branch`. */
function box(remote: string, branch: string): string {
  const dir = join(tempDir(), 'box');
  git(tempDir(), ['clone', '-q', remote, dir]);
  git(dir, ['checkout', '-q', '-b', branch]);
  return dir;
}

/** A remote, and a box `a` that saved on `feat` and pushed its chain there. */
async function pushedOnFeat(): Promise<{ remote: string; a: string; aReplicator: Replicator }> {
  const remote = bareRemote();
  git(makeRepo(), ['push', '-q', remote, 'main']);
  const a = box(remote, 'feat');
  const aReplicator = new Replicator({ cwd: a, policy: POLICY });
  writeFiles(a, { 'a.txt': 'box a\n' });
  await new WipStore({ cwd: a }).save({});
  await aReplicator.push();
  return { remote, a, aReplicator };
}

describe('branch names that clash across boxes', () => {
  for (const [first, second] of [['feat', 'feat/x'], ['feat/x', 'feat']] as const) {
    it(`a chain on ${second} refused by another box's ${first} on the remote goes there aside, the other box's stays, and a third box restores both`, async () => {
      const remote = bareRemote();
      const seed = makeRepo();
      git(seed, ['push', '-q', remote, 'main']);

      const a = box(remote, first);
      writeFiles(a, { 'a.txt': 'box a\n' });
      const aTip = (await new WipStore({ cwd: a }).save({})).snapshot.commit;
      assert.deepEqual((await new Replicator({ cwd: a, policy: POLICY }).push()).replication.pushed.map((ref) => ref.ref), [`refs/chant/wip/${first}`]);

      const b = box(remote, second);
      const bStore = new WipStore({ cwd: b });
      const bReplicator = new Replicator({ cwd: b, policy: POLICY });
      writeFiles(b, { 'b.txt': 'box b, first\n' });
      const b1 = (await bStore.save({})).snapshot.commit;
      const pushed = (await bReplicator.push()).replication;
      assert.deepEqual(pushed.rejected.map((ref) => ref.ref), [`refs/chant/wip/${second}`], 'the name stays refused');
      assert.match(pushed.rejected[0]?.reason ?? '', /exists; cannot create/);
      assert.match(pushed.rejected[0]?.reason ?? '', new RegExp(`${ASIDE}${b1}`), 'the reason says where the snapshots went');
      assert.equal(refsIn(remote, ASIDE)[`${ASIDE}${b1}`], b1, 'the remote holds b\'s chain');
      assert.equal(refsIn(remote, 'refs/chant/wip/')[`refs/chant/wip/${first}`], aTip, 'the remote keeps a\'s chain');
      const state = await bReplicator.state();
      assert.equal(state?.replicated, false, 'the name itself is not on the remote');
      assert.equal(state?.refs.find((ref) => ref.ref === `refs/chant/wip/${second}`)?.ahead, 0, 'every commit of it is');

      // The next save's push sends the new tip the same way, and the older aside name, which the new chain holds, goes.
      writeFiles(b, { 'b.txt': 'box b, second\n' });
      const b2 = (await bStore.save({})).snapshot.commit;
      const again = await bReplicator.pushOrReport();
      assert.match(again.rejected[0]?.reason ?? '', new RegExp(`${ASIDE}${b2}`));
      assert.deepEqual(refsIn(remote, ASIDE), { [`${ASIDE}${b2}`]: b2 });
      assert.equal(refsIn(b, 'refs/chant/wip/')[`refs/chant/wip/${second}`], b2, 'b keeps its chain at home');
      const bWork = treeOf(b);

      // A third box on each branch in turn fetches both chains and restores each.
      const c = box(remote, second);
      const fetched = await new Replicator({ cwd: c, policy: POLICY }).fetch();
      assert.equal(fetched.failed, null);
      assert.equal(refsIn(c, ASIDE)[`${ASIDE}${b2}`], b2);
      // The branch's own name holds nothing there: the refusal names the aside chain to restore.
      await assertRefusal(() => new WipStore({ cwd: c }).restore({}), 'wip-none', new RegExp(`${ASIDE}${b2}.*wip restore ${b2}`));
      await new WipStore({ cwd: c }).restore({ snapshot: b2 });
      assert.deepEqual(treeOf(c), bWork, 'b\'s work is back');
      const d = box(remote, first);
      await new Replicator({ cwd: d, policy: POLICY }).fetch();
      await new WipStore({ cwd: d }).restore({});
      assert.equal(treeOf(d)['a.txt'], '-:box a\n', 'a\'s work is back');
    });
  }
});

describe('a chain the remote no longer holds under its name', () => {
  it('a chain another tool forced over on the remote goes there aside once it has a snapshot more, and the forced value stays', async () => {
    const remote = bareRemote();
    const seed = makeRepo();
    git(seed, ['push', '-q', remote, 'main']);
    const a = box(remote, 'feat');
    const aStore = new WipStore({ cwd: a });
    const aReplicator = new Replicator({ cwd: a, policy: POLICY });
    writeFiles(a, { 'a.txt': 'box a, first\n' });
    const x = (await aStore.save({})).snapshot.commit;
    assert.deepEqual((await aReplicator.push()).replication.pushed.map((ref) => ref.ref), ['refs/chant/wip/feat']);

    // Another tool, not chant, forces its own chain over the name (receive.denyNonFastForwards is off, as git's default).
    const other = box(remote, 'feat');
    writeFiles(other, { 'o.txt': 'another tool\n' });
    const z = (await new WipStore({ cwd: other }).save({})).snapshot.commit;
    git(other, ['push', '-q', '--force', remote, 'refs/chant/wip/feat:refs/chant/wip/feat']);

    writeFiles(a, { 'a.txt': 'box a, second\n' });
    const y = (await aStore.save({})).snapshot.commit;
    const pushed = (await aReplicator.push()).replication;
    assert.deepEqual(pushed.rejected.map((ref) => ref.ref), ['refs/chant/wip/feat'], 'never forced back');
    assert.match(pushed.rejected[0]?.reason ?? '', new RegExp(`went to the remote as ${ASIDE}${y}`));
    assert.equal(refsIn(remote, 'refs/chant/wip/')['refs/chant/wip/feat'], z, 'the forced value stays');
    assert.deepEqual(refsIn(remote, ASIDE), { [`${ASIDE}${y}`]: y }, 'a\'s chain, x and y, is on the remote again');
    git(remote, ['merge-base', '--is-ancestor', x, y]);
    assert.equal(git(a, ['for-each-ref', 'refs/chant/probing/']), '', 'what the push fetched to compare is not kept');
  });

  it('a chain another box continued on the remote sends nothing aside: the remote\'s chain holds it', async () => {
    const { remote, a, aReplicator } = await pushedOnFeat();
    // A replacement box takes the chain and goes on with it.
    const b = box(remote, 'feat');
    await new Replicator({ cwd: b, policy: POLICY }).fetch();
    writeFiles(b, { 'b.txt': 'box b\n' });
    await new WipStore({ cwd: b }).save({});
    assert.equal((await new Replicator({ cwd: b, policy: POLICY }).push()).replication.rejected.length, 0);
    // Box a comes back: its push is refused (its tip is behind), twice, and nothing goes aside.
    for (let round = 0; round < 2; round += 1) {
      const pushed = (await aReplicator.push()).replication;
      assert.doesNotMatch(JSON.stringify(pushed), /went to the remote as/);
    }
    assert.deepEqual(refsIn(remote, ASIDE), {});
    assert.equal(git(a, ['for-each-ref', 'refs/chant/probing/']), '');
  });
});

describe('a chain sent aside, through the CLI', () => {
  it('takes its LFS objects with it: a replacement box fetches the chain aside and restores the LFS file with the remote gone', async (t) => {
    const lfs = missingLfs();
    if (lfs !== null) return t.skip(lfs);
    const declaration = `${JSON.stringify({ members: [{ name: 'app', box: { replicate: { remote: 'origin' } } }] }, null, 2)}\n`;
    const remote = bareRemote();
    const seed = makeRepo({ 'README.md': 'project\n', '.gitattributes': '*.bin filter=lfs diff=lfs merge=lfs -text\n', 'chant.workspace.json': declaration });
    git(seed, ['push', '-q', remote, 'main']);
    const lfsBox = (branch: string): string => {
      const dir = box(remote, branch);
      git(dir, ['lfs', 'install', '--local']);
      return dir;
    };
    const a = lfsBox('feat');
    writeFiles(a, { 'a.txt': 'box a\n' });
    const savedA = await runCli(a, ['workspace', 'wip', 'save']);
    assert.equal(savedA.code, 0, savedA.stdout);
    assert.deepEqual(savedA.doc.replication.rejected, []);

    const b = lfsBox('feat/x');
    const noise = spawnSync('head', ['-c', '65536', '/dev/urandom']).stdout.toString('base64');
    writeFiles(b, { 'assets/model.bin': noise });
    const savedB = await runCli(b, ['workspace', 'wip', 'save']);
    assert.equal(savedB.code, 0, savedB.stdout);
    await assertValidDocument(savedB.doc, { oursOnly: true });
    const tip = savedB.doc.snapshot.commit as string;
    assert.match(savedB.doc.replication.rejected[0]?.reason ?? '', new RegExp(`went to the remote as ${ASIDE}${tip}`));
    const work = treeOf(b);

    const c = lfsBox('feat/x');
    const fetched = await runCli(c, ['workspace', 'wip', 'fetch']);
    assert.equal(fetched.code, 0, fetched.stdout);
    assert.equal(fetched.doc.failed, null);
    // The LFS objects came with the fetch: the restore needs no network.
    git(c, ['remote', 'set-url', 'origin', join(tempDir(), 'gone.git')]);
    const restored = await runCli(c, ['workspace', 'wip', 'restore', tip]);
    assert.equal(restored.code, 0, restored.stdout);
    assert.equal(readFileSync(join(c, 'assets/model.bin'), 'utf8'), noise);
    assert.deepEqual(treeOf(c), work);
  });
});

describe('a chain the remote no longer holds, whose chain there cannot be fetched', () => {
  it('says in its reason why it could not be compared, and sends nothing aside: a crafted commit another tool forced over it', async () => {
    const { remote, a, aReplicator } = await pushedOnFeat();
    // A commit whose tree holds a `.git` entry, which every fetch of chant's refuses, forced over the name.
    const other = box(remote, 'feat');
    const blob = git(other, ['hash-object', '-w', '--stdin'], { input: 'x\n' }).trim();
    const crafted = git(other, ['commit-tree', git(other, ['mktree'], { input: `100644 blob ${blob}\t.git\n` }).trim(), '-m', 'crafted']).trim();
    git(other, ['push', '-q', '--force', remote, `${crafted}:refs/chant/wip/feat`]);

    writeFiles(a, { 'a.txt': 'box a, again\n' });
    await new WipStore({ cwd: a }).save({});
    const pushed = (await aReplicator.push()).replication;
    const reason = pushed.rejected[0]?.reason ?? '';
    assert.match(reason, /fetch first|non-fast-forward/);
    assert.match(reason, /could not be fetched to compare/);
    assert.match(reason, /hasDotgit/);
    assert.deepEqual(refsIn(remote, ASIDE), {});
    assert.equal(git(a, ['for-each-ref', 'refs/chant/probing/']), '');
  });
});
