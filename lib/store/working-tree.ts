// The tree of the working tree, built from what `git status` reports instead of staging every
// file into a temporary index: HEAD's tree, with each path status names set to what the index
// or the working tree holds for it. git still reads every file (status) and writes the blobs
// its clean side may rewrite (hash-object, through the same filters as `git add`); chant
// writes the others, whose bytes git would store as they are. chant rewrites only the folders
// on the way to a changed path, copying what did not change byte for byte, and writes them as
// loose objects itself. What this cannot decide the way `git add --all` would (submodules that
// moved, conflicts, symlinks and executables it would have to classify, names it cannot pass
// through a line, replace refs, a flagged entry whose index differs from HEAD, a .gitattributes
// git add would read from the index, a CRLF file git add keeps as it is because its blob in the
// index has a CR) makes it answer null: the caller then stages through a temporary index.
import { closeSync, fstatSync, lstatSync, openSync, readlinkSync, renameSync, rmSync, statSync } from 'node:fs';
import { createHash } from 'node:crypto';
import type { Stats } from 'node:fs';
import { readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { unreadableInWalk } from '../git/plumbing.js';
import type { Plumbing, RefRecord, RepositoryLayout } from '../git/plumbing.js';
import type { GitObject } from '../git/formats/batch.js';
import { parseCommit } from '../git/formats/commit.js';
import { gitlinksOf, scanIndex } from '../git/formats/index-file.js';
import type { Gitlink, IndexEntry, IndexScan } from '../git/formats/index-file.js';
import type { FlaggedPath, LeftOut } from '../snapshot/left-out.js';
import { planFromParts, readStatus } from '../git/formats/status.js';
import type { StatusPlan } from '../git/formats/status.js';
import { buildTrees, foldersOnTheWay } from '../git/formats/tree.js';
import type { Entry } from '../git/formats/tree.js';
import { HASH_CACHE_FILE, hashCache, hashFingerprint, RACY_MARGIN_MS, saveHashCache, statCheckWeakened, statKey } from '../managers/hash-cache.js';
import type { HashCache } from '../managers/hash-cache.js';
import { MEMO_FILE, saveMemo, treeMemo } from '../managers/tree-memo.js';
import { dropKeptIndex, fileIdentity, KEPT_INDEX_FILE, keptCopyWhole, readIdentified, readKeptIndexKey, readKeptStaged, writeKeptIndexKey, writeKeptStaged } from '../managers/kept-index.js';
import type { KeptIndexKey } from '../managers/kept-index.js';
import { objectHash } from '../git/formats/object-format.js';
import { isWipError } from '../errors.js';
import { temporaryIndexFile } from '../managers/temporaries.js';
import { notThereLoose, readLooseFolderTrees } from '../git/loose-objects.js';
import type { CheckedReads } from '../git/loose-objects.js';
import { attributesElsewhere, attributesRewrite, writeFileBlobs } from '../git/blob-writer.js';
import { looseTarget } from '../git/loose-target.js';
import type { LooseTarget } from '../git/loose-target.js';
import { mayConvertAutomatically } from '../git/line-endings.js';
import { readBlobs } from '../git/storage.js';
import { tipFromFiles } from './checkout.js';
import { writeBlobsAgain } from './keep-written.js';
import { isAttributes, STATUS_INDEX_MINIMUM, STATUS_INDEX_SHARE, writeStatusIndex } from './status-index.js';
import type { StatusIndex } from './status-index.js';
import { refusedByObjectChecks, unwritablePath } from './tree-paths.js';

/** The tree of the working tree, the wip tip read in the same call, and the tree's gitlinks. */
export interface WorkingTree {
  tree: string;
  tip: RefRecord | null;
  /** The gitlinks (submodules, embedded repositories) of the tree: the index's, as status named none. */
  gitlinks: Gitlink[];
  /** The paths it could not take (gitlinks aside), with why, sorted by path. */
  leftOut: LeftOut[];
  /** Local edits under assume-unchanged or skip-worktree that it took, sorted by path. */
  flagged: FlaggedPath[];
  /**
   * The tree of the wip tip through which objects the tree names, taken from the caches
   * without a look, are known to be on disk (it holds them all): the tree may be recorded only
   * on a tip of that tree, or of its own (see recordSnapshot). Null when nothing was taken so.
   */
  pinned: string | null;
  /**
   * Whether the checkout's index, as read while status ran, holds exactly `tree` and nothing
   * more (see indexHoldsTree): the index a restore would otherwise read again whole.
   */
  indexHolds(tree: string): boolean;
  /**
   * Whether the checkout's index, as read while status ran, holds no conflict stage and no
   * entry under a flag, whole (see IndexScan.plain): what a restore's checks would otherwise
   * read it again to find out.
   */
  indexPlain: boolean;
  /**
   * Once the tree is recorded as `recorded` (the ref moved to it, or it was the tip already),
   * keeps the private index this build used or made for the next save, or removes it where the
   * ref is not where this build left it; nothing where there was none.
   */
  keepStatusIndex(recorded: string): Promise<void>;
  /**
   * Once the tree is recorded (the ref holds it), writes again the blobs and trees this build
   * wrote that are gone from disk since: a `git gc --prune=now` run meanwhile deletes what no
   * ref names yet. A blob is written from its file, where the file still holds it.
   */
  keepWritten(): Promise<void>;
}

/** How {@link workingTreeByStatus} reads the working tree. */
export interface StatusReading {
  /** The size over which a new untracked file is left out. */
  maxFileSize: number;
  /** The environment git runs in (what the hash cache is keyed by). */
  env?: NodeJS.ProcessEnv;
  /**
   * Whether the repository has replace refs (`git rev-parse` said so when the checkout was
   * opened): the tree is then git add's to build (null). Unknown counts as yes.
   */
  replaced?: boolean;
  /** The hash cache's racy margin in milliseconds, for tests. */
  racyMarginMs?: number;
  /**
   * The objects the call has read from their loose files and checked (see CheckedReads): HEAD's
   * trees read here are added, for a restore's diff of the target's trees (often HEAD's) to take.
   */
  reads?: CheckedReads;
  /**
   * The fewest files the hash cache must vouch for before git status runs on a private copy of
   * the index (see lib/store/status-index.ts); for tests. Infinity: never.
   */
  statusIndexMinimum?: number;
  /**
   * Whether the private index is kept for the next save (lib/managers/kept-index.ts), and a kept
   * one used: a save's, whose caller then calls {@link WorkingTree.keepStatusIndex}.
   */
  keep?: boolean;
}

/**
 * The tree of the working tree (ignored files left out), built from `git status`, with the tip
 * of `tipRef` read alongside; null when git's own staging must decide instead.
 * @param plumbing - the checkout's plumbing
 * @param layout - where the checkout's git data lives
 * @param head - the commit HEAD named when the write began
 * @param tipRef - the wip ref whose tip to read
 * @param reading - the size limit, the environment, and whether replace refs are there
 * @internal
 */
export async function workingTreeByStatus(plumbing: Plumbing, layout: RepositoryLayout, head: string, tipRef: string, reading: StatusReading): Promise<WorkingTree | null> {
  const { maxFileSize, env = process.env, replaced = true, racyMarginMs } = reading;
  // With replace refs, what git reads of HEAD's trees (and what status compares the index with)
  // can be another tree than HEAD holds: the tree is git add's to build, which never reads them.
  if (replaced) return null;
  const { top, objectFormat, objectsDir } = layout;
  const memoFile = join(layout.gitDir, MEMO_FILE);
  const hashCacheFile = join(layout.gitDir, HASH_CACHE_FILE);
  const said: string[] = [];
  const remembering = readFile(memoFile, 'latin1').catch(() => '');
  // Each folder's .gitattributes is looked at once a save: for the private index, for the check
  // of line endings below, and for the hash cache's keys.
  const attributesStats = new Map<string, Stats | null | 'unknown'>();
  const attributesStat = (folder: string): Stats | null | 'unknown' => {
    let stats = attributesStats.get(folder);
    if (stats === undefined) attributesStats.set(folder, (stats = attributesStatOf(top, folder)));
    return stats;
  };
  const fingerprinting = (): Promise<string | null> => hashFingerprint({ commonDir: layout.commonDir, gitDir: layout.gitDir, objectFormat, head, env });
  // Read while the kept copy is checked: a save that uses the copy needs the text only once status runs.
  const cacheReading = readFile(hashCacheFile).catch(() => Buffer.alloc(0));
  // With many files the hash cache knows (files modified since HEAD, unchanged since the last
  // save), git status compares the working tree with a private copy of the index that carries
  // their stat data and blobs (see lib/store/status-index.ts): the copy is written first.
  // The copy costs a read and a write of the whole index: it is made only where the files the
  // cache knows are many, and a fair share of the index (see STATUS_INDEX_SHARE).
  const floor = reading.statusIndexMinimum ?? STATUS_INDEX_MINIMUM;
  const { algorithm, bytes: hashBytes } = objectHash(objectFormat);
  const keptFile = join(layout.gitDir, KEPT_INDEX_FILE);
  let privately: { index: IndexScan; fingerprint: string | null; tipKnown: RefRecord | null | undefined; cache: HashCache; statusIndex: StatusIndex; kept: KeptUse | null } | null = null;
  let readFirst: { data: Buffer | null; fingerprint: string | null } | null = null;
  let out: string | null | undefined;
  // The plan read from the working tree against a kept copy whose comparison with HEAD is kept too.
  let planned: StatusPlan | null | undefined;
  // A save keeps the copy from one save to the next (lib/managers/kept-index.ts): where every
  // input its key names is what it was, git compares the working tree with it as it is, and the
  // checkout's index is read (and checked to be the one the copy was made from) meanwhile.
  const kept = reading.keep === true && Number.isFinite(floor) ? await keptCopy(layout, tipRef, fingerprinting, attributesStat, env, head) : null;
  if (kept !== null) {
    // What status would say of the copy against HEAD is kept beside it (docs/design.md): git
    // compares only the working tree with the copy, and lists the untracked files, side by side.
    // The checkout's index is scanned, and the hash cache parsed, meanwhile: once git ends, only
    // what it said is left to read.
    const [said_, read, whole, cache] = await Promise.all([
      plumbing.worktreeAgainstIndex(top, said, keptFile).then((parts) => (parts === null ? null : planFromParts(head, kept.staged, parts.changes, parts.untracked, (path, oid) => linkHolds(top, path, oid, algorithm)))).catch((error: unknown) => {
        if (isWipError(error, 'wip-timeout') || isWipError(error, 'wip-cancelled')) throw error;
        return undefined;
      }),
      readIdentified(layout.indexFile, hashBytes).then((got) => ({ identity: got.identity, index: got.identity === kept.key.index ? scanIndex(got.data, objectFormat) : null })),
      keptCopyWhole(layout.gitDir, kept.key.copy, algorithm, hashBytes),
      cacheReading.then((text) => hashCache(text, kept.key.fingerprint, kept.tip.tree, racyMarginMs)),
    ]);
    if (said_ !== undefined && read.identity === kept.key.index && read.index !== null && whole) {
      planned = said_;
      privately = { index: read.index, fingerprint: kept.key.fingerprint, tipKnown: kept.tip, cache, statusIndex: { file: keptFile, patched: new Map() }, kept: { basis: kept.tip.commit, key: kept.key, reused: true, drop: false, staged: null } };
    } else {
      // The checkout's index changed while git ran, or the copy is not whole: status runs again, on the checkout's own index.
      said.length = 0;
      dropKeptIndex(layout.gitDir);
    }
  }
  // A cache too small to hold more lines than the floor makes no private index: status starts
  // without waiting for its read (four round trips to the thread pool), which it is read beside.
  const few = kept === null && (!Number.isFinite(floor) || (statSync(hashCacheFile, { throwIfNoEntry: false })?.size ?? 0) < (floor + 1) * SHORTEST_CACHE_LINE);
  const cacheText = privately === null && !few ? await cacheReading : Buffer.alloc(0);
  if (kept === null && !few && lineCount(cacheText, floor + 1) > floor) {
    const [read, fingerprint, weakened] = await Promise.all([readIdentified(layout.indexFile, hashBytes), fingerprinting(), statCheckWeakened({ commonDir: layout.commonDir, gitDir: layout.gitDir, objectFormat, head, env })]);
    readFirst = { data: read.data, fingerprint };
    const entryCount = read.data !== null && read.data.length >= 12 ? read.data.readUInt32BE(8) : 0;
    const minimum = reading.statusIndexMinimum ?? Math.max(STATUS_INDEX_MINIMUM, Math.ceil(entryCount / STATUS_INDEX_SHARE));
    if (!weakened && lineCount(cacheText, minimum + 1) > minimum) {
      const index = scanIndex(read.data, objectFormat);
      const tipKnown = tipFromFiles(layout, tipRef);
      const cache = hashCache(cacheText, fingerprint, tipKnown === undefined || tipKnown === null ? null : tipKnown.tree, racyMarginMs);
      const statusIndex = writeStatusIndex(index, cache, { gitDir: layout.gitDir, racySeconds: Math.floor(read.mtimeMs / 1000), attributesStat, racyMarginMs: racyMarginMs ?? RACY_MARGIN_MS, minimum });
      if (statusIndex !== null) {
        // Kept for the next saves where what it was made from can be named: the checkout's index
        // by a checksum, the tip it was made on, the .gitattributes on the way to its entries.
        const attributes = reading.keep === true && read.identity !== null && fingerprint !== null && tipKnown !== undefined && tipKnown !== null ? attributesOnTheWay(statusIndex.patched.keys(), attributesStat) : null;
        const keeping = attributes === null ? null : { basis: (tipKnown as RefRecord).commit, key: { index: read.identity as string, copy: '', fingerprint: fingerprint as string, tip: '', attributes, vouched: statusIndex.patched.size, staged: '' }, reused: false, drop: false, staged: [] };
        privately = { index, fingerprint, tipKnown, cache, statusIndex, kept: keeping };
      }
    }
  }
  if (privately !== null && planned === undefined && out === undefined) {
    const file = privately.statusIndex.file;
    const keeping = privately.kept;
    let read = false;
    try {
      out = await plumbing.status(top, said, file);
      read = true;
    } catch (error) {
      if (isWipError(error, 'wip-timeout') || isWipError(error, 'wip-cancelled')) throw error;
      // git would not read the copy: status runs again, on the checkout's own index.
      said.length = 0;
      privately = null;
    } finally {
      // A copy to keep goes under its own name once status has read it; its key is written once
      // the snapshot is recorded (see keepStatusIndex).
      const copy = read && keeping !== null ? moveInto(file, keptFile, hashBytes) : null;
      if (keeping !== null && copy !== null) keeping.key.copy = copy;
      else {
        rmSync(file, { force: true });
        if (privately !== null) privately.kept = null;
      }
    }
  }
  let index: IndexScan;
  let fingerprint: string | null;
  if (privately === null) {
    // The index's entries (and the memo) are read while git status runs: status names a gitlink
    // it differs on, and hands the save back, so the gitlinks it does not name are the tree's;
    // and it never names a path under assume-unchanged or skip-worktree, whose local edits are
    // work all the same. Status runs with optional locks off, so it never rewrites the index:
    // the index is walked while it runs (or was read already, for a copy not made), and its
    // entries are looked up by path once status has named them.
    const known = readFirst;
    [out, index, fingerprint] = await Promise.all([
      plumbing.status(top, said),
      known === null ? readFile(layout.indexFile).catch(() => null).then((data) => scanIndex(data, objectFormat)) : scanIndex(known.data, objectFormat),
      known === null ? fingerprinting() : known.fingerprint,
    ]);
  } else {
    ({ index, fingerprint } = privately);
  }
  const remembered = await remembering;
  const plan = planned !== undefined ? planned : out === null || out === undefined ? null : readStatus(out, privately?.kept?.staged ?? undefined);
  if (plan === null || plan.head !== head) return null;
  // A split index holds some of its entries in a shared index: the staging through a temporary index reads them whole.
  if (index.split) return null;
  // A .gitattributes status names (changed, staged, untracked or gone) changes what the blob of
  // unchanged bytes is: the hash cache then knows nothing this time, and the private index
  // written from it is not believed either (status runs again on the checkout's own).
  // (The states are walked in place, never spread into arrays: a tree with 10,000 files modified
  // since HEAD names them all on every save.)
  let attributesChanged = plan.untracked.some(isAttributes);
  for (const path of plan.states.keys()) {
    if (isAttributes(path)) {
      attributesChanged = true;
      break;
    }
  }
  if (privately !== null && attributesChanged) {
    if (privately.kept !== null) dropKeptIndex(layout.gitDir);
    return workingTreeByStatus(plumbing, layout, head, tipRef, { ...reading, statusIndexMinimum: Number.POSITIVE_INFINITY });
  }
  // Only the entries looked at below are kept: those status names as anything but an object the
  // index holds, the flagged and the gitlinks.
  const named: string[] = [];
  for (const [path, state] of plan.states) if (state.kind !== 'object') named.push(path);
  const entries = index.select(named);
  const indexed = new Map<string, IndexEntry>();
  for (const entry of entries) if (entry.stage === 0) indexed.set(entry.path, entry);
  // A folder git could not open, or a tracked file it could not look at: git reported nothing
  // of what they hold, and the tree keeps what the index holds there. Listed, never silent.
  const unread = unreadableInWalk(said);
  const unreadFiles = new Set(unread.files.length === 0 ? [] : index.select(unread.files).map((entry) => entry.path).filter((path) => unread.files.includes(path)));
  const leftOut: LeftOut[] = [...unread.folders, ...unreadFiles].filter((path) => !plan.states.has(path)).map((path) => ({ path, reason: 'unreadable' as const }));
  // Where the save cannot take the file, the tree keeps what the index holds, as git add does.
  const keepIndexed = (path: string, reason: LeftOut['reason']): void => {
    const entry = indexed.get(path);
    plan.states.set(path, entry === undefined || entry.intentToAdd ? { kind: 'absent' } : { kind: 'object', mode: entry.mode, oid: entry.oid });
    leftOut.push({ path, reason });
  };
  // A path staged or changed with a name a remote's object check refuses (git add takes it):
  // the staging through a temporary index decides, by whether HEAD holds it. Its deletion is
  // kept: the tree then holds that name no more.
  for (const [path, state] of plan.states) if (state.kind !== 'absent' && refusedByObjectChecks(path, state.mode)) return null;
  // Every file hash-object will read is looked at first: a FIFO would hold it forever.
  // The stat data taken here is also the hash cache's key for the file (taken before git reads it):
  // each file is looked at once.
  const changed = filesOf(plan.states);
  const looked = new Map<string, Stats>();
  for (const path of changed) {
    const stats = lookAt(top, path);
    // A path the system will not look at (longer from the root than it takes) is no file gone.
    if (stats === 'unknown') keepIndexed(path, 'unreadable');
    else if (stats === null) keepIndexed(path, 'vanished');
    else if (special(stats)) keepIndexed(path, 'not-a-file');
    // Status named a file, and something else is there now (a symlink, a folder): hash-object
    // would follow a symlink and store its target's bytes as the file. git add decides.
    else if (!stats.isFile()) return null;
    else looked.set(path, stats);
  }
  for (const path of plan.untracked) {
    const stats = lookAt(top, path);
    if (stats === 'unknown') leftOut.push({ path, reason: 'unreadable' });
    else if (stats === null) leftOut.push({ path, reason: 'vanished' });
    else if (special(stats)) leftOut.push({ path, reason: 'not-a-file' });
    // A name git add refuses (.GIT, git~1): a snapshot never holds it, or no restore would take it;
    // nor one a remote's object check refuses, or the chain would never leave the box.
    else if (unwritablePath(path, '100644') !== null || refusedByObjectChecks(path, '100644')) leftOut.push({ path, reason: 'invalid-path' });
    // An executable's mode hangs on core.fileMode, which status does not print.
    else if (!stats.isFile() || (stats.mode & 0o100) !== 0) return null;
    else if (stats.size > maxFileSize) leftOut.push({ path, reason: 'too-large', size: stats.size });
    else {
      plan.states.set(path, { kind: 'file', mode: '100644' });
      looked.set(path, stats);
    }
  }
  // A flagged entry status names (the index differs from HEAD there) may hold local edits status
  // never looks at, and a .gitattributes under a flag, or gone from the working tree, is read
  // from the index by git add, never by hash-object: git add decides.
  if (entries.some((entry) => entry.flag !== null && (plan.states.has(entry.path) || isAttributes(entry.path)))) return null;
  for (const [path, state] of plan.states) if (state.kind === 'absent' && isAttributes(path) && indexed.has(path)) return null;
  // Flagged entries status does not name: their files are hashed like changed ones, and listed
  // when what they hold is not what the index says.
  const flaggedEntries = entries.filter((entry) => entry.flag !== null && entry.stage === 0 && !plan.states.has(entry.path));
  const flaggedOnDisk: IndexEntry[] = [];
  for (const entry of flaggedEntries) {
    const stats = statOf(top, entry.path);
    // Absent: a sparse checkout's file outside its cone, or a deletion git was told to ignore; the index's content stays.
    if (stats === null) continue;
    // Anything but a plain file of the index's mode is left to git add to decide.
    if (!stats.isFile() || (entry.mode !== '100644' && entry.mode !== '100755') || ((stats.mode & 0o100) !== 0) !== (entry.mode === '100755')) return null;
    plan.states.set(entry.path, { kind: 'file', mode: entry.mode });
    flaggedOnDisk.push(entry);
  }
  const folders = foldersOf(plan.states.keys());
  const toHash = filesOf(plan.states);
  // Where git may convert line endings automatically, git add keeps the CRLFs of a file whose
  // blob in the index has a CR, and hash-object converts them: such a file is git add's to hash.
  const tracked = toHash.filter((path) => indexed.has(path));
  if (tracked.length > 0 && mayConvertAutomatically(layout, top, foldersOf(tracked).filter((folder) => attributesStat(folder) !== null), env)) {
    const oids = tracked.map((path) => (indexed.get(path) as IndexEntry).oid);
    const blobs = await readBlobs(plumbing.git, top, oids, Number.MAX_SAFE_INTEGER);
    if (oids.some((oid) => blobs.get(oid)?.includes(0x0d) !== false)) return null;
  }
  // One cat-file reads the wip tip and HEAD's trees of the folders to build. With few folders
  // on the way to the changes it reads them all while git hashes the files, before the memo can
  // say which it spares; with many, reading them all would cost more than waiting, so it reads
  // after the memo has spoken, only the trees still to build. The tip is read either way.
  const treeName = (folder: string): string => (folder === '' ? `${head}^{tree}` : `${head}:${folder}`);
  // The tip and HEAD's trees are read from their loose files where they are (a save's own
  // writes, and HEAD after a commit, are), checked against their ids, without a process; the
  // cat-file reads them otherwise.
  const tipKnown = privately === null ? tipFromFiles(layout, tipRef) : privately.tipKnown;
  // The blobs the hash cache names and the trees the memo names are all in the tree the save
  // that wrote them built: while the tip holds that very tree, they are reachable from the wip
  // ref (on disk, loose or packed, and out of a prune's reach), and none of them is looked for.
  // A tree built with one taken so is then recorded on a tip of that tree (or of its own), or
  // not at all (`pinned`).
  const tipTree = tipKnown === undefined || tipKnown === null ? null : tipKnown.tree;
  const cache = privately?.cache ?? hashCache(few ? await cacheReading : cacheText, attributesChanged ? null : fingerprint, tipTree, racyMarginMs);
  // A file that cannot be read, or vanishes while hashed, hands the save to git add; a deadline does not.
  // Where no attribute may rewrite a file's bytes, chant writes its blob itself (see
  // lib/git/blob-writer.ts), with the same target as the trees below.
  const target = looseTarget(layout, env);
  const writer = target === null || attributesElsewhere(layout, env) ? null : target;
  const unseen = { taken: false };
  // What git found as the private index holds it is taken from the cache, without a look on
  // disk (the cache is held: the tip's tree holds every blob it names), and kept in it.
  for (const path of privately?.statusIndex.patched.keys() ?? []) {
    const state = plan.states.get(path);
    if (state !== undefined && state.kind !== 'object') continue;
    cache.keep(path);
    unseen.taken = true;
  }
  const reused = privately?.kept?.reused === true ? privately.kept : null;
  if (reused !== null) {
    // A kept copy names no patched paths: what it vouches for is what status named with the
    // blob the cache holds. Its blobs are reachable from the tip it was checked on (its key's).
    let changed = 0;
    for (const [path, state] of plan.states) {
      if (state.kind === 'object') cache.keep(path, state.oid);
      else if (state.kind === 'file') changed += 1;
    }
    unseen.taken = true;
    // Files changed since the copy was made are hashed (through the cache) on every save: past
    // so many, the next save makes the copy again.
    if (changed > STATUS_INDEX_MINIMUM) reused.drop = true;
  }
  // The blobs this build wrote (or had git write), each with its file.
  const fresh: Array<{ path: string; oid: string }> = [];
  const hashing = hashChanged(plumbing, layout, toHash, cache, unseen, (path) => indexed.get(path)?.oid, looked, attributesStat, writer, fresh).catch((error: unknown) => {
    if (isWipError(error, 'wip-timeout')) throw error;
    return null;
  });
  const readBases = async (needed: readonly string[]): Promise<{ tip: RefRecord | null; trees: Array<GitObject | null> } | null> => {
    const local = tipKnown === undefined ? null : readLooseFolderTrees(objectsDir, head, needed, objectFormat, reading.reads);
    if (local !== null) return { tip: tipKnown as RefRecord | null, trees: local };
    // An object git cannot read (a loose file cut short by a crash or a disk fault) stops the
    // cat-file whole: the save goes to git add, which builds the tree from the index and reads
    // no tree of HEAD's on the way (a deadline or a cancel still stops it).
    const objects = await plumbing.readObjects([tipRef, ...needed.map(treeName)]).catch((error: unknown) => {
      if (isWipError(error, 'git-failed')) return null;
      throw error;
    });
    if (objects === null) return null;
    const tipObject = objects[0] ?? null;
    return { tip: tipObject?.type === 'commit' ? { ref: tipRef, ...parseCommit(tipObject.oid, tipObject.content.toString('utf8')) } : null, trees: objects.slice(1) };
  };
  const early = folders.length <= PREFETCH_FOLDERS ? readBases(folders) : Promise.resolve(undefined);
  const [hashed, prefetched] = await Promise.all([hashing, early]);
  if (hashed === null || hashed.length !== toHash.length || prefetched === null) return null;
  const leaves = new Map<string, Entry | null>();
  for (const [path, state] of plan.states) {
    if (state.kind === 'absent') leaves.set(path, null);
    else if (state.kind === 'object') leaves.set(path, { mode: state.mode, oid: state.oid });
  }
  toHash.forEach((path, index) => leaves.set(path, { mode: (plan.states.get(path) as { mode: string }).mode, oid: hashed[index] as string }));
  const memo = treeMemo(remembered, (oid) => plumbing.keepLooseObject(objectsDir, oid), tipTree);
  let tip: RefRecord | null | undefined = prefetched?.tip;
  const headTrees = prefetched === undefined ? null : new Map(folders.map((folder, index) => [folder, prefetched.trees[index] ?? null]));
  const built = await buildTrees({
    folders, leaves, head, objectFormat, memo,
    read: async (needed) => {
      if (headTrees !== null) return needed.map((folder) => headTrees.get(folder) ?? null);
      const bases = await readBases(needed);
      if (bases === null) return null;
      tip = bases.tip;
      return bases.trees;
    },
  });
  if (built === null) return null;
  if (tip === undefined) {
    // Nothing to build, and nothing read yet: the tip alone.
    const bases = await readBases([]);
    if (bases === null) return null;
    tip = bases.tip;
  }
  // What the caches' trees and blobs were trusted on is the tree of the tip the snapshot goes
  // onto: a tip read again since, and moved to another tree, hands the save to git add.
  const pinned = unseen.taken || memo.tookUnseen() ? tipTree : null;
  if (pinned !== null && (tip === null || tip.tree !== pinned)) return null;
  // A tree an earlier save wrote is on disk already: only the others are written. The memo is
  // written alongside; it names a tree only while the tree is on disk. How they are written
  // (modes, syncing) is read from git's configuration, in the environment git runs with, only
  // when there is one to write.
  const missing = built.writes.filter((write) => !plumbing.keepLooseObject(objectsDir, write.oid));
  const writing = missing.length === 0 ? Promise.resolve() : plumbing.writeTrees(missing.map((write) => write.body), objectFormat, target ?? undefined);
  await Promise.all([writing, saveMemo(memoFile, memo.used, built.root), saveHashCache(hashCacheFile, cache, built.root)]);
  const hashedAt = new Map(toHash.map((path, index) => [path, hashed[index] as string]));
  const flagged = flaggedOnDisk
    .filter((entry) => hashedAt.get(entry.path) !== entry.oid)
    .map((entry) => ({ path: entry.path, reason: entry.flag as FlaggedPath['reason'] }));
  const keptUse = privately?.kept ?? null;
  const root = built.root;
  const keepStatusIndex = async (recorded: string): Promise<void> => {
    if (keptUse === null) return;
    // Only on the very tip the copy was checked (or made) on, or on a commit of this tree right
    // above it: every blob the copy names is then reachable from the ref.
    const now = tipFromFiles(layout, tipRef);
    const onBasis = now !== undefined && now !== null && now.commit === recorded && now.tree === root && (recorded === keptUse.basis || now.parents[0] === keptUse.basis);
    if (!onBasis || keptUse.drop || keptUse.key.copy === '') {
      dropKeptIndex(layout.gitDir);
      return;
    }
    if (keptUse.reused && recorded === keptUse.basis) return;
    // A copy made by this save: what status said of it against HEAD goes first, its hash in the key.
    const staged = keptUse.staged === null ? keptUse.key.staged : await writeKeptStaged(layout.gitDir, keptUse.staged.join('\0'));
    await writeKeptIndexKey(layout.gitDir, { ...keptUse.key, tip: recorded, staged });
  };
  // A `git gc --prune=now` run by hand meanwhile (git's own gc prunes only what is weeks old)
  // deletes every object no ref names yet: the blobs and trees this build wrote, until the ref
  // holds the snapshot. Once it does, those gone are written again, a blob from its file (see
  // lib/store/keep-written.ts); no process runs unless one of them is not there loose.
  const keepWritten = async (): Promise<void> => {
    const treesGone = new Set(notThereLoose(objectsDir, built.writes.map((write) => write.oid)));
    if (treesGone.size > 0) await plumbing.writeTrees(built.writes.filter((write) => treesGone.has(write.oid)).map((write) => write.body), objectFormat, target ?? undefined);
    await writeBlobsAgain(plumbing, objectsDir, top, fresh);
  };
  return { tree: built.root, tip, gitlinks: gitlinksOf(entries), leftOut, flagged, pinned, indexHolds: (tree) => index.holds(tree), indexPlain: index.plain, keepStatusIndex, keepWritten };
}

/** A private index used (or made) by this save, to keep for the next. */
interface KeptUse {
  /** The wip tip it was checked (or made) on. */
  basis: string;
  key: KeptIndexKey;
  /** Whether it was kept from an earlier save. */
  reused: boolean;
  /** Whether the next save should make it again. */
  drop: boolean;
  /** For a copy made by this save, what status said of it against HEAD (see readStatus); null for one kept. */
  staged: string[] | null;
}

/**
 * The kept private index and the tip it holds for, where every input its key names is what it
 * was: the hash cache's fingerprint (and no config weakens git's stat check), the wip tip, the
 * `.gitattributes` on the way to the entries it vouches for, the checkout's index file (its stat
 * data and checksum) and the copy's own file. Null otherwise, the key and copy removed.
 */
async function keptCopy(layout: RepositoryLayout, tipRef: string, fingerprinting: () => Promise<string | null>, attributesStat: (folder: string) => Stats | null | 'unknown', env: NodeJS.ProcessEnv, head: string): Promise<{ key: KeptIndexKey; tip: RefRecord; staged: string } | null> {
  const key = await readKeptIndexKey(layout.gitDir);
  if (key === null) return null;
  const { bytes } = objectHash(layout.objectFormat);
  const [fingerprint, weakened, staged] = await Promise.all([fingerprinting(), statCheckWeakened({ commonDir: layout.commonDir, gitDir: layout.gitDir, objectFormat: layout.objectFormat, head, env }), readKeptStaged(layout.gitDir, key.staged)]);
  const tip = tipFromFiles(layout, tipRef);
  const holds = staged !== null && fingerprint === key.fingerprint && !weakened && tip !== undefined && tip !== null && tip.commit === key.tip
    && key.attributes.every(([folder, stat]) => attributesKey(attributesStat(folder)) === stat)
    && fileIdentity(layout.indexFile, bytes) === key.index && fileIdentity(join(layout.gitDir, KEPT_INDEX_FILE), bytes) === key.copy;
  if (holds) return { key, tip: tip as RefRecord, staged };
  dropKeptIndex(layout.gitDir);
  return null;
}

/** What a key holds of a folder's `.gitattributes`: its stat key, `-` for none; null where it cannot say (a symlink, a look refused). */
function attributesKey(stats: Stats | null | 'unknown'): string | null {
  return stats === null ? '-' : stats === 'unknown' || stats.isSymbolicLink() ? null : statKey(stats);
}

/** Each folder on the way to one of `paths`, with its attributes key; null where one cannot say. */
function attributesOnTheWay(paths: Iterable<string>, attributesStat: (folder: string) => Stats | null | 'unknown'): Array<[string, string]> | null {
  const folders = new Map<string, string>();
  for (const path of paths) {
    for (let slash = path.lastIndexOf('/'); ; slash = path.lastIndexOf('/', slash - 1)) {
      const folder = slash < 0 ? '' : path.slice(0, slash);
      if (folders.has(folder)) break;
      const key = attributesKey(attributesStat(folder));
      if (key === null) return null;
      folders.set(folder, key);
      if (slash < 0) break;
    }
  }
  return [...folders];
}

/** Whether the symlink at `path` holds the blob `oid` (its target's bytes): false where it is no symlink, or cannot be read. */
function linkHolds(top: string, path: string, oid: string, algorithm: string): boolean {
  let target: Buffer;
  try {
    target = readlinkSync(join(top, path), { encoding: 'buffer' });
  } catch {
    return false;
  }
  return createHash(algorithm).update(`blob ${target.length}\0`).update(target).digest('hex') === oid;
}

/** Renames a private index to the kept copy's name; its identity there, or null where it could not go. */
function moveInto(file: string, kept: string, hashBytes: number): string | null {
  try {
    renameSync(file, kept);
  } catch {
    return null;
  }
  return fileIdentity(kept, hashBytes);
}

/**
 * The stat data of a path (not following a last symlink): null where nothing is there (or a
 * file is on the way), `unknown` where the system will not say (a path longer than it opens).
 */
function lookAt(top: string, path: string): Stats | null | 'unknown' {
  try {
    return lstatSync(join(top, path), { throwIfNoEntry: false }) ?? null;
  } catch (error) {
    return (error as NodeJS.ErrnoException).code === 'ENOTDIR' ? null : 'unknown';
  }
}

/**
 * A path's stat data (not following a last symlink), or null when it cannot be looked at (gone,
 * a folder on its way gone or made a file, a name too long). Synchronous: a save looks at every
 * changed file in turn, and 10,000 lstatSync calls took 86 to 164 ms where the same as promises
 * took 323 to 858 ms (bigint stats, 100,000-file tree, a loaded 2-core machine).
 */
function statOf(top: string, path: string): Stats | null {
  try {
    return lstatSync(join(top, path), { throwIfNoEntry: false }) ?? null;
  } catch {
    return null;
  }
}

/**
 * The stat data of a folder's `.gitattributes` (not following a symlink): null where there is
 * none, `unknown` where it cannot be looked at.
 */
function attributesStatOf(top: string, folder: string): Stats | null | 'unknown' {
  try {
    return lstatSync(join(top, folder, '.gitattributes'), { throwIfNoEntry: false }) ?? null;
  } catch (error) {
    return (error as NodeJS.ErrnoException).code === 'ENOTDIR' ? null : 'unknown';
  }
}

/** The paths of the states that are files to hash, in order. */
function filesOf(states: ReadonlyMap<string, { kind: string }>): string[] {
  const files: string[] = [];
  for (const [path, state] of states) if (state.kind === 'file') files.push(path);
  return files;
}

/**
 * The fewest bytes a line of the hash cache that reads as one takes: a path, a key of two `|`, a
 * time, a blob id of 40 digits, three NULs and its newline. A cache smaller than this many bytes a
 * line cannot hold more lines than the floor (a damaged one of shorter lines vouches for nothing).
 */
const SHORTEST_CACHE_LINE = 48;

/** The number of lines of a text (or of its bytes), counted up to `enough`. */
function lineCount(text: string | Buffer, enough: number): number {
  let count = 0;
  for (let at = text.indexOf('\n'); at >= 0 && count < enough; at = text.indexOf('\n', at + 1)) count += 1;
  return count;
}

/** A FIFO, socket or device: nothing git can hold as a file. */
function special(stats: Stats): boolean {
  return stats.isFIFO() || stats.isSocket() || stats.isCharacterDevice() || stats.isBlockDevice();
}

/**
 * The blob ids of `paths`, in order: from the hash cache where the file, and every
 * .gitattributes on its way, has the stat data it had when it was hashed (and the blob is still
 * on disk, or the wip tip holds it: `unseen.taken` then says one was taken so), written here where no attribute may rewrite the file and it holds no carriage
 * return (lib/git/blob-writer.ts), from `git hash-object -w` for the rest (no process when
 * there is none). What was
 * hashed is recorded with the stat data taken before git read it. The key holds the index's
 * blob for the path too: with `text=auto`, whether git converts line endings can hang on it.
 * `looked` holds the stat data the caller took of the files it checked (each file is looked at
 * once, before git reads it); a path it lacks is looked at here. `attributesStat` gives a
 * folder's `.gitattributes` as the caller looked at it.
 */
async function hashChanged(plumbing: Plumbing, layout: RepositoryLayout, paths: readonly string[], cache: HashCache, unseen: { taken: boolean }, indexOid: (path: string) => string | undefined, looked: ReadonlyMap<string, Stats>, attributesStat: (folder: string) => Stats | null | 'unknown', writer: LooseTarget | null, fresh: Array<{ path: string; oid: string }>): Promise<string[]> {
  if (paths.length === 0) return [];
  const { top, objectsDir, objectFormat } = layout;
  const attributes = new Map<string, { key: string; newest: number; rewrites: boolean }>();
  // git never reads a .gitattributes through a symlink, and reads the index's instead, which
  // hash-object never does: git add decides.
  let linkedAttributes = false;
  const attributesOf = (folder: string): { key: string; newest: number; rewrites: boolean } => {
    let known = attributes.get(folder);
    if (known === undefined) {
      const file = folder === '' ? '.gitattributes' : `${folder}/.gitattributes`;
      const seen = attributesStat(folder);
      const stats = seen === 'unknown' ? null : seen;
      if (stats?.isSymbolicLink() === true) linkedAttributes = true;
      known = stats === null
        ? { key: '-', newest: 0, rewrites: false }
        : { key: statKey(stats), newest: Math.max(stats.mtimeMs, stats.ctimeMs), rewrites: attributesRewrite(join(top, file)) };
      attributes.set(folder, known);
    }
    return known;
  };
  // Each file's key: its own stat data, then that of the .gitattributes in each folder on its
  // way; and whether one of those may ask git to rewrite its bytes.
  const taken = paths.map((path) => looked.get(path) ?? statOf(top, path));
  const keys = paths.map((path, index) => {
    const stats = taken[index] ?? null;
    if (stats === null || !stats.isFile()) return null;
    let key = `${statKey(stats)}|${indexOid(path) ?? '-'}|${attributesOf('').key}`;
    let newest = Math.max(stats.mtimeMs, stats.ctimeMs);
    let rewritten = attributesOf('').rewrites;
    if (attributesOf('').newest > newest) newest = attributesOf('').newest;
    for (let slash = path.indexOf('/'); slash >= 0; slash = path.indexOf('/', slash + 1)) {
      const found = attributesOf(path.slice(0, slash));
      key += `|${found.key}`;
      if (found.newest > newest) newest = found.newest;
      rewritten ||= found.rewrites;
    }
    return { key, newest, rewritten };
  });
  if (linkedAttributes) return [];
  const oids: Array<string | undefined> = paths.map((path, index) => {
    const known = keys[index];
    const oid = known === null || known === undefined ? undefined : cache.lookup(path, known.key, known.newest);
    if (oid === undefined) return undefined;
    if (cache.held) {
      unseen.taken = true;
      return oid;
    }
    if (!plumbing.keepLooseObject(objectsDir, oid)) return undefined;
    // There, but perhaps named by no ref: a gc until the snapshot is recorded would take it too.
    fresh.push({ path, oid });
    return oid;
  });
  // The files no attribute rewrites are hashed here where they can be; git hashes the rest.
  const missing = paths.flatMap((path, index) => (oids[index] === undefined ? [index] : []));
  // When the stat data of the files to hash was taken, before their bytes are read, by the
  // file system's clock as well as this process's: the files' times are the file system's, and
  // one behind this process's (a network share, a container's bind mount of its host's folder)
  // would make a file written a moment ago look seconds old, so that a rewrite at the same size
  // in that second would keep the stat data its entry holds (git, reading the private index,
  // compares times to the second). A file on another file system than the probe's is not
  // recorded: its clock is not known.
  const clock = missing.length === 0 ? null : fileSystemNow(layout.gitDir);
  const takenMs = clock === null ? 0 : Math.min(Date.now(), clock.ms);
  const mine = writer === null ? [] : missing.filter((index) => keys[index]?.rewritten === false);
  const written = writer === null || mine.length === 0 ? [] : await writeFileBlobs(writer, top, mine.map((index) => paths[index] as string), objectFormat);
  mine.forEach((index, at) => {
    const oid = written[at];
    if (oid !== null && oid !== undefined) oids[index] = oid;
  });
  const left = missing.filter((index) => oids[index] === undefined);
  const hashed = await plumbing.hashFiles(top, left.map((index) => paths[index] as string));
  // Fewer ids than paths: the caller hands the save to git add. So does a file git read that is
  // not the file looked at before (swapped for a symlink, whose target hash-object read instead).
  if (hashed.length !== left.length) return [];
  for (const index of left) {
    const before = taken[index] ?? null;
    const after = statOf(top, paths[index] as string);
    if (before === null || after === null || !before.isFile() || !after.isFile() || statKey(after) !== statKey(before)) return [];
  }
  left.forEach((index, at) => {
    oids[index] = hashed[at] as string;
  });
  for (const index of missing) {
    const known = keys[index];
    if (known !== null && known !== undefined && clock !== null && taken[index]?.dev === clock.dev) cache.record(paths[index] as string, known.key, takenMs, oids[index] as string);
    fresh.push({ path: paths[index] as string, oid: oids[index] as string });
  }
  return oids as string[];
}

/**
 * The file system's clock in `dir`: the ctime of a file created there for the purpose (named as
 * a temporary index, for the cleanup of a killed save) and its device; null where none can be
 * created, and nothing is then recorded in the hash cache.
 */
function fileSystemNow(dir: string): { ms: number; dev: number } | null {
  const file = temporaryIndexFile(dir);
  let fd: number | undefined;
  try {
    fd = openSync(file, 'wx');
    const stats = fstatSync(fd);
    return { ms: stats.ctimeMs, dev: stats.dev };
  } catch {
    return null;
  } finally {
    if (fd !== undefined) closeSync(fd);
    rmSync(file, { force: true });
  }
}

/** Up to this many folders on the way to the changes, their trees are read while git hashes the files. */
const PREFETCH_FOLDERS = 64;

/** Every folder on the way to one of `paths`, the top ('') first, parents before children. */
function foldersOf(paths: Iterable<string>): string[] {
  return foldersOnTheWay(paths).sort((a, b) => depth(a) - depth(b));
}

function depth(folder: string): number {
  if (folder === '') return 0;
  let count = 1;
  for (let slash = folder.indexOf('/'); slash >= 0; slash = folder.indexOf('/', slash + 1)) count += 1;
  return count;
}
