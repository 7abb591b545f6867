import assert from 'node:assert/strict';
import { spawn, spawnSync } from 'node:child_process';
import { chmodSync, existsSync, mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, it } from 'node:test';
import type { TestContext } from 'node:test';
import { BIN, git, makeRepo, refsOf, stateOf, tempDir, writeFiles } from './helpers.js';

// A chant command ended by a signal, as a terminal's Ctrl-C, a supervisor's SIGTERM or a closed
// session's SIGHUP end it. A `git` first on PATH sends the signal to the chant process that
// called it on the armed git command, then waits a little and runs git: the signal arrives
// while that step runs, every time. The paths are written into the script, since chant hands
// git a curated environment and not the test's.
const REAL_GIT = spawnSync('sh', ['-c', 'command -v git'], { encoding: 'utf8' }).stdout.trim();

/** An environment whose `git` sends `signal` to its caller once, on the first call that names `command`. */
function signalling(command: string, signal: NodeJS.Signals): NodeJS.ProcessEnv {
  const dir = tempDir('chant-signal-');
  const quote = (text: string) => `'${text.replace(/'/g, `'\\''`)}'`;
  const bin = join(dir, 'bin');
  mkdirSync(bin);
  writeFileSync(join(bin, 'git'), [
    '#!/bin/sh',
    `d=${quote(dir)}`,
    `case " $* " in *" ${command} "*) if mkdir "$d/fired" 2>/dev/null; then kill -${signal.slice(3)} $PPID; sleep 0.5; fi;; esac`,
    `exec ${quote(REAL_GIT)} "$@"`,
    '',
  ].join('\n'));
  chmodSync(join(bin, 'git'), 0o755);
  return { ...process.env, PATH: `${bin}:${process.env.PATH}` };
}

function run(cwd: string, args: readonly string[], env: NodeJS.ProcessEnv): Promise<{ code: number | null; signal: string | null; stdout: string; stderr: string }> {
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, [BIN, ...args], { cwd, env, stdio: ['ignore', 'pipe', 'pipe'] });
    const out: Buffer[] = [];
    const err: Buffer[] = [];
    child.stdout.on('data', (chunk: Buffer) => out.push(chunk));
    child.stderr.on('data', (chunk: Buffer) => err.push(chunk));
    child.once('error', reject);
    child.once('close', (code, signal) => resolve({ code, signal, stdout: Buffer.concat(out).toString('utf8'), stderr: Buffer.concat(err).toString('utf8') }));
  });
}

function posixOnly(t: TestContext): boolean {
  if (process.platform === 'win32') {
    t.skip('signals are a POSIX feature');
    return false;
  }
  return true;
}

/** A repository with a save of `a.txt` changed, then the working tree put back to HEAD and README.md staged. */
function savedThenStaged(): { dir: string; snapshot: string } {
  const dir = makeRepo({ 'README.md': 'hello\n', 'a.txt': 'one\n' });
  writeFiles(dir, { 'a.txt': 'two\n' });
  const saved = spawnSync(process.execPath, [BIN, 'workspace', 'wip', 'save', '--json'], { cwd: dir, encoding: 'utf8' });
  assert.equal(saved.status, 0, saved.stdout);
  const snapshot = JSON.parse(saved.stdout).snapshot.commit as string;
  git(dir, ['checkout', '-q', '--', '.']);
  // Something staged, so that the restore resets the index after it moves the files.
  writeFiles(dir, { 'README.md': 'staged\n' });
  git(dir, ['add', 'README.md']);
  return { dir, snapshot };
}

describe('a restore ended by a signal', () => {
  for (const signal of ['SIGINT', 'SIGTERM', 'SIGHUP'] as const) {
    it(`finishes the index reset it had begun when ${signal} arrives during it, and never leaves the files moved and the index as it was`, async (t) => {
      if (!posixOnly(t)) return;
      const { dir, snapshot } = savedThenStaged();
      const result = await run(dir, ['workspace', 'wip', 'restore', snapshot, '--json'], signalling('read-tree', signal));
      assert.equal(result.signal, null, `the process finished its restore rather than dying by ${result.signal}`);
      assert.equal(result.code, 0, result.stdout);
      assert.equal(JSON.parse(result.stdout).action, 'restore');
      assert.match(result.stderr, new RegExp(signal));
      assert.equal(git(dir, ['status', '--porcelain']), ' M a.txt\n', 'the snapshot\'s files, and the index reset to HEAD');
      assert.equal(existsSync(join(dir, '.git', 'index.lock')), false);
    });
  }

  it('is cancelled with nothing written and no checkpoint when SIGINT arrives before the checkpoint, and says so', async (t) => {
    if (!posixOnly(t)) return;
    const { dir, snapshot } = savedThenStaged();
    const before = stateOf(dir);
    const result = await run(dir, ['workspace', 'wip', 'restore', snapshot, '--json'], signalling('status', 'SIGINT'));
    assert.equal(result.signal, null, `the process printed its refusal rather than dying by ${result.signal}`);
    assert.equal(result.code, 1);
    assert.equal(JSON.parse(result.stdout).error.code, 'wip-cancelled');
    assert.deepEqual(stateOf(dir), before, 'working tree, index, refs and HEAD as they were');
    assert.equal(refsOf(dir), before.refs);
  });
});
