// The test servers of test/remotes.ts hold up with plain git, independent of the SDK: each
// transport the replication tests use takes a push and serves a clone, refuses what it should,
// and the failure servers (silent, slow, dying) behave as named.
import assert from 'node:assert/strict';
import { spawn, spawnSync } from 'node:child_process';
import { join } from 'node:path';
import { test } from 'node:test';
import { FIXTURE_ENV, git, makeRepo, tempDir } from './helpers.js';
import {
  bareRemote, missingProgram, refuseSecrets, startLighttpd, startProxy, startSilentListener, startSshd,
} from './remotes.js';

/** Plain git with no prompt, the way a host's script would run it; returns status and stderr. */
function plainGit(cwd: string, args: readonly string[], env: NodeJS.ProcessEnv = {}): { status: number | null; stderr: string; ms: number } {
  const started = Date.now();
  const result = spawnSync('git', args, { cwd, env: { ...FIXTURE_ENV, GIT_TERMINAL_PROMPT: '0', ...env }, encoding: 'utf8', timeout: 30_000 });
  return { status: result.status, stderr: result.stderr, ms: Date.now() - started };
}

/** The same, asynchronously: for servers that live in this process (a proxy), which spawnSync would starve. */
function plainGitAsync(cwd: string, args: readonly string[], env: NodeJS.ProcessEnv = {}): Promise<{ status: number | null; stderr: string; ms: number }> {
  const started = Date.now();
  return new Promise((resolve) => {
    const child = spawn('git', args, { cwd, env: { ...FIXTURE_ENV, GIT_TERMINAL_PROMPT: '0', ...env }, stdio: ['ignore', 'ignore', 'pipe'] });
    let stderr = '';
    child.stderr.setEncoding('utf8').on('data', (chunk: string) => {
      stderr += chunk;
    });
    const timer = setTimeout(() => child.kill('SIGKILL'), 30_000);
    child.once('close', (status) => {
      clearTimeout(timer);
      resolve({ status, stderr, ms: Date.now() - started });
    });
  });
}

test('lighttpd serves git http-backend without auth: a push goes and a clone comes back', async (t) => {
  const missing = missingProgram('lighttpd');
  if (missing !== null) return t.skip(missing);
  const server = await startLighttpd();
  const url = server.repository('open.git');
  const dir = makeRepo();
  assert.equal(plainGit(dir, ['push', url, 'main']).status, 0);
  const clone = join(tempDir(), 'clone');
  assert.equal(plainGit(tempDir(), ['clone', '-q', url, clone]).status, 0);
  assert.equal(git(clone, ['rev-parse', 'HEAD']), git(dir, ['rev-parse', 'HEAD']));
});

test('lighttpd with basic auth refuses a request without the credential and takes one with it', async (t) => {
  const missing = missingProgram('lighttpd');
  if (missing !== null) return t.skip(missing);
  const server = await startLighttpd({ auth: { user: 'alice', password: 'Sesame-1' } });
  server.repository('locked.git');
  const dir = makeRepo();
  const refused = plainGit(dir, ['push', server.url('locked.git'), 'main']);
  assert.notEqual(refused.status, 0);
  assert.match(refused.stderr, /terminal prompts disabled/);
  assert.equal(plainGit(dir, ['push', server.url('locked.git', 'alice:Sesame-1'), 'main']).status, 0);
});

test('lighttpd over TLS is trusted only with its certificate', async (t) => {
  const missing = missingProgram('lighttpd') ?? missingProgram('openssl');
  if (missing !== null) return t.skip(missing);
  const server = await startLighttpd({ tls: true });
  const url = server.repository('tls.git');
  const dir = makeRepo();
  const untrusted = plainGit(dir, ['push', url, 'main']);
  assert.notEqual(untrusted.status, 0);
  assert.match(untrusted.stderr, /certificate/i);
  assert.equal(plainGit(dir, ['push', url, 'main'], { GIT_SSL_CAINFO: server.caFile ?? '' }).status, 0);
});

test('sshd takes root by key and refuses the password-only account at once in batch mode', async (t) => {
  const missing = missingProgram('sshd');
  if (missing !== null) return t.skip(missing);
  const server = await startSshd();
  const url = server.repository('ssh.git');
  const dir = makeRepo();
  assert.equal(plainGit(dir, ['push', url, 'main'], { GIT_SSH_COMMAND: `${server.sshCommand} -o BatchMode=yes` }).status, 0);
  assert.equal(git(join(server.base, 'ssh.git'), ['rev-parse', 'main']), git(dir, ['rev-parse', 'main']));
  const refused = plainGit(dir, ['push', server.url('ssh.git', 'nobody'), 'main'], { GIT_SSH_COMMAND: `${server.sshCommandWithoutKey} -o BatchMode=yes` });
  assert.notEqual(refused.status, 0);
  assert.match(refused.stderr, /Permission denied/);
  assert.ok(refused.ms < 5_000, `refused in ${refused.ms} ms`);
});

test('the silent listener accepts and never answers', async () => {
  const listener = await startSilentListener();
  const dir = makeRepo();
  const result = plainGit(dir, ['-c', 'http.lowSpeedLimit=1', '-c', 'http.lowSpeedTime=2', 'ls-remote', `http://127.0.0.1:${listener.port}/x.git`]);
  assert.notEqual(result.status, 0);
  assert.ok(result.ms >= 1_500, `git gave up after ${result.ms} ms, so something answered`);
});

test('the throttled proxy delivers everything, slowly; the cutting proxy kills a push midway', async (t) => {
  const missing = missingProgram('lighttpd');
  if (missing !== null) return t.skip(missing);
  const server = await startLighttpd();
  const url = server.repository('slow.git');
  const port = Number(new URL(url).port);
  const slow = await startProxy(port, { bytesPerSecond: 64 * 1024 });
  const dir = makeRepo();
  // About 192 KB that does not compress: three seconds at 64 KB/s.
  const random = spawnSync('head', ['-c', String(192 * 1024), '/dev/urandom']).stdout;
  const blob = git(dir, ['hash-object', '-w', '--stdin'], { input: random.toString('latin1') }).trim();
  git(dir, ['update-index', '--add', '--cacheinfo', `100644,${blob},noise.bin`]);
  git(dir, ['commit', '-qm', 'noise']);
  const paced = await plainGitAsync(dir, ['push', `http://127.0.0.1:${slow.port}/slow.git`, 'main']);
  assert.equal(paced.status, 0, paced.stderr);
  assert.ok(paced.ms >= 2_000, `a paced push took ${paced.ms} ms`);
  assert.equal(git(join(server.base, 'slow.git'), ['rev-parse', 'main']), git(dir, ['rev-parse', 'main']));

  bareRemote(join(server.base, 'cut.git'));
  git(join(server.base, 'cut.git'), ['config', 'http.receivepack', 'true']);
  const dying = await startProxy(port, { cutAfterBytes: 64 * 1024 });
  const cut = await plainGitAsync(dir, ['push', `http://127.0.0.1:${dying.port}/cut.git`, 'main']);
  assert.notEqual(cut.status, 0);
  assert.equal(git(join(server.base, 'cut.git'), ['for-each-ref']), '');
});

test('the secret-scanning hook refuses a push adding SECRET and says why', () => {
  const remote = bareRemote();
  refuseSecrets(remote);
  const dir = makeRepo({ SECRET: 'token\n' });
  const refused = plainGit(dir, ['push', remote, 'main']);
  assert.notEqual(refused.status, 0);
  assert.match(refused.stderr, /remote: secret-scanner: refs\/heads\/main adds the file SECRET/);
  assert.equal(plainGit(makeRepo(), ['push', remote, 'main']).status, 0);
});
