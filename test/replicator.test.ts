import { git, makeRepo, ROOT } from './helpers.js';
import assert from 'node:assert/strict';
import { join } from 'node:path';
import { spawn } from 'node:child_process';
import { once } from 'node:events';
import { pathToFileURL } from 'node:url';
import { existsSync, mkdirSync, writeFileSync } from 'node:fs';
import { test } from 'node:test';
import type { PolicyDocument } from '../lib/documents/replication.js';
import { readDocument, writeDocument, writeFailureDocument } from '../lib/documents/document.js';
import { isWipError } from '../lib/errors.js';
import type { WipError } from '../lib/errors.js';
import { SimpleGitRunner } from '../lib/git/runner.js';
import type { GitRunner } from '../lib/git/runner.js';
import { Replicator } from '../lib/replication/replicator.js';
import { assertDocument, bareRemote } from './remotes.js';

const POLICY: PolicyDocument = { box: 'app', remote: 'origin', refs: ['work', 'kept', 'wip', 'ledger'], on: ['save', 'release'], every: '10m' };

const WORK = 'refs/heads/chant/work/W-001';
const KEPT = 'refs/chant/kept/W-001/tok';
const WIP = 'refs/chant/wip/chant/work/W-001';
const LEDGER = 'refs/heads/chant/lifecycle';

function rev(dir: string, name: string): string {
  return git(dir, ['rev-parse', '--verify', name]).trim();
}

/** A commit of the checkout's first tree on `parents`, made with plain git. */
function commit(dir: string, message: string, parents: readonly string[] = []): string {
  const tree = rev(dir, 'refs/heads/main^{tree}');
  return git(dir, ['commit-tree', tree, ...parents.flatMap((parent) => ['-p', parent]), '-m', message]).trim();
}

/** A checkout holding one ref of each class, with a bare repository as `origin` that holds main. */
function checkout() {
  const dir = makeRepo();
  const base = rev(dir, 'HEAD');
  const work = commit(dir, 'work 1', [base]);
  const kept = commit(dir, 'kept 1', [work]);
  const wip = commit(dir, 'chant wip: chant/work/W-001', [work]);
  const ledger = commit(dir, 'ledger 1');
  for (const [ref, oid] of [[WORK, work], [KEPT, kept], [WIP, wip], [LEDGER, ledger]] as const) git(dir, ['update-ref', ref, oid]);
  const remote = bareRemote();
  git(dir, ['remote', 'add', 'origin', remote]);
  git(dir, ['push', '-q', 'origin', 'main']);
  return { dir, remote, base, work, kept, wip, ledger };
}

/** A runner that records every git call it makes. */
function counting(cwd: string): { git: GitRunner; calls: string[][] } {
  const inner = new SimpleGitRunner(cwd);
  const calls: string[][] = [];
  const run: GitRunner['run'] = (args, options) => {
    calls.push([...args]);
    return inner.run(args, options);
  };
  return { calls, git: { run } };
}

/** The git command of a call, past any `-c key=value`. */
function verb(args: readonly string[]): string {
  let i = 0;
  while (args[i] === '-c') i += 2;
  return args[i] ?? '';
}

function refsOf(dir: string, prefix = 'refs/'): Record<string, string> {
  const out: Record<string, string> = {};
  for (const line of git(dir, ['for-each-ref', '--format=%(refname) %(objectname)', prefix]).split('\n')) {
    const [ref, oid] = line.split(' ');
    if (ref && oid) out[ref] = oid;
  }
  return out;
}

function checkState(dir: string, replication: unknown): void {
  assertDocument(readDocument({ checkout: { branch: 'main', head: rev(dir, 'HEAD') }, branches: [], replication } as Parameters<typeof readDocument>[0]));
}

function isCode(code: WipError['code']) {
  return (error: unknown) => {
    assert.ok(isWipError(error, code), `expected ${code}, got ${String(error)}`);
    assertDocument(writeFailureDocument('push', error as WipError));
    return true;
  };
}

test('state reads local refs only, counts the commits the remote lacks, and says replicated after a push', async () => {
  const fixture = checkout();
  const remoteBefore = refsOf(fixture.remote);
  const { git: runner, calls } = counting(fixture.dir);
  const replicator = new Replicator({ cwd: fixture.dir, git: runner, policy: POLICY });
  const state = await replicator.state();
  assert.ok(state);
  assert.deepEqual(calls.map(verb).filter((name) => ['fetch', 'push', 'ls-remote'].includes(name)), []);
  assert.deepEqual(refsOf(fixture.remote), remoteBefore);
  assert.deepEqual(state, {
    policy: POLICY,
    remoteConfigured: true,
    replicated: false,
    confirmedAt: null,
    refs: [
      { ref: KEPT, class: 'kept', commit: fixture.kept, replica: null, replicated: false, ahead: 2 },
      { ref: WIP, class: 'wip', commit: fixture.wip, replica: null, replicated: false, ahead: 2 },
      { ref: LEDGER, class: 'ledger', commit: fixture.ledger, replica: null, replicated: false, ahead: 1 },
      { ref: WORK, class: 'work', commit: fixture.work, replica: null, replicated: false, ahead: 1 },
    ],
  });
  checkState(fixture.dir, state);

  await replicator.push();
  const after = await replicator.state();
  assert.ok(after);
  assert.equal(after.replicated, true);
  for (const ref of after.refs) {
    assert.equal(ref.replica, ref.commit);
    assert.equal(ref.replicated, true);
    assert.equal(ref.ahead, 0);
  }
  checkState(fixture.dir, after);
});

test('state never takes a branch\'s remote-tracking ref as proof: only what the remote answered chant is', async () => {
  const fixture = checkout();
  git(fixture.dir, ['push', '-q', 'origin', `${WORK}:${WORK}`]);
  const replicator = new Replicator({ cwd: fixture.dir, policy: { ...POLICY, refs: ['work'] } });
  const state = await replicator.state();
  // git wrote refs/remotes/origin/chant/work/W-001; it says where the remote was, so nothing is counted ahead.
  assert.deepEqual(state?.refs, [{ ref: WORK, class: 'work', commit: fixture.work, replica: null, replicated: false, ahead: 0 }]);
  assert.equal(state?.replicated, false);
  await replicator.push();
  assert.deepEqual((await replicator.state())?.refs, [{ ref: WORK, class: 'work', commit: fixture.work, replica: fixture.work, replicated: true, ahead: 0 }]);
});

test('push sends every class under its own name, records the replicas, and a second push sends nothing', async () => {
  const fixture = checkout();
  const replicator = new Replicator({ cwd: fixture.dir, policy: POLICY });
  const outcome = await replicator.push();
  assert.deepEqual(outcome, {
    policy: POLICY,
    replication: {
      remote: 'origin',
      pushed: [
        { ref: KEPT, commit: fixture.kept },
        { ref: WIP, commit: fixture.wip },
        { ref: LEDGER, commit: fixture.ledger },
        { ref: WORK, commit: fixture.work },
      ],
      rejected: [],
      upToDate: 0,
    },
  });
  assertDocument(writeDocument('push', outcome));
  const remote = refsOf(fixture.remote);
  assert.deepEqual([remote[WORK], remote[KEPT], remote[WIP], remote[LEDGER]], [fixture.work, fixture.kept, fixture.wip, fixture.ledger]);
  const replicas = refsOf(fixture.dir, 'refs/chant/replica/');
  assert.deepEqual(replicas, {
    'refs/chant/replica/origin/chant/kept/W-001/tok': fixture.kept,
    'refs/chant/replica/origin/chant/wip/chant/work/W-001': fixture.wip,
    'refs/chant/replica/origin/heads/chant/lifecycle': fixture.ledger,
    'refs/chant/replica/origin/heads/chant/work/W-001': fixture.work,
  });

  // wip push asks the remote again (one push process, nothing sent); the push a save makes does not.
  const { git: runner, calls } = counting(fixture.dir);
  const again = await new Replicator({ cwd: fixture.dir, git: runner, policy: POLICY }).push();
  assert.deepEqual(again.replication, { remote: 'origin', pushed: [], rejected: [], upToDate: 4 });
  assert.deepEqual(calls.map(verb).filter((name) => name === 'push'), ['push']);
  const quiet = counting(fixture.dir);
  const saved = await new Replicator({ cwd: fixture.dir, git: quiet.git, policy: POLICY }).after('save');
  assert.deepEqual(saved, { remote: 'origin', pushed: [], rejected: [], upToDate: 4 });
  assert.deepEqual(quiet.calls.map(verb).filter((name) => name === 'push'), []);
});

test('push counts a ref the remote already holds as up to date and records it', async () => {
  const fixture = checkout();
  git(fixture.dir, ['push', '-q', 'origin', `${KEPT}:${KEPT}`]);
  const outcome = await new Replicator({ cwd: fixture.dir, policy: { ...POLICY, refs: ['kept'] } }).push();
  assert.deepEqual(outcome.replication, { remote: 'origin', pushed: [], rejected: [], upToDate: 1 });
  assert.equal(refsOf(fixture.dir, 'refs/chant/replica/')['refs/chant/replica/origin/chant/kept/W-001/tok'], fixture.kept);
});

test('a kept attempt rewound locally is rejected on the next push with the remote\'s reason, and the remote keeps its copy', async () => {
  const fixture = checkout();
  const replicator = new Replicator({ cwd: fixture.dir, policy: POLICY });
  await replicator.push();
  git(fixture.dir, ['update-ref', KEPT, fixture.work]);
  const outcome = await replicator.push();
  assert.deepEqual(outcome.replication.pushed, []);
  assert.equal(outcome.replication.upToDate, 3);
  assert.deepEqual(outcome.replication.rejected, [{ ref: KEPT, commit: fixture.work, reason: 'non-fast-forward' }]);
  assertDocument(writeDocument('push', outcome));
  assert.equal(refsOf(fixture.remote)[KEPT], fixture.kept);
  const state = await replicator.state();
  assert.deepEqual(state?.refs.find((ref) => ref.ref === KEPT), { ref: KEPT, class: 'kept', commit: fixture.work, replica: fixture.kept, replicated: false, ahead: 0 });
});

test('after(\'release\') pushes when the policy\'s on has release, and returns null when it does not', async () => {
  const fixture = checkout();
  assert.equal(await new Replicator({ cwd: fixture.dir, policy: { ...POLICY, on: ['save'] } }).after('release'), null);
  assert.equal(await new Replicator({ cwd: fixture.dir, policy: { ...POLICY, on: [] } }).after('save'), null);
  assert.equal(await new Replicator({ cwd: fixture.dir, policy: null }).after('release'), null);
  assert.deepEqual(refsOf(fixture.remote)[WORK], undefined);
  const result = await new Replicator({ cwd: fixture.dir, policy: { ...POLICY, on: ['release'] } }).after('release');
  assert.equal(result?.pushed.length, 4);
  assert.equal(refsOf(fixture.remote)[WORK], fixture.work);
});

test('without a policy, state is null and push, pushOrReport and fetch refuse with wip-policy-none', async () => {
  const fixture = checkout();
  const replicator = new Replicator({ cwd: fixture.dir, policy: null });
  assert.equal(await replicator.state(), null);
  await assert.rejects(replicator.push(), isCode('wip-policy-none'));
  await assert.rejects(replicator.pushOrReport(), isCode('wip-policy-none'));
  await assert.rejects(replicator.fetch(), isCode('wip-policy-none'));
});

test('a policy naming a remote the checkout lacks is wip-remote-unknown for push and fetch, while pushOrReport rejects every ref', async () => {
  const fixture = checkout();
  const before = refsOf(fixture.dir);
  const policy = { ...POLICY, remote: 'backup' };
  const replicator = new Replicator({ cwd: fixture.dir, policy });
  await assert.rejects(replicator.push(), isCode('wip-remote-unknown'));
  await assert.rejects(replicator.fetch(), isCode('wip-remote-unknown'));
  const reason = 'no git remote named backup is configured';
  const result = await replicator.pushOrReport();
  assert.deepEqual(result, {
    remote: 'backup',
    pushed: [],
    rejected: [
      { ref: KEPT, commit: fixture.kept, reason },
      { ref: WIP, commit: fixture.wip, reason },
      { ref: LEDGER, commit: fixture.ledger, reason },
      { ref: WORK, commit: fixture.work, reason },
    ],
    upToDate: 0,
  });
  assertDocument(writeDocument('push', { policy, replication: result }));
  const state = await replicator.state();
  assert.equal(state?.remoteConfigured, false);
  checkState(fixture.dir, state);
  assert.deepEqual(refsOf(fixture.dir), before);
});

/** A fresh clone of the fixture's remote after the fixture pushed everything. */
async function pushedAndCloned() {
  const fixture = checkout();
  await new Replicator({ cwd: fixture.dir, policy: POLICY }).push();
  const clone = join(makeRepo(), 'clone');
  git(fixture.dir, ['clone', '-q', fixture.remote, clone]);
  return { ...fixture, clone };
}

test('fetch into a fresh clone creates each ref, then finds them up to date', async () => {
  const fixture = await pushedAndCloned();
  const replicator = new Replicator({ cwd: fixture.clone, policy: POLICY });
  const first = await replicator.fetch();
  assert.deepEqual(first, {
    policy: POLICY,
    refs: [
      { ref: KEPT, class: 'kept', remote: fixture.kept, local: null, result: 'created' },
      { ref: WIP, class: 'wip', remote: fixture.wip, local: null, result: 'created' },
      { ref: LEDGER, class: 'ledger', remote: fixture.ledger, local: null, result: 'created' },
      { ref: WORK, class: 'work', remote: fixture.work, local: null, result: 'created' },
    ],
    failed: null,
  });
  assertDocument(writeDocument('fetch', first));
  const local = refsOf(fixture.clone);
  assert.deepEqual([local[WORK], local[KEPT], local[WIP], local[LEDGER]], [fixture.work, fixture.kept, fixture.wip, fixture.ledger]);
  git(fixture.clone, ['reflog', 'exists', KEPT]);
  git(fixture.clone, ['reflog', 'exists', WIP]);
  assert.equal((await replicator.state())?.replicated, true);

  const second = await replicator.fetch();
  assert.deepEqual(second.refs.map((ref) => [ref.result, ref.local === ref.remote]), [['up-to-date', true], ['up-to-date', true], ['up-to-date', true], ['up-to-date', true]]);
  assertDocument(writeDocument('fetch', second));
});

test('two fetches run at once in one process each hear every ref of the remote, and the replicas stay recorded', async () => {
  for (let round = 0; round < 3; round++) {
    const fixture = await pushedAndCloned();
    const replicator = new Replicator({ cwd: fixture.clone, policy: POLICY });
    const [one, two] = await Promise.all([replicator.fetch(), replicator.fetch()]);
    for (const result of [one, two]) {
      assert.deepEqual(result.refs.map((ref) => [ref.ref, ref.remote]), [[KEPT, fixture.kept], [WIP, fixture.wip], [LEDGER, fixture.ledger], [WORK, fixture.work]], 'each fetch tells of every ref the remote holds');
      assert.equal(result.failed, null);
    }
    assert.deepEqual([one, two].map((result) => result.refs.map((ref) => ref.result)).sort(), [['created', 'created', 'created', 'created'], ['up-to-date', 'up-to-date', 'up-to-date', 'up-to-date']]);
    assert.equal((await replicator.state())?.replicated, true, 'what the remote holds is recorded as held');
  }
});

test('a fetch waits for a fetch of the repository another process runs, whose staging refs it would otherwise plan from', async () => {
  const fixture = await pushedAndCloned();
  const flags = makeRepo();
  // Another process fetching holds the repository's fetch lock until told to end.
  const child = spawn(process.execPath, ['--import', 'tsx', '--input-type=module', '-e', `
    import { existsSync, writeFileSync } from 'node:fs';
    import { withFetchLock } from ${JSON.stringify(pathToFileURL(join(ROOT, 'lib', 'managers', 'lock.ts')).href)};
    await withFetchLock(${JSON.stringify(join(fixture.clone, '.git'))}, async () => {
      console.log('held');
      while (!existsSync(${JSON.stringify(join(flags, 'release'))})) await new Promise((resolve) => setTimeout(resolve, 20));
      writeFileSync(${JSON.stringify(join(flags, 'other-ended'))}, '');
    });
  `], { cwd: ROOT, stdio: ['ignore', 'pipe', 'inherit'] });
  const ended = once(child, 'exit');
  const held = await new Promise<boolean>((resolve) => {
    child.stdout.once('data', () => resolve(true));
    child.once('exit', () => resolve(false));
  });
  assert.ok(held, 'the other process holds the fetch lock');
  const inner = new SimpleGitRunner(fixture.clone);
  const gitWhileOtherRan: string[][] = [];
  const run: GitRunner['run'] = (args, options) => {
    if (!existsSync(join(flags, 'other-ended'))) gitWhileOtherRan.push([...args]);
    return inner.run(args, options);
  };
  const fetching = new Replicator({ cwd: fixture.clone, policy: POLICY, git: { run } }).fetch();
  await new Promise((resolve) => setTimeout(resolve, 0));
  writeFileSync(join(flags, 'release'), '');
  const result = await fetching;
  await ended;
  assert.deepEqual(gitWhileOtherRan, [], 'no git ran while the other fetch did');
  assert.deepEqual(result.refs.map((ref) => [ref.ref, ref.result]), [[KEPT, 'created'], [WIP, 'created'], [LEDGER, 'created'], [WORK, 'created']]);
});

test('fetch fast-forwards a ref that is behind and leaves one that is ahead or diverged alone', async (t) => {
  const fixture = await pushedAndCloned();
  const replicator = new Replicator({ cwd: fixture.clone, policy: POLICY });
  await replicator.fetch();
  // The remote moves kept and wip on; the clone moves wip elsewhere and work on.
  const kept2 = commit(fixture.dir, 'kept 2', [fixture.kept]);
  const wip2 = commit(fixture.dir, 'wip 2 on the box', [fixture.wip]);
  git(fixture.dir, ['update-ref', KEPT, kept2]);
  git(fixture.dir, ['update-ref', WIP, wip2]);
  await new Replicator({ cwd: fixture.dir, policy: POLICY }).push();
  const wip3 = commit(fixture.clone, 'wip 3 on the replacement', [fixture.wip]);
  const work2 = commit(fixture.clone, 'work 2 on the replacement', [fixture.work]);
  git(fixture.clone, ['update-ref', WIP, wip3]);
  git(fixture.clone, ['update-ref', WORK, work2]);

  const { git: runner, calls } = counting(fixture.clone);
  const result = await new Replicator({ cwd: fixture.clone, git: runner, policy: POLICY }).fetch();
  assert.deepEqual(result.refs, [
    { ref: KEPT, class: 'kept', remote: kept2, local: fixture.kept, result: 'fast-forward' },
    { ref: WIP, class: 'wip', remote: wip2, local: wip3, result: 'diverged' },
    { ref: LEDGER, class: 'ledger', remote: fixture.ledger, local: fixture.ledger, result: 'up-to-date' },
    { ref: WORK, class: 'work', remote: fixture.work, local: work2, result: 'ahead' },
  ]);
  assert.equal(result.failed, null);
  assertDocument(writeDocument('fetch', result));
  const local = refsOf(fixture.clone);
  assert.deepEqual([local[KEPT], local[WIP], local[WORK]], [kept2, wip3, work2]);
  t.diagnostic(`fetch with three ancestry checks: ${calls.length} git processes (${calls.map(verb).join(', ')})`);
  // A diverged wip chain costs one log (was it pruned on the other box?); the remote's answer costs one config (its proof).
  assert.ok(calls.length <= 9, `fetch took ${calls.length} git processes`);
});

test('fetch leaves a branch checked out in a linked worktree alone and reports it checked-out', async () => {
  const fixture = await pushedAndCloned();
  const replicator = new Replicator({ cwd: fixture.clone, policy: POLICY });
  await replicator.fetch();
  git(fixture.clone, ['worktree', 'add', '-q', join(fixture.clone, '..', 'linked'), 'chant/work/W-001']);
  const work2 = commit(fixture.dir, 'work 2', [fixture.work]);
  git(fixture.dir, ['update-ref', WORK, work2]);
  await new Replicator({ cwd: fixture.dir, policy: POLICY }).push();
  const result = await replicator.fetch();
  assert.deepEqual(result.refs.find((ref) => ref.ref === WORK), { ref: WORK, class: 'work', remote: work2, local: fixture.work, result: 'checked-out' });
  assert.equal(rev(fixture.clone, WORK), fixture.work);
  assertDocument(writeDocument('fetch', result));
});

test('fetch leaves a branch a worktree is rebasing or bisecting alone, its HEAD detached meanwhile, as git fetch does', async () => {
  for (const operation of ['rebase', 'bisect'] as const) {
    const fixture = await pushedAndCloned();
    const replicator = new Replicator({ cwd: fixture.clone, policy: POLICY });
    await replicator.fetch();
    const linked = join(fixture.clone, '..', `linked-${operation}`);
    git(fixture.clone, ['worktree', 'add', '-q', linked, 'chant/work/W-001']);
    // The operation's own files, as git writes them: HEAD detached, the branch named beside it.
    const gitDir = git(linked, ['rev-parse', '--absolute-git-dir']).trim();
    git(linked, ['checkout', '-q', '--detach']);
    if (operation === 'rebase') {
      mkdirSync(join(gitDir, 'rebase-merge'), { recursive: true });
      writeFileSync(join(gitDir, 'rebase-merge', 'head-name'), 'refs/heads/chant/work/W-001\n');
    } else writeFileSync(join(gitDir, 'BISECT_START'), 'chant/work/W-001\n');
    const work2 = commit(fixture.dir, 'work 2', [fixture.work]);
    git(fixture.dir, ['update-ref', WORK, work2]);
    await new Replicator({ cwd: fixture.dir, policy: POLICY }).push();
    const result = await replicator.fetch();
    assert.equal(result.refs.find((ref) => ref.ref === WORK)?.result, 'checked-out', operation);
    assert.equal(rev(fixture.clone, WORK), fixture.work, operation);
  }
});

test('a ledger the remote lacks is not a failure for fetch', async () => {
  const fixture = checkout();
  await new Replicator({ cwd: fixture.dir, policy: { ...POLICY, refs: ['work', 'kept'] } }).push();
  const clone = join(makeRepo(), 'clone');
  git(fixture.dir, ['clone', '-q', fixture.remote, clone]);
  const result = await new Replicator({ cwd: clone, policy: POLICY }).fetch();
  assert.equal(result.failed, null);
  assert.deepEqual(result.refs.map((ref) => [ref.ref, ref.result]), [[KEPT, 'created'], [WORK, 'created']]);
  assertDocument(writeDocument('fetch', result));
});

test('fetch reports failed when the remote sends a crafted tree, and claims no ref up to date from what earlier fetches recorded', async () => {
  const fixture = await pushedAndCloned();
  const replicator = new Replicator({ cwd: fixture.clone, policy: POLICY });
  await replicator.fetch();
  // A tree holding .git, as git mktree allows, pushed to a remote that does not check objects.
  const blob = git(fixture.remote, ['hash-object', '-w', '--stdin'], { input: 'payload\n' }).trim();
  const inner = git(fixture.remote, ['mktree'], { input: `100644 blob ${blob}\tconfig\n` }).trim();
  const tree = git(fixture.remote, ['mktree'], { input: `040000 tree ${inner}\t.git\n` }).trim();
  const evil = git(fixture.remote, ['commit-tree', tree, '-m', 'crafted']).trim();
  git(fixture.remote, ['update-ref', 'refs/chant/kept/W-002/evil', evil]);
  const before = refsOf(fixture.clone);
  const result = await replicator.fetch();
  assert.match(result.failed ?? '', /object check refused it: .*hasDotgit: contains '\.git'.*index-pack failed/);
  // Every local ref equals what the earlier fetch recorded; whether the remote still holds that is not known.
  assert.deepEqual(result.refs, []);
  assert.deepEqual(refsOf(fixture.clone), before);
  assertDocument(writeDocument('fetch', result));
});

test('a remote that is not there is named in failed and in every rejected reason, with git\'s cause', async () => {
  const fixture = checkout();
  const missing = join(fixture.remote, '..', 'not-there.git');
  git(fixture.dir, ['remote', 'set-url', 'origin', missing]);
  const replicator = new Replicator({ cwd: fixture.dir, policy: POLICY });
  // git ends with "Please make sure you have the correct access rights and the repository exists.":
  // its last line names neither the remote nor the cause. The reason is the cause, the boilerplate left out.
  const cause = /^'[^']*not-there\.git' does not appear to be a git repository$/;
  const fetched = await replicator.fetch();
  assert.match(fetched.failed ?? '', cause);
  const pushed = await replicator.push();
  assert.ok(pushed.replication.rejected.length > 0);
  for (const entry of pushed.replication.rejected) assert.match(entry.reason, cause);
});

/** A checkout with `count` kept refs, each its own commit on main, made by one fast-import. */
function manyKept(count: number) {
  const dir = makeRepo();
  const base = rev(dir, 'HEAD');
  let stream = '';
  for (let i = 0; i < count; i += 1) {
    const ref = `refs/chant/kept/W-${String(i % 10).padStart(3, '0')}/t${String(i).padStart(5, '0')}`;
    const message = `kept ${i}\n`;
    stream += `commit ${ref}\ncommitter Test User <test@example.com> 1790000000 +0000\ndata ${Buffer.byteLength(message)}\n${message}from ${base}\n\n`;
  }
  git(dir, ['fast-import', '--quiet'], { input: stream });
  const remote = bareRemote();
  git(dir, ['remote', 'add', 'origin', remote]);
  return { dir, remote };
}

test('state runs the same small number of git processes for 11 refs and for 1,100', async (t) => {
  const counts: number[] = [];
  for (const size of [11, 1_100]) {
    const fixture = manyKept(size);
    const { git: runner, calls } = counting(fixture.dir);
    const state = await new Replicator({ cwd: fixture.dir, git: runner, policy: POLICY }).state();
    assert.equal(state?.refs.length, size);
    assert.ok(state?.refs.every((ref) => ref.ahead === 2));
    counts.push(calls.length);
    t.diagnostic(`state over ${size} refs: ${calls.length} git processes (${calls.map(verb).join(', ')})`);
  }
  assert.equal(counts[0], counts[1]);
  assert.ok((counts[1] as number) <= 10);
});

test('a push of 1,000 kept refs to a bare remote takes at most 10 git processes', async (t) => {
  const fixture = manyKept(1_000);
  const { git: runner, calls } = counting(fixture.dir);
  const outcome = await new Replicator({ cwd: fixture.dir, git: runner, policy: POLICY }).push();
  t.diagnostic(`push of 1,000 refs: ${calls.length} git processes (${calls.map(verb).join(', ')})`);
  assert.equal(outcome.replication.pushed.length, 1_000);
  assert.deepEqual(outcome.replication.rejected, []);
  assert.ok(calls.length <= 10, `${calls.length} processes`);
  assert.equal(Object.keys(refsOf(fixture.remote, 'refs/chant/kept/')).length, 1_000);
  assert.equal(Object.keys(refsOf(fixture.dir, 'refs/chant/replica/origin/')).length, 1_000);
  assertDocument(writeDocument('push', outcome));
  const { git: again, calls: stateCalls } = counting(fixture.dir);
  assert.equal((await new Replicator({ cwd: fixture.dir, git: again, policy: POLICY }).state())?.replicated, true);
  t.diagnostic(`state after it: ${stateCalls.length} git processes`);
});
