// A chain moved aside (its branch deleted, and a new branch's name nested in or around its own) is
// replicated like any other, and its old name on the remote, which would refuse the new chain's
// push for ever, is deleted there with a lease once the remote holds the aside chain: the remote
// keeps every snapshot, and a box that pushed to the old name since keeps it too.
import assert from 'node:assert/strict';
import { chmodSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, it } from 'node:test';
import type { PolicyDocument } from '../lib/documents/replication.js';
import { Replicator } from '../lib/replication/replicator.js';
import { policyOf } from '../lib/replication/policy.js';
import { WipStore } from '../lib/index.js';
import { git, makeRepo, writeFiles } from './helpers.js';
import { assertDocument, bareRemote, missingProgram, refsIn, startLighttpd, startSshd } from './remotes.js';
import { writeDocument } from '../lib/documents/document.js';

const POLICY: PolicyDocument = { box: 'app', remote: 'origin', refs: ['work', 'kept', 'wip', 'ledger'], on: ['save'], every: null };
const ASIDE = 'refs/chant/wip-aside/';

/** Where the remote is: its URL, the bare repository behind it, the config a box needs to reach it. */
interface Served {
  url: string;
  bare: string;
  config: Record<string, string>;
}

function local(): Served {
  const bare = bareRemote();
  return { url: bare, bare, config: {} };
}

/** A box of its own on `served`'s remote. */
function boxOn(served: Served): string {
  const dir = makeRepo();
  git(dir, ['remote', 'add', 'origin', served.url]);
  for (const [key, value] of Object.entries(served.config)) git(dir, ['config', key, value]);
  return dir;
}

/** A checkout on branch `before` with one snapshot pushed to a bare remote; then `before` deleted and `after` checked out. */
async function reshaped(before: string, after: string, served: Served = local()): Promise<{ dir: string; remote: string; first: string; replicator: Replicator; store: WipStore }> {
  const remote = served.bare;
  const dir = boxOn(served);
  const replicator = new Replicator({ cwd: dir, policy: POLICY });
  const store = new WipStore({ cwd: dir });
  git(dir, ['checkout', '-q', '-b', before]);
  writeFiles(dir, { 'old.txt': 'the old branch\'s work\n' });
  const first = (await store.save({})).snapshot.commit;
  const pushed = await replicator.push();
  assert.deepEqual(pushed.replication.pushed.map((ref) => ref.ref), [`refs/chant/wip/${before}`]);
  git(dir, ['checkout', '-q', 'main']);
  git(dir, ['branch', '-q', '-D', before]);
  git(dir, ['checkout', '-q', '-b', after]);
  return { dir, remote, first, replicator, store };
}

describe('a chain moved aside, replicated', () => {
  for (const [before, after] of [['feature', 'feature/login'], ['feature/login', 'feature']] as const) {
    it(`pushes the aside chain and ${after}'s chain, deleting the remote's ${before} only once the aside chain there holds it`, async () => {
      const { dir, remote, first, replicator, store } = await reshaped(before, after);
      writeFiles(dir, { 'new.txt': 'the new branch\'s work\n' });
      const second = await store.save({});
      const aside = `${ASIDE}${first}`;
      assert.deepEqual(refsIn(dir, ASIDE), { [aside]: first }, 'the old chain was moved aside');

      const outcome = await replicator.push();
      assertDocument(writeDocument('push', outcome));
      assert.deepEqual(outcome.replication.rejected, [], JSON.stringify(outcome.replication.rejected));
      assert.deepEqual(outcome.replication.pushed.map((ref) => ref.ref).sort(), [aside, `refs/chant/wip/${after}`].sort());
      assert.deepEqual(refsIn(remote, 'refs/chant/'), { [aside]: first, [`refs/chant/wip/${after}`]: second.snapshot.commit }, 'the remote holds both chains under the names this box has');
      const state = await replicator.state();
      assert.equal(state?.replicated, true, JSON.stringify(state?.refs));

      // A second box learns of both.
      const other = makeRepo();
      git(other, ['remote', 'add', 'origin', remote]);
      const fetched = await new Replicator({ cwd: other, policy: POLICY }).fetch();
      assert.equal(fetched.failed, null);
      assert.deepEqual(refsIn(other, 'refs/chant/wip-aside/'), { [aside]: first });
      assert.equal(refsIn(other, 'refs/chant/wip/')[`refs/chant/wip/${after}`], second.snapshot.commit);
      const read = await new WipStore({ cwd: other }).list();
      assert.ok(read.branches.some((branch) => branch.ref === aside && branch.aside === true), 'the read lists the aside chain on the second box');
    });
  }

  it('leaves the remote\'s old name alone when another box pushed to it since, and sends the new chain there aside, saying so', async () => {
    await leaseRefuses(local());
  });

  it('sends the new chain there aside when the remote refuses to delete the old name (an update hook; receive.denyDeletes guards refs/heads only), and the old name keeps its snapshots', async () => {
    const { dir, remote, first, replicator, store } = await reshaped('feature', 'feature/login');
    const hook = join(remote, 'hooks', 'update');
    writeFileSync(hook, '#!/bin/sh\ncase "$3" in 0000000000000000000000000000000000000000) echo "deletions are not taken here" >&2; exit 1;; esac\n');
    chmodSync(hook, 0o755);
    writeFiles(dir, { 'new.txt': 'the new branch\'s work\n' });
    const second = (await store.save({})).snapshot.commit;
    const outcome = await replicator.push();
    assert.deepEqual(outcome.replication.rejected.map((ref) => ref.ref), ['refs/chant/wip/feature/login']);
    assert.match(outcome.replication.rejected[0]?.reason ?? '', new RegExp(`went to the remote as ${ASIDE}${second}`));
    assert.deepEqual(refsIn(remote, 'refs/chant/'), { [`${ASIDE}${first}`]: first, [`${ASIDE}${second}`]: second, 'refs/chant/wip/feature': first });
  });

  it('replicates through the save\'s own push (on: save) the same way', async () => {
    const { dir, remote, first } = await reshaped('feature', 'feature/login');
    writeFiles(dir, { 'new.txt': 'the new branch\'s work\n' });
    const saved = await new WipStore({ cwd: dir, policy: policyOf(POLICY) }).save({});
    assert.deepEqual(saved.replication?.rejected ?? [], []);
    assert.deepEqual(refsIn(remote, 'refs/chant/'), { [`${ASIDE}${first}`]: first, 'refs/chant/wip/feature/login': saved.snapshot.commit });
  });
});

// The deletion with a lease is a refspec of git push like any other, but each transport carries
// it its own way (smart HTTP's receive-pack behind a web server, ssh's): both shapes of the
// push, and the lease that refuses, over each.
describe('a chain moved aside, replicated over http (lighttpd) and ssh (sshd)', () => {
  const transports: Array<[string, () => Promise<Served | string>]> = [
    ['http', async () => {
      const missing = missingProgram('lighttpd');
      if (missing !== null) return missing;
      const server = await startLighttpd();
      return { url: server.repository('aside.git'), bare: join(server.base, 'aside.git'), config: {} };
    }],
    ['ssh', async () => {
      const missing = missingProgram('sshd');
      if (missing !== null) return missing;
      const server = await startSshd();
      return { url: server.repository('aside.git'), bare: join(server.base, 'aside.git'), config: { 'core.sshCommand': server.sshCommand } };
    }],
  ];
  for (const [name, serve] of transports) {
    it(`over ${name}: the aside chain goes, the old name is deleted there, and a second box fetches both`, async (t) => {
      const served = await serve();
      if (typeof served === 'string') return t.skip(served);
      const { dir, remote, first, replicator, store } = await reshaped('feature', 'feature/login', served);
      writeFiles(dir, { 'new.txt': 'the new branch\'s work\n' });
      const second = (await store.save({})).snapshot.commit;
      const outcome = await replicator.push();
      assert.deepEqual(outcome.replication.rejected, [], JSON.stringify(outcome.replication.rejected));
      assert.deepEqual(refsIn(remote, 'refs/chant/'), { [`${ASIDE}${first}`]: first, 'refs/chant/wip/feature/login': second });
      assert.equal((await replicator.state())?.replicated, true);
      const other = boxOn(served);
      const fetched = await new Replicator({ cwd: other, policy: POLICY }).fetch();
      assert.equal(fetched.failed, null);
      assert.deepEqual(refsIn(other, ASIDE), { [`${ASIDE}${first}`]: first });
      assert.equal(refsIn(other, 'refs/chant/wip/')['refs/chant/wip/feature/login'], second);
    });

    it(`over ${name}: the lease refuses when another box pushed to the old name since`, async (t) => {
      const served = await serve();
      if (typeof served === 'string') return t.skip(served);
      await leaseRefuses(served);
    });
  }
});

/** Another box pushes to the old name after this one moved it aside: the remote keeps it, and the new chain goes there aside, saying so. */
async function leaseRefuses(served: Served): Promise<void> {
  const { dir, remote, first, replicator, store } = await reshaped('feature', 'feature/login', served);
  // Another box, still on branch feature, pushes a newer snapshot of it.
  const other = boxOn(served);
  const otherReplicator = new Replicator({ cwd: other, policy: POLICY });
  await otherReplicator.fetch();
  git(other, ['checkout', '-q', '-b', 'feature']);
  git(other, ['update-ref', 'refs/chant/wip/feature', first]);
  writeFiles(other, { 'more.txt': 'the other box\'s work\n' });
  const theirs = (await new WipStore({ cwd: other }).save({})).snapshot.commit;
  assert.deepEqual((await otherReplicator.push()).replication.pushed.map((ref) => ref.ref), ['refs/chant/wip/feature']);

  writeFiles(dir, { 'new.txt': 'the new branch\'s work\n' });
  const mine = (await store.save({})).snapshot.commit;
  const outcome = await replicator.push();
  assert.deepEqual(outcome.replication.pushed.map((ref) => ref.ref), [`${ASIDE}${first}`]);
  assert.deepEqual(outcome.replication.rejected.map((ref) => ref.ref), ['refs/chant/wip/feature/login']);
  assert.match(outcome.replication.rejected[0]?.reason ?? '', /refs\/chant\/wip\/feature/);
  assert.equal(refsIn(remote, 'refs/chant/wip/')['refs/chant/wip/feature'], theirs, 'the other box\'s snapshot stays on the remote');
  assert.equal((await replicator.state())?.replicated, false, 'the state says the new chain is not on the remote under its name');
  // Its snapshots are there all the same, aside, and the reason says so.
  assert.equal(refsIn(remote, ASIDE)[`${ASIDE}${mine}`], mine, 'the new chain went to the remote aside');
  assert.match(outcome.replication.rejected[0]?.reason ?? '', new RegExp(`went to the remote as ${ASIDE}${mine}`));
}
