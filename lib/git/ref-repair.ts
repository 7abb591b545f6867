// Wip refs a crash or a power loss left broken (their loose file emptied or cut short, or the
// loose commit they name emptied or cut short), put back at the newest commit their reflog moved
// them to that the repository holds whole (see ref-writer.ts).
import { closeSync, existsSync, fstatSync, openSync, readdirSync, readFileSync, readSync } from 'node:fs';
import { join } from 'node:path';
import { EXACT_OBJECT_ID, objectHash } from './formats/object-format.js';
import { readCheckedLoose } from './loose-objects.js';
import type { Plumbing, RepositoryLayout } from './plumbing.js';
import { GitCommandError } from './runner.js';
import { brokenRefFile, reflogValues, removeBrokenRef, replaceBrokenRef } from './ref-writer.js';

/** The reflog message of a ref set back from a tip whose commit a crash or a power loss broke; the broken id follows it. */
export const SET_BACK_REASON = 'chant wip: set back from a broken tip';

/**
 * Puts back each wip ref of `refs` (a full name, or a prefix ending in `/`: every loose ref under
 * it) whose loose file a crash or a power loss emptied or cut short, at the newest commit its
 * reflog moved it to that the repository holds whole. git takes such a ref as absent and refuses
 * to move it: the chain read as gone, and every save failed on it. A ref whose file is whole but
 * names a loose commit emptied or cut short that no pack holds whole (git fails every read of the
 * chain on it) is set back the same way, by `update-ref` while it still names that commit, its
 * reflog line naming the broken commit after {@link SET_BACK_REASON}.
 * @returns the refs put back
 * @internal
 */
export async function repairBrokenRefs(plumbing: Pick<Plumbing, 'objectInfo' | 'updateRefCas' | 'run'>, layout: Pick<RepositoryLayout, 'commonDir' | 'objectsDir' | 'objectFormat'>, refs: readonly string[]): Promise<string[]> {
  const length = objectHash(layout.objectFormat).bytes * 2;
  const named = refs.flatMap((ref) => (ref.endsWith('/') ? looseRefsUnder(layout.commonDir, ref.slice(0, -1)) : [ref]));
  const repaired: string[] = [];
  for (const ref of named) {
    const broken = brokenRefFile(layout.commonDir, ref, length);
    const tip = broken ? null : brokenTip(layout, ref, length);
    if (!broken && tip === null) continue;
    // git reads an object from a pack before its loose file: a pack that holds the tip whole
    // (a repack that kept the loose objects) leaves nothing broken for git, nor a ref to set back.
    if (tip !== null && await readsWhole(plumbing, tip)) continue;
    const values = reflogValues(layout.commonDir, ref, length).filter((value) => value !== tip);
    const next = values.length === 0 ? null : await newestWhole(plumbing, layout, values);
    if (next === null) {
      // No whole value to set it back to. Where its reflog holds its every move since its
      // creation, each a save's or a checkpoint's snapshot on the one before, its chain is those
      // snapshots alone above HEAD, every one broken: it is set back to absent, as before its
      // first save, so that the next save starts the chain again.
      // A ref file that is broken itself names no tip: its reflog's last value was it.
      const last = tip ?? reflogValues(layout.commonDir, ref, length)[0];
      if (last === undefined || !snapshotsAlone(layout.commonDir, ref, length, last)) continue;
      if (tip === null ? removeBrokenRef(layout.commonDir, ref, length) : await dropRef(plumbing, ref, tip)) repaired.push(ref);
      continue;
    }
    if (tip === null ? replaceBrokenRef(layout.commonDir, ref, next) : await plumbing.updateRefCas(ref, next, tip, `${SET_BACK_REASON} ${tip}`).catch(() => false)) repaired.push(ref);
  }
  return repaired;
}

/** The reflog messages of a save's move and a restore's checkpoint's: each puts a snapshot on the tip it read. */
const SNAPSHOT_MOVE = /^chant wip: (?:save|pre-restore)$/;

/**
 * Whether the reflog of `ref` holds its every move since its creation, ending at `tip`: a first
 * line from no value, each line from the value the one before moved it to, and each a save's or
 * a checkpoint's move, which puts a snapshot on the tip before it (a first one on HEAD alone).
 * The chain then holds the commits the reflog names and nothing else but what HEAD reaches (and a
 * checkpoint's index commit): none a fetch brought, a prune wrote or a person moved it to.
 */
function snapshotsAlone(commonDir: string, ref: string, length: number, tip: string): boolean {
  let text: string;
  try {
    text = readFileSync(join(commonDir, 'logs', ref), 'latin1');
  } catch {
    return false;
  }
  const lines = text.endsWith('\n') ? text.slice(0, -1).split('\n') : [];
  let last = '0'.repeat(length);
  for (const line of lines) {
    const tab = line.indexOf('\t');
    if (line.slice(0, length) !== last || line.charAt(length) !== ' ' || tab < 0 || !SNAPSHOT_MOVE.test(line.slice(tab + 1))) return false;
    last = line.slice(length + 1, 2 * length + 1);
    if (last.length !== length || !EXACT_OBJECT_ID.test(last)) return false;
  }
  return lines.length > 0 && last === tip;
}

/** Deletes `ref` while it still names `tip` (its reflog goes with it, as git deletes one); false where it could not. */
async function dropRef(plumbing: Pick<Plumbing, 'run'>, ref: string, tip: string): Promise<boolean> {
  try {
    await plumbing.run(['update-ref', '-d', '--end-of-options', ref, tip]);
    return true;
  } catch (error) {
    const cause = error instanceof Error ? error.cause : undefined;
    if (!(cause instanceof GitCommandError) || cause.exitCode === null) throw error;
    return false;
  }
}

/**
 * The commit the loose file of `ref` names, when the repository holds it loose but its file is
 * emptied or cut short (it does not read back as the commit its id names); null otherwise.
 */
function brokenTip(layout: Pick<RepositoryLayout, 'commonDir' | 'objectsDir' | 'objectFormat'>, ref: string, length: number): string | null {
  let text: string;
  try {
    text = readFileSync(join(layout.commonDir, ref), 'latin1');
  } catch {
    return null;
  }
  const value = text.endsWith('\n') ? text.slice(0, -1) : text;
  if (value.length !== length || !EXACT_OBJECT_ID.test(value)) return null;
  if (!existsSync(join(layout.objectsDir, value.slice(0, 2), value.slice(2)))) return null;
  return readCheckedLoose(layout.objectsDir, value, 'commit', layout.objectFormat) === null ? value : null;
}

/**
 * Whether git reads the commit `oid` whole (from a pack, where its loose file is broken). A git
 * that never ran to an exit (stopped, cancelled) is no answer: its error is thrown.
 */
async function readsWhole(plumbing: Pick<Plumbing, 'run'>, oid: string): Promise<boolean> {
  return (await readByGit(plumbing, oid, 'commit')) !== null;
}

/**
 * The body of `oid`, of `type`, as git reads it (from a pack before its loose file); null where
 * git fails on it. A git that never ran to an exit (stopped, cancelled) is no answer: its error
 * is thrown.
 */
async function readByGit(plumbing: Pick<Plumbing, 'run'>, oid: string, type: 'commit' | 'tree'): Promise<string | null> {
  try {
    return await plumbing.run(['cat-file', type, oid]);
  } catch (error) {
    const cause = error instanceof Error ? error.cause : undefined;
    if (!(cause instanceof GitCommandError) || cause.exitCode === null) throw error;
    return null;
  }
}

/**
 * The first of `values` that is a commit whose tree the repository holds, both whole where they
 * are loose (a loose file read back and checked against its id: git's own look reads only its
 * header, which a file cut short keeps; one that fails it is whole still where git reads it from
 * a pack, as git reads a pack first); null when none is.
 */
async function newestWhole(plumbing: Pick<Plumbing, 'objectInfo' | 'run'>, layout: Pick<RepositoryLayout, 'objectsDir' | 'objectFormat'>, values: readonly string[]): Promise<string | null> {
  const loose = (oid: string): boolean => existsSync(join(layout.objectsDir, oid.slice(0, 2), oid.slice(2)));
  const info = await plumbing.objectInfo(values.filter((value) => !loose(value)));
  for (const value of values) {
    if (!loose(value)) {
      if (info.get(value)?.type === 'commit') return value;
      continue;
    }
    const commit = readCheckedLoose(layout.objectsDir, value, 'commit', layout.objectFormat)?.toString('latin1') ?? await readByGit(plumbing, value, 'commit');
    if (commit === null) continue;
    const tree = /^tree ([0-9a-f]+)\n/.exec(commit)?.[1];
    if (tree === undefined) continue;
    if (loose(tree) ? readCheckedLoose(layout.objectsDir, tree, 'tree', layout.objectFormat) !== null || await readByGit(plumbing, tree, 'tree') !== null : (await plumbing.objectInfo([tree])).get(tree)?.type === 'tree') return value;
  }
  return null;
}

/** The names of the loose ref files under `prefix` (a ref folder), at any depth; none where it cannot be read. */
function looseRefsUnder(commonDir: string, prefix: string): string[] {
  let names: string[];
  try {
    names = readdirSync(join(commonDir, prefix), { recursive: true, encoding: 'utf8' });
  } catch {
    return [];
  }
  return names.map((name) => `${prefix}/${name.split('\\').join('/')}`).filter((ref) => !ref.endsWith('.lock'));
}

/**
 * Whether any loose ref under each prefix of `prefixes` (a ref folder ending in `/`) is broken
 * for either length of object id, or names a commit there loose in the common directory's
 * objects folder that is broken: a look at the files alone, before the layout is read.
 * @internal
 */
export function anyBrokenRef(commonDir: string, prefixes: readonly string[]): boolean {
  return prefixes.some((prefix) => looseRefsUnder(commonDir, prefix.slice(0, -1)).some((ref) => {
    if (brokenRefFile(commonDir, ref, 40) && brokenRefFile(commonDir, ref, 64)) return true;
    const layout = { commonDir, objectsDir: join(commonDir, 'objects') };
    return brokenTip({ ...layout, objectFormat: 'sha1' }, ref, 40) !== null || brokenTip({ ...layout, objectFormat: 'sha256' }, ref, 64) !== null;
  }));
}

/** The bytes of a reflog's end read for its newest line. */
const REFLOG_TAIL = 4096;

/**
 * The commit `ref` was set back from (see {@link repairBrokenRefs}) while the newest line of its
 * reflog is that move and names `tip`; null otherwise, or where the reflog cannot be read.
 * @internal
 */
export function setBackFrom(commonDir: string, ref: string, tip: string): string | null {
  let text: string;
  try {
    const fd = openSync(join(commonDir, 'logs', ref), 'r');
    try {
      const size = fstatSync(fd).size;
      const length = Math.min(size, REFLOG_TAIL);
      const buffer = Buffer.alloc(length);
      readSync(fd, buffer, 0, length, size - length);
      text = buffer.toString('latin1');
    } finally {
      closeSync(fd);
    }
  } catch {
    return null;
  }
  const lines = text.split('\n');
  const last = lines.at(-1) === '' ? lines.at(-2) : lines.at(-1);
  if (last === undefined) return null;
  const tab = last.indexOf('\t');
  const message = tab < 0 ? '' : last.slice(tab + 1);
  const prefix = `${SET_BACK_REASON} `;
  if (last.slice(tip.length + 1, 2 * tip.length + 1) !== tip || !message.startsWith(prefix)) return null;
  const broken = message.slice(prefix.length);
  return broken.length === tip.length && EXACT_OBJECT_ID.test(broken) ? broken : null;
}
