import { addAllTree, git, makeRepo, runBin } from './helpers.js';
import assert from 'node:assert/strict';
import { chmodSync, existsSync, lstatSync, mkdirSync, readdirSync, readFileSync, renameSync, rmSync, statSync, symlinkSync, utimesSync, writeFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { describe, it } from 'node:test';
import { isWipError } from '../lib/errors.js';
import { SimpleGitRunner } from '../lib/git/runner.js';
import type { GitRunner } from '../lib/git/runner.js';
import { WipStore } from '../lib/store/wip-store.js';

// A save after long random sequences of what people and agents do between saves: edits, renames,
// file and folder swaps, mode flips, symlinks, same-size rewrites in the same second, rewrites
// with the mtime put back, and the git commands that move the index, HEAD and the branch (add,
// add -N, rm --cached, reset, restore --staged, checkout --, commit, stash, switch -c, the
// assume-unchanged and skip-worktree flags, a status that refreshes the index). Every save
// is held to the tree `git add --all` stages into a copy of the index (addAllTree), must leave
// the index file, HEAD and the branch as they were, and now and then a restore of an earlier
// snapshot must give its tree back exactly, and the restore of its checkpoint the working tree
// and index before it. One repository keeps more than 256 files modified since HEAD, so that
// its saves go through the private index git status reads and the copy kept from one save to
// the next (lib/store/status-index.ts, lib/managers/kept-index.ts); the other is small, its
// saves from status and its hash cache, or through the temporary index for what status cannot
// decide. The steps come from a seeded generator: a failure prints the seed and the steps.
// CHANT_SAVE_SEQUENCES_SEED and CHANT_SAVE_SEQUENCES_STEPS soak further by hand.
const SEED = Number(process.env.CHANT_SAVE_SEQUENCES_SEED ?? 20261205);
const STEPS = Number(process.env.CHANT_SAVE_SEQUENCES_STEPS ?? 40);

/** mulberry32: a small seeded generator, so that a seed replays the same steps. */
function generator(seed: number): { next: () => number; int: (n: number) => number; pick: <T>(items: readonly T[]) => T; chance: (p: number) => boolean } {
  let state = seed >>> 0;
  const next = (): number => {
    state = (state + 0x6d2b79f5) >>> 0;
    let t = state;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
  const int = (n: number): number => Math.floor(next() * n);
  return { next, int, pick: (items) => items[int(items.length)] as (typeof items)[number], chance: (p) => next() < p };
}

const FOLDERS = ['', 'dir', 'dir/sub', 'other', 'é', 'new', 'new/deep', 'ign'];
// Names that are folders elsewhere (sub, deep), ignored (x.ign, and anything in ign/), a name
// with a space and one that is not ASCII: swaps and collisions come up by themselves.
const NAMES = ['a.txt', 'b.txt', 'c', 'e f.txt', 'ü.txt', 'run.sh', 'sub', 'deep', 'x.ign', 'h.txt'];
const TEXTS = ['', 'one\n', 'two\n', 'three lines\nof\ntext\n', 'crlf\r\nline\r\n', '#!/bin/sh\necho hi\n', 'no newline', 'x'.repeat(70)];
const BULK = 300;

type Tally = { ms: Record<string, number>; listed?: number; steps: number; saves: number; cli: number; created: number; restores: number; refused: number; paths: Record<string, number> };

/** Every path under `dir` (the .git folder and, when asked, bulk/ aside): files, symlinks and folders. */
function walk(top: string, skipBulk: boolean, prefix = ''): { files: string[]; folders: string[] } {
  const out = { files: [] as string[], folders: [] as string[] };
  for (const name of readdirSync(join(top, prefix))) {
    const path = prefix === '' ? name : `${prefix}/${name}`;
    if (path === '.git' || (skipBulk && path === 'bulk')) continue;
    const stats = lstatSync(join(top, path));
    if (stats.isDirectory()) {
      out.folders.push(path);
      const inner = walk(top, skipBulk, path);
      out.files.push(...inner.files);
      out.folders.push(...inner.folders);
    } else out.files.push(path);
  }
  return out;
}

/** A path's stat data (not following a symlink), or undefined where nothing is there or a file is on its way. */
function look(path: string): ReturnType<typeof lstatSync> | undefined {
  try {
    return lstatSync(path);
  } catch {
    return undefined;
  }
}

/** Makes room for a file at `path`: every folder on its way, a file or symlink on the way removed. */
function makeWay(top: string, path: string): void {
  const parts = path.split('/');
  for (let depth = 1; depth < parts.length; depth += 1) {
    const folder = join(top, ...parts.slice(0, depth));
    const stats = lstatSync(folder, { throwIfNoEntry: false });
    if (stats !== undefined && !stats.isDirectory()) rmSync(folder, { force: true });
    if (stats === undefined || !stats.isDirectory()) mkdirSync(folder);
  }
  // A folder there goes, and a symlink, which a write would follow.
  const there = lstatSync(join(top, path), { throwIfNoEntry: false });
  if (there?.isDirectory() === true || there?.isSymbolicLink() === true) rmSync(join(top, path), { recursive: true, force: true });
}

/** The same bytes count, other bytes: each byte's case swapped or its last bit flipped, newlines kept. */
function sameSize(bytes: Buffer): Buffer {
  const out = Buffer.from(bytes);
  for (let i = 0; i < out.length; i += 1) {
    const byte = out[i] as number;
    if (byte === 10 || byte === 13) continue;
    out[i] = byte >= 0x61 && byte <= 0x7a ? byte - 32 : byte >= 0x41 && byte <= 0x5a ? byte + 32 : byte ^ 1;
  }
  return out;
}

/** What each save ran through: the kept private index, a private one made now, the checkout's index, a temporary index. */
function countingRunner(dir: string, seen: Set<string>): GitRunner {
  const runner = new SimpleGitRunner(dir);
  return {
    run: (args, options) => {
      const file = options?.env?.GIT_INDEX_FILE;
      if (args[0] === 'diff-files' && file?.endsWith('chant-status-index') === true) seen.add('kept');
      else if (args[0] === 'status') seen.add(file === undefined ? 'status' : 'private');
      else if (args[0] === 'add') seen.add('index');
      return runner.run(args, options);
    },
  };
}

/** The index file's bytes and stat data, HEAD's file, and the commit the branch names: what a save never writes. */
function untouchable(dir: string): string {
  const index = join(dir, '.git', 'index');
  const stats = statSync(index, { throwIfNoEntry: false });
  const bytes = stats === undefined ? '' : readFileSync(index).toString('base64');
  const head = readFileSync(join(dir, '.git', 'HEAD'), 'utf8');
  // Not its ctime: the temporary index is seeded as a hard link to it, which moves its ctime (its link count), never its bytes or mtime.
  return JSON.stringify({ bytes, stat: stats === undefined ? null : [stats.ino, stats.mtimeMs, stats.size], head, branch: git(dir, ['rev-parse', '-q', '--verify', 'HEAD'], { allowFail: true }) });
}

async function sequence(seed: number, steps: number, bulk: boolean): Promise<Tally> {
  const r = generator(seed);
  const dir = makeRepo({
    '.gitignore': '*.ign\nign/\n', 'a.txt': 'a\n', 'b.txt': 'b\n', 'dir/c.txt': 'c\n', 'dir/sub/d.txt': 'd\n', 'dir/sub/e f.txt': 'e f\n',
    'other/g.txt': 'g\n', 'é/h.txt': 'h\n', 'run.sh': '#!/bin/sh\n',
    ...(bulk ? Object.fromEntries(Array.from({ length: BULK }, (_, i) => [`bulk/${i % 3}/f${i}.txt`, `${i}\n`])) : {}),
  });
  chmodSync(join(dir, 'run.sh'), 0o755);
  symlinkSync('a.txt', join(dir, 'ln'));
  git(dir, ['add', '-A']);
  git(dir, ['commit', '-q', '-m', 'executable and link']);
  let generation = 0;
  const dirtyBulk = (): void => {
    generation += 1;
    for (let i = 0; i < BULK; i += 1) writeFileSync(join(dir, `bulk/${i % 3}/f${i}.txt`), `${i} modified ${generation}\n`);
  };
  if (bulk) {
    dirtyBulk();
    // The first save then hashes them 3 s after they were written: the hash cache vouches for
    // them from the second save on, which makes the private index, and the third keeps it.
    Atomics.wait(new Int32Array(new SharedArrayBuffer(4)), 0, 0, 3_200);
  }
  const seen = new Set<string>();
  const store = new WipStore({ cwd: dir, git: countingRunner(dir, seen) });
  const tally: Tally = { ms: {}, steps: 0, saves: 0, cli: 0, created: 0, restores: 0, refused: 0, paths: {} };
  const log: string[] = [];
  const snapshots = new Map<string, string[]>();
  let branches = 0;
  const fail = (what: string): never => assert.fail(`${what}\nseed ${seed}${bulk ? ' (bulk)' : ''}, step ${tally.steps}; the steps:\n${log.slice(-80).join('\n')}`);
  const sh = (args: string[]): void => {
    log.push(`git ${args.join(' ')}`);
    git(dir, args, { allowFail: true });
  };

  const step = (): void => {
    // The ignore rules change only through their own step: a restore is checked where they are the snapshot's.
    const { files: all, folders } = walk(dir, true);
    const files = all.filter((path) => path !== '.gitignore');
    const newPath = (): string => {
      const folder = r.pick(FOLDERS);
      return folder === '' ? r.pick(NAMES) : `${folder}/${r.pick(NAMES)}`;
    };
    const anyPath = (): string => (files.length > 0 && r.chance(0.7) ? r.pick(files) : newPath());
    const bulkPath = (): string => {
      const i = r.int(BULK);
      return `bulk/${i % 3}/f${i}.txt`;
    };
    const full = (path: string): string => join(dir, path);
    const kind = r.int(100);
    if (kind < 14) {
      const path = bulk && r.chance(0.3) ? bulkPath() : r.chance(0.5) ? anyPath() : newPath();
      const text = r.pick(TEXTS) + (r.chance(0.5) ? `${r.int(1000)}\n` : '');
      log.push(`write ${JSON.stringify(path)} ${JSON.stringify(text)}`);
      makeWay(dir, path);
      writeFileSync(full(path), text);
    } else if (kind < 22) {
      // The same size, in the same second as what came before (a save, a write, a git command).
      const path = bulk && r.chance(0.4) ? bulkPath() : r.chance(0.8) && files.length > 0 ? r.pick(files) : anyPath();
      const stats = look(full(path));
      if (stats?.isFile() !== true) return;
      log.push(`same-size rewrite ${JSON.stringify(path)}`);
      writeFileSync(full(path), sameSize(readFileSync(full(path))));
    } else if (kind < 28) {
      // Changed, its mtime put back (touch -r, cp -p, rsync -t): only the ctime says so.
      const path = bulk && r.chance(0.4) ? bulkPath() : files.length > 0 ? r.pick(files) : anyPath();
      const stats = look(full(path));
      if (stats?.isFile() !== true) return;
      const same = r.chance(0.7);
      log.push(`rewrite ${JSON.stringify(path)}${same ? ' at the same size' : ''}, mtime put back`);
      writeFileSync(full(path), same ? sameSize(readFileSync(full(path))) : `${readFileSync(full(path), 'latin1')}more\n`);
      utimesSync(full(path), stats.atime, stats.mtime);
    } else if (kind < 34) {
      const path = r.chance(0.8) && files.length > 0 ? r.pick(files) : r.pick(folders.length > 0 ? folders : ['dir']);
      log.push(`rm -rf ${JSON.stringify(path)}`);
      rmSync(full(path), { recursive: true, force: true });
    } else if (kind < 39) {
      const from = r.chance(0.6) && files.length > 0 ? r.pick(files) : r.pick(folders.length > 0 ? folders : ['dir']);
      const to = newPath();
      if (!existsSync(full(from)) || to === from || to.startsWith(`${from}/`) || from.startsWith(`${to}/`)) return;
      log.push(`mv ${JSON.stringify(from)} ${JSON.stringify(to)}`);
      makeWay(dir, to);
      rmSync(full(to), { recursive: true, force: true });
      renameSync(full(from), full(to));
    } else if (kind < 42) {
      // A file becomes a folder of the same name, or a folder a file.
      if (r.chance(0.5) && files.length > 0) {
        const path = r.pick(files);
        log.push(`file to folder ${JSON.stringify(path)}`);
        rmSync(full(path), { force: true });
        mkdirSync(full(path));
        writeFileSync(full(`${path}/inside.txt`), 'was a file\n');
      } else if (folders.length > 0) {
        const path = r.pick(folders);
        log.push(`folder to file ${JSON.stringify(path)}`);
        rmSync(full(path), { recursive: true, force: true });
        writeFileSync(full(path), 'was a folder\n');
      }
    } else if (kind < 47) {
      const path = bulk && r.chance(0.3) ? bulkPath() : files.length > 0 ? r.pick(files) : anyPath();
      const stats = look(full(path));
      if (stats?.isFile() !== true) return;
      const mode = (stats.mode & 0o100) === 0 ? 0o755 : 0o644;
      log.push(`chmod ${mode.toString(8)} ${JSON.stringify(path)}`);
      chmodSync(full(path), mode);
    } else if (kind < 51) {
      const path = r.chance(0.5) && files.length > 0 ? r.pick(files) : newPath();
      const target = r.pick(['a.txt', '../a.txt', 'dir', 'missing', 'sub/d.txt', 'x.ign']);
      log.push(`symlink ${JSON.stringify(path)} -> ${target}`);
      makeWay(dir, path);
      rmSync(full(path), { force: true });
      symlinkSync(target, full(path));
    } else if (kind < 58) {
      const count = 1 + r.int(3);
      const paths = Array.from({ length: count }, () => (bulk && r.chance(0.1) ? bulkPath() : anyPath()));
      sh(['add', '--', ...paths]);
    } else if (kind < 60) {
      sh(['add', '-A']);
    } else if (kind < 63) {
      sh(['add', '-N', '--', anyPath()]);
    } else if (kind < 66) {
      sh(['rm', '-q', '-r', '--cached', '--', anyPath()]);
    } else if (kind < 67) {
      sh(['rm', '-q', '-r', '-f', '--', anyPath()]);
    } else if (kind < 70) {
      const which = r.int(3);
      if (which === 0) sh(['reset', '-q']);
      else if (which === 1) sh(['reset', '-q', '--', anyPath()]);
      else sh(['reset', '-q', '--soft', 'HEAD~1']);
    } else if (kind < 72) {
      sh(['restore', '--staged', '--', anyPath()]);
    } else if (kind < 75) {
      sh(['checkout', '-q', '--', anyPath()]);
    } else if (kind < 77) {
      sh(['commit', '-q', '-m', `step ${tally.steps}`]);
    } else if (kind < 78) {
      sh(['commit', '-q', '-a', '-m', `all at step ${tally.steps}`]);
    } else if (kind < 80) {
      sh(r.chance(0.5) ? ['stash', '-q'] : ['stash', '-q', '-u']);
    } else if (kind < 82) {
      sh(['stash', 'pop', '-q']);
    } else if (kind < 83) {
      branches += 1;
      sh(['switch', '-q', '-c', `topic/${branches}`]);
    } else if (kind < 84) {
      sh(['switch', '-q', 'main']);
    } else if (kind < 89) {
      const flag = r.pick(['--assume-unchanged', '--skip-worktree', '--no-assume-unchanged', '--no-skip-worktree']);
      sh(['update-index', flag, '--', bulk && r.chance(0.2) ? bulkPath() : anyPath()]);
    } else if (kind < 92) {
      // git status refreshes the index and writes it where it can.
      sh(['status', '--porcelain']);
    } else if (kind < 93) {
      const path = `${r.pick(FOLDERS)}/x.ign`.replace(/^\//, '');
      log.push(`ignored ${JSON.stringify(path)}`);
      makeWay(dir, path);
      writeFileSync(full(path), 'ignored\n');
    } else if (kind < 94) {
      const rules = r.pick(['*.ign\nign/\n', '*.ign\n', 'ign/\n', null]);
      log.push(`.gitignore ${JSON.stringify(rules)}`);
      if (rules === null) rmSync(full('.gitignore'), { force: true });
      else writeFileSync(full('.gitignore'), rules);
    } else if (kind < 95) {
      // Into the next second: what was written before is no longer racily clean.
      log.push('next second');
      Atomics.wait(new Int32Array(new SharedArrayBuffer(4)), 0, 0, 1000 - (Date.now() % 1000) + 5);
    } else if (kind < 96) {
      // What git reads beside the files: the blob of unchanged bytes changes with it.
      if (r.chance(0.7)) {
        const folder = r.pick(bulk ? ['', 'dir', 'bulk', 'bulk/1', 'ign'] : ['', 'dir', 'dir/sub', 'ign']);
        const path = folder === '' ? '.gitattributes' : `${folder}/.gitattributes`;
        const rules = r.pick(['* text eol=crlf\n', '*.txt -text\n', '* text=auto\n', '', null]);
        log.push(`${path} ${JSON.stringify(rules)}`);
        if (rules === null) rmSync(full(path), { force: true });
        else {
          makeWay(dir, path);
          writeFileSync(full(path), rules);
        }
      } else sh(['config', 'core.autocrlf', r.pick(['true', 'input', 'false'])]);
    } else if (bulk && r.chance(0.3)) {
      log.push('bulk modified again');
      dirtyBulk();
    } else {
      // Everything committed, untracked files too (bulk/ aside, whose files stay modified since
      // HEAD): the symlinks and executables status cannot classify go, and the saves after are
      // built from status again.
      sh(['add', '-A', '--', '.', ...(bulk ? [':!bulk'] : [])]);
      sh(['commit', '-q', '-m', `everything at step ${tally.steps}`]);
    }
  };

  const branchNow = (): string => git(dir, ['symbolic-ref', '--short', 'HEAD']).trim();

  const save = async (): Promise<string> => {
    const before = untouchable(dir);
    seen.clear();
    let commit: string;
    let tree: string;
    // What the save listed as left out (a .gitattributes made a folder, which a remote's object check refuses).
    let unsaved: string[] = [];
    if (r.chance(0.04)) {
      const run = runBin(dir, ['workspace', 'wip', 'save', '--json']);
      if (run.code !== 0) fail(`the CLI save failed: ${run.stdout} ${run.stderr}`);
      ({ commit, tree } = run.doc.snapshot);
      unsaved = (run.doc.unsaved ?? []).map((entry: { path: string }) => entry.path);
      tally.cli += 1;
      log.push(`save (CLI): ${tree}`);
    } else {
      const saved = await (r.chance(0.2) ? new WipStore({ cwd: dir, git: countingRunner(dir, seen) }) : store).save(r.chance(0.1) ? { label: `at ${tally.steps}` } : {});
      ({ commit, tree } = saved.snapshot);
      unsaved = (saved.unsaved ?? []).map((entry) => entry.path);
      if (saved.created) tally.created += 1;
      const path = ['kept', 'private', 'status', 'index'].filter((name) => seen.has(name)).join('+') || 'none';
      tally.paths[path] = (tally.paths[path] ?? 0) + 1;
      log.push(`save (${path}): ${tree}`);
    }
    tally.saves += 1;
    const afterward = untouchable(dir);
    if (afterward !== before) {
      const [was, now] = [JSON.parse(before), JSON.parse(afterward)];
      fail(`the save wrote the index, HEAD or the branch: ${Object.keys(was).filter((key) => JSON.stringify(was[key]) !== JSON.stringify(now[key])).map((key) => key === 'bytes' ? 'bytes' : `${key} ${JSON.stringify(was[key])} -> ${JSON.stringify(now[key])}`).join(', ')}`);
    }
    const checking = Date.now();
    const expected = addAllTree(dir);
    tally.ms.expected = (tally.ms.expected ?? 0) + Date.now() - checking;
    const listed = (path: string): boolean => unsaved.some((left) => path === left || path.startsWith(`${left}/`));
    // What git and the file system say of each path that differs, but for what the save listed as left out.
    const differing = tree === expected ? [] : git(dir, ['diff-tree', '-r', '--no-renames', '--name-only', '-z', expected, tree]).split('\0').filter((path) => path !== '' && !listed(path));
    if (unsaved.length > 0) tally.listed = (tally.listed ?? 0) + 1;
    leftOut = unsaved.length > 0;
    if (differing.length > 0) {
      const index = statSync(join(dir, '.git', 'index'), { bigint: true });
      const seen = differing.map((path) => {
        const stats = look(join(dir, path));
        const bytes = stats?.isFile() === true ? JSON.stringify(readFileSync(join(dir, path), 'latin1').slice(0, 60)) : stats?.isSymbolicLink() === true ? 'a symlink' : 'nothing';
        const times = stats === undefined ? '' : (() => {
          const big = lstatSync(join(dir, path), { bigint: true });
          return `mtime ${big.mtimeNs} ctime ${big.ctimeNs} ino ${big.ino} size ${big.size}`;
        })();
        return `${path}: ${bytes} ${times}\n${git(dir, ['ls-files', '--debug', '-v', '-s', '--', path])}`;
      });
      fail(`the snapshot's tree is not the working tree's:\n${git(dir, ['diff-tree', '-r', '--no-renames', expected, tree])}index mtime ${index.mtimeNs}\n${seen.join('\n')}`);
    }
    if (git(dir, ['rev-parse', `${commit}^{tree}`]).trim() !== tree) fail('the snapshot names another tree than its commit holds');
    const branch = branchNow();
    if (git(dir, ['rev-parse', `refs/chant/wip/${branch}`]).trim() !== commit) fail('the wip ref is not the snapshot');
    snapshots.set(branch, [...(snapshots.get(branch) ?? []), commit]);
    return commit;
  };

  // Whether the last save left a path out: its restore's checkpoint does too, and is not git add's tree.
  let leftOut = false;
  const restore = async (): Promise<void> => {
    if (leftOut) return;
    const branch = branchNow();
    const chain = snapshots.get(branch) ?? [];
    if (chain.length < 2) return;
    const target = r.pick(chain.slice(0, -1));
    const targetTree = git(dir, ['rev-parse', `${target}^{tree}`]).trim();
    // Ignored files stay as they are, and what the ignore rules the restore leaves ignore is left:
    // under other rules than the snapshot's, the working tree is the snapshot's and more.
    const rules = (): string | null => {
      try {
        return readFileSync(join(dir, '.gitignore'), 'latin1');
      } catch {
        return null;
      }
    };
    const targetRules = git(dir, ['cat-file', '-p', `${target}:.gitignore`], { allowFail: true });
    if ((rules() ?? '') !== targetRules || (rules() === null) !== (git(dir, ['ls-tree', target, '--', '.gitignore']) === '')) return;
    // Nor where line endings may convert: git's checkout of a blob then writes other bytes than it holds.
    const attributes = (paths: string[]): boolean => paths.some((path) => path === '.gitattributes' || path.endsWith('/.gitattributes'));
    if (attributes(walk(dir, false).files) || attributes(git(dir, ['ls-tree', '-r', '--name-only', '-z', target]).split('\0')) || !['', 'false'].includes(git(dir, ['config', 'core.autocrlf'], { allowFail: true }).trim())) return;
    const before = addAllTree(dir);
    const index = git(dir, ['ls-files', '--stage', '-z']);
    const head = git(dir, ['rev-parse', 'HEAD']);
    log.push(`restore ${target}`);
    let result;
    try {
      result = await store.restore({ snapshot: target });
    } catch (error) {
      // Refused with nothing changed: an ignored file in the way, a conflict, or a file to write
      // under a flag whose entry the reset of the index could not take.
      if (!isWipError(error, 'wip-restore-blocked') && !(isWipError(error, 'git-failed') && /nothing was changed: clear the flags/.test(error.message))) throw error;
      tally.refused += 1;
      log.push(`  refused: ${error.message.split('\n')[0]}`);
      if (addAllTree(dir) !== before || git(dir, ['ls-files', '--stage', '-z']) !== index) fail('a refused restore changed the working tree or the index');
      return;
    }
    tally.restores += 1;
    if (git(dir, ['rev-parse', 'HEAD']) !== head || branchNow() !== branch) fail('the restore moved HEAD or the branch');
    const checkpoint = result.checkpoint.snapshot;
    if (checkpoint.tree !== before) fail(`the restore's checkpoint is not the working tree before it:\n${git(dir, ['diff-tree', '-r', '--no-renames', before, checkpoint.tree])}`);
    const after = addAllTree(dir);
    if (after !== targetTree) fail(`the restore did not give the snapshot's tree back:\n${git(dir, ['diff-tree', '-r', '--no-renames', targetTree, after])}`);
    log.push(`restore its checkpoint ${checkpoint.commit}`);
    await store.restore({ snapshot: checkpoint.commit });
    const undone = addAllTree(dir);
    if (undone !== before) fail(`restoring the checkpoint did not give the working tree back:\n${git(dir, ['diff-tree', '-r', '--no-renames', before, undone])}`);
    if (git(dir, ['ls-files', '--stage', '-z']) !== index) fail('restoring the checkpoint did not give the index back');
    snapshots.set(branch, [...(snapshots.get(branch) ?? []), checkpoint.commit]);
  };

  const timed = async (name: string, run: () => unknown): Promise<void> => {
    const started = Date.now();
    await run();
    tally.ms[name] = (tally.ms[name] ?? 0) + Date.now() - started;
  };
  await save();
  while (tally.steps < steps) {
    const count = 1 + r.int(4);
    for (let i = 0; i < count && tally.steps < steps; i += 1) {
      tally.steps += 1;
      await timed('steps', step);
    }
    await timed('saves', save);
    if (r.chance(0.2)) await timed('restores', restore);
  }
  if (process.env.CHANT_SAVE_SEQUENCES_LOG === '1') process.stderr.write(`seed ${seed}:\n${log.join('\n')}\n`);
  return tally;
}

describe('a save after random sequences of edits and git commands', () => {
  for (const bulk of [true, false]) {
    it(`records the tree git add --all stages, never writes the index, HEAD or the branch, and restores exactly, over ${STEPS} steps${bulk ? ' with more than 256 files modified since HEAD' : ''} (seed ${SEED + (bulk ? 0 : 1)})`, async (t) => {
      const tally = await sequence(SEED + (bulk ? 0 : 1), STEPS, bulk);
      t.diagnostic(JSON.stringify(tally));
      assert.equal(tally.steps, STEPS);
      // The suite's seed reaches the kept copy; a soak's seed need not (a long run's symlinks and
      // executables hand most saves to git add), and is held to the trees alone.
      if (bulk && process.env.CHANT_SAVE_SEQUENCES_SEED === undefined) assert.ok((tally.paths.kept ?? 0) > 0, `some saves build their tree through the kept private index: ${JSON.stringify(tally.paths)}`);
    });
  }
});
