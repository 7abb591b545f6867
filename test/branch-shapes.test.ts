// Branch names change shape: a deleted branch `feature` leaves refs/chant/wip/feature, and a new
// branch `feature/login` needs refs/chant/wip/feature/login, which git cannot hold beside it
// (and the other way round). The save moves the old chain aside, deletes nothing, and the read
// lists it.
import { git, makeRepo, runCli, writeFiles, assertValidDocument } from './helpers.js';
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { WipStore } from '../lib/index.js';

const ASIDE = 'refs/chant/wip-aside/';

for (const [before, after] of [['feature', 'feature/login'], ['feature/login', 'feature']] as const) {
  describe(`a chain of ${before} when branch ${after} is saved`, () => {
    it('is moved aside, whole and reachable, and the read lists it beside the new chain', async () => {
      const dir = makeRepo();
      git(dir, ['checkout', '-q', '-b', before]);
      writeFiles(dir, { 'old.txt': 'old work\n' });
      const first = await new WipStore({ cwd: dir }).save({ label: 'old one' });
      writeFiles(dir, { 'old.txt': 'old work, later\n' });
      const second = await new WipStore({ cwd: dir }).save({ label: 'old two' });
      git(dir, ['checkout', '-q', 'main']);
      git(dir, ['branch', '-q', '-D', before]);
      git(dir, ['checkout', '-q', '-b', after]);
      writeFiles(dir, { 'new.txt': 'new work\n' });
      const saved = await runCli(dir, ['workspace', 'wip', 'save', '--label', 'new']);
      assert.equal(saved.code, 0, saved.stdout);
      await assertValidDocument(saved.doc);
      assert.equal(saved.doc.ref, `refs/chant/wip/${after}`);
      const aside = git(dir, ['for-each-ref', '--format=%(refname) %(objectname)', ASIDE]).trim().split('\n');
      assert.deepEqual(aside, [`${ASIDE}${second.snapshot.commit} ${second.snapshot.commit}`], 'the old chain, under the id of its tip');
      assert.equal(git(dir, ['rev-parse', `${second.snapshot.commit}^1`]).trim(), first.snapshot.commit, 'the chain is whole');
      assert.ok(!git(dir, ['for-each-ref', '--format=%(refname)']).split('\n').includes(`refs/chant/wip/${before}`), 'the old name is free');
      assert.match(git(dir, ['reflog', 'show', '--format=%gs', `${ASIDE}${second.snapshot.commit}`]), /moved aside/);
      const read = await runCli(dir, ['workspace', 'wip', '--json']);
      assert.equal(read.code, 0, read.stdout);
      await assertValidDocument(read.doc);
      const entries = read.doc.branches.map((branch: { branch: string; ref: string; aside?: boolean; snapshots: Array<{ label: string }> }) => [branch.branch, branch.ref, branch.aside ?? false, branch.snapshots.map((snapshot) => snapshot.label)]);
      assert.deepEqual(entries.sort(), [
        [after, `refs/chant/wip/${after}`, false, ['new']],
        [before, `${ASIDE}${second.snapshot.commit}`, true, ['old two', 'old one']],
      ].sort());
      // The next save on the new branch goes on its own chain, and a restore there works.
      writeFiles(dir, { 'new.txt': 'more\n' });
      const next = await new WipStore({ cwd: dir }).save({ label: 'new two' });
      assert.equal(git(dir, ['rev-parse', `${next.snapshot.commit}^1`]).trim(), saved.doc.snapshot.commit);
      const restored = await new WipStore({ cwd: dir }).restore({ snapshot: saved.doc.snapshot.commit });
      assert.equal(restored.ref, `refs/chant/wip/${after}`);
      // Reading one branch lists its aside chains too.
      const one = await new WipStore({ cwd: dir }).list({ branch: before });
      assert.deepEqual(one.branches.map((branch) => branch.ref), [`${ASIDE}${second.snapshot.commit}`]);
    });
  });
}
