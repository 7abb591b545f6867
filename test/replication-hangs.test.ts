// Never a hang: a remote that accepts the connection and never answers, over http:// and ssh://,
// or that answers a byte a second over git://, returns push, fetch and a save's push within the
// network timeout, with a reason that says the remote did not answer in time; and nothing git
// started is left running (its transport helper, ssh): the runner stops git's whole process group
// (lib/git/runner.ts).
import assert from 'node:assert/strict';
import { readdirSync, readFileSync } from 'node:fs';
import { test } from 'node:test';
import type { PolicyDocument } from '../lib/documents/replication.js';
import { Policy } from '../lib/replication/policy.js';
import { Replicator } from '../lib/replication/replicator.js';
import { WipStore } from '../lib/store/wip-store.js';
import { git, makeRepo, runBin, writeFiles } from './helpers.js';
import { startSilentListener, startTricklingListener } from './remotes.js';

const POLICY: PolicyDocument = { box: 'app', remote: 'origin', refs: ['work', 'kept', 'wip', 'ledger'], on: ['save', 'release'], every: null };
const TIMEOUT_MS = 4_000;
/** The timeout, and a margin for stopping git on a loaded machine. */
const BOUND_MS = TIMEOUT_MS + 20_000;
const NOT_IN_TIME = /^the remote did not answer in time and git was stopped/;

function checkout(url: string): string {
  const dir = makeRepo({ 'chant.workspace.json': `${JSON.stringify({ members: [{ name: 'app', box: { replicate: { remote: 'origin', on: ['save'] } } }] })}\n` });
  git(dir, ['remote', 'add', 'origin', url]);
  // ssh must not ask about the listener's host key; batch mode is chant's.
  git(dir, ['config', 'core.sshCommand', 'ssh -F /dev/null -o StrictHostKeyChecking=no -o UserKnownHostsFile=/dev/null']);
  return dir;
}

/** Every process on the machine whose command line names the listener: git's helpers, ssh. */
function processesReaching(port: number): string[] {
  const found: string[] = [];
  for (const pid of readdirSync('/proc').filter((name) => /^\d+$/.test(name))) {
    let args: string[];
    try {
      args = readFileSync(`/proc/${pid}/cmdline`, 'utf8').split('\0');
    } catch {
      continue;
    }
    const named = args.some((arg, i) => arg.includes(`127.0.0.1:${port}`) || (arg === '-p' && args[i + 1] === String(port)) || arg === `-p${port}`);
    if (named) found.push(`${pid}: ${args.join(' ').trim()}`);
  }
  return found;
}

/** Waits a moment for the kernel to close what dead processes held, then says what is left. */
async function leftAfter(port: number, open: () => number): Promise<{ processes: string[]; connections: number }> {
  for (let i = 0; i < 20 && (open() > 0 || processesReaching(port).length > 0); i += 1) await new Promise((resolve) => setTimeout(resolve, 100));
  return { processes: processesReaching(port), connections: open() };
}

async function timed<T>(work: () => Promise<T>): Promise<{ value: T; ms: number }> {
  const started = Date.now();
  const value = await work();
  return { value, ms: Date.now() - started };
}

// git reads a trickle itself over git://, each byte a read the runner sees: only too few bytes
// within the timeout tell it from a slow link.
const REMOTES = [
  { scheme: 'http', behaviour: 'accepts and never answers', listen: startSilentListener },
  { scheme: 'ssh', behaviour: 'accepts and never answers', listen: startSilentListener },
  { scheme: 'git', behaviour: 'answers a byte a second, forever', listen: startTricklingListener },
] as const;

for (const { scheme, behaviour, listen } of REMOTES) {
  test(`a ${scheme}:// remote that ${behaviour}: push, fetch and a save's push return in time, and nothing git started is left`, { timeout: 12 * BOUND_MS }, async (t) => {
    if (process.platform !== 'linux') return t.skip('the leftover check reads /proc');
    const listener = await listen();
    const url = scheme === 'ssh' ? `ssh://git@127.0.0.1:${listener.port}/shared.git` : `${scheme}://127.0.0.1:${listener.port}/shared.git`;
    const dir = checkout(url);
    const replicator = new Replicator({ cwd: dir, policy: POLICY, timeoutMs: TIMEOUT_MS });

    writeFiles(dir, { 'work.txt': 'turn 1\n' });
    const save = await timed(() => new WipStore({ cwd: dir, policy: Policy.from({ remote: 'origin', on: ['save'] }, { box: 'app' }), networkTimeoutMs: TIMEOUT_MS }).save({ label: 'turn:1' }));
    const push = await timed(() => replicator.push());
    // With a progress listener the call runs on a replicator scoped to it, which keeps the timeout.
    const fetch = await timed(() => replicator.fetch({ onProgress: () => undefined }));
    for (const [what, ms] of [['save', save.ms], ['push', push.ms], ['fetch', fetch.ms]] as const) {
      t.diagnostic(`${url} ${what}: ${ms} ms`);
      assert.ok(ms < BOUND_MS, `${what} over ${url} returned after ${ms} ms`);
      assert.ok(ms >= TIMEOUT_MS - 500, `${what} waited for the timeout (${ms} ms), so the remote was reached and silent`);
    }
    assert.equal(save.value.created, true);
    assert.deepEqual(save.value.replication?.rejected.map((ref) => ref.ref), [save.value.ref]);
    assert.match(save.value.replication?.rejected[0]?.reason ?? '', NOT_IN_TIME);
    assert.deepEqual(push.value.replication.pushed, []);
    assert.equal(push.value.replication.rejected.length, 1);
    assert.match(push.value.replication.rejected[0]?.reason ?? '', NOT_IN_TIME);
    assert.match(fetch.value.failed ?? '', NOT_IN_TIME);
    assert.deepEqual(await leftAfter(listener.port, listener.open), { processes: [], connections: 0 });

    // The CLI as an agent host runs it, with the timeout as a flag: exit 0, the reason in the document.
    const bin = await timed(async () => [
      runBin(dir, ['workspace', 'wip', 'push', '--timeout', String(TIMEOUT_MS / 1000), '--json']),
      runBin(dir, ['workspace', 'wip', 'fetch', '--timeout', String(TIMEOUT_MS / 1000), '--json']),
    ]);
    assert.ok(bin.ms < 2 * BOUND_MS, `the CLI's push and fetch took ${bin.ms} ms`);
    const [pushRun, fetchRun] = bin.value;
    assert.equal(pushRun?.code, 0, pushRun?.stdout);
    assert.match(pushRun?.doc.replication.rejected[0]?.reason ?? '', NOT_IN_TIME);
    assert.equal(fetchRun?.code, 0, fetchRun?.stdout);
    assert.match(fetchRun?.doc.failed ?? '', NOT_IN_TIME);
    assert.deepEqual(await leftAfter(listener.port, listener.open), { processes: [], connections: 0 });
  });
}
