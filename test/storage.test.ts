// Bounded storage: the storage report and prune, on chains of thousands of snapshots built with
// one git fast-import stream.
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { mkdirSync, readdirSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, it } from 'node:test';
import { SimpleGitRunner, WipStore } from '../lib/index.js';
import type { GitRunner } from '../lib/index.js';
import { collectUnlessFetching, whileFetching } from '../lib/managers/lock.js';
import { BASE, buildChain } from './chains.js';
import { assertRefusal, assertValidDocument, git, makeRepo, refsOf, ROOT, runCli, tempDir } from './helpers.js';

/** The git verb of a command line, past its `-c name=value` pairs. */
function verbOf(args: readonly string[]): string {
  return args[args.findIndex((arg, i) => arg !== '-c' && args[i - 1] !== '-c')] ?? '';
}

function store(dir: string, now: number = BASE + 100_000 * 60): WipStore {
  return new WipStore({ cwd: dir, policy: null, clock: () => new Date(now * 1000) });
}

describe('the storage report', () => {
  it('counts a chain of 3,000 snapshots, dates its oldest and newest, and leaves out what HEAD holds', async () => {
    const big = 'x'.repeat(200_000) + Math.random().toString(36);
    const dir = makeRepo({ 'README.md': 'hello\n', 'big.bin': big });
    buildChain(dir, 3000);
    const result = await store(dir).storage();
    assert.equal(result.branches.length, 1);
    const [chain] = result.branches;
    assert.equal(chain?.snapshots, 3000);
    assert.equal(chain?.oldest, new Date(BASE * 1000).toISOString());
    assert.equal(chain?.newest, new Date((BASE + 2999 * 60) * 1000).toISOString());
    // 3,000 commits, trees and small blobs: well under the 200 kB file HEAD holds, which is not counted.
    const all = Number(git(dir, ['rev-list', '--objects', '--disk-usage', 'refs/chant/wip/main']).trim());
    assert.ok((chain?.bytes ?? 0) > 0 && (chain?.bytes ?? 0) < all, `${chain?.bytes} < ${all}`);
    const blob = Number(git(dir, ['cat-file', '-s', 'HEAD:big.bin']).trim());
    assert.ok(all - (chain?.bytes ?? 0) >= Math.min(blob, 1000), 'the object HEAD reaches is left out');
    assert.equal(result.total.bytes, chain?.bytes);
    assert.equal(result.total.snapshots, 3000);
    const run = await runCli(dir, ['workspace', 'wip', 'storage', '--json']);
    assert.equal(run.code, 0);
    assert.equal(run.doc.action, 'storage');
    await assertValidDocument(run.doc, { oursOnly: true });
  });

  it('leaves out what a branch holds though no snapshot stands on it: a file saved, then committed, is no longer charged to the chain', async () => {
    const dir = makeRepo();
    writeFileSync(join(dir, 'data.bin'), randomBytes(300_000));
    await store(dir).save({});
    const before = (await store(dir).storage()).branches[0]?.bytes ?? 0;
    assert.ok(before > 300_000, `the saved file costs the chain: ${before}`);
    // The work is committed on main: the chain's snapshot stands on main's earlier commit.
    git(dir, ['add', 'data.bin']);
    git(dir, ['commit', '-qm', 'data']);
    const { branches, total } = await store(dir).storage();
    const blob = Number(git(dir, ['cat-file', '--batch-check=%(objectsize:disk)'], { input: `${git(dir, ['rev-parse', 'HEAD:data.bin']).trim()}\n` }).trim());
    assert.ok((branches[0]?.bytes ?? 0) <= before - blob, `${branches[0]?.bytes} charged after the commit, ${before} before, the blob ${blob}`);
    assert.equal(total.bytes, branches[0]?.bytes);
  });

  it('counts the bytes while the read walks the chain, in one git process for a chain that is the total too, to the byte of the count made after the read', async () => {
    const dir = makeRepo({ 'README.md': 'hello\n' });
    buildChain(dir, 300);
    const events: string[] = [];
    const inner = new SimpleGitRunner(dir);
    const runner: GitRunner = {
      run: async (args, options) => {
        events.push(`${verbOf(args)} started`);
        const { onStdout } = options ?? {};
        if (verbOf(args) !== 'log' || onStdout === undefined) return inner.run(args, options);
        // The chain's walk takes a while, as a chain of 10,000 does: what git prints of it
        // reaches the read 200 ms late.
        const chunks: Buffer[] = [];
        const output = await inner.run(args, { ...options, onStdout: (chunk) => chunks.push(chunk) });
        await new Promise((resolve) => setTimeout(resolve, 200));
        events.push('log read');
        for (const chunk of chunks) onStdout(chunk);
        return output;
      },
    };
    const result = await new WipStore({ cwd: dir, policy: null, git: runner, clock: () => new Date((BASE + 100_000 * 60) * 1000) }).storage();
    const at = (event: string): number => events.indexOf(event);
    assert.ok(at('rev-list started') >= 0 && at('rev-list started') < at('log read'), `git counts while the chain is walked: ${events.join(', ')}`);
    assert.equal(events.filter((event) => event === 'rev-list started').length, 1, `one count for the chain and the total: ${events.join(', ')}`);
    const bytes = Number(git(dir, ['rev-list', '--objects-edge-aggressive', '--disk-usage', 'refs/chant/wip/main', '--not', '--branches', '--tags', '--remotes', 'HEAD']).trim().split('\n').at(-1));
    assert.deepEqual(result.branches.map((chain) => [chain.snapshots, chain.bytes]), [[300, bytes]]);
    assert.equal(result.total.bytes, bytes);
  });

  it('ends a report whose read fails with every git process it started answered, the count it started early too', async () => {
    const dir = makeRepo({ 'README.md': 'hello\n' });
    buildChain(dir, 50);
    const events: string[] = [];
    const inner = new SimpleGitRunner(dir);
    const runner: GitRunner = {
      run: async (args, options) => {
        events.push(`${verbOf(args)} started`);
        try {
          // The chain's walk fails; the count takes a while.
          if (verbOf(args) === 'log') throw new Error('the walk failed');
          const output = await inner.run(args, options);
          if (verbOf(args) === 'rev-list') await new Promise((resolve) => setTimeout(resolve, 300));
          return output;
        } finally {
          events.push(`${verbOf(args)} answered`);
        }
      },
    };
    await assert.rejects(new WipStore({ cwd: dir, policy: null, git: runner }).storage());
    assert.ok(events.includes('rev-list started'), `the count started early: ${events.join(', ')}`);
    assert.equal(events.filter((event) => event.endsWith(' answered')).length, events.filter((event) => event.endsWith(' started')).length, `every git call answered before the report ended: ${events.join(', ')}`);
  });

  it('counts what two chains share once in the total', async () => {
    const dir = makeRepo();
    writeFileSync(join(dir, 'notes.txt'), 'the same untracked file on two branches\n'.repeat(200));
    await store(dir).save({});
    git(dir, ['checkout', '-q', '-b', 'other']);
    await store(dir).save({});
    const { branches, total } = await store(dir).storage();
    assert.deepEqual(branches.map((chain) => chain.branch), ['main', 'other']);
    assert.ok(total.bytes < (branches[0]?.bytes ?? 0) + (branches[1]?.bytes ?? 0));
    const bytes = (...refs: string[]): number => Number(git(dir, ['rev-list', '--objects-edge-aggressive', '--disk-usage', ...refs, '--not', '--branches', '--tags', '--remotes', 'HEAD']).trim().split('\n').at(-1));
    assert.deepEqual(branches.map((chain) => chain.bytes), [bytes('refs/chant/wip/main'), bytes('refs/chant/wip/other')]);
    assert.equal(total.bytes, bytes('refs/chant/wip/main', 'refs/chant/wip/other'));
  });
});

describe('prune', () => {
  it('keeps the newest n of 3,000 snapshots, with the same trees, messages and dates, and marks the new oldest one', async () => {
    const dir = makeRepo();
    const chain = buildChain(dir, 3000);
    const head = git(dir, ['rev-parse', 'HEAD']).trim();
    const before = await store(dir).list();
    const result = await store(dir).prune({ keepLast: 10 });
    const [pruned] = result.branches;
    assert.equal(pruned?.kept, 10);
    assert.equal(pruned?.dropped.length, 2990);
    assert.equal(pruned?.tip, chain[0]);
    const after = await store(dir).list();
    const snapshots = after.branches[0]?.snapshots ?? [];
    assert.equal(snapshots.length, 10);
    assert.equal(after.branches[0]?.tip, pruned?.next);
    const old = before.branches[0]?.snapshots.slice(0, 10) ?? [];
    assert.deepEqual(snapshots.map((s) => ({ ...s, commit: '' })), old.map((s) => ({ ...s, commit: '' })));
    // The new oldest snapshot hangs on its head alone and names the chain it replaced.
    const root = snapshots.at(-1)?.commit as string;
    assert.equal(git(dir, ['rev-parse', `${root}^@`]).trim(), head);
    const trailers = git(dir, ['log', '-1', '--format=%(trailers:key=Chant-Wip-Pruned,valueonly)%(trailers:key=Chant-Wip-Pruned-Remote,valueonly)', root]);
    assert.deepEqual(trailers.trim().split('\n'), [chain[0], 'none']);
    // Every kept snapshot but the oldest has the one below it first and the head last.
    assert.deepEqual(git(dir, ['rev-parse', `${snapshots[0]?.commit}^@`]).trim().split('\n'), [snapshots[1]?.commit, head]);
    // The old chain's reflog entries are gone, so nothing chant wrote holds the dropped snapshots.
    const reflog = git(dir, ['reflog', 'show', '--format=%H', 'refs/chant/wip/main']).trim().split('\n');
    assert.ok(!reflog.includes(chain[100] as string));
    assert.equal(git(dir, ['fsck', '--connectivity-only', '--no-dangling']).trim(), '');
  });

  it('keeps what is newer than an age, and every labelled snapshot', async () => {
    const dir = makeRepo();
    buildChain(dir, 2000, (i) => i % 500 === 7);
    // The clock stands one minute after the newest: 100m keeps the newest 100.
    const now = BASE + 2000 * 60;
    const within = await store(dir, now).prune({ keepWithin: '100m', dryRun: true });
    assert.equal(within.branches[0]?.kept, 100);
    assert.equal(within.branches[0]?.next, null);
    const labelled = await store(dir, now).prune({ keepLabelled: true });
    const snapshots = (await store(dir).list()).branches[0]?.snapshots ?? [];
    assert.deepEqual(snapshots.map((s) => s.label), [null, 'keep:1507', 'keep:1007', 'keep:507', 'keep:7']);
    assert.equal(labelled.branches[0]?.kept, 5);
  });

  it('writes nothing on a dry run, and refuses a prune without a rule or with a bad one', async () => {
    const dir = makeRepo();
    buildChain(dir, 50);
    const refs = refsOf(dir);
    const plan = await store(dir).prune({ keepLast: 5, dryRun: true });
    assert.equal(plan.dryRun, true);
    assert.equal(plan.branches[0]?.dropped.length, 45);
    assert.equal(refsOf(dir), refs);
    await assertRefusal(() => store(dir).prune({}), 'write-usage-invalid', /needs a rule/);
    await assertRefusal(() => store(dir).prune({ keepLast: 0 }), 'write-usage-invalid', /keep-last/);
    await assertRefusal(() => store(dir).prune({ keepWithin: '7 days' }), 'write-usage-invalid', /keep-within/);
    assert.equal(refsOf(dir), refs);
    const run = await runCli(dir, ['workspace', 'wip', 'prune', '--keep-last', '5', '--dry-run']);
    assert.equal(run.code, 0);
    await assertValidDocument(run.doc, { oursOnly: true });
    const refused = await runCli(dir, ['workspace', 'wip', 'prune']);
    assert.equal(refused.code, 1);
    assert.equal(refused.doc.error.code, 'write-usage-invalid');
    await assertValidDocument(refused.doc, { oursOnly: true });
    // What Number() would read as a number, and the empty text as 0: refused, quoted as given.
    for (const given of ['0x2', '1e1', '+2', ' 2', '', '2abc', '0', '00']) {
      const bad = await runCli(dir, ['workspace', 'wip', 'prune', '--keep-last', given]);
      assert.equal(bad.code, 1, given);
      assert.equal(bad.doc.error.code, 'write-usage-invalid');
      assert.ok(bad.doc.error.message.includes(JSON.stringify(given)), bad.doc.error.message);
    }
    assert.equal(refsOf(dir), refs);
  });

  it('frees the dropped snapshots\' objects with gc, and the storage report shows it', async () => {
    const dir = makeRepo();
    const head = git(dir, ['rev-parse', 'HEAD']).trim();
    // Each snapshot adds a file of its own that no later one keeps.
    const parts: string[] = [];
    for (let i = 0; i < 200; i += 1) {
      const message = `chant wip: main\n\nChant-Wip-Branch: main\nChant-Wip-Head: ${head}\nChant-Wip-Kind: save\n`;
      const content = `${i}:${'y'.repeat(2000)}${Math.random()}\n`;
      parts.push('commit refs/chant/wip/main', `mark :${i + 1}`, `committer T <t@e> ${BASE + i} +0000`, `data ${Buffer.byteLength(message)}`, message,
        i === 0 ? `from ${head}` : `from :${i}`, ...(i === 0 ? [] : [`merge ${head}`]), 'deleteall', `M 100644 inline scratch.txt`, `data ${Buffer.byteLength(content)}`, content, '');
    }
    git(dir, ['fast-import', '--quiet'], { input: `${parts.join('\n')}\n` });
    const before = (await store(dir).storage()).total.bytes;
    const result = await store(dir).prune({ keepLast: 2, gc: true });
    assert.equal(result.collected, true);
    const after = (await store(dir).storage()).total.bytes;
    assert.ok(after * 20 < before, `${after} bytes after, ${before} before`);
    const objects = git(dir, ['count-objects', '-v']);
    assert.match(objects, /^count: 0$/m);
  });

  it('moves chains and runs its gc holding every worktree\'s lock: a save in another worktree, between writing its objects and naming them, keeps them', async () => {
    const dir = makeRepo({ 'a.txt': 'a\n' });
    const other = `${dir}-other`;
    git(dir, ['worktree', 'add', '-q', '-b', 'other', other]);
    const there = new WipStore({ cwd: other, policy: null });
    for (const turn of ['x', 'y', 'z']) {
      writeFileSync(join(other, 'b.txt'), `${turn}\n`);
      await there.save({ label: turn });
    }
    const here = new WipStore({ cwd: dir, policy: null });
    writeFileSync(join(dir, 'a.txt'), 'new work, only in this save\n');
    let pruned: { status: number | null; stdout: string; stderr: string } | null = null;
    const saved = await here.save({
      label: 'mid-prune',
      onProgress: (progress) => {
        if (progress.phase !== 'recording' || pruned !== null) return;
        // The other worktree prunes with gc while this save holds its lock, its objects written
        // and its ref not moved yet: the prune waits for the lock, then gives up, having moved
        // no chain and collected nothing.
        const code = `const { WipStore } = await import(${JSON.stringify(join(ROOT, 'lib', 'index.ts'))}); const result = await new WipStore({ cwd: ${JSON.stringify(other)}, policy: null, lockWaitMs: 300 }).prune({ keepLast: 1, gc: true }).catch((error) => ({ refused: error.code })); process.stdout.write(JSON.stringify(result.refused === undefined ? { collected: result.collected, dropped: result.branches.map((branch) => branch.dropped.length) } : result));`;
        pruned = spawnSync(process.execPath, ['--import', 'tsx', '--input-type=module', '-e', code], { cwd: ROOT, encoding: 'utf8' });
      },
    });
    const result = pruned as { status: number | null; stdout: string; stderr: string } | null;
    assert.equal(result?.status, 0, result?.stderr);
    assert.deepEqual(JSON.parse(result?.stdout ?? ''), { refused: 'wip-race' }, 'the prune refused, nothing moved');
    assert.equal(git(dir, ['rev-list', '--count', 'refs/chant/wip/other', '^other']).trim(), '3', 'the other chain is whole');
    // Every object of the save is there.
    git(dir, ['fsck', '--no-dangling', '--strict']);
    assert.equal(git(dir, ['show', `${saved.snapshot.commit}:a.txt`]), 'new work, only in this save\n');
    // With no save in the way, the gc runs.
    writeFileSync(join(other, 'b.txt'), 'w\n');
    await there.save({ label: 'w' });
    assert.equal((await there.prune({ keepLast: 1, gc: true })).collected, true);
    git(dir, ['fsck', '--no-dangling', '--strict']);
  });

  it('leaves its gc undone while a fetch brings objects no ref names yet, and runs it once no live fetch is left', async () => {
    // A fetch writes what it brings before any ref names it: a git gc --prune=now meanwhile took
    // its pack from under it (the fetch failed, its staging refs naming objects that were gone).
    const dir = makeRepo();
    buildChain(dir, 5);
    const common = join(dir, '.git');
    const dropped = git(dir, ['rev-parse', 'refs/chant/wip/main~2']).trim();
    const during = await whileFetching(common, () => store(dir).prune({ keepLast: 1, gc: true }));
    assert.equal(during.branches[0]?.dropped.length, 4, 'the chain is pruned all the same');
    assert.equal(during.collected, false);
    git(dir, ['cat-file', '-e', dropped]);
    assert.deepEqual(readdirSync(join(common, 'chant-fetching')), [], 'the fetch took its marker away');
    // A marker left by a fetch whose process is gone counts for nothing, and goes.
    const gone = spawnSync(process.execPath, ['-e', '0']).pid as number;
    writeFileSync(join(common, 'chant-fetching', `${gone}-left`), `${gone}\n\n`);
    const after = await store(dir).prune({ keepLast: 1, gc: true });
    assert.equal(after.collected, true);
    assert.throws(() => git(dir, ['cat-file', '-e', dropped]), 'the dropped snapshot is gone');
    assert.deepEqual(readdirSync(join(common, 'chant-fetching')), []);
    git(dir, ['fsck', '--no-dangling', '--strict']);
  });

  it('takes a marker it cannot read (another user\'s) for a live one: a fetch waits for the gc, and the gc is left undone for the fetch', async () => {
    // A folder stands in for a file of another user's that this one may not read.
    const dir = makeRepo();
    const common = join(dir, '.git');
    mkdirSync(join(common, 'chant-collecting'));
    let fetched = false;
    await assert.rejects(whileFetching(common, async () => {
      fetched = true;
    }, { waitMs: 200 }), (error: Error & { code?: string }) => error.code === 'wip-race');
    assert.equal(fetched, false);
    rmSync(join(common, 'chant-collecting'), { recursive: true });
    mkdirSync(join(common, 'chant-fetching', `${process.pid}-unreadable`), { recursive: true });
    let collected = false;
    assert.equal(await collectUnlessFetching(common, async () => {
      collected = true;
    }), false);
    assert.equal(collected, false);
  });

  it('holds a fetch back while its gc runs: past the wait the fetch is refused with wip-race, having brought nothing', async () => {
    const dir = makeRepo();
    const common = join(dir, '.git');
    let fetched = false;
    const collected = await collectUnlessFetching(common, async () => {
      await assert.rejects(whileFetching(common, async () => {
        fetched = true;
      }, { waitMs: 200 }), (error: Error & { code?: string }) => error.code === 'wip-race' && /git gc --prune=now/.test(error.message));
    });
    assert.equal(collected, true, 'the fetch that waited left no marker to hold the gc back');
    assert.equal(fetched, false);
    assert.equal(await whileFetching(common, async () => 'fetched'), 'fetched', 'with the gc done, a fetch goes at once');
  });

  it('writes again the rewritten chain a git gc --prune=now took as the ref moved, so every snapshot it kept is whole', async () => {
    const dir = makeRepo();
    buildChain(dir, 40);
    const packs = join(dir, '.git', 'objects', 'pack');
    let before: string[] = [];
    let collected = 0;
    const inner = new SimpleGitRunner(dir);
    const collecting = new WipStore({
      cwd: dir,
      policy: null,
      git: {
        async run(args, options) {
          if (verbOf(args) === 'index-pack') before = readdirSync(packs);
          const out = await inner.run(args, options);
          // A gc that listed the packs and walked the refs before the move ends after it: it deletes
          // the pack the prune wrote, whose commits no ref named when it walked.
          if (verbOf(args) === 'update-ref' && args.includes('chant wip: prune') && collected === 0) {
            collected += 1;
            for (const name of readdirSync(packs)) if (!before.includes(name)) rmSync(join(packs, name));
          }
          return out;
        },
      },
    });
    const result = await collecting.prune({ keepLast: 5 });
    assert.equal(collected, 1, 'the pack was taken after the ref moved');
    assert.equal(result.branches[0]?.kept, 5);
    const fsck = spawnSync('git', ['fsck', '--no-dangling'], { cwd: dir, encoding: 'utf8' });
    assert.equal(fsck.status, 0, `${fsck.stdout}${fsck.stderr}`);
    const chain = git(dir, ['log', '--first-parent', '--format=%H %T', 'refs/chant/wip/main', '--not', 'HEAD']).trim().split('\n');
    assert.equal(chain.length, 5);
    for (const line of chain) assert.equal(spawnSync('git', ['cat-file', '-e', `${line.split(' ')[1]}^{tree}`], { cwd: dir }).status, 0, line);
  });

  it('puts the chain back and fails, saying so, when the commits a gc took as the ref moved cannot be written again', async () => {
    const dir = makeRepo();
    buildChain(dir, 20);
    const tip = git(dir, ['rev-parse', 'refs/chant/wip/main']).trim();
    const packs = join(dir, '.git', 'objects', 'pack');
    let before: string[] = [];
    let packed = 0;
    const inner = new SimpleGitRunner(dir);
    const failing = new WipStore({
      cwd: dir,
      policy: null,
      git: {
        async run(args, options) {
          if (verbOf(args) === 'index-pack') {
            packed += 1;
            // The disk is full by the time the commits are written again.
            if (packed === 2) throw new Error('fatal: unable to create temporary file: No space left on device');
            before = readdirSync(packs);
          }
          const out = await inner.run(args, options);
          if (verbOf(args) === 'update-ref' && args.includes('chant wip: prune')) {
            for (const name of readdirSync(packs)) if (!before.includes(name)) rmSync(join(packs, name));
          }
          return out;
        },
      },
    });
    await assertRefusal(() => failing.prune({ keepLast: 3 }), 'git-failed', /gc run meanwhile.*No space left.*put back where they were, nothing was dropped/);
    assert.equal(packed, 2, 'the commits were written again once');
    assert.equal(git(dir, ['rev-parse', 'refs/chant/wip/main']).trim(), tip);
    assert.equal(git(dir, ['rev-list', '--count', 'refs/chant/wip/main', '--not', 'HEAD']).trim(), '20');
    const fsck = spawnSync('git', ['fsck', '--no-dangling'], { cwd: dir, encoding: 'utf8' });
    assert.equal(fsck.status, 0, `${fsck.stdout}${fsck.stderr}`);
  });

  it('refuses with wip-race and changes nothing when the chain moves under it', async () => {
    const dir = makeRepo();
    buildChain(dir, 20);
    const racing = new WipStore({
      cwd: dir,
      policy: null,
      git: {
        async run(args, options) {
          const { SimpleGitRunner } = await import('../lib/index.js');
          // Just before the ref moves, another writer (another worktree's save) moves it.
          if (args[0] === 'index-pack') {
            const tip = git(dir, ['rev-parse', 'refs/chant/wip/main']).trim();
            const message = git(dir, ['log', '-1', '--format=%B', tip]);
            const next = git(dir, ['commit-tree', '-p', tip, '-m', message, `${tip}^{tree}`]).trim();
            git(dir, ['update-ref', 'refs/chant/wip/main', next, tip]);
          }
          return new SimpleGitRunner(dir).run(args, options);
        },
      },
    });
    const tip = git(dir, ['rev-parse', 'refs/chant/wip/main']).trim();
    await assertRefusal(() => racing.prune({ keepLast: 3 }), 'wip-race');
    assert.equal(git(dir, ['rev-parse', 'refs/chant/wip/main^']).trim(), tip);
  });

  it('says a full disk as the ref moves is git failing, in git\'s words, not a chain that moved (wip-race, run it again)', async (t) => {
    if (process.getuid?.() !== 0) return t.skip('mounting a small tmpfs needs root');
    const mount = tempDir('chant-prune-full-');
    const mounted = spawnSync('mount', ['-t', 'tmpfs', '-o', 'size=4m', 'tmpfs', mount], { encoding: 'utf8' });
    if (mounted.status !== 0) return t.skip(`cannot mount a tmpfs here: ${(mounted.stderr || '').trim()}`);
    try {
      const dir = join(mount, 'repo');
      mkdirSync(dir);
      git(dir, ['init', '-q', '-b', 'main']);
      writeFileSync(join(dir, 'README.md'), 'hello\n');
      git(dir, ['add', '-A']);
      git(dir, ['commit', '-qm', 'initial']);
      buildChain(dir, 6);
      const full = new WipStore({
        cwd: dir,
        policy: null,
        git: {
          async run(args, options) {
            const { SimpleGitRunner } = await import('../lib/index.js');
            // Just before the ref moves, the disk fills (another process's build output).
            if (args[0] === 'update-ref' && args.includes('--stdin')) spawnSync('sh', ['-c', 'cat /dev/zero > "$0" 2>/dev/null', join(mount, 'filler')]);
            return new SimpleGitRunner(dir).run(args, options);
          },
        },
      });
      const tip = git(dir, ['rev-parse', 'refs/chant/wip/main']).trim();
      await assertRefusal(() => full.prune({ keepLast: 3 }), 'git-failed', /couldn't write|No space/);
      assert.equal(git(dir, ['rev-parse', 'refs/chant/wip/main']).trim(), tip, 'nothing was dropped');
    } finally {
      spawnSync('umount', [mount]);
    }
  });

  it('keeps the index a kept checkpoint recorded: after the prune and a gc, restoring it gives back the staged file too', async () => {
    const dir = makeRepo({ f: 'base\n' });
    const store = new WipStore({ cwd: dir, policy: null });
    writeFileSync(join(dir, 'f'), 'old\n');
    await store.save({ label: 'turn:1' });
    writeFileSync(join(dir, 'f'), 's1\n');
    const s1 = (await store.save({ label: 'turn:2' })).snapshot.commit;
    // Staged content no commit holds, and other work over it.
    writeFileSync(join(dir, 'f'), 'staged only\n');
    git(dir, ['add', 'f']);
    writeFileSync(join(dir, 'f'), 'working\n');
    const checkpoint = (await store.restore({ snapshot: s1 })).checkpoint.snapshot.commit;
    assert.equal(git(dir, ['rev-list', '--parents', '-n', '1', checkpoint]).trim().split(' ').length, 4, 'the snapshot below, the index, HEAD');
    const pruned = await store.prune({ keepLast: 2, gc: true });
    assert.equal(pruned.branches[0]?.dropped.length, 1);
    const tip = git(dir, ['rev-parse', 'refs/chant/wip/main']).trim();
    const parents = git(dir, ['rev-list', '--parents', '-n', '1', tip]).trim().split(' ').slice(1);
    assert.equal(parents.length, 3, 'the rewritten checkpoint keeps its index and its head');
    assert.equal(git(dir, ['rev-parse', `${parents[1]}^{tree}`]).trim(), git(dir, ['log', '-1', '--format=%(trailers:key=Chant-Wip-Index,valueonly)', tip]).trim());
    git(dir, ['fsck', '--strict', '--no-dangling']);
    await store.restore({ snapshot: tip });
    assert.equal(git(dir, ['show', ':f']), 'staged only\n', 'the staged file is back in the index');
    assert.equal(git(dir, ['log', '-1', '--format=%(trailers:key=Chant-Wip-Label,valueonly)', `${tip}^1`]).trim(), 'turn:2', 'below it, the snapshot it was taken over');
  });

  it('counts what a checkpoint left first by a prune changed against its head, in show as in the read', async () => {
    const dir = makeRepo({ f: 'base\n', g: 'g\n', h: 'h\n' });
    const store = new WipStore({ cwd: dir, policy: null });
    writeFileSync(join(dir, 'f'), 's1\n');
    const s1 = (await store.save()).snapshot.commit;
    writeFileSync(join(dir, 'f'), 's2\n');
    await store.save();
    writeFileSync(join(dir, 'g'), 'staged g\n');
    writeFileSync(join(dir, 'h'), 'staged h\n');
    git(dir, ['add', 'g', 'h']);
    writeFileSync(join(dir, 'f'), 'edited\n');
    await store.restore({ snapshot: s1 });
    await store.prune({ keepLast: 1, gc: true });
    const tip = git(dir, ['rev-parse', 'refs/chant/wip/main']).trim();
    assert.equal(git(dir, ['rev-list', '--parents', '-n', '1', tip]).trim().split(' ').length, 3, 'the index and the head');
    const shown = await store.show({ snapshot: tip });
    const listed = (await store.list({ changes: true })).branches[0]?.snapshots[0];
    assert.equal(shown.changes?.against, git(dir, ['rev-parse', 'HEAD']).trim());
    assert.deepEqual(shown.changes, listed?.changes);
    assert.equal(shown.changes?.files, 3);
  });

  it('refuses, pruning nothing, a chain that goes on below what reads as snapshots', async () => {
    const dir = makeRepo();
    const store = new WipStore({ cwd: dir, policy: null });
    writeFileSync(join(dir, 'a.txt'), 'precious\n');
    await store.save({ label: 'precious' });
    // A commit no chant reads as a snapshot (an empty branch trailer) on the chain, then more snapshots above it.
    const tip = git(dir, ['rev-parse', 'refs/chant/wip/main']).trim();
    const odd = git(dir, ['commit-tree', '-p', tip, '-p', 'HEAD', '-m', 'odd\n\nChant-Wip-Branch:\n', `${tip}^{tree}`]).trim();
    git(dir, ['update-ref', 'refs/chant/wip/main', odd, tip]);
    for (let i = 0; i < 3; i += 1) {
      writeFileSync(join(dir, 'a.txt'), `turn ${i}\n`);
      await store.save();
    }
    const before = git(dir, ['rev-parse', 'refs/chant/wip/main']).trim();
    await assertRefusal(() => store.prune({ keepLast: 1, keepLabelled: true }), 'wip-snapshot-unknown');
    assert.equal(git(dir, ['rev-parse', 'refs/chant/wip/main']).trim(), before, 'nothing pruned');
  });
});
