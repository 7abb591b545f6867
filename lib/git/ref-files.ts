// The wip refs and the commits a read walks, read from their files without a process where that
// is plainly what git would print: loose and packed refs of plain names pointing at loose
// commits, and loose commits with no encoding of their own. A read after a save meets only
// those (each save writes its commit loose); anything else (a reftable, a symbolic ref, a name
// git might refuse, a ref being written, a commit in a pack) is git's to read.
import { existsSync, readdirSync } from 'node:fs';
import { join } from 'node:path';
import { parseCommit } from './formats/commit.js';
import type { CommitRecord } from './formats/commit.js';
import { EXACT_OBJECT_ID } from './formats/object-format.js';
import { compareBytes } from '../order.js';
import { readIfThere } from './checkout-files.js';
import { readCheckedLoose } from './loose-objects.js';
import type { RefRecord, RepositoryLayout } from './plumbing.js';

/** A ref name component git takes as it is: no leading dot, no `..`, no `.lock` or dot at its end. */
const PLAIN_COMPONENT = /^[A-Za-z0-9_][A-Za-z0-9._-]*$/;

function plainName(name: string): boolean {
  return name.split('/').every((part) => PLAIN_COMPONENT.test(part) && !part.includes('..') && !part.endsWith('.lock') && !part.endsWith('.'));
}

/**
 * What `git for-each-ref` prints of the refs `refs` name (a name ending in `/`: every ref under
 * it; else that ref), with each commit's fields (its message as stored), sorted by name; null
 * when git must be asked: the repository keeps its refs in a reftable, a ref is symbolic, being
 * written (a lock file), or has a name or content that is not plain, packed-refs holds a line
 * that is not plain, or a commit a ref names is not there loose.
 * @param layout - where the checkout's git data lives
 * @param refs - full ref names, or prefixes ending in `/`
 * @param replaced - whether replace refs may stand for a commit (git then reads it)
 * @internal
 */
export function refsFromFiles(layout: Pick<RepositoryLayout, 'commonDir' | 'objectsDir' | 'objectFormat'>, refs: readonly string[], replaced: boolean): RefRecord[] | null {
  if (replaced) return null;
  try {
    return read(layout, refs);
  } catch {
    return null;
  }
}

function read(layout: Pick<RepositoryLayout, 'commonDir' | 'objectsDir' | 'objectFormat'>, refs: readonly string[]): RefRecord[] | null {
  const { commonDir } = layout;
  if (existsSync(join(commonDir, 'reftable'))) return null;
  if (!refs.every((ref) => ref.startsWith('refs/') && plainName(ref.endsWith('/') ? ref.slice(0, -1) : ref))) return null;
  // Loose refs first, then packed-refs, as git reads them: git packs a ref by writing
  // packed-refs before it removes the loose file, and deletes one from packed-refs before its
  // loose file, so a ref read in this order is never missed, nor seen older than it was.
  const loose = new Map<string, string>();
  for (const ref of refs) {
    if (ref.endsWith('/')) {
      if (!looseUnder(commonDir, ref.slice(0, -1), loose)) return null;
      continue;
    }
    const text = readIfThere(join(commonDir, ref));
    if (text === undefined) return null;
    if (text === null) continue;
    const oid = refValue(text);
    if (oid === null) return null;
    loose.set(ref, oid);
  }
  const found = new Map<string, string>();
  const packed = readIfThere(join(commonDir, 'packed-refs'));
  if (packed === undefined) return null;
  if (packed !== null && packed.length > 0) {
    if (!packed.endsWith('\n')) return null;
    // git finds a prefix in packed-refs by a search that trusts its order: the names asked for
    // must come in order, once each, or git's answer is its own.
    let previous = '';
    for (const line of packed.slice(0, -1).split('\n')) {
      if (line.startsWith('# pack-refs with:') || line.startsWith('^')) continue;
      const space = line.indexOf(' ');
      const oid = line.slice(0, space);
      const name = line.slice(space + 1);
      if (space < 0 || !EXACT_OBJECT_ID.test(oid)) return null;
      if (!refs.some((ref) => covers(ref, name))) continue;
      if (!plainName(name) || compareBytes(previous, name) >= 0) return null;
      previous = name;
      found.set(name, oid);
    }
  }
  // A loose ref stands over its packed line.
  for (const [name, oid] of loose) found.set(name, oid);
  const records: RefRecord[] = [];
  for (const name of [...found.keys()].sort(compareBytes)) {
    const oid = found.get(name) as string;
    const commit = looseCommit(layout, oid);
    if (commit === null) return null;
    records.push({ ref: name, ...commit.record });
  }
  return records;
}

/**
 * The loose refs under `folder` (a ref name without its slash), into `found`; false when one is
 * not plain (a lock file, a symbolic ref, a name git might refuse, something not a file).
 */
function looseUnder(commonDir: string, folder: string, found: Map<string, string>): boolean {
  let entries;
  try {
    entries = readdirSync(join(commonDir, folder), { withFileTypes: true });
  } catch (error) {
    const code = (error as NodeJS.ErrnoException).code;
    return code === 'ENOENT' || code === 'ENOTDIR';
  }
  for (const entry of entries) {
    const name = `${folder}/${entry.name}`;
    if (!plainName(name)) return false;
    if (entry.isDirectory()) {
      if (!looseUnder(commonDir, name, found)) return false;
    } else if (entry.isFile()) {
      const text = readIfThere(join(commonDir, name));
      if (text === undefined) return false;
      // Gone since the folder was listed: packed, or deleted; packed-refs, read after, says which.
      if (text === null) continue;
      const oid = refValue(text);
      if (oid === null) return false;
      found.set(name, oid);
    } else {
      return false;
    }
  }
  return true;
}

/** The id a loose ref file holds (`<id>` and a newline), or null when it holds anything else. */
function refValue(text: string): string | null {
  const oid = text.endsWith('\n') ? text.slice(0, -1) : null;
  return oid !== null && EXACT_OBJECT_ID.test(oid) ? oid : null;
}

function covers(ref: string, name: string): boolean {
  return ref.endsWith('/') ? name.startsWith(ref) : name === ref;
}

/**
 * A commit there loose, as `git log --encoding=UTF-8 --format=%H%x00%T%x00%P%x00%ct%x00%B`
 * prints it; null, for git to read it, when it is not there loose (or does not hash to its id),
 * when it names an encoding of its own (git log would re-encode its message), or when its
 * committer line does not end in a plain date.
 * @param layout - where the checkout's objects are
 * @param oid - the commit's full id
 * @internal
 */
export function looseCommitRecord(layout: Pick<RepositoryLayout, 'objectsDir' | 'objectFormat'>, oid: string): CommitRecord | null {
  const commit = looseCommit(layout, oid);
  return commit === null || commit.encoded ? null : commit.record;
}

/**
 * A commit there loose, its bytes checked against its id, read as git prints its fields, and
 * whether it names an encoding; null when it is not there loose or its committer line does not
 * end in a plain date.
 */
function looseCommit(layout: Pick<RepositoryLayout, 'objectsDir' | 'objectFormat'>, oid: string): { record: CommitRecord; encoded: boolean } | null {
  if (!EXACT_OBJECT_ID.test(oid)) return null;
  const content = readCheckedLoose(layout.objectsDir, oid, 'commit', layout.objectFormat);
  // git cuts a message at a NUL.
  if (content === null || content.includes(0)) return null;
  const text = content.toString('utf8');
  const split = text.indexOf('\n\n');
  const headers = (split < 0 ? text : text.slice(0, split)).split('\n');
  if (!canonicalHeaders(headers, oid.length)) return null;
  const record = parseCommit(oid, text);
  // git's two printers part on a message that starts with a blank line.
  if (record.message.startsWith('\n')) return null;
  return { record, encoded: headers.some((line) => line.startsWith('encoding ')) };
}

/**
 * Whether a commit's header lines are as git writes them, so that its fields read here are the
 * ones git prints: the tree, then only parents (lowercase ids of the repository's length), the
 * author, one committer whose line ends in a plain date, then other headers (an encoding, a
 * signature and its lines) but none of those four again.
 */
function canonicalHeaders(lines: readonly string[], idLength: number): boolean {
  const id = `[0-9a-f]{${idLength}}`;
  if (!new RegExp(`^tree ${id}$`).test(lines[0] ?? '')) return false;
  let at = 1;
  const parent = new RegExp(`^parent ${id}$`);
  while (lines[at]?.startsWith('parent ') === true) {
    if (!parent.test(lines[at] as string)) return false;
    at += 1;
  }
  if (lines[at]?.startsWith('author ') !== true) return false;
  if (!/^committer [^\r]*> \d{1,15} [+-]\d{4}$/.test(lines[at + 1] ?? '')) return false;
  return lines.slice(at + 2).every((line) => !/^(?:tree|parent|author|committer) /.test(line));
}
