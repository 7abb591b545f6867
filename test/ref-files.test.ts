import { git, makeRepo, writeFiles } from './helpers.js';
import assert from 'node:assert/strict';
import fs, { mkdirSync, readFileSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import { syncBuiltinESMExports } from 'node:module';
import { join } from 'node:path';
import { describe, it, mock } from 'node:test';
import { Plumbing } from '../lib/git/plumbing.js';
import type { RepositoryLayout } from '../lib/git/plumbing.js';
import type { CommitRecord } from '../lib/git/formats/commit.js';
import { looseCommitRecord, refsFromFiles } from '../lib/git/ref-files.js';
import { SimpleGitRunner } from '../lib/git/runner.js';
import { WipStore } from '../lib/store/wip-store.js';

// A read after a save lists the wip refs and the new commits from their files, without a
// process, where git would print just that. These tests hold what the files give to what git
// prints, and hold every unusual case to git.
const REFS = ['refs/chant/wip/', 'refs/chant/wip-aside/'];

async function opened(dir: string): Promise<{ plumbing: Plumbing; layout: RepositoryLayout }> {
  const plumbing = new Plumbing(new SimpleGitRunner(dir), dir);
  return { plumbing, layout: (await plumbing.checkout()).layout };
}

/** Three snapshots on main, two on a nested branch name, and one chain moved aside. */
async function repoWithChains(): Promise<string> {
  const dir = makeRepo({ 'a.txt': 'a\n' });
  const store = new WipStore({ cwd: dir, policy: null });
  for (let turn = 1; turn <= 3; turn += 1) {
    writeFiles(dir, { 'a.txt': `main ${turn}\n` });
    await store.save({ label: `turn:${turn}` });
  }
  git(dir, ['checkout', '-q', '-b', 'feature/x']);
  for (let turn = 1; turn <= 2; turn += 1) {
    writeFiles(dir, { 'b.txt': `feature ${turn}\n` });
    await store.save({ label: `feature:${turn}` });
  }
  git(dir, ['update-ref', 'refs/chant/wip-aside/main/1', 'refs/chant/wip/main~1']);
  return dir;
}

/** What git log prints of a commit, parsed as the read parses it. */
async function gitLogRecord(plumbing: Plumbing, commit: string): Promise<CommitRecord> {
  const records: CommitRecord[] = [];
  await plumbing.readFirstParentChains([commit], (record) => {
    records.push(record);
    return null;
  });
  return records[0] as CommitRecord;
}

describe('the wip refs read from their files', () => {
  it('gives what git for-each-ref gives, loose, packed, and loose over packed', async () => {
    const dir = await repoWithChains();
    const { plumbing, layout } = await opened(dir);
    const fromGit = await plumbing.readRefs(REFS);
    assert.equal(fromGit.length, 3);
    assert.deepEqual(refsFromFiles(layout, REFS, false), fromGit, 'loose refs');
    assert.deepEqual(refsFromFiles(layout, ['refs/chant/wip/feature/x', 'refs/chant/wip-aside/'], false), await plumbing.readRefs(['refs/chant/wip/feature/x', 'refs/chant/wip-aside/']), 'one branch');
    git(dir, ['pack-refs', '--all']);
    assert.deepEqual(refsFromFiles(layout, REFS, false), fromGit, 'packed refs');
    // A save moves a packed ref by writing it loose: the loose one stands.
    writeFiles(dir, { 'b.txt': 'after packing\n' });
    await new WipStore({ cwd: dir, policy: null }).save({ label: 'after packing' });
    const moved = await plumbing.readRefs(REFS);
    assert.notDeepEqual(moved, fromGit);
    assert.deepEqual(refsFromFiles(layout, REFS, false), moved, 'a loose ref over its packed line');
    assert.deepEqual(refsFromFiles(layout, ['refs/chant/wip/none'], false), [], 'a ref that is not there');
  });

  it('hands every unusual case to git: a lock, a symbolic ref, a name git might refuse, a commit in a pack, replace refs', async () => {
    const dir = await repoWithChains();
    const { layout } = await opened(dir);
    const wip = join(layout.commonDir, 'refs', 'chant', 'wip');
    assert.ok(refsFromFiles(layout, REFS, false) !== null);
    assert.equal(refsFromFiles(layout, REFS, true), null, 'replace refs');
    writeFileSync(join(wip, 'main.lock'), '');
    assert.equal(refsFromFiles(layout, REFS, false), null, 'a ref being written');
    rmSync(join(wip, 'main.lock'));
    writeFileSync(join(wip, 'link'), 'ref: refs/chant/wip/main\n');
    assert.equal(refsFromFiles(layout, REFS, false), null, 'a symbolic ref');
    rmSync(join(wip, 'link'));
    symlinkSync('main', join(wip, 'old-link'));
    assert.equal(refsFromFiles(layout, REFS, false), null, 'a symbolic link');
    rmSync(join(wip, 'old-link'));
    mkdirSync(join(wip, '.hidden'));
    assert.equal(refsFromFiles(layout, REFS, false), null, 'a name git refuses');
    rmSync(join(wip, '.hidden'), { recursive: true });
    writeFileSync(join(wip, 'short'), 'abc\n');
    assert.equal(refsFromFiles(layout, REFS, false), null, 'a ref that holds no id');
    rmSync(join(wip, 'short'));
    assert.equal(refsFromFiles(layout, ['refs/chant/wip/a..b'], false), null, 'a name asked for that is not plain');
    assert.ok(refsFromFiles(layout, REFS, false) !== null);
    const packedRefs = join(layout.commonDir, 'packed-refs');
    git(dir, ['pack-refs', '--all']);
    const packed = readFileSync(packedRefs, 'latin1');
    const [header, ...lines] = packed.trimEnd().split('\n');
    writeFileSync(packedRefs, `${header}\n${[...lines].reverse().join('\n')}\n`);
    assert.equal(refsFromFiles(layout, REFS, false), null, 'packed-refs out of order, which git searches as if sorted');
    writeFileSync(packedRefs, `${header}\n${[lines[0], ...lines].join('\n')}\n`);
    assert.equal(refsFromFiles(layout, REFS, false), null, 'a name packed twice');
    writeFileSync(packedRefs, packed);
    assert.ok(refsFromFiles(layout, REFS, false) !== null);
    git(dir, ['gc', '-q']);
    assert.equal(refsFromFiles(layout, REFS, false), null, 'the commits are packed');
  });

  it('never misses a ref git packs while it reads: the loose refs are read before packed-refs, as git reads them', async () => {
    const dir = await repoWithChains();
    const { plumbing, layout } = await opened(dir);
    const before = await plumbing.readRefs(REFS);
    const original = fs.readFileSync;
    let packedNow = false;
    // Right after packed-refs is read, git packs every ref and removes the loose files.
    mock.method(fs, 'readFileSync', (...args: Parameters<typeof fs.readFileSync>) => {
      try {
        return original(...args);
      } finally {
        if (!packedNow && String(args[0]).endsWith('packed-refs')) {
          packedNow = true;
          git(dir, ['pack-refs', '--all']);
        }
      }
    });
    syncBuiltinESMExports();
    try {
      assert.deepEqual(refsFromFiles(layout, REFS, false), before);
    } finally {
      mock.restoreAll();
      syncBuiltinESMExports();
    }
    assert.ok(packedNow, 'packed-refs was read');
    assert.deepEqual(await plumbing.readRefs(REFS), before);
  });
});

describe('commits read from their loose files', () => {
  it('are what git log prints of them, or left to git where git would print otherwise', async () => {
    const dir = await repoWithChains();
    const { plumbing, layout } = await opened(dir);
    for (const ref of ['refs/chant/wip/main', 'refs/chant/wip/main~1', 'refs/chant/wip/feature/x']) {
      const commit = git(dir, ['rev-parse', ref]).trim();
      assert.deepEqual(looseCommitRecord(layout, commit), await gitLogRecord(plumbing, commit), ref);
    }
    const tree = git(dir, ['rev-parse', 'HEAD^{tree}']).trim();
    const write = (content: string | Buffer) => git(dir, ['hash-object', '-t', 'commit', '-w', '--stdin', '--literally'], { input: content as string }).trim();
    const odd = {
      'a message without a newline at its end': `tree ${tree}\nauthor A <a@b> 1 +0000\ncommitter C <c@d> 1700000000 +0100\n\nno newline`,
      'spaces, a carriage return and blank lines kept': `tree ${tree}\nauthor A <a@b> 1 +0000\ncommitter C <c@d> 1700000000 -0500\n\n  spaced  \r\n\nbody\n\n\n`,
      'a signature over several header lines': `tree ${tree}\nauthor A <a@b> 1 +0000\ncommitter C <c@d> 1700000001 +0000\ngpgsig -----BEGIN PGP SIGNATURE-----\n \n encoding x\n -----END PGP SIGNATURE-----\n\nsigned\n`,
      'no message at all': `tree ${tree}\nauthor A <a@b> 1 +0000\ncommitter C <c@d> 1700000002 +0000\n`,
    };
    for (const [why, content] of Object.entries(odd)) {
      const commit = write(content);
      assert.deepEqual(looseCommitRecord(layout, commit), await gitLogRecord(plumbing, commit), why);
    }
    const parentId = git(dir, ['rev-parse', 'HEAD']).trim();
    const notAsWritten = {
      'a parent after the author': `tree ${tree}\nauthor A <a@b> 1 +0000\nparent ${parentId}\ncommitter C <c@d> 1700000000 +0000\n\nodd\n`,
      'a parent id in capitals': `tree ${tree}\nparent ${parentId.toUpperCase()}\nauthor A <a@b> 1 +0000\ncommitter C <c@d> 1700000000 +0000\n\nodd\n`,
      'two committers': `tree ${tree}\nauthor A <a@b> 1 +0000\ncommitter C <c@d> 1700000000 +0000\ncommitter D <d@e> 1700000001 +0000\n\nodd\n`,
      'a committer line that ends in a carriage return': `tree ${tree}\nauthor A <a@b> 1 +0000\ncommitter C <c@d> 1700000000 +0000\r\n\nodd\n`,
      'a NUL in the message': `tree ${tree}\nauthor A <a@b> 1 +0000\ncommitter C <c@d> 1700000000 +0000\n\nodd\0cut\n`,
      'a message that starts with a blank line': `tree ${tree}\nauthor A <a@b> 1 +0000\ncommitter C <c@d> 1700000000 +0000\n\n\nodd\n`,
    };
    for (const [why, content] of Object.entries(notAsWritten)) assert.equal(looseCommitRecord(layout, write(content)), null, why);
    const encoded = write(`tree ${tree}\nauthor A <a@b> 1 +0000\ncommitter C <c@d> 1700000000 +0000\nencoding ISO-8859-1\n\ncafe\n`);
    assert.equal(looseCommitRecord(layout, encoded), null, 'an encoding of its own: git log re-encodes it');
    const oddDate = write(`tree ${tree}\nauthor A <a@b> 1 +0000\ncommitter C <c@d> junk 1700000000 +0000\n\nodd date\n`);
    assert.equal(looseCommitRecord(layout, oddDate), null, 'a committer line that does not end in a plain date');
    assert.equal(looseCommitRecord(layout, tree), null, 'a tree is no commit');
  });
});

describe('the read through the files', () => {
  it('lists the same chains, change counts included, as the read through git', async () => {
    const dir = await repoWithChains();
    const store = new WipStore({ cwd: dir, policy: null });
    const memo = join(dir, '.git', 'chant-snapshot-memo');
    const read = async () => {
      rmSync(memo, { force: true });
      const cold = await store.list({ changes: true });
      // The memo knows the chains but the newest: the read after a save.
      writeFiles(dir, { 'b.txt': `one more ${Date.now()}\n` });
      return cold;
    };
    const throughFiles = await read();
    assert.ok(throughFiles.branches.every((branch) => branch.snapshots.every((snapshot) => snapshot.changes !== undefined)));
    // Packed, every ref and commit is git's to read.
    git(dir, ['gc', '-q']);
    assert.deepEqual(await read(), throughFiles);
    // A save after reads: the new tip and its count, each way.
    await store.save({ label: 'newest' });
    const afterSave = await store.list({ changes: true });
    rmSync(memo, { force: true });
    git(dir, ['gc', '-q']);
    assert.deepEqual(await store.list({ changes: true }), afterSave);
    assert.equal(afterSave.branches.find((branch) => branch.branch === 'feature/x')?.snapshots[0]?.label, 'newest');
  });
});
