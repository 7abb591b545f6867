// `git status --porcelain=v2 -z` output read into what each path holds: text in, a plan out,
// no process.
import { OBJECT_ID } from './object-format.js';

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
 * could differ from what `git add --all` would stage. `staged`, when given, receives what status
 * said of the index against HEAD, for {@link planFromParts}: `X mI hI path` for each path whose
 * index entry is not HEAD's.
 * @internal
 */
export function readStatus(out: string, staged?: string[]): StatusPlan | null {
  let head: string | null = null;
  const states = new Map<string, PathState>();
  const untracked: string[] = [];
  // Read in place, by offsets into the text: a tree with 10,000 files modified since HEAD has
  // status name them all on every save, and a split of each record into its fields made nine
  // strings and an array a record.
  for (let at = 0; at < out.length;) {
    let end = out.indexOf('\0', at);
    if (end < 0) end = out.length;
    const start = at;
    at = end + 1;
    if (end === start) continue;
    if (out.startsWith('# ', start)) {
      if (out.startsWith('# branch.oid ', start)) head = out.slice(start + '# branch.oid '.length, end);
      continue;
    }
    if (out.startsWith('? ', start)) {
      const path = out.slice(start + 2, end);
      if (!passable(path) || path.endsWith('/')) return null;
      untracked.push(path);
      continue;
    }
    if (!out.startsWith('1 ', start)) return null;
    // `1 XY sub mH mI mW hH hI path`: fixed fields, then the path, all that follows the eighth space.
    const s2 = out.indexOf(' ', start + 2);
    const s3 = s2 < 0 ? -1 : out.indexOf(' ', s2 + 1);
    const s4 = s3 < 0 ? -1 : out.indexOf(' ', s3 + 1);
    const s5 = s4 < 0 ? -1 : out.indexOf(' ', s4 + 1);
    const s6 = s5 < 0 ? -1 : out.indexOf(' ', s5 + 1);
    const s7 = s6 < 0 ? -1 : out.indexOf(' ', s6 + 1);
    const s8 = s7 < 0 ? -1 : out.indexOf(' ', s7 + 1);
    if (s8 < 0 || s8 >= end) return null;
    const xy = out.slice(start + 2, s2);
    const modeIndex = out.slice(s4 + 1, s5);
    const modeWork = out.slice(s5 + 1, s6);
    const path = out.slice(s8 + 1, end);
    if (!passable(path) || !out.startsWith('N', s2 + 1) || out.slice(s3 + 1, s4) === '160000' || modeIndex === '160000' || modeWork === '160000') return null;
    const oidIndex = out.slice(s7 + 1, s8);
    const state = stateOf(xy, modeIndex, modeWork, oidIndex);
    if (state === null) return null;
    states.set(path, state);
    if (staged !== undefined && xy[0] !== '.') staged.push(`${xy[0] as string} ${modeIndex} ${oidIndex} ${path}`);
  }
  if (head === null || !OBJECT_ID.test(head)) return null;
  return { head, states, untracked };
}

/**
 * The plan {@link readStatus} would read from status on an index whose comparison with `head`
 * is known already: `staged` (what readStatus gave of an earlier status on the same index and
 * HEAD, joined by NULs), `changes` (`git diff-files -z` on that index: the working tree against
 * it) and `untracked` (`git ls-files -z --others --exclude-standard`); null where status's
 * plan would be null, or the parts do not read. `linkHolds` says whether the symlink at a path
 * still holds a blob (status reads a symlink its stat data calls changed; diff-files does not).
 * @internal
 */
export function planFromParts(head: string, staged: string, changes: string, untracked: string, linkHolds?: (path: string, oid: string) => boolean): StatusPlan | null {
  // `:mI mW hI hW Y`, then the path: a few records, the files changed since the index was written.
  const changed = new Map<string, { y: string; modeIndex: string; modeWork: string; oidIndex: string }>();
  for (let at = 0; at < changes.length;) {
    const meta = changes.indexOf('\0', at);
    const end = meta < 0 ? -1 : changes.indexOf('\0', meta + 1);
    if (end < 0 || changes[at] !== ':') return null;
    const [modeIndex, modeWork, oidIndex, , letter] = changes.slice(at + 1, meta).split(' ');
    const path = changes.slice(meta + 1, end);
    at = end + 1;
    if (modeIndex === undefined || modeWork === undefined || oidIndex === undefined || letter === undefined || letter.length !== 1 || changed.has(path)) return null;
    if (!passable(path) || modeIndex === '160000' || modeWork === '160000') return null;
    // diff-files does not read what it finds changed by its stat data alone: a symlink whose entry
    // is racily clean (size 0 in the copy) is named, and one that still holds the index's blob is no change.
    if (letter === 'M' && modeIndex === '120000' && modeWork === '120000' && linkHolds?.(path, oidIndex) === true) continue;
    changed.set(path, { y: letter, modeIndex, modeWork, oidIndex });
  }
  const states = new Map<string, PathState>();
  for (let at = 0; at < staged.length;) {
    let end = staged.indexOf('\0', at);
    if (end < 0) end = staged.length;
    const record = staged.slice(at, end);
    at = end + 1;
    const s1 = record.indexOf(' ');
    const s2 = record.indexOf(' ', s1 + 1);
    const s3 = record.indexOf(' ', s2 + 1);
    if (s1 !== 1 || s2 < 0 || s3 < 0) return null;
    const path = record.slice(s3 + 1);
    const change = changed.get(path);
    const state = change === undefined
      ? stateOf(`${record[0] as string}.`, record.slice(2, s2), '', record.slice(s2 + 1, s3))
      : stateOf(`${record[0] as string}${change.y}`, change.modeIndex, change.modeWork, change.oidIndex);
    if (state === null) return null;
    states.set(path, state);
  }
  for (const [path, change] of changed) {
    if (states.has(path)) continue;
    const state = stateOf(`.${change.y}`, change.modeIndex, change.modeWork, change.oidIndex);
    if (state === null) return null;
    states.set(path, state);
  }
  const others: string[] = [];
  for (let at = 0; at < untracked.length;) {
    let end = untracked.indexOf('\0', at);
    if (end < 0) end = untracked.length;
    const path = untracked.slice(at, end);
    at = end + 1;
    if (!passable(path) || path.endsWith('/')) return null;
    others.push(path);
  }
  return { head, states, untracked: others };
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
