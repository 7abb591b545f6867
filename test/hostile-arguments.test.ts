import { assertRefusal, assertValidDocument, BIN, git, makeRepo, parseDocument, runCli, stateOf, treeOf, writeFiles } from './helpers.js';
import { spawnSync } from 'node:child_process';
import assert from 'node:assert/strict';
import { existsSync, readdirSync } from 'node:fs';
import { join } from 'node:path';
import { describe, it } from 'node:test';
import { isWipError } from '../lib/errors.js';
import { WipStore } from '../lib/store/wip-store.js';
import { Policy } from '../lib/replication/policy.js';
import { Replicator } from '../lib/replication/replicator.js';

// Arguments as an attacker or a confused script passes them: option-like names, control and
// bidirectional characters, huge values, branches named like options or like tags. Each must be
// a document with a code, never an option handed to git, never a stack trace.

/** Runs the CLI and checks the refusal: exit 1, the code, a valid document, no stack trace, nothing written. */
async function refusedCli(dir: string, args: readonly string[], code: string): Promise<void> {
  const before = stateOf(dir);
  const files = readdirSync(dir).sort();
  const run = await runCli(dir, args);
  assert.equal(run.code, 1, `${JSON.stringify(args)}: ${run.stdout}`);
  assert.equal(run.doc?.error?.code, code, `${JSON.stringify(args)}: ${run.stdout}`);
  await assertValidDocument(run.doc);
  assert.doesNotMatch(run.stdout + run.stderr, /\n\s+at [^\n]+:\d+:\d+/, 'no stack trace');
  assert.equal(run.stderr, '');
  assert.deepEqual(stateOf(dir), before, `${JSON.stringify(args)}: nothing was written`);
  assert.deepEqual(readdirSync(dir).sort(), files, `${JSON.stringify(args)}: no file appeared (no --output reached git)`);
}

const BAD_TEXT: ReadonlyArray<[string, string]> = [
  ['a bell (C0)', 'turn\u00077'],
  ['an ANSI escape', '\u001b[31mred\u001b[0m'],
  ['a NEL (C1)', 'turn\u00857'],
  ['a CSI (C1)', 'turn\u009b31m'],
  ['a right-to-left override', 'github:alex\u202egpj.exe'],
  ['a left-to-right isolate', 'turn\u20667'],
  ['a right-to-left mark', 'turn\u200f7'],
  ['a line separator', 'turn\u20287'],
  ['10,000 characters', 'x'.repeat(10_000)],
  ['a newline and a forged trailer', 'turn\nChant-Wip-Branch: other'],
];

describe('hostile arguments', () => {
  it('reads restore --output=x as a usage error, and a name after -- as a name that resolves to no snapshot', async () => {
    const dir = makeRepo();
    writeFiles(dir, { 'a.txt': 'a\n' });
    await new WipStore({ cwd: dir }).save({});
    writeFiles(dir, { 'a.txt': 'edited\n' });
    await refusedCli(dir, ['workspace', 'wip', 'restore', '--output=x'], 'write-usage-invalid');
    await refusedCli(dir, ['workspace', 'wip', 'restore', '-x'], 'write-usage-invalid');
    for (const name of ['-x', '--output=x', '--all', '--git-dir', '--exec-path=/tmp', '-c', 'HEAD', 'HEAD~0', 'main..HEAD', '^HEAD', '', 'a\nb', 'refs/chant/wip/main:a.txt']) {
      await refusedCli(dir, ['workspace', 'wip', 'restore', '--', name], 'wip-snapshot-unknown');
    }
  });

  for (const [what, value] of BAD_TEXT) {
    it(`refuses a --label or --by with ${what} as write-usage-invalid, on the CLI and in the SDK`, async () => {
      const dir = makeRepo();
      await new WipStore({ cwd: dir }).save({});
      writeFiles(dir, { 'x.txt': 'x\n' });
      await refusedCli(dir, ['workspace', 'wip', 'save', '--label', value], 'write-usage-invalid');
      await refusedCli(dir, ['workspace', 'wip', 'save', '--by', value], 'write-usage-invalid');
      await refusedCli(dir, ['workspace', 'wip', 'restore', '--by', value], 'write-usage-invalid');
      await assert.rejects(new WipStore({ cwd: dir }).save({ label: value }), (error) => isWipError(error, 'write-usage-invalid'));
    });
  }

  it('reads null options in the SDK as none, and refuses options, a signal, an onProgress, a listener or a clock of the wrong type as write-usage-invalid, never a TypeError', async () => {
    const dir = makeRepo({ 'README.md': 'one\n' });
    const store = new WipStore({ cwd: dir, policy: null });
    const api = store as unknown as Record<string, (...args: unknown[]) => Promise<unknown>>;
    // null is what a JavaScript caller passes for "no options": each method reads it as none.
    writeFiles(dir, { 'a.txt': 'work\n' });
    const saved = await api.save!(null) as { created: boolean; snapshot: { commit: string } };
    assert.equal(saved.created, true);
    for (const method of ['list', 'plan', 'storage']) await api[method]!(null);
    writeFiles(dir, { 'a.txt': 'later\n' });
    const restored = await api.restore!(null) as { snapshot: { commit: string } };
    assert.equal(restored.snapshot.commit, saved.snapshot.commit);
    await assertRefusal(() => api.show!(null), 'write-usage-invalid', /snapshot must name a commit/);
    await assertRefusal(() => api.diff!(undefined), 'write-usage-invalid', /from must name a commit/);
    await assertRefusal(() => api.prune!(null), 'write-usage-invalid', /needs a rule/);
    const before = stateOf(dir);
    for (const method of ['save', 'restore', 'plan', 'list', 'show', 'diff', 'storage', 'prune']) {
      await assertRefusal(() => api[method]!(5), 'write-usage-invalid', new RegExp(`^${method} takes an options object; it was given 5`));
      await assertRefusal(() => api[method]!('turn:1'), 'write-usage-invalid', /takes an options object/);
    }
    // A signal that is no AbortSignal made the save fail as git-failed, then crashed the process
    // with a TypeError thrown where git ended.
    await assertRefusal(() => api.save!({ label: 'turn:2', signal: 5 }), 'write-usage-invalid', /save's signal must be an AbortSignal; it was given 5/);
    await assertRefusal(() => api.restore!({ signal: {} }), 'write-usage-invalid', /restore's signal must be an AbortSignal/);
    await assertRefusal(() => api.save!({ onProgress: 'bar' }), 'write-usage-invalid', /save's onProgress must be a function/);
    await assertRefusal(() => store.watchRefs(null as never), 'write-usage-invalid', /watchRefs takes a listener function/);
    (await store.watchRefs(() => {}, null as never)).close();
    assert.deepEqual(stateOf(dir), before, 'nothing was written');
    // The constructors and the static readers.
    await assertRefusal(() => new WipStore(null as never), 'write-usage-invalid', /WipStore takes an options object with cwd/);
    await assertRefusal(() => new WipStore(undefined as never), 'write-usage-invalid', /WipStore takes an options object with cwd/);
    await assertRefusal(() => new WipStore({ cwd: 5 as never }), 'write-usage-invalid', /WipStore's cwd must be the path of a folder/);
    await assertRefusal(() => new WipStore({ cwd: dir, clock: 5 as never }), 'write-usage-invalid', /WipStore's clock must be a function/);
    await assertRefusal(() => new WipStore({ cwd: dir, policy: null, clock: () => new Date(Number.NaN) }).save({ label: 'turn:3' }), 'write-usage-invalid', /clock must return a valid Date/);
    await assertRefusal(() => new Replicator(null as never), 'write-usage-invalid', /Replicator takes an options object/);
    await assertRefusal(() => Replicator.open(null as never), 'write-usage-invalid', /Replicator.open takes an options object/);
    await assertRefusal(() => Policy.load(null as never), 'write-usage-invalid', /Policy.load takes an options object/);
    const replicator = new Replicator({ cwd: dir, policy: { remote: 'origin', refs: ['wip'] } });
    await assertRefusal(() => replicator.fetch(5 as never), 'write-usage-invalid', /Replicator.fetch takes an options object/);
    await assertRefusal(() => replicator.push({ signal: 'stop' as never }), 'write-usage-invalid', /Replicator.push's signal must be an AbortSignal/);
    assert.deepEqual(stateOf(dir), before, 'nothing was written');
  });

  it('refuses an unpaired surrogate in the SDK, since no commit message could hold it as given', async () => {
    const dir = makeRepo();
    for (const value of ['turn\ud8007', 'end\udc00']) {
      await assert.rejects(new WipStore({ cwd: dir }).save({ label: value }), (error) => isWipError(error, 'write-usage-invalid') && /U\+D[8C]00/.test(error.message));
      await assert.rejects(new WipStore({ cwd: dir }).restore({ by: value }), (error) => isWipError(error, 'write-usage-invalid'));
    }
    const emoji = await new WipStore({ cwd: dir }).save({ label: 'ok 🎉' });
    assert.equal(emoji.snapshot.label, 'ok 🎉', 'a paired surrogate is a character like any other');
  });

  it('refuses a --label or --by whose bytes are not UTF-8, which no commit message could hold as given', { skip: process.platform !== 'linux' && 'the bin reads its raw arguments from /proc/self/cmdline' }, () => {
    const dir = makeRepo();
    writeFiles(dir, { 'work.txt': 'work\n' });
    const before = stateOf(dir);
    // printf writes the octal escapes as raw bytes, which Node reads as U+FFFD.
    for (const [option, words] of [['--label', '--label "$(printf \'turn:\\377\')"'], ['--by', '--by="$(printf \'github:al\\303\')"']] as const) {
      const run = spawnSync('sh', ['-c', `exec "$NODE" "$BIN" workspace wip save ${words}`], { cwd: dir, encoding: 'utf8', env: { ...process.env, NODE: process.execPath, BIN } });
      assert.equal(run.status, 1, run.stdout);
      const doc = parseDocument(run.stdout);
      assert.equal(doc.error.code, 'write-usage-invalid', run.stdout);
      assert.match(doc.error.message, new RegExp(`^${option} is not valid UTF-8`));
      assert.deepEqual(stateOf(dir), before, 'nothing was written');
    }
    // In the order the values are checked: a label refused for a newline comes before a bad --by.
    const both = spawnSync('sh', ['-c', `exec "$NODE" "$BIN" workspace wip save --label "$(printf 'a\\nb')" --by "$(printf 'al\\377')"`], { cwd: dir, encoding: 'utf8', env: { ...process.env, NODE: process.execPath, BIN } });
    assert.match(parseDocument(both.stdout).error.message, /^--label must be one line/, both.stdout);
    const fine = spawnSync(process.execPath, [BIN, 'workspace', 'wip', 'save', '--label', 'caf\u00e9 \ufffd'], { cwd: dir, encoding: 'utf8' });
    assert.equal(fine.status, 0, fine.stdout);
    assert.equal(parseDocument(fine.stdout).snapshot.label, 'caf\u00e9 \ufffd', 'a U+FFFD typed as such is a character like any other');
  });

  it('records option-like labels as given, passing them to git only as message text', async () => {
    const dir = makeRepo();
    writeFiles(dir, { 'a.txt': 'a\n' });
    const run = await runCli(dir, ['workspace', 'wip', 'save', '--label=--output=x', '--by=-c core.pager=touch pwned']);
    assert.equal(run.code, 0, run.stdout);
    assert.equal(run.doc.snapshot.label, '--output=x');
    assert.equal(run.doc.snapshot.by, '-c core.pager=touch pwned');
    assert.equal(existsSync(join(dir, 'x')), false);
    assert.equal(existsSync(join(dir, 'pwned')), false);
  });

  for (const branch of ['-x', '--output=x', 'HEAD', '@']) {
    it(`saves, lists and restores on a branch named ${branch}, which git only takes by its full name`, async () => {
      const dir = makeRepo();
      git(dir, ['update-ref', `refs/heads/${branch}`, 'HEAD']);
      git(dir, ['symbolic-ref', 'HEAD', `refs/heads/${branch}`]);
      writeFiles(dir, { 'a.txt': 'saved\n' });
      const saved = await runCli(dir, ['workspace', 'wip', 'save']);
      assert.equal(saved.code, 0, saved.stdout);
      assert.equal(saved.doc.branch, branch);
      assert.equal(saved.doc.ref, `refs/chant/wip/${branch}`);
      const expected = treeOf(dir);
      writeFiles(dir, { 'a.txt': 'edited\n' });
      const restored = await runCli(dir, ['workspace', 'wip', 'restore']);
      assert.equal(restored.code, 0, restored.stdout);
      assert.deepEqual(treeOf(dir), expected);
      const listed = await runCli(dir, ['workspace', 'wip', '--json', `--branch=${branch}`]);
      assert.equal(listed.doc.branches.length, 1);
      assert.equal(listed.doc.branches[0].snapshots.length, 2, 'the save and the checkpoint');
      assert.equal(listed.doc.checkout.branch, branch);
      assert.deepEqual(readdirSync(dir).sort(), ['.git', 'README.md', 'a.txt'], 'no file named after an option appeared');
    });
  }

  it('takes the branch from its full name when a tag has the same name', async () => {
    const dir = makeRepo({ 'README.md': 'one\n' });
    const first = git(dir, ['rev-parse', 'HEAD']).trim();
    writeFiles(dir, { 'README.md': 'two\n' });
    git(dir, ['commit', '-qam', 'two']);
    const head = git(dir, ['rev-parse', 'HEAD']).trim();
    git(dir, ['tag', 'main', first]);
    writeFiles(dir, { 'a.txt': 'work\n' });
    const saved = await runCli(dir, ['workspace', 'wip', 'save']);
    assert.equal(saved.code, 0, saved.stdout);
    assert.equal(saved.doc.snapshot.head, head, 'the branch\'s commit, not the tag\'s');
    assert.deepEqual(saved.doc.snapshot.branch, 'main');
    writeFiles(dir, { 'a.txt': 'later\n' });
    const restored = await runCli(dir, ['workspace', 'wip', 'restore']);
    assert.equal(restored.code, 0, restored.stdout);
    assert.equal(restored.doc.headMoved, false);
    assert.equal(restored.doc.head, head);
    // The name alone is ambiguous; git takes the tag, whose commit is no snapshot.
    await refusedCli(dir, ['workspace', 'wip', 'restore', 'main'], 'wip-snapshot-unknown');
  });
});
