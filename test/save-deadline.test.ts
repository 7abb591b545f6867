// Every save has a deadline: past it the save is refused with wip-timeout, names the step that
// ran out, and leaves nothing behind (no ref moved, no lock, no temporary index, no partial pack,
// no process). A filter that leaves a process behind never keeps a save waiting.
import { BIN, git, makeRepo, parseDocument, runCli, writeFiles } from './helpers.js';
import { pidsIn, survivors } from './processes.js';
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { chmodSync, readdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, it } from 'node:test';
import { DEFAULT_SAVE_TIMEOUT_MS, isWipError, WipStore } from '../lib/index.js';

const STAGINGS = ['index', 'status'] as const;

/** A checkout whose *.slow files go through a clean filter running `body` (a shell script); the pids it notes. */
function filtered(body: string): { dir: string; pids: string } {
  const dir = makeRepo({ 'README.md': 'hello\n', '.gitattributes': '*.slow filter=slow\n' });
  const pids = join(dir, '..', `pids-${Math.random().toString(36).slice(2)}`);
  const filter = join(dir, '..', `filter-${Math.random().toString(36).slice(2)}.sh`);
  writeFileSync(filter, `#!/bin/sh\n${body}\n`);
  chmodSync(filter, 0o755);
  git(dir, ['config', 'filter.slow.clean', `PIDS='${pids}' '${filter}'`]);
  writeFiles(dir, { 'work.txt': 'work\n', 'data.slow': 'slow data\n' });
  return { dir, pids };
}

/** What a refused save must leave as it was: the refs, chant's files in .git, git's temporaries and locks. */
function traces(dir: string): { refs: string; chant: string[]; temporaries: string[] } {
  const gitDir = join(dir, '.git');
  const temporaries: string[] = [];
  const walk = (folder: string): void => {
    for (const entry of readdirSync(folder, { withFileTypes: true })) {
      const path = join(folder, entry.name);
      if (entry.isDirectory()) walk(path);
      else if (/^tmp_|\.lock$/.test(entry.name)) temporaries.push(path);
    }
  };
  walk(gitDir);
  return {
    refs: git(dir, ['for-each-ref', '--format=%(refname) %(objectname)']),
    chant: readdirSync(gitDir).filter((name) => name.startsWith('chant-wip')),
    temporaries,
  };
}

describe('the save deadline', () => {
  for (const staging of STAGINGS) {
    it(`refuses a save past its deadline with wip-timeout naming the step, and leaves nothing behind (${staging} staging)`, async () => {
      // A clean filter that sleeps: it makes no progress, and would hold the save for ten minutes.
      const { dir, pids } = filtered('echo $$ >> "$PIDS"\nsleep 600 &\necho $! >> "$PIDS"\nwait');
      const before = traces(dir);
      const started = Date.now();
      const run = await runCli(dir, ['workspace', 'wip', 'save', '--deadline', '2s'], { ...process.env, CHANT_WIP_STAGING: staging });
      const took = Date.now() - started;
      assert.equal(run.code, 1, run.stdout);
      assert.equal(run.doc.error.code, 'wip-timeout', run.stdout);
      assert.match(run.doc.error.message, /2 s deadline/);
      assert.match(run.doc.error.message, staging === 'index' ? /staging the working tree \(git add\)/ : /hashing changed files \(git hash-object\)/);
      assert.match(run.doc.error.message, /nothing was written/);
      assert.ok(took < 30_000, `refused in ${took} ms, not after the filter's 600 s`);
      assert.deepEqual(traces(dir), before, 'no ref moved, no lock, no temporary index, no partial object or pack');
      const started2 = pidsIn(pids);
      assert.ok(started2.length >= 2, 'the filter and its sleep started');
      assert.deepEqual(await survivors(started2), [], 'the filter and what it started are gone');
    });
  }

  it('returns a save promptly when a filter leaves a process behind holding git\'s standard error', async () => {
    const { dir, pids } = filtered('sleep 600 >/dev/null </dev/null &\necho $! >> "$PIDS"\ncat');
    const started = Date.now();
    const saved = await new WipStore({ cwd: dir, staging: 'index' }).save({});
    const took = Date.now() - started;
    assert.ok(took < 30_000, `saved in ${took} ms, not when the process holding stderr ends`);
    assert.match(git(dir, ['ls-tree', '-r', '--name-only', saved.snapshot.commit]), /^data\.slow$/m);
    assert.deepEqual(await survivors(pidsIn(pids)), [], 'the process left behind was stopped');
  });

  it('is settable in the SDK, the CLI and the declaration, and refuses a value that is no duration', async () => {
    assert.equal(DEFAULT_SAVE_TIMEOUT_MS, 300_000);
    const { dir } = filtered('sleep 600');
    const sdk = await new WipStore({ cwd: dir, saveTimeout: 1_500 }).save({}).then(() => null, (error: unknown) => error);
    assert.ok(isWipError(sdk, 'wip-timeout'), String(sdk));
    assert.match((sdk as Error).message, /1\.5 s deadline/);
    writeFiles(dir, { 'chant.workspace.json': JSON.stringify({ wip: { saveTimeout: '1s' } }) });
    const declared = await new WipStore({ cwd: dir }).save({}).then(() => null, (error: unknown) => error);
    assert.ok(isWipError(declared, 'wip-timeout'), String(declared));
    assert.match((declared as Error).message, /1 s deadline/);
    for (const bad of ['', 'soon', '-1s', '5 minutes', '0']) {
      const run = await runCli(dir, ['workspace', 'wip', 'save', `--deadline=${bad}`]);
      assert.equal(run.code, 1, `${bad}: ${run.stdout}`);
      assert.equal(run.doc.error.code, 'write-usage-invalid', bad);
    }
    for (const [option, bad] of [['--deadline', 'soon'], ['--max-file-size', '1T'], ['--deadline', '99999999999999999999h'], ['--max-file-size', '99999999999999999999G']] as const) {
      const run = await runCli(dir, ['workspace', 'wip', 'save', option, bad]);
      assert.equal(run.doc.error.code, 'write-usage-invalid', run.stdout);
      assert.ok(run.doc.error.message.startsWith(`${option} must be `), `the message names the option given: ${run.doc.error.message}`);
    }
    writeFiles(dir, { 'chant.workspace.json': JSON.stringify({ wip: { saveTimeout: 'soon' } }) });
    const invalid = spawnSync(process.execPath, [BIN, 'workspace', 'wip', 'save'], { cwd: dir, encoding: 'utf8' });
    assert.equal(parseDocument(invalid.stdout).error.code, 'declaration-invalid', invalid.stdout);
  });

  it('takes a deadline longer than a timer holds (600h, past 2^31 ms) as far away, not as already passed', async () => {
    const dir = makeRepo({ 'README.md': 'hello\n' });
    writeFiles(dir, { 'work.txt': 'work\n' });
    const saved = await new WipStore({ cwd: dir, saveTimeout: '600h' }).save({ label: 'sdk' });
    assert.equal(saved.created, true);
    writeFiles(dir, { 'work.txt': 'more work\n' });
    const run = spawnSync(process.execPath, [BIN, 'workspace', 'wip', 'save', '--deadline', '99999999h'], { cwd: dir, encoding: 'utf8' });
    assert.equal(run.status, 0, run.stdout);
    assert.equal(parseDocument(run.stdout).created, true, run.stdout);
    assert.equal(run.stderr, '', 'no warning from node on stderr');
  });
});
