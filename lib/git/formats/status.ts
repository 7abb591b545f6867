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
