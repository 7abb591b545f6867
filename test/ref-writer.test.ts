import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { chmodSync, cpSync, existsSync, readFileSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import fs from 'node:fs';
import { syncBuiltinESMExports } from 'node:module';
import { join } from 'node:path';
import { describe, it } from 'node:test';
import { moveRefInProcess, reflogMessage } from '../lib/git/ref-writer.js';
import type { RefMove } from '../lib/git/ref-writer.js';
import { GitProcessRunner } from '../lib/git/runner.js';
import type { GitRunner } from '../lib/git/runner.js';
import { IDENTITY_MEMO_FILE } from '../lib/managers/identity-memo.js';
import { WipStore } from '../lib/store/wip-store.js';
import { Replicator } from '../lib/replication/replicator.js';
import { bareRemote } from './remotes.js';
import { git, makeRepo, tempDir, writeFiles } from './helpers.js';

// A wip ref moved without a process must be what `git update-ref --create-reflog -m` leaves:
// the same ref file, the same reflog line (but for the second it was written in), under git's
// lock, checked against the old value under it. Everything else goes to git untouched.

/** The environment git runs in when it dates its reflog itself: no date, no zone given. */
function ownClock(): NodeJS.ProcessEnv {
  const env = { ...process.env, LC_ALL: 'C' };
  delete env.GIT_COMMITTER_DATE;
  delete env.GIT_AUTHOR_DATE;
  delete env.TZ;
  return env;
}

/** `git update-ref` as chant runs it, dating the reflog line itself. */
function gitMove(dir: string, ref: string, next: string, old: string, reason: string): void {
  const result = spawnSync('git', ['-c', 'core.hooksPath=/dev/null', 'update-ref', '--create-reflog', '-m', reason, '--end-of-options', ref, next, old], { cwd: dir, env: ownClock(), encoding: 'utf8' });
  assert.equal(result.status, 0, result.stderr);
}

/** A repository with a few commits and `refs/chant/wip/main` at the first, its reflog created by git. */
function repoWithRef(): { dir: string; commits: string[] } {
  const dir = makeRepo({ 'a.txt': '0\n' });
  const commits = [git(dir, ['rev-parse', 'HEAD']).trim()];
  for (let i = 1; i < 5; i += 1) {
    writeFiles(dir, { 'a.txt': `${i}\n` });
    git(dir, ['commit', '-qam', `c${i}`]);
    commits.push(git(dir, ['rev-parse', 'HEAD']).trim());
  }
  gitMove(dir, 'refs/chant/wip/main', commits[0] as string, '0'.repeat(40), 'chant wip: save');
  return { dir, commits };
}

function move(dir: string, next: string, expected: string, reason = 'chant wip: save'): RefMove {
  return { commonDir: join(dir, '.git'), gitDir: join(dir, '.git'), objectsDir: join(dir, '.git', 'objects'), ref: 'refs/chant/wip/main', next, expected, reason, committer: Buffer.from('Test User <test@example.com>') };
}

const ambient = () => ownClock() as Readonly<Record<string, string | undefined>>;

/** The ref file, its reflog and whether its lock is there: what a refused move must leave as it was. */
function refState(dir: string): { ref: string | null; log: string | null; lock: boolean } {
  const read = (path: string) => (existsSync(path) ? readFileSync(path, 'latin1') : null);
  return { ref: read(join(dir, '.git', 'refs/chant/wip/main')), log: read(join(dir, '.git', 'logs/refs/chant/wip/main')), lock: existsSync(join(dir, '.git', 'refs/chant/wip/main.lock')) };
}

/** A reflog's lines, each split into the part before the date, the date's seconds, and the zone and message after it. */
function reflogLines(text: string): Array<{ head: string; seconds: number; tail: string }> {
  return text.split('\n').filter((line) => line.length > 0).map((line) => {
    const match = /^(.*>) (\d+) ([+-]\d{4}(?:\t.*)?)$/.exec(line);
    assert.ok(match !== null, `a reflog line: ${JSON.stringify(line)}`);
    return { head: match[1] as string, seconds: Number(match[2]), tail: match[3] as string };
  });
}

describe('wip refs moved without a process', () => {
  it('leave the ref file and the reflog line git update-ref leaves, message whitespace and all', () => {
    const { dir: a, commits } = repoWithRef();
    const b = tempDir();
    cpSync(a, b, { recursive: true });
    const reasons = ['chant wip: save', '  chant wip:\tpre-restore \n', 'chant wip: é ünïcode  twice  spaced', '\r\nleading', 'trailing\t\t', 'form\ffeed\vtab'];
    let old = commits[0] as string;
    for (const [i, reason] of reasons.entries()) {
      const next = commits[(i % 4) + 1] as string;
      assert.equal(moveRefInProcess(move(a, next, old, reason), ambient()), true, `moved for ${JSON.stringify(reason)}`);
      gitMove(b, 'refs/chant/wip/main', next, old, reason);
      old = next;
    }
    const ours = refState(a);
    const theirs = refState(b);
    assert.equal(ours.ref, theirs.ref);
    assert.equal(ours.lock, false);
    const ourLines = reflogLines(ours.log as string);
    const theirLines = reflogLines(theirs.log as string);
    assert.equal(ourLines.length, reasons.length + 1);
    assert.deepEqual(ourLines.map(({ head, tail }) => ({ head, tail })), theirLines.map(({ head, tail }) => ({ head, tail })), 'the same lines but for the second written');
    for (const [i, line] of ourLines.entries()) assert.ok(Math.abs(line.seconds - (theirLines[i] as { seconds: number }).seconds) <= 5);
    // git reads what was written as its own.
    assert.equal(git(a, ['rev-parse', 'refs/chant/wip/main']).trim(), old);
    assert.equal(git(a, ['reflog', 'show', '--format=%H %gs', 'refs/chant/wip/main']), git(b, ['reflog', 'show', '--format=%H %gs', 'refs/chant/wip/main']));
    git(a, ['fsck', '--no-progress']);
    assert.equal(reflogMessage(' a \t b\n'), 'a b');
  });

  it('hand every other case back to git, leaving the ref, its reflog and its lock as they were', () => {
    const cases: Array<{ name: string; arrange: (dir: string, commits: string[]) => Partial<RefMove> | void; env?: Record<string, string> }> = [
      { name: 'another writer moved the ref', arrange: (dir, commits) => gitMove(dir, 'refs/chant/wip/main', commits[2] as string, commits[0] as string, 'other') },
      { name: 'the lock is held', arrange: (dir) => writeFileSync(join(dir, '.git', 'refs/chant/wip/main.lock'), 'held\n') },
      { name: 'the ref is packed only', arrange: (dir) => void git(dir, ['pack-refs', '--all', '--prune']) },
      { name: 'the reflog is absent', arrange: (dir) => rmSync(join(dir, '.git', 'logs/refs/chant/wip/main')) },
      { name: 'the reflog is a link', arrange: (dir) => { const log = join(dir, '.git', 'logs/refs/chant/wip/main'); cpSync(log, `${log}.real`); rmSync(log); symlinkSync(`${log}.real`, log); } },
      { name: 'the ref is a link', arrange: (dir) => { const ref = join(dir, '.git', 'refs/chant/wip/main'); cpSync(ref, `${ref}-real`); rmSync(ref); symlinkSync(`${ref}-real`, ref); } },
      { name: 'core.fsync is set', arrange: (dir) => void git(dir, ['config', 'core.fsync', 'reference']) },
      { name: 'core.sharedRepository is set', arrange: (dir) => void git(dir, ['config', 'core.sharedRepository', 'group']) },
      { name: 'a configuration includes another', arrange: (dir) => void git(dir, ['config', 'include.path', 'elsewhere']) },
      { name: 'another ref backend is named', arrange: (dir) => void git(dir, ['config', 'extensions.refStorage', 'files']) },
      { name: 'the environment gives configuration that syncs', arrange: () => undefined, env: { GIT_CONFIG_COUNT: '1', GIT_CONFIG_KEY_0: 'core.fsync', GIT_CONFIG_VALUE_0: 'all' } },
      { name: 'GIT_COMMITTER_DATE is set', arrange: () => undefined, env: { GIT_COMMITTER_DATE: '2026-01-01T00:00:00Z' } },
      { name: 'TZ is set', arrange: () => undefined, env: { TZ: 'Asia/Kolkata' } },
      { name: 'the ref is outside refs/chant/', arrange: () => ({ ref: 'refs/heads/main' }) },
      { name: 'the new commit is not there whole (an empty file in its place)', arrange: (dir, commits) => {
        const next = commits[1] as string;
        const path = join(dir, '.git', 'objects', next.slice(0, 2), next.slice(2));
        chmodSync(path, 0o644);
        writeFileSync(path, '');
      } },
      { name: 'the new commit is not a commit', arrange: (dir) => ({ next: git(dir, ['rev-parse', 'HEAD^{tree}']).trim() }) },
    ];
    for (const { name, arrange, env } of cases) {
      const { dir, commits } = repoWithRef();
      const own = arrange(dir, commits) ?? {};
      const before = refState(dir);
      const result = moveRefInProcess({ ...move(dir, commits[1] as string, commits[0] as string), ...own }, { ...ambient(), ...env });
      assert.equal(result, null, name);
      assert.deepEqual(refState(dir), before, `${name}: nothing written`);
    }
  });

  it('hand the move back with no lock left when closing the lock file fails', () => {
    const { dir, commits } = repoWithRef();
    const before = refState(dir);
    const realClose = fs.closeSync;
    const realOpen = fs.openSync;
    let lockFd = -1;
    let failed = 0;
    // The close of the lock's descriptor reports EIO (NFS, a full quota), once.
    fs.openSync = ((path: fs.PathLike, ...rest: unknown[]) => {
      const fd = (realOpen as (...args: unknown[]) => number)(path, ...rest);
      if (String(path).endsWith('.lock')) lockFd = fd;
      return fd;
    }) as typeof fs.openSync;
    fs.closeSync = (fd: number) => {
      realClose(fd);
      if (fd === lockFd && failed === 0) {
        failed += 1;
        throw Object.assign(new Error('EIO: i/o error, close'), { code: 'EIO' });
      }
    };
    syncBuiltinESMExports();
    try {
      assert.equal(moveRefInProcess(move(dir, commits[1] as string, commits[0] as string), ambient()), null);
    } finally {
      fs.closeSync = realClose;
      fs.openSync = realOpen;
      syncBuiltinESMExports();
    }
    assert.equal(failed, 1);
    assert.deepEqual(refState(dir), before);
    gitMove(dir, 'refs/chant/wip/main', commits[1] as string, commits[0] as string, 'git after it');
  });

  it('hand the move back with no lock left when the disk is full, so git says so and the next move is not refused as locked', (t) => {
    if (process.getuid?.() !== 0) return t.skip('mounting a small tmpfs needs root');
    const mount = tempDir('chant-full-');
    const mounted = spawnSync('mount', ['-t', 'tmpfs', '-o', 'size=1m', 'tmpfs', mount], { encoding: 'utf8' });
    if (mounted.status !== 0) return t.skip(`cannot mount a tmpfs here: ${(mounted.stderr || '').trim()}`);
    try {
      const { dir: made, commits } = repoWithRef();
      const dir = join(mount, 'repo');
      cpSync(made, dir, { recursive: true });
      const before = refState(dir);
      // Every block taken: the lock is made (an inode), its write fails with ENOSPC, and the
      // failed write still dates the file, as Linux does before it looks for room.
      spawnSync('sh', ['-c', 'cat /dev/zero > "$0"', join(mount, 'filler')]);
      assert.equal(moveRefInProcess(move(dir, commits[1] as string, commits[0] as string), ambient()), null);
      assert.deepEqual(refState(dir), before, 'no lock left behind');
      rmSync(join(mount, 'filler'));
      gitMove(dir, 'refs/chant/wip/main', commits[1] as string, commits[0] as string, 'git after it');
    } finally {
      spawnSync('umount', [mount]);
    }
  });

  it('neither renames nor removes a lock that is no longer its own: one another process took as stale while this writer was paused, and made anew', () => {
    const { dir, commits } = repoWithRef();
    const lock = join(dir, '.git', 'refs/chant/wip/main.lock');
    const before = readFileSync(join(dir, '.git', 'refs/chant/wip/main'), 'latin1');
    // The clock is read as the reflog line is written, after the lock was: there the other
    // process removes this writer's lock as stale and makes its own, not yet written whole.
    const stolen = () => {
      rmSync(lock);
      writeFileSync(lock, `${commits[2]}`.slice(0, 17));
      return Date.now();
    };
    assert.equal(moveRefInProcess(move(dir, commits[1] as string, commits[0] as string), ambient(), stolen), null, 'handed back to git');
    assert.equal(readFileSync(join(dir, '.git', 'refs/chant/wip/main'), 'latin1'), before, 'the other writer\'s half-written lock was not put in place');
    assert.equal(readFileSync(lock, 'latin1'), `${commits[2]}`.slice(0, 17), 'and its lock was left to it');
  });

  it('take the saves of a store past update-ref once git has told the committer, and not where git was given chant\'s fallback identity', async () => {
    const dir = makeRepo({ 'a.txt': '0\n' });
    const calls: string[] = [];
    const inner = new GitProcessRunner(dir);
    const runner: GitRunner = { run: (args, options) => (calls.push(args[0] as string), inner.run(args, options)) };
    const store = new WipStore({ cwd: dir, policy: null, git: runner });
    const saves: string[] = [];
    for (let i = 1; i <= 3; i += 1) {
      writeFiles(dir, { 'a.txt': `turn ${i}\n` });
      calls.length = 0;
      saves.push((await store.save({ label: `turn:${i}` })).snapshot.commit);
      if (i === 3) assert.deepEqual(calls.filter((call) => call === 'update-ref' || call === 'commit-tree'), [], 'the third save moves its ref itself');
    }
    assert.equal(git(dir, ['rev-parse', 'refs/chant/wip/main']).trim(), saves[2]);
    const log = git(dir, ['reflog', 'show', '--format=%H %gs', 'refs/chant/wip/main']).trim().split('\n');
    assert.deepEqual(log, [...saves].reverse().map((commit) => `${commit} chant wip: save`));

    // A memo whose idents came from chant's fallback identity is not the ident git gives a reflog.
    const memoFile = join(dir, '.git', IDENTITY_MEMO_FILE);
    const memo = JSON.parse(readFileSync(memoFile, 'utf8')) as Record<string, unknown>;
    assert.equal(memo.configured, true);
    writeFileSync(memoFile, `${JSON.stringify({ ...memo, configured: false })}\n`);
    writeFiles(dir, { 'a.txt': 'turn 4\n' });
    calls.length = 0;
    const fourth = (await store.save({ label: 'turn:4' })).snapshot.commit;
    assert.deepEqual(calls.filter((call) => call === 'update-ref'), ['update-ref']);
    assert.equal(git(dir, ['rev-parse', 'refs/chant/wip/main']).trim(), fourth);
  });
});

/**
 * Two snapshots saved, then packed by a repack that kept the loose objects (git repack -a, no
 * -d): the pack holds every snapshot whole beside their loose files.
 */
async function packedChain(): Promise<{ dir: string; store: WipStore; first: string; tip: string }> {
  const dir = makeRepo();
  const store = new WipStore({ cwd: dir });
  const saved: string[] = [];
  for (let i = 0; i < 2; i += 1) {
    writeFiles(dir, { [`f${i}.txt`]: `${i}\n` });
    saved.push((await store.save({ label: `s${i}` })).snapshot.commit);
  }
  git(dir, ['repack', '-a', '-q']);
  const [first, tip] = saved as [string, string];
  return { dir, store, first, tip };
}

/** Cuts the loose file of `oid` short, as a power loss leaves one. */
function cutShortLoose(dir: string, oid: string): void {
  const objectFile = join(dir, '.git', 'objects', oid.slice(0, 2), oid.slice(2));
  chmodSync(objectFile, 0o644);
  writeFileSync(objectFile, readFileSync(objectFile).subarray(0, 60));
}

describe('a wip ref a crash or a power loss emptied or cut short', () => {
  /** A repository with three saves on main, oldest first. */
  async function threeSaves(): Promise<{ dir: string; store: WipStore; saved: string[] }> {
    const dir = makeRepo();
    const store = new WipStore({ cwd: dir });
    const saved: string[] = [];
    for (let i = 0; i < 3; i += 1) {
      writeFiles(dir, { [`f${i}.txt`]: `${i}\n` });
      saved.push((await store.save({ label: `s${i}` })).snapshot.commit);
    }
    return { dir, store, saved };
  }

  it('is put back from its reflog, so the list shows the chain and the next save and restore build on it, where the chain read as gone and every save failed', async () => {
    const { dir, store, saved } = await threeSaves();
    const refFile = join(dir, '.git', 'refs', 'chant', 'wip', 'main');
    const tip = saved[2] as string;
    for (const [how, content] of [['emptied', ''], ['cut short', tip.slice(0, 12)], ['zeroed', '\0'.repeat(41)]] as const) {
      writeFileSync(refFile, content);
      const listed = await store.list();
      assert.deepEqual(listed.branches.map((branch) => [branch.branch, branch.tip]), [['main', tip]], `${how}: the list reads the chain`);
      assert.equal(readFileSync(refFile, 'latin1'), `${tip}\n`, `${how}: the ref file names the tip again`);
    }
    writeFileSync(refFile, '');
    writeFiles(dir, { 'after.txt': 'after\n' });
    const next = await store.save({ label: 'after' });
    assert.equal(git(dir, ['rev-parse', `${next.snapshot.commit}^`]).trim(), tip, 'the save builds on the chain');
    writeFileSync(refFile, next.snapshot.commit.slice(0, 20));
    writeFiles(dir, { 'after.txt': 'edited\n' });
    const restored = await store.restore({ snapshot: saved[0] as string });
    assert.equal(git(dir, ['log', '--first-parent', '--skip=1', '-1', '--format=%H', restored.checkpoint.snapshot.commit]).trim(), next.snapshot.commit, 'the restore\'s checkpoint builds on the chain');
    assert.equal(spawnSync('git', ['fsck', '--no-dangling'], { cwd: dir, encoding: 'utf8' }).status, 0);
  });

  it('is set back from a tip whose loose commit was emptied or cut short to the newest whole one of its reflog, so the list, a save and a restore go on, where git failed every one on it for good', async () => {
    const { dir, store, saved } = await threeSaves();
    const objectFile = (oid: string) => join(dir, '.git', 'objects', oid.slice(0, 2), oid.slice(2));
    const [first, second, tip] = saved as [string, string, string];
    // The tip cut short by a power loss: its id is kept, on the reflog line that sets the ref back.
    chmodSync(objectFile(tip), 0o644);
    writeFileSync(objectFile(tip), readFileSync(objectFile(tip)).subarray(0, 60));
    const listed = await store.list();
    assert.deepEqual(listed.branches.map((branch) => [branch.branch, branch.tip, branch.snapshots.map((one) => one.commit)]), [['main', second, [second, first]]]);
    assert.equal(git(dir, ['reflog', '-1', '--format=%H %gs', 'refs/chant/wip/main']).trim(), `${second} chant wip: set back from a broken tip ${tip}`);
    assert.equal(listed.branches[0]?.setBackFrom, tip, 'the list names the snapshot it could not read');
    assert.equal((await store.list()).branches[0]?.setBackFrom, tip, 'and goes on naming it');
    writeFiles(dir, { 'f2.txt': 'kept\n' });
    const next = await store.save({ label: 'after' });
    assert.equal(git(dir, ['rev-parse', `${next.snapshot.commit}^`]).trim(), second, 'the save builds on the newest whole snapshot');
    assert.equal((await store.list()).branches[0]?.setBackFrom, undefined, 'until the ref moves again');
    chmodSync(objectFile(next.snapshot.commit), 0o644);
    writeFileSync(objectFile(next.snapshot.commit), '');
    chmodSync(objectFile(second), 0o644);
    writeFileSync(objectFile(second), '');
    writeFiles(dir, { 'f2.txt': 'edited\n' });
    const restored = await store.restore({ snapshot: first });
    assert.equal(git(dir, ['rev-parse', `${restored.checkpoint.snapshot.commit}^`]).trim(), first, 'the checkpoint builds on the newest whole snapshot');
    assert.equal(existsSync(join(dir, 'f2.txt')), false);
    const undone = await store.restore({ snapshot: restored.checkpoint.snapshot.commit });
    assert.equal(undone.snapshot.commit, restored.checkpoint.snapshot.commit);
    assert.equal(readFileSync(join(dir, 'f2.txt'), 'utf8'), 'edited\n');
  });

  it('is removed where every snapshot its reflog moved it to from its creation, each a save\'s or a checkpoint\'s on the one before, is broken (a power loss after the first saves of a branch), so a save starts the chain again, where every list, save and restore failed on it for good', async () => {
    const objectFile = (dir: string, oid: string) => join(dir, '.git', 'objects', oid.slice(0, 2), oid.slice(2));
    const breakAll = (dir: string, commits: readonly string[]) => {
      for (const commit of commits) {
        chmodSync(objectFile(dir, commit), 0o644);
        writeFileSync(objectFile(dir, commit), readFileSync(objectFile(dir, commit)).subarray(0, 30));
      }
    };
    for (const count of [1, 2]) {
      const dir = makeRepo();
      const store = new WipStore({ cwd: dir });
      const saved: string[] = [];
      for (let i = 0; i < count; i += 1) {
        writeFiles(dir, { [`f${i}.txt`]: `${i}\n` });
        saved.push((await store.save({})).snapshot.commit);
      }
      breakAll(dir, saved);
      assert.deepEqual((await store.list()).branches, [], `${count}: the list reads no chain`);
      writeFiles(dir, { 'f0.txt': 'kept\n' });
      const next = await store.save({});
      assert.equal(next.created, true);
      assert.equal(git(dir, ['rev-parse', `${next.snapshot.commit}^@`]).trim(), git(dir, ['rev-parse', 'HEAD']).trim(), `${count}: a first snapshot again, on HEAD alone`);
      writeFiles(dir, { 'f0.txt': 'edited\n' });
      await store.restore({ snapshot: next.snapshot.commit });
      assert.equal(readFileSync(join(dir, 'f0.txt'), 'utf8'), 'kept\n');
    }
    // A ref whose reflog does not hold its every move from its creation (one line came from
    // elsewhere: a fetch brings a chain whose snapshots below may be whole) is left for a person.
    const dir = makeRepo();
    const store = new WipStore({ cwd: dir });
    writeFiles(dir, { 'f0.txt': '0\n' });
    const tip = (await store.save({})).snapshot.commit;
    writeFileSync(join(dir, '.git', 'logs', 'refs', 'chant', 'wip', 'main'), readFileSync(join(dir, '.git', 'logs', 'refs', 'chant', 'wip', 'main'), 'utf8').replace('chant wip: save', 'fetch: storing head'));
    breakAll(dir, [tip]);
    await assert.rejects(store.list(), (error: unknown) => (error as { code?: string }).code === 'git-failed');
    assert.equal(git(dir, ['rev-parse', 'refs/chant/wip/main']).trim(), tip, 'the ref is left');
  });

  it('is removed where its loose file and every snapshot its reflog moved it to from its creation are broken, so a save starts the chain again, where every save failed on it for good', async () => {
    const dir = makeRepo();
    const store = new WipStore({ cwd: dir });
    writeFiles(dir, { 'f0.txt': '0\n' });
    const tip = (await store.save({})).snapshot.commit;
    const objectFile = join(dir, '.git', 'objects', tip.slice(0, 2), tip.slice(2));
    chmodSync(objectFile, 0o644);
    writeFileSync(objectFile, '');
    writeFileSync(join(dir, '.git', 'refs', 'chant', 'wip', 'main'), '');
    writeFiles(dir, { 'f0.txt': 'kept\n' });
    const next = await store.save({});
    assert.equal(git(dir, ['rev-parse', `${next.snapshot.commit}^@`]).trim(), git(dir, ['rev-parse', 'HEAD']).trim(), 'a first snapshot again, on HEAD alone');
    assert.deepEqual((await store.list()).branches.map((branch) => [branch.branch, branch.snapshots.map((one) => one.commit)]), [['main', [next.snapshot.commit]]]);
  });

  it('is put back, not removed, where its loose file and the loose files of its snapshots are broken but a pack holds the snapshots whole, which git reads', async () => {
    const { dir, store, first, tip } = await packedChain();
    for (const commit of [first, tip]) cutShortLoose(dir, commit);
    writeFileSync(join(dir, '.git', 'refs', 'chant', 'wip', 'main'), '');
    assert.equal(git(dir, ['rev-parse', `${tip}^`]).trim(), first, 'git reads the snapshots from the pack');
    const listed = await store.list();
    assert.deepEqual(listed.branches.map((branch) => [branch.branch, branch.tip, branch.snapshots.map((one) => one.commit)]), [['main', tip, [tip, first]]]);
    assert.equal(git(dir, ['rev-parse', 'refs/chant/wip/main']).trim(), tip);
  });

  it('is left at a tip whose loose commit is cut short where a pack holds the commit whole, which git reads', async () => {
    const { dir, store, first, tip } = await packedChain();
    cutShortLoose(dir, tip);
    assert.equal(git(dir, ['rev-parse', `${tip}^`]).trim(), first, 'git reads the tip from the pack');
    const listed = await store.list();
    assert.deepEqual(listed.branches.map((branch) => [branch.branch, branch.tip, branch.snapshots.map((one) => one.commit)]), [['main', tip, [tip, first]]]);
    assert.equal(git(dir, ['rev-parse', 'refs/chant/wip/main']).trim(), tip);
  });

  it('is put back by a push and a fetch too, where the push left its chain out saying nothing and the fetch failed whole on it as a bad object', async () => {
    const remote = bareRemote();
    const dir = makeRepo({ 'README.md': 'x\n', 'chant.workspace.json': `${JSON.stringify({ members: [{ name: 'app', box: { replicate: { remote: 'origin', refs: ['wip'], on: ['save'] } } }] })}\n` });
    git(dir, ['remote', 'add', 'origin', remote]);
    git(dir, ['checkout', '-q', '-b', 'feature']);
    const store = new WipStore({ cwd: dir });
    writeFiles(dir, { 'a.txt': 'pushed\n' });
    await store.save({ label: 'pushed' });
    // A save while the remote was away: its snapshot is on no remote yet.
    git(dir, ['remote', 'set-url', 'origin', join(remote, 'gone')]);
    writeFiles(dir, { 'a.txt': 'only here\n' });
    const local = (await store.save({ label: 'only here' })).snapshot.commit;
    git(dir, ['remote', 'set-url', 'origin', remote]);
    const refFile = join(dir, '.git', 'refs', 'chant', 'wip', 'feature');
    writeFileSync(refFile, '');
    const replicator = await Replicator.open({ cwd: dir });
    const fetched = await replicator.fetch();
    assert.equal(fetched.failed, null);
    assert.equal(readFileSync(refFile, 'latin1'), `${local}\n`);
    writeFileSync(refFile, local.slice(0, 10));
    const pushed = await replicator.push();
    assert.deepEqual(pushed.replication.pushed.map((entry) => [entry.ref, entry.commit]), [['refs/chant/wip/feature', local]]);
    assert.equal(git(remote, ['rev-parse', 'refs/chant/wip/feature']).trim(), local);
  });
});

describe('a wip ref lock a killed save left', () => {
  /** A repository with one save, and the lock of its wip ref as a killed move leaves it, dated `time`. */
  async function savedWithLock(time: Date): Promise<{ dir: string; store: WipStore; first: string; lock: string }> {
    const dir = makeRepo();
    const store = new WipStore({ cwd: dir });
    writeFiles(dir, { 'a.txt': 'a\n' });
    const first = (await store.save({ label: 'first' })).snapshot.commit;
    // What a save killed between creating the lock and renaming it into place leaves: the lock, holding the new value.
    const lock = join(dir, '.git', 'refs', 'chant', 'wip', 'main.lock');
    writeFileSync(lock, `${first}\n`);
    fs.utimesSync(lock, time, time);
    return { dir, store, first, lock };
  }

  it('is removed once older than any move holds one, so the next save and restore move the ref, where every one failed on it as git-failed', async () => {
    const minuteAgo = new Date(Date.now() - 60_000);
    const { dir, store, first, lock } = await savedWithLock(minuteAgo);
    writeFiles(dir, { 'a.txt': 'b\n' });
    const second = await store.save({ label: 'second' });
    assert.equal(git(dir, ['rev-parse', 'refs/chant/wip/main']).trim(), second.snapshot.commit);
    assert.equal(existsSync(lock), false);
    writeFileSync(lock, `${second.snapshot.commit}\n`);
    fs.utimesSync(lock, minuteAgo, minuteAgo);
    writeFiles(dir, { 'a.txt': 'c\n' });
    const restored = await store.restore({ snapshot: first });
    assert.equal(git(dir, ['rev-parse', 'refs/chant/wip/main']).trim(), restored.checkpoint.snapshot.commit);
    assert.equal(readFileSync(join(dir, 'a.txt'), 'utf8'), 'a\n');
    // A lock as fresh as a live writer's is left to it.
    writeFileSync(lock, `${second.snapshot.commit}\n`);
    writeFiles(dir, { 'a.txt': 'd\n' });
    await assert.rejects(store.save({ label: 'held' }), (error: Error & { code?: string }) => error.code === 'git-failed');
    assert.equal(existsSync(lock), true);
  });

  it('is removed too when its time is ahead of the clock by more than a move takes, as a clock set back after the kill or the power loss leaves it', async () => {
    const { dir, store, lock } = await savedWithLock(new Date(Date.now() + 3_600_000));
    writeFiles(dir, { 'a.txt': 'b\n' });
    const second = await store.save({ label: 'second' });
    assert.equal(git(dir, ['rev-parse', 'refs/chant/wip/main']).trim(), second.snapshot.commit);
    assert.equal(existsSync(lock), false);
  });
});

describe('a wip ref lock a killed write left, met by a prune', () => {
  it('is removed once older than any move holds one, so the prune drops what its rules say, where it was refused as a race every time', async () => {
    const dir = makeRepo();
    const store = new WipStore({ cwd: dir });
    for (let i = 0; i < 3; i += 1) {
      writeFiles(dir, { 'a.txt': `${i}\n` });
      await store.save({ label: `s${i}` });
    }
    const lock = join(dir, '.git', 'refs', 'chant', 'wip', 'main.lock');
    writeFileSync(lock, `${git(dir, ['rev-parse', 'refs/chant/wip/main']).trim()}\n`);
    const minuteAgo = new Date(Date.now() - 60_000);
    fs.utimesSync(lock, minuteAgo, minuteAgo);
    const pruned = await store.prune({ keepLast: 1 });
    assert.equal(pruned.branches[0]?.dropped.length, 2);
    assert.equal(git(dir, ['rev-list', '--count', '--first-parent', 'refs/chant/wip/main']).trim(), '2', 'the snapshot kept, on the commit HEAD names');
    assert.equal(existsSync(lock), false);
  });
});
