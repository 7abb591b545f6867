// The lost-box story over every transport chant replicates through, LFS files included: a box
// saves after a turn (the save pushes), the box is gone, a replacement clones the remote, fetches,
// checks the work branch out and restores, and every file is back, the LFS file's content too.
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { test } from 'node:test';
import type { TestContext } from 'node:test';
import { git, makeRepo, runCli, tempDir, treeOf, writeFiles } from './helpers.js';
import { bareRemote, missingLfs, runnerPasses, missingProgram, startGitDaemon, startLighttpd, startSshd } from './remotes.js';

const USER = 'alice';
const PASSWORD = 'Sesame-0b7d';
const HELPER = `!f() { test "$1" = get && printf 'username=${USER}\\npassword=${PASSWORD}\\n'; }; f`;

/** How a box reaches one remote: its URL and the git settings a host would give both boxes. */
interface Transport {
  url: string;
  /** Config a host sets in each checkout (`-c` for the clone), such as a credential helper. */
  config: Record<string, string>;
  /** The bare repository behind the URL. */
  bare: string;
  /** Variables a host sets for git (fixtures and chant alike), such as GIT_SSL_CAINFO. */
  env?: Record<string, string>;
  /** Where LFS objects go: null for the remote itself (path and file:// remotes), else a folder's file:// URL. */
  lfsUrl: string | null;
}

function declaration(): string {
  return `${JSON.stringify({ members: [{ name: 'app', box: { replicate: { remote: 'origin' } } }] }, null, 2)}\n`;
}

function configure(dir: string, transport: Transport): void {
  for (const [key, value] of Object.entries(transport.config)) git(dir, ['config', key, value]);
  git(dir, ['lfs', 'install', '--local']);
  if (transport.lfsUrl !== null) git(dir, ['config', 'lfs.url', transport.lfsUrl]);
}

/** Runs chant with the host's variables set, as the host would. */
async function chant(dir: string, args: readonly string[], transport: Transport): Promise<Awaited<ReturnType<typeof runCli>>> {
  const env = transport.env ?? {};
  const saved = new Map(Object.keys(env).map((key) => [key, process.env[key]]));
  Object.assign(process.env, env);
  try {
    return await runCli(dir, args, process.env);
  } finally {
    for (const [key, value] of saved) {
      if (value === undefined) delete process.env[key];
      else process.env[key] = value;
    }
  }
}

/** A folder LFS objects go to over the standalone file transfer: a bare repository on this machine. */
function lfsFolder(): string {
  return `file://${bareRemote()}`;
}

async function lostBox(t: TestContext, transport: Transport): Promise<void> {
  const lfs = missingLfs();
  if (lfs !== null) return t.skip(lfs);
  if (transport.env !== undefined) await runnerPasses(t, transport.env);
  const dir = makeRepo({ 'README.md': 'project\n', '.gitattributes': '*.bin filter=lfs diff=lfs merge=lfs -text\n', 'chant.workspace.json': declaration() });
  git(dir, ['remote', 'add', 'origin', transport.url]);
  configure(dir, transport);
  git(dir, ['push', '-q', 'origin', 'main'], { env: transport.env });
  git(dir, ['checkout', '-q', '-b', 'chant/work/W-001']);
  const noise = spawnSync('head', ['-c', '65536', '/dev/urandom']).stdout.toString('base64');
  writeFiles(dir, { 'records/W-001.json': '{"state":"uncommitted"}\n', 'assets/model.bin': noise });
  const saved = await chant(dir, ['workspace', 'wip', 'save', '--label', 'turn:7'], transport);
  assert.equal(saved.code, 0, saved.stdout);
  assert.deepEqual(saved.doc.replication.rejected, []);
  const expected = treeOf(dir);

  const fresh = join(tempDir(), 'replacement');
  git(tempDir(), ['clone', '-q', ...Object.entries(transport.config).flatMap(([key, value]) => ['-c', `${key}=${value}`]), transport.url, fresh], { env: transport.env });
  configure(fresh, transport);
  const fetched = await chant(fresh, ['workspace', 'wip', 'fetch'], transport);
  assert.equal(fetched.code, 0, fetched.stdout);
  assert.equal(fetched.doc.failed, null);
  git(fresh, ['checkout', '-q', 'chant/work/W-001']);
  // The LFS objects came with the fetch: the restore needs no network.
  git(fresh, ['remote', 'set-url', 'origin', join(tempDir(), 'gone.git')]);
  if (transport.lfsUrl !== null) git(fresh, ['config', 'lfs.url', `file://${join(tempDir(), 'gone.git')}`]);
  const restored = await runCli(fresh, ['workspace', 'wip', 'restore']);
  assert.equal(restored.code, 0, restored.stdout);
  assert.equal(readFileSync(join(fresh, 'assets/model.bin'), 'utf8'), noise);
  assert.deepEqual(treeOf(fresh), expected);
}

test('a lost box over a plain path, LFS files included', async (t) => {
  const bare = bareRemote();
  await lostBox(t, { url: bare, bare, config: {}, lfsUrl: null });
});

test('a lost box over file://, LFS files included', async (t) => {
  const bare = bareRemote();
  await lostBox(t, { url: `file://${bare}`, bare, config: {}, lfsUrl: null });
});

test('a lost box over git daemon, LFS files in a folder', async (t) => {
  const daemon = await startGitDaemon();
  const url = daemon.repository('lost.git');
  await lostBox(t, { url, bare: join(daemon.base, 'lost.git'), config: {}, lfsUrl: lfsFolder() });
});

test('a lost box over HTTP behind lighttpd with basic auth, LFS files in a folder', async (t) => {
  const missing = missingProgram('lighttpd');
  if (missing !== null) return t.skip(missing);
  const server = await startLighttpd({ auth: { user: USER, password: PASSWORD } });
  const url = server.repository('lost.git');
  await lostBox(t, { url, bare: join(server.base, 'lost.git'), config: { 'credential.helper': HELPER }, lfsUrl: lfsFolder() });
});

test('a lost box over HTTPS, LFS files in a folder', async (t) => {
  const missing = missingProgram('lighttpd') ?? missingProgram('openssl');
  if (missing !== null) return t.skip(missing);
  const server = await startLighttpd({ tls: true });
  const url = server.repository('lost.git');
  await lostBox(t, { url, bare: join(server.base, 'lost.git'), config: {}, env: { GIT_SSL_CAINFO: server.caFile ?? '' }, lfsUrl: lfsFolder() });
});

test('a lost box over ssh, LFS files in a folder', async (t) => {
  const missing = missingProgram('sshd');
  if (missing !== null) return t.skip(missing);
  const server = await startSshd();
  const url = server.repository('lost.git');
  await lostBox(t, { url, bare: join(server.base, 'lost.git'), config: { 'core.sshCommand': server.sshCommand }, lfsUrl: lfsFolder() });
});

