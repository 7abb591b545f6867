// Reads from an index file what git itself does not print without another process: which
// entries are gitlinks (submodules and embedded repositories), whose files a snapshot cannot
// hold, and, for a restore, whether the index holds exactly a given tree (versions 2 to 4 of the
// format). Writes one kind only: a small version 2 index of the few paths a restore checks out.
import { createHash } from 'node:crypto';
import { closeSync, openSync, writevSync } from 'node:fs';
import { readFile } from 'node:fs/promises';
import { invalidateCacheTree } from './cache-tree.js';
import { objectHash } from './object-format.js';
import { compareKeys } from './tree.js';

/** The type nibble of a gitlink's mode (0o160000), as the mode's third byte holds it. */
const GITLINK_TYPE = 0o160000 >> 8;

/**
 * One gitlink entry of an index.
 * @internal
 */
export interface Gitlink {
  path: string;
  /** The commit it is at. */
  commit: string;
}

/**
 * The gitlink entries of an index file, in index order.
 * @param indexFile - the index file
 * @param objectFormat - `sha1` or `sha256`
 * @returns the entries; empty when there are none, or when the file is missing or not an index
 * @internal
 */
export async function readGitlinks(indexFile: string, objectFormat: string): Promise<Gitlink[]> {
  const data = await readFile(indexFile).catch(() => null);
  return data === null ? [] : parseGitlinks(data, objectHash(objectFormat).bytes);
}

/** Where a walk through an index's entries is: the entry's offset, its flags, and its path's bytes. */
interface EntryCursor {
  start: number;
  flags: number;
  /** The path's bytes in the data (versions 2 and 3). */
  nameStart: number;
  nameEnd: number;
  /** The path rebuilt from the previous one (version 4, when asked for), else null. */
  path: Buffer | null;
}

/**
 * Steps through the entries of an index, handing each to `visit` in one reused cursor (false
 * from `visit` stops the walk). It runs on every save over every entry (100,000 in a large
 * checkout), so versions 2 and 3 step from entry to entry by arithmetic on the name length git
 * stores in each entry's flags, bytes are read by index rather than through Buffer's methods
 * (each call costs more than the arithmetic in a process that has just started), and version
 * 4's prefix-compressed paths are rebuilt only when `paths` asks for them.
 * @returns the offset just past the entries, where the extensions begin; -1 when the data is
 *   not an index of version 2 to 4, the entries run past it, or the walk was stopped
 */
function walkEntries(data: Buffer, hashBytes: number, paths: boolean, visit: (entry: EntryCursor) => boolean): number {
  if (data.length < 12 || data.toString('latin1', 0, 4) !== 'DIRC') return -1;
  const version = data.readUInt32BE(4);
  const count = data.readUInt32BE(8);
  if (version < 2 || version > 4) return -1;
  const fixed = 40 + hashBytes;
  const cursor: EntryCursor = { start: 0, flags: 0, nameStart: 0, nameEnd: 0, path: null };
  let offset = 12;
  let previous: Buffer = Buffer.alloc(0);
  for (let entry = 0; entry < count; entry += 1) {
    const start = offset;
    if (start + fixed + 2 > data.length) return -1;
    const flags = ((data[start + fixed] as number) << 8) | (data[start + fixed + 1] as number);
    let nameStart = start + fixed + 2;
    if (version >= 3 && (flags & 0x4000) !== 0) nameStart += 2;
    cursor.start = start;
    cursor.flags = flags;
    if (version === 4) {
      // Prefix compression: drop that many bytes of the previous path, then a NUL-terminated suffix.
      const [strip, after] = readOffsetVarint(data, nameStart);
      const end = data.indexOf(0, after);
      if (end < 0) return -1;
      if (paths) {
        if (strip > previous.length) return -1;
        previous = Buffer.concat([previous.subarray(0, previous.length - strip), data.subarray(after, end)]);
        cursor.path = previous;
      }
      offset = end + 1;
    } else {
      // A name of 0xFFF bytes or more is stored with that length and found by its NUL.
      let length = flags & 0xfff;
      if (length === 0xfff) {
        const end = data.indexOf(0, nameStart);
        if (end < 0) return -1;
        length = end - nameStart;
      }
      cursor.nameStart = nameStart;
      cursor.nameEnd = nameStart + length;
      // Entries are padded with 1 to 8 NULs to a multiple of 8 bytes.
      offset = start + ((nameStart - start + length + 8) & ~7);
    }
    if (!visit(cursor)) return -1;
  }
  return offset;
}

function parseGitlinks(data: Buffer, hashBytes: number): Gitlink[] {
  const found: Gitlink[] = [];
  walkEntries(data, hashBytes, true, (entry) => {
    // The object type is the top four bits of the mode's low 16: its third byte's high nibble.
    if (((data[entry.start + 26] as number) & 0xf0) === GITLINK_TYPE) {
      const path = entry.path === null ? data.toString('utf8', entry.nameStart, entry.nameEnd) : entry.path.toString('utf8');
      found.push({ path, commit: data.toString('hex', entry.start + 40, entry.start + 40 + hashBytes) });
    }
    return true;
  });
  return found;
}

/** git's offset varint (varint.c): each continuation adds one before shifting. */
function readOffsetVarint(data: Buffer, at: number): [number, number] {
  let position = at;
  let byte = data[position++] ?? 0;
  let value = byte & 127;
  while ((byte & 128) !== 0) {
    value += 1;
    byte = data[position++] ?? 0;
    value = value * 128 + (byte & 127);
  }
  return [value, position];
}

/**
 * Whether an index file holds exactly `tree` and nothing more: every entry at stage 0 with no
 * flag beyond git's plain ones (no intent-to-add, skip-worktree or assume-unchanged), and a
 * cache tree (git's own record of the tree its entries make) whose root is valid, covers every
 * entry and names `tree`. The index then equals what `git read-tree --reset` of a commit with
 * that tree would leave, stat data included, so a restore need not write it again. Any
 * extension beyond those git keeps across such a reset (the cache tree, the untracked cache and
 * the index of entry offsets), or anything this reader does not know, answers false.
 * @param indexFile - the index file
 * @param objectFormat - `sha1` or `sha256`
 * @param tree - the tree it should hold
 * @returns true only when all of the above holds
 * @internal
 */
export async function indexHoldsTree(indexFile: string, objectFormat: string, tree: string): Promise<boolean> {
  const data = await readFile(indexFile).catch(() => null);
  return data !== null && holdsTree(data, objectHash(objectFormat).bytes, tree);
}

const PLAIN_EXTENSIONS = new Set(['TREE', 'UNTR', 'EOIE', 'IEOT']);

function holdsTree(data: Buffer, hashBytes: number, tree: string): boolean {
  // Assume-unchanged (0x8000), extended flags (0x4000) or a stage other than 0 (0x3000).
  const offset = walkEntries(data, hashBytes, false, (entry) => (entry.flags & 0xf000) === 0);
  return offset >= 0 && extensionsHoldTree(data, hashBytes, offset, tree);
}

/**
 * The part of {@link holdsTree} after the entries, which were all plain and end at `entriesEnd`:
 * only extensions git keeps across a reset, and a cache tree whose valid root covers every entry
 * and names `tree`.
 */
function extensionsHoldTree(data: Buffer, hashBytes: number, entriesEnd: number, tree: string): boolean {
  if (data.length < 12 + hashBytes) return false;
  let offset = entriesEnd;
  const count = data.readUInt32BE(8);
  let root: string | null = null;
  const end = data.length - hashBytes;
  while (offset + 8 <= end) {
    const signature = data.toString('latin1', offset, offset + 4);
    const size = data.readUInt32BE(offset + 4);
    const body = offset + 8;
    if (!PLAIN_EXTENSIONS.has(signature) || body + size > end) return false;
    if (signature === 'TREE') root = cacheTreeRoot(data.subarray(body, body + size), hashBytes, count);
    offset = body + size;
  }
  return offset === end && root === tree;
}

/**
 * The tree the cache tree's root names, or null when it is not valid or does not cover all
 * `count` entries. Each node is its path and a NUL, then `<entries> <subtrees>\n` in ASCII, then
 * the tree id when `<entries>` is not -1; the root comes first, with an empty path.
 */
function cacheTreeRoot(extension: Buffer, hashBytes: number, count: number): string | null {
  if (extension[0] !== 0) return null;
  const newline = extension.indexOf(0x0a, 1);
  if (newline < 0) return null;
  const match = /^(-?\d+) (\d+)$/.exec(extension.toString('latin1', 1, newline));
  if (match === null || Number(match[1]) !== count || newline + 1 + hashBytes > extension.length) return null;
  return extension.toString('hex', newline + 1, newline + 1 + hashBytes);
}

/**
 * Whether an index may have an entry under a flag: assume-unchanged (a flag bit) or
 * skip-worktree (an extended flag, version 3 and up). True when one of its own entries has one,
 * when it is split (the shared index holds entries this file does not), and when the file is
 * there but does not read as an index.
 * @param indexFile - the index file
 * @param objectFormat - `sha1` or `sha256`
 * @internal
 */
export async function indexMayHaveFlags(indexFile: string, objectFormat: string): Promise<boolean> {
  const data = await readFile(indexFile).catch(() => null);
  if (data === null) return false;
  const hashBytes = objectHash(objectFormat).bytes;
  const version = data.length >= 8 ? data.readUInt32BE(4) : 0;
  let flagged = false;
  const end = walkEntries(data, hashBytes, false, (entry) => {
    flagged = (entry.flags & 0x8000) !== 0 || (version >= 3 && (entry.flags & 0x4000) !== 0 && ((data[entry.start + 40 + hashBytes + 2] as number) & 0x40) !== 0);
    return !flagged;
  });
  return flagged || end < 0 || hasLink(data, end, hashBytes);
}

/**
 * The paths of an index's intent-to-add entries (`git add -N`), in index order, as byte strings
 * (one character a byte). git leaves them out of the tree it writes of the index: the tree alone
 * would bring such a file back untracked.
 * @param indexFile - the index file
 * @param objectFormat - `sha1` or `sha256`
 * @returns the paths; empty when there are none, or when the file is missing or not an index;
 *   those of a split index's shared index are left out
 * @internal
 */
export async function readIntentToAddPaths(indexFile: string, objectFormat: string): Promise<string[]> {
  const data = await readFile(indexFile).catch(() => null);
  if (data === null) return [];
  const hashBytes = objectHash(objectFormat).bytes;
  const version = data.length >= 8 ? data.readUInt32BE(4) : 0;
  if (version < 3) return [];
  const paths: string[] = [];
  walkEntries(data, hashBytes, true, (cursor) => {
    if ((cursor.flags & 0x4000) !== 0 && ((data[cursor.start + 40 + hashBytes + 2] as number) & 0x20) !== 0) {
      const path = cursor.path === null ? data.toString('latin1', cursor.nameStart, cursor.nameEnd) : cursor.path.toString('latin1');
      // A split index writes an entry that replaces one of its shared index under an empty name
      // (the shared entry's): no path of its own, which git add would read as every file.
      if (path !== '') paths.push(path);
    }
    return true;
  });
  return paths;
}

/**
 * The paths of an index's unmerged entries (a conflict's stages 1 to 3), once each, in index
 * order, as byte strings (one character a byte).
 * @param indexFile - the index file
 * @param objectFormat - `sha1` or `sha256`
 * @returns the paths; empty when there are none, or when the file is missing or not an index
 * @internal
 */
export async function readUnmergedPaths(indexFile: string, objectFormat: string): Promise<string[]> {
  const data = await readFile(indexFile).catch(() => null);
  if (data === null) return [];
  const found: string[] = [];
  walkEntries(data, objectHash(objectFormat).bytes, true, (entry) => {
    if ((entry.flags & 0x3000) !== 0) {
      const path = entry.path === null ? data.toString('latin1', entry.nameStart, entry.nameEnd) : entry.path.toString('latin1');
      if (found.at(-1) !== path) found.push(path);
    }
    return true;
  });
  return found;
}

/**
 * Whether an index is split (`git update-index --split-index`, `core.splitIndex`): its `link`
 * extension names a shared index holding the entries this file does not, so its own entries are
 * not all of the index's.
 * @param data - the index file's bytes, or null when it is missing
 * @param objectFormat - `sha1` or `sha256`
 * @returns true when it has a `link` extension; false for a whole index or bytes that are not one
 * @internal
 */
export function isSplitIndex(data: Buffer | null, objectFormat: string): boolean {
  if (data === null) return false;
  const hashBytes = objectHash(objectFormat).bytes;
  const offset = walkEntries(data, hashBytes, false, () => true);
  return offset >= 0 && hasLink(data, offset, hashBytes);
}

/**
 * One entry of an index, as a save needs it.
 * @internal
 */
export interface IndexEntry {
  /** The path, decoded as UTF-8. */
  path: string;
  /** The mode, as git writes it in trees (`100644`, `160000`, ...). */
  mode: string;
  oid: string;
  /** 0 for a merged entry, 1 to 3 for the sides of a conflict. */
  stage: number;
  /** What git was told not to look at in the working tree for this path, or null. */
  flag: 'assume-unchanged' | 'skip-worktree' | null;
  /** Intent-to-add (`git add -N`). */
  intentToAdd: boolean;
  /** The entry's stat data as the index holds it (ctime, mtime, device, inode, mode, uid, gid, size: 40 bytes), where it was read from an index. */
  statData?(): Buffer;
}

/**
 * Every entry of an index file, in index order.
 * @param indexFile - the index file
 * @param objectFormat - `sha1` or `sha256`
 * @returns the entries; empty when the file is missing or not an index
 * @internal
 */
export async function readIndexEntries(indexFile: string, objectFormat: string): Promise<IndexEntry[]> {
  const data = await readFile(indexFile).catch(() => null);
  return data === null ? [] : parseEntries(data, objectHash(objectFormat).bytes, null);
}

/**
 * The entries of an index file's bytes that `keep` takes, in index order. A save from status
 * looks at the few entries status names, the flagged ones and the gitlinks: a large index
 * (100,000 entries) is walked without an object kept for each of the others: a CLI save of
 * 100,000 files peaked at 101 MB resident keeping them all, 68 MB without (/usr/bin/time).
 * @param data - the index file's bytes, or null when it is missing
 * @param objectFormat - `sha1` or `sha256`
 * @param keep - whether an entry is wanted, from its path, mode, stage and flag
 * @internal
 */
export function selectIndexEntries(data: Buffer | null, objectFormat: string, keep: (entry: Omit<IndexEntry, 'oid' | 'intentToAdd'>) => boolean): IndexEntry[] {
  return data === null ? [] : parseEntries(data, objectHash(objectFormat).bytes, keep);
}

/**
 * An index read in two steps around `git status`, which runs with optional locks off and so never
 * rewrites it: {@link scanIndex} walks it while status runs, and `select` then takes the entries
 * status named by their paths.
 * @internal
 */
export interface IndexScan {
  /** Whether the index is split (see {@link isSplitIndex}): its own entries are not all of it. */
  readonly split: boolean;
  /**
   * The flagged entries (assume-unchanged, skip-worktree), the gitlinks and every entry of one
   * of `paths`, in index order: what {@link selectIndexEntries} keeps for the same paths. With
   * `raw`, the paths are byte strings (one character a byte), for names that are not UTF-8; the
   * entries' paths are decoded as UTF-8 still, and where the index is not walked here a name
   * that is not UTF-8 takes every entry whose path decodes as its own does.
   */
  select(paths: Iterable<string>, raw?: boolean): IndexEntry[];
  /** Whether these bytes hold exactly `tree` and nothing more, as {@link indexHoldsTree} answers for the file. */
  holds(tree: string): boolean;
  /**
   * Whether every entry is plain: stage 0 (no conflict), neither assume-unchanged nor under an
   * extended flag, in a whole index (no `link`); false where that is not known (a version 4 or
   * out-of-order index is not walked here). What {@link readUnmergedPaths} and
   * {@link indexMayHaveFlags} would find nothing in.
   */
  readonly plain: boolean;
  /**
   * Writes to `file` (which must not exist) a copy of the index whose entries for `patches`
   * carry the stat data and blob each gives: see {@link IndexScan.writeStatusIndex}'s caller,
   * lib/store/status-index.ts. Absent where the index was not walked here (version 4, out of
   * order).
   */
  writeStatusIndex?(file: string, patches: readonly EntryPatch[], racySeconds: number): string[] | null;
}

/** New stat data and blob for one entry of an index, for {@link IndexScan.writeStatusIndex}. */
export interface EntryPatch {
  path: string;
  /** The blob the index must hold for the path now, or the entry is left as it is. */
  indexOid: string;
  /** The blob to give it. */
  oid: string;
  dev: number;
  ino: number;
  uid: number;
  size: number;
  mtimeMs: number;
  ctimeMs: number;
}

/**
 * Walks an index's entries once, decoding none but the flagged entries and the gitlinks: where
 * each entry and its name are, and whether they are in git's order (names as bytes, then stage),
 * so that `select` finds a path's entries by binary search. A CLI save of 40,000 files in wide
 * folders spent 24 ms after status decoding every entry's path to keep the few status named,
 * and walking the entries again for the split check; this walk runs while git status does.
 * An index of version 4 (prefix-compressed names) or out of order is read as
 * {@link selectIndexEntries} reads it, when `select` is called.
 * @param data - the index file's bytes, or null when it is missing
 * @param objectFormat - `sha1` or `sha256`
 * @internal
 */
export function scanIndex(data: Buffer | null, objectFormat: string): IndexScan {
  if (data === null) return { split: false, select: () => [], holds: () => false, plain: true };
  const hashBytes = objectHash(objectFormat).bytes;
  const version = data.length >= 8 ? data.readUInt32BE(4) : 0;
  const count = data.length >= 12 ? data.readUInt32BE(8) : 0;
  const whole = (): IndexScan => ({
    split: isSplitIndex(data, objectFormat),
    select: (paths, raw = false) => { const wanted = new Set(raw ? [...paths].map((path) => Buffer.from(path, 'latin1').toString('utf8')) : paths); return parseEntries(data, hashBytes, (entry) => entry.flag !== null || entry.mode === '160000' || wanted.has(entry.path)); },
    holds: (tree) => holdsTree(data, hashBytes, tree),
    plain: false,
  });
  // A count the bytes cannot hold is a broken index: the whole read says so as it always has.
  if (version === 4 || count * (42 + hashBytes) > data.length) return whole();
  const starts = new Int32Array(count);
  const nameStarts = new Int32Array(count);
  const nameEnds = new Int32Array(count);
  const marked: number[] = [];
  let index = 0;
  let ordered = true;
  let previousStage = 0;
  // Whether every entry is plain, as holdsTree asks: no flag beyond git's plain ones, stage 0.
  let plain = true;
  const fixed = 40 + hashBytes;
  const end = walkEntries(data, hashBytes, false, (entry) => {
    if ((entry.flags & 0xf000) !== 0) plain = false;
    starts[index] = entry.start;
    nameStarts[index] = entry.nameStart;
    nameEnds[index] = entry.nameEnd;
    const stage = (entry.flags >> 12) & 3;
    if (index > 0 && ordered) {
      const order = compareKeys(data, nameStarts[index - 1] as number, nameEnds[index - 1] as number, false, data, entry.nameStart, entry.nameEnd, false);
      // The same name twice only as a conflict's stages, each higher than the last.
      if (order > 0 || (order === 0 && stage <= previousStage)) ordered = false;
    }
    previousStage = stage;
    // Assume-unchanged, skip-worktree (in the extended flags, version 3), or a gitlink's mode.
    const skipWorktree = version >= 3 && (entry.flags & 0x4000) !== 0 && ((data[entry.start + fixed + 2] as number) & 0x40) !== 0;
    if ((entry.flags & 0x8000) !== 0 || skipWorktree || ((data[entry.start + 26] as number) & 0xf0) === GITLINK_TYPE) marked.push(index);
    index += 1;
    return true;
  });
  if (end < 0 || !ordered) return whole();
  const split = hasLink(data, end, hashBytes);
  // The first entry of `path`'s name (stages follow it), or `count` past them all.
  const firstOf = (name: Buffer): number => {
    let low = 0;
    let high = count;
    while (low < high) {
      const middle = (low + high) >>> 1;
      if (compareKeys(data, nameStarts[middle] as number, nameEnds[middle] as number, false, name, 0, name.length, false) < 0) low = middle + 1;
      else high = middle;
    }
    return low;
  };
  const named = (at: number, name: Buffer): boolean => at < count && compareKeys(data, nameStarts[at] as number, nameEnds[at] as number, false, name, 0, name.length, false) === 0;
  return {
    split,
    plain: plain && !split,
    holds: (tree) => plain && extensionsHoldTree(data, hashBytes, end, tree),
    select: (paths, raw = false) => {
      const taken = new Set(marked);
      for (const path of paths) {
        const name = Buffer.from(path, raw ? 'latin1' : 'utf8');
        for (let at = firstOf(name); named(at, name); at += 1) taken.add(at);
      }
      return [...taken].sort((a, b) => a - b).map((at) => {
        const start = starts[at] as number;
        const flags = ((data[start + fixed] as number) << 8) | (data[start + fixed + 1] as number);
        return entryAt(data, hashBytes, version, start, flags, data.toString('utf8', nameStarts[at], nameEnds[at]));
      });
    },
    writeStatusIndex: (file, patches, racySeconds) => {
      if (split) return null;
      // The extensions: the cache tree is kept with the folders on the way to a patched entry
      // marked invalid, as git marks them when it changes an entry; a sparse index's marker is
      // kept; the others are optional and left out (the untracked cache, fsmonitor's token, the
      // offsets of the entries): git reads the index as it would without them. One git must
      // understand and this reader does not know stops the copy.
      const hashEnd = data.length - hashBytes;
      let cacheTree: Buffer | null = null;
      const kept: Buffer[] = [];
      for (let at = end; at < hashEnd;) {
        if (at + 8 > hashEnd) return null;
        const signature = data.toString('latin1', at, at + 4);
        const bodyEnd = at + 8 + data.readUInt32BE(at + 4);
        if (bodyEnd > hashEnd) return null;
        if (signature === 'TREE') cacheTree = data.subarray(at + 8, bodyEnd);
        else if (signature === 'sdir') kept.push(data.subarray(at, bodyEnd));
        else if (!/^[A-Z]/.test(signature)) return null;
        at = bodyEnd;
      }
      // Only a plain entry (stage 0, no flag, no extended flags) of a regular file, alone under
      // its name, holding the blob the patch expects, takes the patch.
      const chosen: Array<{ at: number; patch: EntryPatch }> = [];
      const taken = new Uint8Array(count);
      // The patches come mostly in the index's order (the hash cache keeps them in the order
      // status named them): each is looked for from where the last was found, by steps that
      // double, before a binary search of the last step.
      let hint = 0;
      const find = (name: Buffer): number => {
        const below = (at: number): boolean => compareKeys(data, nameStarts[at] as number, nameEnds[at] as number, false, name, 0, name.length, false) < 0;
        if (hint >= count || !below(hint)) return firstOf(name);
        let low = hint + 1;
        let step = 1;
        while (low + step < count && below(low + step)) {
          low += step + 1;
          step *= 2;
        }
        let high = Math.min(count, low + step + 1);
        while (low < high) {
          const middle = (low + high) >>> 1;
          if (below(middle)) low = middle + 1;
          else high = middle;
        }
        return low;
      };
      for (const patch of patches) {
        const name = Buffer.from(patch.path, 'utf8');
        const at = find(name);
        hint = at;
        if (!named(at, name) || named(at + 1, name) || taken[at] === 1) continue;
        const start = starts[at] as number;
        const flags = ((data[start + fixed] as number) << 8) | (data[start + fixed + 1] as number);
        const mode = data.readUInt32BE(start + 24);
        if ((flags & 0xf000) !== 0 || (mode !== 0o100644 && mode !== 0o100755)) continue;
        if (data.toString('hex', start + 40, start + 40 + hashBytes) !== patch.indexOid) continue;
        taken[at] = 1;
        chosen.push({ at, patch });
      }
      if (chosen.length === 0) return null;
      // The bytes are changed in place, written, and put back before anything else reads them.
      const width = 40 + hashBytes;
      const before = Buffer.allocUnsafe(chosen.length * width);
      chosen.forEach(({ at }, k) => data.copy(before, k * width, starts[at] as number, (starts[at] as number) + width));
      const smudged: number[] = [];
      try {
        // An entry whose mtime is not older than the index it came from is racily clean there: git
        // reads its file again to know it is unchanged. The copy is written later, so such an entry
        // is given size 0, which makes git compare its bytes (as git smudges one when it writes).
        if (racySeconds > 0) {
          for (let at = 0; at < count; at += 1) {
            const start = starts[at] as number;
            if (taken[at] === 1 || data.readUInt32BE(start + 8) < racySeconds) continue;
            const size = data.readUInt32BE(start + 36);
            if (size === 0) continue;
            smudged.push(start, size);
            data.writeUInt32BE(0, start + 36);
          }
        }
        for (const { at, patch } of chosen) {
          const start = starts[at] as number;
          writeTime(data, start, patch.ctimeMs);
          writeTime(data, start + 8, patch.mtimeMs);
          data.writeUInt32BE(patch.dev % 2 ** 32, start + 16);
          data.writeUInt32BE(patch.ino % 2 ** 32, start + 20);
          data.writeUInt32BE(patch.uid % 2 ** 32, start + 28);
          data.writeUInt32BE(patch.size % 2 ** 32, start + 36);
          data.write(patch.oid, start + 40, hashBytes, 'hex');
        }
        const tree = cacheTree === null ? null : invalidateCacheTree(cacheTree, hashBytes, chosen.map(({ patch }) => patch.path));
        const treeHeader = Buffer.alloc(8);
        treeHeader.write('TREE', 0, 'latin1');
        treeHeader.writeUInt32BE(tree?.length ?? 0, 4);
        const parts = [data.subarray(0, end), ...(tree === null ? [] : [treeHeader, tree]), ...kept];
        const hash = createHash(objectHash(objectFormat).algorithm);
        for (const part of parts) hash.update(part);
        parts.push(hash.digest());
        const fd = openSync(file, 'wx', 0o600);
        try {
          const total = parts.reduce((sum, part) => sum + part.length, 0);
          if (writevSync(fd, parts) !== total) throw new Error(`${file}: short write`);
        } finally {
          closeSync(fd);
        }
      } finally {
        chosen.forEach(({ at }, k) => before.copy(data, starts[at] as number, k * width, (k + 1) * width));
        for (let k = 0; k < smudged.length; k += 2) data.writeUInt32BE(smudged[k + 1] as number, (smudged[k] as number) + 36);
      }
      return chosen.map(({ patch }) => patch.path);
    },
  };
}

/** A time in milliseconds as an index holds it: seconds, then nanoseconds, 32 bits each. */
function writeTime(data: Buffer, at: number, ms: number): void {
  const seconds = Math.floor(ms / 1000);
  const nanoseconds = Math.min(999_999_999, Math.max(0, Math.round((ms - seconds * 1000) * 1e6)));
  data.writeUInt32BE(seconds % 2 ** 32, at);
  data.writeUInt32BE(nanoseconds, at + 4);
}

/** Whether the extensions from `offset` (just past the entries) hold a `link` one. */
function hasLink(data: Buffer, offset: number, hashBytes: number): boolean {
  // Extensions: a 4-byte signature and a 4-byte size, then that many bytes; the checksum ends the file.
  for (let at = offset; at + 8 <= data.length - hashBytes; at += 8 + data.readUInt32BE(at + 4)) {
    if (data.toString('latin1', at, at + 4) === 'link') return true;
  }
  return false;
}

/**
 * The gitlinks among an index's entries (see {@link readGitlinks}).
 * @internal
 */
export function gitlinksOf(entries: readonly IndexEntry[]): Gitlink[] {
  return entries.filter((entry) => entry.mode === '160000').map((entry) => ({ path: entry.path, commit: entry.oid }));
}

/** The modes an index holds, as text, computed once rather than once an entry. */
const MODE_TEXT = new Map([0o100644, 0o100755, 0o120000, 0o160000].map((mode) => [mode, mode.toString(8)]));

/**
 * An entry whose object id is read from the index's bytes when asked for: a save from status
 * reads every entry of the index (100,000 in a large checkout) and asks for the ids of the few it
 * changes, so it does not make 100,000 hex strings.
 */
class IndexRecord implements IndexEntry {
  readonly #data: Buffer;
  readonly #at: number;
  readonly #end: number;
  #oid: string | undefined;

  constructor(data: Buffer, at: number, hashBytes: number, readonly path: string, readonly mode: string, readonly stage: number, readonly flag: IndexEntry['flag'], readonly intentToAdd: boolean) {
    this.#data = data;
    this.#at = at;
    this.#end = at + hashBytes;
  }

  get oid(): string {
    this.#oid ??= this.#data.toString('hex', this.#at, this.#end);
    return this.#oid;
  }

  statData(): Buffer {
    return Buffer.from(this.#data.subarray(this.#at - 40, this.#at));
  }
}

function parseEntries(data: Buffer, hashBytes: number, keep: Parameters<typeof selectIndexEntries>[2] | null): IndexEntry[] {
  const entries: IndexEntry[] = [];
  const version = data.length >= 8 ? data.readUInt32BE(4) : 0;
  walkEntries(data, hashBytes, true, (cursor) => {
    const path = cursor.path === null ? data.toString('utf8', cursor.nameStart, cursor.nameEnd) : cursor.path.toString('utf8');
    const entry = entryAt(data, hashBytes, version, cursor.start, cursor.flags, path);
    if (keep === null || keep(entry)) entries.push(entry);
    return true;
  });
  return entries;
}

/** The entry at `start`, its flags read, its path decoded; its id is read when asked for. */
function entryAt(data: Buffer, hashBytes: number, version: number, start: number, flags: number, path: string): IndexEntry {
  // Extended flags (version 3 and up, when the entry's 0x4000 says so) follow the 16-bit flags.
  const extended = version >= 3 && (flags & 0x4000) !== 0 ? data.readUInt16BE(start + 40 + hashBytes + 2) : 0;
  const mode = data.readUInt32BE(start + 24);
  const modeText = MODE_TEXT.get(mode) ?? mode.toString(8);
  const stage = (flags >> 12) & 3;
  const flag = (extended & 0x4000) !== 0 ? 'skip-worktree' : (flags & 0x8000) !== 0 ? 'assume-unchanged' : null;
  return new IndexRecord(data, start + 40, hashBytes, path, modeText, stage, flag, (extended & 0x2000) !== 0);
}

/** One entry to write into a new index: a path (a byte string, one character a byte), its mode and object. */
export interface NewIndexEntry {
  raw: string;
  /** `100644`, `100755` or `120000`. */
  mode: string;
  oid: string;
  /** Stat data to give it (see IndexEntry.statData), where git may trust it as it trusts the index it came from; none when absent. */
  stat?: Buffer;
}

/**
 * An index file (version 2) holding exactly `entries`, at stage 0 with no stat data (but what an entry brings), sorted as
 * git sorts them: what `git read-tree` of a tree holding only them would write, but for the
 * stat data and the cache tree, which a checkout from it does not need.
 * @throws on a path that appears twice
 * @internal
 */
export function indexFileOf(entries: readonly NewIndexEntry[], objectFormat: string): Buffer {
  const { algorithm, bytes: hashBytes } = objectHash(objectFormat);
  const sorted = [...entries].sort((a, b) => (a.raw < b.raw ? -1 : a.raw > b.raw ? 1 : 0));
  const header = Buffer.alloc(12);
  header.write('DIRC', 0, 'latin1');
  header.writeUInt32BE(2, 4);
  header.writeUInt32BE(sorted.length, 8);
  const parts: Buffer[] = [header];
  const fixed = 40 + hashBytes + 2;
  for (const [index, entry] of sorted.entries()) {
    if (index > 0 && (sorted[index - 1] as NewIndexEntry).raw === entry.raw) throw new Error(`${entry.raw} is twice in the index`);
    const name = Buffer.from(entry.raw, 'latin1');
    // The fixed part and the name, padded with one to eight NULs to a multiple of eight.
    const record = Buffer.alloc((fixed + name.length + 8) & ~7);
    if (entry.stat !== undefined && entry.stat.length === 40) entry.stat.copy(record, 0);
    record.writeUInt32BE(parseInt(entry.mode, 8), 24);
    Buffer.from(entry.oid, 'hex').copy(record, 40);
    record.writeUInt16BE(Math.min(name.length, 0xfff), 40 + hashBytes);
    name.copy(record, fixed);
    parts.push(record);
  }
  const body = Buffer.concat(parts);
  return Buffer.concat([body, createHash(algorithm).update(body).digest()]);
}
