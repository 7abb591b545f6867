import { assertValidDocument, git, makeRepo, runBin, runCli, tempDir } from './helpers.js';
import assert from 'node:assert/strict';
import { join } from 'node:path';
import { PassThrough } from 'node:stream';
import { describe, it } from 'node:test';
import { main } from '../cli/main.js';
import type { PolicyDocument } from '../lib/documents/replication.js';
import { SimpleGitRunner } from '../lib/git/runner.js';
import type { GitRunner } from '../lib/git/runner.js';
import { Replicator } from '../lib/replication/replicator.js';
import { bareRemote, freePort } from './remotes.js';

const POLICY: PolicyDocument = { box: 'app', remote: 'origin', refs: ['work', 'kept', 'wip', 'ledger'], on: [], every: null };
const DECLARATION = `${JSON.stringify({ members: [{ name: 'app', box: { replicate: { remote: 'origin', on: [] } } }] })}\n`;

/**
 * A checkout with a wip ref and a work branch worth a pack, and a bare `origin`. Built with
 * fixed dates, so two of them hold the same commits.
 */
function checkout(): { dir: string; remote: string } {
  const files: Record<string, string> = { 'chant.workspace.json': DECLARATION };
  for (let i = 0; i < 40; i += 1) files[`src/file-${i}.txt`] = `content ${i}\n`.repeat(50);
  const dir = makeRepo(files);
  const tree = git(dir, ['rev-parse', 'HEAD^{tree}']).trim();
  const work = git(dir, ['commit-tree', tree, '-p', 'HEAD', '-m', 'work 1']).trim();
  git(dir, ['update-ref', 'refs/heads/chant/work/W-001', work]);
  git(dir, ['update-ref', 'refs/chant/wip/chant/work/W-001', git(dir, ['commit-tree', tree, '-p', work, '-m', 'wip 1']).trim()]);
  const remote = bareRemote();
  git(dir, ['remote', 'add', 'origin', remote]);
  // A clone of the remote then holds the declaration on its default branch.
  git(dir, ['push', '-q', 'origin', 'main']);
  return { dir, remote };
}

/** A runner that records the arguments of every git call. */
function recording(cwd: string): { git: GitRunner; calls: string[][] } {
  const inner = new SimpleGitRunner(cwd);
  const calls: string[][] = [];
  return { calls, git: { run: (args, options) => (calls.push([...args]), inner.run(args, options)) } };
}

/** Runs the CLI in-process with a stderr that says it is a terminal, as a person's shell would. */
async function runWithTty(cwd: string, args: readonly string[]): Promise<{ code: number; stdout: string; stderr: string }> {
  const stdout = new PassThrough();
  const stderr = Object.assign(new PassThrough(), { isTTY: true });
  const out: Buffer[] = [];
  const err: Buffer[] = [];
  stdout.on('data', (chunk: Buffer) => out.push(chunk));
  stderr.on('data', (chunk: Buffer) => err.push(chunk));
  const code = await main(args, { stdin: process.stdin, stdout, stderr, env: process.env, colorDepth: 1, cwd });
  return { code, stdout: Buffer.concat(out).toString('utf8'), stderr: Buffer.concat(err).toString('utf8') };
}

const TRACE = /trace: /;

describe('progress of push and fetch', () => {
  it('hands git\'s progress to the SDK\'s sink line by line, and the results are those of a push and fetch without one', async () => {
    const watched = checkout();
    const quiet = checkout();
    const lines: string[] = [];
    const recorded = recording(watched.dir);
    const withProgress = await new Replicator({ cwd: watched.dir, git: recorded.git, policy: POLICY, progress: (line) => lines.push(line) }).push();
    const silent = recording(quiet.dir);
    const without = await new Replicator({ cwd: quiet.dir, git: silent.git, policy: POLICY }).push();
    assert.deepEqual(withProgress, without, 'the same outcome with and without a sink');
    assert.equal(withProgress.replication.pushed.length, 2);
    assert.ok(lines.some((line) => /^Writing objects: +100%/.test(line)), `git's progress arrived: ${JSON.stringify(lines)}`);
    assert.ok(lines.every((line) => /[\r\n]$/.test(line) && !TRACE.test(line)), 'whole lines with their terminators, no trace lines');
    assert.ok(lines.some((line) => line.endsWith('\r')), 'updates of a line end in \\r, so a terminal redraws them');
    const pushArgs = (calls: string[][]) => calls.find((args) => args.includes('push')) ?? [];
    assert.ok(pushArgs(recorded.calls).includes('--progress'), 'git is asked for progress when someone watches');
    // And when no one does: its output is what tells the runner's timeout a slow transfer from a hang.
    assert.ok(pushArgs(silent.calls).includes('--progress'), 'and when no one watches');

    const fetched: string[] = [];
    const watchedClone = join(tempDir(), 'clone');
    const quietClone = join(tempDir(), 'clone');
    git(watched.dir, ['clone', '-q', watched.remote, watchedClone]);
    git(quiet.dir, ['clone', '-q', quiet.remote, quietClone]);
    const fetchWith = await new Replicator({ cwd: watchedClone, policy: POLICY, progress: (line) => fetched.push(line) }).fetch();
    const fetchWithout = await new Replicator({ cwd: quietClone, policy: POLICY }).fetch();
    assert.deepEqual(fetchWith, fetchWithout);
    assert.equal(fetchWith.failed, null);
    assert.ok(fetched.some((line) => line.includes('-> refs/chant/fetching/origin/chant/wip/chant/work/W-001')), `fetch progress arrived: ${JSON.stringify(fetched)}`);
    assert.ok(fetched.every((line) => !TRACE.test(line)));
  });

  it('redacts credentials in progress lines, as in every other message', async () => {
    const { dir } = checkout();
    git(dir, ['remote', 'set-url', 'origin', `http://alex:s3cret-token@127.0.0.1:${await freePort()}/x.git`]);
    const inner = new SimpleGitRunner(dir);
    // git prints some URLs bare; stand in for such a line on the push's stderr.
    const runner: GitRunner = {
      run(args, options) {
        if (args.includes('push')) options?.onStderr?.('remote: see http://alex:s3cret-token@127.0.0.1/x.git and s3cret-token\n');
        return inner.run(args, options);
      },
    };
    const lines: string[] = [];
    const outcome = await new Replicator({ cwd: dir, git: runner, policy: POLICY, progress: (line) => lines.push(line) }).push();
    assert.equal(outcome.replication.pushed.length, 0, 'nothing listens there');
    assert.ok(lines.length > 0);
    assert.ok(lines.every((line) => !line.includes('s3cret-token')), JSON.stringify(lines));
    assert.ok(lines.some((line) => line.includes('***')));
  });

  it('shows progress on the CLI\'s stderr when it is a terminal, and stdout carries exactly the document', async () => {
    const { dir, remote } = checkout();
    const push = await runWithTty(dir, ['workspace', 'wip', 'push', '--json']);
    assert.equal(push.code, 0, push.stdout);
    const document = JSON.parse(push.stdout);
    await assertValidDocument(document);
    assert.equal(document.replication.pushed.length, 2);
    assert.doesNotMatch(push.stdout, /objects/);
    assert.match(push.stderr, /Writing objects: +100%/);
    assert.doesNotMatch(push.stderr, TRACE);

    const clone = join(tempDir(), 'clone');
    git(dir, ['clone', '-q', remote, clone]);
    const fetch = await runWithTty(clone, ['workspace', 'wip', 'fetch']);
    assert.equal(fetch.code, 0, fetch.stdout);
    await assertValidDocument(JSON.parse(fetch.stdout));
    assert.match(fetch.stderr, /refs\/chant\/fetching\/origin\//);
  });

  it('writes nothing on stderr when it is not a terminal, in-process or as the bin', async () => {
    const first = checkout();
    const push = await runCli(first.dir, ['workspace', 'wip', 'push', '--json']);
    assert.equal(push.code, 0, push.stdout);
    assert.equal(push.doc.replication.pushed.length, 2);
    assert.equal(push.stderr, '');
    const clone = join(tempDir(), 'clone');
    git(first.dir, ['clone', '-q', first.remote, clone]);
    const fetch = await runCli(clone, ['workspace', 'wip', 'fetch', '--json']);
    assert.equal(fetch.code, 0, fetch.stdout);
    assert.equal(fetch.stderr, '');

    const second = checkout();
    const bin = runBin(second.dir, ['workspace', 'wip', 'push']);
    assert.equal(bin.code, 0, bin.stdout);
    assert.equal(bin.doc.replication.pushed.length, 2);
    assert.equal(bin.stderr, '', 'a pipe is not a terminal');
  });
});
