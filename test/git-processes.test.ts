import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { chmodSync, existsSync, mkdirSync, readdirSync, readFileSync, writeFileSync } from 'node:fs';
import { createServer } from 'node:net';
import type { Server, Socket } from 'node:net';
import { join } from 'node:path';
import { after, describe, it } from 'node:test';
import type { TestContext } from 'node:test';
import { GitCommandError, GitProcessRunner, gitEnvironment, NETWORK_MIN_BYTES } from '../lib/git/runner.js';
import { git, makeRepo, ROOT, tempDir, writeFiles } from './helpers.js';
import { PROC, pidsIn, survivors } from './processes.js';
import { startGitDaemon, startProxy, startTricklingListener } from './remotes.js';

// How git processes are run: each in a group of its own that a timeout or a deadline stops as a
// whole, a timeout that measures progress rather than silence, and no wait on pipes that what git
// started keeps open after git has exited. Bounds on time here are generous: they tell a stop
// from a hang, never a fast machine from a slow one.

/** An executable shell script. */
function script(path: string, body: string): string {
  writeFileSync(path, `#!/bin/sh\n${body}\n`);
  chmodSync(path, 0o755);
  return path;
}

/** Everything git might leave half written in a git directory: locks and temporary objects. */
function leftovers(gitDir: string): string[] {
  const found: string[] = [];
  const walk = (dir: string, depth: number): void => {
    for (const entry of readdirSync(dir, { withFileTypes: true })) {
      const path = join(dir, entry.name);
      if (entry.isDirectory() && depth < 3) walk(path, depth + 1);
      else if (entry.name.endsWith('.lock') || entry.name.startsWith('tmp_')) found.push(path.slice(gitDir.length + 1));
    }
  };
  walk(gitDir, 0);
  return found.sort();
}

/** A repository with a clean filter `slow` on `*.slow`, the filter being `body` as a script. */
function filtered(body: string): { dir: string; pids: string } {
  const dir = makeRepo();
  const tools = tempDir('chant-filter-');
  const pids = join(tools, 'pids');
  const filter = script(join(tools, 'filter.sh'), body.replaceAll('$PIDS', `'${pids}'`));
  writeFiles(dir, { '.gitattributes': '*.slow filter=slow\n', 'data.slow': 'x\n'.repeat(50) });
  git(dir, ['config', 'filter.slow.clean', filter]);
  return { dir, pids };
}

async function rejection(promise: Promise<unknown>): Promise<GitCommandError> {
  try {
    await promise;
  } catch (error) {
    assert.ok(error instanceof GitCommandError, String(error));
    return error;
  }
  assert.fail('the call succeeded');
}

const servers: Server[] = [];
const sockets = new Set<Socket>();
after(() => {
  for (const socket of sockets) socket.destroy();
  for (const server of servers) server.close();
});

/** A listener on 127.0.0.1 that accepts every connection and never says a word. */
async function silentListener(): Promise<number> {
  const server = createServer((socket) => {
    sockets.add(socket);
    socket.on('error', () => undefined);
  });
  servers.push(server);
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const address = server.address();
  if (address === null || typeof address === 'string') throw new Error('no port');
  return address.port;
}

/** Pids of the processes whose command line holds `text`, this test process left out. */
function processesMentioning(text: string): number[] {
  if (!PROC) return [];
  const found: number[] = [];
  for (const name of readdirSync('/proc')) {
    if (!/^\d+$/.test(name) || Number(name) === process.pid) continue;
    try {
      if (readFileSync(`/proc/${name}/cmdline`, 'latin1').includes(text)) found.push(Number(name));
    } catch {
      // Gone.
    }
  }
  return found;
}

/** Runs `call`, noting every process mentioning `text` seen while it runs. */
async function watching<T>(text: string, call: Promise<T>): Promise<{ result: PromiseSettledResult<T>; seen: number[] }> {
  const seen = new Set<number>();
  let done = false;
  const poll = (async () => {
    while (!done) {
      for (const pid of processesMentioning(text)) seen.add(pid);
      await new Promise((resolve) => setTimeout(resolve, 50));
    }
  })();
  const [result] = await Promise.allSettled([call]);
  done = true;
  await poll;
  return { result, seen: [...seen] };
}

function needsGroups(t: TestContext): boolean {
  if (process.platform === 'win32') {
    t.skip('process groups are a POSIX feature');
    return false;
  }
  return true;
}

describe('git processes', () => {
  it('stops a clean filter that sleeps, with git and the filter\'s own children, as making no progress, and leaves no lock or temporary object', async (t) => {
    if (!needsGroups(t)) return;
    const { dir, pids } = filtered('echo $$ >> $PIDS\nsleep 600 &\necho $! >> $PIDS\nwait');
    const index = join(dir, '.git', 'chant-probe.index');
    const started = Date.now();
    const error = await rejection(new GitProcessRunner(dir).run(['add', '--all'], { env: { GIT_INDEX_FILE: index }, timeoutMs: 1_500 }));
    const took = Date.now() - started;
    t.diagnostic(`stopped after ${took} ms: ${error.message}`);
    assert.equal(error.stopped, 'stalled');
    assert.equal(error.exitCode, null);
    assert.match(error.message, /git add failed: .*no progress for 1\.5 s/);
    assert.ok(took < 60_000, `stopped in ${took} ms, not after the filter's 600 s`);
    const started2 = pidsIn(pids);
    assert.equal(started2.length, 2, 'the filter and its sleep started');
    assert.deepEqual(await survivors(started2), [], 'the filter and the sleep it started are gone');
    assert.deepEqual(leftovers(join(dir, '.git')), [], 'no index.lock of the temporary index, no tmp_obj_');
  });

  it('removes the temporary object git was writing when its caller cancels it, as on a stall', async (t) => {
    if (!needsGroups(t)) return;
    if (!PROC) return t.skip('what git writes is read from /proc');
    // The filter stands for git half way through an object: a tmp_obj_ file of the object store
    // open for writing in the group, when the caller's signal comes.
    const { dir, pids } = filtered('echo $$ >> $PIDS\nexec 3> "$GIT_DIR_OBJECTS/ab/tmp_obj_cancelled"\necho started >> $PIDS.ready\nsleep 600');
    git(dir, ['config', 'filter.slow.clean', `GIT_DIR_OBJECTS='${join(dir, '.git', 'objects')}' ${git(dir, ['config', 'filter.slow.clean']).trim()}`]);
    mkdirSync(join(dir, '.git', 'objects', 'ab'), { recursive: true });
    const index = join(dir, '.git', 'chant-probe.index');
    const controller = new AbortController();
    const running = rejection(new GitProcessRunner(dir).run(['add', '--all'], { env: { GIT_INDEX_FILE: index }, signal: controller.signal }));
    while (!existsSync(`${pids}.ready`)) await new Promise((resolve) => setTimeout(resolve, 20));
    assert.ok(leftovers(join(dir, '.git')).includes('objects/ab/tmp_obj_cancelled'), 'the half-written object is there while git runs');
    controller.abort();
    const error = await running;
    assert.match(error.message, /stopped by its caller/);
    assert.deepEqual(await survivors(pidsIn(pids)), [], 'the filter is gone');
    assert.deepEqual(leftovers(join(dir, '.git')), [], 'a cancelled call leaves no tmp_obj_ behind, as a stopped one does not');
  });

  it('stops git at the deadline even while it makes progress, and says so', async (t) => {
    if (!needsGroups(t)) return;
    // A filter that keeps reading and writing, slowly, for far longer than the deadline.
    const { dir, pids } = filtered('echo $$ >> $PIDS\nwhile :; do echo tick; sleep 0.05; done');
    const index = join(dir, '.git', 'chant-probe.index');
    const error = await rejection(new GitProcessRunner(dir).run(['add', '--all'], { env: { GIT_INDEX_FILE: index }, timeoutMs: 1_000, deadline: Date.now() + 2_500 }));
    assert.equal(error.stopped, 'deadline', error.message);
    assert.match(error.message, /the deadline passed while it ran/);
    assert.deepEqual(await survivors(pidsIn(pids)), []);
    assert.deepEqual(leftovers(join(dir, '.git')), []);
  });

  it('refuses to start git once the deadline has passed', async () => {
    const dir = makeRepo();
    const error = await rejection(new GitProcessRunner(dir).run(['status'], { deadline: Date.now() - 1 }));
    assert.equal(error.stopped, 'deadline');
  });

  it('does not stop a filter that works slowly but steadily, well past the timeout, however silent git is', async (t) => {
    if (!needsGroups(t)) return;
    if (!PROC) {
      t.skip('progress other than output is read from /proc');
      return;
    }
    // 50 lines at 80 ms each: some 4 s of work, all of it reading and writing, with a 1.5 s timeout.
    const { dir } = filtered('while IFS= read -r line; do printf "%s\\n" "$line"; sleep 0.08; done');
    const index = join(dir, '.git', 'chant-probe.index');
    const started = Date.now();
    await new GitProcessRunner(dir).run(['add', '--all'], { env: { GIT_INDEX_FILE: index }, timeoutMs: 1_500 });
    t.diagnostic(`git add through the slow filter took ${Date.now() - started} ms with a 1,500 ms timeout`);
    assert.match(git(dir, ['ls-files', '-s', 'data.slow'], { env: { GIT_INDEX_FILE: index } }), /data\.slow/);
    assert.deepEqual(leftovers(join(dir, '.git')), []);
  });

  it('does not stop a big file that a filter cleans slowly, at a steady rate, for longer than the timeout', async (t) => {
    if (!needsGroups(t)) return;
    if (!PROC) {
      t.skip('progress other than output is read from /proc');
      return;
    }
    // 3 MiB through a filter passing 0.75 MiB a second: some 4 s of reading and writing, 1.5 s timeout.
    const throttle = `let q=[];process.stdin.on("data",c=>q.push(c));process.stdin.on("end",()=>{const all=Buffer.concat(q);let at=0;const step=()=>{if(at>=all.length)return;process.stdout.write(all.subarray(at,at+=65536));setTimeout(step,83)};step()})`;
    const { dir } = filtered(`exec '${process.execPath}' -e '${throttle}'`);
    writeFiles(dir, { 'big.slow': 'y'.repeat(3 * 1024 * 1024), 'data.slow': null });
    const index = join(dir, '.git', 'chant-probe.index');
    const started = Date.now();
    await new GitProcessRunner(dir).run(['add', '--all'], { env: { GIT_INDEX_FILE: index }, timeoutMs: 1_500 });
    t.diagnostic(`git add of 3 MiB through a 0.75 MiB/s filter took ${Date.now() - started} ms with a 1,500 ms timeout`);
    assert.match(git(dir, ['ls-files', '-s'], { env: { GIT_INDEX_FILE: index } }), /big\.slow/);
  });

  it('returns promptly when a filter leaves a background process holding git\'s standard error', async (t) => {
    if (!needsGroups(t)) return;
    const { dir, pids } = filtered('sleep 600 >/dev/null </dev/null &\necho $! >> $PIDS\ncat');
    const index = join(dir, '.git', 'chant-probe.index');
    const started = Date.now();
    await new GitProcessRunner(dir).run(['add', '--all'], { env: { GIT_INDEX_FILE: index } });
    const took = Date.now() - started;
    t.diagnostic(`git add returned after ${took} ms`);
    assert.ok(took < 60_000, `returned in ${took} ms, not when the sleep holding stderr ends`);
    assert.match(git(dir, ['ls-files', '-s', 'data.slow'], { env: { GIT_INDEX_FILE: index } }), /data\.slow/);
    assert.deepEqual(await survivors(pidsIn(pids)), [], 'the background process holding the pipe was stopped');
  });

  it('stops a fetch from an http:// listener that never answers, with git-remote-http, and returns a reason', async (t) => {
    if (!needsGroups(t)) return;
    const dir = makeRepo();
    const port = await silentListener();
    const url = `http://127.0.0.1:${port}/never.git`;
    const { result, seen } = await watching(`127.0.0.1:${port}`, new GitProcessRunner(dir).run(['fetch', url], { timeoutMs: 1_500 }));
    assert.equal(result.status, 'rejected');
    const error = (result as PromiseRejectedResult).reason as GitCommandError;
    assert.equal(error.stopped, 'stalled', error.message);
    t.diagnostic(`${error.message}; processes seen: ${seen.join(', ')}`);
    if (PROC) assert.ok(seen.length >= 1, 'git-remote-http was seen running');
    assert.deepEqual(await survivors(seen), [], 'git and git-remote-http are gone');
  });

  it('stops a push over ssh:// whose ssh connects and waits forever, with the ssh program, and returns a reason', async (t) => {
    if (!needsGroups(t)) return;
    const dir = makeRepo();
    const port = await silentListener();
    const tools = tempDir('chant-ssh-');
    // An "ssh" that connects to the silent listener and waits for an answer that never comes.
    const ssh = script(join(tools, 'ssh'), `exec '${process.execPath}' -e 'require("net").connect(${port}, "127.0.0.1"); setInterval(() => {}, 1e9)' ssh-wait-${port}`);
    for (const [name, env] of [['GIT_SSH_COMMAND', { GIT_SSH_COMMAND: ssh }], ['GIT_SSH', { GIT_SSH: ssh }]] as const) {
      const { result, seen } = await watching(`ssh-wait-${port}`, new GitProcessRunner(dir).run(['push', `ssh://git@127.0.0.1:${port}/repo.git`, 'main'], { timeoutMs: 1_500, env }));
      assert.equal(result.status, 'rejected', name);
      const error = (result as PromiseRejectedResult).reason as GitCommandError;
      assert.equal(error.stopped, 'stalled', `${name}: ${error.message}`);
      if (PROC) assert.ok(seen.length >= 1, `${name}: the ssh program was seen running`);
      assert.deepEqual(await survivors(seen), [], `${name}: the ssh program is gone`);
    }
  });

  it('stops a fetch and a push over git:// from a remote that answers a byte a second, as moving too few bytes to be progress', async (t) => {
    if (!needsGroups(t)) return;
    if (!PROC) {
      t.skip('git reading a trickle is seen in /proc alone');
      return;
    }
    const dir = makeRepo();
    const listener = await startTricklingListener();
    const url = `git://127.0.0.1:${listener.port}/trickle.git`;
    for (const args of [['fetch', url, 'refs/heads/*:refs/trickle/*'], ['push', url, 'main']]) {
      const started = Date.now();
      const error = await rejection(new GitProcessRunner(dir).run(args, { timeoutMs: 1_500, minBytes: NETWORK_MIN_BYTES }));
      const took = Date.now() - started;
      t.diagnostic(`${args[0]} stopped after ${took} ms: ${error.message}`);
      assert.equal(error.stopped, 'stalled', error.message);
      assert.match(error.message, /no progress for 1\.5 s \(no output, under 1,024 bytes moved, no work\)/);
      assert.ok(took < 30_000, `${args[0]} stopped in ${took} ms, not after the trickle's 18 hours`);
    }
  });

  it('does not stop a fetch over git:// through a link paced at 2 KiB/s, eight times the bytes a network call must move in its timeout, though it takes several times the timeout', async (t) => {
    if (!needsGroups(t)) return;
    if (!PROC) {
      t.skip('bytes moving are seen in /proc alone');
      return;
    }
    const daemon = await startGitDaemon();
    const bare = join(daemon.base, 'paced.git');
    daemon.repository('paced.git');
    const source = makeRepo();
    // Random bytes: nothing a pack could compress away, and one object, so git prints nothing
    // while it arrives.
    writeFileSync(join(source, 'big.bin'), randomBytes(24 * 1024));
    git(source, ['add', 'big.bin']);
    git(source, ['commit', '-q', '-m', 'big']);
    git(source, ['push', '-q', bare, 'main']);
    const link = await startProxy(daemon.port, { bytesPerSecond: 2 * 1024 });
    const dir = makeRepo();
    const started = Date.now();
    // 1,024 bytes in 4 s is 256 B/s; the timeout is also longer than the link takes to answer a connection.
    await new GitProcessRunner(dir).run(['fetch', `git://127.0.0.1:${link.port}/paced.git`, 'refs/heads/main:refs/paced/main'], { timeoutMs: 4_000, minBytes: NETWORK_MIN_BYTES });
    const took = Date.now() - started;
    t.diagnostic(`fetch of 24 KiB at 2 KiB/s took ${took} ms with a 4,000 ms timeout`);
    assert.ok(took > 2 * 4_000, `the link was slow enough to matter (${took} ms)`);
    assert.equal(git(dir, ['rev-parse', 'refs/paced/main']).trim(), git(source, ['rev-parse', 'main']).trim());
  });

  it('runs git in a session of its own, without a terminal to prompt on', async (t) => {
    if (!needsGroups(t)) return;
    const { dir } = filtered('if (exec 3<>/dev/tty) 2>/dev/null; then echo tty; else echo no-tty; fi; cat >/dev/null');
    // The filter's output is the blob: read it back.
    const blob = (await new GitProcessRunner(dir).run(['hash-object', '-w', '--path=data.slow', '--stdin'], { input: 'x\n' })).stdout.trim();
    assert.match(git(dir, ['cat-file', 'blob', blob]), /^no-tty/, 'the filter could not open a terminal');
  });

  it('lets git remove its index.lock when this process is ended by SIGINT, SIGTERM or SIGHUP while git holds it, as a Ctrl-C in the middle of a restore\'s reset does', async (t) => {
    if (!needsGroups(t)) return;
    for (const signal of ['SIGINT', 'SIGTERM', 'SIGHUP'] as const) {
      const dir = makeRepo();
      writeFiles(dir, { 'README.md': 'changed\n' });
      git(dir, ['add', 'README.md']);
      // git commit -a holds index.lock while its editor runs: a git that holds the lock as long as
      // the test needs. The runner is the only listener for the signal, as in the CLI.
      const program = [
        `import { GitProcessRunner } from ${JSON.stringify(join(ROOT, 'lib', 'git', 'runner.ts'))};`,
        `await new GitProcessRunner(${JSON.stringify(dir)}).run(['-c', 'core.editor=sleep 60 #', 'commit', '-a']);`,
      ].join('\n');
      const child = spawn(process.execPath, ['--import', 'tsx', '--input-type=module', '-e', program], { cwd: ROOT, stdio: 'ignore' });
      const exited = new Promise<NodeJS.Signals | null>((resolve) => child.once('exit', (_code, how) => resolve(how)));
      const lock = join(dir, '.git', 'index.lock');
      const until = Date.now() + 30_000;
      while (!existsSync(lock) && Date.now() < until) await new Promise((resolve) => setTimeout(resolve, 20));
      assert.ok(existsSync(lock), 'git took the index lock');
      await new Promise((resolve) => setTimeout(resolve, 200));
      child.kill(signal);
      assert.equal(await exited, signal, `the process ends by ${signal}, as it would with no listener`);
      assert.deepEqual(leftovers(join(dir, '.git')), [], `no index.lock left after ${signal}`);
      assert.equal(git(dir, ['status', '--porcelain']), 'M  README.md\n', 'git can take the index again');
    }
  });

  it('names every error: line of git\'s failure, not only the last fatal: line', async () => {
    const dir = makeRepo();
    const error = await rejection(new GitProcessRunner(dir).run(['update-ref', '--stdin'], { input: 'update refs/heads/a 1234\nupdate refs/heads/b 5678\n' }));
    assert.equal(error.lastLine, error.stderr.trim().split('\n').at(-1));
    assert.ok(error.summary.endsWith(error.lastLine), error.summary);
    const big = new GitCommandError(['add'], 128, 'warning: x\nerror: open("a.txt"): Permission denied\nerror: unable to index file \'a.txt\'\nfatal: adding files failed\n');
    assert.equal(big.summary, 'error: open("a.txt"): Permission denied; error: unable to index file \'a.txt\'; fatal: adding files failed');
    const remote = new GitCommandError(['push'], 1, 'remote: Counting objects: 100% (3/3)\nremote: secret found in a.txt\nremote: error: refusing\nTo /x\n ! [remote rejected] main -> main (pre-receive hook declined)\nerror: failed to push some refs to \'/x\'\n');
    assert.equal(remote.summary, 'remote: secret found in a.txt; remote: error: refusing; ! [remote rejected] main -> main (pre-receive hook declined); error: failed to push some refs to \'/x\'');
    const ssh = new GitCommandError(['fetch'], 128, 'Host key verification failed.\r\nfatal: Could not read from remote repository.\n\nPlease make sure you have the correct access rights\nand the repository exists.\n');
    assert.equal(ssh.summary, 'Host key verification failed.; fatal: Could not read from remote repository.');
  });
});

describe('what git is run with', () => {
  it('runs no hook: core.hooksPath on the command line wins over the checkout\'s and GIT_CONFIG_COUNT', async () => {
    const dir = makeRepo();
    const marker = join(tempDir('chant-hook-'), 'marker');
    const hooks = join(dir, '.git', 'hooks');
    script(join(hooks, 'reference-transaction'), `echo reference-transaction >> '${marker}'`);
    git(dir, ['update-ref', 'refs/probe/plain', 'HEAD']);
    assert.ok(existsSync(marker), 'plain git runs the hook');
    writeFileSync(marker, '');
    await new GitProcessRunner(dir).run(['update-ref', 'refs/probe/chant', 'HEAD'], { env: { GIT_CONFIG_COUNT: '1', GIT_CONFIG_KEY_0: 'core.hooksPath', GIT_CONFIG_VALUE_0: hooks } });
    assert.equal(readFileSync(marker, 'utf8'), '');
  });

  it('merges a host\'s GIT_CONFIG_COUNT settings with a call\'s own, the call\'s last', () => {
    const env = gitEnvironment(
      { GIT_CONFIG_COUNT: '1', GIT_CONFIG_KEY_0: 'i18n.commitEncoding', GIT_CONFIG_VALUE_0: 'UTF-8', GIT_INDEX_FILE: '/x' },
      { PATH: '/bin', GIT_CONFIG_COUNT: '2', GIT_CONFIG_KEY_0: 'safe.directory', GIT_CONFIG_VALUE_0: '*', GIT_CONFIG_KEY_1: 'i18n.commitEncoding', GIT_CONFIG_VALUE_1: 'latin1', GIT_DIR: '/elsewhere' },
    );
    assert.equal(env.GIT_CONFIG_COUNT, '3');
    assert.deepEqual([env.GIT_CONFIG_KEY_0, env.GIT_CONFIG_KEY_1, env.GIT_CONFIG_KEY_2], ['safe.directory', 'i18n.commitEncoding', 'i18n.commitEncoding']);
    assert.equal(env.GIT_CONFIG_VALUE_2, 'UTF-8');
    assert.equal(env.GIT_INDEX_FILE, '/x');
    assert.equal(env.GIT_DIR, undefined);
    // A count git would refuse (a key missing) is dropped rather than failing every call.
    assert.equal(gitEnvironment({}, { GIT_CONFIG_COUNT: '2', GIT_CONFIG_KEY_0: 'a.b', GIT_CONFIG_VALUE_0: '1' }).GIT_CONFIG_COUNT, undefined);
  });

  it('passes the documented host settings to git and what it starts, and nothing else of GIT_*', async (t) => {
    if (!needsGroups(t)) return;
    const { dir } = filtered('env | sort; cat >/dev/null');
    const tools = tempDir('chant-env-');
    const global = join(tools, 'global.gitconfig');
    writeFileSync(global, '[chant "probe"]\n\tglobal = yes\n');
    const host: Record<string, string> = {
      GIT_CONFIG_GLOBAL: global,
      GIT_CONFIG_COUNT: '1', GIT_CONFIG_KEY_0: 'chant.probe.count', GIT_CONFIG_VALUE_0: 'yes',
      GIT_SSL_CAINFO: join(tools, 'ca.pem'), GIT_SSL_CAPATH: tools, SSL_CERT_FILE: join(tools, 'ca.pem'),
      GIT_ASKPASS: join(tools, 'broker'), GIT_SSH_VARIANT: 'ssh',
      GIT_DIR: join(tools, 'not-this'), GIT_INDEX_FILE: join(tools, 'not-this-index'), GIT_TRACE: '1', GIT_EXTERNAL_DIFF: 'x',
    };
    const saved = { ...process.env };
    Object.assign(process.env, host);
    try {
      const runner = new GitProcessRunner(dir);
      assert.equal((await runner.run(['config', '--global', 'chant.probe.global'])).stdout, 'yes\n', 'GIT_CONFIG_GLOBAL');
      assert.equal((await runner.run(['config', 'chant.probe.count'])).stdout, 'yes\n', 'GIT_CONFIG_COUNT');
      const blob = (await runner.run(['hash-object', '-w', '--path=data.slow', '--stdin'], { input: 'x\n' })).stdout.trim();
      const seen = git(dir, ['cat-file', 'blob', blob]);
      for (const key of ['GIT_SSL_CAINFO', 'GIT_SSL_CAPATH', 'SSL_CERT_FILE', 'GIT_ASKPASS', 'GIT_SSH_VARIANT', 'GIT_CONFIG_GLOBAL']) {
        assert.ok(seen.includes(`${key}=${host[key]}\n`), `${key} reaches what git starts`);
      }
      for (const key of ['GIT_DIR', 'GIT_INDEX_FILE', 'GIT_TRACE', 'GIT_EXTERNAL_DIFF']) assert.ok(!seen.includes(`${key}=${host[key]}`), `${key} stays out`);
      assert.match(seen, /^GIT_TERMINAL_PROMPT=0$/m);
    } finally {
      for (const key of Object.keys(host)) delete process.env[key];
      Object.assign(process.env, saved);
    }
  });

  it('turns every askpass off unless the host names its own in GIT_ASKPASS', () => {
    assert.equal(gitEnvironment({}, { PATH: '/bin' }).GIT_ASKPASS, '');
    assert.equal(gitEnvironment({}, { GIT_ASKPASS: '' }).GIT_ASKPASS, '');
    assert.equal(gitEnvironment({}, { GIT_ASKPASS: '/opt/broker' }).GIT_ASKPASS, '/opt/broker');
    assert.equal(gitEnvironment({}, { SSH_ASKPASS: '/usr/bin/x' }).SSH_ASKPASS, '');
  });
});
