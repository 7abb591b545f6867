// A process that can write the working tree (an agent in a sandbox, while the host restores
// outside it) swaps the folders a restore fills and empties for symlinks to a folder outside,
// over and over. Whatever the restore answers, nothing outside the working tree is written or
// deleted.
import assert from 'node:assert/strict';
import { spawn, spawnSync } from 'node:child_process';
import { chmodSync, mkdirSync, readdirSync, readFileSync, renameSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, it } from 'node:test';
import { git, makeRepo, tempDir, writeFiles } from './helpers.js';
import { isWipError, SimpleGitRunner, WipStore } from '../lib/index.js';

const FILES = 400;

/**
 * Starts a process that waits for the restore to start emptying `empty/` (its first file gone)
 * and filling `fill/` (its first file there), and at that moment swaps each for a symlink to
 * `outside`, moving the real folder aside inside the working tree.
 */
function racer(dir: string, outside: string): { ready: Promise<void>; stop(): Promise<number> } {
  const script = `
    const fs = require('node:fs');
    const path = require('node:path');
    const [dir, outside] = process.argv.slice(1);
    const swapped = new Set();
    let running = true;
    process.on('SIGTERM', () => { running = false; });
    const swap = (folder) => {
      const real = path.join(dir, folder);
      try {
        fs.renameSync(real, real + '.aside');
        fs.symlinkSync(outside, real);
        swapped.add(folder);
      } catch {}
    };
    const loop = () => {
      for (let round = 0; round < 2000 && running; round += 1) {
        if (!swapped.has('empty') && !fs.existsSync(path.join(dir, 'empty', 'empty-0.txt'))) swap('empty');
        if (!swapped.has('fill') && fs.existsSync(path.join(dir, 'fill', 'fill-0.txt'))) swap('fill');
      }
      if (running) setImmediate(loop);
      else { fs.writeSync(1, String(swapped.size)); process.exit(0); }
    };
    fs.writeSync(1, 'ready ');
    loop();
  `;
  const child = spawn(process.execPath, ['-e', script, dir, outside], { stdio: ['ignore', 'pipe', 'inherit'] });
  let out = '';
  const ready = new Promise<void>((resolve) => {
    child.stdout.on('data', (chunk: Buffer) => {
      out += chunk.toString();
      if (out.startsWith('ready')) resolve();
    });
  });
  return {
    ready,
    stop: () => new Promise((resolve) => {
      child.on('exit', () => resolve(Number(out.replace('ready ', '')) || 0));
      child.kill('SIGTERM');
    }),
  };
}

/** Every file under a folder with its content. */
function contents(dir: string): Record<string, string> {
  const out: Record<string, string> = {};
  for (const entry of readdirSync(dir, { recursive: true, withFileTypes: true })) {
    if (entry.isFile()) {
      const full = join(entry.parentPath, entry.name);
      out[full.slice(dir.length + 1)] = readFileSync(full, 'utf8');
    }
  }
  return out;
}

describe('restore: a racing writer', () => {
  it('never writes or deletes outside the working tree while folders it fills and empties become symlinks', async () => {
    let swapsSeen = 0;
    for (let round = 0; round < 3; round += 1) {
      const outside = tempDir('chant-outside-');
      // The outside folder holds files of the same names the restore deletes and writes.
      const decoys: Record<string, string> = {};
      for (let i = 0; i < FILES; i += 1) {
        decoys[`fill-${i}.txt`] = 'outside, must stay\n';
        decoys[`empty-${i}.txt`] = 'outside, must stay\n';
      }
      writeFiles(outside, decoys);
      const before = contents(outside);
      const dir = makeRepo();
      const store = new WipStore({ cwd: dir });
      const saved: Record<string, string> = {};
      for (let i = 0; i < FILES; i += 1) saved[`fill/fill-${i}.txt`] = `snapshot ${i}\n`;
      writeFiles(dir, saved);
      mkdirSync(join(dir, 'empty'));
      const snapshot = await store.save({});
      // Now the working tree lacks fill/ and has empty/ full: the restore fills one and empties the other.
      writeFiles(dir, { 'fill': null });
      mkdirSync(join(dir, 'fill'));
      writeFileSync(join(dir, 'fill', '.keep'), 'keeps the folder\n');
      const extra: Record<string, string> = {};
      for (let i = 0; i < FILES; i += 1) extra[`empty/empty-${i}.txt`] = `working tree ${i}\n`;
      writeFiles(dir, extra);
      const race = racer(dir, outside);
      await race.ready;
      let outcome = 'restored';
      try {
        await store.restore({ snapshot: snapshot.snapshot.commit });
      } catch (error) {
        assert.ok(isWipError(error), `a refusal with a code, not ${String(error)}`);
        outcome = error.code;
      }
      const swaps = await race.stop();
      swapsSeen += swaps;
      process.stderr.write(`round ${round}: ${outcome}, ${swaps} folders swapped\n`);
      assert.deepEqual(contents(outside), before, `round ${round} (${outcome}): nothing outside the working tree was written or deleted`);
    }
    assert.ok(swapsSeen > 0, 'the racer swapped folders while the restores wrote');
  });
});

describe('restore: a path changed while it is prepared', () => {
  it('stops before the move, writing no file, when another process writes, adds or edits a path it would overwrite or remove', async () => {
    for (const racing of ['an edit of a file the restore overwrites', 'a new file where the snapshot has one', 'an edit of a file the restore removes'] as const) {
      const dir = makeRepo({ '.gitattributes': '*.touchy filter=touchy\n', 'README.md': 'x\n' });
      git(dir, ['config', 'filter.touchy.clean', 'cat']);
      git(dir, ['config', 'filter.touchy.required', 'true']);
      const store = new WipStore({ cwd: dir, policy: null });
      writeFiles(dir, { 'f.touchy': 'v1\n', 'notes.txt': 'old notes\n', 'gen.txt': 'snapshot gen\n' });
      const saved = (await store.save({ label: 'turn:1' })).snapshot.commit;
      writeFiles(dir, { 'f.touchy': 'v2\n', 'notes.txt': 'mine\n', 'gen.txt': null, 'draft.txt': 'draft 1\n' });
      const [path, text] = racing === 'an edit of a file the restore overwrites' ? ['notes.txt', 'precious edit\n']
        : racing === 'a new file where the snapshot has one' ? ['gen.txt', 'new work\n'] : ['draft.txt', 'draft 2\n'];
      // The smudge filter, run as the snapshot's files are staged, stands for an editor that
      // saves while the restore runs.
      git(dir, ['config', 'filter.touchy.smudge', `printf '${text.trim()}\\n' > '${join(dir, path)}'; cat`]);
      const tip = git(dir, ['rev-parse', 'refs/chant/wip/main']).trim();
      await assert.rejects(store.restore({ snapshot: saved }), (error) => isWipError(error, 'wip-race') && error.message.includes(path) && /no file of the working tree was written/.test(error.message), racing);
      assert.equal(readFileSync(join(dir, path), 'utf8'), text, `${racing}: the other process's work stays`);
      assert.equal(readFileSync(join(dir, 'f.touchy'), 'utf8'), 'v2\n', `${racing}: nothing else moved`);
      if (path !== 'draft.txt') assert.equal(readFileSync(join(dir, 'draft.txt'), 'utf8'), 'draft 1\n', racing);
      // The checkpoint taken meanwhile holds the tree as the restore found it.
      const checkpoint = git(dir, ['rev-parse', 'refs/chant/wip/main']).trim();
      assert.notEqual(checkpoint, tip);
      assert.equal(git(dir, ['show', `${checkpoint}:notes.txt`]), 'mine\n');
    }
  });
});

describe('restore: a path changed between the read of the working tree and the first look at it', () => {
  for (const staging of ['status', 'index'] as const) {
    it(`refuses with wip-race, taking no checkpoint and writing nothing (${staging} staging)`, async () => {
      const dir = makeRepo({ 'README.md': 'x\n' });
      writeFiles(dir, { 'notes.txt': 'old notes\n' });
      const saved = (await new WipStore({ cwd: dir, policy: null }).save({ label: 'turn:1' })).snapshot.commit;
      writeFiles(dir, { 'notes.txt': 'mine\n', 'README.md': 'y\n' });
      // Something staged: the restore reads the index's tree with git write-tree after the working tree.
      git(dir, ['add', 'README.md']);
      const tip = git(dir, ['rev-parse', 'refs/chant/wip/main']).trim();
      const runner = new SimpleGitRunner(dir);
      let fired = false;
      const store = new WipStore({
        cwd: dir, policy: null, staging,
        git: {
          run: async (args, options) => {
            const out = await runner.run(args, options);
            // An editor saves notes.txt after the restore read the working tree.
            if (!fired && args.includes('write-tree')) {
              fired = true;
              writeFileSync(join(dir, 'notes.txt'), 'precious edit\n');
            }
            return out;
          },
        },
      });
      await assert.rejects(store.restore({ snapshot: saved }), (error) => isWipError(error, 'wip-race') && error.message.includes('notes.txt'));
      assert.ok(fired);
      assert.equal(readFileSync(join(dir, 'notes.txt'), 'utf8'), 'precious edit\n');
      assert.equal(git(dir, ['rev-parse', 'refs/chant/wip/main']).trim(), tip, 'no checkpoint taken');
    });
  }
});

describe('restore: the second look never refuses a tree that did not change', () => {
  it('trusts a file git status trusted by its stat data, under settings changed since, and refuses a FIFO by what it is', async () => {
    const dir = makeRepo({ f: 'a\n' });
    git(dir, ['config', 'core.autocrlf', 'true']);
    writeFiles(dir, { f: 's\n' });
    const store = new WipStore({ cwd: dir, policy: null });
    const saved = (await store.save({ label: 'turn:1' })).snapshot.commit;
    // Checked out again under autocrlf (a CRLF on disk, LF in the index), then the setting goes:
    // git status, trusting the stat data, says clean, and hashing it again would not.
    git(dir, ['checkout', '-q', 'f']);
    // A second on, git status refreshes the index's stat data of f (no longer racy).
    await new Promise((resolve) => setTimeout(resolve, 1100));
    assert.equal(git(dir, ['status', '--porcelain']), '');
    git(dir, ['config', 'core.autocrlf', 'false']);
    assert.equal(git(dir, ['status', '--porcelain']), '');
    // The checkpoint holds f as LF, and checks out LF now: the CRLF on disk is what it cannot
    // give back, refused unless allowed, and then named.
    await assert.rejects(store.restore({ snapshot: saved }), (error) => isWipError(error, 'wip-restore-blocked') && /could not give this file back/.test(error.message));
    const restored = await store.restore({ snapshot: saved, allowInexact: true });
    assert.deepEqual(restored.written, ['f']);
    assert.deepEqual(restored.inexact?.map((entry) => entry.path), ['f']);
    assert.equal(readFileSync(join(dir, 'f'), 'utf8'), 's\n');
    // A tracked file made a FIFO is one the checkpoint cannot take: in the way, not a race.
    rmSync(join(dir, 'f'));
    spawnSync('mkfifo', [join(dir, 'f')]);
    await assert.rejects(store.restore({ snapshot: saved }), (error) => isWipError(error, 'wip-restore-blocked') && /not-a-file/.test(error.message));
  });
});

describe('restore: the second look asks git only where an attribute may rewrite a file', () => {
  /**
   * A store whose git calls are counted by subcommand; with `racer`, it is called once just after
   * the restore reads the index's tree (git write-tree, once the working tree was read).
   */
  const counted = (dir: string, racer?: () => void): { store: WipStore; calls: string[] } => {
    const runner = new SimpleGitRunner(dir);
    const calls: string[] = [];
    let fired = false;
    const store = new WipStore({
      cwd: dir, policy: null,
      git: {
        run: async (args, options) => {
          calls.push(args.find((arg) => /^[a-z][a-z-]+$/.test(arg)) ?? '');
          const out = await runner.run(args, options);
          if (racer !== undefined && !fired && args.includes('write-tree')) {
            fired = true;
            racer();
          }
          return out;
        },
      },
    });
    return { store, calls };
  };

  it('tells files, executables and symlinks that still hold what the read found without a git process', async () => {
    const dir = makeRepo({ 'README.md': 'x\n', 'deep/er/f.txt': 'f\n' });
    writeFiles(dir, { 'notes.txt': 'old notes\n', 'run.sh': '#!/bin/sh\n' });
    chmodSync(join(dir, 'run.sh'), 0o755);
    symlinkSync('README.md', join(dir, 'link'));
    const { store, calls } = counted(dir);
    const saved = (await store.save({ label: 'turn:1' })).snapshot.commit;
    writeFiles(dir, { 'notes.txt': 'mine\n', 'run.sh': '#!/bin/sh\necho\n', 'deep/er/f.txt': 'g\n' });
    rmSync(join(dir, 'link'));
    symlinkSync('deep', join(dir, 'link'));
    calls.length = 0;
    const restored = await store.restore({ snapshot: saved });
    assert.deepEqual([...restored.written].sort(), ['deep/er/f.txt', 'link', 'notes.txt', 'run.sh']);
    assert.ok(!calls.includes('diff'), `no git diff: ${calls.join(' ')}`);
    assert.equal(readFileSync(join(dir, 'notes.txt'), 'utf8'), 'old notes\n');
  });

  for (const [how, setup] of [
    ['no attribute may rewrite a file', () => undefined],
    ['a .gitattributes on the way names a filter', (dir: string) => writeFiles(dir, { 'deep/.gitattributes': '*.txt filter=upper\n' })],
    ['the index holds a .gitattributes the working tree lacks', (dir: string) => { writeFiles(dir, { 'deep/.gitattributes': '*.txt ident\n' }); git(dir, ['add', 'deep/.gitattributes']); rmSync(join(dir, 'deep/.gitattributes')); }],
    ['the repository\'s info/attributes may rewrite', (dir: string) => writeFileSync(join(dir, '.git', 'info', 'attributes'), '*.txt ident\n')],
    ['the file holds a carriage return', (dir: string) => writeFiles(dir, { 'deep/er/f.txt': 'g\r\n' })],
    // Its entries partly in a shared index the lookup of an index-only .gitattributes does not read.
    ['the index is split', (dir: string) => git(dir, ['update-index', '--split-index'])],
  ] as const) {
    it(`where ${how}: asks git diff only then, and refuses a file written after the read`, async () => {
      const dir = makeRepo({ 'README.md': 'x\n', 'deep/er/f.txt': 'f\n' });
      git(dir, ['config', 'filter.upper.clean', 'cat']);
      const saved = (await new WipStore({ cwd: dir, policy: null }).save({ label: 'turn:1' })).snapshot.commit;
      writeFiles(dir, { 'deep/er/f.txt': 'g\n' });
      setup(dir);
      const asked = how !== 'no attribute may rewrite a file';
      const quiet = counted(dir);
      await quiet.store.restore({ snapshot: saved });
      assert.equal(quiet.calls.includes('diff'), asked, `git diff compares: ${quiet.calls.join(' ')}`);
      assert.equal(readFileSync(join(dir, 'deep/er/f.txt'), 'utf8'), 'f\n');
      // Back to the edit, something staged (the restore then reads the index's tree after the
      // working tree), and an editor that writes the file just after that read.
      await quiet.store.restore({ snapshot: git(dir, ['rev-parse', 'refs/chant/wip/main']).trim() });
      git(dir, ['add', 'README.md']);
      writeFiles(dir, { 'README.md': 'staged\n' });
      git(dir, ['add', 'README.md']);
      const tip = git(dir, ['rev-parse', 'refs/chant/wip/main']).trim();
      const racing = counted(dir, () => writeFileSync(join(dir, 'deep/er/f.txt'), 'precious edit\n'));
      await assert.rejects(racing.store.restore({ snapshot: saved }), (error) => isWipError(error, 'wip-race') && error.message.includes('deep/er/f.txt'));
      assert.equal(readFileSync(join(dir, 'deep/er/f.txt'), 'utf8'), 'precious edit\n');
      assert.equal(git(dir, ['rev-parse', 'refs/chant/wip/main']).trim(), tip, 'no checkpoint taken');
    });
  }
});

describe('restore: the second look never reads through a folder swapped for a symlink', () => {
  it('refuses with wip-race before the checkpoint when a folder holding a file it would remove becomes a symlink to a copy', async () => {
    const dir = makeRepo({ 'README.md': 'x\n' });
    const outside = tempDir();
    writeFileSync(join(outside, 'gone.txt'), 'work\n');
    writeFiles(dir, { 'b.txt': 'snap b\n' });
    const saved = (await new WipStore({ cwd: dir, policy: null }).save({ label: 'turn:1' })).snapshot.commit;
    writeFiles(dir, { 'b.txt': 'mine b\n', 'dir/gone.txt': 'work\n', 'README.md': 'y\n' });
    git(dir, ['add', 'README.md']);
    const tip = git(dir, ['rev-parse', 'refs/chant/wip/main']).trim();
    const runner = new SimpleGitRunner(dir);
    let fired = false;
    const store = new WipStore({
      cwd: dir, policy: null,
      git: {
        run: async (args, options) => {
          const out = await runner.run(args, options);
          // Just after the read: the folder goes aside, a symlink to a folder outside with the same bytes in its place.
          if (!fired && args.includes('write-tree')) {
            fired = true;
            renameSync(join(dir, 'dir'), join(dir, 'dir.aside'));
            symlinkSync(outside, join(dir, 'dir'));
          }
          return out;
        },
      },
    });
    await assert.rejects(store.restore({ snapshot: saved }), (error) => isWipError(error, 'wip-race') && error.message.includes('dir/gone.txt') && error.message.includes('no checkpoint taken'));
    assert.ok(fired);
    assert.equal(git(dir, ['rev-parse', 'refs/chant/wip/main']).trim(), tip, 'no checkpoint taken');
    assert.equal(readFileSync(join(dir, 'b.txt'), 'utf8'), 'mine b\n');
    assert.deepEqual(readdirSync(outside), ['gone.txt']);
  });
});
