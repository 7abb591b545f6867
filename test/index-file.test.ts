import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { join } from 'node:path';
import { git, makeRepo, writeFiles } from './helpers.js';
import { readGitlinks } from '../lib/git/index-file.js';

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
