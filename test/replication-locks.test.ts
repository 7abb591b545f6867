// A stale `.lock` file left beside one of chant's own refs (a replica, a staging ref) by a git
// process that crashed: the fetch still brings the local refs home where it can, says which file
// is in the way with git's own words, never believes a record it could not bring up to date, and
// never claims a ref up to date with a remote it could not read.
import assert from 'node:assert/strict';
import { existsSync, mkdirSync, readdirSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { test } from 'node:test';
import { writeDocument } from '../lib/documents/document.js';
import type { PolicyDocument } from '../lib/documents/replication.js';
import { SimpleGitRunner } from '../lib/index.js';
import { Replicator } from '../lib/replication/replicator.js';
import { git, makeRepo, tempDir } from './helpers.js';
import { assertDocument, bareRemote } from './remotes.js';

const POLICY: PolicyDocument = { box: 'app', remote: 'origin', refs: ['work', 'kept', 'wip', 'ledger'], on: [], every: null };
const WORK = 'refs/heads/chant/work/W-001';
const KEPT = 'refs/chant/kept/W-001/tok';
const WIP = 'refs/chant/wip/chant/work/W-001';
const LEDGER = 'refs/heads/chant/lifecycle';

/** A remote holding one ref of each class, pushed with plain git from a box of its own, which it returns. */
function remoteWithRefs(): { remote: string; origin: string } {
  const origin = makeRepo();
  const base = git(origin, ['rev-parse', 'HEAD']).trim();
  const work = git(origin, ['commit-tree', 'HEAD^{tree}', '-p', base, '-m', 'work 1']).trim();
  git(origin, ['update-ref', WORK, work]);
  git(origin, ['update-ref', KEPT, git(origin, ['commit-tree', 'HEAD^{tree}', '-p', work, '-m', 'kept 1']).trim()]);
  git(origin, ['update-ref', WIP, git(origin, ['commit-tree', 'HEAD^{tree}', '-p', work, '-m', 'wip 1']).trim()]);
  git(origin, ['update-ref', LEDGER, git(origin, ['commit-tree', 'HEAD^{tree}', '-m', 'ledger 1']).trim()]);
  const remote = bareRemote();
  git(origin, ['push', '-q', remote, ...[WORK, KEPT, WIP, LEDGER].map((ref) => `${ref}:${ref}`)]);
  return { remote, origin };
}

/** The replacement box: a clone of the remote on the work branch, as the host makes one. */
function replacement(remote: string): string {
  const box = join(tempDir('chant-box-'), 'box');
  git(tempDir(), ['clone', '-q', '--no-local', '-b', 'chant/work/W-001', remote, box]);
  return box;
}

/** Leaves the lock file of `ref` behind, as a git process that crashed would. */
function staleLock(box: string, ref: string): string {
  const file = join(box, '.git', `${ref}.lock`);
  mkdirSync(dirname(file), { recursive: true });
  writeFileSync(file, '');
  return file;
}

test('a stale lock on a replica ref leaves that record out: the local refs come home, every time, and failed names the file', async () => {
  const { remote } = remoteWithRefs();
  const box = replacement(remote);
  const lock = staleLock(box, 'refs/chant/replica/origin/chant/wip/chant/work/W-001');
  const replicator = new Replicator({ cwd: box, policy: POLICY });
  for (let round = 0; round < 2; round += 1) {
    const fetched = await replicator.fetch();
    assertDocument(writeDocument('fetch', fetched));
    assert.deepEqual(fetched.refs.map((ref) => [ref.ref, ref.result]), [[KEPT, round === 0 ? 'created' : 'up-to-date'], [WIP, round === 0 ? 'created' : 'up-to-date'], [LEDGER, round === 0 ? 'created' : 'up-to-date'], [WORK, 'up-to-date']]);
    assert.equal(fetched.failedRefs, undefined);
    assert.ok((fetched.failed ?? '').includes(`refs/chant/replica/origin/chant/wip/chant/work/W-001 (Unable to create '${lock}': File exists.)`), String(fetched.failed));
    assert.match(fetched.failed ?? '', /remove the file/);
    for (const ref of [WORK, KEPT, WIP, LEDGER]) assert.equal(git(box, ['rev-parse', ref]).trim(), git(remote, ['rev-parse', ref]).trim());
    assert.equal(git(box, ['for-each-ref', 'refs/chant/fetching/']), '');
  }
  // Once the file is gone, the next fetch records everything and proves it.
  rmSync(lock);
  const fetched = await replicator.fetch();
  assert.equal(fetched.failed, null);
  assert.equal((await replicator.state())?.replicated, true);
});

test('a replica a fetch could not bring up to date is no proof: a ref the remote dropped never reads replicated', async () => {
  const { remote } = remoteWithRefs();
  const box = replacement(remote);
  const replicator = new Replicator({ cwd: box, policy: POLICY });
  assert.equal((await replicator.fetch()).failed, null);
  assert.equal((await replicator.state())?.replicated, true);
  // The remote drops the kept ref; the record of it here is locked, so the fetch cannot drop it.
  git(remote, ['update-ref', '-d', KEPT]);
  staleLock(box, 'refs/chant/replica/origin/chant/kept/W-001/tok');
  const fetched = await replicator.fetch();
  assert.match(fetched.failed ?? '', /refs\/chant\/replica\/origin\/chant\/kept\/W-001\/tok/);
  assert.equal(git(box, ['rev-parse', 'refs/chant/replica/origin/chant/kept/W-001/tok']).trim(), git(box, ['rev-parse', KEPT]).trim(), 'the stale record is still there');
  const state = await replicator.state();
  assert.equal(state?.refs.find((ref) => ref.ref === KEPT)?.replicated, false);
  assert.equal(state?.replicated, false);
});

test('a stale lock on a staging ref fails the fetch with git\'s line naming the file, and no ref is claimed up to date', async () => {
  const { remote, origin } = remoteWithRefs();
  const box = replacement(remote);
  const replicator = new Replicator({ cwd: box, policy: POLICY });
  assert.equal((await replicator.fetch()).failed, null);
  const before = git(box, ['rev-parse', WIP]).trim();
  // The remote moves on: a new snapshot whose pack needs deltas, and a new work branch.
  writeFileSync(join(origin, 'big.txt'), `${'line of text\n'.repeat(2000)}`);
  git(origin, ['add', 'big.txt']);
  git(origin, ['commit', '-qm', 'big']);
  writeFileSync(join(origin, 'big.txt'), `${'line of text\n'.repeat(2000)}one more\n`);
  const tree = git(origin, ['write-tree']).trim();
  const next = git(origin, ['commit-tree', tree, '-p', 'HEAD', '-p', WIP, '-m', 'wip 2']).trim();
  git(origin, ['push', '-q', remote, `${next}:${WIP}`, `${next}:refs/heads/chant/work/W-002`]);
  const lock = staleLock(box, 'refs/chant/fetching/origin/chant/wip/chant/work/W-001');

  const fetched = await replicator.fetch();
  assertDocument(writeDocument('fetch', fetched));
  const failed = fetched.failed ?? '';
  assert.match(failed, /^a lock file is in the way in this checkout/);
  assert.ok(failed.includes(`cannot lock ref 'refs/chant/fetching/origin/chant/wip/chant/work/W-001': Unable to create '${lock}': File exists.`), failed);
  assert.doesNotMatch(failed, /Resolving deltas|\[new (?:branch|ref)\]|From |->/);
  assert.deepEqual(fetched.refs, []);
  assert.equal(git(box, ['rev-parse', WIP]).trim(), before);

  rmSync(lock);
  const again = await replicator.fetch();
  assert.equal(again.failed, null);
  assert.equal(again.refs.find((ref) => ref.ref === WIP)?.result, 'fast-forward');
  assert.equal(git(box, ['rev-parse', WIP]).trim(), next);
});

test('a record a push could not delete (its lock stale) is no proof: a ref the new remote refused never reads replicated', async () => {
  const { remote } = remoteWithRefs();
  const box = replacement(remote);
  const replicator = new Replicator({ cwd: box, policy: POLICY });
  await replicator.fetch();
  assert.equal((await replicator.state())?.refs.find((ref) => ref.ref === WIP)?.replicated, true);
  // The remote is moved to one that refuses every push: the old proof is not proof there, so
  // each ref goes again, is refused, and its record is to be deleted; the wip ref's cannot be.
  const refusing = bareRemote();
  writeFileSync(join(refusing, 'hooks', 'pre-receive'), '#!/bin/sh\necho "refusing everything" >&2\nexit 1\n', { mode: 0o755 });
  git(box, ['remote', 'set-url', 'origin', refusing]);
  const lock = staleLock(box, 'refs/chant/replica/origin/chant/wip/chant/work/W-001');
  const pushed = await replicator.push();
  assert.ok(pushed.replication.rejected.some((ref) => ref.ref === WIP), JSON.stringify(pushed.replication));
  const state = await replicator.state();
  assert.equal(state?.refs.find((ref) => ref.ref === WIP)?.replicated, false, 'the refusing remote holds nothing');
  assert.equal(state?.replicated, false);
  rmSync(lock);
});

test('a fetch leaves a marker a prune\'s gc looks for while git brings what no ref names yet, and takes it away after', async () => {
  const { remote } = remoteWithRefs();
  const box = replacement(remote);
  const markers = join(box, '.git', 'chant-fetching');
  const seen: string[][] = [];
  const real = new SimpleGitRunner(box);
  const replicator = new Replicator({
    cwd: box,
    policy: POLICY,
    git: {
      run(args, options) {
        if (args.includes('fetch') && !args.includes('lfs')) seen.push(readdirSync(markers));
        return real.run(args, options);
      },
    },
  });
  assert.equal((await replicator.fetch()).failed, null);
  assert.equal(seen.length, 1);
  assert.match(seen[0]?.[0] ?? '', new RegExp(`^${process.pid}-`), 'the marker names this process');
  assert.deepEqual(readdirSync(markers), []);
});

test('a fetch leaves its marker in the git directory git uses, from a symlink to a subfolder and from a folder holding an empty .git', async () => {
  const { remote } = remoteWithRefs();
  const box = replacement(remote);
  const markers = join(box, '.git', 'chant-fetching');
  mkdirSync(join(box, 'sub', '.git'), { recursive: true });
  const link = join(tempDir('chant-link-'), 'app');
  symlinkSync(join(box, 'sub'), link);
  for (const cwd of [link, join(box, 'sub')]) {
    const seen: string[][] = [];
    const real = new SimpleGitRunner(cwd);
    const replicator = new Replicator({
      cwd,
      policy: POLICY,
      git: {
        run(args, options) {
          if (args.includes('fetch') && !args.includes('lfs')) seen.push(existsSync(markers) ? readdirSync(markers) : []);
          return real.run(args, options);
        },
      },
    });
    assert.equal((await replicator.fetch()).failed, null);
    assert.equal(seen[0]?.length, 1, `a prune's gc sees the fetch run from ${cwd}`);
  }
  assert.equal(existsSync(join(box, 'sub', '.git', 'chant-fetching')), false, 'nothing is left in the folder git skips');
});
