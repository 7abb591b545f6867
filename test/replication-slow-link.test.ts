// A healthy slow link is not a hang: a 3 MB snapshot through a proxy pacing ~30 KB/s takes well
// over a minute each way, far longer than the network timeout given here, and git says how far
// it got all along (chant always asks for `--progress`), so the runner sees progress and lets the
// push and the replacement box's fetch finish.
import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { test } from 'node:test';
import type { PolicyDocument } from '../lib/documents/replication.js';
import { SimpleGitRunner } from '../lib/git/runner.js';
import type { GitRunner } from '../lib/git/runner.js';
import { Replicator } from '../lib/replication/replicator.js';
import { WipStore } from '../lib/store/wip-store.js';
import { git, makeRepo } from './helpers.js';
import { missingProgram, startLighttpd, startProxy } from './remotes.js';

const POLICY: PolicyDocument = { box: 'app', remote: 'origin', refs: ['wip'], on: [], every: null };
const BYTES_PER_SECOND = 30 * 1024;
const SNAPSHOT_BYTES = 3 * 1024 * 1024;
/** Far shorter than the transfer: only progress keeps git alive. */
const TIMEOUT_MS = 15_000;

/** A runner that records the arguments of every git call. */
function recording(cwd: string): { git: GitRunner; calls: string[][] } {
  const inner = new SimpleGitRunner(cwd);
  const calls: string[][] = [];
  return { calls, git: { run: (args, options) => (calls.push([...args]), inner.run(args, options)) } };
}

test('a 3 MB snapshot over a link paced at 30 KB/s is pushed and fetched, not stopped as a hang', { timeout: 10 * 60_000 }, async (t) => {
  const missing = missingProgram('lighttpd');
  if (missing !== null) return t.skip(missing);
  const server = await startLighttpd();
  server.repository('slow.git');
  const proxy = await startProxy(server.port, { bytesPerSecond: BYTES_PER_SECOND });
  const url = `http://127.0.0.1:${proxy.port}/slow.git`;

  const dir = makeRepo({ 'README.md': 'slow link\n' });
  // Random bytes: nothing a pack could compress away.
  writeFileSync(join(dir, 'big.bin'), randomBytes(SNAPSHOT_BYTES));
  const saved = await new WipStore({ cwd: dir, policy: null }).save({ label: 'big' });
  git(dir, ['remote', 'add', 'origin', url]);

  const pushing = recording(dir);
  const started = Date.now();
  const pushed = await new Replicator({ cwd: dir, git: pushing.git, policy: POLICY, timeoutMs: TIMEOUT_MS }).push();
  const pushMs = Date.now() - started;
  t.diagnostic(`push of ${SNAPSHOT_BYTES} bytes at ${BYTES_PER_SECOND} B/s: ${pushMs} ms`);
  assert.deepEqual(pushed.replication.rejected, []);
  assert.deepEqual(pushed.replication.pushed, [{ ref: saved.ref, commit: saved.snapshot.commit }]);
  assert.ok(pushMs > 2 * TIMEOUT_MS, `the link was slow enough to matter (${pushMs} ms)`);
  const push = pushing.calls.find((args) => args.includes('push')) ?? [];
  assert.ok(push.includes('--progress'), 'git is asked for progress with no one watching');
  assert.equal(git(server.base, ['--git-dir=slow.git', 'rev-parse', saved.ref]).trim(), saved.snapshot.commit);

  const box = makeRepo({ 'README.md': 'replacement\n' });
  git(box, ['remote', 'add', 'origin', url]);
  const fetching = recording(box);
  const fetchStarted = Date.now();
  const fetched = await new Replicator({ cwd: box, git: fetching.git, policy: POLICY, timeoutMs: TIMEOUT_MS }).fetch();
  const fetchMs = Date.now() - fetchStarted;
  t.diagnostic(`fetch of the same: ${fetchMs} ms`);
  assert.equal(fetched.failed, null);
  assert.deepEqual(fetched.refs.map((ref) => [ref.ref, ref.result]), [[saved.ref, 'created']]);
  assert.ok(fetchMs > 2 * TIMEOUT_MS, `the link was slow enough to matter (${fetchMs} ms)`);
  assert.ok((fetching.calls.find((args) => args.includes('fetch')) ?? []).includes('--progress'));
  assert.equal(git(box, ['rev-parse', saved.ref]).trim(), saved.snapshot.commit);
});
