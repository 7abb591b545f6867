import { git, tempDir, writeFiles } from './helpers.js';
import assert from 'node:assert/strict';
import { lstatSync, mkdirSync, readdirSync, readFileSync, readlinkSync, rmSync } from 'node:fs';
import { join } from 'node:path';
import { describe, it } from 'node:test';
import fc from 'fast-check';
import { Plumbing } from '../lib/git/plumbing.js';
import { SimpleGitRunner } from '../lib/git/runner.js';
import { checkoutMayConvert, plainStagedNames, writePlainFiles } from '../lib/store/plain-checkout.js';
import { WipStore } from '../lib/store/wip-store.js';

// A restore writes its files into a staging folder from their loose blobs where git's checkout
// would convert nothing. These tests hold what it writes to what checkout-index writes, file by
// file (type, mode, bytes, link target), on random trees, attributes and configuration, and
// check that it leaves to git whatever git may convert.
const SEED = Number(process.env.CHANT_PLAIN_CHECKOUT_SEED ?? 20261203);
const RUNS = Number(process.env.CHANT_PLAIN_CHECKOUT_RUNS ?? 40);

const NAMES = ['a', 'b.txt', 'é', 'sub dir'];
const fileArb = fc.record({
  path: fc.array(fc.constantFrom(...NAMES), { minLength: 1, maxLength: 3 }).map((names) => names.join('/')),
  mode: fc.constantFrom('100644', '100755', '120000'),
  content: fc.constantFrom('one\n', 'two\r\nlines\r\n', '$Id$\n', 'target/of/link', 'caf\u00e9\n', ''),
});
const attributesArb = fc.oneof(
  { weight: 3, arbitrary: fc.constantFrom(null, '* -diff\n', '*.txt binary\n') },
  { weight: 2, arbitrary: fc.constantFrom('* text eol=crlf\n', '*.txt filter=upper\n', '* ident\n') },
);
const configArb = fc.oneof(
  { weight: 3, arbitrary: fc.constant(null) },
  { weight: 1, arbitrary: fc.constantFrom(['core.autocrlf', 'true'], ['core.symlinks', 'false'], ['core.eol', 'crlf']) },
);

/** What a folder holds, file by file: type, mode bits, bytes or link target. */
function listing(folder: string): string[] {
  const found: string[] = [];
  const walk = (sub: string) => {
    for (const name of readdirSync(join(folder, sub)).sort()) {
      const path = sub === '' ? name : `${sub}/${name}`;
      const stats = lstatSync(join(folder, path));
      if (stats.isDirectory()) walk(path);
      else if (stats.isSymbolicLink()) found.push(`${path} -> ${readlinkSync(join(folder, path))}`);
      else found.push(`${path} ${(stats.mode & 0o777).toString(8)} ${JSON.stringify(readFileSync(join(folder, path), 'latin1'))}`);
    }
  };
  walk('');
  return found;
}

/** What a folder of files staged side by side holds, as {@link listing} says it, each under its path (`names`: the staged name of each path). */
function stagedListing(folder: string, names: ReadonlyMap<string, string>): string[] {
  const found = [...names].map(([raw, name]) => {
    const path = Buffer.from(raw, 'latin1').toString('utf8');
    const stats = lstatSync(join(folder, name));
    return stats.isSymbolicLink() ? `${path} -> ${readlinkSync(join(folder, name))}` : `${path} ${(stats.mode & 0o777).toString(8)} ${JSON.stringify(readFileSync(join(folder, name), 'latin1'))}`;
  });
  assert.equal(readdirSync(folder).length, names.size, 'nothing else is staged');
  return found.sort();
}

describe('a restore\'s files written from their loose blobs', () => {
  it(`are what checkout-index writes, or left to it, on ${RUNS} random trees (seed ${SEED})`, async (t) => {
    let plain = 0;
    let handed = 0;
    await fc.assert(fc.asyncProperty(fc.array(fileArb, { minLength: 1, maxLength: 8 }), attributesArb, configArb, async (files, attributes, config) => {
      const dir = tempDir();
      git(dir, ['init', '-q', '.']);
      git(dir, ['config', 'filter.upper.smudge', 'tr a-z A-Z']);
      if (config !== null) git(dir, ['config', ...config]);
      const kept = new Map<string, { mode: string; content: string }>();
      for (const file of files) {
        const clash = [...kept.keys()].some((path) => path.startsWith(`${file.path}/`) || file.path.startsWith(`${path}/`) || path === file.path);
        if (!clash && !(file.mode === '120000' && file.content === '')) kept.set(file.path, file);
      }
      if (attributes !== null && !kept.has('.gitattributes')) kept.set('.gitattributes', { mode: '100644', content: attributes });
      const index = join(dir, '.git', 'build.index');
      const lines = [...kept].map(([path, { mode, content }]) => `${mode} ${git(dir, ['hash-object', '-w', '--stdin'], { input: content }).trim()}\t${path}\n`);
      git(dir, ['update-index', '--add', '--index-info'], { input: lines.join(''), env: { GIT_INDEX_FILE: index } });
      const tree = git(dir, ['write-tree'], { env: { GIT_INDEX_FILE: index } }).trim();
      const entries = [...kept].map(([path, { mode }]) => ({ raw: Buffer.from(path, 'utf8').toString('latin1'), mode, oid: git(dir, ['rev-parse', `${tree}:${path}`]).trim() }));
      const gitDir = join(dir, '.git');
      const mine = join(gitDir, 'mine');
      const theirs = join(gitDir, 'theirs');
      mkdirSync(mine);
      mkdirSync(theirs);
      const layout = { commonDir: gitDir, gitDir };
      const wrote = !checkoutMayConvert(layout, process.env) && writePlainFiles(join(gitDir, 'objects'), mine, tree, entries, 'sha1');
      await new Plumbing(new SimpleGitRunner(dir), dir).checkoutPaths(gitDir, join(gitDir, 'checkout.index'), tree, theirs, entries, 'sha1', join(gitDir, 'objects'));
      if (!wrote) {
        handed += 1;
        assert.deepEqual(readdirSync(mine), [], 'left empty for git');
        assert.ok(/text|filter|ident/.test(attributes ?? '') || config !== null, `handed to git with nothing that converts: ${attributes}`);
        return;
      }
      plain += 1;
      assert.ok(attributes === null || !/text|filter|ident/.test(attributes), `written with ${attributes}`);
      assert.deepEqual(stagedListing(mine, plainStagedNames(entries)), listing(theirs).sort());
      rmSync(dir, { recursive: true, force: true });
    }), { seed: SEED, numRuns: RUNS });
    t.diagnostic(`${plain} written from loose blobs, ${handed} left to checkout-index`);
    assert.ok(plain > RUNS / 4, 'most trees are written from their loose blobs');
  });

  it('restores with no checkout-index where nothing converts, and with it where an attribute of the target does', async () => {
    const dir = tempDir();
    git(dir, ['init', '-q', '-b', 'main', '.']);
    const write = (files: Record<string, string>) => writeFiles(dir, files);
    write({ 'a.txt': 'a\n', 'd/b.txt': 'b\n' });
    git(dir, ['add', '-A']);
    git(dir, ['commit', '-qm', 'base']);
    const calls: string[] = [];
    const inner = new SimpleGitRunner(dir);
    const store = new WipStore({ cwd: dir, policy: null, git: { run: (args, options) => (calls.push(args.find((arg) => /^[a-z][a-z-]+$/.test(arg) && arg !== 'c') as string), inner.run(args, options)) } });
    write({ 'a.txt': 'a target\n', 'd/b.txt': 'b target\n' });
    const target = (await store.save({ label: 'target' })).snapshot.commit;
    write({ 'a.txt': 'a later\n', 'd/b.txt': 'b later\n' });
    calls.length = 0;
    await store.restore({ snapshot: target });
    assert.deepEqual([readFileSync(join(dir, 'a.txt'), 'utf8'), readFileSync(join(dir, 'd/b.txt'), 'utf8')], ['a target\n', 'b target\n']);
    assert.ok(!calls.includes('checkout-index'), calls.join(' '));
    // A target whose .gitattributes asks for CRLF in d: git writes the files.
    write({ 'd/.gitattributes': '* text eol=crlf\n', 'd/b.txt': 'b crlf\n' });
    const converting = (await store.save({ label: 'converting' })).snapshot.commit;
    // Written with CRLFs, as git writes it there: what the checkpoint gives back.
    write({ 'd/b.txt': 'b again\r\n' });
    calls.length = 0;
    await store.restore({ snapshot: converting });
    assert.equal(readFileSync(join(dir, 'd/b.txt'), 'utf8'), 'b crlf\r\n');
    assert.ok(calls.includes('checkout-index'), calls.join(' '));
  });
});
