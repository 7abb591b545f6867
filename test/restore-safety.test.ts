// A restore finishes or changes nothing, never destroys what its checkpoint cannot give back,
// and its undo is exact (issue 14). Each case was written to fail before the change it proves.
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { chmodSync, existsSync, lstatSync, mkdirSync, mkdtempSync, readFileSync, readdirSync, rmSync, statSync, symlinkSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, it } from 'node:test';
import { assertRefusal, assertValidDocument, git, makeRepo, refsOf, ROOT, runCli, startBin, stateOf, tempDir, treeOf, writeFiles } from './helpers.js';
import { WipStore } from '../lib/index.js';
import { RACY_MARGIN_MS } from '../lib/managers/hash-cache.js';

/** The index as `git ls-files --stage` lists it: modes, ids and stages, not stat data. */
function stagedEntries(dir: string): string {
  return git(dir, ['ls-files', '--stage', '-z']);
}

/** The working tree as path bytes (latin1) to content, `.git` left out: for names that are not UTF-8. */
function byteTreeOf(dir: Buffer, prefix = ''): Record<string, string> {
  const out: Record<string, string> = {};
  for (const name of readdirSync(dir, { encoding: 'buffer' })) {
    const key = `${prefix}${name.toString('latin1')}`;
    if (key === '.git') continue;
    const full = Buffer.concat([dir, Buffer.from('/'), name]);
    const stats = lstatSync(full);
    if (stats.isDirectory()) Object.assign(out, byteTreeOf(full, `${key}/`));
    else out[key] = readFileSync(full, 'latin1');
  }
  return out;
}

/** A byte path under `dir`, for names that are not UTF-8. */
function bytePath(dir: string, ...names: Buffer[]): Buffer {
  return Buffer.concat([Buffer.from(dir), ...names.flatMap((name) => [Buffer.from('/'), name])]);
}

describe('restore: what it brings back by default', () => {
  it('brings back the newest save, not the checkpoint a restore took, when no snapshot is named', async () => {
    const dir = makeRepo();
    const store = new WipStore({ cwd: dir });
    writeFiles(dir, { 'work.txt': 'the work\n' });
    const saved = await store.save({ label: 'turn:1' });
    writeFiles(dir, { 'work.txt': null });
    const first = await store.restore({});
    assert.equal(first.snapshot.commit, saved.snapshot.commit);
    assert.equal(first.checkpoint.snapshot.kind, 'pre-restore');
    writeFiles(dir, { 'work.txt': 'edited after\n' });
    const second = await store.restore({});
    assert.equal(second.snapshot.commit, saved.snapshot.commit, 'the default is the newest save, never a checkpoint');
    assert.equal(readFileSync(join(dir, 'work.txt'), 'utf8'), 'the work\n');
    const undo = await store.restore({ snapshot: second.checkpoint.snapshot.commit });
    assert.equal(undo.snapshot.kind, 'pre-restore', 'a checkpoint is restored by naming it');
    assert.equal(readFileSync(join(dir, 'work.txt'), 'utf8'), 'edited after\n');
  });

  it('answers wip-none when the branch holds checkpoints only', async () => {
    const dir = makeRepo();
    const store = new WipStore({ cwd: dir });
    writeFiles(dir, { 'a.txt': 'a\n' });
    const saved = await store.save({});
    const restored = await store.restore({ snapshot: saved.snapshot.commit });
    // A chain of one checkpoint on its own: the ref moved to it by hand.
    git(dir, ['update-ref', 'refs/chant/wip/main', restored.checkpoint.snapshot.commit]);
    const head = git(dir, ['rev-parse', 'HEAD']).trim();
    const lone = git(dir, ['commit-tree', '-p', head, '-m', `chant wip: main\n\nChant-Wip-Branch: main\nChant-Wip-Head: ${head}\nChant-Wip-Kind: pre-restore\n`, `${head}^{tree}`]).trim();
    git(dir, ['update-ref', 'refs/chant/wip/main', lone]);
    await assertRefusal(() => store.restore({}), 'wip-none', /no snapshot of kind save/);
  });
});

describe('restore: names git cannot resolve', () => {
  it('answers wip-snapshot-unknown for @{u} without an upstream, and for other names git refuses', async () => {
    const dir = makeRepo();
    const store = new WipStore({ cwd: dir });
    writeFiles(dir, { 'a.txt': 'a\n' });
    await store.save({});
    const before = stateOf(dir);
    for (const name of ['@{u}', '@{upstream}', 'main@{99}', '@{-1}', ':/no such message', 'HEAD@{yesterday-ish}']) {
      await assertRefusal(() => store.restore({ snapshot: name }), 'wip-snapshot-unknown');
    }
    const run = await runCli(dir, ['workspace', 'wip', 'restore', '@{u}']);
    assert.equal(run.code, 1);
    assert.equal(run.doc.error.code, 'wip-snapshot-unknown');
    await assertValidDocument(run.doc);
    assert.deepEqual(stateOf(dir), before);
  });
});

describe('restore: the caller\'s folder', () => {
  it('refuses from a subfolder the snapshot lacks, as git switch does, and changes nothing', async () => {
    const dir = makeRepo();
    const store = new WipStore({ cwd: dir });
    const saved = await store.save({});
    writeFiles(dir, { 'sub/deeper/file.txt': 'untracked work\n' });
    const before = stateOf(dir);
    const cwd = join(dir, 'sub', 'deeper');
    const run = await runCli(cwd, ['workspace', 'wip', 'restore', saved.snapshot.commit]);
    assert.equal(run.code, 1, run.stdout);
    assert.equal(run.doc.error.code, 'wip-restore-blocked');
    assert.match(run.doc.error.message, /current (working )?(directory|folder)/);
    assert.deepEqual(run.doc.error.paths, ['sub/deeper']);
    await assertValidDocument(run.doc, { oursOnly: true });
    assert.deepEqual(stateOf(dir), before);
    assert.ok(existsSync(cwd));
    // From the top, the same restore goes ahead.
    await new WipStore({ cwd: dir }).restore({ snapshot: saved.snapshot.commit });
    assert.equal(existsSync(join(dir, 'sub')), false);
  });
});

describe('restore: what no checkpoint can give back', () => {
  it('refuses to replace an embedded repository with a file, naming it, and leaves it whole', async () => {
    const dir = makeRepo();
    const store = new WipStore({ cwd: dir });
    writeFiles(dir, { 'emb': 'a file once\n' });
    const saved = await store.save({});
    writeFiles(dir, { 'emb': null });
    const inner = join(dir, 'emb');
    mkdirSync(inner);
    git(inner, ['init', '-q', '-b', 'main']);
    writeFiles(inner, { 'precious.txt': 'commits of its own\n' });
    git(inner, ['add', '-A']);
    git(inner, ['commit', '-q', '-m', 'inner']);
    writeFiles(inner, { 'uncommitted.txt': 'and work in progress\n' });
    const before = stateOf(dir);
    const innerBefore = treeOf(inner);
    const message = await assertRefusal(() => store.restore({ snapshot: saved.snapshot.commit }), 'wip-restore-blocked', /emb/);
    assert.match(message, /repository/);
    assert.deepEqual(stateOf(dir), before);
    assert.deepEqual(treeOf(inner), innerBefore);
    assert.ok(existsSync(join(inner, '.git', 'HEAD')));
  });

  it('says why each file in the way is in no snapshot: a file of an embedded repository, a name git will not take, an ignored file', async () => {
    const dir = makeRepo();
    const store = new WipStore({ cwd: dir, policy: null });
    writeFiles(dir, { 'emb/x.txt': 'a file of the snapshot\n', 'odd': 'a file once\n', 'build.log': 'in the snapshot\n' });
    const saved = (await store.save({})).snapshot.commit;
    writeFiles(dir, { 'emb/x.txt': null, 'odd': null, '.gitignore': '*.log\n', 'build.log': 'ignored now\n' });
    git(join(dir, 'emb'), ['init', '-q', '-b', 'main']);
    writeFiles(dir, { 'emb/x.txt': 'the embedded repository\'s own\n', 'odd/.GIT': 'a name git add refuses\n' });
    const plan = await store.plan({ snapshot: saved });
    const reasons = Object.fromEntries(plan.refused.map((entry) => [entry.path, entry.reason]));
    assert.match(reasons['emb/x.txt'] ?? '', /^a file of a submodule's working tree or an embedded repository/);
    assert.match(reasons['odd/.GIT'] ?? '', /^a name git will not take \(it holds a \.git component\)/);
    assert.match(reasons['build.log'] ?? '', /^an ignored file, or one written since the working tree was read/);
  });

  it('reads the working tree\'s folders that differ from the target from disk, even after a plan read them, and refuses when one went bad', async () => {
    const dir = makeRepo({ 'src/x.ts': 'x0\n', 'src/y.ts': 'y0\n' });
    const store = new WipStore({ cwd: dir, policy: null });
    writeFiles(dir, { 'src/x.ts': 'x1\n' });
    const turn = (await store.save({ label: 'turn:1' })).snapshot.commit;
    writeFiles(dir, { 'src/x.ts': 'x2 precious\n' });
    // The plan reads both sides' trees; the same process then restores.
    assert.deepEqual((await store.plan({ snapshot: turn })).write, ['src/x.ts']);
    // The folder tree the checkpoint would hold (a save's own write, which the next save's memo names) goes bad on disk.
    const probe = (await store.save({ label: 'probe' })).snapshot.tree;
    const folder = git(dir, ['rev-parse', `${probe}:src`]).trim();
    const file = join(dir, '.git', 'objects', folder.slice(0, 2), folder.slice(2));
    rmSync(file, { force: true });
    writeFileSync(file, 'garbage');
    const before = stateOf(dir);
    await assertRefusal(() => store.restore({ snapshot: turn }), 'git-failed');
    assert.deepEqual(stateOf(dir), before);
    assert.equal(readFileSync(join(dir, 'src/x.ts'), 'utf8'), 'x2 precious\n');
  });

  it('reads the target\'s folders from disk, even after a plan read them, and refuses with nothing written when one went bad', async () => {
    const dir = makeRepo({ 'src/x.ts': 'x0\n', 'src/y.ts': 'y0\n' });
    const store = new WipStore({ cwd: dir, policy: null });
    writeFiles(dir, { 'src/x.ts': 'x1 target\n', 'src/extra.txt': 'extra\n' });
    const turn = (await store.save({ label: 'turn:1' })).snapshot;
    writeFiles(dir, { 'src/x.ts': 'x2 precious\n', 'src/extra.txt': null });
    assert.deepEqual((await store.plan({ snapshot: turn.commit })).write, ['src/extra.txt', 'src/x.ts']);
    const folder = git(dir, ['rev-parse', `${turn.tree}:src`]).trim();
    const file = join(dir, '.git', 'objects', folder.slice(0, 2), folder.slice(2));
    rmSync(file, { force: true });
    writeFileSync(file, 'garbage');
    const before = stateOf(dir);
    await assertRefusal(() => store.restore({ snapshot: turn.commit }), 'git-failed');
    assert.deepEqual(stateOf(dir), before);
  });

  it('puts the working tree back when the index reset, its last step, cannot read the index tree a checkpoint recorded', async () => {
    const dir = makeRepo({ 'src/x.ts': 'x0\n', 'idx/a.txt': 'a0\n' });
    const store = new WipStore({ cwd: dir, policy: null });
    writeFiles(dir, { 'src/x.ts': 'x1\n' });
    const first = (await store.save({ label: 'turn:1' })).snapshot;
    // Staged and then edited: the restore's checkpoint records an index whose idx folder is a tree of its own.
    writeFiles(dir, { 'idx/a.txt': 'staged\n' });
    git(dir, ['add', 'idx/a.txt']);
    writeFiles(dir, { 'idx/a.txt': 'edited after staging\n', 'src/x.ts': 'x2\n' });
    const checkpoint = (await store.restore({ snapshot: first.commit })).checkpoint.snapshot;
    const recorded = /^Chant-Wip-Index: ([0-9a-f]{40})$/m.exec(git(dir, ['cat-file', 'commit', checkpoint.commit]))?.[1] as string;
    assert.match(recorded ?? '', /^[0-9a-f]{40}$/, 'the checkpoint records the index');
    writeFiles(dir, { 'src/x.ts': 'x3 precious\n' });
    // A folder tree only the recorded index holds goes bad on disk: nothing the restore's diff reads.
    const folder = git(dir, ['rev-parse', `${recorded}:idx`]).trim();
    assert.notEqual(folder, git(dir, ['rev-parse', `${checkpoint.tree}:idx`]).trim());
    const file = join(dir, '.git', 'objects', folder.slice(0, 2), folder.slice(2));
    rmSync(file, { force: true });
    writeFileSync(file, 'garbage');
    const { tree, status, head } = stateOf(dir);
    const staged = stagedEntries(dir);
    const message = await assertRefusal(() => store.restore({ snapshot: checkpoint.commit }), 'git-failed', /put back as it was/);
    assert.match(message, /resetting the index/);
    const after = stateOf(dir);
    // The index's entries as they were (git status refreshes stat data of its own).
    assert.deepEqual({ tree: after.tree, staged: stagedEntries(dir), status: after.status, head: after.head }, { tree, staged, status, head });
    assert.equal(readFileSync(join(dir, 'src/x.ts'), 'utf8'), 'x3 precious\n');
  });

  it('waits for another git process to let the index go before the reset, and past a while says the files were written, leaving them and what was written since', async () => {
    for (const [held, cancel] of [[60, false], [5_000, false], [5_000, true]] as const) {
      const dir = makeRepo({ 'src/x.ts': 'x0\n', 'idx/a.txt': 'a0\n' });
      const store = new WipStore({ cwd: dir, policy: null });
      writeFiles(dir, { 'src/x.ts': 'x1\n' });
      const first = (await store.save({ label: 'turn:1' })).snapshot;
      // Staged: the restore ends by resetting the index to HEAD.
      writeFiles(dir, { 'idx/a.txt': 'staged\n', 'src/x.ts': 'x2\n' });
      git(dir, ['add', 'idx/a.txt']);
      const lock = join(dir, '.git', 'index.lock');
      let timer: NodeJS.Timeout | undefined;
      const controller = new AbortController();
      const started = Date.now();
      const restoring = store.restore({
        snapshot: first.commit,
        signal: controller.signal,
        onProgress: (progress) => {
          if (progress.phase !== 'index' || progress.done !== 0) return;
          // An editor's git status takes the index, and the user writes a file, as the restore comes to its last step.
          writeFileSync(lock, '');
          writeFiles(dir, { 'src/x.ts': 'edited during the restore\n' });
          timer = setTimeout(() => rmSync(lock, { force: true }), held);
          if (cancel) setTimeout(() => controller.abort(), 30);
        },
      });
      try {
        if (held < 1_000) {
          await restoring;
          assert.equal(git(dir, ['diff', '--cached', '--name-only']), '', 'the index was reset once the lock went');
        } else if (cancel) {
          await assertRefusal(() => restoring, 'wip-cancelled', /files were written and are left.*git read-tree --reset/s);
          assert.ok(Date.now() - started < 4_000, 'the cancel ended the waits');
          assert.match(git(dir, ['diff', '--cached', '--name-only']), /idx\/a\.txt/, 'the index as it was');
        } else {
          await assertRefusal(() => restoring, 'git-failed', /another git process held the index.*git read-tree --reset/s);
          assert.match(git(dir, ['diff', '--cached', '--name-only']), /idx\/a\.txt/, 'the index as it was');
        }
        // What the user wrote over a restored file after the move is never put back over.
        assert.equal(readFileSync(join(dir, 'src/x.ts'), 'utf8'), 'edited during the restore\n');
      } finally {
        clearTimeout(timer);
        rmSync(lock, { force: true });
      }
    }
  });

  it('refuses to delete an embedded repository the snapshot lacks', async () => {
    const dir = makeRepo();
    const store = new WipStore({ cwd: dir });
    const saved = await store.save({});
    const inner = join(dir, 'nested', 'emb');
    mkdirSync(inner, { recursive: true });
    git(inner, ['init', '-q', '-b', 'main']);
    writeFiles(inner, { 'precious.txt': 'x\n' });
    git(inner, ['add', '-A']);
    git(inner, ['commit', '-q', '-m', 'inner']);
    const before = stateOf(dir);
    await assertRefusal(() => store.restore({ snapshot: saved.snapshot.commit }), 'wip-restore-blocked', /nested\/emb/);
    assert.deepEqual(stateOf(dir), before);
  });

  for (const recurse of [false, true]) {
    it(`never touches a submodule's working tree${recurse ? ', with submodule.recurse=true in the user\'s config' : ''}`, async () => {
      const upstream = makeRepo({ 'lib.txt': 'v1\n' });
      const v1 = git(upstream, ['rev-parse', 'HEAD']).trim();
      writeFiles(upstream, { 'lib.txt': 'v2\n' });
      git(upstream, ['commit', '-qam', 'v2']);
      const dir = makeRepo();
      git(dir, ['-c', 'protocol.file.allow=always', 'submodule', 'add', '-q', upstream, 'mod']);
      git(dir, ['commit', '-qm', 'add mod']);
      if (recurse) git(dir, ['config', 'submodule.recurse', 'true']);
      const mod = join(dir, 'mod');
      // The snapshot has the submodule at v1; the submodule is now at v2 with an edit.
      git(mod, ['checkout', '-q', v1]);
      const store = new WipStore({ cwd: dir });
      const saved = await store.save({});
      git(mod, ['checkout', '-q', 'main']);
      writeFiles(mod, { 'lib.txt': 'uncommitted edit in the submodule\n' });
      const modHead = git(mod, ['rev-parse', 'HEAD']).trim();
      const result = await store.restore({ snapshot: saved.snapshot.commit });
      assert.deepEqual(result.paths, ['mod']);
      assert.equal(git(mod, ['rev-parse', 'HEAD']).trim(), modHead, 'the submodule\'s HEAD did not move');
      assert.equal(readFileSync(join(mod, 'lib.txt'), 'utf8'), 'uncommitted edit in the submodule\n');
      assert.equal(git(mod, ['symbolic-ref', 'HEAD']).trim(), 'refs/heads/main');
    });

    it(`refuses to replace a submodule's working tree with a file${recurse ? ' (submodule.recurse=true)' : ''}`, async () => {
      const upstream = makeRepo({ 'lib.txt': 'v1\n' });
      const dir = makeRepo();
      if (recurse) git(dir, ['config', 'submodule.recurse', 'true']);
      const store = new WipStore({ cwd: dir });
      writeFiles(dir, { 'mod': 'a file before the submodule\n' });
      const saved = await store.save({});
      writeFiles(dir, { 'mod': null });
      git(dir, ['-c', 'protocol.file.allow=always', 'submodule', 'add', '-q', upstream, 'mod']);
      writeFiles(join(dir, 'mod'), { 'lib.txt': 'uncommitted\n' });
      const before = stateOf(dir);
      const modTree = treeOf(join(dir, 'mod'));
      await assertRefusal(() => store.restore({ snapshot: saved.snapshot.commit }), 'wip-restore-blocked', /mod/);
      assert.deepEqual(stateOf(dir), before);
      assert.deepEqual(treeOf(join(dir, 'mod')), modTree);
    });
  }

  it('refuses to overwrite an ignored file whose name is not UTF-8, naming it in a documented encoding', async () => {
    const dir = makeRepo();
    const store = new WipStore({ cwd: dir });
    const name = Buffer.from('caf\xe9.log', 'latin1');
    writeFileSync(bytePath(dir, name), 'in the snapshot\n');
    const saved = await store.save({});
    writeFiles(dir, { '.gitignore': '*.log\n' });
    writeFileSync(bytePath(dir, name), 'precious and ignored\n');
    const before = { tree: byteTreeOf(Buffer.from(dir)), index: stagedEntries(dir), refs: git(dir, ['for-each-ref']) };
    const error = await store.restore({ snapshot: saved.snapshot.commit }).then(() => null, (caught: unknown) => caught as { code: string; paths: string[]; message: string });
    assert.ok(error !== null, 'the restore was refused');
    assert.equal(error.code, 'wip-restore-blocked');
    assert.deepEqual(error.paths, ['"caf\\351.log"']);
    assert.equal(readFileSync(bytePath(dir, name), 'utf8'), 'precious and ignored\n');
    assert.deepEqual({ tree: byteTreeOf(Buffer.from(dir)), index: stagedEntries(dir), refs: git(dir, ['for-each-ref']) }, before);
  });

  it('caps the refusal message and lists every path in error.paths', async () => {
    const dir = makeRepo();
    const store = new WipStore({ cwd: dir });
    const files: Record<string, string> = {};
    for (let i = 0; i < 300; i += 1) files[`logs/entry-${String(i).padStart(3, '0')}.log`] = 'saved\n';
    writeFiles(dir, files);
    const saved = await store.save({});
    // Ignored now, each holding other bytes than the snapshot's (the same bytes would lose nothing).
    writeFiles(dir, { '.gitignore': '*.log\n', ...Object.fromEntries(Object.keys(files).map((path) => [path, 'written since\n'])) });
    const before = stateOf(dir);
    const run = await runCli(dir, ['workspace', 'wip', 'restore', saved.snapshot.commit]);
    assert.equal(run.doc.error.code, 'wip-restore-blocked');
    assert.equal(run.doc.error.paths.length, 300);
    assert.ok(run.doc.error.message.length <= 1000, `the message is ${run.doc.error.message.length} characters`);
    assert.match(run.doc.error.message, /and \d+ more/);
    assert.deepEqual(stateOf(dir), before);
  });
});

describe('restore: a blob a power loss broke', () => {
  it('puts whole again, from the file it removes, a blob of the checkpoint a power loss emptied on disk, so the undo gives the file back, where the save and the checkpoint kept naming the broken object and the file was lost', async () => {
    const dir = makeRepo();
    const store = new WipStore({ cwd: dir });
    writeFiles(dir, { 'a.txt': 'a\n' });
    const first = (await store.save({ label: 'first' })).snapshot.commit;
    writeFiles(dir, { 'sub/precious.txt': 'precious work\n' });
    const second = (await store.save({ label: 'second' })).snapshot.commit;
    const blob = git(dir, ['rev-parse', `${second}:sub/precious.txt`]).trim();
    const objectFile = join(dir, '.git', 'objects', blob.slice(0, 2), blob.slice(2));
    spawnSync('chmod', ['644', objectFile]);
    writeFileSync(objectFile, '');
    writeFiles(dir, { 'a.txt': 'b\n' });
    const saved = await store.save({ label: 'third' });
    assert.equal(git(dir, ['rev-parse', `${saved.snapshot.commit}:sub/precious.txt`]).trim(), blob, 'the save names the broken blob, as git does');
    const restored = await store.restore({ snapshot: first });
    assert.equal(existsSync(join(dir, 'sub', 'precious.txt')), false);
    assert.equal(git(dir, ['cat-file', 'blob', blob]), 'precious work\n', 'the blob reads whole again');
    await store.restore({ snapshot: restored.checkpoint.snapshot.commit });
    assert.equal(readFileSync(join(dir, 'sub', 'precious.txt'), 'utf8'), 'precious work\n');
    assert.equal(spawnSync('git', ['fsck', '--no-dangling'], { cwd: dir, encoding: 'utf8' }).status, 0);
  });
});

describe('restore: a blob of the checkpoint gone from disk', () => {
  it('writes again, from the file it removes, a blob the checkpoint names that is on disk neither loose nor packed (a git gc --prune=now between a save\'s writes and its move of the ref took it), so the undo gives the file back', async () => {
    const dir = makeRepo();
    const store = new WipStore({ cwd: dir });
    writeFiles(dir, { 'a.txt': 'a\n' });
    const first = (await store.save({ label: 'first' })).snapshot.commit;
    writeFiles(dir, { 'sub/precious.txt': 'precious work\n' });
    // Written longer ago than the hash cache's margin: the save records it, and the checkpoint
    // takes its blob from the cache, without a look on disk, as held by the tip's tree.
    await new Promise((resolve) => setTimeout(resolve, RACY_MARGIN_MS + 1000));
    const second = (await store.save({ label: 'second' })).snapshot.commit;
    const blob = git(dir, ['rev-parse', `${second}:sub/precious.txt`]).trim();
    rmSync(join(dir, '.git', 'objects', blob.slice(0, 2), blob.slice(2)));
    assert.notEqual(spawnSync('git', ['cat-file', '-e', blob], { cwd: dir }).status, 0, 'the blob is gone');
    const restored = await store.restore({ snapshot: first });
    assert.equal(existsSync(join(dir, 'sub', 'precious.txt')), false);
    assert.equal(git(dir, ['cat-file', 'blob', blob]), 'precious work\n', 'the blob is on disk again');
    await store.restore({ snapshot: restored.checkpoint.snapshot.commit });
    assert.equal(readFileSync(join(dir, 'sub', 'precious.txt'), 'utf8'), 'precious work\n');
    assert.equal(spawnSync('git', ['fsck', '--no-dangling'], { cwd: dir, encoding: 'utf8' }).status, 0);
  });

  it('writes such a blob again with the permissions git gives in a repository its configuration shares, its fan-out folder too, so the group can still write objects there', async () => {
    const dir = makeRepo();
    git(dir, ['config', 'core.sharedRepository', 'group']);
    const store = new WipStore({ cwd: dir });
    writeFiles(dir, { 'a.txt': 'a\n' });
    const first = (await store.save({ label: 'first' })).snapshot.commit;
    const candidates = Array.from({ length: 8 }, (_, index) => `sub/precious${index}.txt`);
    writeFiles(dir, Object.fromEntries(candidates.map((path) => [path, `precious work ${path}\n`])));
    // Taken by the checkpoint from the hash cache as held by the tip's tree (see above).
    await new Promise((resolve) => setTimeout(resolve, RACY_MARGIN_MS + 1000));
    const second = (await store.save({ label: 'second' })).snapshot.commit;
    // One whose blob is the only object in its fan-out folder: gone, and its folder with it, as
    // git prune leaves a folder it empties.
    const objects = join(dir, '.git', 'objects');
    const path = candidates.find((candidate) => {
      const oid = git(dir, ['rev-parse', `${second}:${candidate}`]).trim();
      return readdirSync(join(objects, oid.slice(0, 2))).length === 1;
    });
    assert.notEqual(path, undefined, 'a blob alone in its folder');
    const blob = git(dir, ['rev-parse', `${second}:${path as string}`]).trim();
    rmSync(join(objects, blob.slice(0, 2)), { recursive: true });
    assert.notEqual(spawnSync('git', ['cat-file', '-e', blob], { cwd: dir }).status, 0, 'the blob is gone');
    // A umask that takes the group's bits: git gives them back to what it writes.
    const umask = process.umask(0o077);
    try {
      await store.restore({ snapshot: first });
    } finally {
      process.umask(umask);
    }
    assert.equal(git(dir, ['cat-file', 'blob', blob]), `precious work ${path as string}\n`, 'the blob is on disk again');
    assert.equal(statSync(join(objects, blob.slice(0, 2))).mode & 0o070, 0o070, 'the group may write in its folder');
    assert.equal(statSync(join(objects, blob.slice(0, 2), blob.slice(2))).mode & 0o777, 0o440, 'the group may read it');
  });
});

describe('restore: names that are not UTF-8', () => {
  it('restores two such names in one folder and lists them in git\'s C-style quoting', async () => {
    const dir = makeRepo();
    const store = new WipStore({ cwd: dir });
    mkdirSync(join(dir, 'd'));
    const one = Buffer.from('\xe9t\xe9', 'latin1');
    const two = Buffer.from('na\xefve', 'latin1');
    writeFileSync(bytePath(dir, Buffer.from('d'), one), 'one\n');
    writeFileSync(bytePath(dir, Buffer.from('d'), two), 'two\n');
    writeFiles(dir, { 'd/plain.txt': 'plain\n', 'd/"quoted".txt': 'quote\n' });
    const saved = await store.save({});
    writeFiles(dir, { 'd': null });
    const result = await store.restore({ snapshot: saved.snapshot.commit });
    assert.deepEqual(result.paths, ['d/"quoted".txt', '"d/na\\357ve"', 'd/plain.txt', '"d/\\351t\\351"']);
    assert.equal(readFileSync(bytePath(dir, Buffer.from('d'), one), 'utf8'), 'one\n');
    assert.equal(readFileSync(bytePath(dir, Buffer.from('d'), two), 'utf8'), 'two\n');
    const names = readdirSync(Buffer.from(join(dir, 'd')), { encoding: 'buffer' }).map((entry) => entry.toString('latin1')).sort();
    assert.deepEqual(names, ['"quoted".txt', 'na\xefve', 'plain.txt', '\xe9t\xe9']);
  });
});

describe('restore: a partial restore of a name that is not UTF-8', () => {
  it('takes the name as documents print it, quoted, and refuses it as it reaches Node from a command line, lossy', async () => {
    const dir = makeRepo();
    const store = new WipStore({ cwd: dir });
    const name = Buffer.from('caf\xe9', 'latin1');
    writeFileSync(bytePath(dir, name), 'lat\n');
    const saved = (await store.save({})).snapshot.commit;
    writeFileSync(bytePath(dir, name), 'changed\n');
    // Node decodes a command line as UTF-8: the byte 0xe9 arrives as U+FFFD, which names no file.
    const refs = refsOf(dir);
    for (const run of [() => store.restore({ snapshot: saved, paths: ['caf\ufffd'] }), () => store.plan({ snapshot: saved, paths: ['caf\ufffd'] })]) {
      await assertRefusal(run, 'write-usage-invalid', /neither snapshot .* holds caf\ufffd.*not UTF-8 is given as documents print it/);
    }
    const lossy = await runCli(dir, ['workspace', 'wip', 'restore', saved, '--', 'caf\ufffd']);
    assert.deepEqual([lossy.code, lossy.doc.error?.code], [1, 'write-usage-invalid']);
    assert.equal(refsOf(dir), refs, 'no checkpoint taken');
    assert.deepEqual(byteTreeOf(Buffer.from(dir)), { 'README.md': 'hello\n', 'caf\xe9': 'changed\n' }, 'nothing written');

    const plan = await store.plan({ snapshot: saved, paths: ['"caf\\351"'] });
    assert.deepEqual([plan.only, plan.write], [['"caf\\351"'], ['"caf\\351"']]);
    const restored = await runCli(dir, ['workspace', 'wip', 'restore', saved, '--', '"caf\\351"']);
    assert.equal(restored.code, 0, restored.stdout);
    assert.deepEqual([restored.doc.only, restored.doc.written], [['"caf\\351"'], ['"caf\\351"']]);
    assert.equal(readFileSync(bytePath(dir, name), 'utf8'), 'lat\n');
    // show prints the name the same way, so what it lists can be handed back.
    const shown = await runCli(dir, ['workspace', 'wip', 'show', saved, '--json']);
    assert.deepEqual(shown.doc.files.map((file: { path: string }) => file.path), ['README.md', '"caf\\351"']);
  });
});

describe('restore: the undo is exact', () => {
  it('gives back staged content, a file staged then edited, and a staged new file', async () => {
    const dir = makeRepo({ 'README.md': 'x\n', 'a.txt': 'one\n', 'b.txt': 'b\n' });
    const store = new WipStore({ cwd: dir });
    const saved = await store.save({});
    writeFiles(dir, { 'a.txt': 'two, staged\n', 'new.txt': 'staged new file\n' });
    git(dir, ['add', 'a.txt', 'new.txt']);
    writeFiles(dir, { 'a.txt': 'three, edited after staging\n', 'b.txt': 'unstaged edit\n' });
    const tree = treeOf(dir);
    const index = stagedEntries(dir);
    const status = git(dir, ['status', '--porcelain=v1', '-z']);
    const restored = await store.restore({ snapshot: saved.snapshot.commit });
    assert.equal(readFileSync(join(dir, 'a.txt'), 'utf8'), 'one\n');
    await store.restore({ snapshot: restored.checkpoint.snapshot.commit });
    assert.deepEqual(treeOf(dir), tree);
    assert.equal(stagedEntries(dir), index, 'the index is as it was: staged content, staged new file');
    assert.equal(git(dir, ['status', '--porcelain=v1', '-z']), status);
  });

  it('gives back a file staged with git add -N as intent-to-add, a name to quote and an ignored one too, where the undo brought them back untracked', async () => {
    const dir = makeRepo({ 'README.md': 'hello\n', '.gitignore': '*.log\n' });
    const store = new WipStore({ cwd: dir });
    writeFiles(dir, { 'a.txt': 'a\n' });
    const first = (await store.save({ label: 'first' })).snapshot.commit;
    writeFiles(dir, { 'new.txt': 'new\n', 'odd dir/say "hi"\tnow.txt': 'odd\n', 'kept.log': 'log\n', 'a.txt': 'b\n' });
    git(dir, ['add', '-N', 'new.txt', 'odd dir/say "hi"\tnow.txt']);
    git(dir, ['add', '-N', '-f', 'kept.log']);
    const before = git(dir, ['status', '--porcelain=v1', '-z']);
    assert.match(before, / A new\.txt/);
    const restored = await store.restore({ snapshot: first });
    assert.equal(existsSync(join(dir, 'new.txt')), false);
    await store.restore({ snapshot: restored.checkpoint.snapshot.commit });
    assert.equal(git(dir, ['status', '--porcelain=v1', '-z']), before);
    assert.equal(readFileSync(join(dir, 'odd dir', 'say "hi"\tnow.txt'), 'utf8'), 'odd\n');
  });

  it('gives a file of mode 0600 the restore removed its mode back on the undo, where it came back readable by all (0644): git records only the executable bit', async (t) => {
    if (process.platform === 'win32') {
      t.skip('POSIX permission bits');
      return;
    }
    const dir = makeRepo();
    const store = new WipStore({ cwd: dir });
    writeFiles(dir, { 'a.txt': 'a\n' });
    const first = (await store.save({ label: 'first' })).snapshot.commit;
    writeFiles(dir, { 'secret.env': 'TOKEN=x\n', 'run.sh': 'echo\n', 'plain.txt': 'plain\n' });
    chmodSync(join(dir, 'secret.env'), 0o600);
    chmodSync(join(dir, 'run.sh'), 0o700);
    const restored = await store.restore({ snapshot: first });
    assert.equal(existsSync(join(dir, 'secret.env')), false);
    await store.restore({ snapshot: restored.checkpoint.snapshot.commit });
    const mode = (name: string) => (statSync(join(dir, name)).mode & 0o7777).toString(8);
    assert.deepEqual([mode('secret.env'), mode('run.sh'), mode('plain.txt')], ['600', '700', (0o666 & ~process.umask()).toString(8)]);
    assert.equal(readFileSync(join(dir, 'secret.env'), 'utf8'), 'TOKEN=x\n');
  });

  it('takes only bits git gives from a mode trailer, so a crafted snapshot cannot make a file it writes set-user-ID or writable by all', async (t) => {
    if (process.platform === 'win32') {
      t.skip('POSIX permission bits');
      return;
    }
    const dir = makeRepo();
    const store = new WipStore({ cwd: dir });
    writeFiles(dir, { 'a.txt': 'a\n' });
    const first = (await store.save({ label: 'first' })).snapshot.commit;
    writeFiles(dir, { 'run.sh': 'echo\n', 'notes.txt': 'n\n', 'secret.env': 'TOKEN=x\n' });
    chmodSync(join(dir, 'run.sh'), 0o755);
    const second = (await store.save({ label: 'second' })).snapshot.commit;
    const message = `${git(dir, ['log', '-1', '--format=%B', second]).trimEnd()}\nChant-Wip-Mode: 6777 "run.sh"\nChant-Wip-Mode: 0666 "notes.txt"\nChant-Wip-Mode: 0600 "secret.env"\n`;
    const crafted = git(dir, ['commit-tree', `${second}^{tree}`, '-p', first, '-F', '-'], { input: message }).trim();
    await store.restore({ snapshot: first });
    await store.restore({ snapshot: crafted });
    const umask = process.umask();
    const mode = (name: string) => (statSync(join(dir, name)).mode & 0o7777).toString(8);
    assert.deepEqual([mode('run.sh'), mode('notes.txt'), mode('secret.env')], [(0o777 & ~umask).toString(8), (0o666 & ~umask).toString(8), '600']);
  });

  it('gives files whose names hold a line break, a backslash or a quote their mode back on the undo, the checkpoint still a snapshot of its chain', async (t) => {
    if (process.platform === 'win32') {
      t.skip('POSIX permission bits');
      return;
    }
    const dir = makeRepo();
    const store = new WipStore({ cwd: dir });
    writeFiles(dir, { 'a.txt': 'a\n' });
    const first = (await store.save({ label: 'first' })).snapshot.commit;
    const names = ['two\nlines.env', 'back\\slash.env', 'say "hi".env', 'plain.env'];
    for (const name of names) {
      writeFileSync(join(dir, name), `${name}\n`);
      chmodSync(join(dir, name), 0o600);
    }
    const restored = await store.restore({ snapshot: first });
    const checkpoint = restored.checkpoint.snapshot.commit;
    // Read back, the checkpoint is a snapshot of the chain: the list names it, and it restores.
    assert.ok((await store.list()).branches[0]?.snapshots.some((snapshot) => snapshot.commit === checkpoint));
    await store.restore({ snapshot: checkpoint });
    for (const name of names) {
      assert.equal(readFileSync(join(dir, name), 'utf8'), `${name}\n`);
      assert.equal((statSync(join(dir, name)).mode & 0o7777).toString(8), '600', name);
    }
  });

  it('gives back intent-to-add files whose names hold a backslash, a line break or a blank line, and keeps the checkpoint a snapshot of its chain', async () => {
    const dir = makeRepo({ 'README.md': 'hello\n' });
    const store = new WipStore({ cwd: dir });
    const first = (await store.save({ label: 'first' })).snapshot.commit;
    const names = ['back\\slash.txt', 'line\nbreak.txt', 'blank\n\nChant-Wip-Kind: save.txt'];
    writeFiles(dir, Object.fromEntries(names.map((name) => [name, 'new\n'])));
    git(dir, ['add', '-N', '--', ...names]);
    const before = git(dir, ['status', '--porcelain=v1', '-z']);
    const restored = await store.restore({ snapshot: first });
    const checkpoint = restored.checkpoint.snapshot.commit;
    assert.ok((await store.list()).branches[0]?.snapshots.some((snapshot) => snapshot.commit === checkpoint && snapshot.kind === 'pre-restore'));
    await store.restore({ snapshot: checkpoint });
    assert.equal(git(dir, ['status', '--porcelain=v1', '-z']), before);
  });

  it('marks no untracked or ignored file intent-to-add on the undo where a split index holds an intent-to-add entry under a name it strips', async () => {
    const dir = makeRepo({ 'README.md': 'hello\n', '.gitignore': '*.log\n' });
    git(dir, ['config', 'core.splitIndex', 'true']);
    const store = new WipStore({ cwd: dir, policy: null });
    const first = (await store.save({ label: 'first' })).snapshot.commit;
    writeFiles(dir, { 'new.txt': 'new\n', 'other.txt': 'other\n', 'debug.log': 'log\n' });
    git(dir, ['add', '-N', 'new.txt']);
    // The entry goes to the shared index; a flag changed after is written in the split index
    // under an empty name, the shared entry's.
    git(dir, ['update-index', '--split-index']);
    git(dir, ['update-index', '--skip-worktree', 'new.txt']);
    git(dir, ['update-index', '--no-skip-worktree', 'new.txt']);
    const restored = await store.restore({ snapshot: first });
    await store.restore({ snapshot: restored.checkpoint.snapshot.commit });
    const status = git(dir, ['status', '--porcelain=v1', '--ignored']);
    assert.match(status, /^\?\? other\.txt$/m);
    assert.match(status, /^!! debug\.log$/m);
  });

  it('leaves ignored files in place through a restore to a .gitignore that does not ignore them and the undo back', async () => {
    const dir = makeRepo({ 'README.md': 'x\n' });
    const store = new WipStore({ cwd: dir, policy: null });
    writeFiles(dir, { 'k.txt': 'one\n' });
    const saved = await store.save({});
    writeFiles(dir, { '.gitignore': '*.log\nbuild/\n', 'k.txt': 'two\n', 'a.log': 'precious log\n', 'build/out/o.bin': 'built\n', 'u.txt': 'untracked\n' });
    const tree = treeOf(dir);
    const index = stagedEntries(dir);
    const restored = await store.restore({ snapshot: saved.snapshot.commit });
    assert.deepEqual(restored.removed, ['.gitignore', 'u.txt']);
    // Not ignored under the snapshot's rules (it has no .gitignore): untracked now, and left.
    assert.equal(readFileSync(join(dir, 'a.log'), 'utf8'), 'precious log\n');
    const plan = await store.plan({ snapshot: restored.checkpoint.snapshot.commit });
    assert.deepEqual(plan.remove, [], 'the undo removes no file its .gitignore ignores');
    const undo = await store.restore({ snapshot: restored.checkpoint.snapshot.commit, expect: plan.fingerprint });
    assert.deepEqual(undo.written, ['.gitignore', 'k.txt', 'u.txt']);
    assert.deepEqual(undo.removed, []);
    assert.deepEqual(treeOf(dir), tree, 'every file is as it was, the ignored ones included');
    assert.equal(stagedEntries(dir), index);
  });

  it('leaves ignored files named with a newline, bytes that are not UTF-8, a tab, quotes, spaces, # or ! in place through a restore to a .gitignore that does not ignore them and the undo back', async () => {
    const dir = makeRepo({ 'README.md': 'x\n' });
    const store = new WipStore({ cwd: dir, policy: null });
    writeFiles(dir, { 'k.txt': 'one\n' });
    const saved = await store.save({});
    writeFiles(dir, { '.gitignore': '*.log\ntrail.log\\ \n', 'k.txt': 'two\n', 'a\nb.log': 'newline\n', 'tab\there.log': 'tab\n', 'back\\slash.log': 'backslash\n', 'say "hi".log': 'quotes\n', ' lead.log': 'lead\n', 'trail.log ': 'trail\n', '#hash.log': 'hash\n', '!bang.log': 'bang\n', 'sub/a\nb.log': 'deeper\n' });
    writeFileSync(bytePath(dir, Buffer.from([0xff, 0x2e, 0x6c, 0x6f, 0x67])), 'not utf-8\n');
    const tree = byteTreeOf(Buffer.from(dir));
    const restored = await store.restore({ snapshot: saved.snapshot.commit });
    assert.deepEqual(restored.removed, ['.gitignore']);
    const plan = await store.plan({ snapshot: restored.checkpoint.snapshot.commit });
    assert.deepEqual(plan.remove, [], 'the undo removes no file its .gitignore ignores');
    const undo = await store.restore({ snapshot: restored.checkpoint.snapshot.commit, expect: plan.fingerprint });
    assert.deepEqual(undo.written, ['.gitignore', 'k.txt']);
    assert.deepEqual(undo.removed, []);
    assert.deepEqual(byteTreeOf(Buffer.from(dir)), tree, 'every ignored file is as it was, whatever its name');
  });

  it('leaves an untracked file in place through a restore to a .gitignore that ignores it, and the undo takes it back over the same bytes', async () => {
    const dir = makeRepo({ 'README.md': 'x\n' });
    const store = new WipStore({ cwd: dir, policy: null });
    writeFiles(dir, { '.gitignore': '*.log\n', 'k.txt': 'one\n' });
    const saved = await store.save({});
    writeFiles(dir, { '.gitignore': null, 'k.txt': 'two\n', 'a.log': 'my log\n' });
    const tree = treeOf(dir);
    const restored = await store.restore({ snapshot: saved.snapshot.commit });
    assert.deepEqual(restored.removed, [], 'ignored under the snapshot\'s .gitignore, a.log is left');
    assert.equal(readFileSync(join(dir, 'a.log'), 'utf8'), 'my log\n');
    const undo = await store.restore({ snapshot: restored.checkpoint.snapshot.commit });
    assert.deepEqual(undo.written, ['a.log', 'k.txt']);
    assert.deepEqual(treeOf(dir), tree);
    // An ignored file in the way that holds other bytes than the snapshot's is still refused.
    await store.restore({ snapshot: saved.snapshot.commit });
    writeFiles(dir, { 'a.log': 'other bytes\n' });
    const before = stateOf(dir);
    await assertRefusal(() => store.restore({ snapshot: restored.checkpoint.snapshot.commit }), 'wip-restore-blocked', /a\.log \(an ignored file/);
    assert.deepEqual(stateOf(dir), before);
  });

  it('refuses over an ignored file holding the blob\'s bytes where the snapshot\'s attributes write other bytes there', async () => {
    const dir = makeRepo({ 'README.md': 'x\n' });
    const store = new WipStore({ cwd: dir, policy: null });
    writeFiles(dir, { '.gitattributes': '*.dat eol=crlf\n', 'd.dat': 'line\r\n' });
    const saved = await store.save({});
    // The user's own ignored d.dat holds the blob's bytes (LF), which the checkout writes as CRLF.
    writeFiles(dir, { '.gitignore': '*.dat\n', 'd.dat': 'line\n' });
    const before = stateOf(dir);
    const plan = await store.plan({ snapshot: saved.snapshot.commit });
    assert.deepEqual(plan.refused.map((refused) => refused.path), ['d.dat']);
    await assertRefusal(() => store.restore({ snapshot: saved.snapshot.commit }), 'wip-restore-blocked', /d\.dat \(an ignored file/);
    assert.deepEqual(stateOf(dir), before);
    assert.equal(readFileSync(join(dir, 'd.dat'), 'latin1'), 'line\n');
  });

  it('reads the ignore rules of an untracked file named like pathspec magic (:(glob)x, :!x, :/x) for that name, where it restores a .gitignore', async () => {
    const dir = makeRepo({ 'README.md': 'x\n', '.gitignore': '/x\n*.log\n' });
    const store = new WipStore({ cwd: dir, policy: null });
    const saved = await store.save({});
    // The folder ":" holds x: the rule /x names the top folder's x only.
    writeFiles(dir, { '.gitignore': '', ':(glob)x': 'one\n', ':!x': 'two\n', ':/x': 'three\n', ':(glob)a.log': 'my log\n' });
    const plan = await store.plan({ snapshot: saved.snapshot.commit });
    assert.equal(plan.refusal, null);
    const restored = await store.restore({ snapshot: saved.snapshot.commit, expect: plan.fingerprint });
    assert.deepEqual(restored.removed, [':!x', ':(glob)x', ':/x'], 'ignored under the snapshot\'s .gitignore, :(glob)a.log alone is left');
    assert.deepEqual(Object.keys(treeOf(dir)).sort(), ['.gitignore', ':(glob)a.log', 'README.md']);
    await store.restore({ snapshot: restored.checkpoint.snapshot.commit });
    assert.equal(readFileSync(join(dir, ':/x'), 'utf8'), 'three\n');
  });

  it('removes an untracked file where the snapshot has a folder, even when the .gitignore it writes ignores that name', async () => {
    const dir = makeRepo({ 'README.md': 'x\n' });
    const store = new WipStore({ cwd: dir, policy: null });
    // x/y is staged by force past the .gitignore that ignores x: the snapshot holds it.
    writeFiles(dir, { '.gitignore': 'x\n', 'x/y': 'tracked y\n' });
    git(dir, ['add', '-f', 'x/y']);
    const saved = await store.save({});
    git(dir, ['rm', '-q', '--cached', 'x/y']);
    rmSync(join(dir, 'x'), { recursive: true });
    writeFiles(dir, { '.gitignore': null, x: 'an untracked file\n' });
    const plan = await store.plan({ snapshot: saved.snapshot.commit });
    assert.deepEqual(plan.remove, ['x'], 'the folder the snapshot writes needs the file gone; the checkpoint holds it');
    const restored = await store.restore({ snapshot: saved.snapshot.commit, expect: plan.fingerprint });
    assert.deepEqual(restored.removed, ['x']);
    assert.equal(readFileSync(join(dir, 'x/y'), 'utf8'), 'tracked y\n');
    assert.equal(git(dir, ['show', `${restored.checkpoint.snapshot.commit}:x`]), 'an untracked file\n');
  });

  it('refuses during a conflicted merge, naming it, and changes nothing', async () => {
    const dir = makeRepo({ 'README.md': 'x\n', 'c.txt': 'base\n' });
    git(dir, ['checkout', '-q', '-b', 'other']);
    writeFiles(dir, { 'c.txt': 'theirs\n' });
    git(dir, ['commit', '-qam', 'theirs']);
    git(dir, ['checkout', '-q', 'main']);
    const store = new WipStore({ cwd: dir });
    writeFiles(dir, { 'w.txt': 'work\n' });
    const saved = await store.save({});
    writeFiles(dir, { 'w.txt': null, 'c.txt': 'ours\n' });
    git(dir, ['commit', '-qam', 'ours']);
    git(dir, ['merge', 'other'], { allowFail: true });
    assert.match(git(dir, ['ls-files', '-u']), /c\.txt/);
    const before = stateOf(dir);
    const message = await assertRefusal(() => store.restore({ snapshot: saved.snapshot.commit }), 'wip-restore-blocked', /merge/);
    assert.match(message, /c\.txt/);
    assert.deepEqual(stateOf(dir), before);
    assert.match(git(dir, ['ls-files', '-u']), /c\.txt/, 'the conflict stages are still there');
  });

  it('refuses to remove a CRLF file under * text=auto that the checkpoint would give back with LFs, unless told to, and then names it', async () => {
    const dir = makeRepo({ 'README.md': 'x\n', '.gitattributes': '* text=auto\n' });
    const store = new WipStore({ cwd: dir });
    const saved = await store.save({});
    writeFiles(dir, { 'win.txt': 'line one\r\nline two\r\n' });
    const before = stateOf(dir);
    await assertRefusal(() => store.restore({ snapshot: saved.snapshot.commit }), 'wip-restore-blocked', /win\.txt[^]*could not give this file back/);
    assert.deepEqual(stateOf(dir), before, 'nothing was written, no checkpoint taken');
    const plan = await store.plan({ snapshot: saved.snapshot.commit });
    assert.deepEqual(plan.refused.map((entry) => entry.path), ['win.txt']);
    assert.equal(plan.refusal?.code, 'wip-restore-blocked');
    assert.equal((await store.plan({ snapshot: saved.snapshot.commit, allowInexact: true })).refusal, null);
    const restored = await store.restore({ snapshot: saved.snapshot.commit, allowInexact: true });
    assert.equal(existsSync(join(dir, 'win.txt')), false);
    assert.deepEqual(restored.inexact?.map((entry) => entry.path), ['win.txt']);
    const undo = await store.restore({ snapshot: restored.checkpoint.snapshot.commit });
    assert.ok(undo.paths.includes('win.txt'));
    assert.equal(readFileSync(join(dir, 'win.txt'), 'latin1'), 'line one\nline two\n', 'what the checkpoint could give back, as the refusal said');
  });

  it('refuses to overwrite an LF file under eol=crlf, whose raw bytes are the blob\'s but which the checkpoint would give back with CRLFs', async () => {
    const dir = makeRepo({ 'README.md': 'x\n', '.gitattributes': '* text eol=crlf\n', f: 'old\r\n' });
    const store = new WipStore({ cwd: dir, policy: null });
    writeFiles(dir, { f: 'v1\r\n' });
    const saved = (await store.save({})).snapshot.commit;
    writeFiles(dir, { f: 'mywork-LF-only\n' });
    const before = stateOf(dir);
    await assertRefusal(() => store.restore({ snapshot: saved }), 'wip-restore-blocked', /\bf \([^]*could not give this file back/);
    assert.deepEqual(stateOf(dir), before);
    // Written back with CRLFs by git, the file is what the checkpoint gives back: nothing refused.
    writeFiles(dir, { f: 'mywork\r\n' });
    const restored = await store.restore({ snapshot: saved });
    assert.equal(restored.inexact, undefined);
    assert.equal(readFileSync(join(dir, 'f'), 'latin1'), 'v1\r\n');
  });

  it('refuses to overwrite a symlink under core.symlinks=false, which the checkpoint would give back as a file, and names it in inexact when told to', async () => {
    const dir = makeRepo({ 'README.md': 'x\n' });
    git(dir, ['config', 'core.symlinks', 'false']);
    const store = new WipStore({ cwd: dir, policy: null });
    writeFiles(dir, { link: 'a file\n', kept: 'v1\n' });
    const saved = (await store.save({})).snapshot.commit;
    rmSync(join(dir, 'link'));
    symlinkSync('README.md', join(dir, 'link'));
    writeFiles(dir, { kept: 'v2\n' });
    const before = stateOf(dir);
    await assertRefusal(() => store.restore({ snapshot: saved }), 'wip-restore-blocked', /\blink \([^]*symlink/);
    assert.deepEqual(stateOf(dir), before);
    assert.ok(lstatSync(join(dir, 'link')).isSymbolicLink());
    // A symlink git's checkout writes back as one (core.symlinks=true) is no refusal.
    git(dir, ['config', 'core.symlinks', 'true']);
    assert.deepEqual((await store.plan({ snapshot: saved })).refused, []);
    git(dir, ['config', 'core.symlinks', 'false']);
    const restored = await store.restore({ snapshot: saved, allowInexact: true });
    assert.deepEqual(restored.inexact?.map((entry) => entry.path), ['link']);
    assert.equal(readFileSync(join(dir, 'link'), 'utf8'), 'a file\n');
  });

  it('refuses to overwrite what a lossy clean filter dropped, and lets a round trip through its smudge go', async () => {
    const dir = makeRepo({ 'README.md': 'x\n', '.gitattributes': '*.ipynb filter=strip\n*.up filter=upper\n' });
    // strip drops the output lines (as nbstripout does); upper stores upper case and gives back lower case.
    git(dir, ['config', 'filter.strip.clean', 'sed /OUTPUT/d']);
    git(dir, ['config', 'filter.strip.smudge', 'cat']);
    git(dir, ['config', 'filter.upper.clean', 'tr a-z A-Z']);
    git(dir, ['config', 'filter.upper.smudge', 'tr A-Z a-z']);
    const store = new WipStore({ cwd: dir });
    writeFiles(dir, { 'nb.ipynb': 'code v1\n', 'w.up': 'words v1\n' });
    const saved = (await store.save({})).snapshot.commit;
    writeFiles(dir, { 'nb.ipynb': 'code v2\nOUTPUT: three hours of compute\n', 'w.up': 'words v2\n' });
    const before = stateOf(dir);
    const message = await assertRefusal(() => store.restore({ snapshot: saved }), 'wip-restore-blocked', /nb\.ipynb/);
    assert.doesNotMatch(message, /w\.up/, 'a file its smudge gives back as it is is not refused');
    assert.deepEqual(stateOf(dir), before);
    // Restored without the notebook, the rest goes through, and the undo gives w.up back exactly.
    const partial = await store.restore({ snapshot: saved, paths: ['w.up'] });
    assert.equal(partial.inexact, undefined);
    assert.equal(readFileSync(join(dir, 'w.up'), 'utf8'), 'words v1\n');
    await store.restore({ snapshot: partial.checkpoint.snapshot.commit });
    assert.equal(readFileSync(join(dir, 'w.up'), 'utf8'), 'words v2\n');
    assert.equal(readFileSync(join(dir, 'nb.ipynb'), 'utf8'), 'code v2\nOUTPUT: three hours of compute\n');
  });
});

/**
 * Writes a file whose path is under PATH_MAX from the top of the working tree `dir` and over it
 * from a staging folder in `.git`; returns the top folder of its path, its folder and its name.
 */
function writeDeepFile(dir: string): { segment: string; folder: string; name: string } {
  const segment = 'p'.repeat(200);
  const depth = Math.floor((4095 - dir.length - 30) / 201);
  const folder = Array.from({ length: depth }, () => segment).join('/');
  const name = 'f'.repeat(4095 - dir.length - 1 - folder.length - 1 - 20);
  spawnSync('sh', ['-c', `mkdir -p "${folder}" && cd "${folder}" && echo deep > "${name}"`], { cwd: dir });
  return { segment, folder, name };
}

describe('restore: git failing partway', () => {
  it('a path longer than the system takes from the staging folder puts the working tree back, and the refusal says so', async () => {
    // An attribute that mentions text: git writes the files into the staging folder under their
    // paths (the restore's own writer stages them side by side, and writes such a path: below).
    const dir = makeRepo({ 'README.md': 'x\n', '.gitattributes': '* -text\n' });
    const { segment } = writeDeepFile(dir);
    const store = new WipStore({ cwd: dir });
    const saved = await store.save({ label: 'deep' });
    try {
      spawnSync('rm', ['-rf', segment], { cwd: dir });
      writeFiles(dir, { 'work.txt': 'not in the snapshot\n' });
      const before = treeOf(dir);
      await assert.rejects(store.restore({ snapshot: saved.snapshot.commit }), (error: any) => error.code === 'git-failed' && /put back as it was/.test(error.message));
      assert.deepEqual(treeOf(dir), before);
    } finally {
      // The test's own clean-up cannot remove paths this long.
      spawnSync('sh', ['-c', `rm -rf ${segment} .git/chant-wip-*.staging`], { cwd: dir });
    }
  });

  it('writes a path longer than the system takes from the staging folder, though not from the top, where it writes the files itself', async () => {
    const dir = makeRepo({ 'README.md': 'x\n' });
    const { segment, folder, name } = writeDeepFile(dir);
    const store = new WipStore({ cwd: dir });
    const saved = await store.save({ label: 'deep' });
    try {
      spawnSync('rm', ['-rf', segment], { cwd: dir });
      writeFiles(dir, { 'work.txt': 'not in the snapshot\n' });
      const restored = await store.restore({ snapshot: saved.snapshot.commit });
      assert.deepEqual(restored.removed, ['work.txt']);
      assert.equal(restored.written.length, 1);
      assert.equal(spawnSync('sh', ['-c', `cd "${folder}" && cat "${name}"`], { cwd: dir, encoding: 'utf8' }).stdout, 'deep\n');
      // And its checkpoint gives the working tree back.
      await store.restore({ snapshot: restored.checkpoint.snapshot.commit });
      assert.equal(readFileSync(join(dir, 'work.txt'), 'utf8'), 'not in the snapshot\n');
      assert.notEqual(spawnSync('sh', ['-c', `cd "${folder}" && cat "${name}"`], { cwd: dir }).status, 0);
    } finally {
      spawnSync('sh', ['-c', `rm -rf ${segment} .git/chant-wip-*.staging`], { cwd: dir });
    }
  });

  it('a failing smudge filter leaves the working tree as it was, and the refusal says so', async () => {
    const dir = makeRepo({ 'README.md': 'x\n', '.gitattributes': '*.bin filter=broken\n' });
    git(dir, ['config', 'filter.broken.clean', 'cat']);
    git(dir, ['config', 'filter.broken.smudge', 'false']);
    git(dir, ['config', 'filter.broken.required', 'true']);
    const store = new WipStore({ cwd: dir });
    writeFiles(dir, { 'a.txt': 'saved a\n', 'z.bin': 'saved binary\n', 'gone.txt': 'saved only\n' });
    const saved = await store.save({});
    writeFiles(dir, { 'a.txt': 'current a\n', 'z.bin': null, 'gone.txt': null, 'extra.txt': 'current only\n' });
    const tree = treeOf(dir);
    const index = stagedEntries(dir);
    const tip = git(dir, ['rev-parse', 'refs/chant/wip/main']).trim();
    const message = await assertRefusal(() => store.restore({ snapshot: saved.snapshot.commit }), 'git-failed');
    assert.match(message, /before the checkpoint and before any file of the working tree, so nothing was changed/);
    assert.deepEqual(treeOf(dir), tree);
    assert.equal(stagedEntries(dir), index);
    assert.equal(git(dir, ['rev-parse', 'refs/chant/wip/main']).trim(), tip, 'no checkpoint was recorded for a restore that wrote nothing');
  });

  it('a Git LFS file whose object this clone lacks refuses the restore with nothing written, and says how to get it', async (t) => {
    if (spawnSync('git', ['lfs', 'version'], { encoding: 'utf8' }).status !== 0) return t.skip('git-lfs is not installed');
    const dir = makeRepo({ 'README.md': 'x\n' });
    git(dir, ['lfs', 'install', '--local']);
    writeFiles(dir, { '.gitattributes': '*.bin filter=lfs diff=lfs merge=lfs -text\n' });
    git(dir, ['add', '.gitattributes']);
    git(dir, ['commit', '-qm', 'track bin files with LFS']);
    const store = new WipStore({ cwd: dir });
    writeFiles(dir, { 'data.bin': 'a large model\n', 'notes.txt': 'saved notes\n' });
    const saved = await store.save({});
    // The object leaves this clone (a replacement box that fetched the snapshot without it).
    rmSync(join(dir, '.git', 'lfs', 'objects'), { recursive: true, force: true });
    writeFiles(dir, { 'data.bin': null, 'notes.txt': 'current notes\n' });
    const tree = treeOf(dir);
    const tip = git(dir, ['rev-parse', 'refs/chant/wip/main']).trim();
    const message = await assertRefusal(() => store.restore({ snapshot: saved.snapshot.commit }), 'git-failed');
    assert.match(message, /data\.bin/);
    assert.match(message, /Git LFS object is not in this clone.*wip fetch/);
    assert.deepEqual(treeOf(dir), tree);
    assert.equal(git(dir, ['rev-parse', 'refs/chant/wip/main']).trim(), tip);
    assert.deepEqual(readdirSync(join(dir, '.git')).filter((name) => name.startsWith('chant-wip-')), [], 'no staging folder is left behind');
  });
});

describe('restore: room and permissions, checked first', () => {
  it('refuses before the checkpoint when the file system has too few inodes', async (t) => {
    if (process.getuid?.() !== 0) return t.skip('mounting a small tmpfs needs root');
    const mount = tempDir('chant-inodes-');
    const mounted = spawnSync('mount', ['-t', 'tmpfs', '-o', 'size=16m,nr_inodes=1500', 'tmpfs', mount], { encoding: 'utf8' });
    if (mounted.status !== 0) return t.skip(`cannot mount a tmpfs here: ${(mounted.stderr || '').trim()}`);
    try {
      const dir = join(mount, 'repo');
      mkdirSync(dir);
      git(dir, ['init', '-q', '-b', 'main']);
      writeFiles(dir, { 'README.md': 'x\n' });
      git(dir, ['add', '-A']);
      git(dir, ['commit', '-qm', 'initial']);
      const files: Record<string, string> = {};
      for (let i = 0; i < 150; i += 1) files[`many/f${i}.txt`] = `${i}\n`;
      writeFiles(dir, files);
      const store = new WipStore({ cwd: dir });
      const saved = await store.save({});
      git(dir, ['gc', '-q']);
      writeFiles(dir, { 'many': null, '.gitignore': 'fill/\n' });
      // Use up the inodes, leaving fewer than the restore needs.
      const free = Number((spawnSync('df', ['--output=iavail', mount], { encoding: 'utf8' }).stdout.trim().split('\n').pop() ?? '0').trim());
      mkdirSync(join(dir, 'fill'));
      for (let i = 0; i < free - 40; i += 1) writeFileSync(join(dir, 'fill', `${i}`), '');
      const before = stateOf(dir);
      await assertRefusal(() => store.restore({ snapshot: saved.snapshot.commit }), 'git-failed', /inode|No space/);
      assert.deepEqual(stateOf(dir), before);
    } finally {
      spawnSync('umount', [mount]);
    }
  });

  it('refuses a read-only folder as an unprivileged user, before anything is written', async (t) => {
    if (process.getuid?.() !== 0) return t.skip('needs root to run the restore as another user');
    const probe = spawnSync('setpriv', ['--reuid=65534', '--regid=65534', '--clear-groups', 'true']);
    if (probe.status !== 0) return t.skip('setpriv cannot switch to uid 65534 here');
    const built = join(import.meta.dirname, '..', 'dist', 'bin', 'chant.cjs');
    if (!existsSync(built)) return t.skip('dist/ is not built (npm run build)');
    if (spawnSync('setpriv', ['--reuid=65534', '--regid=65534', '--clear-groups', 'test', '-r', built]).status !== 0) return t.skip(`uid 65534 cannot read the built bin ${built}: a folder above the clone is private to its owner`);
    // The fixtures' git runs as root over a repository nobody owns.
    writeFileSync(join(process.env.HOME as string, '.gitconfig'), `${readFileSync(join(process.env.HOME as string, '.gitconfig'), 'utf8')}[safe]\n\tdirectory = *\n`);
    const base = tempDir('chant-ro-');
    spawnSync('chmod', ['755', base]);
    const dir = join(base, 'repo');
    const asNobody = (args: string[], cwd = dir) => spawnSync('setpriv', ['--reuid=65534', '--regid=65534', '--clear-groups', ...args], {
      cwd, encoding: 'utf8', env: { ...process.env, HOME: base, GIT_CONFIG_NOSYSTEM: '1', GIT_AUTHOR_NAME: 'n', GIT_AUTHOR_EMAIL: 'n@n', GIT_COMMITTER_NAME: 'n', GIT_COMMITTER_EMAIL: 'n@n' },
    });
    mkdirSync(dir);
    spawnSync('chown', ['65534:65534', dir]);
    for (const args of [['git', 'init', '-q', '-b', 'main'], ['sh', '-c', 'mkdir ro && echo a > a.txt && echo r > ro/r.txt'], ['git', 'add', '-A'], ['git', 'commit', '-qm', 'i']]) {
      const done = asNobody(args);
      assert.equal(done.status, 0, done.stderr);
    }
    assert.equal(asNobody(['sh', '-c', 'echo saved > a.txt && echo saved > ro/r.txt && echo new > ro/new.txt']).status, 0);
    const bin = join(import.meta.dirname, '..', 'dist', 'bin', 'chant.cjs');
    const saved = asNobody([process.execPath, bin, 'workspace', 'wip', 'save']);
    assert.equal(saved.status, 0, saved.stdout + saved.stderr);
    const commit = JSON.parse(saved.stdout).snapshot.commit;
    assert.equal(asNobody(['sh', '-c', 'echo now > a.txt && echo now > ro/r.txt && rm ro/new.txt && chmod 555 ro']).status, 0);
    const before = stateOf(dir);
    const run = asNobody([process.execPath, bin, 'workspace', 'wip', 'restore', commit]);
    assert.equal(run.status, 1, run.stdout + run.stderr);
    const doc = JSON.parse(run.stdout);
    assert.equal(doc.error.code, 'wip-restore-blocked', doc.error.message);
    assert.match(doc.error.message, /ro/);
    assert.match(doc.error.message, /permission|writ/i);
    assert.deepEqual(stateOf(dir), before);
    assert.equal(readFileSync(join(dir, 'a.txt'), 'utf8'), 'now\n');
    assert.ok(lstatSync(join(dir, 'ro')).isDirectory());
  });
});

describe('restore: a path that cannot be changed partway through the move', () => {
  /** Sets or clears the immutable flag: even root can then neither write into nor remove what holds it. */
  const immutable = (path: string, on: boolean) => spawnSync('chattr', [on ? '+i' : '-i', path], { encoding: 'utf8' });
  const canFlag = (dir: string): string | null => {
    if (process.getuid?.() !== 0) return 'chattr +i needs root';
    const probe = join(dir, 'probe');
    writeFileSync(probe, '');
    const made = immutable(probe, true);
    immutable(probe, false);
    rmSync(probe);
    return made.status === 0 ? null : `chattr +i does not work on this file system: ${(made.stderr || '').trim()}`;
  };

  it('never reports a file removed that is still there, and puts back what it removed before', async (t) => {
    const dir = makeRepo({ 'base.txt': 'base\n' });
    const skip = canFlag(dir);
    if (skip !== null) return t.skip(skip);
    const store = new WipStore({ cwd: dir, policy: null });
    const saved = (await store.save({})).snapshot.commit;
    // Two untracked files the restore removes (the checkpoint holds them): c.txt goes first,
    // then d/u, which cannot be removed.
    writeFiles(dir, { 'c.txt': 'mine\n', 'd/u': 'stuck\n' });
    immutable(join(dir, 'd', 'u'), true);
    try {
      const tree = treeOf(dir);
      await assertRefusal(() => store.restore({ snapshot: saved }), 'git-failed', /cannot remove d\/u: EPERM: operation not permitted[^]*put back as it was/);
      assert.deepEqual(treeOf(dir), tree, 'c.txt is back, d/u is there, as the error says');
    } finally {
      immutable(join(dir, 'd', 'u'), false);
    }
  });

  it('puts back only the paths it changed, so a path it never reached does not stop the others', async (t) => {
    const dir = makeRepo({ 'base.txt': 'base\n', 'a/x': 'a1\n', 'z/y': 'z1\n' });
    const skip = canFlag(dir);
    if (skip !== null) return t.skip(skip);
    const store = new WipStore({ cwd: dir, policy: null });
    const saved = (await store.save({})).snapshot.commit;
    writeFiles(dir, { 'a/x': 'a2\n', 'z/untracked': 'mine\n' });
    const tree = treeOf(dir);
    // Past every check and the checkpoint, the folder a/ stops taking files: the removal of
    // z/untracked is made, the write of a/x fails. Putting a/x back would fail the same way.
    try {
      const message = await assertRefusal(() => store.restore({
        snapshot: saved,
        onProgress: (progress) => {
          if (progress.phase === 'writing' && progress.done === 0) immutable(join(dir, 'a'), true);
        },
      }), 'git-failed', /put back as it was/);
      assert.doesNotMatch(message, /failed too/);
    } finally {
      immutable(join(dir, 'a'), false);
    }
    assert.deepEqual(treeOf(dir), tree, 'z/untracked is back and a/x was never changed');
  });
});

describe('restore: a low open files limit', () => {
  it('restores into more folders than the limit lets it hold open at once (ulimit -n 64), where every such restore was put back as EMFILE', async (t) => {
    const bin = join(ROOT, 'dist', 'bin', 'chant.cjs');
    if (!existsSync(bin)) return t.skip('dist/ is not built (npm run build)');
    const files: Record<string, string> = {};
    for (let i = 0; i < 120; i += 1) files[`d${i}/f.txt`] = `${i}\n`;
    const dir = makeRepo(files);
    const store = new WipStore({ cwd: dir, policy: null });
    const edited: Record<string, string> = {};
    for (let i = 0; i < 120; i += 1) Object.assign(edited, { [`d${i}/f.txt`]: `saved ${i}\n`, [`d${i}/new.txt`]: 'new\n' });
    writeFiles(dir, edited);
    const saved = (await store.save({})).snapshot.commit;
    const tree = treeOf(dir);
    const now: Record<string, string | null> = {};
    for (let i = 0; i < 120; i += 1) Object.assign(now, { [`d${i}/f.txt`]: `now ${i}\n`, [`d${i}/new.txt`]: null, [`d${i}/mine.txt`]: 'mine\n' });
    writeFiles(dir, now);
    const run = spawnSync('sh', ['-c', 'ulimit -n 64 && exec "$0" "$@"', process.execPath, bin, 'workspace', 'wip', 'restore', saved], { cwd: dir, encoding: 'utf8' });
    assert.equal(run.status, 0, run.stdout + run.stderr);
    assert.deepEqual(treeOf(dir), tree);
  });
});

describe('restore: folders closed to stay under the open files limit', () => {
  /**
   * Runs `body` with the file system's openSync patched so that, as `top`/d0 is opened the second
   * time, d0 has been moved to `top`/moved and a new d0 made; returns how often d0 was opened.
   */
  const replacingD0OnSecondOpen = async (top: string, body: () => void): Promise<number> => {
    const fs = (await import('node:fs')).default;
    const { syncBuiltinESMExports } = await import('node:module');
    const realOpen = fs.openSync;
    let opened = 0;
    fs.openSync = ((path: fs.PathLike, ...rest: unknown[]) => {
      if (String(path).endsWith('/d0') && (opened += 1) === 2) {
        fs.renameSync(join(top, 'd0'), join(top, 'moved'));
        mkdirSync(join(top, 'd0'));
      }
      return (realOpen as (...args: unknown[]) => number)(path, ...rest);
    }) as typeof fs.openSync;
    syncBuiltinESMExports();
    try {
      body();
    } finally {
      fs.openSync = realOpen;
      syncBuiltinESMExports();
    }
    return opened;
  };

  it('stops as a race when a folder it closed is another one when it opens it again, never writing into the other', async () => {
    const { applyOps, FolderRaceError } = await import('../lib/store/folder-writer.js');
    const top = tempDir();
    const staging = tempDir();
    const ops: Array<{ raw: string; kind: 'write' }> = [];
    for (let i = 0; i < 40; i += 1) {
      mkdirSync(join(top, `d${i}`));
      mkdirSync(join(staging, `d${i}`));
      writeFileSync(join(staging, `d${i}`, 'a'), 'a\n');
      ops.push({ raw: `d${i}/a`, kind: 'write' });
    }
    writeFileSync(join(staging, 'd0', 'b'), 'b\n');
    // d0 again, after the 39 others made the writer close it.
    ops.push({ raw: 'd0/b', kind: 'write' });
    // As d0 is opened the second time, another process has moved it away and made a new d0.
    const opened = await replacingD0OnSecondOpen(top, () => {
      assert.throws(() => applyOps(top, staging, ops), (error) => error instanceof FolderRaceError && error.raw === 'd0');
    });
    assert.equal(opened, 2);
    assert.deepEqual(readdirSync(join(top, 'd0')), [], 'nothing written into the other d0');
    assert.deepEqual(readdirSync(join(top, 'moved')), ['a']);
  });

  it('goes on putting back the others when a folder it closed, then opens again to remove an emptied folder in it, was replaced', async () => {
    const { applyOps, FolderRaceError } = await import('../lib/store/folder-writer.js');
    const top = tempDir();
    const staging = tempDir();
    // A put-back: files the move wrote anew go, leaving their folders empty, and a file it
    // changed is written back.
    const ops: Array<{ raw: string; kind: 'remove' | 'write' }> = [];
    for (let i = 0; i < 40; i += 1) {
      mkdirSync(join(top, `d${i}`, 'sub'), { recursive: true });
      writeFileSync(join(top, `d${i}`, 'sub', 'a'), 'new\n');
      ops.push({ raw: `d${i}/sub/a`, kind: 'remove' });
    }
    writeFileSync(join(top, 'work.txt'), 'what the move wrote\n');
    writeFileSync(join(staging, 'work.txt'), 'what was there\n');
    ops.push({ raw: 'work.txt', kind: 'write' });
    // As d0 is opened again, to remove its emptied sub, another process has replaced it.
    const failures: Array<{ raw: string; error: unknown }> = [];
    const opened = await replacingD0OnSecondOpen(top, () => applyOps(top, staging, ops, { failures }));
    assert.equal(opened, 2);
    assert.ok(failures.some((failure) => failure.error instanceof FolderRaceError && failure.error.raw === 'd0'), String(failures.map((failure) => failure.raw)));
    // The put-back went on: it stopped there, the file it had not reached left as the move made it.
    assert.equal(readFileSync(join(top, 'work.txt'), 'utf8'), 'what was there\n');
    assert.equal(existsSync(join(top, 'd1')), false);
  });
});

describe('restore: a file system that turns read-only partway', () => {
  /** A repository on a tmpfs of its own, so that it can be remounted read-only; null with the reason when it cannot. */
  const mountedRepo = (t: { skip: (why: string) => void }): { mount: string; dir: string } | null => {
    if (process.getuid?.() !== 0) {
      t.skip('mounting a tmpfs needs root');
      return null;
    }
    const mount = tempDir('chant-ro-mount-');
    const mounted = spawnSync('mount', ['-t', 'tmpfs', '-o', 'size=16m', 'tmpfs', mount], { encoding: 'utf8' });
    if (mounted.status !== 0) {
      t.skip(`cannot mount a tmpfs here: ${(mounted.stderr || '').trim()}`);
      return null;
    }
    const dir = join(mount, 'repo');
    mkdirSync(dir);
    git(dir, ['init', '-q', '-b', 'main']);
    writeFiles(dir, { 'base.txt': 'base\n' });
    git(dir, ['add', '-A']);
    git(dir, ['commit', '-qm', 'initial']);
    return { mount, dir };
  };

  /**
   * Saves, changes base.txt (and writes `more`), then restores the save, the file system turning
   * read-only as the files are about to move; returns the store, the save, the refusal and the
   * tree as it was before the restore.
   */
  const refusedReadOnly = async (mount: string, dir: string, more: Record<string, string> = {}): Promise<{ store: WipStore; saved: string; message: string; tree: ReturnType<typeof treeOf> }> => {
    const store = new WipStore({ cwd: dir, policy: null });
    writeFiles(dir, { 'base.txt': 'saved\n' });
    const saved = (await store.save({})).snapshot.commit;
    writeFiles(dir, { 'base.txt': 'mine\n', ...more });
    const tree = treeOf(dir);
    const message = await assertRefusal(() => store.restore({
      snapshot: saved,
      onProgress: (progress) => {
        if (progress.phase === 'writing' && progress.done === 0) spawnSync('mount', ['-o', 'remount,ro', mount]);
      },
    }), 'git-failed', /EROFS/);
    return { store, saved, message, tree };
  };

  it('says which path refused and which checkpoint holds the tree, where the lock it could not remove took the place of both', async (t) => {
    const repo = mountedRepo(t);
    if (repo === null) return;
    const { mount, dir } = repo;
    try {
      // Past the checkpoint, as the files are about to move, the whole file system (the working
      // tree and its git directory) turns read-only.
      const { message, tree } = await refusedReadOnly(mount, dir, { 'mine.txt': 'untracked\n' });
      assert.match(message, /mine\.txt|base\.txt/, 'the path that refused is named');
      assert.match(message, /checkpoint [0-9a-f]{40}/);
      assert.deepEqual(treeOf(dir), tree);
    } finally {
      spawnSync('umount', [mount]);
    }
  });

  it('leaves no lock that holds up the same process once the file system is writable again', async (t) => {
    const repo = mountedRepo(t);
    if (repo === null) return;
    const { mount, dir } = repo;
    try {
      const { store, saved } = await refusedReadOnly(mount, dir);
      assert.equal(spawnSync('mount', ['-o', 'remount,rw', mount]).status, 0);
      // The lock this process could not remove names it, alive: a host running on (an agent's
      // runner) waited for itself, then was refused as wip-race, on every later call.
      const restored = await store.restore({ snapshot: saved });
      assert.deepEqual(restored.written, ['base.txt']);
      assert.equal(readFileSync(join(dir, 'base.txt'), 'utf8'), 'saved\n');
      writeFiles(dir, { 'base.txt': 'later\n' });
      assert.equal((await store.save({})).created, true);
    } finally {
      spawnSync('umount', [mount]);
    }
  });

  it('lets another process save once the file system is writable again, where it waited for this live one and was refused as wip-race', async (t) => {
    if (!existsSync(join(ROOT, 'dist', 'bin', 'chant.cjs'))) return t.skip('dist/ is not built (npm run build)');
    const repo = mountedRepo(t);
    if (repo === null) return;
    const { mount, dir } = repo;
    try {
      await refusedReadOnly(mount, dir);
      assert.equal(spawnSync('mount', ['-o', 'remount,rw', mount]).status, 0);
      // The lock this host could not remove names it, alive, and it makes no further call: the
      // user's command line waits for it.
      writeFiles(dir, { 'base.txt': 'later\n' });
      const run = await startBin(dir, ['workspace', 'wip', 'save']);
      assert.equal(run.code, 0, run.stdout + run.stderr);
      assert.equal(existsSync(join(dir, '.git', 'chant-wip.lock')), false);
    } finally {
      spawnSync('umount', [mount]);
    }
  });
});

describe('restore: a worktree on another file system than its git directory', () => {
  it('never leaves a file cut short when the copy across file systems can write only part of it (a file size limit, a disk that fills), but fails the move', (t) => {
    const other = '/dev/shm';
    const top = tempDir();
    if (!existsSync(other) || statSync(other).dev === statSync(top).dev) return t.skip(`needs ${other} on another file system than the temporary folder, to make the move cross file systems`);
    const staging = mkdtempSync(join(other, 'chant-wip-staging-'));
    try {
      writeFileSync(join(staging, 'big.bin'), Buffer.alloc(1 << 20, 7));
      writeFileSync(join(top, 'big.bin'), 'as it was\n');
      // The move runs under a file size limit of 64 KiB (ulimit -f counts 512- or 1024-byte
      // blocks): the system writes what fits and says how much, then refuses the rest.
      const program = [
        `import { applyOps } from ${JSON.stringify(join(ROOT, 'lib', 'store', 'folder-writer.ts'))};`,
        'try {',
        `  applyOps(${JSON.stringify(top)}, ${JSON.stringify(staging)}, [{ raw: 'big.bin', kind: 'write' }]);`,
        "  console.log('moved');",
        '} catch (error) {',
        "  console.log('failed: ' + error.message);",
        '}',
      ].join('\n');
      const ran = spawnSync('sh', ['-c', 'ulimit -f 64 && exec "$0" --import tsx --input-type=module -e "$1"', process.execPath, program], { cwd: ROOT, encoding: 'utf8' });
      const size = statSync(join(top, 'big.bin')).size;
      if (ran.stdout.trim() === 'moved') assert.equal(size, 1 << 20, 'a move that says it wrote the file wrote all of it');
      else assert.match(ran.stdout, /^failed: cannot write big\.bin: /, ran.stderr);
    } finally {
      rmSync(staging, { recursive: true, force: true });
    }
  });

  it('puts a file back over a folder holding only empty folders, as on one file system', async (t) => {
    const other = '/dev/shm';
    const base = makeRepo({ 'base.txt': 'base\n' });
    if (!existsSync(other) || statSync(other).dev === statSync(join(base, '.git')).dev) return t.skip(`needs ${other} on another file system than the temporary folder, to make the move cross file systems`);
    for (const leftover of ['an empty subfolder', 'nothing']) {
      const worktree = join(mkdtempSync(join(other, 'chant-wip-worktree-')), 'w');
      try {
        git(base, ['worktree', 'add', '-q', '-b', `feat-${leftover.length}`, worktree]);
        const store = new WipStore({ cwd: worktree, policy: null });
        writeFiles(worktree, { d: 'file\n' });
        const saved = (await store.save({})).snapshot.commit;
        rmSync(join(worktree, 'd'));
        mkdirSync(join(worktree, 'd'));
        writeFiles(worktree, { 'd/a': 'a\n' });
        if (leftover === 'an empty subfolder') mkdirSync(join(worktree, 'd', 'empty'));
        const restored = await store.restore({ snapshot: saved });
        assert.deepEqual(restored.written, ['d'], leftover);
        assert.equal(readFileSync(join(worktree, 'd'), 'utf8'), 'file\n', leftover);
      } finally {
        git(base, ['worktree', 'remove', '--force', worktree], { allowFail: true });
        rmSync(join(worktree, '..'), { recursive: true, force: true });
      }
    }
  });
});
