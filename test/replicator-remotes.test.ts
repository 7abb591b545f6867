import { git, makeRepo } from './helpers.js';
import assert from 'node:assert/strict';
import { join } from 'node:path';
import { test } from 'node:test';
import { writeDocument } from '../lib/documents/document.js';
import type { PolicyDocument } from '../lib/documents/replication.js';
import { Replicator } from '../lib/replication/replicator.js';
import { assertDocument, freePort, startGitDaemon, startHttpRemote } from './remotes.js';

const POLICY: PolicyDocument = { box: 'app', remote: 'origin', refs: ['work', 'kept', 'wip', 'ledger'], on: ['save', 'release'], every: null };
const REFS = ['refs/chant/kept/W-001/tok', 'refs/chant/wip/chant/work/W-001', 'refs/heads/chant/lifecycle', 'refs/heads/chant/work/W-001'];
const USER = 'alice';
const PASSWORD = 'Sesame-7c1f9e';
/** A refusal must come at once: no prompt, no hang. */
const PROMPT_FREE_MS = 5_000;

/** A checkout with one ref of each class and `url` as origin. */
function checkout(url: string): string {
  const dir = makeRepo();
  const tree = git(dir, ['rev-parse', 'HEAD^{tree}']).trim();
  const base = git(dir, ['rev-parse', 'HEAD']).trim();
  const work = git(dir, ['commit-tree', tree, '-p', base, '-m', 'work 1']).trim();
  const tips: Record<string, string> = {
    'refs/heads/chant/work/W-001': work,
    'refs/chant/kept/W-001/tok': git(dir, ['commit-tree', tree, '-p', work, '-m', 'kept 1']).trim(),
    'refs/chant/wip/chant/work/W-001': git(dir, ['commit-tree', tree, '-p', work, '-m', 'wip 1']).trim(),
    'refs/heads/chant/lifecycle': git(dir, ['commit-tree', tree, '-m', 'ledger 1']).trim(),
  };
  for (const [ref, oid] of Object.entries(tips)) git(dir, ['update-ref', ref, oid]);
  git(dir, ['remote', 'add', 'origin', url]);
  return dir;
}

/** An empty checkout on main with `url` as origin: the replacement box. */
function replacement(url: string): string {
  const dir = makeRepo();
  git(dir, ['remote', 'add', 'origin', url]);
  return dir;
}

function withHelper(dir: string): void {
  // A credential helper the host configured, answering only `get`.
  git(dir, ['config', 'credential.helper', `!f() { test "$1" = get && printf 'username=${USER}\\npassword=${PASSWORD}\\n'; }; f`]);
}

async function timed<T>(work: () => Promise<T>): Promise<{ value: T; ms: number }> {
  const started = Date.now();
  const value = await work();
  return { value, ms: Date.now() - started };
}

test('over git daemon, push sends every ref and fetch brings them to a replacement box', async () => {
  const daemon = await startGitDaemon();
  const url = daemon.repository('shared.git');
  const dir = checkout(url);
  const pushed = await new Replicator({ cwd: dir, policy: POLICY }).push();
  assert.deepEqual(pushed.replication.pushed.map((ref) => ref.ref), REFS);
  assert.deepEqual(pushed.replication.rejected, []);
  assertDocument(writeDocument('push', pushed));

  const box = replacement(url);
  const fetched = await new Replicator({ cwd: box, policy: POLICY }).fetch();
  assert.equal(fetched.failed, null);
  assert.deepEqual(fetched.refs.map((ref) => [ref.ref, ref.result]), REFS.map((ref) => [ref, 'created']));
  assertDocument(writeDocument('fetch', fetched));
});

test('a git daemon that is not there refuses push and fetch at once, with a reason', async () => {
  const url = `git://127.0.0.1:${await freePort()}/shared.git`;
  const dir = checkout(url);
  const push = await timed(() => new Replicator({ cwd: dir, policy: POLICY }).push());
  assert.ok(push.ms < PROMPT_FREE_MS, `push took ${push.ms} ms`);
  assert.deepEqual(push.value.replication.rejected.map((ref) => ref.ref), REFS);
  for (const ref of push.value.replication.rejected) assert.match(ref.reason ?? '', /unable to connect|connection refused/i);
  assertDocument(writeDocument('push', push.value));
  const fetch = await timed(() => new Replicator({ cwd: dir, policy: POLICY }).fetch());
  assert.ok(fetch.ms < PROMPT_FREE_MS, `fetch took ${fetch.ms} ms`);
  assert.match(fetch.value.failed ?? '', /unable to connect|connection refused/i);
  assertDocument(writeDocument('fetch', fetch.value));
});

test('over HTTP without a credential, push and fetch are refused at once with a reason, and nothing prompts', async () => {
  const server = await startHttpRemote(USER, PASSWORD);
  const url = server.repository('shared.git');
  const dir = checkout(url);
  const replicator = new Replicator({ cwd: dir, policy: POLICY });
  const push = await timed(() => replicator.push());
  assert.ok(push.ms < PROMPT_FREE_MS, `push took ${push.ms} ms`);
  assert.deepEqual(push.value.replication.pushed, []);
  assert.deepEqual(push.value.replication.rejected.map((ref) => ref.ref), REFS);
  for (const ref of push.value.replication.rejected) assert.match(ref.reason ?? '', /terminal prompts disabled|authentication failed/i);
  assertDocument(writeDocument('push', push.value));
  assert.equal(git(join(server.base, 'shared.git'), ['for-each-ref']), '');

  const saved = await timed(() => replicator.after('save'));
  assert.ok(saved.ms < PROMPT_FREE_MS);
  assert.equal(saved.value?.rejected.length, REFS.length);

  const fetch = await timed(() => new Replicator({ cwd: replacement(url), policy: POLICY }).fetch());
  assert.ok(fetch.ms < PROMPT_FREE_MS, `fetch took ${fetch.ms} ms`);
  assert.match(fetch.value.failed ?? '', /terminal prompts disabled|authentication failed/i);
  assert.deepEqual(fetch.value.refs, []);
  assertDocument(writeDocument('fetch', fetch.value));
});

test('over HTTP with the credential from a helper in the repository\'s config, push and fetch work', async () => {
  const server = await startHttpRemote(USER, PASSWORD);
  const url = server.repository('shared.git');
  const dir = checkout(url);
  withHelper(dir);
  const pushed = await new Replicator({ cwd: dir, policy: POLICY }).push();
  assert.deepEqual(pushed.replication.rejected, []);
  assert.deepEqual(pushed.replication.pushed.map((ref) => ref.ref), REFS);
  assert.equal(git(join(server.base, 'shared.git'), ['for-each-ref', '--format=%(refname)']).trim().split('\n').sort().join(','), [...REFS].sort().join(','));
  const again = await new Replicator({ cwd: dir, policy: POLICY }).push();
  assert.equal(again.replication.upToDate, REFS.length);

  const box = replacement(url);
  withHelper(box);
  const fetched = await new Replicator({ cwd: box, policy: POLICY }).fetch();
  assert.equal(fetched.failed, null);
  assert.deepEqual(fetched.refs.map((ref) => [ref.ref, ref.result]), REFS.map((ref) => [ref, 'created']));
  assertDocument(writeDocument('fetch', fetched));
});

test('a remote URL with user:password@ never shows the password in any message', async () => {
  const server = await startHttpRemote(USER, PASSWORD);
  server.repository('shared.git');
  const daemon = await startGitDaemon();
  daemon.repository('shared.git');
  const secret = 'Wr0ng-Pa55word-41d';
  const urls = [
    server.url('shared.git', `${USER}:${secret}`),
    // git prints this one back bare: "unable to look up alice:<password>@127.0.0.1".
    daemon.url('shared.git', `${USER}:${secret}`),
    `http://${USER}:${secret}@127.0.0.1:${await freePort()}/shared.git`,
  ];
  for (const url of urls) {
    const dir = checkout(url);
    const replicator = new Replicator({ cwd: dir, policy: POLICY });
    const push = await timed(() => replicator.push());
    assert.ok(push.ms < PROMPT_FREE_MS, `push to ${url} took ${push.ms} ms`);
    assert.equal(push.value.replication.rejected.length, REFS.length);
    const fetch = await replicator.fetch();
    assert.ok(fetch.failed !== null);
    const printed = JSON.stringify([writeDocument('push', push.value), writeDocument('fetch', fetch), await replicator.pushOrReport()]);
    assert.ok(!printed.includes(secret), `the password leaked: ${printed}`);
  }

  // The right password in the URL works, and nothing it prints holds it.
  const dir = checkout(server.url('shared.git', `${USER}:${PASSWORD}`));
  const pushed = await new Replicator({ cwd: dir, policy: POLICY }).push();
  assert.equal(pushed.replication.pushed.length, REFS.length);
  assert.ok(!JSON.stringify(pushed).includes(PASSWORD));
});

test('a password holding a raw @ or a space never shows, in part or whole, in any message', async () => {
  const daemon = await startGitDaemon();
  daemon.repository('shared.git');
  const closed = await freePort();
  // git takes such a URL as it is and prints it back bare: "unable to look up alice:<password>@127.0.0.1".
  const secrets = ['pa@ss3cr3t', 's3cr3t pw'];
  const urls = secrets.flatMap((secret) => [
    daemon.url('shared.git', `${USER}:${secret}`),
    `git://${USER}:${secret}@127.0.0.1:${closed}/shared.git`,
    `http://${USER}:${secret}@127.0.0.1:${closed}/shared.git`,
  ]);
  for (const url of urls) {
    const dir = checkout(url);
    const lines: string[] = [];
    const replicator = new Replicator({ cwd: dir, policy: POLICY, progress: (line) => lines.push(line) });
    const push = await timed(() => replicator.push());
    assert.ok(push.ms < PROMPT_FREE_MS, `push to ${url} took ${push.ms} ms`);
    assert.equal(push.value.replication.rejected.length, REFS.length);
    const fetch = await replicator.fetch();
    assert.ok(fetch.failed !== null);
    const printed = JSON.stringify([writeDocument('push', push.value), writeDocument('fetch', fetch), await replicator.pushOrReport(), lines]);
    assert.ok(!printed.includes('s3cr3t'), `the password leaked for ${url}: ${printed}`);
  }
});
