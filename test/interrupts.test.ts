import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { existsSync, readdirSync } from 'node:fs';
import { join } from 'node:path';
import { describe, it } from 'node:test';
import type { TestContext } from 'node:test';
import { bareRemote } from './remotes.js';
import { BIN, git, gitStandIn, makeRepo, REAL_GIT, refsOf, shellQuote, startBin, stateOf, writeFiles } from './helpers.js';

// A chant command ended by a signal, as a terminal's Ctrl-C, a supervisor's SIGTERM or a closed
// session's SIGHUP end it. A `git` first on PATH sends the signal to the chant process that
// called it on the armed git command, then waits a little and runs git: the signal arrives
// while that step runs, every time. The paths are written into the script, since chant hands
// git a curated environment and not the test's.

/** An environment whose `git` sends `signal` to its caller once, on the first call that names `command`. */
function signalling(command: string, signal: NodeJS.Signals): NodeJS.ProcessEnv {
  return gitStandIn('chant-signal-', () => [
    `case " $* " in *" ${command} "*) if mkdir "$d/fired" 2>/dev/null; then kill -${signal.slice(3)} $PPID; sleep 0.5; fi;; esac`,
    `exec ${shellQuote(REAL_GIT)} "$@"`,
  ]).env;
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
      const result = await startBin(dir, ['workspace', 'wip', 'restore', snapshot, '--json'], signalling('read-tree', signal));
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
    const result = await startBin(dir, ['workspace', 'wip', 'restore', snapshot, '--json'], signalling('status', 'SIGINT'));
    assert.equal(result.signal, null, `the process printed its refusal rather than dying by ${result.signal}`);
    assert.equal(result.code, 1);
    assert.equal(JSON.parse(result.stdout).error.code, 'wip-cancelled');
    assert.deepEqual(stateOf(dir), before, 'working tree, index, refs and HEAD as they were');
    assert.equal(refsOf(dir), before.refs);
  });
});

describe('a save ended by a signal', () => {
  for (const signal of ['SIGINT', 'SIGTERM', 'SIGHUP'] as const) {
    it(`is cancelled with its document, nothing recorded and nothing left behind, when ${signal} arrives before the snapshot is recorded`, async (t) => {
      if (!posixOnly(t)) return;
      const dir = makeRepo({ 'README.md': 'hello\n', 'a.txt': 'one\n' });
      writeFiles(dir, { 'a.txt': 'two\n', 'new.txt': 'new\n' });
      // The files a second older than the index git status writes: the status stateOf runs then
      // leaves the index as it is, and the index's bytes can be compared.
      await new Promise((done) => setTimeout(done, 1100));
      git(dir, ['status', '--porcelain']);
      const before = stateOf(dir);
      const result = await startBin(dir, ['workspace', 'wip', 'save', '--label', 'turn:7', '--json'], signalling('status', signal));
      assert.equal(result.signal, null, `the process printed its refusal rather than dying by ${result.signal}`);
      assert.equal(result.code, 1, result.stdout);
      const doc = JSON.parse(result.stdout);
      assert.equal(doc.action, 'save');
      assert.equal(doc.error.code, 'wip-cancelled');
      assert.deepEqual(stateOf(dir), before, 'no ref moved; the working tree and the index as they were');
      assert.deepEqual(readdirSync(join(dir, '.git')).filter((name) => /^chant-.*(tmp|index|lock)/.test(name) || name.endsWith('.lock')), [], 'no temporary index or lock left');
    });
  }

  it('finishes and prints its document when the signal arrives after the snapshot is recorded', async (t) => {
    if (!posixOnly(t)) return;
    const dir = makeRepo({ 'README.md': 'hello\n' });
    writeFiles(dir, { 'a.txt': 'two\n' });
    // update-ref moves the wip ref: the snapshot is recorded as the signal comes.
    const result = await startBin(dir, ['workspace', 'wip', 'save', '--json'], { ...signalling('update-ref', 'SIGTERM'), CHANT_WIP_STAGING: 'index' });
    assert.equal(result.signal, null);
    assert.equal(result.code, 0, result.stdout);
    assert.equal(JSON.parse(result.stdout).snapshot.commit, git(dir, ['rev-parse', 'refs/chant/wip/main']).trim());
  });
});

describe('a push or fetch ended by a signal', () => {
  const DECLARATION = `${JSON.stringify({ members: [{ name: 'app', box: { replicate: { remote: 'origin', on: [] } } }] })}\n`;

  /** A checkout with a save of a change, and a bare `origin` holding its branch. */
  function saved(): { dir: string; remote: string } {
    const dir = makeRepo({ 'README.md': 'hello\n', 'chant.workspace.json': DECLARATION });
    const remote = bareRemote();
    git(dir, ['remote', 'add', 'origin', remote]);
    git(dir, ['push', '-q', 'origin', 'main']);
    writeFiles(dir, { 'a.txt': 'two\n' });
    const save = spawnSync(process.execPath, [BIN, 'workspace', 'wip', 'save', '--json'], { cwd: dir, encoding: 'utf8' });
    assert.equal(save.status, 0, save.stdout);
    return { dir, remote };
  }

  for (const [verb, command] of [['push', 'push'], ['fetch', 'fetch']] as const) {
    for (const signal of ['SIGINT', 'SIGTERM', 'SIGHUP'] as const) {
      it(`ends a ${verb} as wip-cancelled with its document when ${signal} arrives while git talks to the remote, its git stopped with it`, async (t) => {
        if (!posixOnly(t)) return;
        const { dir } = saved();
        const result = await startBin(dir, ['workspace', 'wip', verb, '--json'], signalling(command, signal));
        assert.equal(result.signal, null, `the process printed its refusal rather than dying by ${result.signal}`);
        assert.equal(result.code, 1, result.stdout);
        const doc = JSON.parse(result.stdout);
        assert.equal(doc.action, verb);
        assert.equal(doc.error.code, 'wip-cancelled');
        assert.match(result.stderr, new RegExp(signal));
      });
    }
  }
});

describe('a prune ended by a signal', () => {
  /** A checkout whose chain holds three saves, its wip ref and its reflog as they are. */
  function chain(): { dir: string; tip: string } {
    const dir = makeRepo({ 'README.md': 'hello\n' });
    for (const text of ['one', 'two', 'three']) {
      writeFiles(dir, { 'a.txt': `${text}\n` });
      const saved = spawnSync(process.execPath, [BIN, 'workspace', 'wip', 'save', '--json'], { cwd: dir, encoding: 'utf8' });
      assert.equal(saved.status, 0, saved.stdout);
    }
    return { dir, tip: git(dir, ['rev-parse', 'refs/chant/wip/main']).trim() };
  }

  for (const signal of ['SIGINT', 'SIGTERM', 'SIGHUP'] as const) {
    it(`is cancelled with its document and no chain moved when ${signal} arrives while it writes the kept snapshots again, where it died by the signal with no document`, async (t) => {
      if (!posixOnly(t)) return;
      const { dir, tip } = chain();
      const reflog = git(dir, ['reflog', 'refs/chant/wip/main']);
      const result = await startBin(dir, ['workspace', 'wip', 'prune', '--keep-last', '1', '--json'], signalling('index-pack', signal));
      assert.equal(result.signal, null, `the process printed its refusal rather than dying by ${result.signal}`);
      assert.equal(result.code, 1, result.stdout);
      const doc = JSON.parse(result.stdout);
      assert.deepEqual([doc.action, doc.error.code], ['prune', 'wip-cancelled']);
      assert.match(result.stderr, new RegExp(signal));
      assert.equal(git(dir, ['rev-parse', 'refs/chant/wip/main']).trim(), tip);
      assert.equal(git(dir, ['reflog', 'refs/chant/wip/main']), reflog);
      assert.equal(git(dir, ['rev-list', '--count', '--first-parent', tip]).trim(), '4', 'all three saves on their head');
    });
  }

  it('finishes and prints its document when the signal arrives as the chains move, its gc left undone', async (t) => {
    if (!posixOnly(t)) return;
    const { dir, tip } = chain();
    const result = await startBin(dir, ['workspace', 'wip', 'prune', '--keep-last', '1', '--gc', '--json'], signalling('update-ref', 'SIGTERM'));
    assert.equal(result.signal, null);
    assert.equal(result.code, 0, result.stdout);
    const doc = JSON.parse(result.stdout);
    assert.equal(doc.collected, false);
    assert.deepEqual(doc.branches.map((entry: { tip: string; dropped: string[] }) => [entry.tip, entry.dropped.length]), [[tip, 2]]);
    assert.equal(git(dir, ['rev-parse', 'refs/chant/wip/main']).trim(), doc.branches[0].next);
  });
});
