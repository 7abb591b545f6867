import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { chownSync, mkdirSync, readFileSync, symlinkSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, it } from 'node:test';
import { checkoutFromFiles, packedRefTarget } from '../lib/git/checkout-files.js';
import type { CheckoutFiles } from '../lib/git/checkout-files.js';
import { git, makeRepo, tempDir, writeFiles } from './helpers.js';

// The checkout a save, restore or read starts from, read from the files where that is what
// `git rev-parse` prints for it, and left to git everywhere else: held here to git's own answer
// on each shape of checkout, and to being read at all on the plain ones.

/** What git says of the checkout around `cwd`, as Plumbing.checkout asks it; null outside one. */
function gitSays(cwd: string): CheckoutFiles | null {
  const layoutArgs = ['--path-format=absolute', '--show-toplevel', '--git-dir', '--git-common-dir', '--git-path', 'index', '--git-path', 'objects', '--show-object-format'];
  const run = (args: string[]) => spawnSync('git', args, { cwd, encoding: 'utf8', env: { ...process.env, LC_ALL: 'C' } });
  const layoutRun = run(['rev-parse', ...layoutArgs]);
  if (layoutRun.status !== 0) return null;
  const [top, gitDir, commonDir, indexFile, objectsDir, objectFormat] = layoutRun.stdout.split('\n') as [string, string, string, string, string, string];
  if (top === '') return null;
  const head = run(['rev-parse', '--verify', '-q', 'HEAD^{commit}']).stdout.trim() || null;
  const headTree = head === null ? null : run(['rev-parse', '--verify', '-q', 'HEAD^{tree}']).stdout.trim() || null;
  const headRef = run(['symbolic-ref', '-q', 'HEAD']).stdout.trim() || null;
  const replaced = run(['for-each-ref', '--format=%(refname)', 'refs/replace/']).stdout.trim() !== '';
  return { layout: { top, gitDir, commonDir, indexFile, objectsDir, objectFormat }, headRef, head, headTree, replaced };
}

/** Holds what is read from the files to git's answer; `read` says whether this shape must be read without git. */
function check(name: string, cwd: string, read: boolean, ambient: Readonly<Record<string, string | undefined>> = process.env): void {
  const ours = checkoutFromFiles(cwd, ambient);
  if (read) assert.notEqual(ours, null, `${name}: read from the files`);
  else assert.equal(ours, null, `${name}: left to git`);
  if (ours !== null) assert.deepEqual(ours, gitSays(cwd), `${name}: what git says`);
}

describe('the checkout read from its files', () => {
  it('is what git rev-parse says on plain checkouts, from the top, a subfolder or through a link', () => {
    const dir = makeRepo({ 'a.txt': 'a\n', 'sub/deep/b.txt': 'b\n' });
    check('the top', dir, true);
    check('a subfolder', join(dir, 'sub', 'deep'), true);
    const link = join(tempDir(), 'link');
    symlinkSync(dir, link);
    check('through a link', join(link, 'sub'), true);
    git(dir, ['checkout', '-q', '-b', 'feature/x.y-1']);
    check('a branch with a folder in its name', dir, true);
    git(dir, ['pack-refs', '--all']);
    check('the branch packed, its commit loose', dir, true);
    git(dir, ['checkout', '-q', '--detach']);
    check('a detached HEAD', dir, true);
    const inner = join(dir, 'sub', 'inner');
    mkdirSync(inner);
    git(inner, ['init', '-q', '-b', 'main', '.']);
    check('a repository inside another\'s working tree, no commit yet', inner, true);
    assert.equal(checkoutFromFiles(inner)?.layout.top, inner);
  });

  it('is left to git where git finds the checkout otherwise, reads HEAD otherwise, or refuses it', () => {
    const outside = tempDir();
    check('a folder in no repository', outside, false);

    const packed = makeRepo();
    git(packed, ['gc', '-q']);
    check('HEAD\'s commit packed', packed, false);

    const main = makeRepo();
    const worktree = join(tempDir(), 'wt');
    git(main, ['worktree', 'add', '-q', '-b', 'other', worktree]);
    check('a linked work tree', worktree, false);
    check('the main work tree of one with linked work trees', main, true);

    const sub = makeRepo();
    const gitDirElsewhere = join(tempDir(), 'modules-sub');
    const moved = makeRepo();
    git(moved, ['init', '-q', `--separate-git-dir=${gitDirElsewhere}`]);
    check('a .git file naming the git directory', moved, false);
    void sub;

    const bare = tempDir();
    git(bare, ['init', '-q', '--bare', '.']);
    check('a bare repository', bare, false);
    const inGitDir = makeRepo();
    check('inside .git', join(inGitDir, '.git', 'refs'), false);

    const replaced = makeRepo({ 'a.txt': '1\n' });
    writeFiles(replaced, { 'a.txt': '2\n' });
    git(replaced, ['commit', '-qam', 'two']);
    git(replaced, ['replace', 'HEAD', 'HEAD~1']);
    check('replace refs', replaced, false);

    const worktreeConfig = makeRepo();
    const elsewhere = tempDir();
    git(worktreeConfig, ['config', 'core.worktree', elsewhere]);
    check('core.worktree', worktreeConfig, false);

    const sha256 = tempDir();
    git(sha256, ['init', '-q', '--object-format=sha256', '-b', 'main', '.']);
    writeFiles(sha256, { 'a.txt': 'a\n' });
    git(sha256, ['add', '.']);
    git(sha256, ['commit', '-qm', 'one']);
    check('a sha256 repository', sha256, false);

    const notARepo = makeRepo();
    mkdirSync(join(notARepo, 'nested', '.git'), { recursive: true });
    check('an empty .git folder inside a working tree (git looks further up)', join(notARepo, 'nested'), false);

    const ambient = makeRepo();
    check('configuration in the environment naming a work tree', ambient, false, { ...process.env, GIT_CONFIG_COUNT: '1', GIT_CONFIG_KEY_0: 'core.worktree', GIT_CONFIG_VALUE_0: '/elsewhere' });

    // packed-refs that git would refuse, or read otherwise than the first line naming the branch.
    const damaged: Array<[string, (text: string) => string]> = [
      ['packed-refs with no newline at its end', (text) => text.slice(0, -1)],
      ['packed-refs with a header git does not know', (text) => text.replace(/^#.*\n/, '# hello\n')],
      ['packed-refs naming the branch twice', (text) => `${text}${'1'.repeat(40)} refs/heads/main\n`],
    ];
    for (const [name, damage] of damaged) {
      const repo = makeRepo();
      git(repo, ['pack-refs', '--all', '--prune']);
      const file = join(repo, '.git', 'packed-refs');
      check('the branch packed', repo, true);
      writeFileSync(file, damage(readFileSync(file, 'latin1')));
      check(name, repo, false);
    }
    assert.equal(packedRefTarget('', 'refs/heads/main'), null);

    const headLink = makeRepo();
    writeFileSync(join(headLink, '.git', 'HEAD'), 'ref: refs/remotes/origin/main\n');
    check('HEAD naming a ref outside refs/heads', headLink, false);
  });

  it('is left to git where another user owns the repository (git then asks safe.directory)', (t) => {
    if (process.geteuid?.() !== 0) {
      t.skip('needs root to give the repository to another user');
      return;
    }
    const dir = makeRepo();
    chownSync(join(dir, '.git'), 65534, 65534);
    assert.equal(checkoutFromFiles(dir), null);
  });
});
