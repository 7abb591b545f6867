import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { makeRepo, writeFiles, git, tempDir } from './helpers.js';
// @ts-expect-error: the bench is plain JavaScript, run on demand by npm run bench.
import { bench, measureRow, table } from '../bench/run.mjs';
// @ts-expect-error: as above.
import { chant, gitCounter, keptRefs } from '../bench/harness.mjs';

describe('the bench', () => {
  it('runs every row of the harness on tiny repositories, one round, so it cannot rot', async () => {
    const results: Array<{ row: string; value: number | null; detail: string }> = await bench({ quick: true, silent: true });
    assert.ok(results.length >= 15, `${results.length} rows`);
    for (const result of results) {
      assert.doesNotMatch(result.detail, /^failed/, `${result.row}: ${result.detail}`);
      // Only libgit2's rows may be skipped, and only where its binding cannot load.
      if (result.row.includes('es-git') && result.detail.startsWith('skipped: ')) continue;
      assert.equal(typeof result.value, 'number', `${result.row} measured something: ${result.detail}`);
    }
    assert.match(table(results), /^\| row \| measured \| target \|/);
    for (const peer of ['es-git', 'isomorphic-git', 'git stash create', 'git status --porcelain, 20 files modified', '--limit 5']) {
      assert.ok(results.some((result) => result.row.includes(peer)), `a row measures ${peer}`);
    }
  });

  it('skips the es-git rows, saying why, where its binding cannot load, and measures the other rows of their loops', async () => {
    const results: Array<{ row: string; value: number | null; detail: string }> = await bench({ quick: true, silent: true, only: '100 files', esGitBinding: 'es-git-binding-not-installed' });
    const skipped = results.filter((result) => result.row.includes('es-git'));
    assert.ok(skipped.length >= 2, `${skipped.length} es-git rows`);
    for (const result of skipped) {
      assert.equal(result.value, null);
      assert.match(result.detail, /^skipped: es-git-binding-not-installed cannot load here: Cannot find module/);
    }
    const others = results.filter((result) => !result.row.includes('es-git'));
    assert.ok(others.some((result) => result.row.includes('git stash create')), 'the save loop still runs');
    for (const result of others) assert.equal(typeof result.value, 'number', `${result.row}: ${result.detail}`);
  });

  it('reports a ratio row that fails with its reason and goes on, never crashing on its missing timings', async () => {
    const failed = await measureRow({ name: 'a row whose repository cannot be made', kind: 'ratio', target: 1, options: { targets: true }, measure: async () => { throw new Error('no disk\nsecond line'); } });
    assert.deepEqual(failed, { row: 'a row whose repository cannot be made', value: null, target: 1, verdict: '', detail: 'failed: no disk' });
    const partial = await measureRow({ name: 'a ratio with no timings', kind: 'ratio', target: null, measure: async () => ({ note: 'replication not available' }) });
    assert.equal(partial.detail, 'replication not available');
    assert.equal(partial.value, null);
  });

  for (const [staging, expected, calls] of [
    // The blobs too are written in-process: no attribute rewrites the files. The ref is moved
    // in-process too, as update-ref moves it, once it exists and git has told its committer;
    // the checkout (its layout, HEAD and HEAD's tree) is read from its files.
    ['status', 1, 'status'],
    // The wip tip a save left is a loose ref naming a loose commit: read without a process.
    ['index', 3, 'ls-files (files over the size limit), add, write-tree'],
  ] as const) {
    it(`holds the git processes of a save with no policy to 3, the checkout, the trees, the commit and the ref read and written without one (${staging} staging: ${expected}); the first save, which asks git for its identity through commit-tree and creates the ref and its reflog with update-ref, to two more`, async () => {
      const dir = makeRepo();
      // The identity memo trusts a configuration file only once it has not changed for a moment.
      await new Promise((resolve) => setTimeout(resolve, 250));
      const counter = gitCounter();
      try {
        writeFiles(dir, { 'b.txt': 'b\n' });
        counter.reset();
        assert.equal(chant(dir, ['workspace', 'wip', 'save', '--label', 'first'], { ...counter.env, CHANT_WIP_STAGING: staging }).doc.created, true);
        assert.equal(counter.calls().length, expected + 2, counter.calls().join('\n'));
        assert.ok(counter.calls().some((call) => call.includes('commit-tree')), counter.calls().join('\n'));
        assert.ok(counter.calls().some((call) => call.includes('update-ref')), counter.calls().join('\n'));
        writeFiles(dir, { 'a.txt': 'a\n', 'README.md': 'changed\n' });
        counter.reset();
        const saved = chant(dir, ['workspace', 'wip', 'save', '--label', 'counted'], { ...counter.env, CHANT_WIP_STAGING: staging });
        assert.equal(saved.doc.created, true);
        assert.ok(counter.calls().length <= 3, counter.calls().join('\n'));
        assert.equal(counter.calls().length, expected, `${calls}: ${counter.calls().join('; ')}`);
      } finally {
        counter.dispose();
      }
    });
  }

  for (const refs of [11, 1_100]) {
    it(`holds the git processes of the read with a policy and ${refs} replicated refs to 10`, () => {
      const dir = makeRepo();
      const remote = tempDir();
      git(remote, ['init', '-q', '--bare', '.']);
      writeFiles(dir, { 'chant.workspace.json': JSON.stringify({ members: [{ name: 'app', box: { replicate: { refs: ['kept', 'wip'], on: [] } } }] }) });
      git(dir, ['remote', 'add', 'origin', remote]);
      keptRefs(dir, refs - 1);
      chant(dir, ['workspace', 'wip', 'save']);
      const pushed = chant(dir, ['workspace', 'wip', 'push']).doc;
      assert.equal(pushed.replication.pushed.length, refs);
      const counter = gitCounter();
      try {
        counter.reset();
        const read = chant(dir, ['workspace', 'wip', '--json'], counter.env).doc;
        assert.equal(read.replication.refs.length, refs);
        assert.equal(read.replication.replicated, true);
        assert.ok(counter.calls().length <= 10, counter.calls().join('\n'));
      } finally {
        counter.dispose();
      }
    });
  }
});
