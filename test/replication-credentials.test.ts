// Credentials end to end, as an agent host runs chant: the built bin, on a real terminal (script(1)
// gives it one, so a prompt would have somewhere to go), against lighttpd with Basic auth, with a
// GIT_ASKPASS credential broker. A missing credential fails in seconds without a prompt; a wrong
// one is refused in seconds; the broker's password appears nowhere chant writes, progress on the
// terminal included.
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { chmodSync, existsSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { test } from 'node:test';
import { BIN, git, makeRepo, tempDir } from './helpers.js';
import { missingProgram, startLighttpd } from './remotes.js';

const USER = 'broker';
const PASSWORD = 'Brokered-9c2e71';
const WRONG = 'Not-The-Password-4b1d';
/** A refusal must come at once: no prompt, no wait for one. */
const SECONDS = 10_000;

function declaration(): string {
  return `${JSON.stringify({ members: [{ name: 'app', box: { replicate: { remote: 'origin', on: ['save'] } } }] })}\n`;
}

/** A checkout with a work branch, holding the declaration, `url` as origin. */
function checkout(url: string): string {
  const dir = makeRepo({ 'chant.workspace.json': declaration(), 'notes.txt': 'turn 1\n' });
  git(dir, ['checkout', '-q', '-b', 'chant/work/W-001']);
  git(dir, ['remote', 'add', 'origin', url]);
  return dir;
}

/** A GIT_ASKPASS broker answering `password` (none: it has nothing for this remote), logging each question. */
function broker(password: string | null): { path: string; asked: () => string[] } {
  const dir = tempDir();
  const path = join(dir, 'broker.sh');
  const log = join(dir, 'asked.log');
  const answer = password === null ? 'exit 1' : `case "$1" in Username*) echo ${USER} ;; *) echo ${password} ;; esac`;
  writeFileSync(path, `#!/bin/sh\necho "$1" >> '${log}'\n${answer}\n`);
  chmodSync(path, 0o755);
  return { path, asked: () => (existsSync(log) ? readFileSync(log, 'utf8').split('\n').filter((line) => line.length > 0) : []) };
}

interface Run {
  ms: number;
  code: number | null;
  /** Everything the terminal showed: the document, git's progress, anything prompted. */
  screen: string;
  doc: any;
}

/** Runs the bin on a terminal of its own (script(1)), with `env` added to the host's. */
function onTerminal(cwd: string, args: readonly string[], env: Record<string, string>): Run {
  const command = [process.execPath, BIN, ...args].map((arg) => `'${arg.replace(/'/g, `'\\''`)}'`).join(' ');
  const started = Date.now();
  // stdin stays open and empty: a prompt that read it would wait, and the timeout would say so.
  const result = spawnSync('script', ['-qefc', command, '/dev/null'], { cwd, env: { ...process.env, ...env }, encoding: 'utf8', timeout: 60_000, input: '' });
  const ms = Date.now() - started;
  const screen = `${result.stdout ?? ''}${result.stderr ?? ''}`;
  const start = screen.indexOf('{');
  const end = screen.lastIndexOf('}');
  let doc: any;
  try {
    doc = JSON.parse(screen.slice(start, end + 1).replace(/\r\n/g, '\n'));
  } catch {
    doc = undefined;
  }
  return { ms, code: result.status, screen, doc };
}

function skipReason(): string | null {
  return missingProgram('lighttpd') ?? missingProgram('script');
}

test('a broker with no credential for the remote: push, fetch and a save\'s push fail in seconds and nothing prompts, on a terminal', async (t) => {
  const missing = skipReason();
  if (missing !== null) return t.skip(missing);
  const server = await startLighttpd({ auth: { user: USER, password: PASSWORD } });
  const url = server.repository('empty-handed.git');
  const dir = checkout(url);
  const empty = broker(null);
  for (const env of [{ GIT_ASKPASS: empty.path }, {}]) {
    const runs = {
      save: onTerminal(dir, ['workspace', 'wip', 'save', '--label', 'turn:1', '--json'], env),
      push: onTerminal(dir, ['workspace', 'wip', 'push', '--json'], env),
      fetch: onTerminal(checkout(url), ['workspace', 'wip', 'fetch', '--json'], env),
    };
    for (const [what, run] of Object.entries(runs)) {
      t.diagnostic(`${what} (${env.GIT_ASKPASS === undefined ? 'no broker' : 'broker without a credential'}): ${run.ms} ms`);
      assert.ok(run.ms < SECONDS, `${what} took ${run.ms} ms: ${run.screen}`);
      assert.equal(run.code, 0, run.screen);
      // A prompt starts a line of its own; the reasons quote git's "could not read Username for ...".
      assert.doesNotMatch(run.screen, /(?:^|\n)(?:Username|Password) for '/, 'nothing prompted');
    }
    assert.match(runs.save.doc.replication.rejected[0].reason, /could not read Username|terminal prompts disabled|authentication failed/i);
    assert.match(runs.push.doc.replication.rejected[0].reason, /could not read Username|terminal prompts disabled|authentication failed/i);
    assert.match(runs.fetch.doc.failed, /could not read Username|terminal prompts disabled|authentication failed/i);
  }
  assert.ok(empty.asked().some((question) => /^Username for /.test(question)), `the broker was asked: ${empty.asked().join(' | ')}`);
  assert.equal(git(join(server.base, 'empty-handed.git'), ['for-each-ref']), '');
});

test('a broker\'s wrong password is refused in seconds, and its right one works; neither is ever shown', async (t) => {
  const missing = skipReason();
  if (missing !== null) return t.skip(missing);
  const server = await startLighttpd({ auth: { user: USER, password: PASSWORD } });
  const url = server.repository('brokered.git');
  const dir = checkout(url);

  const wrong = broker(WRONG);
  const refused = [
    onTerminal(dir, ['workspace', 'wip', 'save', '--json'], { GIT_ASKPASS: wrong.path }),
    onTerminal(dir, ['workspace', 'wip', 'push', '--json'], { GIT_ASKPASS: wrong.path }),
    onTerminal(checkout(url), ['workspace', 'wip', 'fetch', '--json'], { GIT_ASKPASS: wrong.path }),
  ];
  for (const run of refused) {
    assert.ok(run.ms < SECONDS, `took ${run.ms} ms: ${run.screen}`);
    assert.equal(run.code, 0, run.screen);
    assert.ok(!run.screen.includes(WRONG), `the password was shown: ${run.screen}`);
  }
  assert.match(refused[1]?.doc.replication.rejected[0].reason, /authentication failed/i);
  assert.match(refused[2]?.doc.failed, /authentication failed/i);
  assert.ok(wrong.asked().some((question) => /^Password for /.test(question)), 'the broker gave its password');

  // The right password: the push goes with git's progress on the terminal, and the password is nowhere.
  const right = broker(PASSWORD);
  const pushed = onTerminal(dir, ['workspace', 'wip', 'push', '--json'], { GIT_ASKPASS: right.path });
  assert.equal(pushed.code, 0, pushed.screen);
  assert.deepEqual(pushed.doc.replication.rejected, []);
  assert.equal(pushed.doc.replication.pushed.length, 2, pushed.screen);
  assert.match(pushed.screen, /Writing objects/, 'git\'s progress was on the terminal');
  const fetched = onTerminal(checkout(url), ['workspace', 'wip', 'fetch', '--json'], { GIT_ASKPASS: right.path });
  assert.equal(fetched.doc.failed, null, fetched.screen);
  assert.equal(fetched.doc.refs.length, 2);
  for (const run of [pushed, fetched]) assert.ok(!run.screen.includes(PASSWORD), `the password was shown: ${run.screen}`);
});
