// The tree of the working tree, built from what `git status` reports instead of staging every
// file into a temporary index: HEAD's tree, with each path status names set to what the index
// or the working tree holds for it. git still reads every file (status) and writes every blob
// (hash-object, through the same clean filters as `git add`). chant rewrites only the folders
// on the way to a changed path, copying what did not change byte for byte, and hands them to
// git as one pack. What this cannot decide the way `git add --all` would (submodules that moved,
// conflicts, symlinks and executables it would have to classify, names it cannot pass through a
// line) makes it answer null: the caller then stages through a temporary index.
import { createHash } from 'node:crypto';
import { lstat, readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { replaceCacheFile } from '../managers/cache-file.js';
import type { GitObject, Plumbing, RefRecord, RepositoryLayout } from '../git/plumbing.js';
import { readGitlinks } from '../git/formats/index-file.js';
import { OBJECT_ID, objectHash } from '../git/formats/object-format.js';
import type { Gitlink } from '../git/formats/index-file.js';
import { parseCommit } from '../git/plumbing.js';

/** What a path holds in the working tree's tree: an object, a file to hash, or nothing. */
type PathState =
  | { kind: 'object'; mode: string; oid: string }
  | { kind: 'file'; mode: string }
  | { kind: 'absent' };

/** What `git status` says, read into the state of every path it names. */
export interface StatusPlan {
  /** The commit status compared with (HEAD when it ran). */
  head: string;
  /** Path -> what the working tree's tree holds there. */
  states: Map<string, PathState>;
  /** Untracked paths, whose modes are read from the file system. */
  untracked: string[];
}

/**
 * Reads `git status --porcelain=v2 -z --branch` output into a plan, or null where the plan
 * could differ from what `git add --all` would stage.
 * @internal
 */
export function readStatus(out: string): StatusPlan | null {
  let head: string | null = null;
  const states = new Map<string, PathState>();
  const untracked: string[] = [];
  for (const record of out.split('\0')) {
    if (record.length === 0) continue;
    if (record.startsWith('# ')) {
      if (record.startsWith('# branch.oid ')) head = record.slice('# branch.oid '.length);
      continue;
    }
    if (record.startsWith('? ')) {
      const path = record.slice(2);
      if (!passable(path) || path.endsWith('/')) return null;
      untracked.push(path);
      continue;
    }
    if (!record.startsWith('1 ')) return null;
    const fields = record.split(' ');
    const [, xy = '', sub = '', , modeIndex = '', modeWork = '', , oidIndex = ''] = fields;
    const path = fields.slice(8).join(' ');
    if (fields.length < 9 || !passable(path) || !sub.startsWith('N') || fields.slice(3, 6).includes('160000')) return null;
    const state = stateOf(xy, modeIndex, modeWork, oidIndex);
    if (state === null) return null;
    states.set(path, state);
  }
  if (head === null || !OBJECT_ID.test(head)) return null;
  return { head, states, untracked };
}

/** A path's state from its status letters: the worktree's (Y) first, the index's (X) behind it. */
function stateOf(xy: string, modeIndex: string, modeWork: string, oidIndex: string): PathState | null {
  const [x, y] = [xy[0], xy[1]];
  if (y === 'D') return { kind: 'absent' };
  if (y === 'M' || y === 'T' || y === 'A') return REGULAR.has(modeWork) ? { kind: 'file', mode: modeWork } : null;
  if (y !== '.') return null;
  if (x === 'D') return { kind: 'absent' };
  return x === 'M' || x === 'T' || x === 'A' ? { kind: 'object', mode: modeIndex, oid: oidIndex } : null;
}

const REGULAR = new Set(['100644', '100755']);

/** A name every line-based git input takes as it is. */
function passable(path: string): boolean {
  return path.length > 0 && !/[\n\r\uFFFD]/.test(path) && !path.startsWith('"');
}

/** One entry of a tree. */
interface Entry {
  mode: string;
  oid: string;
}

/** The tree of the working tree, the wip tip read in the same call, and the tree's gitlinks. */
export interface WorkingTree {
  tree: string;
  tip: RefRecord | null;
  /** The gitlinks (submodules, embedded repositories) of the tree: the index's, as status named none. */
  gitlinks: Gitlink[];
}

/**
 * The tree of the working tree (ignored files left out), built from `git status`, with the tip
 * of `tipRef` read alongside; null when git's own staging must decide instead.
 * @param plumbing - the checkout's plumbing
 * @param layout - where the checkout's git data lives
 * @param head - the commit HEAD named when the write began
 * @param tipRef - the wip ref whose tip to read
 * @internal
 */
export async function workingTreeByStatus(plumbing: Plumbing, layout: RepositoryLayout, head: string, tipRef: string): Promise<WorkingTree | null> {
  const { top, objectFormat, objectsDir } = layout;
  const memoFile = join(layout.gitDir, MEMO_FILE);
  // The index's gitlinks are read while git status runs: status names a gitlink it differs on,
  // and hands the save back, so the ones it does not name are the tree's.
  const [out, remembered, gitlinks] = await Promise.all([plumbing.status(top), readFile(memoFile, 'latin1').catch(() => ''), readGitlinks(layout.indexFile, objectFormat)]);
  const plan = readStatus(out);
  if (plan === null || plan.head !== head) return null;
  const untracked = await Promise.all(plan.untracked.map((path) => lstat(join(top, path)).catch(() => null)));
  for (const [index, stats] of untracked.entries()) {
    // An executable's mode hangs on core.fileMode, which status does not print.
    if (stats === null || !stats.isFile() || (stats.mode & 0o100) !== 0) return null;
    plan.states.set(plan.untracked[index] as string, { kind: 'file', mode: '100644' });
  }
  const folders = foldersOf(plan.states.keys());
  const toHash = [...plan.states].filter(([, state]) => state.kind === 'file').map(([path]) => path);
  // One cat-file reads the wip tip and HEAD's trees of the folders to build. With few folders
  // on the way to the changes it reads them all while git hashes the files, before the memo can
  // say which it spares; with many, reading them all would cost more than waiting, so it reads
  // after the memo has spoken, only the trees still to build. The tip is read either way.
  const treeName = (folder: string): string => (folder === '' ? `${head}^{tree}` : `${head}:${folder}`);
  const hashing = plumbing.hashFiles(top, toHash).catch(() => null);
  const early: Promise<Array<GitObject | null> | null | undefined> = folders.length <= PREFETCH_FOLDERS ? plumbing.readObjects([tipRef, ...folders.map(treeName)]) : Promise.resolve(undefined);
  const [hashed, prefetched] = await Promise.all([hashing, early]);
  if (hashed === null || hashed.length !== toHash.length || prefetched === null) return null;
  const leaves = new Map<string, Entry | null>();
  for (const [path, state] of plan.states) {
    if (state.kind === 'absent') leaves.set(path, null);
    else if (state.kind === 'object') leaves.set(path, { mode: state.mode, oid: state.oid });
  }
  toHash.forEach((path, index) => leaves.set(path, { mode: (plan.states.get(path) as { mode: string }).mode, oid: hashed[index] as string }));
  const memo = treeMemo(remembered, (oid) => plumbing.hasLooseObject(objectsDir, oid));
  let tipObject: GitObject | null | undefined = prefetched === undefined ? undefined : (prefetched[0] ?? null);
  const headTrees = prefetched === undefined ? null : new Map(folders.map((folder, index) => [folder, prefetched[index + 1] ?? null]));
  const built = await buildTrees({
    folders, leaves, head, objectFormat, memo,
    read: async (needed) => {
      if (headTrees !== null) return needed.map((folder) => headTrees.get(folder) ?? null);
      const objects = await plumbing.readObjects([tipRef, ...needed.map(treeName)]);
      if (objects === null) return null;
      tipObject = objects[0] ?? null;
      return objects.slice(1);
    },
  });
  if (built === null) return null;
  if (tipObject === undefined) {
    // Nothing to build, and nothing read yet: the cat-file reads the tip alone.
    const objects = await plumbing.readObjects([tipRef]);
    if (objects === null) return null;
    tipObject = objects[0] ?? null;
  }
  // A tree an earlier save wrote is on disk already: only the others are handed to git. The
  // memo is written alongside; it names a tree only while the tree is on disk.
  const missing = built.writes.filter((write) => !plumbing.hasLooseObject(objectsDir, write.oid));
  await Promise.all([plumbing.writeTrees(missing.map((write) => write.body), objectFormat), saveMemo(memoFile, memo.used)]);
  const tipCommit = tipObject as GitObject | null;
  const tip = tipCommit?.type === 'commit' ? { ref: tipRef, ...parseCommit(tipCommit.oid, tipCommit.content.toString('utf8')) } : null;
  return { tree: built.root, tip, gitlinks };
}

/** Up to this many folders on the way to the changes, their trees are read while git hashes the files. */
const PREFETCH_FOLDERS = 64;

/** Every folder on the way to one of `paths`, the top ('') first, parents before children. */
function foldersOf(paths: Iterable<string>): string[] {
  const folders = new Set<string>(['']);
  for (const path of paths) {
    for (let slash = path.indexOf('/'); slash >= 0; slash = path.indexOf('/', slash + 1)) folders.add(path.slice(0, slash));
  }
  return [...folders].sort((a, b) => depth(a) - depth(b));
}

function depth(folder: string): number {
  return folder === '' ? 0 : folder.split('/').length;
}

const TREE_MODE = '40000';

/** A tree to write: its id and its content. */
export interface TreeWrite {
  oid: string;
  body: Buffer;
}

/** What {@link buildTrees} builds from. */
export interface TreeInputs {
  /** Every folder on the way to a changed path, parents before children. */
  folders: readonly string[];
  /** Each changed path's new entry (null: gone). */
  leaves: ReadonlyMap<string, Entry | null>;
  /** The commit whose trees the folders are built on. */
  head: string;
  /** `sha1` or `sha256`. */
  objectFormat: string;
  /** Folder trees earlier saves built. */
  memo?: TreeMemo;
  /** HEAD's trees of the folders named, in order (null where HEAD has none there), read when some must be built; null when they cannot be read. */
  read: (folders: readonly string[]) => Promise<ReadonlyArray<GitObject | null> | null>;
}

/**
 * The folders' new trees, deepest first. A folder the memo knows from the same inputs is
 * taken from it; the others are built on HEAD's tree there, which is read only for them: an
 * entry that does not change is copied from that tree byte for byte, so a folder of a thousand
 * files costs a scan of its tree, not a thousand entries rebuilt. Each tree's id is computed
 * here.
 * @internal
 */
export async function buildTrees(inputs: TreeInputs): Promise<{ root: string; writes: TreeWrite[] } | null> {
  const { folders, leaves, head, objectFormat } = inputs;
  const memo = inputs.memo ?? NO_MEMO;
  const { algorithm, bytes: hashBytes } = objectHash(objectFormat);
  // Names are handled as latin1 strings of their UTF-8 bytes: one character a byte, so that
  // comparing two of them orders them as git orders tree entries.
  const byFolder = new Map<string, Map<string, Entry | null>>();
  for (const [path, entry] of leaves) {
    const slash = path.lastIndexOf('/');
    const folder = slash < 0 ? '' : path.slice(0, slash);
    const changes = byFolder.get(folder) ?? new Map<string, Entry | null>();
    changes.set(bytesOf(path.slice(slash + 1)), entry);
    byFolder.set(folder, changes);
  }
  // What each folder's children came to, filed under the folder as they are known.
  const built = new Map<string, Array<[string, string | null]>>();
  const results = new Map<string, string | null>();
  const file = (folder: string, oid: string | null) => {
    results.set(folder, oid);
    if (folder !== '') fileUnder(built, folder, oid);
  };
  // First the memo: a folder's tree hangs only on HEAD's tree there (its commit and path) and
  // on what changes in it. A folder it does not know, and every folder above one, is built.
  const toBuild: string[] = [];
  const waiting = new Set<string>();
  for (let index = folders.length - 1; index >= 0; index -= 1) {
    const folder = folders[index] as string;
    const known = waiting.has(folder) ? undefined : memo.get(memoKey(head, folder, byFolder.get(folder), built.get(folder)));
    if (known !== undefined) {
      file(folder, known);
      continue;
    }
    toBuild.push(folder);
    if (folder !== '') waiting.add(parentOf(folder));
  }
  const bases = toBuild.length === 0 ? [] : await inputs.read(toBuild);
  if (bases === null) return null;
  const writes: TreeWrite[] = [];
  for (const [index, folder] of toBuild.entries()) {
    const base = bases[index] ?? null;
    const tree = base?.type === 'tree' ? base : null;
    const changes = byFolder.get(folder) ?? new Map<string, Entry | null>();
    const children = built.get(folder) ?? [];
    const key = memoKey(head, folder, changes, children);
    const content = tree === null ? EMPTY : tree.content;
    const records = scanTree(content, hashBytes);
    if (records === null) return null;
    // Where in HEAD's tree each name this folder changes is: a few names, so each entry is
    // held against each by length, then byte by byte.
    const looked = [...changes.keys(), ...children.map(([child]) => child)].map((name) => Buffer.from(name, 'latin1'));
    const found = new Map<string, number>();
    for (let i = 0; i < records.count; i += 1) {
      const start = records.nameStart[i] as number;
      const length = (records.nameEnd[i] as number) - start;
      for (const bytes of looked) {
        if (bytes.length !== length) continue;
        let k = 0;
        while (k < length && bytes[k] === content[start + k]) k += 1;
        if (k === length) found.set(bytes.toString('latin1'), i);
      }
    }
    const baseIsTree = (name: string): boolean | undefined => (found.has(name) ? records.tree[found.get(name) as number] === 1 : undefined);
    for (const [name, oid] of children) {
      const current = changes.has(name) ? changes.get(name) : baseIsTree(name);
      const isTree = current === null || current === undefined ? null : typeof current === 'boolean' ? current : current.mode === TREE_MODE;
      if (oid === null) {
        if (isTree === true) changes.set(name, null);
        continue;
      }
      // A file and a folder of the same name: the tree moved under status.
      if (isTree === false) return null;
      changes.set(name, { mode: TREE_MODE, oid });
    }
    const replaced = new Set<number>();
    for (const name of changes.keys()) if (found.has(name)) replaced.add(found.get(name) as number);
    const added = [...changes]
      .filter((change): change is [string, Entry] => change[1] !== null)
      .map(([name, entry]) => ({ name: Buffer.from(name, 'latin1'), tree: entry.mode === TREE_MODE, bytes: Buffer.concat([Buffer.from(`${entry.mode} ${name}\0`, 'latin1'), Buffer.from(entry.oid, 'hex')]) }))
      .sort((a, b) => compareKeys(a.name, 0, a.name.length, a.tree, b.name, 0, b.name.length, b.tree));
    // HEAD's entries that stay are copied as runs of bytes, the new ones put in between.
    const parts: Buffer[] = [];
    let next = 0;
    let run = -1;
    let runEnd = -1;
    const flush = () => {
      if (run >= 0) parts.push(content.subarray(run, runEnd));
      run = -1;
    };
    for (let i = 0; i < records.count; i += 1) {
      if (replaced.has(i)) {
        flush();
        continue;
      }
      const start = records.nameStart[i] as number;
      const end = records.nameEnd[i] as number;
      const tree_ = records.tree[i] === 1;
      if (next < added.length) {
        let pending = added[next] as { name: Buffer; tree: boolean; bytes: Buffer };
        if (compareKeys(pending.name, 0, pending.name.length, pending.tree, content, start, end, tree_) < 0) {
          flush();
          while (compareKeys(pending.name, 0, pending.name.length, pending.tree, content, start, end, tree_) < 0) {
            parts.push(pending.bytes);
            next += 1;
            if (next >= added.length) break;
            pending = added[next] as { name: Buffer; tree: boolean; bytes: Buffer };
          }
        }
      }
      if (run < 0) run = records.start[i] as number;
      runEnd = records.end[i] as number;
    }
    flush();
    while (next < added.length) parts.push((added[next++] as { bytes: Buffer }).bytes);
    let oid: string | null = null;
    if (parts.length > 0) {
      const body = Buffer.concat(parts);
      oid = createHash(algorithm).update(`tree ${body.length}\0`).update(body).digest('hex');
      if (tree === null || tree.oid !== oid) writes.push({ oid, body });
    }
    memo.set(key, oid);
    file(folder, oid);
  }
  const root = results.get('');
  return root === undefined || root === null ? null : { root, writes };
}

function parentOf(folder: string): string {
  const slash = folder.lastIndexOf('/');
  return slash < 0 ? '' : folder.slice(0, slash);
}

/** Files a folder's tree (null: it came to nothing) under its parent's children. */
function fileUnder(built: Map<string, Array<[string, string | null]>>, folder: string, oid: string | null): void {
  const parent = parentOf(folder);
  const siblings = built.get(parent) ?? [];
  siblings.push([bytesOf(folder.slice(folder.lastIndexOf('/') + 1)), oid]);
  built.set(parent, siblings);
}

/**
 * Folder trees built by earlier saves: what a folder's inputs (see {@link memoKey}) came to,
 * null for nothing. `get` answers only for a tree that is still there.
 * @internal
 */
export interface TreeMemo {
  get(key: string): string | null | undefined;
  set(key: string, oid: string | null): void;
}

const NO_MEMO: TreeMemo = { get: () => undefined, set: () => undefined };

/** What a folder's tree is made of, as one id: HEAD's tree there (its commit and path), its changed entries, its built children. */
function memoKey(head: string, folder: string, changes: ReadonlyMap<string, Entry | null> = new Map(), children: ReadonlyArray<[string, string | null]> = []): string {
  const hash = createHash('sha1').update(`${head}:${folder}\0`);
  for (const [name, entry] of [...changes].sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0))) hash.update(`${name}\0${entry === null ? '-' : `${entry.mode} ${entry.oid}`}\n`, 'latin1');
  hash.update('\n');
  for (const [name, oid] of [...children].sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0))) hash.update(`${name}\0${oid ?? '-'}\n`, 'latin1');
  return hash.digest('hex');
}

/** A name as a latin1 string of its UTF-8 bytes. */
function bytesOf(name: string): string {
  return Buffer.from(name, 'utf8').toString('latin1');
}

const EMPTY = Buffer.alloc(0);

/** Where each entry of a tree object is: its record, its name, whether it is a folder. */
interface TreeScan {
  count: number;
  start: Int32Array;
  end: Int32Array;
  nameStart: Int32Array;
  nameEnd: Int32Array;
  tree: Uint8Array;
}

/**
 * The entries of a tree object, in order, found without decoding any; null for a tree chant
 * would not rewrite: a mode git's index would write otherwise (zero-padded, group-writable), a
 * name no checkout holds, entries out of git's order.
 */
function scanTree(content: Buffer, hashBytes: number): TreeScan | null {
  // An entry is at least a five-byte mode, a space, a one-byte name, a NUL and the id.
  const most = Math.ceil(content.length / (8 + hashBytes));
  const scan: TreeScan = { count: 0, start: new Int32Array(most), end: new Int32Array(most), nameStart: new Int32Array(most), nameEnd: new Int32Array(most), tree: new Uint8Array(most) };
  // Plain loops over the bytes: a native call an entry (indexOf, compare) costs more than the
  // few bytes of a mode and a name.
  let offset = 0;
  while (offset < content.length) {
    let mode = 0;
    let cursor = offset;
    for (; cursor < content.length && content[cursor] !== 32; cursor += 1) {
      const digit = (content[cursor] as number) - 48;
      if (digit < 0 || digit > 7) return null;
      mode = mode * 8 + digit;
    }
    const space = cursor;
    for (cursor += 1; cursor < content.length && content[cursor] !== 0; cursor += 1);
    const nul = cursor;
    // git's index writes 40000 for a folder, unpadded, and 100644, 100755, 120000 or 160000.
    const digits = space - offset;
    const tree = mode === 0o40000 && digits === 5;
    const other = digits === 6 && (mode === 0o100644 || mode === 0o100755 || mode === 0o120000 || mode === 0o160000);
    if (nul + 1 + hashBytes > content.length || scan.count >= most || (!tree && !other) || !checkoutName(content, space + 1, nul)) return null;
    const i = scan.count;
    if (i > 0 && compareKeys(content, scan.nameStart[i - 1] as number, scan.nameEnd[i - 1] as number, scan.tree[i - 1] === 1, content, space + 1, nul, tree) >= 0) return null;
    scan.start[i] = offset;
    scan.nameStart[i] = space + 1;
    scan.nameEnd[i] = nul;
    scan.tree[i] = tree ? 1 : 0;
    offset = nul + 1 + hashBytes;
    scan.end[i] = offset;
    scan.count += 1;
  }
  return scan;
}

/** A name a checkout can hold: not empty, `.`, `..` or `.git` in any case. */
function checkoutName(content: Buffer, start: number, end: number): boolean {
  const length = end - start;
  if (length === 0) return false;
  if (length > 4) return true;
  const name = content.toString('latin1', start, end);
  return name !== '.' && name !== '..' && name.toLowerCase() !== '.git';
}

/** git's order of tree entries, on names as bytes: a folder sorts as its name and a slash. */
function compareKeys(a: Buffer, aStart: number, aEnd: number, aTree: boolean, b: Buffer, bStart: number, bEnd: number, bTree: boolean): number {
  const aLength = aEnd - aStart;
  const bLength = bEnd - bStart;
  const common = Math.min(aLength, bLength);
  for (let k = 0; k < common; k += 1) {
    const difference = (a[aStart + k] as number) - (b[bStart + k] as number);
    if (difference !== 0) return difference;
  }
  const aNext = aLength > common ? (a[aStart + common] as number) : aTree ? 0x2f : 0;
  const bNext = bLength > common ? (b[bStart + common] as number) : bTree ? 0x2f : 0;
  return aNext !== bNext ? aNext - bNext : aLength - bLength;
}

/** The memo of folder trees, in the git directory: each line a key and a tree id (`-`: none). */
export const MEMO_FILE = 'chant-tree-memo';

/**
 * The memo read from its file; a tree it names is taken only while `exists` says it is on disk
 * (git may have packed or pruned it since). `used` collects what this save looked up and built.
 */
function treeMemo(text: string, exists: (oid: string) => boolean): TreeMemo & { used: Map<string, string | null> } {
  const known = new Map<string, string>();
  for (const line of text.split('\n')) {
    const [key, oid] = line.split(' ');
    if (key !== undefined && oid !== undefined && /^[0-9a-f]{40}$/.test(key) && (oid === '-' || OBJECT_ID.test(oid))) known.set(key, oid);
  }
  const used = new Map<string, string | null>();
  return {
    used,
    get(key) {
      const oid = known.get(key);
      if (oid === undefined || (oid !== '-' && !exists(oid))) return undefined;
      const value = oid === '-' ? null : oid;
      used.set(key, value);
      return value;
    },
    set(key, oid) {
      used.set(key, oid);
    },
  };
}

/** Replaces the memo with what this save used; a memo that cannot be written is only a slower next save. */
async function saveMemo(file: string, used: ReadonlyMap<string, string | null>): Promise<void> {
  await replaceCacheFile(file, [...used].map(([key, oid]) => `${key} ${oid ?? '-'}\n`).join(''), 'latin1');
}
