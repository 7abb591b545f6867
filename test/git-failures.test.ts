import { git, makeRepo, refsOf, runCli, tempDir, treeOf, writeFiles } from './helpers.js';
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { accessSync, chmodSync, constants, copyFileSync, existsSync, mkdirSync, readdirSync, readFileSync, rmSync, statfsSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, it } from 'node:test';
import { GitCommandError, SimpleGitRunner } from '../lib/git/runner.js';
import { unreadableInWalk } from '../lib/git/plumbing.js';
import { asWipError } from '../lib/errors.js';
import type { TestContext } from 'node:test';

// git itself failing: objects that cannot be written, a corrupt index, a full disk. Each is a
// git-failed document carrying git's own last line, exit 1, and nothing half done.

/** What a refusal must leave as it was: refs, index bytes, the working tree, chant's files in .git. */
function snapshotOf(dir: string): { refs: string; index: string; tree: Record<string, string>; chant: string[] } {
  const gitDir = join(dir, '.git');
  return {
    refs: refsOf(dir),
    index: existsSync(join(gitDir, 'index')) ? readFileSync(join(gitDir, 'index')).toString('base64') : '',
    tree: treeOf(dir),
    chant: readdirSync(gitDir).filter((name) => name.startsWith('chant-wip')),
  };
}

/** Runs a verb and checks it failed as git-failed with `lastLine` at the end of its message, changing nothing. */
async function failsWithGit(dir: string, args: readonly string[], lastLine: RegExp | string): Promise<string> {
  const before = snapshotOf(dir);
  const run = await runCli(dir, args);
  assert.equal(run.code, 1, run.stdout);
  assert.equal(run.doc.error.code, 'git-failed', run.stdout);
  if (typeof lastLine === 'string') assert.ok(run.doc.error.message.endsWith(lastLine), `${run.doc.error.message} ends with git's last line: ${lastLine}`);
  else assert.match(run.doc.error.message, lastLine);
  assert.equal(run.stderr, '');
  assert.doesNotMatch(run.stdout, /\n\s+at [^\n]+:\d+:\d+/, 'no stack trace');
  const after = snapshotOf(dir);
  assert.deepEqual(after, { ...before, chant: [] }, 'refs, index, working tree unchanged; no lock or temporary index left');
  return run.doc.error.message as string;
}

/** git's own last line of standard error for `git add --all` into a copy of the index, as chant runs it. */
function gitAddLastLine(dir: string): string {
  const index = join(tempDir('chant-probe-'), 'index');
  copyFileSync(join(dir, '.git', 'index'), index);
  const result = spawnSync('git', ['add', '--all'], { cwd: dir, env: { ...process.env, GIT_INDEX_FILE: index, LC_ALL: 'C' }, encoding: 'utf8' });
  assert.notEqual(result.status, 0, 'plain git fails the same way');
  return result.stderr.trim().split('\n').map((line) => line.trim()).filter((line) => line.length > 0).at(-1) ?? '';
}

function writable(path: string): boolean {
  const probe = join(path, `probe-${process.pid}`);
  try {
    writeFileSync(probe, '');
    rmSync(probe);
    return true;
  } catch {
    return false;
  }
}

/** A small tmpfs at a fresh folder, or null (with the reason told) when this machine refuses to mount one. */
function smallDisk(t: TestContext, size: string): { dir: string; unmount(): void } | null {
  const dir = tempDir('chant-disk-');
  const mounted = spawnSync('mount', ['-t', 'tmpfs', '-o', `size=${size}`, 'tmpfs', dir], { encoding: 'utf8' });
  if (mounted.status !== 0) {
    t.diagnostic(`skipped: cannot mount a ${size} tmpfs here (${(mounted.stderr || mounted.error?.message || 'no mount').trim()})`);
    return null;
  }
  return {
    dir,
    unmount: () => {
      const done = spawnSync('umount', [dir]);
      if (done.status !== 0) spawnSync('umount', ['-l', dir]);
    },
  };
}

/** Fills a file system to `leave` bytes free with one ignored file. */
function fill(dir: string, leave: number): void {
  const room = statfsSync(dir);
  const free = room.bavail * room.bsize;
  writeFileSync(join(dir, 'fill.ign'), Buffer.alloc(Math.max(0, free - leave)));
}

/** Removes git's own temporary object files, returning how many there were. */
function removeGitTemporaries(dir: string): number {
  const objects = join(dir, '.git', 'objects');
  let count = 0;
  for (const folder of readdirSync(objects)) {
    if (!/^[0-9a-f]{2}$/.test(folder)) continue;
    for (const name of readdirSync(join(objects, folder))) {
      if (!name.startsWith('tmp_obj_')) continue;
      rmSync(join(objects, folder, name));
      count += 1;
    }
  }
  return count;
}

function repoIn(parent: string): string {
  const dir = join(parent, 'repo');
  mkdirSync(dir);
  git(dir, ['init', '-q', '-b', 'main', '.']);
  writeFiles(dir, { 'README.md': 'x\n', '.gitignore': '*.ign\n' });
  git(dir, ['add', '-A']);
  git(dir, ['commit', '-q', '-m', 'initial']);
  return dir;
}

describe('git failing', () => {
  it('answers git-failed with git\'s last line when the objects folder cannot be written, and changes nothing', async (t) => {
    const dir = makeRepo();
    await runCli(dir, ['workspace', 'wip', 'save', '--label', 'before']);
    writeFiles(dir, { 'README.md': 'edited\n', 'new.txt': `new ${randomBytes(8).toString('hex')}\n` });
    const objects = join(dir, '.git', 'objects');
    // Every object packed, so that reading needs no loose object folder.
    git(dir, ['repack', '-adq']);
    git(dir, ['prune-packed']);
    const folders = readdirSync(objects).filter((name) => /^[0-9a-f]{2}$/.test(name));
    for (const name of ['.', ...folders]) chmodSync(join(objects, name), 0o555);
    let how = 'objects folder made read-only with chmod';
    if (writable(objects)) {
      // root ignores file modes: put a file where each loose object folder would be, so no object can be written.
      for (const name of ['.', ...folders]) chmodSync(join(objects, name), 0o755);
      for (let i = 0; i < 256; i += 1) {
        const name = i.toString(16).padStart(2, '0');
        rmSync(join(objects, name), { recursive: true, force: true });
        writeFileSync(join(objects, name), '');
      }
      how = 'running as root, where chmod does not stop writes: every loose object folder replaced by a file';
    }
    t.diagnostic(how);
    try {
      accessSync(join(objects, 'pack'), constants.R_OK);
      const lastLine = gitAddLastLine(dir);
      const message = await failsWithGit(dir, ['workspace', 'wip', 'save'], lastLine);
      // git's last line says only "adding files failed": the error: lines before it name the file and why.
      assert.match(message, /error: [^;]*(?:new\.txt|README\.md)[^;]*;/);
      assert.match(message, /error: [^;]*(?:Permission denied|Not a directory|insufficient permission)/);
      await failsWithGit(dir, ['workspace', 'wip', 'restore'], lastLine);
    } finally {
      chmodSync(objects, 0o755);
    }
  });

  it('saves past a corrupt index and leaves it as it was; a restore answers git-failed with git\'s last line', async () => {
    const dir = makeRepo();
    writeFiles(dir, { 'a.txt': 'a\n' });
    await runCli(dir, ['workspace', 'wip', 'save']);
    const corrupt = randomBytes(512);
    writeFileSync(join(dir, '.git', 'index'), corrupt);
    const lastLine = gitAddLastLine(dir);
    assert.match(lastLine, /index file corrupt/);
    // The save is there to keep the work, which a corrupt index does not touch: it stages into an empty index.
    writeFiles(dir, { 'a.txt': 'after\n' });
    const saved = await runCli(dir, ['workspace', 'wip', 'save']);
    assert.equal(saved.code, 0, saved.stdout);
    assert.equal(git(dir, ['cat-file', 'blob', `${saved.doc.snapshot.commit}:a.txt`]), 'after\n');
    assert.deepEqual(readFileSync(join(dir, '.git', 'index')), corrupt);
    // A restore cannot read what the index holds, so it changes nothing.
    await failsWithGit(dir, ['workspace', 'wip', 'restore'], lastLine);
  });

  it('refuses a restore while another git process holds the index, before anything is written', async () => {
    const dir = makeRepo();
    writeFiles(dir, { 'a.txt': 'saved\n' });
    await runCli(dir, ['workspace', 'wip', 'save']);
    writeFiles(dir, { 'a.txt': 'edited\n' });
    writeFileSync(join(dir, '.git', 'index.lock'), '');
    const before = snapshotOf(dir);
    const message = await failsWithGit(dir, ['workspace', 'wip', 'restore'], /index\.lock': File exists\. .*nothing was changed/);
    assert.match(message, /Unable to create/);
    assert.deepEqual(snapshotOf(dir).tree, before.tree);
    rmSync(join(dir, '.git', 'index.lock'));
    const run = await runCli(dir, ['workspace', 'wip', 'restore']);
    assert.equal(run.code, 0, run.stdout);
    assert.equal(readFileSync(join(dir, 'a.txt'), 'utf8'), 'saved\n');
  });

  it('answers git-failed on a full disk, for a save and for a restore, and changes nothing', async (t) => {
    const disk = smallDisk(t, '8m');
    if (disk === null) return;
    try {
      const dir = repoIn(disk.dir);
      // A snapshot holding a file of a megabyte, taken while there was room.
      writeFileSync(join(dir, 'big.bin'), randomBytes(1 << 20));
      const saved = await runCli(dir, ['workspace', 'wip', 'save']);
      assert.equal(saved.code, 0, saved.stdout);
      rmSync(join(dir, 'big.bin'));
      writeFileSync(join(dir, 'work.bin'), randomBytes(256 << 10));
      fill(dir, 128 << 10);
      // The save must write the 256 KiB file's blob: git runs out of room.
      const message = await failsWithGit(dir, ['workspace', 'wip', 'save'], /No space left on device$/);
      // git 2.39 leaves its half-written object behind (objects/??/tmp_obj_*): its own temporary file, not chant's.
      const gitLeft = removeGitTemporaries(dir);
      const lastLine = gitAddLastLine(dir);
      removeGitTemporaries(dir);
      assert.ok(message.endsWith(lastLine), `${message} ends with git's last line: ${lastLine}`);
      // The restore would write a megabyte: refused before the checkpoint, not halfway through the checkout.
      rmSync(join(dir, 'work.bin'));
      rmSync(join(dir, 'fill.ign'));
      fill(dir, 256 << 10);
      await failsWithGit(dir, ['workspace', 'wip', 'restore'], /No space left on device; nothing was changed$/);
      rmSync(join(dir, 'fill.ign'));
      const restored = await runCli(dir, ['workspace', 'wip', 'restore']);
      assert.equal(restored.code, 0, restored.stdout);
      assert.equal(readFileSync(join(dir, 'big.bin')).length, 1 << 20);
      t.diagnostic(`full disk: the save failed with git's "${lastLine}" (git left ${gitLeft} temporary object file behind), the restore was refused before its checkpoint`);
    } finally {
      disk.unmount();
    }
  });
});

describe('what a git failure names', () => {
  it('names the git command, past the -c options chant puts before it', async () => {
    const dir = makeRepo();
    const runner = new SimpleGitRunner(dir);
    const failed = await runner.run(['-c', 'core.quotepath=off', '-C', dir, 'rev-parse', '--verify', '--quiet', 'refs/heads/absent'], { cwd: dir }).then(() => null, (error: unknown) => error);
    assert.ok(failed instanceof GitCommandError);
    assert.match(failed.message, /^git rev-parse failed \(exit 1\)/);
    assert.match(asWipError(failed).message, /^git rev-parse failed: /);
    const controller = new AbortController();
    controller.abort();
    const stopped = await runner.run(['-c', 'core.quotepath=off', 'status'], { cwd: dir, signal: controller.signal }).then(() => null, (error: unknown) => error);
    assert.ok(stopped instanceof Error);
    assert.doesNotMatch(stopped.message, /git -c/);
  });
});

describe('what git says it could not look at', () => {
  it('takes folders and files inside the working tree only, from the lines as the runner hands them', () => {
    const said = [
      "warning: could not open directory 'priv/': Permission denied\n",
      'd/tracked: Permission denied\n',
      "warning: unable to access '/root/.config/git/ignore': Permission denied\n",
      // A clean filter's own talk passes through the same stream.
      '/root/.keys/master: Permission denied\n',
      '../outside: Permission denied\n',
      "warning: could not open directory '../up/': Permission denied\n",
    ];
    assert.deepEqual(unreadableInWalk(said), { folders: ['priv'], files: ['d/tracked'] });
  });

  it('takes a folder whose line git cut at 4095 bytes as the last folder the cut leaves whole, and no shorter line without its end', () => {
    const deep = Array.from({ length: 21 }, () => 'd'.repeat(200)).join('/');
    const line = `warning: could not open directory '${deep}/${'d'.repeat(200)}/${'d'.repeat(200)}/`.slice(0, 4095);
    const cut = line.slice("warning: could not open directory '".length);
    assert.deepEqual(unreadableInWalk([`${line}\n`]), { folders: [cut.slice(0, cut.lastIndexOf('/'))], files: [] });
    assert.deepEqual(unreadableInWalk(["warning: could not open directory 'a/b\n"]), { folders: [], files: [] });
  });
});
