// A save never fails because of one path: it takes everything it can and lists each path it
// could not take, with its reason, in the save document and in the snapshot commit itself, so
// the read shows what a snapshot does not hold. Both ways a save stages behave the same.
import { BIN, assertValidDocument, git, makeRepo, parseDocument, runCli, tempDir, writeFiles } from './helpers.js';
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { chmodSync, existsSync, mkdirSync, readdirSync, readFileSync, renameSync, rmSync, statSync, symlinkSync, truncateSync, utimesSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, it } from 'node:test';
import { Replicator, WipStore } from '../lib/index.js';
import { GitCommandError, GitProcessRunner } from '../lib/git/runner.js';
import type { GitRunner } from '../lib/git/runner.js';

const STAGINGS = ['index', 'status'] as const;

interface Run { code: number | null; signal: string | null; stdout: string; stderr: string; doc: any }

/** The built bin as its own process, killed after `timeoutMs` so that a hang fails the test instead of stalling it. */
function bin(cwd: string, args: readonly string[], env: NodeJS.ProcessEnv = {}, wrap: readonly string[] = [], timeoutMs = 30_000): Run {
  const command = [...wrap, process.execPath, BIN, ...args];
  const result = spawnSync(command[0] as string, command.slice(1), { cwd, env: { ...process.env, ...env }, encoding: 'utf8', timeout: timeoutMs });
  return { code: result.status, signal: result.signal, stdout: result.stdout, stderr: result.stderr, doc: parseDocument(result.stdout) };
}

/** path -> content of every file a snapshot's tree holds. */
function filesOf(dir: string, commit: string): Map<string, string> {
  const files = new Map<string, string>();
  for (const record of git(dir, ['ls-tree', '-r', '-z', commit]).split('\0')) {
    if (record === '') continue;
    const [meta, path] = record.split('\t') as [string, string];
    files.set(path, git(dir, ['cat-file', 'blob', meta.split(' ')[2] as string]));
  }
  return files;
}

function reasons(list: ReadonlyArray<{ path: string; reason: string }> | undefined): string[][] {
  return (list ?? []).map((entry) => [entry.path, entry.reason]);
}

/** The snapshot as the read reports it, by commit. */
function readSnapshot(dir: string, commit: string): any {
  const read = bin(dir, ['workspace', 'wip', '--json']);
  assert.equal(read.code, 0, read.stdout + read.stderr);
  for (const branch of read.doc.branches) {
    for (const snapshot of branch.snapshots) if (snapshot.commit === commit) return snapshot;
  }
  assert.fail(`the read does not list ${commit}`);
}

const canDropPrivileges = process.getuid?.() === 0 && spawnSync('setpriv', ['--reuid=65534', '--regid=65534', '--clear-groups', 'true']).status === 0;
const AS_NOBODY = ['setpriv', '--reuid=65534', '--regid=65534', '--clear-groups'];
// The unprivileged user runs the built bin: a clone under a private folder (mktemp -d makes one
// of mode 700) keeps it out of reach.
const binReachable = canDropPrivileges && spawnSync(AS_NOBODY[0] as string, [...AS_NOBODY.slice(1), 'test', '-r', BIN]).status === 0;

/**
 * Hands a repository to uid 65534, with a home of its own holding a git identity, and lets it
 * through every folder above the repository: what a save as that user needs. Returns the home.
 */
function givenToNobody(dir: string): string {
  const home = tempDir('chant-wip-nobody-home-');
  writeFileSync(join(home, '.gitconfig'), '[user]\n\tname = Nobody\n\temail = nobody@example.com\n[init]\n\tdefaultBranch = main\n');
  spawnSync('chown', ['-R', '65534:65534', dir, home]);
  for (let parent = dir; parent !== '/'; parent = join(parent, '..')) {
    if (statSync(parent).uid === 0 && (statSync(parent).mode & 0o001) === 0) chmodSync(parent, statSync(parent).mode | 0o001);
  }
  return home;
}

describe('a save takes what it can and lists what it could not', () => {
  for (const staging of STAGINGS) {
    it(`lists a file the user cannot read as unreadable and saves the rest (${staging} staging)`, (t) => {
      if (!canDropPrivileges) return t.skip('needs root and setpriv to run the save as an unprivileged user (root reads every file)');
      if (!binReachable) return t.skip(`uid 65534 cannot read the built bin ${BIN}: a folder above the clone is private to its owner`);
      const dir = makeRepo({ 'README.md': 'hello\n', 'tracked-secret.txt': 'committed secret\n' });
      writeFiles(dir, { 'work.txt': 'work\n', 'secret.txt': 'nobody may read this\n', 'tracked-secret.txt': 'edited secret\n', 'README.md': 'changed\n' });
      const home = givenToNobody(dir);
      chmodSync(join(dir, 'secret.txt'), 0o000);
      chmodSync(join(dir, 'tracked-secret.txt'), 0o000);
      const saved = bin(dir, ['workspace', 'wip', 'save', '--label', 'unreadable'], { HOME: home, XDG_CONFIG_HOME: join(home, '.config'), CHANT_WIP_STAGING: staging }, AS_NOBODY);
      assert.equal(saved.code, 0, saved.stdout + saved.stderr);
      assert.deepEqual(reasons(saved.doc.unsaved), [['secret.txt', 'unreadable'], ['tracked-secret.txt', 'unreadable']]);
      // Read back as root, who owns the repository again.
      spawnSync('chown', ['-R', '0:0', dir]);
      const files = filesOf(dir, saved.doc.snapshot.commit);
      assert.equal(files.get('work.txt'), 'work\n');
      assert.equal(files.get('README.md'), 'changed\n');
      assert.equal(files.has('secret.txt'), false, 'an unreadable untracked file is not in the snapshot');
      assert.equal(files.get('tracked-secret.txt'), 'committed secret\n', 'an unreadable tracked file holds what the index holds');
      assert.deepEqual(reasons(readSnapshot(dir, saved.doc.snapshot.commit).unsaved.paths), [['secret.txt', 'unreadable'], ['tracked-secret.txt', 'unreadable']], 'the read says what the snapshot does not hold');
    });

    it(`lists a folder the user cannot open as unreadable, never leaving its files out in silence (${staging} staging)`, (t) => {
      if (!canDropPrivileges) return t.skip('needs root and setpriv to run the save as an unprivileged user (root reads every file)');
      if (!binReachable) return t.skip(`uid 65534 cannot read the built bin ${BIN}: a folder above the clone is private to its owner`);
      const dir = makeRepo({ 'README.md': 'hello\n', 'd/tracked': 'committed\n' });
      writeFiles(dir, { 'work.txt': 'work\n', 'd/tracked': 'edited\n', 'd/untracked': 'new\n', 'priv/x': 'private\n' });
      const home = givenToNobody(dir);
      spawnSync('chown', ['0:0', join(dir, 'd'), join(dir, 'priv')]);
      chmodSync(join(dir, 'd'), 0o000);
      chmodSync(join(dir, 'priv'), 0o000);
      const saved = bin(dir, ['workspace', 'wip', 'save', '--label', 'closed folders'], { HOME: home, XDG_CONFIG_HOME: join(home, '.config'), CHANT_WIP_STAGING: staging }, AS_NOBODY);
      chmodSync(join(dir, 'd'), 0o755);
      chmodSync(join(dir, 'priv'), 0o755);
      assert.equal(saved.code, 0, saved.stdout + saved.stderr);
      const listed = reasons(saved.doc.unsaved);
      for (const folder of ['d', 'priv']) assert.ok(listed.some(([path, reason]) => path === folder && reason === 'unreadable'), JSON.stringify(listed));
      for (const [path, reason] of listed) assert.ok(reason === 'unreadable' && /^(d|priv)(\/|$)/.test(path), JSON.stringify(listed));
      spawnSync('chown', ['-R', '0:0', dir]);
      const files = filesOf(dir, saved.doc.snapshot.commit);
      assert.equal(files.get('work.txt'), 'work\n');
      assert.equal(files.get('d/tracked'), 'committed\n', 'a tracked file in it holds what the index holds');
      assert.equal(files.has('d/untracked'), false);
      assert.equal(files.has('priv/x'), false);
    });

    it(`lists a folder nested deeper than the system can open, never leaving its files out in silence (${staging} staging)`, () => {
      const dir = makeRepo({ 'README.md': 'hello\n' });
      writeFiles(dir, { 'work.txt': 'work\n' });
      // 22 folders of 200 letters: a path of about 4,400 bytes, past PATH_MAX, made a folder at a time.
      const name = 'd'.repeat(200);
      assert.equal(spawnSync('bash', ['-c', `cd "$0" && for i in $(seq 22); do mkdir ${name} && cd ${name} || exit 1; done && echo deep > file`, dir]).status, 0);
      try {
        const saved = bin(dir, ['workspace', 'wip', 'save'], { CHANT_WIP_STAGING: staging });
        assert.equal(saved.code, 0, saved.stdout + saved.stderr);
        const listed = reasons(saved.doc.unsaved);
        assert.equal(listed.length, 1, JSON.stringify(listed).slice(0, 300));
        assert.equal(listed[0]?.[1], 'unreadable');
        assert.match(listed[0]?.[0] as string, new RegExp(`^(${name}/)+${name}$`));
        assert.equal(filesOf(dir, saved.doc.snapshot.commit).get('work.txt'), 'work\n');
      } finally {
        spawnSync('rm', ['-rf', join(dir, name)]);
      }
    });

    // Staged from status: git add (index staging) records such a file, which the restore leaves as it is (see the test below).
    if (staging === 'status') it('lists a file longer from the root than the system takes as unreadable, not deleted while it read it, and the snapshot restores', async () => {
      const dir = join(tempDir(), 'r'.repeat(200));
      renameSync(makeRepo({ 'README.md': 'hello\n' }), dir);
      // 20 folders of 200 letters: about 4,030 bytes from the top, past PATH_MAX from the root.
      const name = 'd'.repeat(200);
      assert.equal(spawnSync('bash', ['-c', `cd "$0" && for i in $(seq 20); do mkdir ${name} && cd ${name} || exit 1; done && echo deep > file`, dir]).status, 0);
      try {
        writeFiles(dir, { 'work.txt': 'work\n' });
        const saved = bin(dir, ['workspace', 'wip', 'save'], { CHANT_WIP_STAGING: staging });
        assert.equal(saved.code, 0, saved.stdout + saved.stderr);
        assert.deepEqual(reasons(saved.doc.unsaved), [[`${Array.from({ length: 20 }, () => name).join('/')}/file`, 'unreadable']]);
        writeFiles(dir, { 'work.txt': 'changed\n' });
        const restored = bin(dir, ['workspace', 'wip', 'restore', saved.doc.snapshot.commit]);
        assert.equal(restored.code, 0, restored.stdout);
        assert.equal(readFileSync(join(dir, 'work.txt'), 'utf8'), 'work\n');
        const deep = spawnSync('bash', ['-c', `cd "$0" && for i in $(seq 20); do cd ${name} || exit 1; done && cat file`, dir], { encoding: 'utf8' });
        assert.equal(deep.stdout, 'deep\n', 'the file neither snapshot holds is left as it was');
      } finally {
        spawnSync('rm', ['-rf', join(dir, name)]);
      }
    });

    it(`restores every other path of a snapshot holding a staged file longer from the root than the system takes, and never removes that file, where the restore removed it and its undo refused the checkpoint, and names it left as it is (${staging} staging)`, async () => {
      const dir = join(tempDir(), 'r'.repeat(200));
      renameSync(makeRepo({ 'README.md': 'hello\n' }), dir);
      writeFiles(dir, { 'work.txt': 'first\n' });
      const first = bin(dir, ['workspace', 'wip', 'save'], { CHANT_WIP_STAGING: staging });
      assert.equal(first.code, 0, first.stdout + first.stderr);
      // 20 folders of 200 letters: under PATH_MAX from the top, so git add takes the file; past it from the root.
      const name = 'd'.repeat(200);
      const path = `${Array.from({ length: 20 }, () => name).join('/')}/file`;
      assert.equal(spawnSync('bash', ['-c', `cd "$0" && for i in $(seq 20); do mkdir ${name} && cd ${name} || exit 1; done && echo deep > file`, dir]).status, 0);
      const deep = () => spawnSync('bash', ['-c', `cd "$0" && for i in $(seq 20); do cd ${name} || exit 1; done && cat file`, dir], { encoding: 'utf8' }).stdout;
      try {
        git(dir, ['add', path]);
        writeFiles(dir, { 'work.txt': 'second\n' });
        const saved = bin(dir, ['workspace', 'wip', 'save'], { CHANT_WIP_STAGING: staging });
        assert.equal(saved.code, 0, saved.stdout + saved.stderr);
        // The plan names the file it would leave as it is, and so does the restore.
        const plan = bin(dir, ['workspace', 'wip', 'restore', first.doc.snapshot.commit, '--dry-run']);
        await assertValidDocument(plan.doc, { oursOnly: true });
        assert.deepEqual((plan.doc.leftAsIs as Array<{ path: string }> | undefined)?.map((entry) => entry.path), [path], 'the plan names it too');
        const back = bin(dir, ['workspace', 'wip', 'restore', first.doc.snapshot.commit]);
        assert.equal(back.code, 0, back.stdout);
        assert.equal(readFileSync(join(dir, 'work.txt'), 'utf8'), 'first\n');
        assert.equal(deep(), 'deep\n', 'the file no restore could write back is left as it was');
        // The document says so, where it read as a whole restore.
        await assertValidDocument(back.doc);
        assert.deepEqual((back.doc.leftAsIs as Array<{ path: string }> | undefined)?.map((entry) => entry.path), [path]);
        writeFiles(dir, { 'work.txt': 'edited\n' });
        const again = bin(dir, ['workspace', 'wip', 'restore', saved.doc.snapshot.commit]);
        assert.equal(again.code, 0, again.stdout);
        assert.equal(readFileSync(join(dir, 'work.txt'), 'utf8'), 'second\n');
        assert.equal(deep(), 'deep\n');
      } finally {
        spawnSync('rm', ['-rf', join(dir, name)]);
      }
    });

    it(`lists a FIFO at a tracked path as not-a-file, without hanging (${staging} staging)`, async () => {
      const dir = makeRepo({ 'README.md': 'hello\n', 'pipe': 'was a file\n', 'big/other.txt': 'x\n' });
      writeFiles(dir, { 'pipe': null, 'work.txt': 'work\n' });
      spawnSync('mkfifo', [join(dir, 'pipe')]);
      const saved = bin(dir, ['workspace', 'wip', 'save'], { CHANT_WIP_STAGING: staging }, [], 20_000);
      assert.equal(saved.signal, null, 'the save did not hang');
      assert.equal(saved.code, 0, saved.stdout + saved.stderr);
      await assertValidDocument(saved.doc);
      assert.deepEqual(reasons(saved.doc.unsaved), [['pipe', 'not-a-file']]);
      const files = filesOf(dir, saved.doc.snapshot.commit);
      assert.equal(files.get('work.txt'), 'work\n');
      assert.equal(files.get('pipe'), 'was a file\n', 'the tracked path holds what the index holds');
    });

    it(`lists a file deleted while git stages it as vanished and saves the rest (${staging} staging)`, () => {
      // A clean filter on a.zap deletes the files after it: git has listed them, and finds them gone.
      const dir = makeRepo({ 'README.md': 'hello\n', '.gitattributes': 'a.zap filter=zap\n', 'tracked.tmp': 'tracked\n' });
      git(dir, ['config', 'filter.zap.clean', 'rm -f victim.tmp tracked.tmp; cat']);
      writeFiles(dir, { 'a.zap': 'zapper\n', 'victim.tmp': 'short-lived\n', 'tracked.tmp': 'edited\n', 'z.txt': 'after\n' });
      const saved = bin(dir, ['workspace', 'wip', 'save'], { CHANT_WIP_STAGING: staging });
      assert.equal(saved.code, 0, saved.stdout + saved.stderr);
      for (const [, reason] of reasons(saved.doc.unsaved)) assert.equal(reason, 'vanished');
      const files = filesOf(dir, saved.doc.snapshot.commit);
      assert.equal(files.get('a.zap'), 'zapper\n');
      assert.equal(files.get('z.txt'), 'after\n');
      assert.equal(files.has('victim.tmp'), false);
    });

    it(`leaves a new untracked file over the size limit out, with its size, never failing the save (${staging} staging)`, async () => {
      const dir = makeRepo({ 'README.md': 'hello\n', 'tracked.bin': 'small\n' });
      writeFiles(dir, { 'small.txt': 'small\n', 'data/huge.bin': '' });
      truncateSync(join(dir, 'data/huge.bin'), 4096);
      writeFileSync(join(dir, 'tracked.bin'), Buffer.alloc(8192, 1));
      const saved = bin(dir, ['workspace', 'wip', 'save', '--max-file-size', '1k'], { CHANT_WIP_STAGING: staging });
      assert.equal(saved.code, 0, saved.stdout + saved.stderr);
      await assertValidDocument(saved.doc);
      assert.deepEqual(saved.doc.unsaved.map((entry: { path: string; reason: string; size?: number }) => [entry.path, entry.reason, entry.size]), [['data/huge.bin', 'too-large', 4096]]);
      const files = filesOf(dir, saved.doc.snapshot.commit);
      assert.equal(files.has('data/huge.bin'), false);
      assert.equal(files.get('small.txt'), 'small\n');
      assert.equal(files.get('tracked.bin')?.length, 8192, 'a tracked file is taken whatever its size');
      const snapshot = readSnapshot(dir, saved.doc.snapshot.commit);
      assert.deepEqual(snapshot.unsaved.paths.map((entry: { path: string; reason: string; size?: number }) => [entry.path, entry.reason, entry.size]), [['data/huge.bin', 'too-large', 4096]]);
      // Through the SDK, the same limit as a number of bytes; and a limit above the file takes it.
      const store = new WipStore({ cwd: dir, staging, maxFileSize: 10_000 });
      const taken = await store.save({ label: 'bigger limit' });
      assert.equal(taken.unsaved, undefined);
      assert.equal(filesOf(dir, taken.snapshot.commit).get('data/huge.bin')?.length, 4096);
    });

    it(`takes local edits under assume-unchanged and skip-worktree, says so, and keeps a sparse file that is absent (${staging} staging)`, async () => {
      const dir = makeRepo({ 'README.md': 'hello\n', 'config.local': 'committed\n', 'skipped.txt': 'committed\n', 'absent.txt': 'committed\n', 'same.txt': 'same\n' });
      git(dir, ['update-index', '--assume-unchanged', 'config.local', 'same.txt']);
      git(dir, ['update-index', '--skip-worktree', 'skipped.txt', 'absent.txt']);
      writeFiles(dir, { 'config.local': 'local edit\n', 'skipped.txt': 'local edit too\n', 'absent.txt': null });
      const saved = await new WipStore({ cwd: dir, staging }).save({});
      const files = filesOf(dir, saved.snapshot.commit);
      assert.equal(files.get('config.local'), 'local edit\n');
      assert.equal(files.get('skipped.txt'), 'local edit too\n');
      assert.equal(files.get('absent.txt'), 'committed\n', 'a skip-worktree file absent from disk is not a deletion');
      assert.deepEqual(reasons(saved.flagged), [['config.local', 'assume-unchanged'], ['skipped.txt', 'skip-worktree']]);
      assert.equal(saved.unsaved, undefined);
      const index = git(dir, ['ls-files', '-v']);
      assert.match(index, /^h config\.local$/m, 'the checkout\'s index keeps its bits');
      assert.match(index, /^S skipped\.txt$/m);
    });
    it(`takes the local edit of a file under both assume-unchanged and skip-worktree, a file's and a symlink's (${staging} staging)`, async () => {
      const dir = makeRepo({ 'README.md': 'hello\n', 'both.txt': 'committed\n', 'link.txt': 'committed\n' });
      writeFiles(dir, { 'both.txt': 'local edit\n', 'link.txt': null });
      symlinkSync('README.md', join(dir, 'link.txt'));
      // One flag a call: given both, update-index sets only the last it reads.
      git(dir, ['update-index', '--assume-unchanged', 'both.txt', 'link.txt']);
      git(dir, ['update-index', '--skip-worktree', 'both.txt', 'link.txt']);
      assert.match(git(dir, ['ls-files', '-v', 'both.txt']), /^s both\.txt$/m, 'both bits are set');
      const saved = await new WipStore({ cwd: dir, staging }).save({});
      const files = filesOf(dir, saved.snapshot.commit);
      assert.equal(files.get('both.txt'), 'local edit\n', 'the local edit, as under either flag alone');
      assert.equal(git(dir, ['ls-tree', saved.snapshot.commit, '--', 'link.txt']).split(' ')[0], '120000', 'the symlink that replaced the file');
      assert.deepEqual(reasons(saved.flagged), [['both.txt', 'skip-worktree'], ['link.txt', 'skip-worktree']]);
      assert.match(git(dir, ['ls-files', '-v', 'both.txt']), /^s both\.txt$/m, 'the checkout\'s index keeps both bits');
    });
    it(`takes the local edit of a flagged file rewritten at the same size in the second its entry was staged, which git no longer checks (${staging} staging)`, async () => {
      const dir = makeRepo({ 'README.md': 'hello\n', 'a.txt': 'a\n' });
      for (let attempt = 0; ; attempt += 1) {
        // At the start of a second: staged, flagged, then rewritten at the same size in that second.
        Atomics.wait(new Int32Array(new SharedArrayBuffer(4)), 0, 0, 1000 - (Date.now() % 1000) + 5);
        const second = Math.floor(Date.now() / 1000);
        writeFiles(dir, { 'a.txt': 'a\n' });
        git(dir, ['add', 'a.txt']);
        git(dir, ['update-index', '--assume-unchanged', 'a.txt']);
        writeFiles(dir, { 'a.txt': 'A\n' });
        if (Math.floor(statSync(join(dir, 'a.txt')).ctimeMs / 1000) === second) break;
        assert.ok(attempt < 5, 'the second turned over every time');
      }
      // The index written in a later second, as any git command that writes it leaves it: git
      // smudges no entry under assume-unchanged, so the entry is no longer racily clean, and its
      // stat data (to the second) is the file's.
      const later = Date.now() / 1000 + 2;
      utimesSync(join(dir, '.git', 'index'), later, later);
      // And the save in a later second: an index git writes in the second of the entry holds it as racily clean.
      Atomics.wait(new Int32Array(new SharedArrayBuffer(4)), 0, 0, 1000 - (Date.now() % 1000) + 5);
      const saved = await new WipStore({ cwd: dir, staging }).save({});
      assert.equal(filesOf(dir, saved.snapshot.commit).get('a.txt'), 'A\n', 'the file\'s bytes, never the index\'s');
      assert.deepEqual(reasons(saved.flagged), [['a.txt', 'assume-unchanged']]);
    });
    it(`saves a file whose line endings core.safecrlf=true refuses, holding what git add stores without the check (${staging} staging)`, async () => {
      const dir = makeRepo({ 'README.md': 'hello\n' });
      git(dir, ['config', 'core.autocrlf', 'true']);
      git(dir, ['config', 'core.safecrlf', 'true']);
      writeFiles(dir, { 'mixed.txt': 'one\r\ntwo\nthree\r\n', 'README.md': 'edited\n', 'work.txt': 'work\n' });
      const saved = await new WipStore({ cwd: dir, staging }).save({ label: 'safecrlf' });
      const files = filesOf(dir, saved.snapshot.commit);
      assert.equal(files.get('README.md'), 'edited\n');
      assert.equal(files.get('work.txt'), 'work\n');
      assert.equal(files.get('mixed.txt'), 'one\ntwo\nthree\n');
      assert.equal(saved.unsaved, undefined);
    });

    it(`lists files whose required clean filter fails as unreadable and saves the rest (${staging} staging)`, async () => {
      // git stops on the first file whose filter fails: more of them than git add is run again for vanished files.
      const many = Array.from({ length: 20 }, (_, i) => `many/s${String(i).padStart(2, '0')}.sec`);
      const dir = makeRepo({ 'README.md': 'hello\n', '.gitattributes': '*.sec filter=crypt\n', 'old.sec': 'committed\n', ...Object.fromEntries(many.map((path) => [path, 'committed\n'])) });
      git(dir, ['config', 'filter.crypt.clean', 'false']);
      git(dir, ['config', 'filter.crypt.required', 'true']);
      writeFiles(dir, { 'old.sec': 'edited secret\n', 'new.sec': 'new secret\n', 'README.md': 'edited\n', 'work.txt': 'work\n', ...Object.fromEntries(many.map((path) => [path, 'edited\n'])) });
      const saved = await new WipStore({ cwd: dir, staging }).save({ label: 'filter' });
      assert.deepEqual(reasons(saved.unsaved), [...many.map((path) => [path, 'unreadable']), ['new.sec', 'unreadable'], ['old.sec', 'unreadable']]);
      const files = filesOf(dir, saved.snapshot.commit);
      assert.equal(files.get('README.md'), 'edited\n');
      assert.equal(files.get('work.txt'), 'work\n');
      assert.equal(files.get('old.sec'), 'committed\n', 'the index\'s content, never the file\'s unfiltered bytes');
      assert.equal(files.has('new.sec'), false);
    });

    it(`saves a tree whose unchanged tracked file has a clean filter that fails when git looks at it again (${staging} staging)`, async () => {
      const dir = makeRepo({ 'README.md': 'hello\n', '.gitattributes': '*.sec filter=crypt\n', 'same.sec': 'committed\n', 'deep/same.sec': 'deep\n', 'edited.sec': 'before\n' });
      git(dir, ['config', 'filter.crypt.clean', 'false']);
      git(dir, ['config', 'filter.crypt.required', 'true']);
      // An index older than its files, as a clone or checkout written within one second leaves
      // it: git reads every file again to know it is unchanged, through its filter, whatever the
      // pathspec leaves out, and git status dies on it as git add does.
      utimesSync(join(dir, '.git', 'index'), 1_000_000_000, 1_000_000_000);
      writeFiles(dir, { 'work.txt': 'work\n', 'edited.sec': 'after, longer\n' });
      const saved = await new WipStore({ cwd: dir, staging }).save({ label: 'racy' });
      const files = filesOf(dir, saved.snapshot.commit);
      assert.equal(files.get('work.txt'), 'work\n');
      assert.equal(files.get('same.sec'), 'committed\n');
      assert.equal(files.get('deep/same.sec'), 'deep\n');
      assert.equal(files.get('edited.sec'), 'before\n');
      assert.deepEqual(reasons(saved.unsaved), [['deep/same.sec', 'unreadable'], ['edited.sec', 'unreadable'], ['same.sec', 'unreadable']]);
    });

    it(`lists files git cannot convert from their working-tree-encoding as unreadable and saves the rest (${staging} staging)`, async () => {
      const dir = makeRepo({ 'README.md': 'hello\n', '.gitattributes': '*.u16 working-tree-encoding=UTF-16\n' });
      writeFileSync(join(dir, 'old.u16'), Buffer.from('\ufeffcommitted\n', 'utf16le'));
      git(dir, ['add', 'old.u16']);
      git(dir, ['commit', '-qm', 'utf-16']);
      // An odd number of bytes is no UTF-16: git add dies on it.
      writeFileSync(join(dir, 'old.u16'), Buffer.from([0xff, 0xfe, 0x41]));
      writeFileSync(join(dir, 'new.u16'), Buffer.from([0xff, 0xfe, 0x42]));
      // UTF-16 without a byte order mark: git add dies too.
      writeFileSync(join(dir, 'no-bom.u16'), Buffer.from([0x43, 0x00]));
      writeFiles(dir, { 'work.txt': 'work\n' });
      const saved = await new WipStore({ cwd: dir, staging }).save({ label: 'encoding' });
      assert.deepEqual(reasons(saved.unsaved), [['new.u16', 'unreadable'], ['no-bom.u16', 'unreadable'], ['old.u16', 'unreadable']]);
      const files = filesOf(dir, saved.snapshot.commit);
      assert.equal(files.get('work.txt'), 'work\n');
      assert.equal(files.get('old.u16'), 'committed\n');
      assert.equal(files.has('new.u16'), false);
    });
  }

  it('lists paths git refuses to hold as invalid-path, and never records them, so the snapshot restores', async () => {
    for (const staging of STAGINGS) {
      const dir = makeRepo({ 'README.md': 'hello\n' });
      // Ordinary names on Linux that git refuses (core.protectNTFS): they are .git on other systems.
      writeFiles(dir, { '.GIT/x': 'x\n', 'sub/git~1/y': 'y\n', 'work.txt': 'work\n' });
      symlinkSync('README.md', join(dir, '.gitmodules'));
      const saved = await new WipStore({ cwd: dir, staging }).save({ label: 'invalid' });
      assert.deepEqual(reasons(saved.unsaved), [['.GIT/x', 'invalid-path'], ['.gitmodules', 'invalid-path'], ['sub/git~1/y', 'invalid-path']], staging);
      assert.deepEqual([...filesOf(dir, saved.snapshot.commit).keys()].sort(), ['README.md', 'work.txt'], staging);
      writeFiles(dir, { 'work.txt': 'more\n' });
      await new WipStore({ cwd: dir, staging }).restore({ snapshot: saved.snapshot.commit });
      assert.equal(readFileSync(join(dir, 'work.txt'), 'utf8'), 'work\n', staging);
      assert.equal(readFileSync(join(dir, '.GIT/x'), 'utf8'), 'x\n', staging);
    }
  });

  /** A checkout whose origin is a bare remote that checks what it receives (receive.fsckObjects), as GitHub does. */
  const strictRemote = (): { remote: string; dir: string } => {
    const remote = join(tempDir(), 'remote.git');
    git(tempDir(), ['init', '-q', '--bare', remote]);
    git(remote, ['config', 'receive.fsckObjects', 'true']);
    const dir = makeRepo({ 'README.md': 'hello\n' });
    git(dir, ['remote', 'add', 'origin', remote]);
    return { remote, dir };
  };

  /** Pushes the wip chain to the strict remote, which takes it. */
  const assertPushedTo = async (dir: string, remote: string, saved: { ref: string; snapshot: { commit: string } }, staging: string): Promise<void> => {
    const pushed = await new Replicator({ cwd: dir, policy: { box: 'app', remote: 'origin', refs: ['wip'], on: [], every: null } }).push();
    assert.deepEqual(pushed.replication.rejected, [], staging);
    assert.equal(git(remote, ['rev-parse', saved.ref]).trim(), saved.snapshot.commit, staging);
  };

  it('lists paths a remote that checks what it receives refuses as invalid-path, so the chain still goes to such a remote', async () => {
    for (const staging of STAGINGS) {
      const { remote, dir } = strictRemote();
      // git add on Linux takes each of these; fsck reads them as .git (HFS+ ignores U+200C, NTFS
      // what follows a colon) or as a .gitmodules or .gitattributes that is not a file.
      writeFiles(dir, { '.g\u200cit/x': 'x\n', '.git:y/z': 'z\n', '.gitmodules/a': 'a\n', 'vendor/.gitattributes/b': 'b\n', 'work.txt': 'work\n' });
      symlinkSync('README.md', join(dir, '.gitmodules\u200c'));
      const saved = await new WipStore({ cwd: dir, staging, policy: null }).save({ label: 'refused' });
      assert.deepEqual(reasons(saved.unsaved), [['.git:y/z', 'invalid-path'], ['.gitmodules/a', 'invalid-path'], ['.gitmodules\u200c', 'invalid-path'], ['.g\u200cit/x', 'invalid-path'], ['vendor/.gitattributes/b', 'invalid-path']], staging);
      assert.deepEqual([...filesOf(dir, saved.snapshot.commit).keys()].sort(), ['README.md', 'work.txt'], staging);
      git(dir, ['fsck', '--strict', '--no-dangling']);
      await assertPushedTo(dir, remote, saved, staging);
      writeFiles(dir, { 'work.txt': 'more\n' });
      await new WipStore({ cwd: dir, staging, policy: null }).restore({ snapshot: saved.snapshot.commit });
      assert.equal(readFileSync(join(dir, 'work.txt'), 'utf8'), 'work\n', staging);
      assert.equal(readFileSync(join(dir, '.g\u200cit/x'), 'utf8'), 'x\n', staging);
      assert.equal(readFileSync(join(dir, '.gitmodules/a'), 'utf8'), 'a\n', staging);
    }
  });

  it('keeps HEAD\'s entry, or none, for staged paths a remote that checks what it receives refuses, lists them as invalid-path, and the chain still goes to such a remote', async () => {
    for (const staging of STAGINGS) {
      const { remote, dir } = strictRemote();
      // git add on Linux takes each of these, staged by the user (or an agent) before the save.
      writeFiles(dir, { '.g\u200cit/x': 'x\n', '.gitmodules/a': 'a\n', 'work.txt': 'work\n' });
      git(dir, ['add', '--', '.g\u200cit/x', '.gitmodules/a', 'work.txt']);
      const index = git(dir, ['ls-files', '--stage', '-z']);
      const saved = await new WipStore({ cwd: dir, staging, policy: null }).save({ label: 'staged' });
      assert.deepEqual(reasons(saved.unsaved), [['.gitmodules/a', 'invalid-path'], ['.g\u200cit/x', 'invalid-path']], staging);
      assert.deepEqual([...filesOf(dir, saved.snapshot.commit).keys()].sort(), ['README.md', 'work.txt'], staging);
      assert.equal(git(dir, ['ls-files', '--stage', '-z']), index, `the checkout's index is left as it was (${staging})`);
      await assertPushedTo(dir, remote, saved, staging);
      // One HEAD holds already (committed before): HEAD's tree names it either way, so the
      // user's change to it is saved, staged or not, and not listed.
      git(dir, ['commit', '-q', '-m', 'refused', '--', '.gitmodules/a']);
      writeFiles(dir, { '.gitmodules/a': 'changed\n' });
      git(dir, ['add', '--', '.gitmodules/a']);
      const again = await new WipStore({ cwd: dir, staging, policy: null }).save({ label: 'held' });
      assert.deepEqual(reasons(again.unsaved), [['.g\u200cit/x', 'invalid-path']], staging);
      assert.equal(filesOf(dir, again.snapshot.commit).get('.gitmodules/a'), 'changed\n', staging);
      writeFiles(dir, { '.gitmodules/a': 'unstaged\n' });
      const third = await new WipStore({ cwd: dir, staging, policy: null }).save({ label: 'unstaged' });
      assert.deepEqual(reasons(third.unsaved), [['.g\u200cit/x', 'invalid-path']], staging);
      assert.equal(filesOf(dir, third.snapshot.commit).get('.gitmodules/a'), 'unstaged\n', staging);
      // One HEAD holds under a name no remote refuses, staged as a symlink named .gitmodules:
      // the snapshot keeps HEAD's file there.
      writeFiles(dir, { 'sub/.gitmodules': '' });
      git(dir, ['add', '--', 'sub/.gitmodules']);
      git(dir, ['commit', '-q', '-m', 'modules', '--', 'sub/.gitmodules']);
      rmSync(join(dir, 'sub/.gitmodules'));
      symlinkSync('../README.md', join(dir, 'sub/.gitmodules'));
      git(dir, ['add', '--', 'sub/.gitmodules']);
      const fourth = await new WipStore({ cwd: dir, staging, policy: null }).save({ label: 'symlink' });
      assert.deepEqual(reasons(fourth.unsaved), [['.g\u200cit/x', 'invalid-path'], ['sub/.gitmodules', 'invalid-path']], staging);
      assert.match(git(dir, ['ls-tree', fourth.snapshot.commit, '--', 'sub/.gitmodules']), /^100644 /, staging);
    }
  });

  it('lists a path holding a newline that git cannot take, and saves the rest, instead of failing whole', async () => {
    const NL = 'x\ny';
    for (const staging of STAGINGS) {
      const dir = makeRepo({ 'README.md': 'hello\n', [`tracked ${NL}`]: 'file\n', 'f.u': 'u\n', '.gitattributes': '*.u filter=bad\n' });
      // A filter that fails on one file only, and is required: git stops on that file.
      git(dir, ['config', 'filter.bad.clean', 'sh -c \'case "$1" in *l.u) exit 1;; *) cat;; esac\' - %f']);
      git(dir, ['config', 'filter.bad.required', 'true']);
      writeFiles(dir, { 'README.md': 'work\n', [`${NL}/f`]: 'z\n', [`.GIT/${NL}`]: 'z\n' });
      git(join(dir, NL), ['init', '-q']);
      rmSync(join(dir, `tracked ${NL}`));
      spawnSync('mkfifo', [join(dir, `tracked ${NL}`)]);
      const saved = await new WipStore({ cwd: dir, staging, policy: null }).save({ label: 'newlines' });
      assert.deepEqual(reasons(saved.unsaved), [[`.GIT/${NL}`, 'invalid-path'], [`tracked ${NL}`, 'not-a-file'], [NL, 'embedded-repository']], staging);
      assert.equal(filesOf(dir, saved.snapshot.commit).get('README.md'), 'work\n', staging);
      // A clean filter failing on a file whose name holds a newline: listed unreadable, the rest saved.
      writeFiles(dir, { [`n${NL}l.u`]: 'q\n', 'README.md': 'more\n' });
      const filtered = await new WipStore({ cwd: dir, staging, policy: null }).save({ label: 'filter' });
      assert.ok(reasons(filtered.unsaved).some(([path, reason]) => path === `n${NL}l.u` && reason === 'unreadable'), `${staging}: ${JSON.stringify(filtered.unsaved)}`);
      assert.equal(filesOf(dir, filtered.snapshot.commit).get('README.md'), 'more\n', staging);
    }
  });

  it('gives the same tree and the same list staging either way', async () => {
    const dir = makeRepo({ 'README.md': 'hello\n', 'pipe': 'file\n', 'au.txt': 'a\n' });
    git(dir, ['update-index', '--assume-unchanged', 'au.txt']);
    writeFiles(dir, { 'pipe': null, 'au.txt': 'edited\n', 'new.txt': 'new\n', 'big.bin': 'x'.repeat(3000) });
    spawnSync('mkfifo', [join(dir, 'pipe')]);
    const byIndex = await new WipStore({ cwd: dir, staging: 'index', maxFileSize: 1024 }).save({ label: 'index' });
    const byStatus = await new WipStore({ cwd: dir, staging: 'status', maxFileSize: 1024 }).save({ label: 'status' });
    assert.equal(byStatus.snapshot.tree, byIndex.snapshot.tree);
    assert.deepEqual(byStatus.unsaved, byIndex.unsaved);
    assert.deepEqual(byStatus.flagged, byIndex.flagged);
    assert.deepEqual(reasons(byIndex.unsaved), [['big.bin', 'too-large'], ['pipe', 'not-a-file']]);
  });

  it('keeps every save whole while another process creates and deletes files as fast as it can', async () => {
    const dir = makeRepo({ 'README.md': 'hello\n' });
    writeFiles(dir, Object.fromEntries(Array.from({ length: 600 }, (_, i) => [`keep/d${i % 12}/f${i}.txt`, `${i}\n`])));
    mkdirSync(join(dir, 'scratch'));
    const before = await new WipStore({ cwd: dir }).save({ label: 'before the churn' });
    const keep = git(dir, ['rev-parse', `${before.snapshot.commit}:keep`]).trim();
    const { spawn } = await import('node:child_process');
    // Every name new, and about ten alive at any moment, as a build's or a test run's temporary
    // files are: each walk of the tree meets files gone before git reads them, so a save that
    // ran git add again without each one it found gone would never run out of them.
    const churn = spawn(process.execPath, ['-e', `
      const fs = require('fs'); const path = require('path');
      const dir = ${JSON.stringify(join(dir, 'scratch'))};
      const name = (i) => path.join(dir, 'swap' + i + '.tmp');
      for (let i = 0; ; i += 1) {
        try { fs.writeFileSync(name(i), 'x'.repeat(i % 5000)); fs.rmSync(name(i - 10), { force: true }); } catch {}
        // A breath now and then: the machine's other cores run the saves.
        if (i % 20 === 0) Atomics.wait(new Int32Array(new SharedArrayBuffer(4)), 0, 0, 1);
      }`], { stdio: 'ignore' });
    try {
      for (const staging of [...STAGINGS, ...STAGINGS]) {
        const saved = await new WipStore({ cwd: dir, staging }).save({ label: `race ${Math.random()}` });
        for (const entry of saved.unsaved ?? []) assert.equal(entry.reason, 'vanished', `${entry.path}: ${entry.message}`);
        assert.equal(git(dir, ['rev-parse', `${saved.snapshot.commit}:keep`]).trim(), keep, `${staging}: every file of keep/`);
        assert.equal(git(dir, ['rev-parse', `${saved.snapshot.commit}:README.md`]).trim(), git(dir, ['rev-parse', 'HEAD:README.md']).trim());
      }
    } finally {
      churn.kill('SIGKILL');
    }
    const gitDir = join(dir, '.git');
    assert.deepEqual(readdirSync(gitDir).filter((name) => name.startsWith('chant-wip-')), [], 'no temporary index left behind');
    assert.equal(existsSync(join(gitDir, 'chant-wip.lock')), false);
  });

  it('stages from lists when git add stops on a vanished file, and gives the tree git add would give', async () => {
    for (const staging of STAGINGS) {
      const dir = makeRepo({ 'README.md': 'hello\n', 'gone.txt': 'tracked\n', 'keep.txt': 'v1\n' });
      spawnSync('git', ['init', '-q', join(dir, 'nested')]);
      writeFiles(dir, { 'nested/x.txt': 'x\n', 'gone.txt': null, 'keep.txt': 'v2\n', 'new/a.txt': 'a\n', 'new/b.txt': 'b\n', 'big.bin': 'x'.repeat(3000) });
      git(join(dir, 'nested'), ['add', 'x.txt']);
      git(join(dir, 'nested'), ['-c', 'user.name=t', '-c', 'user.email=t@t', 'commit', '-qm', 'x']);
      spawnSync('git', ['init', '-q', join(dir, 'empty-repo')]);
      const plain = await new WipStore({ cwd: dir, staging: 'index', maxFileSize: 1024 }).save({ label: 'plain' });
      // git add --all stops once as it does when a file vanishes under it; what follows is real.
      const inner = new GitProcessRunner(dir);
      const calls: string[] = [];
      let stopped = false;
      const runner: GitRunner = {
        run: (args, options) => {
          calls.push(args.slice(0, 2).join(' '));
          if (args[0] === 'add' && args[1] === '--all' && !stopped) {
            stopped = true;
            return Promise.reject(new GitCommandError([...args], 128, "error: unable to stat 'new/tmp.swp': No such file or directory\nfatal: unable to stat 'new/tmp.swp': No such file or directory\n"));
          }
          return inner.run(args, options);
        },
      };
      const listed = await new WipStore({ cwd: dir, staging, maxFileSize: 1024, git: runner }).save({ label: 'listed' });
      assert.equal(stopped, true, `${staging}: git add --all ran`);
      assert.ok(calls.includes('add --update') && calls.includes('update-index --add'), `${staging}: ${calls.join(', ')}`);
      assert.equal(listed.snapshot.tree, plain.snapshot.tree, staging);
      assert.deepEqual(reasons(listed.unsaved), [['big.bin', 'too-large'], ['empty-repo', 'embedded-repository'], ['nested', 'embedded-repository'], ['new/tmp.swp', 'vanished']], staging);
      assert.deepEqual(readdirSync(join(dir, '.git')).filter((name) => name.startsWith('chant-wip-')), [], 'no temporary index left behind');
    }
  });

  it('stages from lists every untracked file whose name is not UTF-8, or holds a newline, byte for byte', async () => {
    for (const staging of STAGINGS) {
      const dir = makeRepo({ 'README.md': 'hello\n' });
      const latin1 = Buffer.from('caf\xe9 notes.txt', 'latin1');
      writeFileSync(Buffer.concat([Buffer.from(`${dir}/`), latin1]), 'work in a latin-1 name\n');
      writeFiles(dir, { 'two\nlines.txt': 'newline\n', ':(exclude)x': 'magic\n', '-dash.txt': 'dash\n' });
      const plain = await new WipStore({ cwd: dir, staging: 'index' }).save({ label: 'plain' });
      const inner = new GitProcessRunner(dir);
      let stopped = false;
      const runner: GitRunner = {
        run: (args, options) => {
          if (args[0] === 'add' && args[1] === '--all' && !stopped) {
            stopped = true;
            return Promise.reject(new GitCommandError([...args], 128, "error: unable to stat 'tmp.swp': No such file or directory\nfatal: unable to stat 'tmp.swp': No such file or directory\n"));
          }
          return inner.run(args, options);
        },
      };
      const listed = await new WipStore({ cwd: dir, staging, git: runner }).save({ label: 'listed' });
      assert.equal(stopped, true, `${staging}: git add --all ran`);
      assert.equal(listed.snapshot.tree, plain.snapshot.tree, staging);
      assert.deepEqual(reasons(listed.unsaved), [['tmp.swp', 'vanished']], staging);
    }
  });

  it('keeps a submodule whose git directory is gone as its gitlink and saves the rest', async () => {
    for (const staging of STAGINGS) {
      const sub = makeRepo({ 'lib.txt': 'library\n' });
      const dir = makeRepo();
      git(dir, ['-c', 'protocol.file.allow=always', 'submodule', 'add', '-q', sub, 'vendor/lib']);
      git(dir, ['commit', '-qm', 'add the submodule']);
      const subHead = git(join(dir, 'vendor/lib'), ['rev-parse', 'HEAD']).trim();
      // vendor/lib/.git still names ../../.git/modules/vendor/lib, which is gone: git add dies on it.
      rmSync(join(dir, '.git', 'modules'), { recursive: true });
      writeFiles(dir, { 'outer.txt': 'outer work\n', 'README.md': 'edited\n' });
      const saved = await new WipStore({ cwd: dir, staging }).save({ label: 'orphaned submodule' });
      assert.equal(git(dir, ['show', `${saved.snapshot.commit}:outer.txt`]), 'outer work\n', staging);
      assert.equal(git(dir, ['show', `${saved.snapshot.commit}:README.md`]), 'edited\n', staging);
      assert.equal(git(dir, ['rev-parse', `${saved.snapshot.commit}:vendor/lib`]).trim(), subHead, staging);
      assert.deepEqual(reasons(saved.unsaved), [['vendor/lib', 'submodule']], staging);
    }
  });

  it('saves a tree with a repository inside it that has no commit yet, and names it', async () => {
    for (const staging of STAGINGS) {
      const dir = makeRepo({ 'README.md': 'hello\n' });
      spawnSync('git', ['init', '-q', join(dir, 'scaffold')]);
      writeFiles(dir, { 'scaffold/package.json': '{}\n', 'notes.txt': 'work\n' });
      const saved = await new WipStore({ cwd: dir, staging }).save({ label: 'scaffold' });
      const files = filesOf(dir, saved.snapshot.commit);
      assert.equal(files.get('notes.txt'), 'work\n', staging);
      assert.equal(files.has('scaffold/package.json'), false, staging);
      assert.deepEqual(reasons(saved.unsaved), [['scaffold', 'embedded-repository']], staging);
      assert.match(saved.unsaved?.[0]?.message ?? '', /no commit yet/);
      // The restore of it stands too: the checkpoint leaves the repository as it is.
      writeFiles(dir, { 'notes.txt': 'more\n' });
      await new WipStore({ cwd: dir, staging }).restore({ snapshot: saved.snapshot.commit });
      assert.equal(readFileSync(join(dir, 'notes.txt'), 'utf8'), 'work\n');
      assert.equal(readFileSync(join(dir, 'scaffold/package.json'), 'utf8'), '{}\n');
    }
    const dir = makeRepo({ 'README.md': 'hello\n' });
    spawnSync('git', ['init', '-q', join(dir, 'scaffold')]);
    const run = await runCli(dir, ['workspace', 'wip', 'save', '--json']);
    assert.equal(run.code, 0, run.stdout);
    await assertValidDocument(run.doc);
  });

  it('refuses a restore that would overwrite a file its checkpoint could not take, before anything is written', async () => {
    const dir = makeRepo({ 'README.md': 'hello\n' });
    writeFiles(dir, { 'data.bin': 'small\n', 'other.txt': 'saved\n' });
    const store = new WipStore({ cwd: dir, maxFileSize: 1000 });
    const saved = await store.save({ label: 'small data' });
    writeFiles(dir, { 'data.bin': 'z'.repeat(5000), 'other.txt': 'edited\n' });
    const tip = git(dir, ['rev-parse', 'refs/chant/wip/main']).trim();
    await assert.rejects(store.restore({ snapshot: saved.snapshot.commit }), (error: any) => error.code === 'wip-restore-blocked' && /data\.bin/.test(error.message));
    assert.equal(git(dir, ['rev-parse', 'refs/chant/wip/main']).trim(), tip, 'no checkpoint was written');
    assert.equal(readFileSync(join(dir, 'data.bin'), 'utf8'), 'z'.repeat(5000));
    assert.equal(readFileSync(join(dir, 'other.txt'), 'utf8'), 'edited\n');
    // With a limit the file is under, the checkpoint holds it and the restore goes through.
    const restored = await new WipStore({ cwd: dir }).restore({ snapshot: saved.snapshot.commit });
    assert.equal(restored.checkpoint.snapshot.unsaved, undefined);
    assert.equal(readFileSync(join(dir, 'data.bin'), 'utf8'), 'small\n');
  });

  it('refuses a --max-file-size that is not a size, as write-usage-invalid', async () => {
    const dir = makeRepo();
    for (const bad of ['', 'lots', '-1', '1.5.3', '12q']) {
      const run = await runCli(dir, ['workspace', 'wip', 'save', `--max-file-size=${bad}`]);
      assert.equal(run.code, 1, `${bad}: ${run.stdout}`);
      assert.equal(run.doc.error.code, 'write-usage-invalid', bad);
    }
  });

  it('records what a snapshot left out in its commit, so a clone that fetched it reads it too', async () => {
    const dir = makeRepo({ 'README.md': 'hello\n' });
    writeFiles(dir, { 'big.bin': 'y'.repeat(5000), 'ok.txt': 'ok\n' });
    const saved = await new WipStore({ cwd: dir, maxFileSize: 1000 }).save({ label: 'left out' });
    const message = git(dir, ['log', '-1', '--format=%B', saved.snapshot.commit]);
    assert.match(message, /^Chant-Wip-Unsaved: \{"count":1,"paths":\[\{"path":"big\.bin","reason":"too-large","size":5000\}\]\}$/m);
    assert.deepEqual(saved.snapshot.unsaved, { count: 1, paths: [{ path: 'big.bin', reason: 'too-large', size: 5000 }] });
    const clone = tempDir();
    git(clone, ['clone', '-q', dir, '.']);
    git(clone, ['fetch', '-q', 'origin', 'refs/chant/wip/*:refs/chant/wip/*']);
    const read = await new WipStore({ cwd: clone }).list();
    const snapshot = read.branches[0]?.snapshots[0];
    assert.deepEqual(snapshot?.unsaved, { count: 1, paths: [{ path: 'big.bin', reason: 'too-large', size: 5000 }] });
    // Read again, from the memo this time.
    const again = await new WipStore({ cwd: clone }).list();
    assert.deepEqual(again.branches[0]?.snapshots[0]?.unsaved, { count: 1, paths: [{ path: 'big.bin', reason: 'too-large', size: 5000 }] });
    // The same tree with the same paths left out is the same snapshot; taking the file is a new one.
    assert.equal((await new WipStore({ cwd: dir, maxFileSize: 1000 }).save({ label: 'left out' })).created, false);
    const taken = await new WipStore({ cwd: dir }).save({ label: 'left out' });
    assert.equal(taken.created, true);
    assert.equal(taken.snapshot.unsaved, undefined);
  });
});
