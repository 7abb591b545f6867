import assert from 'node:assert/strict';
import { chmodSync, mkdirSync, readFileSync, rmSync, utimesSync, writeFileSync, existsSync } from 'node:fs';
import { join } from 'node:path';
import { describe, it } from 'node:test';
import { git, makeRepo, runCli, tempDir, writeFiles } from './helpers.js';

// No hook runs during save, restore, push or fetch: every hook git knows is installed, where git
// looks by default and where a user's core.hooksPath points, each writing its name to a marker.
// The same steps taken with plain git show the hooks are live.

const HOOKS = [
  'applypatch-msg', 'pre-applypatch', 'post-applypatch', 'pre-commit', 'pre-merge-commit', 'prepare-commit-msg',
  'commit-msg', 'post-commit', 'pre-rebase', 'post-checkout', 'post-merge', 'pre-push', 'pre-receive', 'update',
  'proc-receive', 'post-receive', 'post-update', 'reference-transaction', 'push-to-checkout', 'pre-auto-gc',
  'post-rewrite', 'sendemail-validate', 'fsmonitor-watchman', 'p4-changelist', 'p4-prepare-changelist',
  'p4-post-changelist', 'p4-pre-submit', 'post-index-change',
];

const POLICY = JSON.stringify({ members: [{ name: 'app', box: { replicate: { refs: ['wip'], on: [] } } }] });

/** Installs every hook in `dir`, each appending its name to `marker`. */
function installHooks(dir: string, marker: string): void {
  mkdirSync(dir, { recursive: true });
  for (const name of HOOKS) {
    writeFileSync(join(dir, name), `#!/bin/sh\necho ${name} >> '${marker}'\nexit 0\n`);
    chmodSync(join(dir, name), 0o755);
  }
}

/** The hooks that ran since the marker was last cleared, and clears it. */
function ran(marker: string): string[] {
  const names = existsSync(marker) ? readFileSync(marker, 'utf8').split('\n').filter((line) => line.length > 0) : [];
  rmSync(marker, { force: true });
  return [...new Set(names)].sort();
}

describe('no hook runs', () => {
  for (const where of ['default', 'hooksPath'] as const) {
    it(`during save, restore, push and fetch, with every hook in ${where === 'default' ? '.git/hooks' : 'a core.hooksPath the user set'}`, async (t) => {
      const remote = join(tempDir('chant-hooks-remote-'), 'remote.git');
      git(tempDir(), ['init', '-q', '--bare', remote]);
      const other = makeRepo({ 'README.md': 'hello\n', 'chant.workspace.json': POLICY });
      git(other, ['remote', 'add', 'origin', remote]);
      git(other, ['push', '-q', 'origin', 'main']);
      const clone = (): { dir: string; marker: string } => {
        const dir = tempDir('chant-hooks-');
        git(dir, ['clone', '-q', remote, '.']);
        git(dir, ['repack', '-adq']);
        for (const [key, value] of [['fetch.unpackLimit', '1'], ['gc.autoPackLimit', '1'], ['gc.autoDetach', 'false']] as const) git(dir, ['config', key, value]);
        const marker = join(tempDir('chant-marker-'), 'marker');
        if (where === 'default') installHooks(join(dir, '.git', 'hooks'), marker);
        else {
          const hooks = tempDir('chant-user-hooks-');
          installHooks(hooks, marker);
          git(dir, ['config', 'core.hooksPath', hooks]);
        }
        return { dir, marker };
      };
      const control = clone();
      const box = clone();
      // The other box saves and pushes a snapshot: what the fetches below bring in.
      writeFiles(other, { 'other.txt': `from the other box ${where}\n`.repeat(40) });
      assert.equal((await runCli(other, ['workspace', 'wip', 'save'])).code, 0);
      assert.equal((await runCli(other, ['workspace', 'wip', 'push'])).doc.replication.pushed.length, 1);

      // Plain git, the same steps: the hooks are live.
      writeFiles(control.dir, { 'a.txt': 'a\n' });
      git(control.dir, ['add', 'a.txt']);
      git(control.dir, ['update-ref', 'refs/chant/wip/main', 'HEAD']);
      git(control.dir, ['fetch', '-q', 'origin', '+refs/chant/*:refs/chant/replica/origin/chant/*']);
      git(control.dir, ['push', '-q', 'origin', 'refs/chant/wip/main:refs/chant/wip/control']);
      const live = ran(control.marker);
      t.diagnostic(`plain git ran: ${live.join(', ')}`);
      for (const name of ['post-index-change', 'reference-transaction', 'pre-auto-gc', 'pre-push']) assert.ok(live.includes(name), `plain git runs ${name}`);

      // chant: save (both ways of staging), restore, push, fetch. On a branch of its own, so that
      // its snapshots are new to the remote.
      git(box.dir, ['checkout', '-q', '-b', 'box']);
      writeFiles(box.dir, { 'a.txt': 'a\n', 'README.md': 'edited\n' });
      git(box.dir, ['add', 'a.txt']);
      ran(box.marker);
      for (const staging of ['index', 'status']) {
        writeFiles(box.dir, { 'b.txt': `${staging}\n` });
        const saved = await runCli(box.dir, ['workspace', 'wip', 'save', '--label', staging], { ...process.env, CHANT_WIP_STAGING: staging });
        assert.equal(saved.code, 0, saved.stdout);
        assert.deepEqual(ran(box.marker), [], `save (${staging} staging) ran no hook`);
      }
      writeFiles(box.dir, { 'b.txt': 'changed again\n' });
      const restored = await runCli(box.dir, ['workspace', 'wip', 'restore']);
      assert.equal(restored.code, 0, restored.stdout);
      assert.deepEqual(ran(box.marker), [], 'restore ran no hook');
      const pushed = await runCli(box.dir, ['workspace', 'wip', 'push']);
      assert.equal(pushed.code, 0, pushed.stdout);
      assert.ok(pushed.doc.replication.pushed.length > 0, pushed.stdout);
      assert.deepEqual(ran(box.marker), [], 'push ran no hook');
      const fetched = await runCli(box.dir, ['workspace', 'wip', 'fetch']);
      assert.equal(fetched.code, 0, fetched.stdout);
      assert.equal(fetched.doc.failed, null, fetched.stdout);
      assert.deepEqual(ran(box.marker), [], 'fetch ran no hook, nor the maintenance after it');
    });
  }
});

describe('a core.fsmonitor program', () => {
  it('is never asked what changed: a save takes the edits one that says nothing changed would hide, and a restore puts them back', async () => {
    const dir = makeRepo({ 'a.txt': 'a\n', 'b.txt': 'b\n' });
    const marker = join(tempDir('chant-marker-'), 'marker');
    const monitor = join(tempDir('chant-fsmonitor-'), 'fsmonitor');
    // Version 1 of the hook protocol: whatever token it is given, it answers that nothing changed.
    writeFileSync(monitor, `#!/bin/sh\necho fsmonitor >> '${marker}'\nprintf 'token\\0'\n`);
    chmodSync(monitor, 0o755);
    git(dir, ['config', 'core.fsmonitor', monitor]);
    git(dir, ['status', '--porcelain']);
    writeFiles(dir, { 'a.txt': 'edited\n', 'b.txt': 'edited too, longer\n' });
    assert.equal(git(dir, ['status', '--porcelain']), '', 'plain git believes the program');
    assert.ok(ran(marker).includes('fsmonitor'), 'plain git asks the program');
    for (const staging of ['index', 'status']) {
      writeFiles(dir, { 'c.txt': `${staging}\n` });
      const saved = await runCli(dir, ['workspace', 'wip', 'save', '--label', staging], { ...process.env, CHANT_WIP_STAGING: staging });
      assert.equal(saved.code, 0, saved.stdout);
      assert.equal(git(dir, ['show', `${saved.doc.snapshot.commit}:a.txt`]), 'edited\n', `${staging} staging`);
      assert.equal(git(dir, ['show', `${saved.doc.snapshot.commit}:b.txt`]), 'edited too, longer\n', `${staging} staging`);
      assert.deepEqual(ran(marker), [], `save (${staging} staging) never asked the program`);
    }
    writeFiles(dir, { 'a.txt': 'lost?\n' });
    const restored = await runCli(dir, ['workspace', 'wip', 'restore']);
    assert.equal(restored.code, 0, restored.stdout);
    assert.equal(readFileSync(join(dir, 'a.txt'), 'utf8'), 'edited\n');
    assert.equal(git(dir, ['show', `${restored.doc.checkpoint.snapshot.commit}:a.txt`]), 'lost?\n', 'the checkpoint holds the edit the restore replaced');
    assert.deepEqual(ran(marker), [], 'restore never asked the program');
  });
});

describe('stat data git is told to trust less', () => {
  for (const setting of [['core.trustctime', 'false'], ['core.checkStat', 'minimal']] as const) {
    it(`never hides an edit that kept a file's size and mtime from a save, under ${setting.join('=')}`, async () => {
      const dir = makeRepo({ 'a.txt': 'aaaa\n', 'b.txt': 'bbbb\n' });
      git(dir, ['config', ...setting]);
      const old = new Date('2020-01-01T00:00:00Z');
      for (const name of ['a.txt', 'b.txt']) utimesSync(join(dir, name), old, old);
      git(dir, ['update-index', '--refresh']);
      // git compares ctimes in whole seconds: the rewrite comes in a later second than the index's.
      await new Promise((done) => setTimeout(done, 1100));
      // What cp -p, rsync -t or a backup put back does: other bytes of the same size, the mtime kept.
      writeFileSync(join(dir, 'a.txt'), 'zzzz\n');
      utimesSync(join(dir, 'a.txt'), old, old);
      assert.equal(git(dir, ['status', '--porcelain']), '', 'plain git under this setting sees no change');
      for (const staging of ['index', 'status']) {
        const saved = await runCli(dir, ['workspace', 'wip', 'save', '--label', staging], { ...process.env, CHANT_WIP_STAGING: staging });
        assert.equal(saved.code, 0, saved.stdout);
        assert.equal(git(dir, ['show', `${saved.doc.snapshot.commit}:a.txt`]), 'zzzz\n', `${staging} staging`);
      }
    });
  }
});
