import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { join } from 'node:path';
import { git, makeRepo, writeFiles } from './helpers.js';
import { existsSync, readFileSync, writeFileSync } from 'node:fs';
import { indexHoldsTree, indexMayHaveFlags, readGitlinks, readIndexEntries, readUnmergedPaths, scanIndex, selectIndexEntries } from '../lib/git/formats/index-file.js';

/** A repository whose index holds files, a long path and two gitlinks, with no submodule checked out. */
function repoWithGitlinks(): { dir: string; commit: string } {
  const dir = makeRepo({ 'README.md': 'x\n', 'a/b.txt': 'b\n', 'z.txt': 'z\n' });
  const commit = git(dir, ['rev-parse', 'HEAD']).trim();
  // A path longer than the 12 bits of an entry's name length (4,095 bytes).
  const long = Array.from({ length: 20 }, (_, i) => `${String(i).padStart(2, '0')}${'d'.repeat(208)}`).join('/');
  const blob = git(dir, ['hash-object', '-w', '--stdin'], { input: 'deep\n' }).trim();
  // Only in the index: no file system takes a path that long.
  git(dir, ['update-index', '--add', '--cacheinfo', `100644,${blob},${long}/file.txt`]);
  git(dir, ['update-index', '--add', '--cacheinfo', `160000,${commit},libs/first`]);
  git(dir, ['update-index', '--add', '--cacheinfo', `160000,${commit},zz/second`]);
  return { dir, commit };
}

describe('reading gitlinks from an index file', () => {
  for (const version of [2, 3, 4]) {
    it(`finds every gitlink and nothing else in an index of version ${version}`, async () => {
      const { dir, commit } = repoWithGitlinks();
      if (version === 3) {
        writeFiles(dir, { 'intent.txt': 'i\n' });
        git(dir, ['add', '-N', 'intent.txt']);
      }
      git(dir, ['update-index', '--index-version', String(version)]);
      assert.match(git(dir, ['ls-files', '--debug', 'README.md']), /README\.md/);
      const links = await readGitlinks(join(dir, '.git', 'index'), 'sha1');
      assert.deepEqual(links, [{ path: 'libs/first', commit }, { path: 'zz/second', commit }]);
    });
  }

  it('finds none in an index without gitlinks, and none in a file that is no index', async () => {
    const dir = makeRepo();
    assert.deepEqual(await readGitlinks(join(dir, '.git', 'index'), 'sha1'), []);
    assert.deepEqual(await readGitlinks(join(dir, 'README.md'), 'sha1'), []);
    assert.deepEqual(await readGitlinks(join(dir, 'missing'), 'sha1'), []);
  });
});

describe('reading only the entries a save looks at', () => {
  for (const version of [2, 3, 4]) {
    it(`keeps exactly the entries asked for, each as the whole read gives it, from an index of version ${version}`, async () => {
      const { dir } = repoWithGitlinks();
      writeFiles(dir, { 'intent.txt': 'i\n' });
      git(dir, ['add', '-N', 'intent.txt']);
      git(dir, ['update-index', '--skip-worktree', 'z.txt']);
      git(dir, ['update-index', '--index-version', String(version)]);
      const indexFile = join(dir, '.git', 'index');
      const all = await readIndexEntries(indexFile, 'sha1');
      const wanted = new Set(['a/b.txt', 'intent.txt']);
      const kept = selectIndexEntries(readFileSync(indexFile), 'sha1', (entry) => entry.flag !== null || entry.mode === '160000' || wanted.has(entry.path));
      const plain = (entries: typeof all) => entries.map(({ path, mode, oid, stage, flag, intentToAdd }) => ({ path, mode, oid, stage, flag, intentToAdd }));
      assert.deepEqual(plain(kept), plain(all.filter((entry) => ['a/b.txt', 'intent.txt', 'z.txt', 'libs/first', 'zz/second'].includes(entry.path))));
      assert.deepEqual(kept.map((entry) => entry.path), ['a/b.txt', 'intent.txt', 'libs/first', 'z.txt', 'zz/second']);
      assert.equal(kept.find((entry) => entry.path === 'intent.txt')?.intentToAdd, true);
      assert.equal(kept.find((entry) => entry.path === 'z.txt')?.flag, 'skip-worktree');
      assert.ok(all.length > kept.length);
      assert.deepEqual(selectIndexEntries(null, 'sha1', () => true), []);
    });
  }
});

describe('the index walked while status runs, its entries then found by path', () => {
  const plain = (entries: ReturnType<typeof selectIndexEntries>) => entries.map(({ path, mode, oid, stage, flag, intentToAdd }) => ({ path, mode, oid, stage, flag, intentToAdd }));
  const asked = (data: Buffer, wanted: readonly string[]) => plain(selectIndexEntries(data, 'sha1', (entry) => entry.flag !== null || entry.mode === '160000' || wanted.includes(entry.path)));

  /** An index with gitlinks, a long path, flags, an intent-to-add entry, a conflict's three stages and non-ASCII names. */
  function busyIndex(version: number): { dir: string; data: Buffer; paths: string[] } {
    const { dir } = repoWithGitlinks();
    writeFiles(dir, { 'intent.txt': 'i\n', 'é/ü.txt': 'u\n', 'a/b/c.txt': 'c\n', 'a-b.txt': 'ab\n', 'a.txt': 'a\n' });
    git(dir, ['add', 'é/ü.txt', 'a/b/c.txt', 'a-b.txt', 'a.txt']);
    git(dir, ['add', '-N', 'intent.txt']);
    git(dir, ['update-index', '--skip-worktree', 'z.txt']);
    git(dir, ['update-index', '--assume-unchanged', 'a/b.txt']);
    const blob = git(dir, ['rev-parse', ':a.txt']).trim();
    git(dir, ['update-index', '--index-info'], { input: `0 ${'0'.repeat(40)}\ta-b.txt\n100644 ${blob} 1\ta-b.txt\n100644 ${blob} 2\ta-b.txt\n100644 ${blob} 3\ta-b.txt\n` });
    git(dir, ['update-index', '--index-version', String(version)]);
    const data = readFileSync(join(dir, '.git', 'index'));
    return { dir, data, paths: plain(selectIndexEntries(data, 'sha1', () => true)).map((entry) => entry.path) };
  }

  for (const version of [2, 3, 4]) {
    it(`finds what the whole read keeps for the same paths, in index order, in version ${version}`, () => {
      const { data, paths } = busyIndex(version);
      const scan = scanIndex(data, 'sha1');
      assert.equal(scan.split, false);
      assert.ok(paths.some((path) => path.length > 4095), 'a name longer than its 12-bit length');
      for (const wanted of [[], ['a-b.txt'], ['a.txt', 'é/ü.txt', 'not/there', 'a'], [...paths].reverse(), ['a/b/c.txt', 'intent.txt', 'zz', '']]) {
        assert.deepEqual(plain(scan.select(wanted)), asked(data, wanted), `asked for ${wanted.join(', ')}`);
      }
      assert.deepEqual(plain(scan.select(['a-b.txt'])).filter((entry) => entry.path === 'a-b.txt').map((entry) => entry.stage), [1, 2, 3]);
    });
  }

  it('reads an index out of git\'s order whole, and finds the same', () => {
    const dir = makeRepo({ 'a.txt': 'a\n', 'b.txt': 'b\n', 'c.txt': 'c\n' });
    const data = readFileSync(join(dir, '.git', 'index'));
    // Three entries of the same size: the first two swapped.
    const size = (data.length - 12 - 20) >= 3 * 72 ? 72 : 0;
    assert.equal(size, 72);
    const swapped = Buffer.concat([data.subarray(0, 12), data.subarray(12 + size, 12 + 2 * size), data.subarray(12, 12 + size), data.subarray(12 + 2 * size)]);
    assert.deepEqual(plain(selectIndexEntries(swapped, 'sha1', () => true)).map((entry) => entry.path), ['b.txt', 'a.txt', 'c.txt']);
    for (const wanted of [['a.txt'], ['b.txt', 'c.txt']]) assert.deepEqual(plain(scanIndex(swapped, 'sha1').select(wanted)), asked(swapped, wanted));
  });

  it('says a split index is split, and a missing or broken one holds nothing', () => {
    const dir = makeRepo({ 'a.txt': 'a\n', 'b/c.txt': 'c\n' });
    git(dir, ['update-index', '--split-index']);
    writeFiles(dir, { 'a.txt': 'changed\n' });
    git(dir, ['add', 'a.txt']);
    assert.equal(scanIndex(readFileSync(join(dir, '.git', 'index')), 'sha1').split, true);
    git(dir, ['update-index', '--no-split-index']);
    assert.equal(scanIndex(readFileSync(join(dir, '.git', 'index')), 'sha1').split, false);
    assert.deepEqual(scanIndex(null, 'sha1').select(['a.txt']), []);
    const broken = Buffer.from(readFileSync(join(dir, '.git', 'index')));
    // A count the bytes cannot hold: read as the whole read reads it, as far as the entries go.
    broken.writeUInt32BE(0xffffffff, 8);
    assert.deepEqual(plain(scanIndex(broken, 'sha1').select(['a.txt'])), asked(broken, ['a.txt']));
    writeFileSync(join(dir, 'not-an-index'), 'DIRC');
    assert.deepEqual(scanIndex(readFileSync(join(dir, 'not-an-index')), 'sha1').select(['a.txt']), []);
  });
});

describe('whether an index is plain, as a restore asks instead of reading it again', () => {
  it('says plain only where neither the read of conflicts nor the read of flags would find one', async () => {
    const cases: Record<string, [(dir: string) => void, boolean]> = {
      'a clean checkout': [() => undefined, true],
      'a staged change and an untracked file': [(dir) => {
        writeFiles(dir, { 'a/b.txt': 'staged\n', 'new.txt': 'n\n' });
        git(dir, ['add', 'a/b.txt']);
      }, true],
      'an intent-to-add entry': [(dir) => {
        writeFiles(dir, { 'new.txt': 'n\n' });
        git(dir, ['add', '-N', 'new.txt']);
      }, false],
      'an entry marked assume-unchanged': [(dir) => git(dir, ['update-index', '--assume-unchanged', 'z.txt']), false],
      'an entry marked skip-worktree': [(dir) => git(dir, ['update-index', '--skip-worktree', 'z.txt']), false],
      'a split index': [(dir) => git(dir, ['update-index', '--split-index']), false],
      'an unmerged entry': [(dir) => {
        const blob = git(dir, ['hash-object', '-w', '--stdin'], { input: 'theirs\n' }).trim();
        git(dir, ['update-index', '--index-info'], { input: `0 ${'0'.repeat(40)}\tz.txt\n100644 ${blob} 1\tz.txt\n100644 ${blob} 3\tz.txt\n` });
      }, false],
      // Not walked by the scan: not known, so not plain.
      'version 4': [(dir) => git(dir, ['update-index', '--index-version', '4']), false],
    };
    for (const [name, [change, expected]] of Object.entries(cases)) {
      const dir = makeRepo({ 'README.md': 'x\n', 'a/b.txt': 'b\n', 'z.txt': 'z\n' });
      change(dir);
      const file = join(dir, '.git', 'index');
      const scan = scanIndex(readFileSync(file), 'sha1');
      assert.equal(scan.plain, expected, name);
      const found = (await readUnmergedPaths(file, 'sha1')).length > 0 || await indexMayHaveFlags(file, 'sha1');
      if (scan.plain) assert.equal(found, false, `${name}: the reads find nothing in a plain index`);
      // Intent-to-add is neither a conflict nor a flag the reads look for: not plain all the same.
      else if (name !== 'an intent-to-add entry' && name !== 'version 4') assert.equal(found, true, `${name}: the reads find it too`);
    }
    assert.equal(scanIndex(null, 'sha1').plain, true, 'no index holds no conflict and no flag');
    assert.equal(scanIndex(Buffer.from('DIRC'), 'sha1').plain, false, 'bytes that are no index');
  });
});

describe('whether an index holds a tree exactly', () => {
  // The file read again (a restore without status), and the bytes a save from status scanned: one answer.
  const holds = async (dir: string, tree = git(dir, ['rev-parse', 'HEAD^{tree}']).trim()): Promise<boolean> => {
    const file = join(dir, '.git', 'index');
    const answer = await indexHoldsTree(file, 'sha1', tree);
    assert.equal(scanIndex(existsSync(file) ? readFileSync(file) : null, 'sha1').holds(tree), answer, 'the scan of the same bytes answers as the read of the file');
    return answer;
  };

  for (const version of [2, 3, 4]) {
    it(`says yes for the index a commit leaves, in version ${version}, and no for another tree`, async () => {
      const dir = makeRepo({ 'README.md': 'x\n', 'a/b.txt': 'b\n', 'a/c/d.txt': 'd\n', 'z.txt': 'z\n' });
      git(dir, ['update-index', '--index-version', String(version)]);
      git(dir, ['read-tree', '--reset', 'HEAD']);
      assert.equal(await holds(dir), true);
      assert.equal(await holds(dir, git(dir, ['rev-parse', 'HEAD:a']).trim()), false);
    });
  }

  it('says no for anything a reset to HEAD would change or that it cannot vouch for', async () => {
    const cases: Record<string, (dir: string) => void> = {
      'a staged change': (dir) => {
        writeFiles(dir, { 'a/b.txt': 'staged\n' });
        git(dir, ['add', 'a/b.txt']);
      },
      'a staged new file': (dir) => {
        writeFiles(dir, { 'new.txt': 'n\n' });
        git(dir, ['add', 'new.txt']);
      },
      'an intent-to-add entry': (dir) => {
        writeFiles(dir, { 'new.txt': 'n\n' });
        git(dir, ['add', '-N', 'new.txt']);
      },
      'an entry marked assume-unchanged': (dir) => git(dir, ['update-index', '--assume-unchanged', 'z.txt']),
      'an entry marked skip-worktree': (dir) => git(dir, ['update-index', '--skip-worktree', 'z.txt']),
      'a split index': (dir) => git(dir, ['update-index', '--split-index']),
      'an unmerged entry': (dir) => {
        const blob = git(dir, ['hash-object', '-w', '--stdin'], { input: 'theirs\n' }).trim();
        git(dir, ['update-index', '--index-info'], { input: `0 ${'0'.repeat(40)}\tz.txt\n100644 ${blob} 1\tz.txt\n100644 ${blob} 3\tz.txt\n` });
      },
    };
    for (const [name, change] of Object.entries(cases)) {
      const dir = makeRepo({ 'README.md': 'x\n', 'a/b.txt': 'b\n', 'z.txt': 'z\n' });
      assert.equal(await holds(dir), true, `${name}: before`);
      change(dir);
      assert.equal(await holds(dir), false, name);
    }
    // A flag git would keep its cache tree valid under: the entries alone say no.
    const flagged = makeRepo({ 'README.md': 'x\n', 'a/b.txt': 'b\n' });
    assert.equal(await holds(flagged), true, 'a flag in the bytes: before');
    const data = readFileSync(join(flagged, '.git', 'index'));
    // The first entry's flags follow its 40 bytes of stat data and mode and its 20-byte id.
    data[12 + 40 + 20] = (data[12 + 40 + 20] as number) | 0x80;
    writeFileSync(join(flagged, '.git', 'index'), data);
    assert.equal(await holds(flagged), false, 'a flag in the bytes');
    const dir = makeRepo();
    assert.equal(await indexHoldsTree(join(dir, 'README.md'), 'sha1', git(dir, ['rev-parse', 'HEAD^{tree}']).trim()), false, 'a file that is no index');
    assert.equal(await indexHoldsTree(join(dir, 'missing'), 'sha1', git(dir, ['rev-parse', 'HEAD^{tree}']).trim()), false, 'no file');
    assert.equal(scanIndex(readFileSync(join(dir, 'README.md')), 'sha1').holds(git(dir, ['rev-parse', 'HEAD^{tree}']).trim()), false, 'bytes that are no index');
    assert.equal(scanIndex(null, 'sha1').holds(git(dir, ['rev-parse', 'HEAD^{tree}']).trim()), false, 'no bytes');
  });

  it('still says yes with an untracked cache, and for an index git has refreshed', async () => {
    const dir = makeRepo({ 'README.md': 'x\n', 'a/b.txt': 'b\n' });
    git(dir, ['update-index', '--untracked-cache']);
    writeFiles(dir, { 'untracked.txt': 'u\n', 'a/b.txt': 'unstaged\n' });
    git(dir, ['status', '--porcelain']);
    assert.match(git(dir, ['ls-files', '--debug']), /a\/b\.txt/);
    assert.equal(await holds(dir), true);
  });
});

