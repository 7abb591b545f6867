import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { chmodSync, existsSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, it } from 'node:test';
import { GitProcessRunner } from '../lib/git/runner.js';
import { sshEnvironment } from '../lib/git/ssh.js';
import { git, makeRepo, ROOT, tempDir } from './helpers.js';

// ssh never prompts, however the host names it: each way of naming ssh gets the batch option its
// variant takes, and nothing git starts has a terminal to prompt on. The "ssh" programs here are
// scripts that write down how they were called, whether they could open a terminal, and fail.

const tools = tempDir('chant-ssh-tools-');
const log = join(tools, 'calls.log');

/** A fake ssh program named `name`: logs its arguments (NUL-separated) and whether /dev/tty opens. */
function fakeSsh(name: string): string {
  const path = join(tools, name);
  writeFileSync(path, [
    '#!/bin/sh',
    `if (exec 3<>/dev/tty) 2>/dev/null; then tty=tty; else tty=no-tty; fi`,
    `printf '%s\\0' "$tty" "$@" >> '${log}'`,
    `printf '\\n' >> '${log}'`,
    // Asked to, it waits for a line from the terminal, as ssh asking for a passphrase would.
    'if [ "$tty" = tty ] && [ -n "$FAKE_SSH_READ" ]; then read -r answer < /dev/tty; fi',
    'echo "fake ssh: cannot reach the host" >&2',
    'exit 255',
    '',
  ].join('\n'));
  chmodSync(path, 0o755);
  return path;
}

/** Each call the fake programs logged: whether a terminal opened, then the arguments. */
function calls(): Array<{ tty: string; args: string[] }> {
  if (!existsSync(log)) return [];
  return readFileSync(log, 'utf8').split('\n').filter((line) => line.length > 0).map((line) => {
    const [tty = '', ...args] = line.split('\0').slice(0, -1);
    return { tty, args };
  });
}

/** Runs `git ls-remote` over ssh:// through the runner with the environment chant builds. */
async function lsRemote(dir: string, ambient: Record<string, string>, settings: { sshCommand?: string; sshVariant?: string } = {}): Promise<Array<{ tty: string; args: string[] }>> {
  rmSync(log, { force: true });
  const env = sshEnvironment({ sshCommand: settings.sshCommand ?? null, sshVariant: settings.sshVariant ?? null }, ambient);
  const saved = { ...process.env };
  Object.assign(process.env, ambient);
  try {
    await assert.rejects(new GitProcessRunner(dir).run(['ls-remote', 'ssh://git@127.0.0.1/repo.git'], { env, timeoutMs: 30_000 }), /fake ssh: cannot reach the host/);
  } finally {
    for (const key of Object.keys(ambient)) delete process.env[key];
    Object.assign(process.env, saved);
  }
  const seen = calls();
  assert.ok(seen.length > 0, 'the fake ssh ran');
  for (const call of seen) assert.equal(call.tty, 'no-tty', `no terminal to prompt on: ${call.args.join(' ')}`);
  return seen;
}

const BATCH = ['-o', 'BatchMode=yes'];
const hasRun = (args: readonly string[], run: readonly string[]) => args.some((_, i) => run.every((word, j) => args[i + j] === word));

describe('ssh in batch mode', () => {
  const dir = makeRepo();
  const ssh = fakeSsh('ssh');
  const plink = fakeSsh('plink');
  const wrapper = fakeSsh('my ssh wrapper');

  it('adds BatchMode=yes to a GIT_SSH program named ssh', async () => {
    const [call] = (await lsRemote(dir, { GIT_SSH: ssh })).slice(-1);
    assert.ok(hasRun(call!.args, BATCH), call!.args.join(' '));
    assert.ok(call!.args.includes('git@127.0.0.1'));
  });

  it('adds -batch to a GIT_SSH program named plink, and to ssh.variant=putty', async () => {
    const [call] = (await lsRemote(dir, { GIT_SSH: plink })).slice(-1);
    assert.ok(call!.args.includes('-batch') && !call!.args.includes('BatchMode=yes'), call!.args.join(' '));
    const [putty] = (await lsRemote(dir, { GIT_SSH: wrapper }, { sshVariant: 'putty' })).slice(-1);
    assert.ok(putty!.args.includes('-batch'), putty!.args.join(' '));
  });

  it('adds nothing a simple GIT_SSH program would not take, which still has no terminal', async () => {
    const seen = await lsRemote(dir, { GIT_SSH: wrapper });
    const last = seen.at(-1)!;
    assert.ok(!last.args.includes('BatchMode=yes'), last.args.join(' '));
    assert.deepEqual(last.args, ['git@127.0.0.1', "git-upload-pack '/repo.git'"], 'a host and a command, as git calls a simple program');
    const simple = (await lsRemote(dir, { GIT_SSH: ssh, GIT_SSH_VARIANT: 'simple' })).at(-1)!;
    assert.deepEqual(simple.args, ['git@127.0.0.1', "git-upload-pack '/repo.git'"], `GIT_SSH_VARIANT=simple: ${simple.args.join(' ')}`);
  });

  it('adds BatchMode=yes to a GIT_SSH program of another name when ssh.variant says ssh', async () => {
    const call = (await lsRemote(dir, { GIT_SSH: wrapper }, { sshVariant: 'ssh' })).at(-1)!;
    assert.ok(hasRun(call.args, BATCH), call.args.join(' '));
  });

  it('adds BatchMode=yes to GIT_SSH_COMMAND and core.sshCommand, keeping their own options, GIT_SSH_COMMAND first', async () => {
    const quoted = `'${wrapper}' -i /nonexistent/key`;
    const fromEnv = (await lsRemote(dir, { GIT_SSH_COMMAND: quoted, GIT_SSH: plink })).at(-1)!;
    assert.ok(hasRun(fromEnv.args, ['-i', '/nonexistent/key']) && hasRun(fromEnv.args, BATCH), fromEnv.args.join(' '));
    const fromConfig = (await lsRemote(dir, { GIT_SSH: plink }, { sshCommand: `${ssh} -4` })).at(-1)!;
    assert.ok(hasRun(fromConfig.args, ['-4']) && hasRun(fromConfig.args, BATCH), `core.sshCommand wins over GIT_SSH, as in git: ${fromConfig.args.join(' ')}`);
  });

  it('never waits on a terminal, even when chant runs on one and ssh asks it for a passphrase', (t) => {
    if (spawnSync('script', ['--version']).status !== 0) {
      t.skip('util-linux script is not installed, so no terminal can be given to the test');
      return;
    }
    const program = join(tools, 'probe.mjs');
    writeFileSync(program, [
      `import { GitProcessRunner } from ${JSON.stringify(join(ROOT, 'dist', 'lib', 'index.js'))};`,
      `const out = await new GitProcessRunner(${JSON.stringify(dir)}).run(['ls-remote', 'ssh://git@127.0.0.1/repo.git'], { env: { GIT_SSH_COMMAND: ${JSON.stringify(ssh)} } }).then(() => 'ok', (error) => error.summary);`,
      'console.log(out);',
      '',
    ].join('\n'));
    if (!existsSync(join(ROOT, 'dist', 'lib', 'index.js'))) {
      t.skip('dist/ is not built (npm run build)');
      return;
    }
    // On a terminal, plain git hands it to ssh: the fake sees one (and is not asked to read).
    rmSync(log, { force: true });
    const control = spawnSync('script', ['-q', '-e', '-c', `GIT_SSH='${ssh}' git ls-remote ssh://git@127.0.0.1/repo.git`, '/dev/null'], { encoding: 'utf8', timeout: 60_000, cwd: dir });
    assert.equal(control.error, undefined);
    assert.equal(calls().at(-1)?.tty, 'tty', 'the control run had a terminal');
    rmSync(log, { force: true });
    const run = spawnSync('script', ['-q', '-e', '-c', `FAKE_SSH_READ=1 '${process.execPath}' '${program}'`, '/dev/null'], { encoding: 'utf8', timeout: 60_000, cwd: dir });
    assert.equal(run.error, undefined, 'returned instead of waiting on the terminal');
    assert.match(run.stdout, /fake ssh: cannot reach the host/);
    assert.equal(calls().at(-1)?.tty, 'no-tty');
    git(dir, ['status']);
  });
});
