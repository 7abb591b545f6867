import assert from 'node:assert/strict';
import { appendFileSync, statSync } from 'node:fs';
import { join } from 'node:path';
import { describe, it } from 'node:test';
import { GitProcessRunner } from '../lib/git/runner.js';
import type { GitRunner } from '../lib/git/runner.js';
import { commitContent, commitIdents, keptAsUtf8 } from '../lib/git/formats/commit.js';
import { objectId } from '../lib/git/formats/loose.js';
import { IDENTITY_MEMO_FILE } from '../lib/managers/identity-memo.js';
import { WipStore } from '../lib/store/wip-store.js';
import { git, makeRepo, writeFiles } from './helpers.js';
import { existsSync } from 'node:fs';

// A snapshot's commit is written without a process once git has written one under the same
// identity inputs: these hold it to the bytes `git commit-tree` writes for the same tree,
// parents, dates and message, whatever the configuration says of encodings and signing.

/** A git runner that notes each command it runs. */
function counting(cwd: string): GitRunner & { calls: string[] } {
  const inner = new GitProcessRunner(cwd);
  const calls: string[] = [];
  return { calls, run: (args, options) => (calls.push(args[0] as string), inner.run(args, options)) };
}

/** Waits out the identity memo's settling window after a configuration file changed. */
const settle = () => new Promise((resolve) => setTimeout(resolve, 250));

/** The commit plain `git commit-tree` writes for the same fields as `commit`, as chant always ran it. */
function referenceCommit(dir: string, commit: string): string {
  const raw = git(dir, ['cat-file', 'commit', commit]);
  const split = raw.indexOf('\n\n');
  const headers = raw.slice(0, split).split('\n');
  const tree = (headers.find((line) => line.startsWith('tree ')) as string).slice(5);
  const parents = headers.filter((line) => line.startsWith('parent ')).map((line) => line.slice(7));
  const seconds = /(\d+) \+0000$/.exec(headers.find((line) => line.startsWith('committer ')) as string)?.[1] as string;
  const message = raw.slice(split + 2);
  return git(dir, ['-c', 'i18n.commitEncoding=UTF-8', 'commit-tree', '--no-gpg-sign', ...parents.flatMap((parent) => ['-p', parent]), '-F', '-', tree], {
    input: message,
    env: { GIT_AUTHOR_DATE: `@${seconds} +0000`, GIT_COMMITTER_DATE: `@${seconds} +0000` },
  }).trim();
}

/** Two saves, the first teaching the memo; what the second ran and wrote. */
async function secondSave(dir: string, label = 'second', staging: 'status' | 'index' = 'index'): Promise<{ calls: string[]; commit: string }> {
  const runner = counting(dir);
  const store = new WipStore({ cwd: dir, policy: null, git: runner, staging });
  await settle();
  writeFiles(dir, { 'a.txt': 'one\n' });
  await store.save({ label: 'first' });
  writeFiles(dir, { 'a.txt': 'two\n' });
  runner.calls.length = 0;
  const saved = await store.save({ label });
  assert.equal(saved.created, true);
  return { calls: [...runner.calls], commit: saved.snapshot.commit };
}

describe('the snapshot commit written without a process', () => {
  for (const staging of ['index', 'status'] as const) {
    it(`writes the commit git would write, without commit-tree, once git has written one (${staging} staging)`, async () => {
      const dir = makeRepo();
      const { calls, commit } = await secondSave(dir, 'second', staging);
      assert.ok(!calls.includes('commit-tree'), calls.join(' '));
      assert.equal(referenceCommit(dir, commit), commit);
      assert.ok(existsSync(join(dir, '.git', IDENTITY_MEMO_FILE)));
      const object = join(dir, '.git', 'objects', commit.slice(0, 2), commit.slice(2));
      assert.equal(statSync(object).mode & 0o777, 0o444);
      git(dir, ['fsck', '--strict', '--no-dangling']);
      assert.equal(git(dir, ['rev-parse', 'refs/chant/wip/main']).trim(), commit);
    });
  }

  it('dates a snapshot taken under a clock set before 1970 at 1970, so git takes it and fsck passes, memo or not', async () => {
    const dir = makeRepo();
    const early = () => new Date(-59_000);
    // No memo yet: git commit-tree refuses the date. Then with the memo: no process to refuse it.
    writeFiles(dir, { 'first.txt': 'first\n' });
    const first = await new WipStore({ cwd: dir, policy: null, clock: early }).save({ label: 'first' });
    writeFiles(dir, { 'second.txt': 'second\n' });
    const second = await new WipStore({ cwd: dir, policy: null, clock: early }).save({ label: 'second' });
    assert.ok(existsSync(join(dir, '.git', IDENTITY_MEMO_FILE)));
    for (const saved of [first, second]) {
      assert.equal(saved.snapshot.at, '1970-01-01T00:00:00.000Z');
      assert.match(git(dir, ['cat-file', 'commit', saved.snapshot.commit]), /^author .* 0 \+0000$/m);
    }
    git(dir, ['fsck', '--strict', '--no-dangling']);
  });

  it('writes the commit git would write in a sha256 repository', async () => {
    const dir = makeRepo({ 'README.md': 'hello\n' }, { initArgs: ['--object-format=sha256'] });
    const { calls, commit } = await secondSave(dir);
    assert.equal(commit.length, 64);
    assert.ok(!calls.includes('commit-tree'), calls.join(' '));
    assert.equal(referenceCommit(dir, commit), commit);
    git(dir, ['fsck', '--strict', '--no-dangling']);
  });

  it('writes the same bytes with a commit encoding, signing and a non-ASCII identity configured', async () => {
    const dir = makeRepo();
    git(dir, ['config', 'i18n.commitEncoding', 'ISO-8859-1']);
    git(dir, ['config', 'commit.gpgSign', 'true']);
    git(dir, ['config', 'gpg.program', 'false']);
    git(dir, ['config', 'user.name', 'Zoë Ångström-Ñ']);
    git(dir, ['config', 'user.email', 'zoë@example.com']);
    const { calls, commit } = await secondSave(dir, 'étiquette ✓ 🎉');
    assert.ok(!calls.includes('commit-tree'), calls.join(' '));
    assert.equal(referenceCommit(dir, commit), commit);
    assert.doesNotMatch(git(dir, ['cat-file', 'commit', commit]), /^(encoding|gpgsig) /m);
  });

  it('copies an identity that is not UTF-8 byte for byte', async () => {
    const dir = makeRepo();
    appendFileSync(join(dir, '.git', 'config'), Buffer.concat([Buffer.from('[user]\n\tname = Zo'), Buffer.from([0xeb]), Buffer.from('\n')]));
    const { calls, commit } = await secondSave(dir);
    assert.ok(!calls.includes('commit-tree'), calls.join(' '));
    assert.equal(referenceCommit(dir, commit), commit);
  });

  it('hands git a message it would rewrite (a noncharacter), and records what git wrote', async () => {
    const dir = makeRepo();
    const { calls, commit } = await secondSave(dir, 'odd \uFFFE here');
    assert.ok(calls.includes('commit-tree'), calls.join(' '));
    assert.equal(referenceCommit(dir, commit), commit);
  });

  it('asks git again when the identity changes: a configuration file, or the environment', async () => {
    const dir = makeRepo();
    await secondSave(dir);
    git(dir, ['config', 'user.name', 'Someone Else']);
    await settle();
    const runner = counting(dir);
    const store = new WipStore({ cwd: dir, policy: null, git: runner, staging: 'index' });
    writeFiles(dir, { 'a.txt': 'three\n' });
    const third = (await store.save({ label: 'third' })).snapshot.commit;
    assert.ok(runner.calls.includes('commit-tree'), runner.calls.join(' '));
    assert.match(git(dir, ['cat-file', 'commit', third]), /^author Someone Else </m);
    const saved = process.env.GIT_AUTHOR_NAME;
    process.env.GIT_AUTHOR_NAME = 'From The Environment';
    try {
      writeFiles(dir, { 'a.txt': 'four\n' });
      runner.calls.length = 0;
      const fourth = (await store.save({ label: 'fourth' })).snapshot.commit;
      assert.ok(runner.calls.includes('commit-tree'), runner.calls.join(' '));
      assert.match(git(dir, ['cat-file', 'commit', fourth]), /^author From The Environment </m);
      assert.match(git(dir, ['cat-file', 'commit', fourth]), /^committer Someone Else </m);
    } finally {
      if (saved === undefined) delete process.env.GIT_AUTHOR_NAME;
      else process.env.GIT_AUTHOR_NAME = saved;
    }
    // The memo holds one identity: the environment's own is back, and git tells it once more.
    writeFiles(dir, { 'a.txt': 'five\n' });
    const fifth = (await store.save({ label: 'fifth' })).snapshot.commit;
    assert.match(git(dir, ['cat-file', 'commit', fifth]), /^author Someone Else </m);
    writeFiles(dir, { 'a.txt': 'six\n' });
    runner.calls.length = 0;
    const sixth = (await store.save({ label: 'sixth' })).snapshot.commit;
    assert.ok(!runner.calls.includes('commit-tree'), runner.calls.join(' '));
    assert.equal(referenceCommit(dir, sixth), sixth);
  });

  it('never trusts the memo where a configuration file includes another', async () => {
    const dir = makeRepo();
    git(dir, ['config', 'include.path', join(dir, '.git', 'more.config')]);
    const { calls, commit } = await secondSave(dir);
    assert.ok(calls.includes('commit-tree'), calls.join(' '));
    assert.equal(referenceCommit(dir, commit), commit);
    assert.ok(!existsSync(join(dir, '.git', IDENTITY_MEMO_FILE)));
  });

  it('builds and reads commit objects as git does', () => {
    const fields = { tree: 'a'.repeat(40), parents: ['b'.repeat(40), 'c'.repeat(40)], author: Buffer.from('A <a@x>'), committer: Buffer.from('C <c@x>'), seconds: 1_790_000_000, message: Buffer.from('m\n\nK: v\n') };
    const content = commitContent(fields);
    assert.equal(content.toString('latin1'), `tree ${'a'.repeat(40)}\nparent ${'b'.repeat(40)}\nparent ${'c'.repeat(40)}\nauthor A <a@x> 1790000000 +0000\ncommitter C <c@x> 1790000000 +0000\n\nm\n\nK: v\n`);
    assert.deepEqual(commitIdents(content), { author: fields.author, committer: fields.committer });
    assert.equal(objectId('blob', Buffer.from('hello\n'), 'sha1'), 'ce013625030ba8dba906f756967f9e9ca394464a');
    assert.ok(keptAsUtf8(Buffer.from('plain ✓ 🎉 é')));
    for (const bad of [[0xc3], [0xc0, 0x80], [0xed, 0xa0, 0x80], [0xef, 0xbf, 0xbe], [0xef, 0xb7, 0x90], [0xf4, 0x90, 0x80, 0x80], [0xeb]]) {
      assert.equal(keptAsUtf8(Buffer.from(bad)), false, Buffer.from(bad).toString('hex'));
    }
  });
});
