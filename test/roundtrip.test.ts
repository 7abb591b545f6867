import { git, makeRepo, treeOf } from './helpers.js';
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { chmodSync, lstatSync, mkdirSync, readdirSync, readFileSync, readlinkSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, it } from 'node:test';
import fc from 'fast-check';
import { isWipError } from '../lib/errors.js';
import { WipStore } from '../lib/store/wip-store.js';

// Round trips on random trees: save, edit, restore, then restore the checkpoint. A repository
// serves many cases (each case writes its whole tree over the last one's), so 300 cases fit in
// well under a minute. The seeds are fixed so a failure replays; they are printed with the results.
// CHANT_ROUNDTRIP_SEED and CHANT_ROUNDTRIP_RUNS explore further by hand; the suite runs the fixed ones.
const SEED = Number(process.env.CHANT_ROUNDTRIP_SEED ?? 20261003);
const RUNS = Number(process.env.CHANT_ROUNDTRIP_RUNS ?? 300);
const WORKERS = 3;

type Node =
  | { kind: 'file'; data: Buffer; exec: boolean }
  | { kind: 'link'; target: string }
  | { kind: 'dir'; entries: Entry[] };
type Entry = [string, Node];

// Names people and tools make, hostile to shells and parsers: spaces, unicode, newlines, leading
// dashes, glob characters. `*.ign` and folders named `ign` are ignored (see the .gitignore below).
const SPECIAL_NAMES = [
  'a b', ' lead', 'trail ', 'é', 'ñandú', '日本語', '🎉', 'new\nline', 'tab\there', 'cr\rx', '-x', '--output=x', '-',
  '*', '?', '[ab]', '!neg', '#hash', 'back\\slash', '~', 'a:b', 'quo"te', "apo's", '.hidden', '..dots', 'x.ign', 'ign', 'deep.ign',
];
const TOP_FIXED = new Set(['.git', '.gitignore', 'README.md']);

const name = fc.oneof(
  { weight: 2, arbitrary: fc.constantFrom(...SPECIAL_NAMES) },
  { weight: 5, arbitrary: fc.string({ unit: fc.constantFrom(...'abcxyz019-_. é'), minLength: 1, maxLength: 6 }) },
).filter((text) => text !== '.' && text !== '..' && !/^\.git/i.test(text) && !TOP_FIXED.has(text));

const content = fc.oneof(
  fc.constant(Buffer.alloc(0)),
  fc.string({ maxLength: 30 }).map((text) => Buffer.from(text)),
  fc.uint8Array({ maxLength: 48 }).map((bytes) => Buffer.from(bytes)),
  fc.constant(Buffer.from('crlf\r\nline\n')),
);
const linkTarget = fc.oneof(fc.constantFrom('missing', '../dangling', '.', '..', 'a b', '/nonexistent/absolute', 'ign/x', 'x.ign'), name);
const fileNode = fc.record({ kind: fc.constant('file' as const), data: content, exec: fc.boolean() });
const linkNode = fc.record({ kind: fc.constant('link' as const), target: linkTarget });

const { node: nodeArb, tree: treeArb } = fc.letrec<{ node: Node; dir: Node; tree: Entry[] }>((tie) => ({
  node: fc.oneof({ maxDepth: 3, depthSize: 'small' }, { weight: 4, arbitrary: fileNode }, { weight: 1, arbitrary: linkNode }, { weight: 2, arbitrary: tie('dir') }),
  dir: fc.uniqueArray(fc.tuple(name, tie('node')), { selector: (entry) => entry[0], maxLength: 4 }).map((entries): Node => ({ kind: 'dir', entries })),
  tree: fc.uniqueArray(fc.tuple(name, tie('node')), { selector: (entry) => entry[0], minLength: 1, maxLength: 6 }),
}));

type EditOp = 'write' | 'chmod' | 'delete' | 'toDir' | 'toFile' | 'toLink' | 'add';
interface Edit { op: EditOp; at: number; data: Buffer; node: Node; name: string; target: string }
const editArb = fc.record({
  op: fc.constantFrom<EditOp>('write', 'chmod', 'delete', 'toDir', 'toFile', 'toLink', 'add'),
  at: fc.nat(),
  data: content,
  node: nodeArb,
  name,
  target: linkTarget,
});

// What the index holds when the restore runs: HEAD's tree, everything staged, everything staged
// and then edited again (partially staged), or a conflict (stages 1 to 3 of a path).
type IndexState = 'head' | 'staged' | 'partial' | 'conflict';
const indexStateArb = fc.constantFrom<IndexState>('head', 'head', 'staged', 'partial', 'conflict');

function clone(entries: readonly Entry[]): Entry[] {
  return entries.map(([key, node]) => [key, node.kind === 'dir' ? { kind: 'dir', entries: clone(node.entries) } : { ...node }]);
}

/** The edited tree: each edit picks a node by index among every node (folders included). */
function applyEdits(tree: readonly Entry[], edits: readonly Edit[]): Entry[] {
  const root: Entry[] = clone(tree);
  for (const edit of edits) {
    const places: Array<{ parent: Entry[]; index: number }> = [];
    const walk = (entries: Entry[]) => entries.forEach(([, node], index) => {
      places.push({ parent: entries, index });
      if (node.kind === 'dir') walk(node.entries);
    });
    walk(root);
    if (places.length === 0 || edit.op === 'add') {
      const dirs = [root, ...places.map(({ parent, index }) => (parent[index] as Entry)[1]).filter((node) => node.kind === 'dir').map((node) => (node as { entries: Entry[] }).entries)];
      const into = dirs[edit.at % dirs.length] as Entry[];
      if (!into.some(([key]) => key === edit.name)) into.push([edit.name, edit.node]);
      continue;
    }
    const { parent, index } = places[edit.at % places.length] as { parent: Entry[]; index: number };
    const [key, node] = parent[index] as Entry;
    switch (edit.op) {
      case 'write': parent[index] = [key, { kind: 'file', data: edit.data, exec: node.kind === 'file' && node.exec }]; break;
      case 'chmod': if (node.kind === 'file') parent[index] = [key, { ...node, exec: !node.exec }]; break;
      case 'delete': parent.splice(index, 1); break;
      case 'toDir': parent[index] = [key, { kind: 'dir', entries: [[edit.name, edit.node]] }]; break;
      case 'toFile': parent[index] = [key, { kind: 'file', data: edit.data, exec: false }]; break;
      case 'toLink': parent[index] = [key, { kind: 'link', target: edit.target }]; break;
    }
  }
  return root;
}

/** The files of a model as treeOf describes a working tree (empty folders hold nothing). */
function flatten(entries: readonly Entry[], prefix = ''): Record<string, string> {
  const out: Record<string, string> = {};
  for (const [key, node] of entries) {
    const path = `${prefix}${key}`;
    if (node.kind === 'file') out[path] = `${node.exec ? 'x' : '-'}:${node.data.toString('latin1')}`;
    else if (node.kind === 'link') out[path] = `link:${node.target}`;
    else Object.assign(out, flatten(node.entries, `${path}/`));
  }
  return out;
}

/** Mirrors the .gitignore: `*.ign` anywhere, and everything inside a folder named `ign`. */
function ignored(path: string): boolean {
  const parts = path.split('/');
  return parts.some((part, index) => part.endsWith('.ign') || (part === 'ign' && index < parts.length - 1));
}

function only(files: Record<string, string>, keep: (path: string) => boolean): Record<string, string> {
  return Object.fromEntries(Object.entries(files).filter(([path]) => keep(path)));
}

/** Makes the working tree hold exactly the model (the fixed top files aside), never writing through a symlink. */
function materialize(dir: string, entries: readonly Entry[], top = true): void {
  const wanted = new Map(entries);
  for (const entry of readdirSync(dir)) {
    if (top && TOP_FIXED.has(entry)) continue;
    const path = join(dir, entry);
    const stats = lstatSync(path);
    const kind = stats.isSymbolicLink() ? 'link' : stats.isDirectory() ? 'dir' : 'file';
    if (wanted.get(entry)?.kind !== kind) rmSync(path, { recursive: true, force: true });
  }
  for (const [key, node] of entries) {
    const path = join(dir, key);
    if (node.kind === 'file') {
      writeFileSync(path, node.data);
      chmodSync(path, node.exec ? 0o755 : 0o644);
    } else if (node.kind === 'link') {
      let current: string | null = null;
      try {
        current = readlinkSync(path);
      } catch {
        // Not there yet.
      }
      if (current !== node.target) {
        rmSync(path, { force: true });
        symlinkSync(node.target, path);
      }
    } else {
      mkdirSync(path, { recursive: true });
      materialize(path, node.entries, false);
    }
  }
}

function compareBytes(a: string, b: string): number {
  return Buffer.compare(Buffer.from(a), Buffer.from(b));
}

/** What one worker's run of the property found. */
interface Tally { cases: number; restored: number; blocked: number; conflicts: number; staged: number }

/** Runs `runs` cases of the property on a repository of its own. */
async function roundTrips(seed: number, runs: number, staging: 'index' | 'status'): Promise<Tally> {
  const dir = makeRepo({ 'README.md': 'fixed\n', '.gitignore': '*.ign\nign/\n' });
  // Both ways a save and a restore's checkpoint stage, a worker each: from status the restore
  // writes no index of the working tree at all.
  const store = new WipStore({ cwd: dir, staging });
  const fixed = treeOf(dir);
  const wipRefFile = join(dir, '.git', 'refs', 'chant', 'wip', 'main');
  const tally: Tally = { cases: 0, restored: 0, blocked: 0, conflicts: 0, staged: 0 };
  const blob = git(dir, ['hash-object', '-w', '--stdin'], { input: 'a side of a conflict\n' }).trim();
  await fc.assert(fc.asyncProperty(treeArb, fc.array(editArb, { minLength: 1, maxLength: 5 }), indexStateArb, fc.array(editArb, { minLength: 1, maxLength: 3 }), async (tree, edits, indexState, laterEdits) => {
    tally.cases += 1;
    // The last case's index is not this one's.
    git(dir, ['read-tree', '--reset', 'HEAD']);
    materialize(dir, tree);
    const saved = await store.save({});
    const savedFiles = only(flatten(tree), (path) => !ignored(path));
    let edited = applyEdits(tree, edits);
    materialize(dir, edited);
    if (indexState !== 'head') git(dir, ['add', '--all']);
    if (indexState === 'partial') {
      edited = applyEdits(edited, laterEdits);
      materialize(dir, edited);
    }
    if (indexState === 'conflict') {
      git(dir, ['update-index', '--index-info'], { input: `0 ${'0'.repeat(40)}\tconflicted.txt\n100644 ${blob} 1\tconflicted.txt\n100644 ${blob} 2\tconflicted.txt\n100644 ${blob} 3\tconflicted.txt\n` });
    }
    const index = git(dir, ['ls-files', '--stage', '-z']);
    const before = treeOf(dir);
    assert.deepEqual(before, { ...fixed, ...flatten(edited) }, 'the fixture wrote the edited tree');
    const ignoredBefore = only(before, ignored);
    const editedFiles = only(flatten(edited), (path) => !ignored(path));
    // An ignored file where the snapshot needs a file or a folder of its own: refused by design.
    const inTheWay = Object.keys(ignoredBefore).some((kept) => Object.keys(savedFiles).some((path) => kept.startsWith(`${path}/`) || path.startsWith(`${kept}/`)));
    const tip = readFileSync(wipRefFile, 'utf8');
    let result;
    try {
      result = await store.restore({ snapshot: saved.snapshot.commit });
    } catch (error) {
      if (!isWipError(error, 'wip-restore-blocked')) throw error;
      if (indexState === 'conflict') {
        assert.match(error.message, /the index holds a conflict/);
        tally.conflicts += 1;
      } else {
        assert.ok(inTheWay, `refused only when an ignored file is in the way: ${error.message}`);
        tally.blocked += 1;
      }
      assert.deepEqual(treeOf(dir), before, 'a refused restore changed nothing');
      assert.equal(git(dir, ['ls-files', '--stage', '-z']), index, 'nor the index');
      assert.equal(readFileSync(wipRefFile, 'utf8'), tip, 'not even the wip ref');
      return;
    }
    assert.notEqual(indexState, 'conflict', 'a conflict is always refused');
    assert.ok(!inTheWay, 'an ignored file in the way is never overwritten or deleted');
    assert.deepEqual(treeOf(dir), { ...fixed, ...savedFiles, ...ignoredBefore }, 'the working tree is the snapshot, byte for byte and mode for mode, ignored files untouched');
    const changed = [...new Set([...Object.keys(savedFiles), ...Object.keys(editedFiles)])].filter((path) => savedFiles[path] !== editedFiles[path]).sort(compareBytes);
    assert.deepEqual(result.paths, changed, 'paths lists every path written or removed');
    assert.equal(git(dir, ['diff', '--cached', '--name-only', '-z']), '', 'the index is reset to HEAD');
    await store.restore({ snapshot: result.checkpoint.snapshot.commit });
    assert.deepEqual(treeOf(dir), before, 'restoring the checkpoint gives the edited tree back');
    assert.equal(git(dir, ['ls-files', '--stage', '-z']), index, 'and the index, staged content and staged new files included');
    if (indexState !== 'head') tally.staged += 1;
    tally.restored += 1;
  }), { seed, numRuns: runs, endOnFailure: true });
  return tally;
}

describe('round trips on random trees', () => {
  it(`restores ${RUNS} random trees exactly after random edits, and the checkpoint gives the edits back`, async (t) => {
    // Workers on repositories of their own keep both cores busy; each has its own fixed seed.
    const seeds = Array.from({ length: WORKERS }, (_, index) => SEED + index);
    const tallies = await Promise.all(seeds.map((seed, index) => roundTrips(seed, RUNS / WORKERS, index % 2 === 0 ? 'index' : 'status')));
    const total = tallies.reduce((sum, tally) => ({ cases: sum.cases + tally.cases, restored: sum.restored + tally.restored, blocked: sum.blocked + tally.blocked, conflicts: sum.conflicts + tally.conflicts, staged: sum.staged + tally.staged }));
    t.diagnostic(`fast-check seeds ${seeds.join(", ")} (${RUNS / WORKERS} cases each; index, status and index staging): ${total.cases} cases, ${total.restored} round trips (${total.staged} over a staged or partially staged index, given back exactly), ${total.blocked} refused with wip-restore-blocked as predicted, ${total.conflicts} conflicts refused`);
    assert.equal(total.cases, RUNS);
    assert.ok(total.restored > RUNS / 2, `most cases round-trip (${total.restored})`);
    assert.ok(total.staged > RUNS / 5 && total.conflicts > 0, 'the index states were all tried');
  });
});
// Every path is either in the snapshot byte for byte, or listed with its reason: on random trees
// beside tracked files under assume-unchanged and skip-worktree (edited, and absent as a sparse
// checkout leaves them), files over the size limit, and files a clean filter deletes while git
// stages (vanishing). Both ways a save stages, case by case in turn.
const LEFT_OUT_RUNS = Number(process.env.CHANT_ROUNDTRIP_LEFT_OUT_RUNS ?? 24);
const LIMIT = 64;
const TRACKED = ['t/au.txt', 't/sw.txt', 't/gone.txt', 't/plain.txt'];

const specialsArb = fc.record({
  assumeUnchanged: fc.boolean(),
  skipWorktree: fc.constantFrom('none', 'edited', 'absent'),
  edit: content,
  big: fc.array(fc.integer({ min: LIMIT + 1, max: LIMIT * 4 }), { maxLength: 3 }),
  small: fc.array(fc.integer({ min: 0, max: LIMIT }), { maxLength: 2 }),
  vanishing: fc.array(fc.constantFrom('v1.gone', 'v2.gone', 'w/v3.gone'), { maxLength: 2 }),
  trackedVanishes: fc.boolean(),
});

/** path -> what a snapshot holds there, as treeOf describes a working tree. */
function snapshotFiles(dir: string, commit: string): Record<string, string> {
  const entries = git(dir, ['ls-tree', '-r', '-z', commit]).split('\0').filter((record) => record !== '').map((record) => {
    const tab = record.indexOf('\t');
    const [mode, , oid] = record.slice(0, tab).split(' ') as [string, string, string];
    return { mode, oid, path: record.slice(tab + 1) };
  });
  const out = spawnSync('git', ['cat-file', '--batch'], { cwd: dir, input: entries.map((entry) => `${entry.oid}\n`).join('') }).stdout as Buffer;
  const files: Record<string, string> = {};
  let offset = 0;
  for (const entry of entries) {
    const newline = out.indexOf(10, offset);
    const size = Number(out.toString('latin1', offset, newline).split(' ')[2]);
    const body = out.subarray(newline + 1, newline + 1 + size);
    offset = newline + 1 + size + 1;
    files[entry.path] = entry.mode === '120000' ? `link:${body.toString('utf8')}` : `${entry.mode === '100755' ? 'x' : '-'}:${body.toString('latin1')}`;
  }
  return files;
}

async function leftOutCases(seed: number, runs: number): Promise<{ cases: number; listed: Record<string, number> }> {
  const dir = makeRepo({ 'README.md': 'fixed\n', '.gitignore': '*.ign\nign/\n', '.gitattributes': '*.zap filter=zap\n', ...Object.fromEntries(TRACKED.map((path) => [path, `committed ${path}\n`])) });
  // The clean filter of a.zap deletes the files named *.gone after git has listed them, and t/gone.txt.
  git(dir, ['config', 'filter.zap.clean', 'find . -name "*.gone" -delete; if [ -e t/gone.zap-me ]; then rm -f t/gone.txt t/gone.zap-me; fi; cat']);
  const listed: Record<string, number> = {};
  let cases = 0;
  await fc.assert(fc.asyncProperty(treeArb, specialsArb, async (tree, specials) => {
    cases += 1;
    const staging = cases % 2 === 0 ? 'index' : 'status';
    git(dir, ['read-tree', 'HEAD']);
    git(dir, ['checkout-index', '-f', '-a']);
    rmSync(join(dir, 's'), { recursive: true, force: true });
    rmSync(join(dir, 'v1.gone'), { force: true });
    rmSync(join(dir, 'v2.gone'), { force: true });
    mkdirSync(join(dir, 'w'), { recursive: true });
    materialize(join(dir, 'w'), tree, false);
    mkdirSync(join(dir, 's'), { recursive: true });
    specials.big.forEach((size, index) => writeFileSync(join(dir, 's', `big${index}.bin`), Buffer.alloc(size, 7)));
    specials.small.forEach((size, index) => writeFileSync(join(dir, 's', `small${index}.bin`), Buffer.alloc(size, 8)));
    if (specials.assumeUnchanged) {
      git(dir, ['update-index', '--assume-unchanged', 't/au.txt']);
      writeFileSync(join(dir, 't/au.txt'), specials.edit);
    }
    if (specials.skipWorktree !== 'none') {
      git(dir, ['update-index', '--skip-worktree', 't/sw.txt']);
      if (specials.skipWorktree === 'absent') rmSync(join(dir, 't/sw.txt'));
      else writeFileSync(join(dir, 't/sw.txt'), specials.edit);
    }
    const zapping = specials.vanishing.length > 0 || specials.trackedVanishes;
    for (const path of specials.vanishing) writeFileSync(join(dir, path), 'short-lived\n');
    if (specials.trackedVanishes) {
      writeFileSync(join(dir, 't/gone.txt'), 'edited, then gone\n');
      writeFileSync(join(dir, 't/gone.zap-me'), '');
    }
    if (zapping) writeFileSync(join(dir, 'a.zap'), 'zap\n');
    else rmSync(join(dir, 'a.zap'), { force: true });
    const saved = await new WipStore({ cwd: dir, staging, maxFileSize: LIMIT }).save({});
    const snapshot = snapshotFiles(dir, saved.snapshot.commit);
    const unsaved = new Map((saved.unsaved ?? []).map((entry) => [entry.path, entry]));
    for (const entry of saved.unsaved ?? []) listed[entry.reason] = (listed[entry.reason] ?? 0) + 1;
    const after = only(treeOf(dir), (path) => !ignored(path));
    for (const [path, described] of Object.entries(after)) {
      const left = unsaved.get(path);
      if (left === undefined) {
        assert.equal(snapshot[path], described, `${path} is in the snapshot byte for byte (${staging} staging)`);
        continue;
      }
      if (path.startsWith('s/big')) assert.deepEqual([left.reason, left.size], ['too-large', Buffer.byteLength(described) - 2], path);
      else assert.fail(`${path} is on disk and listed as ${left.reason}`);
    }
    for (const [path, left] of unsaved) {
      if (left.reason === 'vanished') assert.equal(after[path], undefined, `${path} listed as vanished is gone`);
      else assert.equal(left.reason, 'too-large', `${path}: ${left.reason}`);
      if (left.reason === 'too-large') assert.equal(snapshot[path], undefined, `${path} is not in the snapshot`);
    }
    for (const path of Object.keys(after)) if (path.startsWith('s/big')) assert.ok(unsaved.has(path), `${path} over the limit is listed`);
    if (specials.skipWorktree === 'absent') assert.equal(snapshot['t/sw.txt'], '-:committed t/sw.txt\n', 'an absent skip-worktree file is not a deletion');
    const flagged = new Set((saved.flagged ?? []).map((entry) => entry.path));
    assert.equal(flagged.has('t/au.txt'), specials.assumeUnchanged && !specials.edit.equals(Buffer.from('committed t/au.txt\n')));
    assert.equal(flagged.has('t/sw.txt'), specials.skipWorktree === 'edited' && !specials.edit.equals(Buffer.from('committed t/sw.txt\n')));
    // The read says the same of the snapshot as the save did.
    const read = await new WipStore({ cwd: dir }).list({ branch: 'main' });
    const recorded = (saved.unsaved ?? []).map(({ path, reason, size }) => ({ path, reason, ...(size === undefined ? {} : { size }) }));
    assert.deepEqual(read.branches[0]?.snapshots[0]?.unsaved, recorded.length === 0 ? undefined : { count: recorded.length, paths: recorded.slice(0, 100) });
  }), { seed, numRuns: runs, endOnFailure: true });
  return { cases, listed };
}

describe('every path is saved or listed', () => {
  it(`holds every path byte for byte or lists it with its reason, on ${LEFT_OUT_RUNS} random trees with flagged, oversize and vanishing files`, async (t) => {
    const seeds = [SEED + 100, SEED + 101];
    const results = await Promise.all(seeds.map((seed) => leftOutCases(seed, LEFT_OUT_RUNS / 2)));
    const listed: Record<string, number> = {};
    for (const result of results) for (const [reason, count] of Object.entries(result.listed)) listed[reason] = (listed[reason] ?? 0) + count;
    t.diagnostic(`fast-check seeds ${seeds.join(', ')}: ${results.reduce((sum, result) => sum + result.cases, 0)} cases; listed ${JSON.stringify(listed)}`);
    assert.ok((listed['too-large'] ?? 0) > 0 && (listed.vanished ?? 0) > 0, 'the cases left files out for both reasons');
  });
});
