import { BIN, git, makeRepo, refsOf, ROOT, tempDir, treeOf, writeFiles } from './helpers.js';
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { readdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, it } from 'node:test';
import { bareRemote } from './remotes.js';

interface Run {
  code: number | null;
  stdout: string;
  stderr: string;
}

function run(command: string, args: readonly string[], options: { cwd?: string; env?: NodeJS.ProcessEnv } = {}): Run {
  const result = spawnSync(command, args, { cwd: options.cwd ?? ROOT, env: options.env ?? process.env, encoding: 'utf8', timeout: 120_000 });
  return { code: result.status, stdout: result.stdout, stderr: result.stderr };
}

function example(name: string, args: readonly string[], env: NodeJS.ProcessEnv = process.env): Run {
  return name.endsWith('.sh')
    ? run('bash', [join(ROOT, 'examples', name), ...args], { env })
    : run(process.execPath, ['--import', 'tsx', join(ROOT, 'examples', name), ...args], { env });
}

/** The environment without CHANT, so a script takes its default, the bin built here. */
function withoutChant(): NodeJS.ProcessEnv {
  const env = { ...process.env };
  delete env.CHANT;
  return env;
}

/** The subjects of a ref's first-parent chain, newest first. */
function chain(dir: string, ref: string): string[] {
  return git(dir, ['log', '--first-parent', '--format=%s', ref]).trim().split('\n');
}

function rev(dir: string, name: string): string {
  return git(dir, ['rev-parse', '--verify', '--quiet', name], { allowFail: true }).trim();
}

const declaration = (replicate: Record<string, unknown>) => `${JSON.stringify({ members: [{ name: 'app', box: { replicate } }] }, null, 2)}\n`;

/** A box on a work branch with a bare origin holding main, under a replicate policy. */
function box(replicate: Record<string, unknown> = {}): { dir: string; remote: string } {
  const remote = bareRemote();
  const dir = makeRepo({ 'README.md': 'project\n', '.gitignore': '*.log\n', 'chant.workspace.json': declaration(replicate), 'src/app.ts': 'export const v = 1;\n' });
  git(dir, ['remote', 'add', 'origin', remote]);
  git(dir, ['push', '-q', 'origin', 'main']);
  git(dir, ['checkout', '-q', '-b', 'chant/work/W-001']);
  return { dir, remote };
}

describe('examples/studio-checkpoints.ts', () => {
  it('saves two turns, lists them, restores turn 1 and undoes it, leaving the checkpoints on the wip ref', () => {
    const dir = makeRepo();
    const head = rev(dir, 'HEAD');
    const result = example('studio-checkpoints.ts', [dir]);
    assert.equal(result.code, 0, result.stderr);
    const lines = result.stdout.trim().split('\n');
    assert.equal(lines.length, 5, result.stdout);
    assert.match(lines[2] ?? '', /^2 checkpoints on main: [0-9a-f]{12} turn:2, [0-9a-f]{12} turn:1$/);
    assert.equal(readFileSync(join(dir, 'studio-notes.md'), 'utf8'), 'Second draft, which the user will not like.\n', 'the undo put turn 2 back');
    const subjects = chain(dir, 'refs/chant/wip/main');
    const turn2 = git(dir, ['rev-parse', 'refs/chant/wip/main~1']).trim();
    const first = git(dir, ['rev-parse', 'refs/chant/wip/main~2']).trim();
    assert.deepEqual(subjects, [`chant wip: main (before ${turn2.slice(0, 12)})`, 'chant wip: main (turn:2)', 'chant wip: main (turn:1)', 'initial'],
      'turn 2 was the restore\'s checkpoint; undoing it took a checkpoint of turn 1');
    assert.match(lines[3] ?? '', new RegExp(`^restored ${first.slice(0, 12)} turn:1: studio-notes.md now says "First draft.\\\\n"$`));
    assert.equal(git(dir, ['log', '-1', '--format=%(trailers:key=Chant-Wip-By,valueonly)', turn2]).trim(), 'github:alex');
    assert.equal(rev(dir, 'HEAD'), head, 'HEAD never moved');
    assert.equal(git(dir, ['status', '--porcelain']), '?? studio-notes.md\n', 'restored work reads as uncommitted');
  });

  it('makes its own scratch repository when given none, and removes it', () => {
    const tmp = tempDir('chant-examples-tmp-');
    const result = example('studio-checkpoints.ts', [], { ...process.env, TMPDIR: tmp });
    assert.equal(result.code, 0, result.stderr);
    assert.match(result.stdout, /^turn 1: saved [0-9a-f]{12} turn:1 \(created true\)$/m);
    assert.match(result.stdout, /^undid it by restoring the checkpoint [0-9a-f]{12} turn:2: studio-notes.md says "Second draft/m);
    assert.deepEqual(readdirSync(tmp).filter((name) => name.startsWith('studio-checkpoints-')), [], 'the scratch repository is gone');
  });

  it('type-checks against the package entry, strict', () => {
    const tsc = join(ROOT, 'node_modules', 'typescript', 'bin', 'tsc');
    const result = run(process.execPath, [tsc, '--ignoreConfig', '--noEmit', '--strict', '--noUncheckedIndexedAccess', '--target', 'es2022', '--module', 'nodenext', '--moduleResolution', 'nodenext',
      '--types', 'node', '--skipLibCheck', '--verbatimModuleSyntax', join(ROOT, 'examples', 'studio-checkpoints.ts')]);
    assert.equal(result.code, 0, result.stdout + result.stderr);
  });
});

describe('examples/timeline.ts', () => {
  it('builds the timeline through the SDK alone: rows with change counts, a turn\'s diff, a previewed restore and its undo, one file back and its undo, heard as events', () => {
    const dir = makeRepo();
    const head = rev(dir, 'HEAD');
    const result = example('timeline.ts', [dir]);
    assert.equal(result.code, 0, result.stderr);
    const lines = result.stdout.trim().split('\n');
    assert.equal(lines[0], 'timeline of main:');
    assert.match(lines[1] ?? '', /^ {2}[0-9a-f]{12} turn:3 1 file \+2 -1$/);
    assert.match(lines[2] ?? '', /^ {2}[0-9a-f]{12} turn:2 2 files \+2 -0$/);
    assert.match(lines[3] ?? '', /^ {2}[0-9a-f]{12} turn:1 1 file \+1 -0$/);
    assert.ok(lines.includes('turn:3 modified timeline/code.ts +2 -1'), result.stdout);
    assert.ok(lines.includes('restoring turn:2 writes timeline/code.ts; removes nothing; nothing in the way'), result.stdout);
    assert.ok(lines.includes('restored turn:2: wrote timeline/code.ts; timeline/code.ts says "export const answer = 41;\\n"'), result.stdout);
    assert.ok(lines.includes('restored timeline/plan.md from turn:1: "step 1\\n"; timeline/code.ts still "export const answer = 42;\\nexport const extra = true;\\n"'), result.stdout);
    assert.match(lines.at(-1) ?? '', /^events: snapshot turn:1, snapshot turn:2, snapshot turn:3, restore turn:2, restore turn:3, restore turn:1, restore before [0-9a-f]{12}$/);
    assert.equal(readFileSync(join(dir, 'timeline', 'plan.md'), 'utf8'), 'step 1\nstep 2\n', 'the second undo put turn 3\'s plan back');
    assert.equal(readFileSync(join(dir, 'timeline', 'code.ts'), 'utf8'), 'export const answer = 42;\nexport const extra = true;\n', 'the undo put turn 3 back');
    assert.equal(rev(dir, 'HEAD'), head, 'HEAD never moved');
  });

  it('type-checks against the package entry, strict', () => {
    const tsc = join(ROOT, 'node_modules', 'typescript', 'bin', 'tsc');
    const result = run(process.execPath, [tsc, '--ignoreConfig', '--noEmit', '--strict', '--noUncheckedIndexedAccess', '--target', 'es2022', '--module', 'nodenext', '--moduleResolution', 'nodenext',
      '--types', 'node', '--skipLibCheck', '--verbatimModuleSyntax', join(ROOT, 'examples', 'timeline.ts')]);
    assert.equal(result.code, 0, result.stdout + result.stderr);
  });
});

describe('examples/host-turn.sh', () => {
  it('saves the turn with its label and principal, reports the push the policy makes, and the remote holds the snapshot', () => {
    const { dir, remote } = box();
    // Sizes differ from the committed files': a same-size edit within the second of the commit is
    // git's racy case, which is not what these tests are about.
    writeFiles(dir, { 'notes.md': 'turn 7 notes\n', 'src/app.ts': 'export const v = 7 * 7;\n' });
    const result = example('host-turn.sh', [dir, '7', 'github:alex'], withoutChant());
    assert.equal(result.code, 0, result.stderr);
    const ref = 'refs/chant/wip/chant/work/W-001';
    const tip = rev(dir, ref);
    assert.match(result.stdout, new RegExp(`^turn 7: snapshot ${tip.slice(0, 12)} on ${ref}$`, 'm'));
    assert.match(result.stdout, /^ {2}to origin: 2 pushed, 0 rejected, 0 up to date$/m);
    assert.match(result.stdout, /^ {2}replicated: every ref is on origin$/m);
    assert.equal(git(dir, ['log', '-1', '--format=%(trailers:key=Chant-Wip-Label,valueonly)%(trailers:key=Chant-Wip-By,valueonly)', ref]), 'turn:7\ngithub:alex\n\n');
    assert.equal(git(dir, ['show', `${ref}:notes.md`]), 'turn 7 notes\n', 'the untracked file is in the snapshot');
    assert.equal(rev(remote, ref), tip, 'the remote holds the snapshot');
    assert.equal(rev(dir, 'refs/chant/replica/origin/chant/wip/chant/work/W-001'), tip, 'and chant recorded that it does');

    const again = example('host-turn.sh', [dir, '7', 'github:alex'], { ...process.env, CHANT: `${process.execPath} ${BIN}` });
    assert.equal(again.code, 0, again.stderr);
    assert.match(again.stdout, new RegExp(`^turn 7: nothing changed since ${tip.slice(0, 12)}$`, 'm'));
    assert.equal(rev(dir, ref), tip);
  });

  it('says where replication stands when the policy does not push on save', () => {
    const { dir, remote } = box({ on: ['release'] });
    const result = example('host-turn.sh', [dir, '1'], withoutChant());
    assert.equal(result.code, 0, result.stderr);
    assert.match(result.stdout, /^ {2}not yet replicated: 2 refs ahead of origin; chant workspace wip push sends them$/m);
    assert.equal(rev(remote, 'refs/chant/wip/chant/work/W-001'), '', 'nothing was pushed');
    assert.equal(git(dir, ['log', '-1', '--format=%(trailers:key=Chant-Wip-By,valueonly)', 'refs/chant/wip/chant/work/W-001']).trim(), '', 'no principal given, none recorded');
  });

  it('exits 1 with the refusal\'s code on stderr, and writes nothing', () => {
    const { dir } = box();
    git(dir, ['checkout', '-q', '--detach']);
    const before = refsOf(dir);
    const result = example('host-turn.sh', [dir, '2'], withoutChant());
    assert.equal(result.code, 1);
    assert.match(result.stderr, /^checkpoint refused: wip-no-branch: HEAD is detached/m);
    assert.equal(result.stdout, '');
    assert.equal(refsOf(dir), before);
  });
});

describe('examples/replacement-box.sh', () => {
  it('clones the remote, fetches, checks the branch out and restores, so the lost box\'s uncommitted work is back', () => {
    const { dir, remote } = box({ on: [] });
    git(dir, ['commit', '-q', '--allow-empty', '-m', 'W-001 started']);
    writeFiles(dir, { 'src/app.ts': 'export const v = 2 * 2;\n', 'README.md': null, 'notes/plan.md': 'step 1\n', 'debug.log': 'ignored\n' });
    const saved = spawnSync(process.execPath, [BIN, 'workspace', 'wip', 'save', '--label', 'turn:3'], { cwd: dir, encoding: 'utf8' });
    assert.equal(saved.status, 0, saved.stdout);
    const pushed = spawnSync(process.execPath, [BIN, 'workspace', 'wip', 'push'], { cwd: dir, encoding: 'utf8' });
    assert.equal(pushed.status, 0, pushed.stdout);
    const lost = treeOf(dir);
    delete lost['debug.log'];

    const target = join(tempDir(), 'replacement');
    const result = example('replacement-box.sh', [remote, 'chant/work/W-001', target], withoutChant());
    assert.equal(result.code, 0, result.stderr);
    assert.match(result.stdout, /^ {2}created {6}refs\/chant\/wip\/chant\/work\/W-001$/m);
    assert.match(result.stdout, /^ {2}created {6}refs\/heads\/chant\/work\/W-001$/m);
    assert.match(result.stdout, /^restored [0-9a-f]{12} \(turn:3\), taken at \d{4}-/m);
    assert.deepEqual(treeOf(target), lost, 'the working tree is the lost box\'s, ignored files aside');
    const wip = 'refs/chant/wip/chant/work/W-001';
    const work = 'refs/heads/chant/work/W-001';
    assert.equal(rev(target, work), rev(dir, work), 'the work branch came home');
    assert.equal(rev(target, `${wip}^1`), rev(dir, wip), 'the snapshots came home, under the restore\'s checkpoint');
    assert.equal(git(target, ['log', '-1', '--format=%(trailers:key=Chant-Wip-Kind,valueonly)', wip]).trim(), 'pre-restore');
    for (const ref of [wip, work]) {
      assert.equal(rev(target, `refs/chant/replica/origin/${ref.slice('refs/'.length)}`), rev(dir, ref), `what the remote holds of ${ref} is recorded`);
    }
    assert.equal(git(target, ['symbolic-ref', 'HEAD']).trim(), 'refs/heads/chant/work/W-001');
    assert.equal(git(target, ['status', '--porcelain']), ' D README.md\n M src/app.ts\n?? notes/\n', 'everything restored reads as uncommitted');
  });

  it('stops with the refusal when the remote holds no snapshot of the branch', () => {
    const { remote } = box({ on: [] });
    const target = join(tempDir(), 'replacement');
    const result = example('replacement-box.sh', [remote, 'main', target], withoutChant());
    assert.equal(result.code, 1);
    assert.match(result.stderr, /chant workspace wip restore: wip-none: /);
  });
});

describe('npm run demo', () => {
  it('tells the whole story on a machine with no git identity, and leaves nothing behind', () => {
    const home = tempDir('chant-demo-home-');
    const tmp = tempDir('chant-demo-tmp-');
    writeFileSync(join(home, '.gitconfig'), '');
    const env: NodeJS.ProcessEnv = { ...withoutChant(), HOME: home, XDG_CONFIG_HOME: join(home, '.config'), GIT_CONFIG_NOSYSTEM: '1', TMPDIR: tmp };
    for (const key of ['GIT_AUTHOR_NAME', 'GIT_AUTHOR_EMAIL', 'GIT_COMMITTER_NAME', 'GIT_COMMITTER_EMAIL', 'EMAIL']) delete env[key];
    const result = run(process.execPath, [join(ROOT, 'scripts', 'demo.mjs')], { env });
    assert.equal(result.code, 0, result.stdout + result.stderr);
    for (const step of ['save --label turn:1', 'save --label turn:2', '$ chant workspace wip\n', 'restore ', 'push --json', 'fetch --json', 'git checkout chant/work/W-001', 'restore --json']) {
      assert.ok(result.stdout.includes(step), `shows ${JSON.stringify(step)}`);
    }
    assert.match(result.stdout, /the replacement holds what the box held \(\d+ files\)/);
    assert.deepEqual(readdirSync(tmp), [], 'the scratch folder is removed');

    const json = run(process.execPath, [join(ROOT, 'scripts', 'demo.mjs'), '--json'], { env });
    assert.equal(json.code, 0, json.stderr);
    assert.equal(json.stdout.match(/^ {2}"\$schema": /gm)?.length, 8, 'every document in full');
    assert.match(json.stdout, /^ {8}\{"commit":"[0-9a-f]{40}",.*\}$/m, 'as chant printed it: the read\'s snapshots one a line');
  });
});
