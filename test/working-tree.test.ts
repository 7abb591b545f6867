import { addAllTree, git, makeRepo, stagedTree, tempDir, writeFiles } from './helpers.js';
import assert from 'node:assert/strict';
import { appendFileSync, chmodSync, existsSync, lstatSync, mkdirSync, readdirSync, readFileSync, rmSync, statSync, symlinkSync, utimesSync, writeFileSync } from 'node:fs';
import { createHash } from 'node:crypto';
import { join } from 'node:path';
import { deflateSync, inflateSync } from 'node:zlib';
import { describe, it } from 'node:test';
import fc from 'fast-check';
import { Plumbing } from '../lib/git/plumbing.js';
import { zlibStored } from '../lib/git/formats/pack.js';
import { SimpleGitRunner } from '../lib/git/runner.js';
import type { GitRunOptions, GitOutput, GitRunner } from '../lib/git/runner.js';
import { planFromParts, readStatus } from '../lib/git/formats/status.js';
import { refusedByObjectChecks } from '../lib/store/tree-paths.js';
import { workingTreeByStatus } from '../lib/store/working-tree.js';
import { attributesElsewhere } from '../lib/git/blob-writer.js';
import { WipStore } from '../lib/store/wip-store.js';
import { DEFAULT_MAX_FILE_SIZE } from '../lib/snapshot/left-out.js';

// A save builds the working tree's tree from `git status` instead of `git add --all` into a
// temporary index. These tests hold the two to the same tree on random index and working tree
// states, and check that the states it hands back to `git add` are the ones it cannot decide.
const SEED = Number(process.env.CHANT_WORKTREE_SEED ?? 20261201);
const RUNS = Number(process.env.CHANT_WORKTREE_RUNS ?? 120);

async function byStatus(dir: string, git_: GitRunner = new SimpleGitRunner(dir), racyMarginMs?: number): Promise<string | null> {
  const plumbing = new Plumbing(git_, dir);
  const { layout, head, replaced } = await plumbing.checkout();
  const built = await workingTreeByStatus(plumbing, layout, head as string, 'refs/chant/wip/main', { maxFileSize: DEFAULT_MAX_FILE_SIZE, replaced, ...(racyMarginMs === undefined ? {} : { racyMarginMs }) });
  return built?.tree ?? null;
}

const PATHS = ['a.txt', 'b.txt', 'dir/c.txt', 'dir/d.txt', 'dir/sub/e.txt', 'dir/sub/f g.txt', 'other/h.txt', 'é/日本.txt'];

type Op =
  | { op: 'write'; path: number; text: string }
  | { op: 'delete'; path: number }
  | { op: 'stage'; path: number }
  | { op: 'unstage-delete'; path: number }
  | { op: 'rm'; path: number }
  | { op: 'intent'; name: string }
  | { op: 'untracked'; name: string; text: string }
  | { op: 'to-dir'; path: number }
  | { op: 'folder-to-file'; folder: number }
  | { op: 'chmod'; path: number }
  | { op: 'ignored'; name: string }
  | { op: 'untracked-exec'; name: string }
  | { op: 'untracked-link'; name: string }
  | { op: 'crlf'; path: number }
  | { op: 'attributes'; folder: number; text: string; ignored: boolean };

const FOLDERS = ['dir', 'dir/sub', 'other', 'é'];
const newName = fc.constantFrom('n.txt', 'dir/n.txt', 'new/deep/n.txt', 'dir/sub/x y.txt', 'other/new/z.txt', 'top new.txt', 'ñ/ü.txt');
// What ident rewrites, and text in an encoding working-tree-encoding converts, among strings.
const text = fc.oneof({ weight: 8, arbitrary: fc.string({ maxLength: 12 }) }, { weight: 1, arbitrary: fc.constant('$Id$\n') }, { weight: 1, arbitrary: fc.constant('\u00e9t\u00e9\n') });
const opArb: fc.Arbitrary<Op> = fc.oneof(
  { weight: 5, arbitrary: fc.record({ op: fc.constant('write' as const), path: fc.nat(), text }) },
  { weight: 3, arbitrary: fc.record({ op: fc.constant('delete' as const), path: fc.nat() }) },
  { weight: 4, arbitrary: fc.record({ op: fc.constant('stage' as const), path: fc.nat() }) },
  { weight: 1, arbitrary: fc.record({ op: fc.constant('unstage-delete' as const), path: fc.nat() }) },
  { weight: 1, arbitrary: fc.record({ op: fc.constant('rm' as const), path: fc.nat() }) },
  { weight: 1, arbitrary: fc.record({ op: fc.constant('intent' as const), name: newName }) },
  { weight: 3, arbitrary: fc.record({ op: fc.constant('untracked' as const), name: newName, text }) },
  { weight: 1, arbitrary: fc.record({ op: fc.constant('to-dir' as const), path: fc.nat() }) },
  { weight: 1, arbitrary: fc.record({ op: fc.constant('folder-to-file' as const), folder: fc.nat() }) },
  { weight: 2, arbitrary: fc.record({ op: fc.constant('chmod' as const), path: fc.nat() }) },
  { weight: 1, arbitrary: fc.record({ op: fc.constant('ignored' as const), name: newName }) },
  { weight: 1, arbitrary: fc.record({ op: fc.constant('untracked-exec' as const), name: newName }) },
  { weight: 1, arbitrary: fc.record({ op: fc.constant('untracked-link' as const), name: newName }) },
  { weight: 1, arbitrary: fc.record({ op: fc.constant('crlf' as const), path: fc.nat() }) },
  { weight: 1, arbitrary: fc.record({ op: fc.constant('attributes' as const), folder: fc.nat(), text: fc.constantFrom('* text eol=crlf\n', '* -text\n', '*.txt text\n', '', '* ident\n', '*.txt filter=upper\n', '* working-tree-encoding=ISO-8859-1\n'), ignored: fc.boolean() }) },
);
const configArb = fc.record({ fileMode: fc.boolean(), autocrlf: fc.boolean(), sha256: fc.boolean() });

/** A repository of PATHS, committed, under a random configuration. */
function randomRepo(config: { fileMode: boolean; autocrlf: boolean; sha256: boolean }): string {
  const dir = tempDir();
  git(dir, ['init', '-q', '-b', 'main', ...(config.sha256 ? ['--object-format=sha256'] : []), '.']);
  git(dir, ['config', 'core.fileMode', String(config.fileMode)]);
  if (config.autocrlf) git(dir, ['config', 'core.autocrlf', 'input']);
  // The clean filter an attribute may name.
  git(dir, ['config', 'filter.upper.clean', 'tr a-z A-Z']);
  writeFiles(dir, { '.gitignore': '*.ign\n', ...Object.fromEntries(PATHS.map((path) => [path, `${path}\n`])) });
  git(dir, ['add', '-A']);
  git(dir, ['commit', '-q', '-m', 'base']);
  return dir;
}

/** Applies one operation with plain git and the file system; failures of git (a path gone) are part of the state. */
function apply(dir: string, op: Op): void {
  const pick = (index: number) => PATHS[index % PATHS.length] as string;
  const full = (path: string) => join(dir, path);
  const clear = (path: string) => {
    try {
      rmSync(full(path), { recursive: true, force: true });
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code !== 'ENOTDIR') throw error;
    }
  };
  const write = (path: string, content: string) => {
    const parts = path.split('/');
    for (let depth = 1; depth < parts.length; depth += 1) {
      const folder = parts.slice(0, depth).join('/');
      try {
        mkdirSync(full(folder));
      } catch (error) {
        if ((error as NodeJS.ErrnoException).code === 'EEXIST') continue;
        if ((error as NodeJS.ErrnoException).code === 'ENOTDIR') return;
        throw error;
      }
    }
    try {
      writeFileSync(full(path), content);
    } catch (error) {
      if (!['EISDIR', 'ENOTDIR', 'ENOENT'].includes((error as NodeJS.ErrnoException).code as string)) throw error;
    }
  };
  switch (op.op) {
    case 'write': return write(pick(op.path), op.text);
    case 'delete': return clear(pick(op.path));
    case 'stage': git(dir, ['add', '-A', '--', pick(op.path)], { allowFail: true }); return;
    case 'unstage-delete': git(dir, ['rm', '-q', '--cached', '--', pick(op.path)], { allowFail: true }); return;
    case 'rm': git(dir, ['rm', '-q', '-f', '--', pick(op.path)], { allowFail: true }); return;
    case 'intent': write(op.name, 'intent\n'); git(dir, ['add', '-N', '--', op.name], { allowFail: true }); return;
    case 'untracked': return write(op.name, op.text);
    case 'to-dir': clear(pick(op.path)); return write(`${pick(op.path)}/inside.txt`, 'now a folder\n');
    case 'folder-to-file': {
      const folder = FOLDERS[op.folder % FOLDERS.length] as string;
      clear(folder);
      return write(folder, 'now a file\n');
    }
    case 'chmod': try { chmodSync(full(pick(op.path)), 0o755); } catch { /* gone */ } return;
    case 'ignored': return write(`${op.name}.ign`, 'ignored\n');
    case 'untracked-exec': write(op.name, '#!/bin/sh\n'); try { chmodSync(full(op.name), 0o755); } catch { /* not written */ } return;
    case 'untracked-link': clear(op.name); try { symlinkSync('a.txt', full(op.name)); } catch { /* parent missing */ } return;
    case 'crlf': return write(pick(op.path), 'one\r\ntwo\r\n');
    case 'attributes': {
      // Ignored, status never names it, yet git add reads it: the hash cache must see it change.
      const folder = ['', ...FOLDERS][op.folder % (FOLDERS.length + 1)] as string;
      if (op.ignored) appendFileSync(join(dir, '.git', 'info', 'exclude'), '.gitattributes\n');
      return write(folder === '' ? '.gitattributes' : `${folder}/.gitattributes`, op.text);
    }
  }
}

describe('the working tree built from git status', () => {
  it(`is the tree git add --all stages, on ${RUNS} random states (seed ${SEED})`, async (t) => {
    let fast = 0;
    let handedBack = 0;
    await fc.assert(fc.asyncProperty(configArb, fc.array(opArb, { minLength: 1, maxLength: 8 }), async (config, ops) => {
      const dir = randomRepo(config);
      // Two rounds of edits, each checked: the second builds on the folder memo of the first,
      // and on its hash cache, trusted at once (no racy margin: each round's writes are tens of
      // milliseconds apart, a git process or more, so a rewritten file never keeps its mtime).
      const half = Math.ceil(ops.length / 2);
      for (const batch of [ops.slice(0, half), ops.slice(half)]) {
        for (const op of batch) apply(dir, op);
        // Built first, so that every tree it names must have been written by it, not by git add.
        const got = await byStatus(dir, undefined, 0);
        if (got !== null) git(dir, ['ls-tree', '-r', '-t', got]);
        const expected = stagedTree(dir);
        if (got === null) {
          handedBack += 1;
          // Only what status cannot classify goes back to git add.
          const changed = git(dir, ['status', '--porcelain', '-z', '--untracked-files=all']).split('\0').filter(Boolean).map((record) => record.slice(3));
          const cause = changed.some((path) => {
            try {
              const stats = lstatSync(join(dir, path));
              return stats.isSymbolicLink() || (stats.mode & 0o100) !== 0;
            } catch {
              return false; // gone, or under what is now a file
            }
          });
          assert.ok(cause, `handed back without a changed executable or symlink: ${JSON.stringify(ops)}`);
          continue;
        }
        fast += 1;
        if (got !== expected) assert.equal(git(dir, ['ls-tree', '-r', got]), git(dir, ['ls-tree', '-r', expected]), `${JSON.stringify(config)} ${JSON.stringify(ops)}`);
      }
    }), { seed: SEED, numRuns: RUNS });
    t.diagnostic(`${fast} built from status, ${handedBack} handed back to git add`);
    assert.ok(fast > RUNS, 'most states are built from status');
  });

  it('rewrites only the folders on the way to a change, and leaves the rest as HEAD has it', async () => {
    const dir = makeRepo({ 'keep/one.txt': '1\n', 'keep/deep/two.txt': '2\n', 'edit/three.txt': '3\n', 'gone/four.txt': '4\n' });
    writeFiles(dir, { 'edit/three.txt': 'three\n', 'gone/four.txt': null });
    const calls: string[][] = [];
    const runner = new SimpleGitRunner(dir);
    const counting: GitRunner = { run: (args: readonly string[], options?: GitRunOptions): Promise<GitOutput> => (calls.push([...args]), runner.run(args, options)) };
    const tree = await byStatus(dir, counting);
    git(dir, ['ls-tree', '-r', '-t', tree as string]);
    assert.equal(tree, stagedTree(dir));
    assert.deepEqual(git(dir, ['ls-tree', '--name-only', tree as string]).split('\n').filter(Boolean), ['edit', 'keep']);
    assert.equal(git(dir, ['rev-parse', `${tree}:keep`]), git(dir, ['rev-parse', 'HEAD:keep']), 'an untouched folder is the same tree object');
    // HEAD's trees and the tip are read from their loose files, and the blob and the new trees
    // written as loose objects (no attribute rewrites the file): no process but status.
    assert.deepEqual(calls.map((args) => args[0]), ['status'], 'the checkout read from its files');
    assert.equal(git(dir, ['cat-file', '-t', `${tree}:edit`]).trim(), 'tree');
  });

  it('writes the trees as loose objects git reads, and through unpack-objects where one cannot be written', async () => {
    const dir = makeRepo({ 'a.txt': 'a\n' });
    const runner = new SimpleGitRunner(dir);
    const calls: string[] = [];
    const plumbing = new Plumbing({ run: (args, options) => (calls.push(args[0] as string), runner.run(args, options)) }, dir);
    const objects = git(dir, ['rev-parse', '--path-format=absolute', '--git-path', 'objects']).trim();
    const body = (name: string): Buffer => Buffer.concat([Buffer.from(`100644 ${name}\0`, 'latin1'), Buffer.from(git(dir, ['rev-parse', 'HEAD:a.txt']).trim(), 'hex')]);
    const idOf = (tree: Buffer): string => createHash('sha1').update(`tree ${tree.length}\0`).update(tree).digest('hex');
    await plumbing.writeTrees([body('one.txt'), body('two.txt')], 'sha1', { objectsDir: objects, fsync: true });
    assert.deepEqual(calls, [], 'no process');
    assert.equal(git(dir, ['ls-tree', '--name-only', idOf(body('two.txt'))]).trim(), 'two.txt');
    // An objects folder that cannot take them (here a file where the folder should be): git writes them.
    const blocked = join(tempDir(), 'not-a-folder');
    writeFileSync(blocked, '');
    await plumbing.writeTrees([body('three.txt')], 'sha1', { objectsDir: blocked, shared: 0, fsync: false });
    assert.deepEqual(calls, ['unpack-objects']);
    assert.equal(git(dir, ['ls-tree', '--name-only', idOf(body('three.txt'))]).trim(), 'three.txt');
    git(dir, ['fsck', '--strict', '--no-dangling']);
  });

  it('finds each changed name in a wide folder whose names sort around a folder\'s slash', async () => {
    const names = ['a', 'a-b', 'a.b', 'a0', 'a b', 'ab', 'b', 'é', 'z'];
    const files: Record<string, string> = {};
    for (let i = 0; i < 300; i += 1) files[`w/f${String(i).padStart(3, '0')}.txt`] = `${i}\n`;
    for (const name of names) files[`w/${name}`] = `${name}\n`;
    files['w/c/inside.txt'] = 'inside\n';
    const dir = makeRepo(files);
    // Every kind of change, to files and folders whose names sort beside each other.
    writeFiles(dir, { 'w/a': null, 'w/a0': null, 'w/a.b': null, 'w/f299.txt': null });
    rmSync(join(dir, 'w', 'c'), { recursive: true });
    writeFiles(dir, { 'w/a/x.txt': 'a is a folder now\n', 'w/a-b': 'changed\n', 'w/a0/y.txt': 'new folder\n', 'w/ab': 'changed\n', 'w/c': 'c is a file now\n', 'w/é': 'changed\n', 'w/f150.txt': 'changed\n', 'w/f300.txt': 'new\n' });
    const tree = await byStatus(dir);
    assert.equal(tree, stagedTree(dir));
  });

  it('is HEAD\'s tree itself when nothing differs, with no tree written', async () => {
    const dir = makeRepo({ 'a/b.txt': 'b\n' });
    const calls: string[] = [];
    const runner = new SimpleGitRunner(dir);
    const tree = await byStatus(dir, { run: (args, options) => (calls.push(args[0] as string), runner.run(args, options)) });
    assert.equal(tree, git(dir, ['rev-parse', 'HEAD^{tree}']).trim());
    assert.deepEqual(calls, ['status']);
  });

  it('hands back to git add what it cannot decide: a conflict, a moved submodule, an untracked executable, a symlink, an embedded repository', async () => {
    const conflicted = makeRepo({ 'f.txt': 'base\n' });
    git(conflicted, ['checkout', '-q', '-b', 'other']);
    writeFiles(conflicted, { 'f.txt': 'other\n' });
    git(conflicted, ['commit', '-qam', 'other']);
    git(conflicted, ['checkout', '-q', 'main']);
    writeFiles(conflicted, { 'f.txt': 'main\n' });
    git(conflicted, ['commit', '-qam', 'main']);
    git(conflicted, ['merge', '-q', 'other'], { allowFail: true });
    assert.equal(await byStatus(conflicted), null, 'a conflict');

    const sub = makeRepo({ 'lib.txt': 'lib\n' });
    const withSub = makeRepo();
    git(withSub, ['-c', 'protocol.file.allow=always', 'submodule', 'add', '-q', sub, 'vendor']);
    git(withSub, ['commit', '-qm', 'submodule']);
    assert.notEqual(await byStatus(withSub), null, 'a submodule where it was committed is no reason');
    writeFiles(join(withSub, 'vendor'), { 'lib.txt': 'dirty\n' });
    assert.notEqual(await byStatus(withSub), null, 'nor a dirty one');
    git(join(withSub, 'vendor'), ['commit', '-qam', 'moved']);
    assert.equal(await byStatus(withSub), null, 'a submodule at another commit');

    const exec = makeRepo();
    writeFiles(exec, { 'run.sh': '#!/bin/sh\n' });
    chmodSync(join(exec, 'run.sh'), 0o755);
    assert.equal(await byStatus(exec), null, 'an untracked executable');

    const link = makeRepo();
    symlinkSync('README.md', join(link, 'link'));
    assert.equal(await byStatus(link), null, 'an untracked symlink');

    const embedded = makeRepo();
    mkdirSync(join(embedded, 'inner'));
    git(join(embedded, 'inner'), ['init', '-q']);
    writeFiles(embedded, { 'inner/x.txt': 'x\n' });
    git(join(embedded, 'inner'), ['add', '-A']);
    git(join(embedded, 'inner'), ['commit', '-qm', 'inner']);
    assert.equal(await byStatus(embedded), null, 'an embedded repository');
  });

  it('reads status records into what each path holds', () => {
    const zero = '0'.repeat(40);
    const oid = 'a'.repeat(40);
    const plan = readStatus([
      `# branch.oid ${oid}`, '# branch.head main',
      `1 .M N... 100644 100644 100644 ${oid} ${oid} modified`,
      `1 M. N... 100644 100755 100755 ${oid} ${'b'.repeat(40)} staged with spaces`,
      `1 AD N... 000000 100644 000000 ${zero} ${oid} added then deleted`,
      `1 D. N... 100644 000000 000000 ${oid} ${zero} removed`,
      `1 .A N... 000000 000000 100644 ${zero} ${zero} intent`,
      `1 .M N... 100644 100644 100644 ${oid} ${oid}  two  spaces `,
      '? new/file', '', '',
    ].join('\0'));
    assert.ok(plan !== null);
    assert.equal(plan.head, oid);
    assert.deepEqual(Object.fromEntries(plan.states), {
      modified: { kind: 'file', mode: '100644' },
      'staged with spaces': { kind: 'object', mode: '100755', oid: 'b'.repeat(40) },
      'added then deleted': { kind: 'absent' },
      removed: { kind: 'absent' },
      intent: { kind: 'file', mode: '100644' },
      ' two  spaces ': { kind: 'file', mode: '100644' },
    });
    assert.deepEqual(plan.untracked, ['new/file']);
    for (const record of [
      `u UU N... 100644 100644 100644 100644 ${oid} ${oid} ${oid} conflict`,
      `1 .M SC.. 160000 160000 160000 ${oid} ${oid} submodule`,
      `1 .T N... 100644 100644 120000 ${oid} ${oid} now a link`,
      '? nested/repo/',
      `1 .M N... 100644 100644 100644 ${oid} ${oid} "quoted`,
      `1 .M N... 100644 100644 100644 ${oid} ${oid} line\nbreak`,
      `1 .M N... 100644 100644 100644 ${oid} ${oid}`,
      `1 .M N... 100644 100644 100644 ${oid} ${oid} `,
      `1 .M N... 100644 100644 ${oid} ${oid} short`,
      `1 .M N... 160000 100644 100644 ${oid} ${oid} was a submodule`,
      `2 R. N... 100644 100644 100644 ${oid} ${oid} R100 renamed\0old`,
    ]) {
      assert.equal(readStatus(`# branch.oid ${oid}\0${record}\0`), null, record);
    }
    assert.equal(readStatus('# branch.oid (initial)\0'), null, 'no commit to build on');
  });

  it('reads what status said of an index against HEAD, with diff-files and the untracked listing after, into the plan status gives then', () => {
    const dir = makeRepo({ 'a.txt': 'a\n', 'b.txt': 'b\n', 'c.txt': 'c\n', 'd/e.txt': 'e\n', 'd/f.txt': 'f\n', 'g.txt': 'g\n', 'h.txt': 'h\n' });
    // The index differs from HEAD: modified, added, deleted (the file left untracked), made executable.
    writeFiles(dir, { 'a.txt': 'a staged\n', 'new.txt': 'new\n', 'd/e.txt': 'e staged\n' });
    git(dir, ['add', 'a.txt', 'new.txt', 'd/e.txt']);
    git(dir, ['rm', '-q', '--cached', 'b.txt']);
    git(dir, ['update-index', '--chmod=+x', 'c.txt']);
    const staged: string[] = [];
    const before = readStatus(git(dir, ['status', '--porcelain=v2', '-z', '--untracked-files=all', '--branch', '--no-renames']), staged);
    assert.ok(before !== null);
    assert.deepEqual(staged.map((record) => record.slice(0, 1) + record.slice(record.lastIndexOf(' '))).sort(), ['A new.txt', 'D b.txt', 'M a.txt', 'M c.txt', 'M d/e.txt']);
    // Then the working tree: a staged file changed again, one deleted, an unstaged one changed and one deleted, a file made.
    writeFiles(dir, { 'a.txt': 'a again\n', 'd/f.txt': 'f changed\n', 'd/new.txt': 'made\n' });
    rmSync(join(dir, 'new.txt'));
    rmSync(join(dir, 'g.txt'));
    const head = git(dir, ['rev-parse', 'HEAD']).trim();
    const status = readStatus(git(dir, ['status', '--porcelain=v2', '-z', '--untracked-files=all', '--branch', '--no-renames']));
    const parts = planFromParts(head, staged.join('\0'), git(dir, ['diff-files', '-z', '--ignore-submodules=dirty']), git(dir, ['ls-files', '-z', '--others', '--exclude-standard']));
    assert.ok(status !== null && parts !== null);
    assert.equal(parts.head, head);
    assert.deepEqual(Object.fromEntries([...parts.states].sort()), Object.fromEntries([...status.states].sort()));
    assert.deepEqual([...parts.untracked].sort(), [...status.untracked].sort());
    assert.deepEqual([...parts.untracked].sort(), ['b.txt', 'd/new.txt']);
    // What status's plan refuses, the parts refuse too: a file made a symlink, a conflict.
    const zero = '0'.repeat(40);
    const oid = 'a'.repeat(40);
    assert.equal(planFromParts(head, '', `:100644 120000 ${oid} ${zero} T\0link\0`, ''), null);
    assert.equal(planFromParts(head, '', `:000000 100644 ${zero} ${zero} U\0conflict\0`, ''), null);
    assert.equal(planFromParts(head, '', `:160000 160000 ${oid} ${zero} M\0submodule\0`, ''), null);
    assert.equal(planFromParts(head, '', '', 'nested/repo/\0'), null);
    assert.equal(planFromParts(head, `M 100644 ${oid}`, '', ''), null, 'a record cut short');
  });

  it('refuses a path by what fsck reads any of its names as, not only its first', () => {
    const refused: Array<[string, string]> = [
      ['src/.git/config', '100644'], ['src/.GIT', '100644'], ['src/git~1/x', '100644'], ['a/\u200c.git', '100644'],
      ['a/b\\.git', '100644'], ['a/.gitmodules', '120000'], ['a/.gitmodules/x', '100644'], ['a/.gitattributes/x', '100644'], ['a/.gitmodules', '160000'],
    ];
    const passed: Array<[string, string]> = [
      ['a/.gitmodules', '100644'], ['a/.gitattributes', '100644'], ['src/d5/file.txt', '100644'], ['src/gadget.txt', '100644'], ['a/sub', '160000'], ['a/b/.Git~', '100644'],
    ];
    for (const [path, mode] of refused) assert.equal(refusedByObjectChecks(path, mode), true, `${JSON.stringify(path)} ${mode}`);
    for (const [path, mode] of passed) assert.equal(refusedByObjectChecks(path, mode), false, `${JSON.stringify(path)} ${mode}`);
  });

  it('takes a save from status: no temporary index, and the snapshot equals git add --all', async () => {
    const dir = makeRepo({ 'src/a.ts': 'a\n', 'src/b.ts': 'b\n' });
    writeFiles(dir, { 'src/a.ts': 'changed\n', 'src/new/c.ts': 'c\n', 'src/b.ts': null });
    git(dir, ['add', 'src/new/c.ts']);
    const calls: string[] = [];
    const runner = new SimpleGitRunner(dir);
    const store = new WipStore({ cwd: dir, policy: null, staging: 'status', git: { run: (args, options) => (calls.push(args[0] as string), runner.run(args, options)) } });
    const { snapshot } = await store.save({ label: 'from status' });
    assert.equal(snapshot.tree, stagedTree(dir));
    assert.ok(calls.includes('status') && !calls.includes('add') && !calls.includes('write-tree'), calls.join(' '));
    // Nothing changed since: the memo knows every folder, and the tip read alongside holds the tree.
    calls.length = 0;
    const again = await store.save({ label: 'from status' });
    assert.equal(again.created, false);
    assert.deepEqual(again.snapshot, snapshot);
    assert.deepEqual(calls, ['status'], 'no checkout read by git, no blob hashed by git, and no tree, commit or ref written');
  });
});

describe('a save from status with changes in many folders', () => {
  it('reads HEAD\'s trees after the memo, only those to build, and the tip even when none is', async () => {
    const files = Object.fromEntries(Array.from({ length: 200 }, (_, i) => [`d${i % 20}/e${i % 100}/file-${i}.txt`, `${i}\n`]));
    const dir = makeRepo(files);
    // HEAD's trees packed, as a clone has them: git reads them.
    git(dir, ['gc', '-q']);
    const calls: string[][] = [];
    const runner = new SimpleGitRunner(dir);
    const store = new WipStore({ cwd: dir, policy: null, staging: 'status', git: { run: (args, options) => (calls.push([...args, String(options?.input ?? '')]), runner.run(args, options)) } });
    const catFileNames = (): string[] => (calls.find((call) => call[0] === 'cat-file')?.at(-1) ?? '').split('\n').filter((line) => line.length > 0);
    // 100 folders on the way to the changes: more than are read alongside the hashing.
    writeFiles(dir, Object.fromEntries(Array.from({ length: 100 }, (_, i) => [`d${i % 20}/e${i}/file-${i}.txt`, `changed ${i}\n`])));
    const first = await store.save({ label: 'many' });
    assert.equal(first.snapshot.tree, stagedTree(dir));
    assert.equal(catFileNames().length, 1 + 121, 'the tip and every folder: the memo knew none');
    calls.length = 0;
    writeFiles(dir, { 'd3/e3/file-3.txt': 'again\n' });
    const second = await store.save({ label: 'one more' });
    assert.equal(second.snapshot.tree, stagedTree(dir));
    assert.deepEqual(catFileNames().length, 1 + 3, 'the tip and the three folders on the way to the one change');
    calls.length = 0;
    const third = await store.save({ label: 'one more' });
    assert.equal(third.created, false);
    // HEAD's commit is packed: git reads the checkout.
    assert.deepEqual(calls.map((call) => call[0]), ['rev-parse', 'status']);
    assert.deepEqual(catFileNames(), [], 'nothing to build, and the tip a loose ref naming a loose commit: read from its files');
  });

  it('reads HEAD\'s trees and the tip from their loose files, checked, and through git where one does not read', async () => {
    const dir = makeRepo({ 'a/b/c.txt': 'c\n', 'a/d.txt': 'd\n', 'é/f.txt': 'f\n', 'g.txt': 'g\n' });
    const calls: string[][] = [];
    const runner = new SimpleGitRunner(dir);
    const store = new WipStore({ cwd: dir, policy: null, staging: 'status', git: { run: (args, options) => (calls.push([...args]), runner.run(args, options)) } });
    const commands = (): string[] => calls.map((call) => call[0] as string);
    // Folders HEAD holds, a folder it holds as a file, a new folder, a non-ASCII one.
    writeFiles(dir, { 'a/b/c.txt': 'c2\n', 'é/f.txt': 'f2\n', 'g.txt': null, 'new/h.txt': 'h\n' });
    git(dir, ['rm', '-q', '--cached', 'g.txt']);
    writeFiles(dir, { 'g.txt/inside.txt': 'now a folder\n' });
    const first = await store.save({ label: 'loose' });
    assert.equal(first.snapshot.tree, stagedTree(dir));
    assert.ok(!commands().includes('cat-file'), commands().join(' '));
    calls.length = 0;
    writeFiles(dir, { 'a/d.txt': 'd2\n' });
    const second = await store.save({ label: 'loose again' });
    assert.equal(second.snapshot.tree, stagedTree(dir));
    assert.equal(git(dir, ['rev-parse', `${second.snapshot.commit}^1`]).trim(), first.snapshot.commit, 'the tip read from its files is the chain\'s');
    assert.ok(!commands().includes('cat-file'), commands().join(' '));
    // A loose file that does not hash to its id (HEAD's tree of a/b here) is not taken: git reads the object.
    const objects = join(dir, '.git', 'objects');
    const sub = git(dir, ['rev-parse', 'HEAD:a/b']).trim();
    git(dir, ['repack', '-q', '-a']);
    const forged = Buffer.from('100644 x\0' + 'f'.repeat(20), 'latin1');
    mkdirSync(join(objects, sub.slice(0, 2)), { recursive: true });
    writeFileSync(join(objects, sub.slice(0, 2), sub.slice(2)), deflateSync(Buffer.concat([Buffer.from(`tree ${forged.length}\0`), forged])));
    calls.length = 0;
    writeFiles(dir, { 'a/b/c.txt': 'c3\n' });
    const third = await store.save({ label: 'forged' });
    assert.equal(third.snapshot.tree, stagedTree(dir));
    assert.ok(commands().includes('cat-file'), commands().join(' '));
  });

  it('leaves a repository with replace refs to git add, whose tree never hangs on what git reads of HEAD\'s', async () => {
    const dir = makeRepo({ 'd/e/x': '1\n', 'd/y': '1\n', 'd/z': '1\n' });
    // HEAD's folder d replaced by a tree of one file: git reads that tree for HEAD:d.
    const only = git(dir, ['mktree'], { input: `100644 blob ${git(dir, ['rev-parse', 'HEAD:d/y']).trim()}\tonly\n` }).trim();
    git(dir, ['replace', git(dir, ['rev-parse', 'HEAD:d']).trim(), only]);
    writeFiles(dir, { 'd/y': '2\n' });
    const calls: string[] = [];
    const runner = new SimpleGitRunner(dir);
    const store = new WipStore({ cwd: dir, policy: null, staging: 'status', git: { run: (args, options) => (calls.push(args[0] as string), runner.run(args, options)) } });
    const { snapshot } = await store.save({ label: 'replaced' });
    assert.ok(calls.includes('add') && !calls.includes('status'), calls.join(' '));
    assert.equal(snapshot.tree, stagedTree(dir));
    assert.deepEqual(git(dir, ['--no-replace-objects', 'ls-tree', '-r', '--name-only', snapshot.tree]).split('\n').filter(Boolean), ['d/e/x', 'd/y', 'd/z']);
  });
});

describe('the blobs a save from status writes itself', () => {
  const hashedByGit = (calls: readonly (readonly string[])[]): string[] => calls.filter((call) => call[0] === 'hash-object').flatMap((call) => (call.at(-1) ?? '').split('\n').filter(Boolean));
  const counting = (dir: string) => {
    const calls: string[][] = [];
    const runner = new SimpleGitRunner(dir);
    const git_: GitRunner = { run: (args, options) => (calls.push([...args, String(options?.input ?? '')]), runner.run(args, options)) };
    return { calls, build: () => byStatus(dir, git_, 0) };
  };

  it('writes the blob git would store, loose and readable, and leaves to hash-object each file an attribute or a CR may rewrite', async () => {
    const dir = makeRepo({ 'plain/a.txt': 'a\n', 'filtered/b.txt': 'b\n', 'crlf.txt': 'c\n', 'big.bin': 'big\n' });
    git(dir, ['config', 'core.autocrlf', 'input']);
    git(dir, ['config', 'filter.upper.clean', 'tr a-z A-Z']);
    const big = Buffer.alloc(5 * 1024 * 1024, 'x');
    writeFiles(dir, { 'plain/a.txt': 'changed\n', 'plain/new.txt': '', 'filtered/.gitattributes': '*.txt filter=upper\n', 'filtered/b.txt': 'lower\n', 'crlf.txt': 'one\r\ntwo\r\n', 'é/ü.txt': 'ü\n' });
    writeFileSync(join(dir, 'big.bin'), big);
    const { calls, build } = counting(dir);
    const tree = await build();
    assert.equal(tree, stagedTree(dir));
    // A filter, a CR, and a file larger than chant reads whole are git's; the rest are chant's.
    assert.deepEqual(hashedByGit(calls).sort(), ['big.bin', 'crlf.txt', 'filtered/.gitattributes', 'filtered/b.txt']);
    for (const path of ['plain/a.txt', 'plain/new.txt', 'é/ü.txt']) {
      const oid = git(dir, ['rev-parse', `${tree}:${path}`]).trim();
      assert.ok(existsSync(join(dir, '.git', 'objects', oid.slice(0, 2), oid.slice(2))), `${path} is loose`);
      assert.equal(git(dir, ['cat-file', 'blob', oid]), readFileSync(join(dir, path), 'utf8'));
    }
    assert.equal(git(dir, ['fsck', '--no-dangling']).trim(), '');
  });

  it('leaves many files to hash-object, which hashes them on another core, and keeps its cache across who commits', async () => {
    const dir = makeRepo({ 'a.txt': 'a\n' });
    writeFiles(dir, Object.fromEntries(Array.from({ length: 150 }, (_, i) => [`many/f${i}.txt`, `${i}\n`])));
    const many = counting(dir);
    assert.equal(await many.build(), stagedTree(dir));
    assert.equal(hashedByGit(many.calls).length, 150);
    // The author and committer git runs with are no part of a blob: the cache answers for them all.
    const plumbing = new Plumbing(new SimpleGitRunner(dir), dir);
    const { layout, head, replaced } = await plumbing.checkout();
    const calls: string[][] = [];
    const runner = new SimpleGitRunner(dir);
    const counted = new Plumbing({ run: (args, options) => (calls.push([...args, String(options?.input ?? '')]), runner.run(args, options)) }, dir);
    const env = { ...process.env, GIT_AUTHOR_NAME: 'Agent 7', GIT_COMMITTER_EMAIL: 'agent@example.com' };
    const built = await workingTreeByStatus(counted, layout, head as string, 'refs/chant/wip/main', { maxFileSize: DEFAULT_MAX_FILE_SIZE, replaced, env, racyMarginMs: 0 });
    assert.equal(built?.tree, stagedTree(dir));
    assert.deepEqual(hashedByGit(calls), [], 'every file known from the save before');
  });

  it('leaves every file to hash-object where attributes come from elsewhere, and refreshes a blob it finds loose already', async () => {
    const dir = makeRepo({ 'a.txt': 'a\n' });
    writeFiles(dir, { 'a.txt': 'again\n' });
    git(dir, ['config', 'core.attributesFile', join(dir, 'nowhere')]);
    const first = counting(dir);
    assert.equal(await first.build(), stagedTree(dir));
    assert.deepEqual(hashedByGit(first.calls), ['a.txt']);
    git(dir, ['config', '--unset', 'core.attributesFile']);
    // Later gits' attr.tree, in a file or given in the environment, reads attributes from a tree.
    const dirs = { commonDir: join(dir, '.git'), gitDir: join(dir, '.git') };
    assert.equal(attributesElsewhere(dirs, process.env), false);
    assert.equal(attributesElsewhere(dirs, { ...process.env, GIT_CONFIG_COUNT: '1', GIT_CONFIG_KEY_0: 'attr.tree', GIT_CONFIG_VALUE_0: 'HEAD' }), true);
    // The blob is loose already, and old: it is not written again, and no prune takes it before a ref names it.
    const oid = git(dir, ['hash-object', 'a.txt']).trim();
    const file = join(dir, '.git', 'objects', oid.slice(0, 2), oid.slice(2));
    const old = new Date(Date.now() - 30 * 24 * 3600 * 1000);
    utimesSync(file, old, old);
    const second = counting(dir);
    rmSync(join(dir, '.git', 'chant-hash-cache'));
    assert.equal(await second.build(), stagedTree(dir));
    assert.deepEqual(hashedByGit(second.calls), []);
    assert.ok(statSync(file).mtimeMs > Date.now() - 60_000, 'the loose blob was refreshed');
  });

  it('refreshes the loose blobs and trees it takes from its caches, so that no prune takes them while a snapshot comes to name them', async () => {
    const dir = makeRepo({ 'd/a.txt': 'a\n', 'e/b.txt': 'b\n' });
    writeFiles(dir, { 'd/a.txt': 'changed\n' });
    const store = new WipStore({ cwd: dir, policy: null, staging: 'status' });
    const first = await store.save({ label: 'first' });
    const objectFile = (oid: string) => join(dir, '.git', 'objects', oid.slice(0, 2), oid.slice(2));
    const blob = objectFile(git(dir, ['rev-parse', `${first.snapshot.tree}:d/a.txt`]).trim());
    const folder = objectFile(git(dir, ['rev-parse', `${first.snapshot.tree}:d`]).trim());
    // The snapshot pruned away (as retention does) and its objects a month old: unreachable, and prunable.
    git(dir, ['update-ref', '-d', 'refs/chant/wip/main']);
    const old = new Date(Date.now() - 30 * 24 * 3600 * 1000);
    for (const file of [blob, folder]) utimesSync(file, old, old);
    writeFiles(dir, { 'e/b.txt': 'changed too\n' });
    const second = await store.save({ label: 'second' });
    // Looked at before git add (in stagedTree) writes the same objects, which refreshes them too.
    for (const file of [blob, folder]) assert.ok(statSync(file).mtimeMs > Date.now() - 60_000, `${file} was refreshed`);
    assert.equal(second.snapshot.tree, stagedTree(dir));
    assert.equal(git(dir, ['rev-parse', `${second.snapshot.tree}:d`]).trim(), git(dir, ['rev-parse', `${first.snapshot.tree}:d`]).trim(), 'the folder is the memo\'s tree');
    git(dir, ['prune', '--expire=1.week.ago']);
    assert.equal(git(dir, ['fsck', '--no-dangling']).trim(), '');
  });

  it('leaves to git the blobs of a repository its configuration shares, whose modes git gives, and a file under a symlinked .gitattributes', async () => {
    const dir = makeRepo({ 'a.txt': 'a\n' });
    git(dir, ['config', 'core.sharedRepository', 'group']);
    writeFiles(dir, { 'b.txt': 'a file git has not seen\n' });
    const shared = counting(dir);
    // A umask that takes the group's bits: git gives them back.
    const umask = process.umask(0o077);
    let tree: string | null;
    try {
      tree = await shared.build();
    } finally {
      process.umask(umask);
    }
    assert.equal(tree, stagedTree(dir));
    assert.deepEqual(hashedByGit(shared.calls), ['b.txt']);
    const oid = git(dir, ['rev-parse', `${tree}:b.txt`]).trim();
    assert.equal(statSync(join(dir, '.git', 'objects', oid.slice(0, 2), oid.slice(2))).mode & 0o777, 0o440);
    // git reads the index's .gitattributes where the working tree's is a symlink (which it never
    // follows), and hash-object never reads the index: git add decides.
    const linked = makeRepo({ 'a.txt': 'a\n' });
    symlinkSync('* ident', join(linked, '.gitattributes'));
    git(linked, ['add', '-A']);
    git(linked, ['commit', '-qm', 'linked attributes']);
    writeFiles(linked, { 'a.txt': 'x $Id: abc $\n' });
    const handed = counting(linked);
    assert.equal(await handed.build(), null, 'handed to git add');
    assert.deepEqual(hashedByGit(handed.calls), []);
    const store = new WipStore({ cwd: linked, policy: null });
    assert.equal((await store.save({ label: 'linked' })).snapshot.tree, stagedTree(linked));
  });

});

/** A save that, once it starts recording, sees another hand delete its chain and a gc prune all that was unreachable. */
async function saveWhileChainDropped(store: WipStore, dir: string, label: string): Promise<Awaited<ReturnType<WipStore['save']>>> {
  let dropped = false;
  const saved = await store.save({
    label,
    onProgress: (progress) => {
      if (progress.phase !== 'recording' || dropped) return;
      dropped = true;
      git(dir, ['update-ref', '-d', 'refs/chant/wip/main']);
      git(dir, ['-c', 'gc.reflogExpire=now', '-c', 'gc.reflogExpireUnreachable=now', 'gc', '-q', '--prune=now']);
    },
  });
  assert.ok(dropped);
  return saved;
}

/** A snapshot of `tree` on main, on top of `below`, as a save in another process writes one. */
function snapshotOn(dir: string, tree: string, below: string[], label: string): string {
  const head = git(dir, ['rev-parse', 'HEAD']).trim();
  return git(dir, ['commit-tree', tree, ...[...below, head].flatMap((parent) => ['-p', parent]), '-m', `chant wip: main (${label})\n\nChant-Wip-Branch: main\nChant-Wip-Head: ${head}\nChant-Wip-Kind: save\nChant-Wip-Label: ${label}\n`]).trim();
}

describe('the hash cache', () => {
  const counted = (dir: string) => {
    const calls: string[] = [];
    const runner = new SimpleGitRunner(dir);
    const git_: GitRunner = { run: (args, options) => (calls.push(args[0] as string), runner.run(args, options)) };
    return { calls, build: async (racyMarginMs?: number) => byStatus(dir, git_, racyMarginMs) };
  };

  it('hashes a file modified since HEAD once, not again while its stat data and what git reads beside it stay the same', async () => {
    const dir = makeRepo(Object.fromEntries(Array.from({ length: 20 }, (_, i) => [`d${i % 4}/f${i}.txt`, `${i}\n`])));
    writeFiles(dir, { 'd0/f0.txt': 'dirty 0\n', 'd1/f1.txt': 'dirty 1\n', 'new.txt': 'untracked\n' });
    // An attributes file that names a rewrite (for files there are none of) leaves every file
    // to hash-object, where this test sees the hashing.
    writeFileSync(join(dir, '.git', 'info', 'attributes'), '*.none ident\n');
    const { calls, build } = counted(dir);
    const check = async (why: string, hashes: boolean, racyMarginMs: number | undefined = 0) => {
      calls.length = 0;
      const got = await build(racyMarginMs);
      assert.equal(got, stagedTree(dir), why);
      assert.equal(calls.includes('hash-object'), hashes, `${why}: ${calls.join(' ')}`);
    };
    await check('the first save hashes', true);
    await check('the next finds every file in the cache', false);
    await check('within the racy margin of when their stat data was taken, files are hashed again', true, 3_600_000);
    writeFiles(dir, { 'd1/f1.txt': 'dirty 2\n' });
    await check('a file rewritten at the same size is hashed again', true);
    await check('and then known', false);
    git(dir, ['config', 'core.autocrlf', 'input']);
    writeFileSync(join(dir, 'd0/f0.txt'), 'crlf\r\n');
    await check('a config change empties the cache', true);
    await check('known again under the new config', false);
    writeFiles(dir, { 'd2/.gitattributes': '* -text\n' });
    writeFiles(dir, { 'd2/f2.txt': 'two\r\n' });
    await check('an untracked .gitattributes turns the cache off', true);
    await check('and again while status names it', true);
    git(dir, ['add', 'd2/.gitattributes']);
    git(dir, ['commit', '-qm', 'attributes']);
    await check('HEAD moved: nothing known', true);
    await check('known under the new HEAD', false);
    appendFileSync(join(dir, '.git', 'info', 'exclude'), '.gitattributes\n');
    writeFiles(dir, { 'd0/.gitattributes': '* text eol=crlf\n' });
    await check('an ignored .gitattributes on the way is seen by its stat data', true);
    const cacheText = readFileSync(join(dir, '.git', 'chant-hash-cache'), 'utf8');
    const oid = /\0([0-9a-f]{40})(?:\n|$)/.exec(cacheText)?.[1] as string;
    rmSync(join(dir, '.git', 'objects', oid.slice(0, 2), oid.slice(2)));
    await check('a blob the cache names that is gone from disk is hashed again', true);
    writeFileSync(join(dir, '.git', 'chant-hash-cache'), 'garbage\0\n\0');
    await check('a cache that is garbage is ignored', true);
    await check('and replaced', false);
  });

  it('takes the blobs and trees it names without looking for them only while the wip tip holds the tree it built', async () => {
    const dir = makeRepo({ 'd/a.txt': 'a\n', 'd/b.txt': 'b\n', 'e/c.txt': 'c\n' });
    writeFiles(dir, { 'd/a.txt': 'dirty a\n', 'e/c.txt': 'dirty c\n' });
    const expected = stagedTree(dir);
    const objectFile = (oid: string) => join(dir, '.git', 'objects', oid.slice(0, 2), oid.slice(2));
    const onTip = (tree: string, parent?: string) => {
      const commit = git(dir, ['commit-tree', tree, ...(parent === undefined ? [] : ['-p', parent]), '-m', 'wip']).trim();
      git(dir, ['update-ref', 'refs/chant/wip/main', commit]);
      return commit;
    };
    assert.equal(await byStatus(dir, undefined, 0), expected);
    const blob = git(dir, ['rev-parse', `${expected}:d/a.txt`]).trim();
    const folder = git(dir, ['rev-parse', `${expected}:d`]).trim();
    // Recorded on the wip ref as a save records it, then packed by gc: reachable, and no longer loose.
    const first = onTip(expected);
    git(dir, ['gc', '-q']);
    assert.equal(existsSync(objectFile(blob)), false);
    assert.equal(existsSync(objectFile(folder)), false);
    // The next snapshot's commit is loose again, as each save writes it.
    onTip(expected, first);
    assert.equal(await byStatus(dir, undefined, 0), expected);
    assert.equal(existsSync(objectFile(blob)), false, 'a blob the tip holds is taken as it is');
    assert.equal(existsSync(objectFile(folder)), false, 'a folder tree the tip holds is taken as it is');
    // The wip ref moved to a tree that does not hold them: each is looked for, and written again.
    git(dir, ['update-ref', 'refs/chant/wip/main', git(dir, ['rev-parse', 'HEAD']).trim()]);
    assert.equal(await byStatus(dir, undefined, 0), expected);
    assert.equal(existsSync(objectFile(blob)), true, 'a blob the tip does not hold is written again');
    assert.equal(existsSync(objectFile(folder)), true, 'a folder tree the tip does not hold is written again');
    git(dir, ['fsck', '--no-dangling']);
  });

  it('records a tree built on objects taken without a look only on the tip that holds them: a tip moved and a prune in between make the save read every file again', async () => {
    const dir = makeRepo({ 'd/a.txt': 'a\n', 'd/b.txt': 'b\n', 'e/c.txt': 'c\n' });
    writeFiles(dir, { 'd/a.txt': 'dirty a\n', 'e/c.txt': 'dirty c\n' });
    // Past the hash cache's racy margin, so that the second save takes the files from it.
    await new Promise((resolve) => setTimeout(resolve, 3_500));
    const store = new WipStore({ cwd: dir, policy: null });
    const first = await store.save({ label: 'one' });
    // Weeks old, as a save's objects are after a while: a prune takes them once unreachable.
    const old = new Date(Date.now() - 30 * 24 * 3600 * 1000);
    const objects = join(dir, '.git', 'objects');
    for (const folder of readdirSync(objects).filter((name) => /^[0-9a-f]{2}$/.test(name))) {
      for (const file of readdirSync(join(objects, folder))) utimesSync(join(objects, folder, file), old, old);
    }
    const second = await saveWhileChainDropped(store, dir, 'two');
    assert.equal(second.snapshot.tree, first.snapshot.tree);
    assert.deepEqual(git(dir, ['rev-parse', `${second.snapshot.commit}^@`]).trim().split('\n'), [git(dir, ['rev-parse', 'HEAD']).trim()], 'a chain begun anew');
    // Every object the new snapshot names is there: fsck before anything else writes objects.
    git(dir, ['fsck', '--no-dangling', '--strict']);
    git(dir, ['ls-tree', '-r', second.snapshot.tree]);
    assert.equal(second.snapshot.tree, stagedTree(dir));
  });

  it('never gives back as the snapshot a tip another hand deleted while the save recorded', async () => {
    const dir = makeRepo({ 'a.txt': 'a\n' });
    writeFiles(dir, { 'a.txt': 'precious work\n' });
    const store = new WipStore({ cwd: dir, policy: null });
    const first = await store.save({ label: 'autosave' });
    // The same notes on the same tree: the tip is the snapshot, unless it is gone meanwhile.
    const second = await saveWhileChainDropped(store, dir, 'autosave');
    assert.equal(second.created, true, 'recorded anew');
    assert.equal(second.snapshot.tree, first.snapshot.tree);
    assert.equal(git(dir, ['rev-parse', 'refs/chant/wip/main']).trim(), second.snapshot.commit);
    git(dir, ['fsck', '--no-dangling', '--strict']);
  });

  it('lets a restore whose working tree took nothing from the caches record onto a chain rewritten meanwhile', async () => {
    const dir = makeRepo({ 'a.txt': 'a\n', 'b.txt': 'b\n' });
    const store = new WipStore({ cwd: dir, policy: null });
    writeFiles(dir, { 'a.txt': 'two\n' });
    const saved = await store.save({ label: 'two' });
    git(dir, ['checkout', '--', '.']);
    let rewritten = '';
    const restored = await store.restore({
      snapshot: saved.snapshot.commit,
      onProgress: (progress) => {
        if (progress.phase !== 'checkpoint' || rewritten !== '') return;
        // A prune elsewhere rewrites the chain: the same tree on a new commit.
        rewritten = snapshotOn(dir, saved.snapshot.tree, [], 'two');
        git(dir, ['update-ref', 'refs/chant/wip/main', rewritten, saved.snapshot.commit]);
      },
    });
    assert.notEqual(rewritten, '');
    assert.equal(git(dir, ['rev-parse', `${restored.checkpoint.snapshot.commit}^1`]).trim(), rewritten);
    assert.equal(readFileSync(join(dir, 'a.txt'), 'utf8'), 'two\n');
    git(dir, ['fsck', '--no-dangling']);
  });

  it('puts the checkpoint of a restore onto the tip read under the lock, where the caches were trusted', async () => {
    const dir = makeRepo({ 'a.txt': 'a\n', 'b.txt': 'b\n' });
    const store = new WipStore({ cwd: dir, policy: null });
    writeFiles(dir, { 'a.txt': 'one\n' });
    const first = await store.save({ label: 'one' });
    writeFiles(dir, { 'a.txt': 'two\n', 'c.txt': 'new\n' });
    const expected = stagedTree(dir);
    let resaved = '';
    const restored = await store.restore({
      snapshot: first.snapshot.commit,
      onProgress: (progress) => {
        if (progress.phase !== 'staging' || resaved !== '') return;
        // Another save of the same tree lands before the restore reads the working tree.
        resaved = snapshotOn(dir, first.snapshot.tree, [first.snapshot.commit], 'again');
        git(dir, ['update-ref', 'refs/chant/wip/main', resaved, first.snapshot.commit]);
      },
    });
    assert.notEqual(resaved, '');
    assert.equal(restored.checkpoint.snapshot.tree, expected);
    assert.equal(git(dir, ['rev-parse', `${restored.checkpoint.snapshot.commit}^1`]).trim(), resaved);
    assert.equal(readFileSync(join(dir, 'a.txt'), 'utf8'), 'one\n');
    git(dir, ['fsck', '--no-dangling']);
  });
  it('takes no blob id of another length than the repository\'s from a line cut short, on either index git status reads', async () => {
    for (const minimum of [Number.POSITIVE_INFINITY, 1]) {
      const dir = tempDir();
      git(dir, ['init', '-q', '-b', 'main', '--object-format=sha256', '.']);
      writeFiles(dir, { 'd/a.txt': 'a\n', 'd/b.txt': 'b\n' });
      git(dir, ['add', '-A']);
      git(dir, ['commit', '-qm', 'base']);
      writeFiles(dir, { 'd/a.txt': 'dirty a\n', 'd/b.txt': 'dirty b\n' });
      // The cache vouches only for files last changed in a second before it read them.
      Atomics.wait(new Int32Array(new SharedArrayBuffer(4)), 0, 0, 1000 - (Date.now() % 1000) + 5);
      const build = async (): Promise<string | null> => {
        const plumbing = new Plumbing(new SimpleGitRunner(dir), dir);
        const { layout, head, replaced } = await plumbing.checkout();
        const built = await workingTreeByStatus(plumbing, layout, head as string, 'refs/chant/wip/main', { maxFileSize: DEFAULT_MAX_FILE_SIZE, replaced, racyMarginMs: 0, statusIndexMinimum: minimum });
        if (built === null) return null;
        // Recorded as a save records it: the tip then holds the tree the cache names, and its blobs are taken unseen.
        git(dir, ['update-ref', 'refs/chant/wip/main', git(dir, ['commit-tree', built.tree, '-p', head as string, '-m', 'wip']).trim()]);
        return built.tree;
      };
      await build();
      assert.equal(await build(), stagedTree(dir));
      const file = join(dir, '.git', 'chant-hash-cache');
      const text = readFileSync(file, 'utf8');
      // The end of a line's blob id lost, as a crash before the bytes reached the disk can leave
      // it: 50 of the 64 digits, within what an id of either format may hold.
      const damaged = text.replace(/(d\/a\.txt\0[^\n]*\0[0-9a-f]{50})[0-9a-f]{14}\n/, '$1\n');
      assert.notEqual(damaged, text);
      writeFileSync(file, damaged);
      const got = await build();
      assert.equal(got, stagedTree(dir), `minimum ${minimum}`);
      git(dir, ['fsck', '--no-dangling']);
    }
  });

  it("is cleaned of a killed save's unfinished copy, and of the kept private index key's and records', by the next save", async () => {
    const dir = makeRepo({ 'a.txt': '0\n' });
    const store = new WipStore({ cwd: dir, policy: null, staging: 'status' });
    // What a save killed between the write of a cache's temporary and its rename leaves.
    const left = ['chant-hash-cache', 'chant-status-index-key', 'chant-status-index-staged'].map((name) => join(dir, '.git', `${name}.999999999-0a1b2c3d.tmp`));
    for (const file of left) writeFileSync(file, 'unfinished');
    writeFiles(dir, { 'a.txt': '1\n' });
    await store.save();
    assert.deepEqual(left.filter((file) => existsSync(file)), []);
  });
});

describe('the folder memo', () => {
  it('builds again what a save built before, and the same tree, across edits, a memo gone stale and a memo that is garbage', async () => {
    const dir = makeRepo(Object.fromEntries(Array.from({ length: 30 }, (_, i) => [`f${i % 3}/g${i % 5}/file-${i}.txt`, `${i}\n`])));
    const gitDir = join(dir, '.git');
    const memo = join(gitDir, 'chant-tree-memo');
    const check = async (why: string) => {
      const got = await byStatus(dir);
      assert.ok(got !== null, why);
      git(dir, ['ls-tree', '-r', '-t', got]);
      assert.equal(got, stagedTree(dir), why);
    };
    for (let round = 0; round < 6; round += 1) {
      writeFiles(dir, { [`f${round % 3}/g${round % 5}/file-${round}.txt`]: `round ${round}\n`, [`f${round % 2}/new-${round}.txt`]: 'new\n' });
      if (round % 2 === 0) git(dir, ['add', '-A', '--', `f${round % 3}`]);
      await check(`round ${round}`);
      assert.match(readFileSync(memo, 'latin1'), /^root [0-9a-f]{40}\n[0-9a-f]{40} (?:-|[0-9a-f]{40})\n/);
    }
    // Every loose tree the memo names is removed (as a prune would): each is built again.
    for (const line of readFileSync(memo, 'latin1').trim().split('\n')) {
      const oid = line.split(' ')[1] as string;
      if (oid !== '-') rmSync(join(gitDir, 'objects', oid.slice(0, 2), oid.slice(2)), { force: true });
    }
    await check('after the memo\'s trees were pruned');
    writeFileSync(memo, 'not a memo\n\0\0 garbage\n');
    await check('with a memo that is garbage');
    const before = readFileSync(memo, 'latin1');
    await check('again, from the memo alone');
    assert.equal(readFileSync(memo, 'latin1'), before, 'a save with nothing new remembers the same folders');
  });

  it('takes no tree id of another length than the repository\'s from a line cut short', async () => {
    const dir = tempDir();
    git(dir, ['init', '-q', '-b', 'main', '--object-format=sha256', '.']);
    writeFiles(dir, { 'd/a.txt': 'a\n', 'd/b.txt': 'b\n', 'top.txt': 'top\n' });
    git(dir, ['add', '-A']);
    git(dir, ['commit', '-qm', 'base']);
    writeFiles(dir, { 'd/a.txt': 'dirty a\n' });
    const build = async (): Promise<string | null> => {
      const plumbing = new Plumbing(new SimpleGitRunner(dir), dir);
      const { layout, head, replaced } = await plumbing.checkout();
      const built = await workingTreeByStatus(plumbing, layout, head as string, 'refs/chant/wip/main', { maxFileSize: DEFAULT_MAX_FILE_SIZE, replaced, racyMarginMs: 0 });
      if (built === null) return null;
      // Recorded as a save records it: the tip then holds the trees the memo names, taken unseen.
      git(dir, ['update-ref', 'refs/chant/wip/main', git(dir, ['commit-tree', built.tree, '-p', head as string, '-m', 'wip']).trim()]);
      return built.tree;
    };
    assert.equal(await build(), stagedTree(dir));
    const memo = join(dir, '.git', 'chant-tree-memo');
    const folder = git(dir, ['rev-parse', 'refs/chant/wip/main:d']).trim();
    const text = readFileSync(memo, 'latin1');
    // The folder's line cut to 50 of its 64 digits, within what an id of either format may hold,
    // and moved last, where a crash before the bytes reached the disk cuts a file short.
    const line = text.split('\n').find((entry) => entry.endsWith(` ${folder}`)) as string;
    assert.ok(line !== undefined);
    writeFileSync(memo, `${text.replace(`${line}\n`, '')}${line.slice(0, -14)}\n`, 'latin1');
    // A change at the top only: the folder's own inputs are what the memo's line was built from.
    writeFiles(dir, { 'top.txt': 'top changed\n' });
    assert.equal(await build(), stagedTree(dir));
    git(dir, ['fsck', '--no-dangling']);
  });
});

describe('choosing how a save stages', () => {
  const countedStore = (dir: string, options: { staging?: 'auto' | 'status' | 'index'; env?: Record<string, string> } = {}) => {
    const calls: string[] = [];
    const runner = new SimpleGitRunner(dir);
    const store = new WipStore({ cwd: dir, policy: null, ...options, git: { run: (args, opts) => (calls.push(args[0] as string), runner.run(args, opts)) } });
    return { store, calls };
  };

  it('stages from status by default at every size, through a temporary copy of the index when told, and hands back to the index what status cannot decide', async () => {
    const small = makeRepo({ 'a.txt': 'a\n' });
    writeFiles(small, { 'a.txt': 'changed\n' });
    const auto = countedStore(small);
    const first = await auto.store.save({ label: 'auto' });
    assert.ok(auto.calls.includes('status') && !auto.calls.includes('add'), auto.calls.join(' '));
    assert.equal(first.snapshot.tree, stagedTree(small));
    const told = countedStore(small, { env: { CHANT_WIP_STAGING: 'index' } });
    writeFiles(small, { 'a.txt': 'again\n' });
    const byIndex = await told.store.save({ label: 'told by the environment' });
    assert.ok(told.calls.includes('add') && !told.calls.includes('status'), told.calls.join(' '));
    assert.equal(byIndex.snapshot.tree, stagedTree(small));
    // An untracked executable: status cannot tell its mode, so the save is handed to the index.
    writeFiles(small, { 'tool.sh': '#!/bin/sh\n' });
    chmodSync(join(small, 'tool.sh'), 0o755);
    const handed = countedStore(small);
    const third = await handed.store.save({ label: 'handed back' });
    assert.ok(handed.calls.includes('status') && handed.calls.includes('add'), handed.calls.join(' '));
    assert.equal(third.snapshot.tree, stagedTree(small));

    // 25,000 entries make an index of more than 2 MiB (the size from which auto once took status); their files need not exist.
    const large = makeRepo({ 'a.txt': 'a\n' });
    const blob = git(large, ['hash-object', '-w', '--stdin'], { input: 'x\n' }).trim();
    git(large, ['update-index', '--index-info'], { input: Array.from({ length: 25_000 }, (_, i) => `100644 ${blob}\tbulk/d${i % 50}/f${i}.txt\n`).join('') });
    git(large, ['commit', '-qm', 'bulk']);
    git(large, ['checkout', '-q', '--', '.']);
    writeFiles(large, { 'bulk/d3/f3.txt': 'edited\n' });
    const big = countedStore(large);
    const { snapshot } = await big.store.save({ label: 'large' });
    assert.ok(big.calls.includes('status') && !big.calls.includes('add'), big.calls.join(' '));
    assert.equal(snapshot.tree, stagedTree(large));
    const index = countedStore(large, { staging: 'index' });
    writeFiles(large, { 'bulk/d3/f3.txt': 'edited again\n' });
    const second = await index.store.save({ label: 'large, through the index' });
    assert.ok(index.calls.includes('add') && !index.calls.includes('status'), index.calls.join(' '));
    assert.equal(second.snapshot.tree, stagedTree(large));
  });
});

describe('the pack a save from status hands to git', () => {
  it('holds each object as stored zlib blocks that inflate to it, across the 64 KiB block size', () => {
    for (const size of [0, 1, 100, 65_535, 65_536, 65_537, 200_000]) {
      const body = Buffer.from(Array.from({ length: size }, (_, i) => (i * 7919 + (i >> 8)) & 0xff));
      const stored = zlibStored(body);
      assert.deepEqual(inflateSync(stored), body, `${size} bytes`);
      assert.equal(stored.readUInt32BE(stored.length - 4), adler32Reference(body), `${size} bytes: the checksum`);
    }
  });

  it('writes a folder whose tree is larger than a stored block', async () => {
    const files = Object.fromEntries(Array.from({ length: 2_500 }, (_, i) => [`big/${'n'.repeat(20)}-${i}.txt`, `${i}\n`]));
    const dir = makeRepo({ 'README.md': 'x\n', ...files });
    writeFiles(dir, { 'big/added.txt': 'added\n', 'big/nnnnnnnnnnnnnnnnnnnn-7.txt': 'changed\n' });
    assert.ok(Number(git(dir, ['cat-file', '-s', 'HEAD:big']).trim()) > 65_535);
    const tree = await byStatus(dir);
    assert.equal(tree, stagedTree(dir));
    git(dir, ['ls-tree', '-r', tree as string]);
  });
});

/** Adler-32 as RFC 1950 defines it, byte by byte. */
function adler32Reference(data: Uint8Array): number {
  let a = 1;
  let b = 0;
  for (const byte of data) {
    a = (a + byte) % 65521;
    b = (b + a) % 65521;
  }
  return (b * 65536 + a) >>> 0;
}


describe('what only git add can decide', () => {
  const counted = (dir: string) => {
    const calls: string[] = [];
    const runner = new SimpleGitRunner(dir);
    const store = new WipStore({ cwd: dir, policy: null, git: { run: (args, opts) => (calls.push(args[0] as string), runner.run(args, opts)) } });
    return { store, calls };
  };

  it('takes a file swapped for a symlink after status named it as git add does: the link, never its target\'s bytes', async () => {
    for (const tracked of [true, false]) {
      const dir = makeRepo({ top: 'top\n', ...(tracked ? { victim: 'one\n' } : {}) });
      writeFiles(dir, { victim: 'two\n' });
      const outside = join(tempDir(), 'secret');
      writeFileSync(outside, 'outside bytes\n');
      const runner = new SimpleGitRunner(dir);
      const store = new WipStore({
        cwd: dir, policy: null,
        git: {
          run: async (args, options) => {
            const out = await runner.run(args, options);
            // Right after status named the file: another process makes it a symlink out of the tree.
            if (args.includes('status')) {
              rmSync(join(dir, 'victim'));
              symlinkSync(outside, join(dir, 'victim'));
            }
            return out;
          },
        },
      });
      const saved = await store.save({ label: 'swapped' });
      const entry = git(dir, ['ls-tree', saved.snapshot.tree, 'victim']);
      assert.match(entry, /^120000 blob /, `${tracked ? 'tracked' : 'untracked'}: ${entry}`);
      assert.equal(git(dir, ['cat-file', 'blob', `${saved.snapshot.tree}:victim`]), outside);
    }
  });

  for (const damage of ['missing', 'corrupt'] as const) {
    it(`keeps the files of a folder whose tree in HEAD is ${damage}: no empty folder, git add decides from the index`, async () => {
      const dir = makeRepo({ top: 'top\n', 'd/a': 'a\n', 'd/e/b': 'b\n' });
      const tree = git(dir, ['rev-parse', 'HEAD:d']).trim();
      const file = join(dir, '.git', 'objects', tree.slice(0, 2), tree.slice(2));
      if (damage === 'missing') rmSync(file);
      else {
        chmodSync(file, 0o644);
        writeFileSync(file, 'garbage');
      }
      writeFiles(dir, { 'd/new': 'new\n' });
      assert.equal(await byStatus(dir), null, 'the tree is git add\'s to build');
      const { store, calls } = counted(dir);
      const saved = await store.save({ label: damage });
      assert.ok(calls.includes('add'), calls.join(' '));
      assert.deepEqual(git(dir, ['ls-tree', '-r', '--name-only', saved.snapshot.tree]).trim().split('\n'), ['d/a', 'd/e/b', 'd/new', 'top']);
    });
  }

  for (const flag of ['--skip-worktree', '--assume-unchanged']) {
    it(`keeps the local edit of a file under ${flag} whose index already differs from HEAD`, async () => {
      const dir = makeRepo({ f: 'one\n', g: 'x\n' });
      writeFiles(dir, { f: 'two\n' });
      git(dir, ['add', 'f']);
      git(dir, ['update-index', flag, 'f']);
      writeFiles(dir, { f: 'three\n' });
      const { store, calls } = counted(dir);
      const saved = await store.save({ label: 'flagged' });
      assert.ok(calls.includes('add'), calls.join(' '));
      // Not git add's tree, which keeps the index's f: a save takes the edit under the flag, and says so.
      assert.equal(git(dir, ['cat-file', 'blob', `${saved.snapshot.commit}:f`]), 'three\n');
      assert.deepEqual(saved.flagged?.map((entry) => entry.path), ['f']);
    });
  }

  it('keeps the CRLFs git add keeps where line endings convert automatically and the index holds a CR, and builds from status where it holds none', async () => {
    for (const setting of ['attributes', 'autocrlf'] as const) {
      const dir = makeRepo({ 'f.txt': 'a\r\nb\r\n', 'plain.txt': 'a\nb\n', g: 'x\n' });
      if (setting === 'attributes') {
        writeFiles(dir, { '.gitattributes': '* text=auto\n' });
        git(dir, ['add', '.gitattributes']);
        git(dir, ['commit', '-qm', 'attributes']);
      } else {
        git(dir, ['config', 'core.autocrlf', 'true']);
      }
      writeFiles(dir, { 'f.txt': 'a\r\nb\r\nc\r\n' });
      const first = counted(dir);
      const crlf = await first.store.save({ label: 'crlf' });
      assert.ok(first.calls.includes('add'), `${setting}: ${first.calls.join(' ')}`);
      assert.equal(crlf.snapshot.tree, stagedTree(dir), setting);
      assert.equal(git(dir, ['cat-file', 'blob', `${crlf.snapshot.commit}:f.txt`]), 'a\r\nb\r\nc\r\n', setting);
      // A file whose blob has no CR is converted by git add and by hash-object alike.
      git(dir, ['checkout', '--', 'f.txt']);
      writeFiles(dir, { 'plain.txt': 'a\r\nb\r\nc\r\n' });
      const second = counted(dir);
      const converted = await second.store.save({ label: 'converted' });
      assert.ok(second.calls.includes('status') && !second.calls.includes('add'), `${setting}: ${second.calls.join(' ')}`);
      assert.equal(converted.snapshot.tree, stagedTree(dir), setting);
    }
  });

  it('reads a .gitattributes under a flag or gone from the working tree as git add does: from the index', async () => {
    for (const how of ['skip-worktree', 'deleted'] as const) {
      const dir = makeRepo({ 'd/.gitattributes': '*.txt text\n', 'd/f.txt': 'a\n', g: 'x\n' });
      if (how === 'skip-worktree') git(dir, ['update-index', '--skip-worktree', 'd/.gitattributes']);
      rmSync(join(dir, 'd', '.gitattributes'));
      writeFiles(dir, { 'd/f.txt': 'a\r\nb\r\n' });
      const { store, calls } = counted(dir);
      const saved = await store.save({ label: how });
      assert.ok(calls.includes('add'), `${how}: ${calls.join(' ')}`);
      assert.equal(saved.snapshot.tree, stagedTree(dir), how);
    }
  });
});

describe('the private index git status reads where the hash cache knows many files', () => {
  /**
   * Builds as a save does, with the private index from one file on, and records the tree on the
   * wip tip; whether git read the private index (status, or diff-files on a kept one), and
   * whether git status ran at all.
   */
  const buildAndRecord = async (dir: string, keep = true, racyMarginMs = 0): Promise<{ tree: string | null; privately: boolean; kept: boolean; status: boolean; commands: string[] }> => {
    const runner = new SimpleGitRunner(dir);
    const commands: string[] = [];
    let privately = false;
    let kept = false;
    let status = false;
    const git_: GitRunner = {
      run: (args, options) => {
        const file = args[0] === 'status' || args[0] === 'diff-files' ? options?.env?.GIT_INDEX_FILE : undefined;
        privately ||= file !== undefined;
        kept ||= file?.endsWith('chant-status-index') === true;
        status ||= args[0] === 'status';
        commands.push(args[0] as string);
        return runner.run(args, options);
      },
    };
    const plumbing = new Plumbing(git_, dir);
    const { layout, head, replaced } = await plumbing.checkout();
    const built = await workingTreeByStatus(plumbing, layout, head as string, 'refs/chant/wip/main', { maxFileSize: DEFAULT_MAX_FILE_SIZE, replaced, racyMarginMs, statusIndexMinimum: 1, keep });
    if (built !== null) {
      // Recorded as a save records it, on the tip as it is: the tip then holds the tree the
      // caches name, and the private index is kept for the next save.
      const tip = git(dir, ['rev-parse', '-q', '--verify', 'refs/chant/wip/main'], { allowFail: true }).trim();
      const commit = git(dir, ['commit-tree', built.tree, ...(tip === '' ? [] : ['-p', tip]), '-p', head as string, '-m', 'wip']).trim();
      git(dir, ['update-ref', 'refs/chant/wip/main', commit]);
      await built.keepStatusIndex(commit);
    }
    return { tree: built?.tree ?? null, privately, kept, status, commands };
  };
  /** Whether every blob a tree names is in the repository. */
  const blobsThere = (dir: string, tree: string): boolean => {
    const blobs = git(dir, ['ls-tree', '-r', '-z', tree]).split('\0').filter((line) => / blob /.test(line)).map((line) => (line.split(' ')[2] as string).split('\t')[0] as string);
    const checked = git(dir, ['cat-file', '--batch-check'], { input: blobs.map((oid) => `${oid}\n`).join('') });
    return !checked.includes('missing');
  };
  const leftovers = (dir: string) => readdirSync(join(dir, '.git')).filter((name) => name.startsWith('chant-wip-'));
  // The private index vouches only for files last changed in a second before the save read them.
  const nextSecond = () => Atomics.wait(new Int32Array(new SharedArrayBuffer(4)), 0, 0, 1000 - (Date.now() % 1000) + 5);
  // What git add --all stages, flags of local edits cleared (see addAllTree).
  const expectedTree = addAllTree;

  it(`gives the tree git add --all stages, round after round, on ${Math.ceil(RUNS / 3)} random histories (seed ${SEED})`, async (t) => {
    let privately = 0;
    let reused = 0;
    let rounds = 0;
    const flagArb = fc.record({ flag: fc.constantFrom('--assume-unchanged', '--skip-worktree', '--no-assume-unchanged'), path: fc.nat() });
    const stepArb = fc.oneof(
      { weight: 6, arbitrary: opArb.map((op) => ({ kind: 'op' as const, op })) },
      { weight: 1, arbitrary: flagArb.map((flag) => ({ kind: 'flag' as const, ...flag })) },
      { weight: 1, arbitrary: fc.nat().map((path) => ({ kind: 'same-size' as const, path })) },
      { weight: 1, arbitrary: fc.constant({ kind: 'commit' as const }) },
      { weight: 1, arbitrary: fc.nat().map((path) => ({ kind: 'checkout' as const, path })) },
      { weight: 1, arbitrary: fc.constant({ kind: 'back' as const }) },
      // The wip ref moved by another hand: a restore's checkpoint on the tip, a prune that
      // rewrites the chain (or a chain deleted and begun again on HEAD's tree), git then
      // taking what it no longer reaches.
      { weight: 1, arbitrary: fc.constant({ kind: 'checkpoint' as const }) },
      { weight: 1, arbitrary: fc.boolean().map((fresh) => ({ kind: 'prune' as const, fresh })) },
    );
    await fc.assert(fc.asyncProperty(configArb, fc.array(fc.array(stepArb, { minLength: 0, maxLength: 4 }), { minLength: 3, maxLength: 6 }), async (config, batches) => {
      const dir = randomRepo(config);
      // Every file modified since HEAD from the start, so that the hash cache knows them all, in
      // a second before the first save reads them: only then may the private index vouch for one.
      writeFiles(dir, Object.fromEntries(PATHS.map((path) => [path, `${path} modified\n`])));
      nextSecond();
      for (const batch of [[], ...batches]) {
        for (const step of batch) {
          const path = PATHS[(step.kind === 'flag' || step.kind === 'same-size' || step.kind === 'checkout' ? step.path : 0) % PATHS.length] as string;
          const tip = () => git(dir, ['rev-parse', '-q', '--verify', 'refs/chant/wip/main'], { allowFail: true }).trim();
          if (step.kind === 'op') apply(dir, step.op);
          else if (step.kind === 'flag') git(dir, ['update-index', step.flag, '--', path], { allowFail: true });
          else if (step.kind === 'commit') git(dir, ['commit', '-q', '-a', '-m', 'next'], { allowFail: true });
          else if (step.kind === 'checkout') git(dir, ['checkout', '-q', '--', path], { allowFail: true });
          else if (step.kind === 'back') git(dir, ['reset', '-q', '--soft', 'HEAD~1'], { allowFail: true });
          else if (step.kind === 'checkpoint') {
            if (tip() !== '') git(dir, ['update-ref', 'refs/chant/wip/main', git(dir, ['commit-tree', `${tip()}^{tree}`, '-p', tip(), '-m', 'checkpoint']).trim()]);
          } else if (step.kind === 'prune') {
            if (tip() !== '') git(dir, ['update-ref', 'refs/chant/wip/main', git(dir, ['commit-tree', step.fresh ? 'HEAD^{tree}' : `${tip()}^{tree}`, '-m', 'pruned']).trim()]);
            git(dir, ['reflog', 'expire', '--expire=now', '--all']);
            git(dir, ['prune', '--expire=now']);
          } else {
            // The same size, its mtime put back: only the ctime says the file changed.
            try {
              const before = lstatSync(join(dir, path));
              if (!before.isFile()) continue;
              Atomics.wait(new Int32Array(new SharedArrayBuffer(4)), 0, 0, 15);
              writeFileSync(join(dir, path), readFileSync(join(dir, path), 'latin1').split('').reverse().join('').replace(/^$/, ''), 'latin1');
              utimesSync(join(dir, path), before.atime, before.mtime);
            } catch {
              // gone, or a folder now
            }
          }
        }
        const got = await buildAndRecord(dir);
        rounds += 1;
        if (got.privately) privately += 1;
        if (got.kept) reused += 1;
        assert.deepEqual(leftovers(dir), [], 'the private index is removed');
        if (got.tree === null) continue;
        assert.ok(blobsThere(dir, got.tree), `every blob the tree names is there, after ${JSON.stringify(batch)}`);
        const expected = expectedTree(dir);
        if (got.tree !== expected) assert.equal(git(dir, ['ls-tree', '-r', got.tree]), git(dir, ['ls-tree', '-r', expected]), `${got.privately ? 'through the private index' : 'on the checkout\'s index'}, after ${JSON.stringify(batch)}: ${JSON.stringify(config)} ${JSON.stringify(batches)}`);
      }
    }), { seed: SEED, numRuns: Math.ceil(RUNS / 3) });
    t.diagnostic(`${privately} of ${rounds} rounds read through the private index, ${reused} through one kept from the round before`);
    assert.ok(privately > rounds / 4, 'the private index is taken in many rounds');
    assert.ok(reused > rounds / 20, 'the kept private index is taken in some rounds');
  });

  /** A repository of `count` files in three folders, each modified since HEAD in a second before the first save. */
  const dirtyRepo = (count: number): string => {
    const files = Object.fromEntries(Array.from({ length: count }, (_, i) => [`d${i % 3}/f${i}.txt`, `${i}\n`]));
    const dir = makeRepo({ '.gitignore': '*.ign\n', ...files });
    writeFiles(dir, Object.fromEntries(Object.keys(files).map((path) => [path, `${path} dirty\n`])));
    nextSecond();
    return dir;
  };

  it('keeps the private index from one save to the next, and makes it again where the checkout\'s index changed', async () => {
    const dir = dirtyRepo(12);
    assert.equal((await buildAndRecord(dir)).privately, false, 'the first save has no cache to go by');
    const second = await buildAndRecord(dir);
    assert.deepEqual([second.privately, second.kept], [true, false], 'the second makes the copy');
    const third = await buildAndRecord(dir);
    assert.deepEqual([third.kept, third.tree], [true, expectedTree(dir)], 'the third takes it as it is');
    assert.equal(third.status, false, 'what status said of the copy against HEAD is kept: git compares only the working tree with it');
    writeFiles(dir, { 'd2/f5.txt': 'changed since the copy\n' });
    const fourth = await buildAndRecord(dir);
    assert.deepEqual([fourth.kept, fourth.status, fourth.tree], [true, false, expectedTree(dir)], 'a file changed since the copy is read and hashed');
    // A file deleted, one made, one ignored, one put back as HEAD holds it.
    rmSync(join(dir, 'd0/f0.txt'));
    writeFiles(dir, { 'd1/new.txt': 'untracked\n', 'd1/skip.ign': 'ignored\n', 'd2/f2.txt': '2\n' });
    const deleted = await buildAndRecord(dir);
    assert.deepEqual([deleted.kept, deleted.status, deleted.tree], [true, false, expectedTree(dir)], 'a deletion, an untracked file and a file as HEAD holds it');
    assert.equal(git(dir, ['cat-file', '-t', `${deleted.tree}:d0/f0.txt`], { allowFail: true }), '', 'the deleted file is gone from the tree');
    // An ignored file added by force: only the checkout's index says it is tracked.
    writeFiles(dir, { 'build.ign': 'kept by force\n' });
    git(dir, ['add', '-f', 'build.ign']);
    const fifth = await buildAndRecord(dir);
    assert.equal(git(dir, ['cat-file', 'blob', `${fifth.tree}:build.ign`], { allowFail: true }), 'kept by force\n');
    assert.equal(fifth.tree, expectedTree(dir));
    assert.equal(fifth.kept, false, 'the checkout\'s index changed: the copy is made again');
    assert.equal((await buildAndRecord(dir)).kept, true, 'and kept again');
  });

  it('builds through the kept copy where a tracked symlink is racily clean in the checkout\'s index, and reads a symlink changed since', async () => {
    const dir = dirtyRepo(12);
    symlinkSync('d0/f0.txt', join(dir, 'link'));
    git(dir, ['add', 'link']);
    git(dir, ['commit', '-q', '-m', 'link']);
    // Every entry as racily clean as a checkout leaves them (written in the second of the index):
    // the copy gives each size 0, and git diff-files names each as changed, the symlink too.
    utimesSync(join(dir, '.git', 'index'), 1_000_000_000, 1_000_000_000);
    writeFiles(dir, Object.fromEntries(Array.from({ length: 12 }, (_, i) => [`d${i % 3}/f${i}.txt`, `d${i % 3}/f${i}.txt dirty again\n`])));
    nextSecond();
    await buildAndRecord(dir);
    assert.equal((await buildAndRecord(dir)).privately, true);
    const third = await buildAndRecord(dir);
    assert.deepEqual([third.kept, third.tree], [true, expectedTree(dir)], 'the symlink unchanged is no change: the tree is built, not handed to git add');
    rmSync(join(dir, 'link'));
    symlinkSync('d1/f1.txt', join(dir, 'link'));
    const fourth = await buildAndRecord(dir);
    assert.equal(fourth.kept, true);
    assert.ok(fourth.tree === null || fourth.tree === expectedTree(dir), 'a symlink that changed is never taken as it was');
  });

  it('makes the copy again where the wip tip moved by another hand, whose chain may not hold the blobs it names', async () => {
    const dir = dirtyRepo(12);
    await buildAndRecord(dir);
    await buildAndRecord(dir);
    assert.equal((await buildAndRecord(dir)).kept, true);
    // A chain deleted and started again elsewhere on HEAD's tree; git prunes what it no longer reaches.
    git(dir, ['update-ref', 'refs/chant/wip/main', git(dir, ['commit-tree', 'HEAD^{tree}', '-m', 'another']).trim()]);
    git(dir, ['reflog', 'expire', '--expire=now', '--all']);
    git(dir, ['prune', '--expire=now']);
    const got = await buildAndRecord(dir);
    assert.ok(blobsThere(dir, got.tree as string), 'every blob the snapshot names is there');
    assert.equal(got.tree, expectedTree(dir));
    assert.equal(got.kept, false);
  });

  for (const damage of ['truncated', 'an entry rewritten in place', 'with its record against HEAD rewritten'] as const) {
    it(`does not take a kept copy ${damage}, and the save is still right`, async () => {
      const dir = dirtyRepo(12);
      await buildAndRecord(dir);
      await buildAndRecord(dir);
      const copy = join(dir, '.git', 'chant-status-index');
      const bytes = readFileSync(copy);
      if (damage === 'truncated') writeFileSync(copy, bytes.subarray(0, bytes.length >> 1));
      else if (damage === 'with its record against HEAD rewritten') {
        // d1/f4.txt recorded as HEAD holds it: a copy taken with it would keep HEAD's blob.
        const staged = join(dir, '.git', 'chant-status-index-staged');
        const records = readFileSync(staged, 'utf8').split('\0');
        assert.ok(records.some((record) => record.endsWith(' d1/f4.txt')));
        writeFileSync(staged, records.filter((record) => !record.endsWith(' d1/f4.txt')).join('\0'));
      } else {
        // The blob of d1/f4.txt's entry made another file's blob.
        const at = bytes.indexOf(Buffer.from('d1/f4.txt\0'));
        const other = git(dir, ['hash-object', '-w', '--stdin'], { input: 'not the file\n' }).trim();
        Buffer.from(other, 'hex').copy(bytes, at - 2 - 20);
        writeFileSync(copy, bytes);
      }
      const got = await buildAndRecord(dir);
      assert.equal(git(dir, ['cat-file', 'blob', `${got.tree}:d1/f4.txt`]), 'd1/f4.txt dirty\n');
      assert.equal(got.tree, expectedTree(dir));
      assert.equal(got.kept, false);
    });
  }

  it('never writes the checkout\'s index, and reads again a file rewritten at the same size with its mtime put back', async () => {
    const files = Object.fromEntries(Array.from({ length: 12 }, (_, i) => [`d${i % 3}/f${i}.txt`, `${i}\n`]));
    const dir = makeRepo(files);
    writeFiles(dir, Object.fromEntries(Object.keys(files).map((path) => [path, `${path} dirty\n`])));
    nextSecond();
    const indexFile = join(dir, '.git', 'index');
    const before = { bytes: readFileSync(indexFile), mtimeMs: statSync(indexFile).mtimeMs };
    assert.equal((await buildAndRecord(dir)).privately, false, 'the first save has no cache to go by');
    const second = await buildAndRecord(dir);
    assert.equal(second.privately, true);
    // expectedTree copies the index: stagedTree's hard link would move its ctime, and the copy would be made again.
    assert.equal(second.tree, expectedTree(dir));
    const path = join(dir, 'd1/f4.txt');
    const old = statSync(path);
    Atomics.wait(new Int32Array(new SharedArrayBuffer(4)), 0, 0, 20);
    writeFileSync(path, 'd1/f4.txt DIRTY\n');
    utimesSync(path, old.atime, old.mtime);
    assert.equal(statSync(path).size, old.size);
    const third = await buildAndRecord(dir);
    assert.deepEqual([third.privately, third.kept, third.status], [true, true, false], 'git diff-files reads the kept copy');
    // Where git status ran alone, two processes read the working tree through the kept copy: no more.
    assert.deepEqual([...third.commands].sort(), ['diff-files', 'ls-files'], third.commands.join(', '));
    assert.equal(third.tree, expectedTree(dir));
    assert.equal(git(dir, ['cat-file', 'blob', `${third.tree}:d1/f4.txt`]), 'd1/f4.txt DIRTY\n');
    assert.deepEqual(readFileSync(indexFile), before.bytes, 'the checkout\'s index is as it was');
    assert.equal(statSync(indexFile).mtimeMs, before.mtimeMs);
    assert.deepEqual(leftovers(dir), []);
  });

  it('reads again a file the checkout\'s index holds as racily clean, though the private index is written in a later second', async () => {
    const files = Object.fromEntries(Array.from({ length: 8 }, (_, i) => [`f${i}.txt`, `${i}\n`]));
    const dir = makeRepo(files);
    writeFiles(dir, { 'f0.txt': 'dirty zero\n', 'f1.txt': 'dirty one\n' });
    nextSecond();
    await buildAndRecord(dir);
    // At the start of a second: staged, then rewritten at the same size within that second, the
    // file has the stat data (to the second, as git compares it) its entry has; only the entry's
    // mtime, not older than the index, tells git to read it again.
    Atomics.wait(new Int32Array(new SharedArrayBuffer(4)), 0, 0, 1000 - (Date.now() % 1000) + 5);
    writeFileSync(join(dir, 'f5.txt'), 'five!\n');
    git(dir, ['add', 'f5.txt']);
    writeFileSync(join(dir, 'f5.txt'), 'FIVE!\n');
    const entry = git(dir, ['ls-files', '--debug', 'f5.txt']);
    const written = statSync(join(dir, '.git', 'index')).mtimeMs;
    Atomics.wait(new Int32Array(new SharedArrayBuffer(4)), 0, 0, 1000 - (Date.now() % 1000) + 5);
    const got = await buildAndRecord(dir);
    if (Math.floor(statSync(join(dir, 'f5.txt')).mtimeMs / 1000) !== Math.floor(written / 1000)) {
      assert.fail(`the second turned over between the add and the rewrite; run again (${entry})`);
    }
    assert.equal(got.privately, true);
    assert.equal(got.tree, stagedTree(dir));
    assert.equal(git(dir, ['cat-file', 'blob', `${got.tree}:f5.txt`]), 'FIVE!\n');
  });

  for (const [key, value] of [['core.trustctime', 'false'], ['core.checkStat', 'minimal']] as const) {
    it(`is not made under ${key}=${value}, where git would take a file rewritten at the same size with its mtime put back for the one the cache recorded`, async () => {
      const files = Object.fromEntries(Array.from({ length: 6 }, (_, i) => [`d/f${i}.txt`, `file ${i}\n`]));
      const dir = makeRepo(files);
      git(dir, ['config', key, value]);
      writeFiles(dir, Object.fromEntries(Object.keys(files).map((path) => [path, `${path} modified\n`])));
      nextSecond();
      await buildAndRecord(dir);
      await buildAndRecord(dir);
      const path = join(dir, 'd/f3.txt');
      const old = statSync(path);
      Atomics.wait(new Int32Array(new SharedArrayBuffer(4)), 0, 0, 20);
      writeFileSync(path, 'D/F3.TXT MODIFIED\n');
      utimesSync(path, old.atime, old.mtime);
      const got = await buildAndRecord(dir);
      assert.equal(git(dir, ['cat-file', 'blob', `${got.tree}:d/f3.txt`]), 'D/F3.TXT MODIFIED\n');
      assert.equal(got.tree, stagedTree(dir));
      assert.equal(got.privately, false);
    });
  }

  it('reads again a file rewritten at the same size in the second it was hashed, where the process\'s clock runs ahead of the file system\'s', async () => {
    // A checkout on a file system whose times come from another clock (a network share, a
    // container's bind mount of its host's folder) that is behind this process's: the file's
    // times look seconds older than they are, and git compares them to the second.
    const dir = dirtyRepo(6);
    const realNow = Date.now;
    Date.now = () => realNow() + 10_000;
    try {
      const path = join(dir, 'd0/f0.txt');
      for (let attempt = 0; ; attempt += 1) {
        nextSecond();
        const second = Math.floor(realNow() / 1000);
        writeFileSync(path, `first ${attempt}\n`);
        await buildAndRecord(dir, true, 3_000);
        // Rewritten at the same size once the save read it, in the same second.
        writeFileSync(path, `FIRST ${attempt}\n`);
        if (Math.floor(statSync(path).ctimeMs / 1000) === second) break;
        assert.ok(attempt < 5, 'the second turned over during the save every time');
      }
      nextSecond();
      const got = await buildAndRecord(dir, true, 3_000);
      assert.equal(git(dir, ['cat-file', 'blob', `${got.tree}:d0/f0.txt`]), readFileSync(path, 'utf8'));
      assert.equal(got.tree, expectedTree(dir));
    } finally {
      Date.now = realNow;
    }
  });

  it('goes back to the checkout\'s own index when a .gitattributes changed', async () => {
    const files = Object.fromEntries(Array.from({ length: 6 }, (_, i) => [`d/f${i}.txt`, `${i}\n`]));
    const dir = makeRepo(files);
    writeFiles(dir, Object.fromEntries(Object.keys(files).map((path) => [path, `${path} dirty\r\n`])));
    nextSecond();
    await buildAndRecord(dir);
    assert.equal((await buildAndRecord(dir)).privately, true);
    writeFiles(dir, { 'd/.gitattributes': '* text eol=lf\n' });
    const calls: string[] = [];
    const runner = new SimpleGitRunner(dir);
    const plumbing = new Plumbing({ run: (args, options) => (calls.push(`${args[0]}${options?.env?.GIT_INDEX_FILE === undefined ? '' : ' (private)'}`), runner.run(args, options)) }, dir);
    const { layout, head } = await plumbing.checkout();
    const built = await workingTreeByStatus(plumbing, layout, head as string, 'refs/chant/wip/main', { maxFileSize: DEFAULT_MAX_FILE_SIZE, replaced: false, racyMarginMs: 0, statusIndexMinimum: 1 });
    assert.equal(built?.tree, stagedTree(dir));
    assert.deepEqual(calls.filter((call) => call.startsWith('status')), ['status'], 'the cache knows nothing under a .gitattributes that changed: no private index');
  });
});
