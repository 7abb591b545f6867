import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, it } from 'node:test';
import { WIP_ERROR_CODES } from '../lib/errors.js';
import { assertValidDocument, BIN, git, makeRepo, runBin, runCli, stateOf, tempDir } from './helpers.js';

const READ_ID = 'https://intentius.io/chant/schemas/workspace/wip/v1/wip.schema.json';

function has(command: string): boolean {
  return spawnSync('sh', ['-c', `command -v ${command}`]).status === 0;
}

describe('help, for people and for programs', () => {
  it('names option values in help instead of #0', async () => {
    const dir = makeRepo();
    const save = await runCli(dir, ['workspace', 'wip', 'save', '--help']);
    assert.equal(save.code, 0);
    assert.match(save.stdout, /--label <text>/);
    assert.match(save.stdout, /--by <principal>/);
    assert.match(save.stdout, /chant workspace wip save \[--json\] \[--label <text>\] \[--by <principal>\]/);
    const read = await runCli(dir, ['workspace', 'wip', '--help']);
    assert.match(read.stdout, /--branch <branch>/);
    for (const run of [save, read]) assert.doesNotMatch(run.stdout, /#0/);
  });

  it('answers group help for chant workspace and chant workspace wip with exit 0, listing the verbs', async () => {
    const dir = makeRepo();
    for (const args of [['workspace', '--help'], ['workspace', 'wip', '--help'], ['help', 'workspace'], ['--help'], ['-h'], []]) {
      const run = await runCli(dir, args);
      assert.equal(run.code, 0, `${args.join(' ')}: ${run.stdout}`);
      for (const verb of ['save', 'restore', 'push', 'fetch']) assert.match(run.stdout, new RegExp(`chant workspace wip ${verb} `), args.join(' '));
    }
  });

  it('suggests the verb or option a typo was meant to be', async () => {
    const dir = makeRepo();
    const before = stateOf(dir);
    const verb = await runCli(dir, ['workspace', 'wip', 'sav']);
    assert.equal(verb.code, 1);
    assert.equal(verb.doc.error.code, 'write-usage-invalid');
    assert.match(verb.doc.error.message, /did you mean chant workspace wip save\b/);
    const swapped = await runCli(dir, ['workspace', 'wip', 'rsetore']);
    assert.match(swapped.doc.error.message, /did you mean chant workspace wip restore\b/);
    const group = await runCli(dir, ['workspac', 'wip', 'save']);
    assert.match(group.doc.error.message, /did you mean chant workspace\b/);
    const option = await runCli(dir, ['workspace', 'wip', 'save', '--lable', 'turn:1']);
    assert.equal(option.doc.action, 'save');
    assert.match(option.doc.error.message, /has no option --lable; did you mean --label/);
    const partial = await runCli(dir, ['workspace']);
    assert.match(partial.doc.error.message, /chant workspace needs one of: wip/);
    assert.doesNotMatch(partial.doc.error.message, /one of:;/);
    for (const run of [verb, swapped, group, option, partial]) await assertValidDocument(run.doc);
    assert.deepEqual(stateOf(dir), before);
  });

  it('prints a read document for a usage error on the read, valid against the read schema', async () => {
    const dir = makeRepo();
    for (const args of [['workspace', 'wip', '--bogus'], ['workspace', 'wip', '--branch'], ['workspace', 'wip', '--label', 'x']]) {
      const run = await runCli(dir, args);
      assert.equal(run.code, 1);
      assert.equal(run.doc.$schema, READ_ID, args.join(' '));
      assert.equal(run.doc.error.code, 'write-usage-invalid');
      assert.equal('action' in run.doc, false);
      // The reference's read lists no usage code; ours does.
      await assertValidDocument(run.doc, { oursOnly: true });
    }
  });

  it('describes every verb, option and code for programs with help --json or --help --json', async () => {
    const dir = makeRepo();
    for (const args of [['help', '--json'], ['--help', '--json'], ['workspace', 'wip', '--help', '--json']]) {
      const run = await runCli(dir, args);
      assert.equal(run.code, 0);
      assert.deepEqual(run.doc.codes, [...WIP_ERROR_CODES]);
      const paths = run.doc.commands.map((command: { path: string[] }) => command.path.join(' '));
      for (const path of ['workspace wip', 'workspace wip save', 'workspace wip restore', 'workspace wip push', 'workspace wip fetch']) assert.ok(paths.includes(path), path);
      const save = run.doc.commands.find((command: { path: string[] }) => command.path.join(' ') === 'workspace wip save');
      assert.deepEqual(save.options.find((option: { name: string }) => option.name === '--label').value, 'text');
      assert.equal(save.document, 'https://intentius.io/chant/schemas/workspace/wip-write/v1/wip-write.schema.json');
      const restore = run.doc.commands.find((command: { path: string[] }) => command.path.join(' ') === 'workspace wip restore');
      assert.deepEqual(restore.positionals, [{ name: 'snapshot', required: false }, { name: 'path', required: false, repeated: true }]);
    }
  });
});

describe('shell completions made from the same definitions', () => {
  it('completes verbs, options and --branch values in bash', (t) => {
    if (!has('bash')) return t.skip('bash is not installed');
    const dir = makeRepo();
    git(dir, ['update-ref', 'refs/chant/wip/chant/work/W-001', 'HEAD']);
    const script = join(tempDir(), 'chant.bash');
    const generated = runBin(dir, ['completion', 'bash']);
    assert.equal(generated.code, 0, generated.stderr);
    writeFileSync(script, generated.stdout);
    const complete = (...words: string[]) => {
      const line = ['chant', ...words];
      const result = spawnSync('bash', ['-c', `source "$1"; shift; COMP_WORDS=("$@"); COMP_CWORD=$(($# - 1)); _chant; printf '%s\\n' "\${COMPREPLY[@]}"`, 'bash', script, ...line], { cwd: dir, encoding: 'utf8' });
      assert.equal(result.status, 0, result.stderr);
      return result.stdout.split('\n').filter((word) => word.length > 0).sort();
    };
    assert.deepEqual(complete(''), ['--help', '--version', 'completion', 'help', 'workspace']);
    assert.deepEqual(complete('workspace', 'wip', 're'), ['restore']);
    assert.deepEqual(complete('workspace', 'wip', 'sh'), ['show']);
    assert.deepEqual(complete('workspace', 'wip', ''), ['--all', '--before', '--branch', '--changes', '--help', '--json', '--limit', 'diff', 'fetch', 'prune', 'push', 'restore', 'save', 'show', 'storage']);
    assert.deepEqual(complete('workspace', 'wip', 'save', '--label', 'turn:1', '--'), ['--by', '--deadline', '--help', '--json', '--label', '--max-file-size', '--prune', '--scan', '--timeout']);
    assert.deepEqual(complete('workspace', 'wip', '--branch', 'chant/'), ['chant/work/W-001']);
    assert.deepEqual(complete('completion', ''), ['--help', 'bash', 'fish', 'zsh']);
  });

  it('writes zsh and fish scripts that their shells parse, when they are installed', (t) => {
    const dir = makeRepo();
    for (const shell of ['zsh', 'fish'] as const) {
      const generated = runBin(dir, ['completion', shell]);
      assert.equal(generated.code, 0);
      assert.match(generated.stdout, /workspace/);
      assert.match(generated.stdout, /--label/);
      if (!has(shell)) {
        t.diagnostic(`${shell} is not installed: its script was generated, not parsed`);
        continue;
      }
      const file = join(tempDir(), `chant.${shell}`);
      writeFileSync(file, generated.stdout);
      const parsed = spawnSync(shell, shell === 'zsh' ? ['-n', file] : ['--no-execute', file], { encoding: 'utf8' });
      assert.equal(parsed.status, 0, parsed.stderr);
    }
    const unknown = runBin(dir, ['completion', 'ksh']);
    assert.equal(unknown.code, 1);
    assert.equal(unknown.doc.error.code, 'write-usage-invalid');
  });
});

describe('no stack trace in any case', () => {
  it('keeps the exit code and the write when the reader of stdout has gone away', (t) => {
    if (!has('bash')) return t.skip('bash is not installed');
    const dir = makeRepo();
    // `true` exits at once: by the time chant writes, nothing reads the pipe (EPIPE).
    const result = spawnSync('bash', ['-c', '{ sleep 0.3; "$0" "$1" workspace wip save --label turn:1; echo "exit=$?" >&2; } | true', process.execPath, BIN], { cwd: dir, encoding: 'utf8' });
    assert.match(result.stderr, /^exit=0\n$/, result.stderr);
    assert.match(git(dir, ['log', '-1', '--format=%B', 'refs/chant/wip/main']), /Chant-Wip-Label: turn:1/, 'the snapshot was written and kept');
    const refused = spawnSync('bash', ['-c', '{ sleep 0.3; "$0" "$1" workspace wip restore 0000000; echo "exit=$?" >&2; } | true', process.execPath, BIN], { cwd: dir, encoding: 'utf8' });
    assert.match(refused.stderr, /^exit=1\n$/, refused.stderr);
  });

  it('says git-failed, naming git, when git is not on the PATH', () => {
    const dir = makeRepo();
    const empty = tempDir();
    for (const args of [['workspace', 'wip', 'save'], ['workspace', 'wip', 'show', 'HEAD'], ['workspace', 'wip', 'push']]) {
      const run = runBin(dir, args, { ...process.env, PATH: empty });
      assert.equal(run.code, 1, run.stderr);
      assert.equal(run.stderr, '');
      assert.equal(run.doc.error.code, 'git-failed');
      assert.match(run.doc.error.message, /git could not be started .*not on the PATH/);
      assert.doesNotMatch(run.doc.error.message, /\bat \S+ \(|node:internal/);
    }
    // The read of a plain checkout takes the checkout, the refs and the new commits from their
    // files: with nothing git must answer, it needs no git at all.
    const read = runBin(dir, ['workspace', 'wip', '--json'], { ...process.env, PATH: empty });
    assert.equal(read.code, 0, read.stderr);
    assert.deepEqual(read.doc.branches, []);
  });

  it('answers not-a-git-repository when the folder it runs in was deleted', (t) => {
    if (!has('bash')) return t.skip('bash is not installed');
    const parent = tempDir();
    const gone = join(parent, 'gone');
    mkdirSync(gone);
    for (const [args, schema] of [[['workspace', 'wip', '--json'], READ_ID], [['workspace', 'wip', 'save'], 'wip-write']] as const) {
      const result = spawnSync('bash', ['-c', 'cd "$0" && rmdir "$0" && exec "$@"', gone, process.execPath, BIN, ...args], { encoding: 'utf8' });
      mkdirSync(gone);
      assert.equal(result.status, 1, result.stderr);
      assert.equal(result.stderr, '');
      const doc = JSON.parse(result.stdout);
      assert.ok(doc.$schema.includes(schema));
      assert.equal(doc.error.code, 'not-a-git-repository');
    }
  });

  it('turns an unexpected exception into an internal-error document', async () => {
    const dir = makeRepo();
    const hostile = new Proxy({}, { get() { throw new TypeError('the environment cannot be read'); } }) as NodeJS.ProcessEnv;
    const run = await runCli(dir, ['workspace', 'wip', 'save', '--by', 'github:alex'], hostile);
    assert.equal(run.code, 1);
    assert.equal(run.stderr, '');
    assert.equal(run.doc.error.code, 'internal-error');
    assert.match(run.doc.error.message, /TypeError: the environment cannot be read/);
    await assertValidDocument(run.doc, { oursOnly: true });
  });
});
