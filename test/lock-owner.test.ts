// The worktree lock is judged by who holds it, not by whether some process has its pid: after a
// crash the pid may belong to an unrelated process, after a reboot to anything, and across PID
// namespaces (a host and a container sharing the checkout) the same pid names different
// processes. The next save judges each of these correctly.
import { BIN, git, makeRepo, parseDocument, writeFiles } from './helpers.js';
import assert from 'node:assert/strict';
import { spawn, spawnSync } from 'node:child_process';
import type { ChildProcess } from 'node:child_process';
import { existsSync, mkdirSync, readFileSync, rmSync, utimesSync, writeFileSync } from 'node:fs';
import { hostname } from 'node:os';
import { join } from 'node:path';
import { after, describe, it } from 'node:test';
import { isWipError, WipStore } from '../lib/index.js';

const LOCK = 'chant-wip.lock';
const children: ChildProcess[] = [];
after(() => {
  for (const child of children) child.kill('SIGKILL');
});

/** A live process that has nothing to do with chant, started now. */
function unrelatedProcess(): number {
  const child = spawn('sleep', ['60'], { stdio: 'ignore' });
  children.push(child);
  return child.pid as number;
}

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

const aMinuteAgo = () => new Date(Date.now() - 60_000);

describe('the worktree lock', () => {
  it('takes over at once a lock left by a crashed save whose pid now belongs to an unrelated live process', async () => {
    const dir = makeRepo();
    writeFiles(dir, { 'work.txt': 'work\n' });
    const lock = join(dir, '.git', LOCK);
    // As a save that crashed a minute ago left it; the pid has since been given to another process.
    writeFileSync(lock, `${unrelatedProcess()}\n0123456789abcdef\n`);
    utimesSync(lock, aMinuteAgo(), aMinuteAgo());
    const saved = await new WipStore({ cwd: dir, lockWaitMs: 0 }).save({ label: 'after the crash' });
    assert.equal(saved.created, true);
    assert.equal(existsSync(lock), false, 'the save released the lock it took over');
  });

  it('takes over a lock whose holder it records by start time when that pid now runs another process', async () => {
    const dir = makeRepo();
    const lock = join(dir, '.git', LOCK);
    const pidNamespace = spawnSync('readlink', ['/proc/self/ns/pid'], { encoding: 'utf8' }).stdout.trim();
    const boot = readFileSync('/proc/sys/kernel/random/boot_id', 'utf8').trim();
    // The holder's start time is not the live process's: the pid was reused.
    writeFileSync(lock, `${unrelatedProcess()}\n0123456789abcdef\nboot ${boot}\npidns ${pidNamespace}\nstart 1\n`);
    const saved = await new WipStore({ cwd: dir, lockWaitMs: 0 }).save({});
    assert.equal(saved.created, true);
  });

  it('takes over a lock written before the machine rebooted, whatever runs under its pid now', async () => {
    const dir = makeRepo();
    const lock = join(dir, '.git', LOCK);
    const pidNamespace = spawnSync('readlink', ['/proc/self/ns/pid'], { encoding: 'utf8' }).stdout.trim();
    writeFileSync(lock, `${process.pid}\n0123456789abcdef\nboot 00000000-0000-0000-0000-000000000000\npidns ${pidNamespace}\nstart 1\n`);
    const saved = await new WipStore({ cwd: dir, lockWaitMs: 0 }).save({});
    assert.equal(saved.created, true);
  });

  it('waits for a live holder recorded with its start time, and refuses with wip-race', async () => {
    const dir = makeRepo();
    const lock = join(dir, '.git', LOCK);
    // A save of this very process holds it: taken through the SDK, held by a clean filter that waits.
    writeFiles(dir, { '.gitattributes': '*.slow filter=slow\n', 'a.slow': 'slow\n' });
    git(dir, ['config', 'filter.slow.clean', `sh -c 'while [ ! -e ${join(dir, '.git', 'go')} ]; do sleep 0.05; done; cat'`]);
    const holding = new WipStore({ cwd: dir }).save({ label: 'holder' });
    while (!existsSync(lock)) await sleep(10);
    const content = readFileSync(lock, 'utf8');
    assert.match(content, new RegExp(`^${process.pid}\\n`), 'the pid stays first, where older chant versions read it');
    await assert.rejects(new WipStore({ cwd: dir, lockWaitMs: 300 }).save({ label: 'contender' }), (error) => isWipError(error, 'wip-race'));
    writeFileSync(join(dir, '.git', 'go'), '');
    assert.equal((await holding).created, true);
  });

  it('does not take over a lock left by a prune killed while its git gc --prune=now still runs, in the main worktree and a linked one, until that gc ends', async () => {
    const dir = makeRepo();
    const linked = join(dir, '..', `${dir.split('/').at(-1)}-linked`);
    git(dir, ['worktree', 'add', '-q', '-b', 'other', linked]);
    try {
      // The killed prune's pid runs nothing now; the gc it started runs on, as git records it.
      const dead = spawnSync('true').pid as number;
      const gc = spawn('sleep', ['60'], { stdio: 'ignore' });
      children.push(gc);
      await sleep(1_100);
      writeFileSync(join(dir, '.git', 'gc.pid'), `${gc.pid} ${hostname()}`);
      const linkedGitDir = git(linked, ['rev-parse', '--absolute-git-dir']).trim();
      for (const [cwd, gitDir] of [[dir, join(dir, '.git')], [linked, linkedGitDir]] as const) {
        writeFileSync(join(gitDir, LOCK), `${dead}\n0123456789abcdef\n`);
        writeFiles(cwd, { 'work.txt': 'work\n' });
        await assert.rejects(new WipStore({ cwd, lockWaitMs: 300 }).save({}), (error) => isWipError(error, 'wip-race') && new RegExp(`git gc \\(process ${gc.pid}\\)`).test(error.message), cwd);
        assert.equal(existsSync(join(gitDir, LOCK)), true, 'the lock stays while the gc runs');
      }
      gc.kill('SIGKILL');
      await new Promise((resolve) => gc.once('exit', resolve));
      // git leaves gc.pid behind when its gc is killed: a pid that runs nothing holds nothing.
      for (const cwd of [dir, linked]) assert.equal((await new WipStore({ cwd, lockWaitMs: 300 }).save({})).created, true, cwd);
    } finally {
      git(dir, ['worktree', 'remove', '--force', linked], { allowFail: true });
    }
  });

  it('takes over a stale lock when gc.pid names a process that started after git wrote it (its pid reused), or another host', async () => {
    const dir = makeRepo();
    const gcPid = join(dir, '.git', 'gc.pid');
    for (const host of [hostname(), 'another-host']) {
      writeFileSync(join(dir, '.git', LOCK), `${spawnSync('true').pid}\n0123456789abcdef\n`);
      writeFileSync(gcPid, `${unrelatedProcess()} ${host}`);
      if (host === hostname()) utimesSync(gcPid, aMinuteAgo(), aMinuteAgo());
      writeFiles(dir, { 'work.txt': `${host}\n` });
      assert.equal((await new WipStore({ cwd: dir, lockWaitMs: 300 }).save({})).created, true, host);
    }
  });

  it('waits for a lock it cannot read, as for a live holder, and refuses with wip-race when the wait ends', async () => {
    const dir = makeRepo();
    // Something there that no read gives a holder of (another user's file, here a folder).
    mkdirSync(join(dir, '.git', LOCK));
    const started = Date.now();
    await assert.rejects(new WipStore({ cwd: dir, lockWaitMs: 300 }).save({ label: 'contender' }), (error) => isWipError(error, 'wip-race') && /cannot be read/.test(error.message));
    assert.ok(Date.now() - started < 10_000, 'the wait ends when it says');
    rmSync(join(dir, '.git', LOCK), { recursive: true });
    assert.equal((await new WipStore({ cwd: dir, lockWaitMs: 300 }).save({ label: 'after' })).created, true);
  });

  it('never takes over a live lock held from another PID namespace', async (t) => {
    const probe = spawnSync('unshare', ['--pid', '--fork', '--mount-proc', 'true']);
    if (process.getuid?.() !== 0 || probe.status !== 0) return t.skip('needs root and unshare --pid --fork --mount-proc to run a save in another PID namespace');
    assert.ok(existsSync(BIN), 'npm run build first');
    const dir = makeRepo();
    writeFiles(dir, { '.gitattributes': '*.slow filter=slow\n', 'a.slow': 'slow\n', 'work.txt': 'work\n' });
    const go = join(dir, '.git', 'go');
    git(dir, ['config', 'filter.slow.clean', `sh -c 'while [ ! -e ${go} ]; do sleep 0.05; done; cat'`]);
    // The holder: a save on this side, waiting in its clean filter while it holds the lock.
    const holder = spawn(process.execPath, [BIN, 'workspace', 'wip', 'save', '--label', 'host'], { cwd: dir, stdio: ['ignore', 'pipe', 'pipe'] });
    children.push(holder);
    const holderOut: Buffer[] = [];
    holder.stdout?.on('data', (chunk: Buffer) => holderOut.push(chunk));
    const holderDone = new Promise<number | null>((resolve) => holder.once('close', resolve));
    const lock = join(dir, '.git', LOCK);
    while (!existsSync(lock)) await sleep(10);
    // The contender: a save in a PID namespace of its own, as in a container sharing the checkout.
    // Its pid numbers are not the host's, so "is that pid alive" cannot judge the host's lock.
    const script = `
      const { WipStore } = await import(${JSON.stringify(join(BIN, '..', '..', 'lib', 'index.js'))});
      try {
        const saved = await new WipStore({ cwd: ${JSON.stringify(dir)}, lockWaitMs: 1500 }).save({ label: 'container' });
        process.stdout.write(JSON.stringify({ saved: saved.snapshot.label }));
      } catch (error) {
        process.stdout.write(JSON.stringify({ code: error.code, message: error.message }));
      }`;
    const contender = spawn('unshare', ['--pid', '--fork', '--mount-proc', process.execPath, '--input-type=module', '-e', script], { cwd: dir, stdio: ['ignore', 'pipe', 'pipe'] });
    children.push(contender);
    const out: Buffer[] = [];
    contender.stdout?.on('data', (chunk: Buffer) => out.push(chunk));
    contender.stderr?.on('data', (chunk: Buffer) => out.push(chunk));
    const contenderDone = new Promise((resolve) => contender.once('close', resolve));
    // A contender that took the lock waits in the same clean filter: let it go after a while, so the test ends.
    const verdict = await Promise.race([contenderDone.then(() => 'ended'), sleep(15_000).then(() => 'still running')]);
    writeFileSync(go, '');
    await contenderDone;
    const answer = parseDocument(Buffer.concat(out).toString());
    assert.equal(verdict, 'ended');
    assert.equal(answer?.code, 'wip-race', `the contender took the host's live lock: ${Buffer.concat(out).toString()}`);
    assert.equal(await holderDone, 0, Buffer.concat(holderOut).toString());
    assert.equal(parseDocument(Buffer.concat(holderOut).toString()).created, true);
  });
});
