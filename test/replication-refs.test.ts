// Each ref stands alone: a remote that refuses one ref (a secret scanner's pre-receive hook) still
// takes the others, on this push and every later one, with the hook's own reason; a fetch that
// cannot write one local ref says which and why and brings the rest; a refused fetch writes nothing.
import assert from 'node:assert/strict';
import { chmodSync, existsSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { test } from 'node:test';
import { writeDocument } from '../lib/documents/document.js';
import type { PolicyDocument } from '../lib/documents/replication.js';
import { Replicator } from '../lib/replication/replicator.js';
import { GitCommandError, SimpleGitRunner } from '../lib/git/runner.js';
import type { GitOutput, GitRunner, GitRunOptions } from '../lib/git/runner.js';
import { isWipError } from '../lib/errors.js';
import { assertValidDocument, git, makeRepo, refsOf, runCli, writeFiles } from './helpers.js';
import { assertDocument, bareRemote, missingProgram, refuseSecrets, startLighttpd } from './remotes.js';

const POLICY: PolicyDocument = { box: 'app', remote: 'origin', refs: ['work', 'kept', 'wip', 'ledger'], on: ['save', 'release'], every: null };
const WIP = 'refs/chant/wip/chant/work/W-001';

/** A checkout whose wip snapshot holds a file named SECRET, beside a clean work branch, kept attempt and ledger. */
function leakyCheckout(url: string): string {
  const dir = makeRepo();
  const tree = git(dir, ['rev-parse', 'HEAD^{tree}']).trim();
  const base = git(dir, ['rev-parse', 'HEAD']).trim();
  const work = git(dir, ['commit-tree', tree, '-p', base, '-m', 'work 1']).trim();
  const secret = git(dir, ['hash-object', '-w', '--stdin'], { input: 'token=hunter2\n' }).trim();
  const readme = git(dir, ['rev-parse', 'HEAD:README.md']).trim();
  const leaky = git(dir, ['mktree'], { input: `100644 blob ${readme}\tREADME.md\n100644 blob ${secret}\tSECRET\n` }).trim();
  git(dir, ['update-ref', 'refs/heads/chant/work/W-001', work]);
  git(dir, ['update-ref', 'refs/chant/kept/W-001/tok', git(dir, ['commit-tree', tree, '-p', work, '-m', 'kept 1']).trim()]);
  git(dir, ['update-ref', WIP, git(dir, ['commit-tree', leaky, '-p', work, '-m', 'wip 1']).trim()]);
  git(dir, ['update-ref', 'refs/heads/chant/lifecycle', git(dir, ['commit-tree', tree, '-m', 'ledger 1']).trim()]);
  git(dir, ['remote', 'add', 'origin', url]);
  return dir;
}

async function refusedOneRef(t: import('node:test').TestContext, dir: string, remoteDir: string): Promise<void> {
  const replicator = new Replicator({ cwd: dir, policy: POLICY });
  const first = await replicator.push();
  assertDocument(writeDocument('push', first));
  assert.deepEqual(first.replication.pushed.map((ref) => ref.ref), ['refs/chant/kept/W-001/tok', 'refs/heads/chant/lifecycle', 'refs/heads/chant/work/W-001']);
  assert.deepEqual(first.replication.rejected.map((ref) => ref.ref), [WIP]);
  const reason = first.replication.rejected[0]?.reason ?? '';
  assert.match(reason, /pre-receive hook declined/);
  assert.match(reason, /secret-scanner: refs\/chant\/wip\/chant\/work\/W-001 adds the file SECRET, which holds a credential/);
  assert.equal(git(remoteDir, ['for-each-ref', '--format=%(refname)', WIP]), '');

  // The work goes on; every later push still takes what the hook accepts.
  const tree = git(dir, ['rev-parse', 'HEAD^{tree}']).trim();
  const work = git(dir, ['commit-tree', tree, '-p', 'refs/heads/chant/work/W-001', '-m', 'work 2']).trim();
  git(dir, ['update-ref', 'refs/heads/chant/work/W-001', work]);
  const later = await replicator.push();
  assert.deepEqual(later.replication.pushed.map((ref) => ref.ref), ['refs/heads/chant/work/W-001']);
  assert.deepEqual(later.replication.rejected.map((ref) => ref.ref), [WIP]);
  assert.match(later.replication.rejected[0]?.reason ?? '', /secret-scanner/);
  assert.equal(git(remoteDir, ['rev-parse', 'refs/heads/chant/work/W-001']).trim(), work);
  const state = await replicator.state();
  assert.deepEqual(state?.refs.filter((ref) => !ref.replicated).map((ref) => ref.ref), [WIP]);
  t.diagnostic(`reason: ${reason}`);
}

test('a pre-receive hook refusing one snapshot over a path: the other refs go, now and on every later push', async (t) => {
  const remote = bareRemote();
  refuseSecrets(remote);
  await refusedOneRef(t, leakyCheckout(remote), remote);
});

test('a pre-receive hook refusing one snapshot over HTTP (lighttpd): the other refs go, with the hook\'s reason', async (t) => {
  const missing = missingProgram('lighttpd');
  if (missing !== null) return t.skip(missing);
  const server = await startLighttpd();
  const url = server.repository('scanned.git');
  const remote = join(server.base, 'scanned.git');
  refuseSecrets(remote);
  await refusedOneRef(t, leakyCheckout(url), remote);
});

test('a remote with two URLs, the first refusing a snapshot the second takes: the ref is rejected and never reads replicated', async () => {
  // git pushes to every url of a remote, one after the other, while a fetch reads the first alone.
  const refusing = bareRemote();
  refuseSecrets(refusing);
  const taking = bareRemote();
  const dir = leakyCheckout(refusing);
  git(dir, ['remote', 'set-url', '--add', 'origin', taking]);
  const replicator = new Replicator({ cwd: dir, policy: POLICY });
  const result = await replicator.push();
  assert.deepEqual(result.replication.rejected.map((ref) => ref.ref), [WIP]);
  assert.match(result.replication.rejected[0]?.reason ?? '', /secret-scanner/);
  assert.ok(!result.replication.pushed.some((ref) => ref.ref === WIP));
  assert.equal(git(refusing, ['for-each-ref', '--format=%(refname)', WIP]), '');
  assert.notEqual(git(taking, ['for-each-ref', '--format=%(refname)', WIP]), '', 'the second URL took it');
  const state = await replicator.state();
  assert.deepEqual(state?.refs.filter((ref) => !ref.replicated).map((ref) => ref.ref), [WIP]);
  // The next push finds it up to date at the second URL, and still refused at the first.
  const again = await replicator.push();
  assert.deepEqual(again.replication.rejected.map((ref) => ref.ref), [WIP]);
  assert.equal(again.replication.upToDate, 3);
});

test('a fetch that cannot create one local ref (a name in the way) reports it and brings the rest, every time', async () => {
  const remote = bareRemote();
  const origin = makeRepo();
  const head = git(origin, ['rev-parse', 'HEAD']).trim();
  git(origin, ['update-ref', 'refs/chant/wip/feature/x', git(origin, ['commit-tree', 'HEAD^{tree}', '-p', head, '-m', 'wip x']).trim()]);
  git(origin, ['update-ref', 'refs/heads/chant/work/W-002', head]);
  git(origin, ['push', '-q', remote, 'refs/chant/wip/feature/x:refs/chant/wip/feature/x', 'refs/heads/chant/work/W-002:refs/heads/chant/work/W-002']);

  const box = makeRepo();
  git(box, ['remote', 'add', 'origin', remote]);
  const local = git(box, ['commit-tree', 'HEAD^{tree}', '-m', 'a local snapshot ref named feature']).trim();
  git(box, ['update-ref', 'refs/chant/wip/feature', local]);
  const replicator = new Replicator({ cwd: box, policy: POLICY });
  for (let round = 0; round < 2; round += 1) {
    const fetched = await replicator.fetch();
    assert.equal(fetched.failed, null);
    assertDocument(writeDocument('fetch', fetched));
    assert.deepEqual(fetched.refs.map((ref) => [ref.ref, ref.result]), [['refs/heads/chant/work/W-002', round === 0 ? 'created' : 'up-to-date']]);
    assert.equal(fetched.failedRefs?.length, 1);
    assert.equal(fetched.failedRefs?.[0]?.ref, 'refs/chant/wip/feature/x');
    assert.match(fetched.failedRefs?.[0]?.reason ?? '', /refs\/chant\/wip\/feature' exists/);
  }
  assert.equal(git(box, ['rev-parse', 'refs/heads/chant/work/W-002']).trim(), head);
  assert.equal(git(box, ['rev-parse', 'refs/chant/wip/feature']).trim(), local);
});

/** The default runner, except that moving local refs fails as a full disk would. */
class FullDiskOnMove implements GitRunner {
  readonly #inner: GitRunner;
  constructor(cwd: string) {
    this.#inner = new SimpleGitRunner(cwd);
  }
  run(args: readonly string[], options?: GitRunOptions): Promise<GitOutput> {
    if (args.includes('update-ref') && args.includes('--create-reflog')) {
      return Promise.reject(new GitCommandError(args, 128, "fatal: update_ref failed for ref 'refs/heads/chant/work/W-001': could not write to '.git/refs/heads/chant/work/W-001.lock': No space left on device\n"));
    }
    return this.#inner.run(args, options);
  }
}

test('a fetch refused after the remote answered writes nothing: no replica refs, no local refs', async () => {
  const remote = bareRemote();
  const origin = makeRepo();
  git(origin, ['update-ref', 'refs/heads/chant/work/W-001', 'HEAD']);
  git(origin, ['update-ref', WIP, git(origin, ['commit-tree', 'HEAD^{tree}', '-p', 'HEAD', '-m', 'wip']).trim()]);
  git(origin, ['push', '-q', remote, `refs/heads/chant/work/W-001:refs/heads/chant/work/W-001`, `${WIP}:${WIP}`]);
  const box = makeRepo();
  git(box, ['remote', 'add', 'origin', remote]);
  const before = refsOf(box);
  let caught: unknown;
  try {
    await new Replicator({ cwd: box, policy: POLICY, git: new FullDiskOnMove(box) }).fetch();
  } catch (error) {
    caught = error;
  }
  assert.ok(isWipError(caught, 'git-failed'), `refused with git-failed: ${String(caught)}`);
  assert.match((caught as Error).message, /No space left on device/);
  assert.equal(refsOf(box), before);
});

test('a hook refusing many refs scattered among many: every ref reported refused is one the hook refuses, or says it was not tried alone', async () => {
  const remote = bareRemote();
  writeFileSync(join(remote, 'hooks', 'pre-receive'), ['#!/bin/sh', 'status=0', 'while read old new ref; do', '  case "$ref" in *-bad) echo "refused: $ref" >&2; status=1 ;; esac', 'done', 'exit $status', ''].join('\n'));
  chmodSync(join(remote, 'hooks', 'pre-receive'), 0o755);
  const dir = makeRepo();
  git(dir, ['remote', 'add', 'origin', remote]);
  const base = git(dir, ['rev-parse', 'HEAD']).trim();
  // 200 kept refs, every tenth refused: the bisection runs out of pushes before it has them all apart.
  const names = Array.from({ length: 200 }, (_, index) => `refs/chant/kept/W-001/t${String(index).padStart(3, '0')}${index % 10 === 3 ? '-bad' : ''}`);
  const commits = git(dir, ['fast-import', '--quiet'], { input: names.map((name, index) => `commit ${name}\ncommitter T <t@t> ${1790000000 + index} +0000\ndata 2\nk\nfrom ${base}\n\n`).join('') });
  assert.equal(commits, '');
  const replicator = new Replicator({ cwd: dir, policy: { ...POLICY, refs: ['kept'] } });
  const { replication } = await replicator.push();
  const refused = new Set(names.filter((name) => name.endsWith('-bad')));
  for (const ref of replication.rejected) {
    if (!refused.has(ref.ref)) assert.match(ref.reason, /not tried alone: the next push tries it again/, ref.ref);
  }
  for (const name of refused) assert.ok(replication.rejected.some((ref) => ref.ref === name), name);
  assert.equal(replication.pushed.length + replication.rejected.length, names.length);
  // Each later push takes more of what the remote takes, and never one it refuses.
  const again = await replicator.push();
  assert.ok(again.replication.pushed.every((ref) => !refused.has(ref.ref)));
});

test('a ref another push moves on the remote meanwhile (several saves at once, each pushing) is pushed again, not reported rejected', async () => {
  for (const verb of ['save', 'push'] as const) {
    const remote = bareRemote();
    const on = verb === 'save' ? ['save'] : [];
    const dir = makeRepo({ 'README.md': 'hello\n', 'chant.workspace.json': JSON.stringify({ members: [{ name: 'app', box: { replicate: { refs: ['wip'], on } } }] }) });
    git(dir, ['remote', 'add', 'origin', remote]);
    git(dir, ['push', '-q', 'origin', 'main']);
    // Another push wins the race once: between what the remote advertised and its update, the
    // ref comes into being there, so the remote's compare-and-swap of it fails.
    const marker = join(remote, 'raced');
    writeFileSync(join(remote, 'hooks', 'update'), `#!/bin/sh\nif [ ! -e '${marker}' ]; then : > '${marker}'; git update-ref "$1" refs/heads/main; fi\nexit 0\n`);
    chmodSync(join(remote, 'hooks', 'update'), 0o755);
    writeFiles(dir, { 'work.txt': `${verb}\n` });
    if (verb === 'push') assert.equal((await runCli(dir, ['workspace', 'wip', 'save'])).doc.replication, null);
    const run = await runCli(dir, ['workspace', 'wip', verb, '--json']);
    assert.equal(run.code, 0, run.stdout);
    assert.ok(existsSync(marker), 'the remote saw the race');
    const tip = git(dir, ['rev-parse', 'refs/chant/wip/main']).trim();
    assert.deepEqual(run.doc.replication.rejected, [], run.stdout);
    assert.deepEqual(run.doc.replication.pushed, [{ ref: 'refs/chant/wip/main', commit: tip }], run.stdout);
    assert.equal(git(remote, ['rev-parse', 'refs/chant/wip/main']).trim(), tip);
    await assertValidDocument(run.doc);
  }
});

test('a ref the remote refused for its own reason, in a push where another ref raced, is not pushed again', async () => {
  const remote = bareRemote();
  const dir = makeRepo({ 'README.md': 'hello\n', 'chant.workspace.json': JSON.stringify({ members: [{ name: 'app', box: { replicate: { refs: ['wip'], on: [] } } }] }) });
  git(dir, ['remote', 'add', 'origin', remote]);
  git(dir, ['push', '-q', 'origin', 'main']);
  writeFiles(dir, { 'work.txt': 'main\n' });
  await runCli(dir, ['workspace', 'wip', 'save']);
  git(dir, ['checkout', '-q', '-b', 'feature']);
  writeFiles(dir, { 'work.txt': 'feature\n' });
  await runCli(dir, ['workspace', 'wip', 'save']);
  // The remote refuses the feature chain every time (its update hook declines it, and counts),
  // while the main chain races once: git says both in one stream of errors.
  const marker = join(remote, 'raced');
  const count = join(remote, 'refused');
  writeFileSync(join(remote, 'hooks', 'update'), [
    '#!/bin/sh',
    `if [ "$1" = refs/chant/wip/feature ]; then echo x >> '${count}'; exit 1; fi`,
    `if [ ! -e '${marker}' ]; then : > '${marker}'; git update-ref "$1" refs/heads/main; fi`,
    'exit 0',
    '',
  ].join('\n'));
  chmodSync(join(remote, 'hooks', 'update'), 0o755);
  const run = await runCli(dir, ['workspace', 'wip', 'push', '--json']);
  assert.ok(existsSync(marker), 'the remote saw the race');
  assert.deepEqual(run.doc.replication.pushed.map((ref: { ref: string }) => ref.ref), ['refs/chant/wip/main'], run.stdout);
  assert.deepEqual(run.doc.replication.rejected.map((ref: { ref: string }) => ref.ref), ['refs/chant/wip/feature'], run.stdout);
  assert.equal(readFileSync(count, 'utf8'), 'x\n', 'the refused ref was pushed once');
});
