import { BIN, git, gitStandIn, makeRepo, REAL_GIT, shellQuote, treeOf, writeFiles, stagedTree } from './helpers.js';
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { chmodSync, existsSync, readdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, it } from 'node:test';
import { LOCK_NAME } from '../lib/managers/lock.js';
import { WipStore } from '../lib/store/wip-store.js';

// SIGKILL at every git call a save or restore makes, and in the middle of the checkout itself.
// A `git` first on PATH counts its calls and, on the armed one, kills the chant process that
// called it: before running git, or right after git finished. The paths are written into the
// scripts, since chant hands git a curated environment and not the test's.

interface Killer {
  env: NodeJS.ProcessEnv;
  /** Kill the caller at git call `at` (0: never), before it runs or after it ran; or at the `smudge`th file the checkout writes. */
  arm(at: number, mode: 'before' | 'after', smudge?: number): void;
  calls(): string[];
  /** The smudge filter's command, for `filter.killer.smudge`. */
  smudge: string;
}

function killer(): Killer {
  const { dir, env } = gitStandIn('chant-killer-', () => [
    'n=$(( $(cat "$d/count") + 1 ))',
    'echo "$n" > "$d/count"',
    'printf \'%s\\n\' "$*" >> "$d/log"',
    // exec keeps the pid: the smudge filter below kills this git by it.
    'echo $$ > "$d/git.pid"',
    'echo $PPID > "$d/node.pid"',
    'read at mode smudge < "$d/arm"',
    'if [ "$n" = "$at" ]; then',
    '  if [ "$mode" = before ]; then kill -9 $PPID; exit 137; fi',
    `  ${shellQuote(REAL_GIT)} "$@"; rc=$?; kill -9 $PPID; exit $rc`,
    'fi',
    `exec ${shellQuote(REAL_GIT)} "$@"`,
  ]);
  const smudge = join(dir, 'smudge');
  writeFileSync(smudge, [
    '#!/bin/sh',
    `d=${shellQuote(dir)}`,
    'k=$(( $(cat "$d/smudged") + 1 ))',
    'echo "$k" > "$d/smudged"',
    'read at mode when < "$d/arm"',
    // The chant process first, so it cannot react to git's death; then the checkout itself.
    'if [ "$k" = "$when" ]; then kill -9 $(cat "$d/node.pid"); kill -9 $(cat "$d/git.pid"); exit 1; fi',
    'exec cat',
    '',
  ].join('\n'));
  chmodSync(smudge, 0o755);
  const arm = (at: number, mode: 'before' | 'after', when = 0) => {
    writeFileSync(join(dir, 'arm'), `${at} ${mode} ${when}\n`);
    writeFileSync(join(dir, 'count'), '0\n');
    writeFileSync(join(dir, 'smudged'), '0\n');
    writeFileSync(join(dir, 'log'), '');
  };
  arm(0, 'before');
  return {
    env,
    arm,
    calls: () => readFileSync(join(dir, 'log'), 'utf8').split('\n').filter((line) => line.length > 0),
    smudge,
  };
}

function runBin(cwd: string, args: readonly string[], env: NodeJS.ProcessEnv): Promise<{ code: number | null; signal: string | null; doc: any }> {
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, [BIN, ...args], { cwd, env, stdio: ['ignore', 'pipe', 'ignore'] });
    const out: Buffer[] = [];
    child.stdout.on('data', (chunk: Buffer) => out.push(chunk));
    child.once('error', reject);
    // 'close' comes after the process is reaped, so its pid reads as dead from here on.
    child.once('close', (code, signal) => {
      let doc: unknown;
      try {
        doc = JSON.parse(Buffer.concat(out).toString('utf8'));
      } catch {
        doc = undefined;
      }
      resolve({ code, signal, doc });
    });
  });
}

function wipTip(dir: string): string | null {
  const out = git(dir, ['rev-parse', '-q', '--verify', 'refs/chant/wip/main'], { allowFail: true }).trim();
  return out.length > 0 ? out : null;
}

function leftovers(dir: string): string[] {
  return readdirSync(join(dir, '.git')).filter((name) => name.startsWith('chant-wip'));
}

/** Files the checkout writes through the smudge filter, target and current differing in each. */
function dataFiles(tag: string): Record<string, string> {
  const files: Record<string, string> = {};
  for (let i = 0; i < 6; i += 1) files[`data/f${i}.dat`] = `${tag} ${i}\n`;
  return files;
}

describe('a restore or save killed with SIGKILL', () => {
  // The checkpoint's tree built from git status (the default) and through a temporary index.
  for (const [staging, expectedCalls] of [['auto', 6], ['index', 8]] as const) {
  it(`leaves the pre-restore checkpoint on the ref before the first file is touched, at every git call and mid-checkout, and restoring it gives the tree back (staging ${staging})`, async (t) => {
    const dir = makeRepo({ 'README.md': 'x\n', 'tracked.txt': 'tracked\n' });
    const kill = killer();
    git(dir, ['config', 'filter.killer.smudge', kill.smudge]);
    writeFileSync(join(dir, '.git', 'info', 'attributes'), '*.dat filter=killer\n');
    const store = new WipStore({ cwd: dir });
    writeFiles(dir, { ...dataFiles('target'), 'tracked.txt': 'target\n', 'new/in-target.txt': 'target only\n' });
    const target = await store.save({ label: 'target' });
    const work = { ...dataFiles('work'), 'tracked.txt': 'work\n', 'new/in-target.txt': null, 'only-work.txt': 'work only\n' };
    writeFiles(dir, work);
    let killed = 0;
    let callsOfARestore = 0;
    const points: Array<[number, 'before' | 'after', number]> = [];
    for (const mode of ['before', 'after'] as const) for (let at = 1; at <= 20; at += 1) points.push([at, mode, 0]);
    for (let file = 1; file <= 4; file += 1) points.push([0, 'before', file]);
    const finished = new Set<string>();
    for (const [at, mode, smudge] of points) {
      if (finished.has(mode) && smudge === 0) continue;
      // A working tree no snapshot holds yet, so that every restore writes a checkpoint of its own.
      writeFiles(dir, { 'point.txt': `${at} ${mode} ${smudge}\n` });
      // Staged, so that the index differs from HEAD and the restore's last call, the index
      // reset, runs and is killed too.
      git(dir, ['add', 'point.txt']);
      const workTree = treeOf(dir);
      const workHash = stagedTree(dir);
      const before = wipTip(dir);
      kill.arm(at, mode, smudge);
      const run = await runBin(dir, ['workspace', 'wip', 'restore', target.snapshot.commit], { ...kill.env, CHANT_WIP_STAGING: staging });
      if (run.signal === null) {
        // Past the last git call: the restore ran whole. Undo it for the next point.
        assert.equal(run.code, 0, JSON.stringify(run.doc));
        assert.ok(smudge === 0, 'every armed smudge kill fires');
        // commit-tree runs where the identity memo cannot answer yet (it trusts no configuration
        // written within its racy window, which a loaded machine can stretch past a run), and the
        // checkpoint's hash-object where the hash cache cannot (a file written within its racy
        // margin): each at most once, and not counted.
        const calls = kill.calls();
        const memoized = [/ commit-tree /, / hash-object -w /];
        for (const call of memoized) assert.ok(calls.filter((each) => call.test(` ${each} `)).length <= 1, calls.join(', '));
        callsOfARestore = calls.filter((each) => !memoized.some((call) => call.test(` ${each} `))).length;
        t.diagnostic(`the git calls of a whole restore: ${kill.calls().map((call) => call.split(" ").find((word) => /^[a-z][a-z-]+$/.test(word))).join(" ")}`);
        finished.add(mode);
        await store.restore({ snapshot: run.doc.checkpoint.snapshot.commit });
        assert.deepEqual(treeOf(dir), workTree);
        continue;
      }
      killed += 1;
      const where = smudge > 0 ? `at file ${smudge} of the checkout` : `${mode} git call ${at} (${kill.calls().at(-1)})`;
      const tip = wipTip(dir) as string;
      const tipTree = git(dir, ['rev-parse', `${tip}^{tree}`]).trim();
      const touched = JSON.stringify(treeOf(dir)) !== JSON.stringify(workTree);
      // The checkpoint is a new pre-restore snapshot, or the tip itself when it already held the tree.
      if (touched) assert.equal(tipTree, workHash, `killed ${where}: files changed, so the tip holds the working tree as it was`);
      if (tip !== before) {
        assert.equal(tipTree, workHash, `killed ${where}: the only commit a restore puts on the ref is its checkpoint`);
        assert.match(git(dir, ['log', '-1', '--format=%B', tip]), /^Chant-Wip-Kind: pre-restore$/m);
      }
      // A restore that touched the working tree and was killed says so to the next read, naming its checkpoint.
      if (touched) {
        assert.equal((await store.list()).interruptedRestore?.checkpoint, tip, `killed ${where}: the list names the checkpoint of the restore stopped partway`);
        const mixed = await store.save({ label: `after kill ${killed + 1}` });
        assert.equal(mixed.interruptedRestore?.checkpoint, tip, `killed ${where}: so does a save`);
      }
      if (tipTree === workHash) {
        await store.restore({ snapshot: tip });
        assert.equal((await store.list()).interruptedRestore, undefined, `killed ${where}: the restore of the checkpoint clears the notice`);
      } else {
        // Killed before the checkpoint: nothing was written, and the next save or restore cleans up.
        await store.save({ label: `after kill ${killed}` });
      }
      assert.deepEqual(treeOf(dir), workTree, `killed ${where}: restoring the checkpoint gives the tree back exactly`);
      assert.deepEqual(leftovers(dir), [], `killed ${where}: no lock or temporary index is left once the next write ran`);
      assert.equal(existsSync(join(dir, '.git', 'index.lock')), false);
    }
    // The index is staged, so the checkpoint records it too (write-tree of the index, and a
    // commit of it that chant writes itself, as it writes the checkpoint's and moves the ref,
    // once the store's saves have told it git's identity); the files are written into a staging folder
    // (checkout-index, the target's trees for their .gitattributes read from their loose files,
    // and the files it overwrites hashed as they are on disk, both without a process) and moved.
    // From status, the checkpoint's tree is status and hash-object (not counted: the hash cache
    // knows every changed file from the run before, unless within its racy margin); through a
    // temporary index, ls-files, add and write-tree. The target commit, named by its full id, and the
    // writability check's object types and sizes are read from their loose files, not by cat-file,
    // and so is the wip tip (its loose ref and loose commit), not by for-each-ref, and the paths
    // the working tree's tree and the target's differ on, not by diff-tree. One git diff looks at
    // the files the move will touch against what the read of the working tree found there (the
    // filter in info/attributes sends them to git; with no attribute that rewrites, chant hashes them).
    // One more checkout-index writes the checkpoint's blobs of the files the move overwrites, as
    // restoring the checkpoint would (the filter converts on checkout), to compare with the files.
    assert.equal(callsOfARestore, expectedCalls, `a restore that writes a checkpoint recording the index and resets the index makes ${expectedCalls} git calls`);
    t.diagnostic(`${killed} kills: before and after each of the ${callsOfARestore} git calls of a restore, and at 4 points inside its checkout`);
  });
  }

  // A save building its tree from git status, and one that an untracked executable (whose
  // mode git status cannot tell) sends through a temporary index, are killed at every call.
  for (const [how, files] of [['from git status', {}], ['through a temporary index', { 'tool.sh': '#!/bin/sh\n' }]] as const) {
    it(`leaves the ref as it was or at a whole snapshot, and the next save removes what the killed one left (${how})`, async (t) => {
      const dir = makeRepo();
      const kill = killer();
      const store = new WipStore({ cwd: dir });
      writeFiles(dir, { 'a.txt': 'a\n', 'dir/b.txt': 'b\n', ...files });
      if ('tool.sh' in files) chmodSync(join(dir, 'tool.sh'), 0o755);
      let killed = 0;
      let callsOfASave = 0;
      let sawLeftovers = 0;
      for (const mode of ['before', 'after'] as const) {
        for (let at = 1; at <= 20; at += 1) {
          writeFiles(dir, { 'a.txt': `${mode} ${at}\n` });
          const expected = stagedTree(dir);
          const before = wipTip(dir);
          kill.arm(at, mode);
          // Staging from status is forced: the untracked executable sends it back to the index.
          const run = await runBin(dir, ['workspace', 'wip', 'save', '--label', `${mode}-${at}`], { ...kill.env, CHANT_WIP_STAGING: 'status' });
          if (run.signal === null) {
            assert.equal(run.code, 0);
            callsOfASave = kill.calls().length;
            break;
          }
          killed += 1;
          const tip = wipTip(dir);
          if (tip !== before) {
            assert.equal(git(dir, ['rev-parse', `${tip}^{tree}`]).trim(), expected, `killed ${mode} call ${at}: the tip is a whole snapshot`);
            assert.match(git(dir, ['log', '-1', '--format=%B', tip as string]), new RegExp(`^Chant-Wip-Label: ${mode}-${at}$`, 'm'));
          }
          if (leftovers(dir).some((name) => name.endsWith('.index'))) sawLeftovers += 1;
          const next = await store.save({ label: `recovered ${mode} ${at}` });
          assert.equal(next.snapshot.tree, expected);
          assert.deepEqual(leftovers(dir), [], `killed ${mode} call ${at}: the next save left no lock or temporary index`);
        }
      }
      // Through the index, 5 (the untracked files are listed before git add; the tip is read
      // from its files); from status, 2 (the checkout, HEAD's trees and the tip are read from
      // their files, and the new blobs and trees written as loose objects, without a process).
      // The ref is moved without update-ref, as update-ref moves it, where it exists already.
      assert.equal(callsOfASave, 'tool.sh' in files ? 5 : 2, `${callsOfASave} git calls`);
      if ('tool.sh' in files) assert.ok(sawLeftovers > 0, 'some kills did leave a temporary index behind');
      else assert.equal(sawLeftovers, 0, 'a save from git status writes no temporary index');
      t.diagnostic(`${killed} kills: before and after each of the ${callsOfASave} git calls of a save; ${sawLeftovers} left a temporary index, removed by the next save`);
    });
  }
});
