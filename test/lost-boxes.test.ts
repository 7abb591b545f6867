// The seed page's lost-box story, box after box: every replacement box's restore takes a
// checkpoint of its clean clone first, which the schedule pushes; the next box must still get
// the work, not that checkpoint.
import assert from 'node:assert/strict';
import { rmSync } from 'node:fs';
import { join } from 'node:path';
import { describe, it } from 'node:test';
import { assertValidDocument, git, makeRepo, runCli, tempDir, treeOf, writeFiles } from './helpers.js';
import { bareRemote } from './remotes.js';

const DECLARATION = `${JSON.stringify({ members: [{ name: 'app', box: { replicate: { remote: 'origin', every: '10m' } } }] }, null, 2)}\n`;

describe('a lost box, and its replacements lost in turn', () => {
  it('gives the work to three replacement boxes in a row, each pushing its own checkpoint', async () => {
    const remote = bareRemote();
    const first = makeRepo({ 'README.md': 'project\n', 'chant.workspace.json': DECLARATION, 'src/app.ts': 'export const v = 1;\n' });
    git(first, ['remote', 'add', 'origin', remote]);
    git(first, ['push', '-q', 'origin', 'main']);
    git(first, ['checkout', '-q', '-b', 'chant/work/W-001']);
    writeFiles(first, { 'src/app.ts': 'export const v = 2; // uncommitted\n', 'records/W-001.json': '{"state":"uncommitted"}\n' });
    const saved = await runCli(first, ['workspace', 'wip', 'save', '--label', 'turn:7', '--json']);
    assert.equal(saved.code, 0, saved.stdout);
    assert.equal(saved.doc.replication.rejected.length, 0);
    const work = treeOf(first);
    rmSync(first, { recursive: true, force: true });

    for (let box = 2; box <= 4; box += 1) {
      const fresh = join(tempDir(), `box-${box}`);
      git(tempDir(), ['clone', '-q', remote, fresh]);
      const fetched = await runCli(fresh, ['workspace', 'wip', 'fetch', '--json']);
      assert.equal(fetched.code, 0, fetched.stdout);
      assert.equal(fetched.doc.failed, null);
      git(fresh, ['checkout', '-q', 'chant/work/W-001']);
      const restored = await runCli(fresh, ['workspace', 'wip', 'restore', '--json']);
      assert.equal(restored.code, 0, restored.stdout);
      await assertValidDocument(restored.doc);
      assert.equal(restored.doc.snapshot.commit, saved.doc.snapshot.commit, `box ${box} restores the save of box 1`);
      assert.equal(restored.doc.snapshot.kind, 'save');
      assert.deepEqual(treeOf(fresh), work, `box ${box} has the work back`);
      // Box 2 checkpoints its clean clone; later boxes find that checkpoint (the same tree on
      // the same head) at the tip and reuse it.
      assert.equal(restored.doc.checkpoint.created, box === 2);
      assert.equal(restored.doc.checkpoint.snapshot.kind, 'pre-restore');
      // The host's schedule pushes what the box has: its checkpoint of the clean clone too.
      const pushed = await runCli(fresh, ['workspace', 'wip', 'push', '--json']);
      assert.equal(pushed.code, 0, pushed.stdout);
      assert.deepEqual(pushed.doc.replication.rejected, []);
      assert.equal(git(remote, ['rev-parse', 'refs/chant/wip/chant/work/W-001']).trim(), restored.doc.checkpoint.snapshot.commit);
      rmSync(fresh, { recursive: true, force: true });
    }
  });
});
