import { git, tempDir } from './helpers.js';
import assert from 'node:assert/strict';
import { join } from 'node:path';
import { rmSync } from 'node:fs';
import { spawnSync } from 'node:child_process';
import { describe, it } from 'node:test';
import fc from 'fast-check';
import { Plumbing } from '../lib/git/plumbing.js';
import { SimpleGitRunner } from '../lib/git/runner.js';
import { diffLooseTrees } from '../lib/git/tree-diff.js';

// A restore lists the paths two trees differ on from their loose files, without diff-tree.
// These tests hold that list to git's own on random pairs of trees, and check that what git could
// read or decide otherwise is left to git.
const SEED = Number(process.env.CHANT_TREE_DIFF_SEED ?? 20261203);
const RUNS = Number(process.env.CHANT_TREE_DIFF_RUNS ?? 60);

// Names that sort differently as files and as folders ('a' against 'a-b', 'a.b', 'a/'), and
// names that are not ASCII.
const NAMES = ['a', 'a-b', 'a.b', 'a0', 'b', 'é', 'z y'];
const MODES = ['100644', '100755', '120000'] as const;
const pathArb = fc.array(fc.constantFrom(...NAMES), { minLength: 1, maxLength: 3 }).map((names) => names.join('/'));
const entryArb = fc.record({ path: pathArb, mode: fc.constantFrom(...MODES), content: fc.constantFrom('1', '2', '3') });
const treeArb = fc.array(entryArb, { maxLength: 12 });

/** The tree of `entries` (a path under another's file is dropped), written loose through a temporary index. */
function treeOf(dir: string, entries: ReadonlyArray<{ path: string; mode: string; content: string }>): string {
  const kept = new Map<string, { mode: string; content: string }>();
  for (const entry of entries) {
    const clash = [...kept.keys()].some((path) => path.startsWith(`${entry.path}/`) || entry.path.startsWith(`${path}/`));
    if (!clash) kept.set(entry.path, entry);
  }
  const index = join(dir, '.git', 'diff-test.index');
  rmSync(index, { force: true });
  const env = { GIT_INDEX_FILE: index };
  const lines = [...kept].map(([path, { mode, content }]) => `${mode} ${git(dir, ['hash-object', '-w', '--stdin'], { input: content }).trim()}\t${path}\n`);
  git(dir, ['update-index', '--add', '--index-info'], { input: lines.join(''), env });
  return git(dir, ['write-tree'], { env }).trim();
}

describe('the paths two trees differ on, read from their loose files', () => {
  for (const format of ['sha1', 'sha256']) {
    it(`are diff-tree's, in its order and form, on ${RUNS} random pairs of trees (${format}, seed ${SEED})`, async () => {
      const dir = tempDir();
      git(dir, ['init', '-q', `--object-format=${format}`, '.']);
      const plumbing = new Plumbing(new SimpleGitRunner(dir), dir);
      const objects = join(dir, '.git', 'objects');
      await fc.assert(fc.asyncProperty(treeArb, treeArb, async (a, b) => {
        const from = treeOf(dir, a);
        const to = treeOf(dir, b);
        const mine = diffLooseTrees(objects, from, to, format);
        assert.notEqual(mine, null, 'every tree is loose, with no gitlink');
        assert.deepEqual(mine, await plumbing.diffTrees(from, to, true));
      }), { seed: SEED, numRuns: RUNS });
    });
  }

  it('leaves to git a tree that is not loose, a gitlink, and a mode git would canonicalize', async () => {
    const dir = tempDir();
    git(dir, ['init', '-q', '.']);
    const objects = join(dir, '.git', 'objects');
    const blob = git(dir, ['hash-object', '-w', '--stdin'], { input: 'x' }).trim();
    const mk = (lines: string) => git(dir, ['mktree'], { input: lines }).trim();
    const plain = mk(`100644 blob ${blob}\tf\n`);
    const other = mk(`100755 blob ${blob}\tf\n`);
    assert.deepEqual(diffLooseTrees(objects, plain, other, 'sha1')?.map((change) => [change.raw, change.status]), [['f', 'M']]);
    const gitlink = mk(`160000 commit ${'1'.repeat(40)}\tsub\n100644 blob ${blob}\tf\n`);
    assert.equal(diffLooseTrees(objects, plain, gitlink, 'sha1'), null, 'a gitlink is git\'s to diff');
    const odd = spawnSync('git', ['hash-object', '-t', 'tree', '--literally', '-w', '--stdin'], { cwd: dir, input: Buffer.concat([Buffer.from('100664 f\0', 'latin1'), Buffer.from(blob, 'hex')]), encoding: 'utf8' }).stdout.trim();
    assert.match(odd, /^[0-9a-f]{40}$/);
    assert.equal(diffLooseTrees(objects, plain, odd, 'sha1'), null, 'a mode git canonicalizes is git\'s to read');
    git(dir, ['update-ref', 'refs/keep/a', git(dir, ['commit-tree', '-m', 'a', plain]).trim()]);
    git(dir, ['update-ref', 'refs/keep/b', git(dir, ['commit-tree', '-m', 'b', other]).trim()]);
    git(dir, ['gc', '-q', '--prune=now']);
    assert.equal(diffLooseTrees(objects, plain, other, 'sha1'), null, 'packed trees are git\'s to read');
    assert.deepEqual(diffLooseTrees(objects, plain, plain, 'sha1'), [], 'a tree does not differ from itself, read or not');
  });
});
