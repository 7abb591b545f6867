import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { git, makeRepo, stateOf, tempDir, writeFiles } from './helpers.js';
import { WipStore } from '../lib/store/wip-store.js';
import { isWipError } from '../lib/errors.js';
import type { WipErrorCode } from '../lib/errors.js';

/** Asserts the promise refuses with `code` and that the checkout is exactly as it was. */
async function refuses(dir: string, attempt: () => Promise<unknown>, code: WipErrorCode, message?: RegExp): Promise<void> {
  const before = stateOf(dir);
  await assert.rejects(attempt(), (error) => {
    assert.ok(isWipError(error), `a WipError, not ${String(error)}`);
    assert.equal(error.code, code, error.message);
    if (message) assert.match(error.message, message);
    return true;
  });
  assert.deepEqual(stateOf(dir), before, 'nothing was written');
}

const BAD_VALUES: ReadonlyArray<[string, string]> = [
  ['a newline', 'turn\n7'],
  ['201 characters', 'x'.repeat(201)],
  ['an empty value', ''],
  ['a bidi override', 'turn\u202e7'],
  ['a C1 control', 'turn\u00857'],
  ['a DEL', 'turn\u007f'],
  ['a tab', 'turn\t7'],
];

describe('refusals of save and restore', () => {
  for (const [what, value] of BAD_VALUES) {
    it(`refuses a --label with ${what} as write-usage-invalid`, async () => {
      const dir = makeRepo();
      writeFiles(dir, { 'x.txt': 'x\n' });
      await refuses(dir, () => new WipStore({ cwd: dir }).save({ label: value }), 'write-usage-invalid', /--label/);
    });
    it(`refuses a --by with ${what} as write-usage-invalid, on save and on restore`, async () => {
      const dir = makeRepo();
      await new WipStore({ cwd: dir }).save({});
      writeFiles(dir, { 'x.txt': 'x\n' });
      await refuses(dir, () => new WipStore({ cwd: dir }).save({ by: value }), 'write-usage-invalid', /--by/);
      await refuses(dir, () => new WipStore({ cwd: dir }).restore({ by: value }), 'write-usage-invalid', /--by/);
    });
  }

  it('accepts a value of exactly 200 characters, counted as characters not bytes', async () => {
    const dir = makeRepo();
    const result = await new WipStore({ cwd: dir }).save({ label: 'é'.repeat(200) });
    assert.equal(result.snapshot.label, 'é'.repeat(200));
  });

  it('checks the label before it looks for a repository', async () => {
    const outside = tempDir();
    await assert.rejects(new WipStore({ cwd: outside }).save({ label: '' }), (error) => isWipError(error, 'write-usage-invalid'));
  });

  it('refuses outside a repository with not-a-git-repository', async () => {
    const outside = tempDir();
    for (const attempt of [() => new WipStore({ cwd: outside }).save({}), () => new WipStore({ cwd: outside }).restore({}), () => new WipStore({ cwd: outside }).list()]) {
      await assert.rejects(attempt(), (error) => isWipError(error, 'not-a-git-repository'));
    }
  });

  it('refuses a detached HEAD with wip-no-branch', async () => {
    const dir = makeRepo();
    git(dir, ['checkout', '-q', '--detach']);
    writeFiles(dir, { 'x.txt': 'x\n' });
    await refuses(dir, () => new WipStore({ cwd: dir }).save({}), 'wip-no-branch', /detached/);
    await refuses(dir, () => new WipStore({ cwd: dir }).restore({}), 'wip-no-branch', /detached/);
  });

  it('refuses a branch with no commit yet with wip-no-branch', async () => {
    const dir = tempDir();
    git(dir, ['init', '-q', '-b', 'main', '.']);
    writeFiles(dir, { 'x.txt': 'x\n' });
    await refuses(dir, () => new WipStore({ cwd: dir }).save({}), 'wip-no-branch', /no commit/);
    await refuses(dir, () => new WipStore({ cwd: dir }).restore({}), 'wip-no-branch', /no commit/);
  });

  it('refuses a restore with no snapshot at all with wip-none', async () => {
    const dir = makeRepo();
    writeFiles(dir, { 'x.txt': 'x\n' });
    await refuses(dir, () => new WipStore({ cwd: dir }).restore({}), 'wip-none');
  });

  for (const [what, name] of [['HEAD', 'HEAD'], ['a branch commit', 'main'], ['a missing name', 'no-such-thing'], ['an option-like name', '--output=x'], ['a dash name', '-x'], ['a range', 'HEAD~1..HEAD'], ['a tree', 'HEAD^{tree}']] as const) {
    it(`refuses ${what} as the snapshot with wip-snapshot-unknown`, async () => {
      const dir = makeRepo();
      await new WipStore({ cwd: dir }).save({});
      writeFiles(dir, { 'x.txt': 'x\n' });
      await refuses(dir, () => new WipStore({ cwd: dir }).restore({ snapshot: name }), 'wip-snapshot-unknown');
    });
  }

  it('never lets a snapshot name act as a git option', async () => {
    const dir = makeRepo();
    await new WipStore({ cwd: dir }).save({});
    const before = stateOf(dir);
    await assert.rejects(new WipStore({ cwd: dir }).restore({ snapshot: `--output=${dir}/written-by-git` }), (error) => isWipError(error, 'wip-snapshot-unknown'));
    assert.deepEqual(stateOf(dir), before);
  });

  it('refuses a snapshot of another branch with wip-branch-other', async () => {
    const dir = makeRepo();
    writeFiles(dir, { 'x.txt': 'on main\n' });
    const onMain = await new WipStore({ cwd: dir }).save({});
    git(dir, ['stash', '-u', '-q']);
    git(dir, ['checkout', '-q', '-b', 'other']);
    writeFiles(dir, { 'y.txt': 'y\n' });
    await refuses(dir, () => new WipStore({ cwd: dir }).restore({ snapshot: onMain.snapshot.commit }), 'wip-branch-other', /main/);
  });

  it('says so when the snapshot\'s branch is gone (renamed, loose or packed), with advice that works: make it again where the snapshot\'s HEAD was', async () => {
    for (const packed of [false, true]) {
      const dir = makeRepo();
      writeFiles(dir, { 'x.txt': 'saved on main\n' });
      const onMain = await new WipStore({ cwd: dir }).save({});
      if (packed) git(dir, ['pack-refs', '--all']);
      git(dir, ['branch', '-m', 'main', 'renamed']);
      writeFiles(dir, { 'x.txt': 'later\n' });
      await refuses(dir, () => new WipStore({ cwd: dir }).restore({ snapshot: onMain.snapshot.commit }), 'wip-branch-other', new RegExp(`taken on branch main, not on renamed: that branch no longer exists .*git switch -c main ${onMain.snapshot.head}`));
      git(dir, ['switch', '-q', '-c', 'main', onMain.snapshot.head]);
      await new WipStore({ cwd: dir }).restore({ snapshot: onMain.snapshot.commit });
      assert.equal(readFileSync(join(dir, 'x.txt'), 'utf8'), 'saved on main\n', packed ? 'packed' : 'loose');
    }
    // A branch that is there: the advice is to check it out.
    const dir = makeRepo();
    const onMain = await new WipStore({ cwd: dir }).save({});
    git(dir, ['switch', '-q', '-c', 'other']);
    await refuses(dir, () => new WipStore({ cwd: dir }).restore({ snapshot: onMain.snapshot.commit }), 'wip-branch-other', /not on other: check that branch out to restore it/);
  });

  it('resolves a snapshot by an abbreviated commit', async () => {
    const dir = makeRepo();
    writeFiles(dir, { 'x.txt': 'x\n' });
    const saved = await new WipStore({ cwd: dir }).save({});
    writeFiles(dir, { 'x.txt': 'y\n' });
    const result = await new WipStore({ cwd: dir }).restore({ snapshot: saved.snapshot.commit.slice(0, 10) });
    assert.equal(result.snapshot.commit, saved.snapshot.commit);
  });
});
