// The git calls of bounded storage: what a chain's objects take on disk, writing a rewritten
// chain as one pack, and letting the old one go (reflogs, gc). See docs/design.md, "Bounded
// storage".
import { createHash } from 'node:crypto';
import { existsSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { parseBatch } from './formats/batch.js';
import { objectHash } from './formats/object-format.js';
import { packOf } from './formats/pack.js';
import { looseObjectsDir, readLooseBlobs } from './loose-objects.js';
import { asWipError } from '../errors.js';
import type { GitRunner, GitRunOptions } from './runner.js';

/** The pack type of a commit object. */
const OBJ_COMMIT = 1;

/**
 * What the objects reachable from `tips` take on disk (compressed, as stored), leaving out every
 * object a branch, a tag, a remote-tracking ref or HEAD reaches: the bytes the chains cost beyond
 * what the repository keeps anyway. Its cost is the chains' own commits and the trees they
 * changed, plus marking the excluded tips' trees once; it does not grow with the object store.
 * @param git - the runner
 * @param cwd - a folder inside the checkout
 * @param tips - commits (full ids) to count from
 * @returns the bytes
 * @throws {@link WipError} `git-failed`
 * @internal
 */
export async function uniqueDiskUsage(git: GitRunner, cwd: string, tips: readonly string[]): Promise<number> {
  if (tips.length === 0) return 0;
  // The tips are object ids read from for-each-ref, never a user's text; HEAD may be unborn.
  // --objects-edge-aggressive marks the trees of every excluded tip as excluded: with --objects,
  // only those of the excluded commits the walk meets (the chain's heads) were, and a file a
  // branch holds since (the work saved, then committed) was charged to the chain. It prints those
  // edges first ("-<id>" lines), the bytes last.
  const out = await run(git, cwd, ['rev-list', '--objects-edge-aggressive', '--disk-usage', '--ignore-missing', ...tips, '--not', '--branches', '--tags', '--remotes', 'HEAD']);
  const bytes = Number(out.trim().split('\n').at(-1));
  return Number.isFinite(bytes) ? bytes : 0;
}

/**
 * The chain tips the prune markers on `tip`'s first-parent chain name as replaced
 * (`Chant-Wip-Pruned` and `Chant-Wip-Pruned-Remote`), walking down to what `local` reaches: the
 * rewritten chain's own commits, bounded by what its prune kept.
 * @param git - the runner
 * @param cwd - a folder inside the checkout
 * @param tip - the remote's chain tip
 * @param local - the local chain tip, whose history is left out
 * @returns the ids named
 * @throws {@link WipError} `git-failed`
 * @internal
 */
export async function replacedTips(git: GitRunner, cwd: string, tip: string, local: string): Promise<Set<string>> {
  const out = await run(git, cwd, [
    ...TRAILERS_AS_WRITTEN, 'log', '--first-parent', '--format=%(trailers:key=Chant-Wip-Pruned,valueonly,separator=%x20) %(trailers:key=Chant-Wip-Pruned-Remote,valueonly,separator=%x20)',
    tip, '--not', local, '--',
  ]);
  return new Set(out.split(/\s+/).filter((word) => /^[0-9a-f]{40,64}$/.test(word)));
}

/**
 * {@link replacedTips} of two chains in one `git log`: the tips the prune markers name on the
 * first-parent chain of `left` that `right` does not reach, and on that of `right` that `left`
 * does not reach (`--left-right left...right`).
 * @param git - the runner
 * @param cwd - a folder inside the checkout
 * @param left - one chain's tip (the remote's)
 * @param right - the other's (the local one)
 * @returns the ids named on each side
 * @throws {@link WipError} `git-failed`
 * @internal
 */
export async function replacedTipsEachSide(git: GitRunner, cwd: string, left: string, right: string): Promise<{ left: Set<string>; right: Set<string> }> {
  const out = await run(git, cwd, [
    ...TRAILERS_AS_WRITTEN, 'log', '--first-parent', '--left-right', '--format=%m %(trailers:key=Chant-Wip-Pruned,valueonly,separator=%x20) %(trailers:key=Chant-Wip-Pruned-Remote,valueonly,separator=%x20)',
    `${left}...${right}`, '--',
  ]);
  const sides = { left: new Set<string>(), right: new Set<string>() };
  for (const line of out.split('\n')) {
    const side = line.startsWith('<') ? sides.left : line.startsWith('>') ? sides.right : null;
    if (side === null) continue;
    for (const word of line.slice(1).split(/\s+/)) if (/^[0-9a-f]{40,64}$/.test(word)) side.add(word);
  }
  return sides;
}

/**
 * Whether the chain at `tip` holds what the chain at `replica` held: `replica` is on it, or a
 * prune marker on its way names `replica` as a tip it replaced (see {@link replacedTips}). Only
 * such a chain may take the place of `replica` (a prune's marker, a leased push): another box's
 * snapshots above what this chain ever held would be dropped.
 * @param git - the runner
 * @param cwd - a folder inside the checkout
 * @param tip - the chain's tip
 * @param replica - what the other side holds
 * @throws {@link WipError} `git-failed`
 * @internal
 */
export async function chainHolds(git: GitRunner, cwd: string, tip: string, replica: string): Promise<boolean> {
  if (tip === replica) return true;
  if ((await run(git, cwd, ['rev-list', '-n', '1', replica, '--not', tip, '--'])).trim() === '') return true;
  return (await replacedTips(git, cwd, tip, replica)).has(replica);
}

/**
 * A commit as stored, split into what a rewrite keeps and what it changes.
 * @internal
 */
export interface RawCommit {
  commit: string;
  tree: string;
  parents: string[];
  /** The header lines after the parents (author, committer, anything else), verbatim. */
  rest: string;
  /** The message, verbatim. */
  message: string;
}

/**
 * Reads commits as stored, in one `cat-file --batch`.
 * @param git - the runner
 * @param cwd - a folder inside the checkout
 * @param commits - full commit ids
 * @returns each commit, in the order asked
 * @throws {@link WipError} `git-failed` when one is missing or not a commit
 * @internal
 */
export async function readRawCommits(git: GitRunner, cwd: string, commits: readonly string[]): Promise<RawCommit[]> {
  if (commits.length === 0) return [];
  const { stdoutBuffer } = await runBuffer(git, cwd, ['cat-file', '--batch'], { input: commits.map((commit) => `${commit}\n`).join('') });
  const objects = parseBatch(stdoutBuffer, commits.length);
  if (objects === null) throw asWipError(new Error('git cat-file --batch printed less than it was asked for'));
  return objects.map((object, index) => {
    if (object === null || object.type !== 'commit') throw asWipError(new Error(`${commits[index]} is not a commit`));
    const raw = object.content.toString('utf8');
    const split = raw.indexOf('\n\n');
    const headers = (split < 0 ? raw : raw.slice(0, split)).split('\n');
    const parents: string[] = [];
    let tree = '';
    const rest: string[] = [];
    for (const line of headers) {
      if (line.startsWith('tree ')) tree = line.slice(5);
      else if (line.startsWith('parent ')) parents.push(line.slice(7));
      else rest.push(line);
    }
    return { commit: object.oid, tree, parents, rest: rest.join('\n'), message: split < 0 ? '' : raw.slice(split + 2) };
  });
}

/**
 * A commit to write: its tree, parents, the other header lines and the message.
 * @internal
 */
export interface CommitBody {
  tree: string;
  parents: readonly string[];
  rest: string;
  message: string;
}

/**
 * The bytes of a commit object.
 * @param body - its parts
 * @returns the object's content
 * @internal
 */
export function commitBytes(body: CommitBody): Buffer {
  const lines = [`tree ${body.tree}`, ...body.parents.map((parent) => `parent ${parent}`), ...(body.rest.length > 0 ? [body.rest] : [])];
  return Buffer.from(`${lines.join('\n')}\n\n${body.message}`, 'utf8');
}

/**
 * The id git gives an object of `type` holding `content`.
 * @param type - `commit`, `tree` or `blob`
 * @param content - the object's content
 * @param objectFormat - `sha1` or `sha256`
 * @returns the id
 * @internal
 */
export function objectId(type: string, content: Buffer, objectFormat: string): string {
  return createHash(objectHash(objectFormat).algorithm).update(`${type} ${content.length}\0`).update(content).digest('hex');
}

/**
 * Writes commits built in memory as one pack, in one `git index-pack --stdin`: thousands of
 * commits cost one process.
 * @param git - the runner
 * @param cwd - a folder inside the checkout
 * @param bodies - each commit's content
 * @param objectFormat - `sha1` or `sha256`
 * @returns the pack's file name without its extension (`pack-<hash>`), or null when none was
 *   written or git did not name it
 * @throws {@link WipError} `git-failed`
 * @internal
 */
export async function writeCommits(git: GitRunner, cwd: string, bodies: readonly Buffer[], objectFormat: string): Promise<string | null> {
  if (bodies.length === 0) return null;
  const out = await run(git, cwd, ['index-pack', '--stdin', '--fix-thin'], { input: packOf(bodies, OBJ_COMMIT, objectFormat) });
  const named = /^(?:pack|keep)\t([0-9a-f]{40,64})$/m.exec(out);
  return named === null ? null : `pack-${named[1]}`;
}

/**
 * Whether the pack {@link writeCommits} named is still in the objects folder `dir`, its index
 * with it: a gc deletes a pack whole, so while it is there so is every commit it holds.
 * @internal
 */
export function packThere(dir: string, pack: string | null): boolean {
  return pack !== null && existsSync(join(dir, 'pack', `${pack}.pack`)) && existsSync(join(dir, 'pack', `${pack}.idx`));
}

/**
 * Which of `oids` git holds nowhere, loose or packed, in one `cat-file --batch-check`.
 * @param git - the runner
 * @param cwd - a folder inside the checkout
 * @param oids - full object ids
 * @returns those missing
 * @throws {@link WipError} `git-failed`
 * @internal
 */
export async function objectsGone(git: GitRunner, cwd: string, oids: readonly string[]): Promise<string[]> {
  if (oids.length === 0) return [];
  const out = await run(git, cwd, ['cat-file', '--batch-check=%(objectname)'], { input: oids.map((oid) => `${oid}\n`).join('') });
  return out.split('\n').flatMap((line) => (line.endsWith(' missing') ? [line.slice(0, -' missing'.length)] : []));
}

/**
 * Drops the reflog entries of `refs` that their tips no longer reach, so a rewritten chain's old
 * commits are held by nothing chant wrote. Other refs' reflogs are never touched.
 * @param git - the runner
 * @param cwd - a folder inside the checkout
 * @param refs - full refnames
 * @throws {@link WipError} `git-failed`
 * @internal
 */
export async function expireUnreachableReflogs(git: GitRunner, cwd: string, refs: readonly string[]): Promise<void> {
  if (refs.length === 0) return;
  await run(git, cwd, ['reflog', 'expire', '--expire-unreachable=now', '--end-of-options', ...refs]);
}

/**
 * Deletes the newest `count` entries of `ref`'s reflog, one at a time (each delete numbers the
 * entries afresh): a move undone leaves none naming the commits it moved to.
 * @throws {@link WipError} `git-failed`
 * @internal
 */
export async function dropNewestReflogEntries(git: GitRunner, cwd: string, ref: string, count: number): Promise<void> {
  for (let index = 0; index < count; index += 1) await run(git, cwd, ['reflog', 'delete', '--end-of-options', `${ref}@{0}`]);
}

/**
 * `git gc --prune=now`: deletes every unreachable object at once, at the cost of a repack of
 * the whole repository.
 * @param git - the runner
 * @param cwd - a folder inside the checkout
 * @throws {@link WipError} `git-failed`
 * @internal
 */
export async function collectGarbageNow(git: GitRunner, cwd: string): Promise<void> {
  await run(git, cwd, ['gc', '--prune=now', '--quiet']);
}

/**
 * Whether the ref `recorded` (chant's record of what a remote holds) names a commit the chain at
 * `ref` does not reach by plain ancestry, prune markers not followed: a prune rewrote the chain
 * since the record was made (or another box pushed above it). False where there is no record.
 * @param git - the runner
 * @param cwd - a folder inside the checkout
 * @param recorded - the record's ref
 * @param ref - the chain's ref
 * @throws {@link WipError} `git-failed`
 * @internal
 */
export async function recordLeftBehind(git: GitRunner, cwd: string, recorded: string, ref: string): Promise<boolean> {
  const record = (await run(git, cwd, ['for-each-ref', '--format=%(objectname)', '--end-of-options', recorded])).trim();
  if (record === '') return false;
  return (await run(git, cwd, ['rev-list', '-n', '1', record, '--not', ref, '--'])).trim() !== '';
}

/**
 * The folder git-lfs keeps its objects in (`<oid[0:2]>/<oid[2:4]>/<oid>` under it): `lfs.storage`
 * where set (relative to the common git directory), else `lfs/objects` there.
 * @param git - the runner
 * @param cwd - a folder inside the checkout
 * @throws {@link WipError} `git-failed`
 * @internal
 */
export async function lfsObjectsDir(git: GitRunner, cwd: string): Promise<string> {
  const common = resolve(cwd, (await run(git, cwd, ['rev-parse', '--git-common-dir'])).trim());
  const storage = (await run(git, cwd, ['config', '--get', 'lfs.storage'], { okExitCodes: [1] })).trim();
  return join(storage === '' ? join(common, 'lfs') : resolve(common, storage), 'objects');
}

async function run(git: GitRunner, cwd: string, args: readonly string[], options: GitRunOptions = {}): Promise<string> {
  try {
    return (await git.run(args, { cwd, ...options })).stdout;
  } catch (error) {
    throw asWipError(error);
  }
}

async function runBuffer(git: GitRunner, cwd: string, args: readonly string[], options: GitRunOptions = {}): Promise<{ stdoutBuffer: Buffer }> {
  const chunks: Buffer[] = [];
  try {
    const out = await git.run(args, { cwd, ...options, onStdout: (chunk) => chunks.push(chunk) });
    return { stdoutBuffer: chunks.length > 0 ? Buffer.concat(chunks) : Buffer.from(out.stdout, 'utf8') };
  } catch (error) {
    throw asWipError(error);
  }
}

/**
 * One file a snapshot adds or changes over the snapshot below it.
 * @internal
 */
export interface AddedBlob {
  /** The snapshot that first holds this content at this path. */
  snapshot: string;
  path: string;
  blob: string;
}

/**
 * The snapshots `tip`'s first-parent chain holds that none of `known` reaches, oldest first, and
 * the files each adds or changes over the one below it, and over its head what a checkpoint's
 * recorded index stages: one `git log`, however many snapshots (and one `git diff-tree` when
 * checkpoints that recorded an index are among them).
 * @param git - the runner
 * @param cwd - a folder inside the checkout
 * @param tip - the chain's tip
 * @param known - commits the remote is known to hold
 * @returns the new snapshots with their first parents, the files they add, and `held`: the blobs
 *   a snapshot whose parent is one of `known` changed away from, which that parent's tree holds
 * @throws {@link WipError} `git-failed`
 * @internal
 */
export async function addedBlobs(git: GitRunner, cwd: string, tip: string, known: readonly string[]): Promise<{
  chain: Array<{ commit: string; parent: string | null; snapshot: boolean }>; blobs: AddedBlob[]; held: Set<string>;
}> {
  // One git log lists the chain and what each snapshot changed against the one below it (its
  // first parent; a snapshot's last parent, its head, is left out): a chain ends at the commit
  // HEAD named, which a branch reaches, so the branches' history is never walked. Each commit is
  // "\x01<commit> <parents>\0", then per change ":<modes> <ids> <status>\0<path>\0". No
  // --diff-filter: in a log it would also drop the commits that only delete from the chain.
  // --no-relative: with diff.relative set, a log run in a subfolder lists only what changed
  // there, and the rest of the snapshot went unscanned.
  const log = (negatives: readonly string[] | null): Promise<string> => run(git, cwd, [
    ...TRAILERS_AS_WRITTEN, 'log', '--first-parent', '--diff-merges=first-parent', '--raw', '-z', '--no-renames', '--no-relative', '--no-abbrev', '--reverse', '--format=%x01%H %P%x02%(trailers:key=Chant-Wip-Head,valueonly,separator=%x20)%x03%(trailers:key=Chant-Wip-Index,valueonly,separator=%x20)',
    '--ignore-missing', ...(negatives === null ? ['--not', '--branches', '--tags'] : []), '--stdin',
  ], { input: `${tip}\n${[...new Set([...known, ...(negatives ?? [])])].map((oid) => `^${oid}\n`).join('')}`, env: AS_STORED });
  let out = await log(null);
  // A branch or tag that reaches a snapshot (one made on it to look at it) would end the walk
  // there, and what lies below would go unscanned: where the walk ends on a snapshot the remote
  // is not known to hold, it runs again with only the branches and tags that do not reach it.
  for (let ended = chainEnd(out, tip); ended !== null && !known.includes(ended) && (ended !== tip || await isSnapshot(git, cwd, ended));) {
    // Ended by what the remote holds (a known commit above it), not by a branch: nothing to redo.
    if ((await run(git, cwd, ['for-each-ref', '--count=1', '--format=%(refname)', `--contains=${ended}`, 'refs/heads', 'refs/tags'], { env: AS_STORED })).trim() === '') break;
    const below = (await run(git, cwd, ['for-each-ref', '--format=%(objectname)', `--no-contains=${ended}`, 'refs/heads', 'refs/tags'], { env: AS_STORED })).split('\n').filter((line) => OBJECT_NAME.test(line));
    out = await log(below);
    const next = chainEnd(out, tip);
    if (next === ended) break;
    ended = next;
  }
  const chain: Array<{ commit: string; parent: string | null; snapshot: boolean }> = [];
  const own = new Map<string, AddedBlob[]>();
  const held = new Set<string>();
  const knownSet = new Set(known);
  // A checkpoint that recorded the index has a commit of that index among its parents (before
  // its head), off the first-parent walk: what was staged goes to the remote with it.
  const indexCommits = new Map<string, string>();
  // The commit of the index a chain's first checkpoint recorded is its first parent, so on the
  // first-parent walk, though no snapshot: what it stages is credited to its checkpoint below.
  const firstIndexes = firstCheckpointIndexes(out);
  for (const record of out.split('\x01').slice(1)) {
    const fields = record.split('\0');
    const [ids = '', trailers = ''] = (fields[0] as string).split('\x02');
    const [commit = '', ...parents] = ids.trim().split(' ');
    if (firstIndexes.has(commit)) continue;
    const parent = parents[0];
    // A snapshot names its head; a commit of the head's history no branch reaches (a head amended
    // away) names none: it goes with the chain, and is listed, but is no snapshot to push up to.
    chain.push({ commit, parent: parent ?? null, snapshot: (trailers.split('\x03')[0] ?? '').trim() !== '' });
    const found: AddedBlob[] = [];
    own.set(commit, found);
    if ((trailers.split('\x03')[1] ?? '').trim() !== '' && parents.length >= 2) indexCommits.set(parents[parents.length - 2] as string, commit);
    const onKnown = parent !== undefined && knownSet.has(parent);
    for (let i = 1; i < fields.length; i += 1) {
      const field = (fields[i] as string).replace(/^\n/, '');
      if (!field.startsWith(':')) continue;
      const [oldMode, , oldBlob] = field.slice(1).split(' ');
      const path = fields[i + 1] as string;
      i += 1;
      if (onKnown && oldMode?.startsWith('100') && oldBlob !== undefined) held.add(oldBlob);
      const blob = addedFile(field);
      if (parent !== undefined && blob !== null) found.push({ snapshot: commit, path, blob });
    }
  }
  // What each index commit stages over its own parent (the head), credited to its checkpoint,
  // in one git diff-tree for them all.
  const staged = indexCommits.size === 0 ? new Map<string, AddedBlob[]>() : await stagedBlobs(git, cwd, indexCommits);
  const blobs = chain.flatMap((link) => [...(own.get(link.commit) ?? []), ...(staged.get(link.commit) ?? [])]);
  return { chain, blobs, held };
}

/**
 * The files each index commit (a checkpoint's record of the index) adds or changes over its
 * parent, by the checkpoint that names it: `git diff-tree --stdin`, which prints each commit's
 * id, then its changes, NUL-separated.
 */
async function stagedBlobs(git: GitRunner, cwd: string, indexCommits: ReadonlyMap<string, string>): Promise<Map<string, AddedBlob[]>> {
  const out = await run(git, cwd, ['diff-tree', '-r', '-z', '--raw', '--no-renames', '--no-abbrev', '--stdin'], { input: [...indexCommits.keys()].map((commit) => `${commit}\n`).join(''), env: AS_STORED });
  const found = new Map<string, AddedBlob[]>();
  let snapshot: string | undefined;
  const fields = out.split('\0');
  for (let i = 0; i < fields.length; i += 1) {
    const field = (fields[i] as string).replace(/^\n/, '');
    if (!field.startsWith(':')) {
      snapshot = indexCommits.get(field.trim());
      continue;
    }
    const path = fields[i + 1] as string;
    i += 1;
    const blob = addedFile(field);
    if (snapshot !== undefined && blob !== null) {
      const list = found.get(snapshot) ?? [];
      list.push({ snapshot, path, blob });
      found.set(snapshot, list);
    }
  }
  return found;
}

/**
 * The new blob of a `--raw` record (`:<modes> <ids> <status>`) that adds, changes or retypes a
 * file, else null: a gitlink names a commit, and a symlink's target is no file's content.
 */
function addedFile(field: string): string | null {
  const [, newMode, , newBlob, status] = field.slice(1).split(' ');
  return (status === 'A' || status === 'M' || status === 'T') && newMode?.startsWith('100') === true && newBlob !== undefined ? newBlob : null;
}

/**
 * The environment of the secret gate's git calls: objects as stored, never what a replace ref
 * (`git replace`) puts in their place. A push sends the objects themselves, and with replace refs
 * followed, a commit or tree replaced by a clean one listed the clean one's files, and a packed
 * blob replaced read as the clean one: what went was never scanned.
 */
const AS_STORED: Readonly<Record<string, string>> = { GIT_NO_REPLACE_OBJECTS: '1' };

/**
 * Settings under which git's `%(trailers)` reads chant's trailers as chant writes them (`Key:
 * value` lines at the end of the message): a `trailer.separators` without `:`, or a
 * `core.commentChar` of `C`, had the gate read none, so a checkpoint's recorded index went
 * unscanned, and a branch reaching into a chain ended its walk there; and had the prune markers
 * read as naming nothing, so a prune push went nowhere and a fetching box took a pruned chain
 * that replaced its tip for one diverged from it.
 */
const TRAILERS_AS_WRITTEN = ['-c', 'trailer.separators=:', '-c', 'core.commentChar=#'] as const;

/** A full object id, as for-each-ref prints them. */
const OBJECT_NAME = /^[0-9a-f]{40}(?:[0-9a-f]{24})?$/;

/**
 * Where a chain's log (see addedBlobs) ended on a snapshot: the first parent of its oldest
 * commit when that is not the commit the snapshot was taken on (its `Chant-Wip-Head`, the first
 * parent of a chain's first snapshot; any other first parent is the snapshot below), `tip` when
 * it listed nothing (for the caller to look at), null where it ended on the head or a root.
 */
function chainEnd(out: string, tip: string): string | null {
  const firstIndexes = firstCheckpointIndexes(out);
  const oldest = chainRecords(out).find((record) => !firstIndexes.has(record.commit));
  if (oldest === undefined) return tip;
  // A chain's first checkpoint that recorded the index: its first parent is that index's commit,
  // which sits on its head, as the head is a first snapshot's first parent.
  if (oldest.index && oldest.parents.length === 2) return null;
  // No snapshot (it names no head): the walk went on below the chain's first snapshot into its
  // head's history, which no branch reaches (a head amended away), and ended where one does.
  if (oldest.head === '') return null;
  const parent = oldest.parents[0];
  return parent === undefined || parent === oldest.head ? null : parent;
}

/** The header of each commit of a chain's log (see addedBlobs), oldest first. */
function chainRecords(out: string): Array<{ commit: string; parents: string[]; head: string; index: boolean }> {
  return out.split('\x01').slice(1).map((record) => {
    const [ids = '', trailers = ''] = record.slice(0, record.indexOf('\0') < 0 ? record.length : record.indexOf('\0')).split('\x02');
    const [commit = '', ...parents] = ids.trim().split(' ');
    const [head = '', index = ''] = trailers.split('\x03');
    return { commit, parents, head: head.trim(), index: index.trim() !== '' };
  });
}

/**
 * The commits of the index a chain's first checkpoint recorded (one with the index trailer and
 * two parents: that commit, then its head), which the first-parent walk lists below it.
 */
function firstCheckpointIndexes(out: string): Set<string> {
  return new Set(chainRecords(out).filter((record) => record.index && record.parents.length === 2).map((record) => record.parents[0] as string));
}

/** Whether a commit is a snapshot: its message carries chant's branch trailer. */
async function isSnapshot(git: GitRunner, cwd: string, commit: string): Promise<boolean> {
  const message = await run(git, cwd, [...TRAILERS_AS_WRITTEN, 'log', '-1', '--format=%(trailers:key=Chant-Wip-Branch,valueonly)', commit, '--'], { env: AS_STORED });
  return message.trim().length > 0;
}

/**
 * The contents of blobs, each cut to its first `limit` bytes, in one `cat-file --batch`.
 * @param git - the runner
 * @param cwd - a folder inside the checkout
 * @param blobs - blob ids
 * @param limit - the most bytes of each kept
 * @param asStored - read each blob itself, not what a replace ref puts in its place (what a push
 *   sends); a loose blob is read as itself either way
 * @returns each blob's content by id
 * @throws {@link WipError} `git-failed`
 * @internal
 */
export async function readBlobs(git: GitRunner, cwd: string, blobs: readonly string[], limit: number, asStored = false): Promise<Map<string, Buffer>> {
  const unique = [...new Set(blobs)];
  // Those a save just wrote are loose: read in-process, checked against their ids, without the
  // cat-file process; git is asked only for what is not there loose (packed, or in an alternate).
  const dir = unique.length === 0 ? null : looseObjectsDir(cwd);
  const contents = dir === null ? new Map<string, Buffer>() : readLooseBlobs(dir, unique, limit);
  const missing = unique.filter((oid) => !contents.has(oid));
  if (missing.length === 0) return contents;
  const { stdoutBuffer } = await runBuffer(git, cwd, ['cat-file', '--batch'], { input: missing.map((oid) => `${oid}\n`).join(''), ...(asStored ? { env: AS_STORED } : {}) });
  const objects = parseBatch(stdoutBuffer, missing.length) ?? [];
  for (const object of objects) {
    if (object !== null && object.type === 'blob') contents.set(object.oid, Buffer.from(object.content.subarray(0, limit)));
  }
  return contents;
}
