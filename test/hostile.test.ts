import { git, runCli, stateOf, tempDir, writeFiles } from './helpers.js';
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { existsSync, lstatSync, mkdirSync, readdirSync, readFileSync, readlinkSync } from 'node:fs';
import { join, relative } from 'node:path';
import { describe, it } from 'node:test';
import { isWipError } from '../lib/errors.js';
import { WipStore } from '../lib/store/wip-store.js';
import { bareRemote } from './remotes.js';

// Snapshots made by hand, as an attacker would: trees holding `..`, `.git`, names too long,
// symlinks out of the working tree and then paths through them. Each is put on the wip ref
// directly and on a remote the checkout fetches from; a restore must never write outside the
// working tree or into the git directory, and a refusal must leave everything as it was.

/** A tree entry: file content, a symlink, a folder, or a raw entry (mode and object id). */
type Spec = { [name: string]: string | { link: string } | { exec: string } | { raw: string; oid: string } | Spec };

function blob(dir: string, content: string | Buffer): string {
  return spawnSync('git', ['hash-object', '-w', '--stdin'], { cwd: dir, input: content, encoding: 'utf8' }).stdout.trim();
}

/** Builds a tree with `git mktree` (which takes `.git`, `..` and long names; `--missing` for absent objects). */
function mktree(dir: string, spec: Spec): string {
  const lines = Object.entries(spec).map(([name, value]) => {
    if (typeof value === 'string') return `100644 blob ${blob(dir, value)}\t${name}`;
    if ('link' in value && typeof value.link === 'string') return `120000 blob ${blob(dir, value.link)}\t${name}`;
    if ('exec' in value && typeof value.exec === 'string') return `100755 blob ${blob(dir, value.exec)}\t${name}`;
    if ('raw' in value && typeof value.raw === 'string') return `${value.raw} ${value.raw === '040000' ? 'tree' : 'blob'} ${value.oid}\t${name}`;
    return `040000 tree ${mktree(dir, value as Spec)}\t${name}`;
  });
  return git(dir, ['mktree', '-z', '--missing'], { input: lines.map((line) => `${line}\0`).join('') }).trim();
}

/** A tree object written byte by byte, for entry names mktree refuses (a slash in a name). */
function literalTree(dir: string, entries: ReadonlyArray<[string, string, string]>): string {
  const body = Buffer.concat(entries.map(([mode, name, oid]) => Buffer.concat([Buffer.from(`${mode} ${name}\0`), Buffer.from(oid, 'hex')])));
  return spawnSync('git', ['hash-object', '-t', 'tree', '--literally', '-w', '--stdin'], { cwd: dir, input: body, encoding: 'utf8' }).stdout.trim();
}

/** A commit that reads as a snapshot of `branch`, with the Chant-Wip trailers. */
function snapshotCommit(dir: string, tree: string, branch: string, head: string, parent?: string): string {
  const message = `chant wip: ${branch} (crafted)\n\nChant-Wip-Branch: ${branch}\nChant-Wip-Head: ${head}\nChant-Wip-Kind: save\n`;
  return git(dir, ['commit-tree', ...(parent === undefined ? [] : ['-p', parent]), '-p', head, '-F', '-', tree], { input: message }).trim();
}

/** A checkout inside a folder of its own, with an `outside` folder beside it holding a sentinel. */
function victim(): { box: string; dir: string; outside: string; head: string } {
  const box = tempDir('chant-hostile-');
  const dir = join(box, 'victim');
  const outside = join(box, 'outside');
  mkdirSync(dir);
  writeFiles(outside, { sentinel: 'sentinel\n' });
  git(dir, ['init', '-q', '-b', 'main', '.']);
  writeFiles(dir, {
    'README.md': 'victim\n',
    'chant.workspace.json': JSON.stringify({ members: [{ name: 'app', box: { replicate: { refs: ['wip'], on: [] } } }] }),
  });
  git(dir, ['add', '-A']);
  git(dir, ['commit', '-q', '-m', 'initial']);
  return { box, dir, outside, head: git(dir, ['rev-parse', 'HEAD']).trim() };
}

/** Everything in a folder (recursively), as path -> content or link target. */
function listing(root: string, skip: (path: string) => boolean = () => false): Record<string, string> {
  const out: Record<string, string> = {};
  const walk = (folder: string) => {
    for (const name of readdirSync(folder)) {
      const full = join(folder, name);
      const path = relative(root, full);
      if (skip(path)) continue;
      const stats = lstatSync(full);
      if (stats.isSymbolicLink()) out[path] = `link:${readlinkSync(full)}`;
      else if (stats.isDirectory()) walk(full);
      else out[path] = readFileSync(full).toString('base64');
    }
  };
  walk(root);
  return out;
}

/** The git directory but for what a restore may legitimately write: objects, refs, logs, the index. */
function gitDirListing(dir: string): Record<string, string> {
  // chant's own memos (the identity git gives commits, the folder trees a save built, the blob ids of the files it hashed) are its caches, and the record of the last restore (its checkpoint, which a prune keeps), written by design.
  return listing(join(dir, '.git'), (path) => /^(objects|refs|logs)(\/|$)|^(index|packed-refs|FETCH_HEAD|ORIG_HEAD|chant-identity-memo|chant-tree-memo|chant-hash-cache|chant-last-restore)$/.test(path));
}

const LONG = 'y'.repeat(300);

/** Trees no save could produce, each refused before anything is written. */
function refusedTrees(dir: string): Array<[string, string]> {
  const hi = blob(dir, 'pwned\n');
  const deep: Spec = {};
  let level: Spec = deep;
  for (let i = 0; i < 20; i += 1) {
    const next: Spec = {};
    level[`${'d'.repeat(240)}${i}`] = next;
    level = next;
  }
  level['file.txt'] = 'too deep\n';
  return [
    ['a .. component', mktree(dir, { 'README.md': 'victim\n', '..': { 'escape.txt': 'pwned\n' } })],
    ['.git/config', mktree(dir, { '.git': { config: '[core]\n\thooksPath = /tmp\n' } })],
    ['.GIT/hooks/x', mktree(dir, { '.GIT': { hooks: { 'post-checkout': { exec: '#!/bin/sh\necho pwned\n' } } } })],
    ['a nested sub/.git/hooks', mktree(dir, { sub: { '.git': { hooks: { 'pre-commit': { exec: '#!/bin/sh\n' } } } } })],
    ['a .git symlink', mktree(dir, { '.git': { link: '/tmp' } })],
    ['the NTFS name git~1', mktree(dir, { 'git~1': { config: 'x\n' } })],
    ['.git. with a trailing dot', mktree(dir, { '.git.': { config: 'x\n' } })],
    ['a .gitmodules symlink', mktree(dir, { '.gitmodules': { link: '../outside/sentinel' } })],
    ['a 300-byte name', mktree(dir, { 'README.md': 'victim\n', 'first.txt': 'written first?\n', folder: { [LONG]: 'long\n' } })],
    ['a 260-byte name in 130 characters', mktree(dir, { ['é'.repeat(130)]: 'long\n' })],
    ['a path over 4096 bytes', mktree(dir, deep)],
    ['a missing object', mktree(dir, { 'first.txt': 'written first?\n', 'gone.txt': { raw: '100644', oid: '1'.repeat(40) } })],
    ['a file whose content is a tree', literalTree(dir, [['100644', 'first.txt', blob(dir, 'x\n')], ['100644', 'odd.txt', mktree(dir, { inner: 'x\n' })]])],
    ['a symlink target of 5000 bytes', mktree(dir, { 'first.txt': 'x\n', link: { link: 'a'.repeat(5000) } })],
    ['one name as a symlink and a folder', literalTree(dir, [['120000', 'a', blob(dir, '../outside')], ['40000', 'a', mktree(dir, { x: 'pwned\n' })]])],
    ['a slash inside an entry name', literalTree(dir, [['100644', 'a/../../escape.txt', hi]])],
  ];
}

/** Pairs of snapshots: a symlink out of the working tree, then a path through it. */
function symlinkThenPath(dir: string, outside: string): Array<[string, string, string, string]> {
  return [
    ['a relative symlink out', mktree(dir, { 'README.md': 'victim\n', a: { link: '../outside' } }), mktree(dir, { 'README.md': 'victim\n', a: { x: 'pwned\n', sentinel: 'overwritten\n' } }), 'a'],
    ['an absolute symlink out', mktree(dir, { 'README.md': 'victim\n', abs: { link: outside } }), mktree(dir, { 'README.md': 'victim\n', abs: { x: 'pwned\n', sentinel: 'overwritten\n' } }), 'abs'],
    ['a symlink to ..', mktree(dir, { 'README.md': 'victim\n', up: { link: '..' } }), mktree(dir, { 'README.md': 'victim\n', up: { outside: { x: 'pwned\n' } } }), 'up'],
    ['a symlink into .git', mktree(dir, { 'README.md': 'victim\n', g: { link: '.git' } }), mktree(dir, { 'README.md': 'victim\n', g: { config: '[core]\n\tbare = true\n', hooks: { 'post-checkout': { exec: '#!/bin/sh\necho pwned\n' } } } }), 'g'],
  ];
}

/** Asserts a restore is refused as a crafted snapshot and that nothing at all changed. */
async function refusedWhole(v: { dir: string; outside: string }, restore: () => Promise<unknown>, what: string): Promise<void> {
  const before = { state: stateOf(v.dir), gitDir: gitDirListing(v.dir), outside: listing(v.outside) };
  await assert.rejects(restore(), (error) => {
    assert.ok(isWipError(error, 'wip-snapshot-unknown'), `${what}: ${String(error)}`);
    assert.match(error.message, /not one chant took and nothing was changed/);
    return true;
  });
  assert.deepEqual(stateOf(v.dir), before.state, `${what}: working tree, index and refs unchanged`);
  assert.deepEqual(gitDirListing(v.dir), before.gitDir, `${what}: nothing written into the git directory`);
  assert.deepEqual(listing(v.outside), before.outside, `${what}: nothing written outside`);
  assert.equal(existsSync(join(v.dir, '..', 'escape.txt')), false);
}

/** Asserts a restore went through without writing outside or into the git directory. */
async function restoredInside(v: { dir: string; outside: string }, restore: () => Promise<unknown>, what: string): Promise<void> {
  const before = { gitDir: gitDirListing(v.dir), outside: listing(v.outside) };
  await restore();
  assert.deepEqual(listing(v.outside), before.outside, `${what}: nothing written outside`);
  assert.deepEqual(gitDirListing(v.dir), before.gitDir, `${what}: nothing written into the git directory`);
}

describe('hostile snapshots', () => {
  it('refuses crafted trees on the local wip ref before anything is written, checkpoint included', async (t) => {
    const v = victim();
    const store = new WipStore({ cwd: v.dir });
    writeFiles(v.dir, { 'work.txt': 'unsaved work\n' });
    const cases = refusedTrees(v.dir);
    for (const [what, tree] of cases) {
      const commit = snapshotCommit(v.dir, tree, 'main', v.head);
      git(v.dir, ['update-ref', 'refs/chant/wip/main', commit]);
      await refusedWhole(v, () => store.restore({}), `${what} (latest)`);
      await refusedWhole(v, () => store.restore({ snapshot: commit }), `${what} (by commit)`);
    }
    const cli = await runCli(v.dir, ['workspace', 'wip', 'restore']);
    assert.equal(cli.code, 1);
    assert.equal(cli.doc.error.code, 'wip-snapshot-unknown');
    assert.doesNotMatch(cli.stdout + cli.stderr, /\n\s+at /, 'no stack trace');
    t.diagnostic(`${cases.length} crafted trees refused, each as the latest snapshot and by commit`);
  });

  it('restores a symlink out of the working tree as a symlink, and a later path through it as a real folder', async (t) => {
    const v = victim();
    const store = new WipStore({ cwd: v.dir });
    const pairs = symlinkThenPath(v.dir, v.outside);
    for (const [what, first, second, name] of pairs) {
      const one = snapshotCommit(v.dir, first, 'main', v.head);
      const two = snapshotCommit(v.dir, second, 'main', v.head, one);
      git(v.dir, ['update-ref', 'refs/chant/wip/main', two]);
      await restoredInside(v, () => store.restore({ snapshot: one }), `${what}: the symlink`);
      assert.ok(lstatSync(join(v.dir, name)).isSymbolicLink(), `${what}: restored as a symlink`);
      await restoredInside(v, () => store.restore({ snapshot: two }), `${what}: the path through it`);
      assert.ok(lstatSync(join(v.dir, name)).isDirectory(), `${what}: a real folder now`);
      assert.ok(!lstatSync(join(v.dir, name)).isSymbolicLink());
      // Back to the clean checkout for the next pair.
      writeFiles(v.dir, { [name]: null });
    }
    assert.deepEqual(listing(v.outside), { sentinel: Buffer.from('sentinel\n').toString('base64') });
    t.diagnostic(`${pairs.length} symlink-then-path pairs restored inside the working tree`);
  });

  it('refuses a path through a symlink the working tree holds, when the snapshot lists the symlink as well', async () => {
    const v = victim();
    const store = new WipStore({ cwd: v.dir });
    // The symlink is in the working tree (and so in its tree); the crafted tree has it and a path under it.
    const link = mktree(v.dir, { 'README.md': 'victim\n', a: { link: '../outside' } });
    git(v.dir, ['update-ref', 'refs/chant/wip/main', snapshotCommit(v.dir, link, 'main', v.head)]);
    await store.restore({});
    const both = literalTree(v.dir, [
      ['100644', 'README.md', blob(v.dir, 'victim\n')],
      ['120000', 'a', blob(v.dir, '../outside')],
      ['40000', 'a', mktree(v.dir, { x: 'pwned\n' })],
    ]);
    const before = { state: stateOf(v.dir), outside: listing(v.outside) };
    await assert.rejects(store.restore({ snapshot: snapshotCommit(v.dir, both, 'main', v.head) }), (error) => isWipError(error) && ['wip-restore-blocked', 'wip-snapshot-unknown'].includes(error.code));
    assert.deepEqual(stateOf(v.dir), before.state);
    assert.deepEqual(listing(v.outside), before.outside);
  });

  it('fails the fetch of crafted trees with git\'s object checks, and refuses or safely restores what passes them', async (t) => {
    const v = victim();
    const attacker = join(v.box, 'attacker');
    git(v.box, ['clone', '-q', v.dir, attacker]);
    const remote = bareRemote(join(v.box, 'remote.git'));
    git(v.dir, ['remote', 'add', 'origin', remote]);
    // Each crafted tree on a remote of its own: one bad object fails the whole fetch.
    let failedFetches = 0;
    let passedChecks = 0;
    for (const [index, [what, tree]] of refusedTrees(attacker).entries()) {
      if (what === 'a missing object') continue; // A pack cannot hold an object that does not exist.
      const branch = `h${index}`;
      const url = bareRemote(join(v.box, `remote-${index}.git`));
      const commit = snapshotCommit(attacker, tree, branch, v.head);
      git(attacker, ['push', '-q', url, `${commit}:refs/chant/wip/${branch}`]);
      git(v.dir, ['remote', 'set-url', 'origin', url]);
      // (A failed fetch may still prune replica refs the new remote lacks: only local refs are compared.)
      const localRefs = () => git(v.dir, ['for-each-ref', 'refs/heads', 'refs/chant/wip']);
      const refs = localRefs();
      const fetched = await runCli(v.dir, ['workspace', 'wip', 'fetch']);
      assert.equal(fetched.code, 0, fetched.stdout);
      if (fetched.doc.failed !== null) {
        failedFetches += 1;
        assert.equal(localRefs(), refs, `${what}: a failed fetch writes no local ref`);
        continue;
      }
      // Past git's checks (a long name, a long symlink target): on the ref now, refused by the restore.
      passedChecks += 1;
      assert.equal(git(v.dir, ['rev-parse', `refs/chant/wip/${branch}`]).trim(), commit);
      git(v.dir, ['checkout', '-q', '-b', branch, 'main']);
      await refusedWhole(v, () => new WipStore({ cwd: v.dir }).restore({}), `${what} (fetched)`);
      git(v.dir, ['checkout', '-q', 'main']);
    }
    assert.ok(failedFetches >= 8, `${failedFetches} fetches failed`);
    // Symlink pairs pass git's checks: fetched, then restored inside the working tree.
    git(v.dir, ['remote', 'set-url', 'origin', remote]);
    const pairs = symlinkThenPath(attacker, v.outside);
    for (const [index, [, first, second]] of pairs.entries()) {
      const branch = `pair${index}`;
      const one = snapshotCommit(attacker, first, branch, v.head);
      git(attacker, ['push', '-q', remote, `${snapshotCommit(attacker, second, branch, v.head, one)}:refs/chant/wip/${branch}`]);
    }
    const fetched = await runCli(v.dir, ['workspace', 'wip', 'fetch']);
    assert.equal(fetched.doc.failed, null, JSON.stringify(fetched.doc));
    assert.equal(fetched.doc.refs.length, pairs.length);
    for (const [index, [what, , , name]] of pairs.entries()) {
      const branch = `pair${index}`;
      git(v.dir, ['checkout', '-q', '-b', branch, 'main']);
      const store = new WipStore({ cwd: v.dir });
      const tip = git(v.dir, ['rev-parse', `refs/chant/wip/${branch}`]).trim();
      await restoredInside(v, () => store.restore({ snapshot: `${tip}^` }), `${what} (fetched): the symlink`);
      await restoredInside(v, () => store.restore({ snapshot: tip }), `${what} (fetched): the path through it`);
      assert.ok(lstatSync(join(v.dir, name)).isDirectory());
      writeFiles(v.dir, { [name]: null });
      git(v.dir, ['checkout', '-q', 'main']);
    }
    assert.deepEqual(listing(v.outside), { sentinel: Buffer.from('sentinel\n').toString('base64') });
    t.diagnostic(`over a remote: ${failedFetches} fetches failed git's object checks, ${passedChecks} crafted trees passed them and were refused by the restore, ${pairs.length} symlink pairs restored inside`);
  });
});
