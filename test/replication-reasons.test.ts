// Reasons a person can act on: a rejected ref or a failed fetch says what the remote said
// (`remote:` lines) and git's own cause (`error:`, `fatal:`), credentials redacted, never git's
// boilerplate or a placeholder. Each failure below reads differently.
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { chmodSync, mkdirSync, rmSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { test } from 'node:test';
import type { PolicyDocument, PushResult } from '../lib/documents/replication.js';
import { Replicator } from '../lib/replication/replicator.js';
import { git, makeRepo, tempDir } from './helpers.js';
import { bareRemote, missingProgram, startLighttpd, startProxy, startSshd } from './remotes.js';

const POLICY: PolicyDocument = { box: 'app', remote: 'origin', refs: ['work', 'kept', 'wip', 'ledger'], on: ['save', 'release'], every: null };
const WIP = 'refs/chant/wip/chant/work/W-001';
const WORK = 'refs/heads/chant/work/W-001';
const PLACEHOLDERS = [/^and the repository exists\.?$/, /reported nothing/, /^no message$/, /^failed to push some refs/];

/** A checkout with a work branch and a wip snapshot whose tree is `tree` (HEAD's when absent). */
function checkout(url: string, tree?: string): string {
  const dir = makeRepo();
  const base = git(dir, ['rev-parse', 'HEAD']).trim();
  const work = git(dir, ['commit-tree', 'HEAD^{tree}', '-p', base, '-m', 'work 1']).trim();
  git(dir, ['update-ref', WORK, work]);
  git(dir, ['update-ref', WIP, git(dir, ['commit-tree', tree ?? 'HEAD^{tree}', '-p', work, '-m', 'wip 1']).trim()]);
  git(dir, ['remote', 'add', 'origin', url]);
  return dir;
}

/** A tree holding `bytes` random bytes, which no compression shrinks. */
function noiseTree(dir: string, bytes: number): string {
  const noise = spawnSync('head', ['-c', String(bytes), '/dev/urandom']).stdout;
  const blob = spawnSync('git', ['hash-object', '-w', '--stdin'], { cwd: dir, input: noise, encoding: 'utf8' }).stdout.trim();
  return git(dir, ['mktree'], { input: `100644 blob ${blob}\tnoise.bin\n` }).trim();
}

function assertActionable(result: PushResult, ref: string, pattern: RegExp): string {
  const rejected = result.rejected.find((entry) => entry.ref === ref);
  assert.ok(rejected, `${ref} is rejected: ${JSON.stringify(result)}`);
  const reason = rejected.reason ?? '';
  for (const placeholder of PLACEHOLDERS) assert.doesNotMatch(reason, placeholder);
  assert.match(reason, pattern);
  return reason;
}

test('an object check failure names the object and what is wrong with it, and the sound refs still go', async (t) => {
  const remote = bareRemote();
  git(remote, ['config', 'receive.fsckObjects', 'true']);
  const dir = makeRepo();
  const blob = git(dir, ['hash-object', '-w', '--stdin'], { input: 'x\n' }).trim();
  const bad = git(dir, ['mktree'], { input: `100644 blob ${blob}\t.git\n` }).trim();
  git(dir, ['remote', 'add', 'origin', remote]);
  git(dir, ['update-ref', WORK, 'HEAD']);
  git(dir, ['update-ref', WIP, git(dir, ['commit-tree', bad, '-p', 'HEAD', '-m', 'crafted']).trim()]);
  const pushed = await new Replicator({ cwd: dir, policy: POLICY }).push();
  const reason = assertActionable(pushed.replication, WIP, /object check/);
  assert.match(reason, /hasDotgit/);
  assert.deepEqual(pushed.replication.pushed.map((ref) => ref.ref), [WORK]);
  t.diagnostic(reason);
});

test('an object missing from this repository holds back only the ref that needs it, and says the fault is here', async (t) => {
  const remote = bareRemote();
  const dir = makeRepo();
  const blob = git(dir, ['hash-object', '-w', '--stdin'], { input: 'lost\n' }).trim();
  const tree = git(dir, ['mktree'], { input: `100644 blob ${blob}\tlost.txt\n` }).trim();
  git(dir, ['remote', 'add', 'origin', remote]);
  git(dir, ['update-ref', WORK, 'HEAD']);
  git(dir, ['update-ref', 'refs/heads/chant/lifecycle', 'HEAD']);
  git(dir, ['update-ref', WIP, git(dir, ['commit-tree', tree, '-p', 'HEAD', '-m', 'wip']).trim()]);
  // A damaged object store: the snapshot's blob is gone (an interrupted gc, a bad disk).
  rmSync(join(dir, '.git', 'objects', blob.slice(0, 2), blob.slice(2)));
  const pushed = await new Replicator({ cwd: dir, policy: POLICY }).push();
  const reason = assertActionable(pushed.replication, WIP, /missing or damaged in this repository/);
  assert.match(reason, new RegExp(`unable to read ${blob}`));
  assert.deepEqual(pushed.replication.pushed.map((ref) => ref.ref).sort(), ['refs/heads/chant/lifecycle', WORK].sort(), 'the sound refs went');
  assert.equal(git(remote, ['rev-parse', WORK]).trim(), git(dir, ['rev-parse', WORK]).trim());
  t.diagnostic(reason);
});

test('a remote that takes no pack over a size (receive.maxInputSize) refuses only the ref that needs a big one, and says so', async (t) => {
  const remote = bareRemote();
  git(remote, ['config', 'receive.maxInputSize', '64000']);
  const dir = makeRepo();
  git(dir, ['remote', 'add', 'origin', remote]);
  git(dir, ['update-ref', WORK, 'HEAD']);
  git(dir, ['update-ref', WIP, git(dir, ['commit-tree', noiseTree(dir, 256 * 1024), '-p', 'HEAD', '-m', 'big']).trim()]);
  const pushed = await new Replicator({ cwd: dir, policy: POLICY }).push();
  const reason = assertActionable(pushed.replication, WIP, /larger than the remote takes/);
  assert.match(reason, /pack exceeds maximum allowed size/);
  assert.deepEqual(pushed.replication.pushed.map((ref) => ref.ref), [WORK], 'the work branch went without the snapshot');
  assert.equal(git(remote, ['rev-parse', WORK]).trim(), git(dir, ['rev-parse', WORK]).trim());
  t.diagnostic(reason);
});

test('a web server that takes no request over a size (HTTP 413) refuses only the ref that needs a big pack, and says so', async (t) => {
  const missing = missingProgram('lighttpd');
  if (missing !== null) return t.skip(missing);
  const server = await startLighttpd({ maxRequestKiB: 64 });
  const dir = makeRepo();
  git(dir, ['remote', 'add', 'origin', server.repository('limited.git')]);
  git(dir, ['update-ref', WORK, 'HEAD']);
  git(dir, ['update-ref', WIP, git(dir, ['commit-tree', noiseTree(dir, 256 * 1024), '-p', 'HEAD', '-m', 'big']).trim()]);
  const pushed = await new Replicator({ cwd: dir, policy: POLICY }).push();
  const reason = assertActionable(pushed.replication, WIP, /larger than the remote takes/);
  assert.match(reason, /HTTP 413/);
  assert.deepEqual(pushed.replication.pushed.map((ref) => ref.ref), [WORK], 'the work branch went without the snapshot');
  assert.equal(git(join(server.base, 'limited.git'), ['rev-parse', WORK]).trim(), git(dir, ['rev-parse', WORK]).trim());
  t.diagnostic(reason);
});

test('a remote that cannot be written (permission denied) says so', async (t) => {
  if (process.getuid?.() !== 0 || missingProgram('setpriv') !== null) return t.skip('needs root and setpriv to run the remote side as nobody');
  const remote = bareRemote();
  // Readable by everyone (a temporary folder is not), writable only by root.
  chmodSync(dirname(remote), 0o755);
  const dir = checkout(remote);
  // The remote's side runs as nobody, as a server whose repository belongs to another user does.
  git(dir, ['config', 'remote.origin.receivepack', 'setpriv --reuid=65534 --regid=65534 --clear-groups git -c safe.directory=* receive-pack']);
  const replicator = new Replicator({ cwd: dir, policy: POLICY });
  const pushed = await replicator.push();
  const reason = assertActionable(pushed.replication, WIP, /permission|cannot write|read-only/i);
  assert.match(reason, /unable to create temporary object directory|insufficient permission|Permission denied/);
  t.diagnostic(reason);
  // Nothing reads replicated, and once the remote can be written again the next push sends it all.
  assert.equal((await replicator.state())?.replicated, false);
  assert.equal(git(dir, ['for-each-ref', 'refs/chant/replica/']), '');
  git(dir, ['config', '--unset', 'remote.origin.receivepack']);
  const mended = await replicator.push();
  assert.deepEqual(mended.replication.rejected, []);
  assert.deepEqual(mended.replication.pushed.map((ref) => ref.ref).sort(), [WORK, WIP].sort());
  assert.equal((await replicator.state())?.replicated, true);
});

test('a remote whose disk is full says the disk is full', async (t) => {
  if (process.getuid?.() !== 0) return t.skip('needs root to mount a small tmpfs');
  const remote = bareRemote();
  const objects = join(remote, 'objects');
  const mounted = spawnSync('mount', ['-t', 'tmpfs', '-o', 'size=64k', 'tmpfs', objects], { encoding: 'utf8' });
  if (mounted.status !== 0) return t.skip(`cannot mount a tmpfs here: ${mounted.stderr.trim()}`);
  try {
    mkdirSync(join(objects, 'info'), { recursive: true });
    mkdirSync(join(objects, 'pack'), { recursive: true });
    const dir = makeRepo();
    git(dir, ['remote', 'add', 'origin', remote]);
    git(dir, ['update-ref', WIP, git(dir, ['commit-tree', noiseTree(dir, 256 * 1024), '-m', 'big']).trim()]);
    const replicator = new Replicator({ cwd: dir, policy: POLICY });
    const pushed = await replicator.push();
    const reason = assertActionable(pushed.replication, WIP, /No space left on device/);
    assert.match(reason, /disk is full/);
    t.diagnostic(reason);
    assert.equal((await replicator.state())?.replicated, false);
    assert.equal(git(dir, ['for-each-ref', 'refs/chant/replica/']), '');
    // The disk given room again (the small mount gone): the next push sends the snapshot.
    spawnSync('umount', ['-l', objects]);
    const mended = await replicator.push();
    assert.deepEqual(mended.replication.rejected, []);
    assert.deepEqual(mended.replication.pushed.map((ref) => ref.ref), [WIP]);
    assert.equal(git(remote, ['rev-parse', WIP]).trim(), git(dir, ['rev-parse', WIP]).trim());
  } finally {
    spawnSync('umount', ['-l', objects]);
  }
});

test('an HTTP server that dies mid-push gives git\'s cause, not a placeholder', async (t) => {
  const missing = missingProgram('lighttpd');
  if (missing !== null) return t.skip(missing);
  const server = await startLighttpd();
  server.repository('dying.git');
  const proxy = await startProxy(server.port, { cutAfterBytes: 32 * 1024 });
  const dir = makeRepo();
  git(dir, ['remote', 'add', 'origin', `http://127.0.0.1:${proxy.port}/dying.git`]);
  git(dir, ['update-ref', WIP, git(dir, ['commit-tree', noiseTree(dir, 256 * 1024), '-m', 'big']).trim()]);
  const pushed = await new Replicator({ cwd: dir, policy: POLICY }).push();
  const reason = assertActionable(pushed.replication, WIP, /RPC failed|hung up|unexpected disconnect|Empty reply|connection|broke/i);
  assert.equal(git(join(server.base, 'dying.git'), ['for-each-ref']), '');
  t.diagnostic(reason);
});

test('an ssh account that takes only a password is refused at once with ssh\'s own reason, not git\'s boilerplate', async (t) => {
  const missing = missingProgram('sshd');
  if (missing !== null) return t.skip(missing);
  const server = await startSshd();
  server.repository('ssh.git');
  const dir = checkout(server.url('ssh.git', 'nobody'));
  git(dir, ['config', 'core.sshCommand', server.sshCommandWithoutKey]);
  const started = Date.now();
  const replicator = new Replicator({ cwd: dir, policy: POLICY });
  const pushed = await replicator.push();
  assert.ok(Date.now() - started < 5_000);
  const reason = assertActionable(pushed.replication, WIP, /Permission denied \(password\)/);
  const fetched = await replicator.fetch();
  assert.match(fetched.failed ?? '', /Permission denied \(password\)/);
  t.diagnostic(reason);
});

test('a remote that is not a repository says so', async () => {
  const dir = checkout(join(tempDir(), 'nothing-here.git'));
  const pushed = await new Replicator({ cwd: dir, policy: POLICY }).push();
  assertActionable(pushed.replication, WIP, /does not appear to be a git repository/);
});
