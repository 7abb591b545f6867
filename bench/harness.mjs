// The bench harness: synthetic repositories, side-by-side timing with A and B alternating, and
// exact counts of git processes. Used by bench/run.mjs and by test/bench.test.ts.
import { spawnSync } from 'node:child_process';
import { mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync, chmodSync, existsSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';

export const BENCH = dirname(fileURLToPath(import.meta.url));
export const ROOT = join(BENCH, '..');
export const BIN = join(ROOT, 'dist', 'bin', 'chant.cjs');

export const ENV = {
  ...process.env,
  GIT_AUTHOR_NAME: 'Bench', GIT_AUTHOR_EMAIL: 'bench@example.com',
  GIT_COMMITTER_NAME: 'Bench', GIT_COMMITTER_EMAIL: 'bench@example.com',
  LC_ALL: 'C',
};

/** Runs a command and returns its wall time in milliseconds; throws when it fails. */
export function run(command, args, options = {}) {
  const start = process.hrtime.bigint();
  const result = spawnSync(command, args, { cwd: options.cwd, env: options.env ?? ENV, encoding: 'utf8', maxBuffer: 1 << 30, input: options.input });
  const ms = Number(process.hrtime.bigint() - start) / 1e6;
  if (result.status !== 0) throw new Error(`${command} ${args.join(' ')} failed (${result.status}): ${result.stderr}${result.stdout.slice(0, 2000)}`);
  return { ms, stdout: result.stdout };
}

export function git(cwd, ...args) {
  return run('git', args, { cwd }).stdout;
}

export function tempDir(prefix = 'chant-wip-bench-') {
  return mkdtempSync(join(tmpdir(), prefix));
}

/** The path of tracked file i of a synthetic repository: nested folders, 100 files a folder. */
export function filePath(i) {
  return `src/d${Math.floor(i / 1000)}/e${Math.floor(i / 100) % 10}/file-${i}.txt`;
}

/**
 * The path of tracked file i of a wide repository: `width` files a folder in a few folders, as
 * real repositories have (tldr-pages keeps thousands of pages a folder).
 */
export function widePath(width) {
  return (i) => `pages/p${Math.floor(i / width)}/page-${i}.md`;
}

/** A repository with `files` tracked files (nested folders, 100 a folder, unless `pathOf` says otherwise), one commit, a warm index. */
export function syntheticRepo(files, pathOf = filePath) {
  const dir = tempDir();
  git(dir, 'init', '-q', '-b', 'main', '.');
  // No automatic gc: the commit below leaves every blob loose, and from about 6,700 of them it
  // starts a detached `git gc --auto` that repacks the repository while the rows are timed
  // (minutes at 100,000 files), and packs the blobs a save's caches look for as loose objects.
  git(dir, 'config', 'gc.auto', '0');
  let folder = null;
  for (let i = 0; i < files; i += 1) {
    const path = join(dir, pathOf(i));
    if (dirname(path) !== folder) mkdirSync((folder = dirname(path)), { recursive: true });
    writeFileSync(path, `file ${i}\n`);
  }
  writeFileSync(join(dir, '.gitignore'), 'ignored/\n');
  // The index is written in a later second than every file, as in a checkout whose files were
  // written before: else each file is racily clean, and git and libgit2 read it again each time.
  const next = Math.ceil(Date.now() / 1000) * 1000 + 10;
  while (Date.now() < next) Atomics.wait(new Int32Array(new SharedArrayBuffer(4)), 0, 0, next - Date.now());
  git(dir, 'add', '-A');
  git(dir, 'commit', '-q', '-m', 'synthetic');
  git(dir, 'status', '--porcelain');
  return dir;
}

/** One round's edits: 10 files modified, 2 of them staged, 1 untracked file. */
export function editRound(dir, files, round, pathOf = filePath) {
  const picks = Array.from({ length: 10 }, (_, k) => (round * 7919 + k * 104729) % files);
  for (const i of picks) writeFileSync(join(dir, pathOf(i)), `file ${i} edited in round ${round}\n`);
  git(dir, 'add', '--', pathOf(picks[0]), pathOf(picks[1]));
  writeFileSync(join(dir, `untracked-${round}.txt`), `untracked ${round}\n`);
  return picks;
}

export function median(values) {
  const sorted = [...values].sort((a, b) => a - b);
  const mid = Math.floor(sorted.length / 2);
  return sorted.length % 2 === 1 ? sorted[mid] : (sorted[mid - 1] + sorted[mid]) / 2;
}

/**
 * Times A and B side by side: `warmup` unmeasured rounds, then `runs` measured ones, A first in
 * even rounds and B first in odd ones. `prepare(round, which)` runs untimed before each side.
 * Each side returns its milliseconds. Resolves with the medians and the ratio of medians.
 */
export async function sideBySide({ a, b, prepare = async () => {}, runs = 5, warmup = 1 }) {
  settle();
  const times = { a: [], b: [] };
  for (let round = 0; round < warmup + runs; round += 1) {
    const order = round % 2 === 0 ? ['a', 'b'] : ['b', 'a'];
    for (const which of order) {
      await prepare(round, which);
      const ms = await (which === 'a' ? a : b)(round);
      if (round >= warmup) times[which].push(ms);
    }
  }
  const ma = median(times.a);
  const mb = median(times.b);
  return { a: ma, b: mb, ratio: ma / mb, runs: times.a.length };
}

/**
 * Times several sides in one loop, as {@link sideBySide} does two: each round runs every side
 * once, the first side moving by one each round. `prepare(round, side)` runs untimed before
 * each. Resolves with each side's median and the number of measured runs.
 */
export async function roundRobin({ sides, prepare = async () => {}, runs = 5, warmup = 1 }) {
  settle();
  const names = Object.keys(sides);
  const times = Object.fromEntries(names.map((name) => [name, []]));
  for (let round = 0; round < warmup + runs; round += 1) {
    for (let k = 0; k < names.length; k += 1) {
      const name = names[(round + k) % names.length];
      await prepare(round, name);
      const ms = await sides[name](round);
      if (round >= warmup) times[name].push(ms);
    }
  }
  return { medians: Object.fromEntries(names.map((name) => [name, median(times[name])])), runs };
}

/**
 * Writes back what the file systems hold dirty (`sync`) before a loop: the repositories and
 * edits of the rows before it are then on disk, and a side that syncs (a restore syncs what its
 * undo needs) does not pay for their writeback in this loop's timed runs, where one that never
 * syncs would not. Each loop's own rounds still leave theirs, as a user's work does.
 */
function settle() {
  spawnSync('sync', [], { stdio: 'ignore' });
}

/** Times an async function in milliseconds. */
export async function timed(fn) {
  const start = process.hrtime.bigint();
  await fn();
  return Number(process.hrtime.bigint() - start) / 1e6;
}

/** A folder to put first on PATH whose `git` logs each call, and a way to read and reset the log. */
export function gitCounter() {
  const dir = tempDir('chant-wip-count-');
  const real = spawnSync('sh', ['-c', 'command -v git'], { encoding: 'utf8' }).stdout.trim();
  const log = join(dir, 'calls.log');
  // The paths are written into the script: chant hands git a curated environment, not ours.
  const quote = (text) => `'${text.replace(/'/g, `'\\''`)}'`;
  writeFileSync(join(dir, 'git'), `#!/bin/sh\nprintf '%s\\n' "$*" >> ${quote(log)}\nexec ${quote(real)} "$@"\n`);
  chmodSync(join(dir, 'git'), 0o755);
  const env = { ...ENV, PATH: `${dir}:${process.env.PATH}` };
  return {
    env,
    reset() { writeFileSync(log, ''); },
    calls() { return existsSync(log) ? readFileSync(log, 'utf8').split('\n').filter((line) => line.length > 0) : []; },
    dispose() { rmSync(dir, { recursive: true, force: true }); },
  };
}

/** Runs the chant bin with `args` in `cwd`; resolves with milliseconds and the document. */
export function chant(cwd, args, env = ENV) {
  const { ms, stdout } = run(process.execPath, [BIN, ...args], { cwd, env });
  return { ms, doc: stdout.trimStart().startsWith('{') ? JSON.parse(stdout) : stdout };
}

/** The peak resident set of a chant process, in MiB. */
export function chantPeakMiB(cwd, args) {
  const out = join(tempDir('chant-wip-rss-'), 'rss');
  run(process.execPath, ['--import', join(BENCH, 'rss.mjs'), BIN, ...args], { cwd, env: { ...ENV, CHANT_BENCH_RSS: out } });
  const kib = Number(readFileSync(out, 'utf8'));
  rmSync(dirname(out), { recursive: true, force: true });
  return kib / 1024;
}

/** A chain of `count` snapshots on refs/chant/wip/main, written by one git fast-import. */
export function snapshotChain(dir, count) {
  const head = git(dir, 'rev-parse', 'HEAD').trim();
  const parts = [];
  for (let i = 0; i < count; i += 1) {
    const message = `chant wip: main (turn:${i})\n\nChant-Wip-Branch: main\nChant-Wip-Head: ${head}\nChant-Wip-Kind: save\nChant-Wip-Label: turn:${i}\nChant-Wip-By: github:bench\n`;
    parts.push(`commit refs/chant/wip/main\nmark :${i + 1}\ncommitter Bench <bench@example.com> ${1790000000 + i} +0000\ndata ${Buffer.byteLength(message)}\n${message}`);
    // Starting from HEAD, each commit keeps its parent's tree: HEAD's, as a clean checkout's snapshot has.
    parts.push(i === 0 ? `from ${head}\n\n` : `from :${i}\nmerge ${head}\n\n`);
  }
  const stream = parts.join('');
  run('git', ['fast-import', '--quiet', '--force'], { cwd: dir, input: stream });
}

/** One more snapshot on top of refs/chant/wip/main, committed as a save would (its tree HEAD's). */
export function addSnapshot(dir, label) {
  const head = git(dir, 'rev-parse', 'HEAD').trim();
  const tip = git(dir, 'rev-parse', 'refs/chant/wip/main').trim();
  const message = `chant wip: main (${label})\n\nChant-Wip-Branch: main\nChant-Wip-Head: ${head}\nChant-Wip-Kind: save\nChant-Wip-Label: ${label}\nChant-Wip-By: github:bench\n`;
  const commit = run('git', ['commit-tree', `${head}^{tree}`, '-p', tip, '-p', head], { cwd: dir, input: message }).stdout.trim();
  git(dir, 'update-ref', 'refs/chant/wip/main', commit, tip);
}

/** Writes `count` kept refs on distinct commits (one fast-import, one update-ref). */
export function keptRefs(dir, count, prefix = 'refs/chant/kept/W-001') {
  const head = git(dir, 'rev-parse', 'HEAD').trim();
  let stream = '';
  for (let i = 0; i < count; i += 1) {
    const message = `kept attempt ${i}\n`;
    stream += `commit ${prefix}/t${String(i).padStart(5, '0')}\ncommitter Bench <bench@example.com> ${1790000000 + i} +0000\ndata ${Buffer.byteLength(message)}\n${message}from ${head}\n\n`;
  }
  run('git', ['fast-import', '--quiet', '--force'], { cwd: dir, input: stream });
}
