// Checkouts in states a save must not misread: an operation in progress (rebase, bisect, merge,
// cherry-pick) and a repository named by GIT_DIR/GIT_WORK_TREE instead of found from the
// working directory.
import { git, makeRepo, runCli, stateOf, tempDir, writeFiles } from './helpers.js';
import assert from 'node:assert/strict';
import { mkdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, it } from 'node:test';
import { WipStore } from '../lib/index.js';

/** A repository on `feature`, whose rebase onto main stops on a conflict in a.txt. */
function stoppedRebase(): string {
  const dir = makeRepo({ 'a.txt': 'base\n' });
  git(dir, ['checkout', '-q', '-b', 'feature']);
  writeFiles(dir, { 'a.txt': 'feature\n' });
  git(dir, ['commit', '-qam', 'feature']);
  git(dir, ['checkout', '-q', 'main']);
  writeFiles(dir, { 'a.txt': 'main\n' });
  git(dir, ['commit', '-qam', 'main']);
  git(dir, ['checkout', '-q', 'feature']);
  git(dir, ['rebase', 'main'], { allowFail: true });
  return dir;
}

describe('an operation in progress', () => {
  it('names a stopped rebase and the branch it rebases, and never advises leaving it', async () => {
    const dir = stoppedRebase();
    const before = stateOf(dir);
    const saved = await runCli(dir, ['workspace', 'wip', 'save']);
    assert.equal(saved.code, 1);
    assert.equal(saved.doc.error.code, 'wip-no-branch');
    assert.match(saved.doc.error.message, /rebase of feature is in progress/);
    assert.match(saved.doc.error.message, /git rebase --continue/);
    assert.doesNotMatch(saved.doc.error.message, /check out|checkout|--abort|--skip|--quit/);
    assert.deepEqual(stateOf(dir), before, 'nothing was written');
    const restored = await runCli(dir, ['workspace', 'wip', 'restore']);
    assert.match(restored.doc.error.message, /rebase of feature is in progress/);
  });

  it('names a bisect in progress', async () => {
    const dir = makeRepo({ 'a.txt': '1\n' });
    writeFiles(dir, { 'a.txt': '2\n' });
    git(dir, ['commit', '-qam', 'two']);
    writeFiles(dir, { 'a.txt': '3\n' });
    git(dir, ['commit', '-qam', 'three']);
    git(dir, ['bisect', 'start', 'HEAD', 'HEAD~2']);
    const saved = await runCli(dir, ['workspace', 'wip', 'save']);
    assert.equal(saved.doc.error.code, 'wip-no-branch');
    assert.match(saved.doc.error.message, /bisect started on main is in progress/);
    assert.match(saved.doc.error.message, /git bisect good|git bisect bad/);
    assert.doesNotMatch(saved.doc.error.message, /check out|checkout|bisect reset/);
  });

  it('saves during a merge stopped on a conflict, taking the file with its conflict markers, and leaves the merge as it was', async () => {
    const dir = makeRepo({ 'a.txt': 'base\n' });
    git(dir, ['checkout', '-q', '-b', 'other']);
    writeFiles(dir, { 'a.txt': 'other\n' });
    git(dir, ['commit', '-qam', 'other']);
    git(dir, ['checkout', '-q', 'main']);
    writeFiles(dir, { 'a.txt': 'main\n' });
    git(dir, ['commit', '-qam', 'main']);
    git(dir, ['merge', 'other'], { allowFail: true });
    const before = stateOf(dir);
    for (const staging of ['index', 'status'] as const) {
      const saved = await new WipStore({ cwd: dir, staging }).save({ label: staging });
      assert.match(git(dir, ['show', `${saved.snapshot.commit}:a.txt`]), /^<<<<<<< HEAD\nmain\n=======\nother\n>>>>>>> other\n$/);
    }
    const after = stateOf(dir);
    assert.equal(after.index, before.index, 'the conflict stays in the index');
    assert.equal(after.status, before.status);
  });
});

describe('GIT_DIR and GIT_WORK_TREE', () => {
  /** A dotfiles checkout: a bare repository and a work tree without .git, joined by the variables. */
  function dotfiles(): { bare: string; home: string; env: NodeJS.ProcessEnv } {
    const bare = join(tempDir(), 'dotfiles.git');
    const home = tempDir();
    git(tempDir(), ['init', '-q', '--bare', '-b', 'main', bare]);
    const env = { GIT_DIR: bare, GIT_WORK_TREE: home };
    writeFiles(home, { '.bashrc': 'alias ll=ls\n' });
    git(home, ['add', '.bashrc'], { env });
    git(home, ['commit', '-qm', 'dotfiles'], { env });
    writeFiles(home, { '.bashrc': 'alias ll="ls -l"\n' });
    return { bare, home, env };
  }

  it('refuses a checkout named only by GIT_DIR and GIT_WORK_TREE with a message naming both, writing nothing', async () => {
    const { bare, home, env } = dotfiles();
    const refsBefore = git(home, ['for-each-ref'], { env });
    for (const args of [['workspace', 'wip', 'save'], ['workspace', 'wip', 'restore'], ['workspace', 'wip', '--json']]) {
      const run = await runCli(home, args, { ...process.env, ...env });
      assert.equal(run.code, 1, run.stdout);
      assert.equal(run.doc.error.code, 'not-a-git-repository');
      assert.match(run.doc.error.message, new RegExp(`GIT_DIR=${bare.replace(/[.*+?^${}()|[\]\\]/g, '\\$&')}`));
      assert.match(run.doc.error.message, /GIT_WORK_TREE=/);
    }
    assert.equal(git(home, ['for-each-ref'], { env }), refsBefore);
  });

  it('refuses when GIT_DIR names another repository than the one around the working directory', async () => {
    const { env } = dotfiles();
    const dir = makeRepo();
    writeFiles(dir, { 'work.txt': 'work\n' });
    const refsBefore = git(dir, ['for-each-ref']);
    const run = await runCli(dir, ['workspace', 'wip', 'save'], { ...process.env, GIT_DIR: env.GIT_DIR });
    assert.equal(run.code, 1, run.stdout);
    assert.match(run.doc.error.message, /GIT_DIR=/);
    assert.equal(git(dir, ['for-each-ref']), refsBefore, 'the repository around the working directory was not saved instead');
  });

  it('refuses, naming the variable, a checkout whose objects git finds only through GIT_ALTERNATE_OBJECT_DIRECTORIES, writing nothing, and saves once the folder is in its alternates file', async () => {
    // chant runs git without it: git status failed with "bad object HEAD", which said nothing of why.
    const source = makeRepo({ 'a.txt': 'shared\n' });
    const dir = join(tempDir(), 'borrowing');
    git(source, ['clone', '-q', '--shared', source, dir]);
    const alternates = join(dir, '.git', 'objects', 'info', 'alternates');
    const borrowed = readFileSync(alternates, 'utf8').trim();
    rmSync(alternates);
    writeFiles(dir, { 'work.txt': 'work\n' });
    const env = { ...process.env, GIT_ALTERNATE_OBJECT_DIRECTORIES: borrowed };
    const refsBefore = git(dir, ['for-each-ref'], { env });
    for (const args of [['workspace', 'wip', 'save'], ['workspace', 'wip', 'restore']]) {
      const run = await runCli(dir, args, env);
      assert.equal(run.code, 1, run.stdout);
      assert.equal(run.doc.error.code, 'git-failed');
      assert.match(run.doc.error.message, /GIT_ALTERNATE_OBJECT_DIRECTORIES=/);
      assert.match(run.doc.error.message, /info\/alternates/);
    }
    assert.equal(git(dir, ['for-each-ref'], { env }), refsBefore, 'nothing written');
    writeFileSync(alternates, `${borrowed}\n`);
    const saved = await runCli(dir, ['workspace', 'wip', 'save'], env);
    assert.equal(saved.code, 0, saved.stdout);
  });

  it('saves as usual when GIT_DIR names the repository around the working directory, as in a hook', async () => {
    const dir = makeRepo();
    mkdirSync(join(dir, 'sub'));
    writeFiles(dir, { 'work.txt': 'work\n' });
    const run = await runCli(dir, ['workspace', 'wip', 'save'], { ...process.env, GIT_DIR: '.git' });
    assert.equal(run.code, 0, run.stdout);
  });

  it('refuses, saying how to join them, a git directory whose core.worktree holds no .git, run from inside the git directory, and saves once a .git file joins them', async () => {
    // git finds such a repository from inside its git directory only; chant runs git from the
    // work tree, where a save's git status failed as git-failed.
    const dir = makeRepo();
    const gitDir = join(tempDir(), 'repo.git');
    git(dir, ['init', '-q', `--separate-git-dir=${gitDir}`]);
    rmSync(join(dir, '.git'));
    git(gitDir, ['config', 'core.worktree', dir]);
    writeFiles(dir, { 'work.txt': 'work\n' });
    const refsBefore = git(gitDir, ['for-each-ref']);
    for (const args of [['workspace', 'wip', 'save'], ['workspace', 'wip', 'restore'], ['workspace', 'wip', '--json']]) {
      const run = await runCli(gitDir, args);
      assert.equal(run.code, 1, run.stdout);
      assert.equal(run.doc.error.code, 'not-a-git-repository', run.stdout);
      assert.match(run.doc.error.message, /core\.worktree/);
      assert.match(run.doc.error.message, /gitdir: /);
    }
    assert.equal(git(gitDir, ['for-each-ref']), refsBefore);
    writeFileSync(join(dir, '.git'), `gitdir: ${gitDir}\n`);
    const run = await runCli(gitDir, ['workspace', 'wip', 'save']);
    assert.equal(run.code, 0, run.stdout);
    assert.equal(git(dir, ['show', 'refs/chant/wip/main:work.txt']), 'work\n');
  });
});
