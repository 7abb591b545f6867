import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { copyFileSync, readdirSync, readFileSync, statSync } from 'node:fs';
import { join } from 'node:path';
import { describe, it } from 'node:test';
import { assertRefusal, assertValidDocument, git, makeRepo, runBin, runCli, stateOf, tempDir, writeFiles, ROOT } from './helpers.js';
import { WipStore } from '../lib/store/wip-store.js';

const WRITE_ID = 'https://intentius.io/chant/schemas/workspace/wip-write/v1/wip-write.schema.json';
const READ_ID = 'https://intentius.io/chant/schemas/workspace/wip/v1/wip.schema.json';
const STORAGE_ID = 'https://intentius.io/chant/schemas/workspace/wip-storage/v1/wip-storage.schema.json';
const CHANGES_ID = 'https://intentius.io/chant/schemas/workspace/wip-changes/v1/wip-changes.schema.json';

describe('the chant CLI', () => {
  it('saves, lists and restores, each printing a document that validates against ours and the reference schemas', async () => {
    const dir = makeRepo();
    writeFiles(dir, { 'a.txt': 'one\n' });
    const save = await runCli(dir, ['workspace', 'wip', 'save', '--label', 'turn:7', '--by', 'github:alex', '--json']);
    assert.equal(save.code, 0, save.stdout);
    assert.equal(save.doc.$schema, WRITE_ID);
    assert.equal(save.doc.action, 'save');
    assert.equal(save.doc.created, true);
    assert.equal(save.doc.replication, null);
    assert.deepEqual(Object.keys(save.doc), ['$schema', 'contract', 'chant', 'action', 'branch', 'ref', 'created', 'snapshot', 'replication']);
    await assertValidDocument(save.doc);

    const plain = await runCli(dir, ['workspace', 'wip', 'save', '--label', 'turn:7', '--by', 'github:alex']);
    assert.equal(plain.code, 0);
    assert.equal(plain.doc.created, false, 'a write prints its document without --json too');

    const read = await runCli(dir, ['workspace', 'wip', '--json']);
    assert.equal(read.code, 0);
    assert.equal(read.doc.$schema, READ_ID);
    assert.equal(read.doc.checkout.branch, 'main');
    assert.equal(read.doc.branches[0].snapshots[0].label, 'turn:7');
    assert.equal(read.doc.replication, null);
    await assertValidDocument(read.doc);

    writeFiles(dir, { 'a.txt': 'two\n' });
    const restore = await runCli(dir, ['workspace', 'wip', 'restore', save.doc.snapshot.commit, '--by', 'github:alex']);
    assert.equal(restore.code, 0, restore.stdout);
    assert.equal(restore.doc.action, 'restore');
    assert.deepEqual(restore.doc.paths, ['a.txt']);
    assert.equal(readFileSync(join(dir, 'a.txt'), 'utf8'), 'one\n');
    await assertValidDocument(restore.doc);
  });

  it('shows a snapshot, diffs two and a snapshot against the working tree, and pages the read with its change counts', async () => {
    const CHANGES_ID = 'https://intentius.io/chant/schemas/workspace/wip-changes/v1/wip-changes.schema.json';
    const dir = makeRepo({ 'a.txt': 'one\n' });
    writeFiles(dir, { 'a.txt': 'one\ntwo\n' });
    const first = (await runCli(dir, ['workspace', 'wip', 'save', '--label', 'turn:1'])).doc.snapshot.commit;
    writeFiles(dir, { 'a.txt': 'two\n', 'b.txt': 'b\n' });
    const second = (await runCli(dir, ['workspace', 'wip', 'save', '--label', 'turn:2'])).doc.snapshot.commit;

    const show = await runCli(dir, ['workspace', 'wip', 'show', second]);
    assert.equal(show.code, 0, show.stdout);
    assert.equal(show.doc.$schema, CHANGES_ID);
    assert.equal(show.doc.action, 'show');
    assert.equal(show.doc.snapshot.commit, second);
    assert.deepEqual(show.doc.files.map((file: { path: string }) => file.path), ['a.txt', 'b.txt']);
    assert.deepEqual({ files: show.doc.changes.files, added: show.doc.changes.added, removed: show.doc.changes.removed }, { files: 2, added: 1, removed: 1 });
    await assertValidDocument(show.doc, { oursOnly: true }); // this project's own document

    const diff = await runCli(dir, ['workspace', 'wip', 'diff', first, second, '--json']);
    assert.equal(diff.code, 0, diff.stdout);
    assert.equal(diff.doc.action, 'diff');
    assert.deepEqual(diff.doc.paths.map((p: { path: string; change: string }) => [p.path, p.change]), [['a.txt', 'modified'], ['b.txt', 'added']]);
    await assertValidDocument(diff.doc, { oursOnly: true }); // this project's own document
    writeFiles(dir, { 'c.txt': 'c\n' });
    const working = await runCli(dir, ['workspace', 'wip', 'diff', second]);
    assert.equal(working.doc.to.commit, null, 'no <b>: the working tree');
    assert.deepEqual(working.doc.paths.map((p: { path: string }) => p.path), ['c.txt']);
    await assertValidDocument(working.doc, { oursOnly: true }); // this project's own document

    const unknown = await runCli(dir, ['workspace', 'wip', 'show', 'HEAD']);
    assert.equal(unknown.code, 1);
    assert.equal(unknown.doc.error.code, 'wip-snapshot-unknown');
    await assertValidDocument(unknown.doc, { oursOnly: true }); // this project's own document

    const page = await runCli(dir, ['workspace', 'wip', '--json', '--changes', '--limit', '1']);
    assert.deepEqual(page.doc.branches[0].snapshots.map((snapshot: { commit: string }) => snapshot.commit), [second]);
    assert.equal(page.doc.branches[0].snapshots[0].changes.files, 2);
    assert.equal(page.doc.branches[0].older, 1);
    await assertValidDocument(page.doc);
    const back = await runCli(dir, ['workspace', 'wip', '--json', '--limit', '1', '--before', second]);
    assert.deepEqual(back.doc.branches[0].snapshots.map((snapshot: { commit: string }) => snapshot.commit), [first]);
    assert.equal(back.doc.branches[0].snapshots[0].changes, undefined, 'change counts only when asked');
    const listing = await runCli(dir, ['workspace', 'wip', '--changes']);
    assert.match(listing.stdout, /turn:2 {2}2 files \+1 -1/);
  });

  it('prints a listing for people when the read runs without --json', async () => {
    const dir = makeRepo();
    await runCli(dir, ['workspace', 'wip', 'save', '--label', 'turn:1']);
    const read = await runCli(dir, ['workspace', 'wip']);
    assert.equal(read.code, 0);
    assert.equal(read.doc, undefined, 'not JSON');
    assert.match(read.stdout, /^On main at [0-9a-f]{12}\./);
    assert.match(read.stdout, /main: 1 snapshot on refs\/chant\/wip\/main/);
    assert.match(read.stdout, /[0-9a-f]{12} {2}\d{4}-\d\d-\d\d \d\d:\d\d:\d\dZ {2}save {9}turn:1/);
    assert.match(read.stdout, /Replication: no box declares replicate\./);
  });

  it('limits the read to --branch, by exact name', async () => {
    const dir = makeRepo();
    await runCli(dir, ['workspace', 'wip', 'save']);
    git(dir, ['checkout', '-q', '-b', 'chant/work/W-001']);
    await runCli(dir, ['workspace', 'wip', 'save']);
    git(dir, ['checkout', '-q', '-b', 'chant/work/W-001x']);
    await runCli(dir, ['workspace', 'wip', 'save']);
    const all = await runCli(dir, ['workspace', 'wip', '--json']);
    assert.deepEqual(all.doc.branches.map((entry: { branch: string }) => entry.branch), ['chant/work/W-001', 'chant/work/W-001x', 'main']);
    const one = await runCli(dir, ['workspace', 'wip', '--branch', 'chant/work/W-001', '--json']);
    assert.deepEqual(one.doc.branches.map((entry: { branch: string }) => entry.branch), ['chant/work/W-001']);
    const none = await runCli(dir, ['workspace', 'wip', '--branch', 'chant/work', '--json']);
    assert.deepEqual(none.doc.branches, []);
  });

  it('reads a detached HEAD as a null checkout rather than an error', async () => {
    const dir = makeRepo();
    git(dir, ['checkout', '-q', '--detach']);
    const read = await runCli(dir, ['workspace', 'wip', '--json']);
    assert.equal(read.code, 0);
    assert.deepEqual(read.doc.checkout, { branch: null, head: null });
    await assertValidDocument(read.doc);
    const unborn = tempDir();
    git(unborn, ['init', '-q', '-b', 'main', '.']);
    const fresh = await runCli(unborn, ['workspace', 'wip', '--json']);
    assert.deepEqual(fresh.doc.checkout, { branch: 'main', head: null });
  });

  it('prints the read failure document outside a repository, with or without --json', async () => {
    const outside = tempDir();
    for (const args of [['workspace', 'wip', '--json'], ['workspace', 'wip']]) {
      const read = await runCli(outside, args);
      assert.equal(read.code, 1);
      assert.equal(read.doc.$schema, READ_ID);
      assert.equal(read.doc.error.code, 'not-a-git-repository');
      await assertValidDocument(read.doc);
    }
  });

  for (const [what, args, action] of [
    ['an unknown verb', ['workspace', 'wip', 'frob'], null],
    ['--branch with a verb', ['workspace', 'wip', 'save', '--branch', 'main'], 'save'],
    ['a positional on save', ['workspace', 'wip', 'save', 'extra'], 'save'],
    ['--label on restore', ['workspace', 'wip', 'restore', '--label', 'x'], 'restore'],
    ['a positional on push', ['workspace', 'wip', 'push', 'extra'], 'push'],
    ['an option-like snapshot without --', ['workspace', 'wip', 'restore', '--output=x'], 'restore'],
    ['a missing option value', ['workspace', 'wip', 'save', '--label'], 'save'],
    ['a partial command', ['workspace'], null],
    ['a missing option value on prune', ['workspace', 'wip', 'prune', '--keep-last'], 'prune'],
    ['an unknown option on storage', ['workspace', 'wip', 'storage', '--keep-last', '3'], 'storage'],
    ['show without its snapshot', ['workspace', 'wip', 'show'], 'show'],
    ['an unknown option on diff', ['workspace', 'wip', 'diff', 'HEAD', '--label', 'x'], 'diff'],
  ] as const) {
    it(`answers ${what} with a write-usage-invalid document and writes nothing`, async () => {
      const dir = makeRepo();
      const before = stateOf(dir);
      const run = await runCli(dir, args);
      assert.equal(run.code, 1);
      assert.equal(run.doc.error.code, 'write-usage-invalid', run.stdout);
      assert.equal(run.doc.action, action);
      const own = action === 'storage' || action === 'prune' ? STORAGE_ID : action === 'show' || action === 'diff' ? CHANGES_ID : WRITE_ID;
      assert.equal(run.doc.$schema, own, 'the verb\'s own document names it');
      assert.doesNotMatch(run.doc.error.message, /\n/);
      // The storage and changes documents are this project's own: the reference has no schema of them.
      await assertValidDocument(run.doc, { oursOnly: run.doc.$schema !== WRITE_ID });
      assert.deepEqual(stateOf(dir), before);
    });
  }

  for (const [args, message] of [
    [['workspace', 'wip', 'diff', 'a', 'b', 'c'], /^chant workspace wip diff takes at most 2 positional arguments \(<a> \[<b>\]\); "c" is one too many; see chant --help$/],
    [['workspace', 'wip', 'show', 'a', 'b'], /^chant workspace wip show takes at most 1 positional argument \(<snapshot>\); "b" is one too many; see chant --help$/],
    [['workspace', 'wip', 'save', 'extra'], /^chant workspace wip save takes no positional argument; it was given "extra"; see chant --help$/],
    [['workspace', 'wip', 'show'], /^chant workspace wip show needs <snapshot>; see chant --help$/],
    [['workspace', 'wip', 'diff', '--json'], /^chant workspace wip diff needs <a>; see chant --help$/],
    [['workspace', 'wip', 'save', '--json', '--label', '-1'], /^--label needs a value, and "-1" after it is read as an option, not as its value: give a value that starts with - as --label=<value>; see chant --help$/],
    [['workspace', 'wip', 'save', '--by', '--json'], /^--by needs a value, and "--json" after it is read as an option, not as its value: give a value that starts with - as --by=<value>; see chant --help$/],
    [['workspace', 'wip', 'save', '--json', '--label'], /^--label needs a value; see chant --help$/],
  ] as const) {
    it(`says what ${args.slice(2).join(' ')} takes, in its own words rather than the parser's`, async () => {
      const run = await runCli(makeRepo(), args);
      assert.equal(run.code, 1);
      assert.equal(run.doc.error.code, 'write-usage-invalid', run.stdout);
      assert.match(run.doc.error.message, message);
    });
  }

  it('refuses an empty --branch, which names no branch, rather than reading or pruning every chain', async () => {
    const dir = makeRepo();
    await runCli(dir, ['workspace', 'wip', 'save']);
    const before = stateOf(dir);
    for (const args of [['workspace', 'wip', '--branch', '', '--json'], ['workspace', 'wip', '--branch', 'refs/heads/'], ['workspace', 'wip', 'storage', '--branch', ''], ['workspace', 'wip', 'prune', '--branch', '', '--keep-last', '1']]) {
      const run = await runCli(dir, args);
      assert.equal(run.code, 1, `${JSON.stringify(args)}: ${run.stdout}`);
      assert.equal(run.doc.error.code, 'write-usage-invalid', run.stdout);
      assert.match(run.doc.error.message, /^--branch must name a branch/);
    }
    const store = new WipStore({ cwd: dir });
    for (const call of [() => store.list({ branch: '' }), () => store.storage({ branch: '' }), () => store.prune({ branch: '', keepLast: 1 })]) {
      await assertRefusal(call, 'write-usage-invalid', /^branch must name a branch/);
    }
    assert.deepEqual(stateOf(dir), before, 'nothing was pruned');
  });

  it('names --before and --expect, as typed, when their values are not a commit id or a fingerprint', async () => {
    const dir = makeRepo();
    const before = await runCli(dir, ['workspace', 'wip', '--before', 'abc', '--json']);
    assert.equal(before.doc.error.code, 'write-usage-invalid', before.stdout);
    assert.match(before.doc.error.message, /^--before /);
    const expect = await runCli(dir, ['workspace', 'wip', 'restore', '--expect', 'zzz']);
    assert.equal(expect.doc.error.code, 'write-usage-invalid', expect.stdout);
    assert.match(expect.doc.error.message, /^--expect /);
    const order = await runCli(dir, ['workspace', 'wip', 'restore', '--expect', 'zzz', '--by', 'a\nb']);
    assert.match(order.doc.error.message, /^--by /, 'the --by value is checked first, as the SDK checks it');
  });

  it('takes an option-like snapshot name after -- as a name, never an option', async () => {
    const dir = makeRepo();
    await runCli(dir, ['workspace', 'wip', 'save']);
    const run = await runCli(dir, ['workspace', 'wip', 'restore', '--', '-x']);
    assert.equal(run.code, 1);
    assert.equal(run.doc.error.code, 'wip-snapshot-unknown');
    await assertValidDocument(run.doc);
  });

  it('prints refusals as documents with their code and exit 1', async () => {
    const dir = makeRepo();
    git(dir, ['checkout', '-q', '--detach']);
    const save = await runCli(dir, ['workspace', 'wip', 'save', '--json']);
    assert.equal(save.code, 1);
    assert.deepEqual(Object.keys(save.doc), ['$schema', 'contract', 'chant', 'action', 'error']);
    assert.equal(save.doc.error.code, 'wip-no-branch');
    await assertValidDocument(save.doc);
    const bad = await runCli(dir, ['workspace', 'wip', 'save', '--label', 'a\u202eb']);
    assert.equal(bad.doc.error.code, 'write-usage-invalid');
  });

  it('answers --help, a verb --help and --version', async () => {
    const dir = makeRepo();
    const help = await runCli(dir, ['--help']);
    assert.equal(help.code, 0);
    assert.match(help.stdout, /chant workspace wip save/);
    const verb = await runCli(dir, ['workspace', 'wip', 'save', '--help']);
    assert.equal(verb.code, 0);
    assert.match(verb.stdout, /--label/);
    const version = await runCli(dir, ['--version']);
    assert.equal(version.code, 0);
    assert.equal(version.stdout.trim(), JSON.parse(readFileSync(join(ROOT, 'package.json'), 'utf8')).version);
  });

  it('runs end to end as the built chant bin', () => {
    const dir = makeRepo();
    writeFiles(dir, { 'a.txt': 'bin\n' });
    const save = runBin(dir, ['workspace', 'wip', 'save', '--label', 'turn:1', '--json']);
    assert.equal(save.code, 0, save.stderr);
    assert.equal(save.doc.snapshot.label, 'turn:1');
    assert.equal(save.stderr, '');
    writeFiles(dir, { 'a.txt': 'changed\n' });
    const restore = runBin(dir, ['workspace', 'wip', 'restore', '--json']);
    assert.equal(restore.code, 0, restore.stderr);
    assert.equal(readFileSync(join(dir, 'a.txt'), 'utf8'), 'bin\n');
    const read = runBin(dir, ['workspace', 'wip', '--json']);
    assert.equal(read.doc.branches[0].snapshots.length, 2);
    const usage = runBin(dir, ['workspace', 'wip', 'nope']);
    assert.equal(usage.code, 1);
    assert.equal(usage.doc.error.code, 'write-usage-invalid');
    assert.equal(runBin(dir, ['--version']).code, 0);
  });

  it('writes, as an installed bin, the code cache of each verb after its first run, and reads it after without writing it again', () => {
    // The package holds the bin and its bundle without caches (a cache differs from build to build).
    const bin = tempDir();
    for (const name of readdirSync(join(ROOT, 'dist', 'bin'))) if (name.endsWith('.cjs')) copyFileSync(join(ROOT, 'dist', 'bin', name), join(bin, name));
    const dir = makeRepo();
    const run = (args: string[]) => {
      const result = spawnSync(process.execPath, [join(bin, 'chant.cjs'), ...args], { cwd: dir, encoding: 'utf8' });
      assert.equal(result.status, 0, result.stderr);
      return result;
    };
    const caches = () => readdirSync(bin).filter((name) => name.endsWith('.v8cache')).sort();
    writeFiles(dir, { 'a.txt': 'one\n' });
    run(['workspace', 'wip', 'save', '--label', 'turn:1', '--json']);
    assert.deepEqual(caches(), ['main.cjs.save.v8cache']);
    run(['workspace', 'wip', '--json']);
    assert.deepEqual(caches(), ['main.cjs.read.v8cache', 'main.cjs.save.v8cache']);
    const written = statSync(join(bin, 'main.cjs.save.v8cache')).ino;
    writeFiles(dir, { 'a.txt': 'two\n' });
    const again = JSON.parse(run(['workspace', 'wip', 'save', '--label', 'turn:2', '--json']).stdout);
    assert.equal(again.snapshot.label, 'turn:2');
    // A cache V8 rejected would be written again, under a new file renamed over the old.
    assert.equal(statSync(join(bin, 'main.cjs.save.v8cache')).ino, written, 'the save read its cache and left it as it was');
    assert.deepEqual(caches(), ['main.cjs.read.v8cache', 'main.cjs.save.v8cache']);
  });
});
