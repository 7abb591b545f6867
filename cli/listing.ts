import type { ListResult } from '../lib/index.js';

/** How many snapshots per branch the listing shows unless --limit or --all says otherwise. */
export const DEFAULT_SHOWN = 10;
/** How many unreplicated refs the listing names before it says how many more there are. */
const REFS_SHOWN = 5;
/** How many branches a "no such branch" line names. */
const BRANCHES_SHOWN = 10;

// C0, DEL, C1, the line and paragraph separators, and the bidirectional controls: anything that
// could move the cursor, clear the screen, write the clipboard (OSC 52), open a hyperlink or make
// a line read other than it is. Fetched snapshots carry whatever their writer put in them.
const UNSAFE = /[\u0000-\u001f\u007f-\u009f\u2028\u2029\u200e\u200f\u061c\u202a-\u202e\u2066-\u2069]/gu;
const NAMED: Readonly<Record<string, string>> = { '\n': '\\n', '\r': '\\r', '\t': '\\t', '\u001b': '\\e', '\\': '\\\\' };

/**
 * A text as a terminal may show it: every control character and escape sequence introducer is
 * written out (`\e`, `\r`, `\x07`, `\u202e`), and a backslash doubled so the escapes stay
 * unambiguous. Other characters pass unchanged.
 */
export function shown(text: string): string {
  return text.replace(/\\/g, '\\\\').replace(UNSAFE, (char) => {
    const named = NAMED[char];
    if (named !== undefined) return named;
    const code = char.codePointAt(0) ?? 0;
    return code <= 0xff ? `\\x${code.toString(16).padStart(2, '0')}` : `\\u${code.toString(16).padStart(4, '0')}`;
  });
}

/** What the listing shows beyond the result. */
export interface ListingOptions {
  /** Snapshots shown per branch; null for all. */
  limit: number | null;
  /** The branch --branch named, when it did. */
  branch: string | null;
  /** The branches that have snapshots, when --branch named one that has none. */
  otherBranches?: readonly string[];
}

function plural(count: number, word: string): string {
  return `${count} ${word}${count === 1 ? '' : 's'}`;
}

/** The read for people: the checkout, recent snapshots per branch, then where replication stands. */
export function formatListing(result: ListResult, options: ListingOptions = { limit: DEFAULT_SHOWN, branch: null }): string {
  const lines: string[] = [];
  const { branch, head } = result.checkout;
  lines.push(branch === null ? 'Not on a branch (detached HEAD or no commit yet).' : `On ${shown(branch)}${head === null ? ' (no commit yet)' : ` at ${head.slice(0, 12)}`}.`);
  const stopped = result.interruptedRestore;
  if (stopped !== undefined) {
    lines.push(`A restore of ${stopped.snapshot.slice(0, 12)} was stopped partway: the working tree may be part that snapshot, part what it was. chant workspace wip restore ${stopped.checkpoint} gives back what was there before it; restoring ${stopped.snapshot.slice(0, 12)} again finishes it.`);
  }
  if (result.branches.length === 0) {
    if (options.branch === null) {
      lines.push('No snapshots yet: chant workspace wip save takes one.');
    } else {
      const others = options.otherBranches ?? [];
      lines.push(`No snapshots on a branch named ${shown(options.branch)}.`);
      if (others.length === 0) lines.push('No branch has snapshots yet: chant workspace wip save takes one.');
      else {
        const named = others.slice(0, BRANCHES_SHOWN).map(shown).join(', ');
        lines.push(`Branches with snapshots: ${named}${others.length > BRANCHES_SHOWN ? `, and ${others.length - BRANCHES_SHOWN} more` : ''}.`);
      }
    }
  }
  for (const entry of result.branches) {
    const count = entry.snapshots.length;
    const limit = options.limit ?? count;
    lines.push('', `${shown(entry.branch)}: ${plural(count, 'snapshot')} on ${shown(entry.ref)}`);
    if (entry.setBackFrom !== undefined) lines.push(`  Its newest snapshot, ${entry.setBackFrom.slice(0, 12)}, was left unreadable by a crash or a power loss: the chain goes on from the newest one whole.`);
    for (const snapshot of entry.snapshots.slice(0, limit)) {
      const when = snapshot.at.replace('T', ' ').replace(/\.\d+Z$/, 'Z');
      const extra = [snapshot.label === null ? null : shown(snapshot.label), snapshot.by === null ? null : `by ${shown(snapshot.by)}`].filter((part) => part !== null).join('  ');
      const other = snapshot.branch === entry.branch ? '' : `  (taken on ${shown(snapshot.branch)})`;
      const changed = snapshot.changes === undefined ? '' : `  ${plural(snapshot.changes.files, 'file')} +${snapshot.changes.added} -${snapshot.changes.removed}`;
      lines.push(`  ${snapshot.commit.slice(0, 12)}  ${when}  ${shown(snapshot.kind).padEnd(11)}  ${extra}${other}${changed}`.trimEnd());
    }
    if (count > limit) lines.push(`  … and ${count - limit} older (--limit <n> or --all shows them; --json lists them all)`);
    else if ((entry.older ?? 0) > 0) lines.push(`  … and ${entry.older} older (--before ${entry.snapshots[count - 1]?.commit} shows the next page)`);
  }
  lines.push('');
  const replication = result.replication;
  if (replication === null) {
    lines.push('Replication: no box declares replicate.');
  } else {
    const pending = replication.refs.filter((ref) => !ref.replicated);
    const where = `${shown(replication.policy.remote)}${replication.remoteConfigured ? '' : ' (no such git remote here)'}`;
    if (replication.replicated) {
      lines.push(`Replication: all ${plural(replication.refs.length, 'ref')} are on ${where}.`);
    } else {
      const classes = replication.policy.refs
        .map((name) => [name, pending.filter((ref) => ref.class === name).length] as const)
        .filter(([, count]) => count > 0)
        .map(([name, count]) => `${count} ${name}`);
      lines.push(`Replication: ${pending.length} of ${plural(replication.refs.length, 'ref')} not yet on ${where} (${classes.join(', ')}):`);
      for (const ref of pending.slice(0, REFS_SHOWN)) lines.push(`  ${shown(ref.ref)}  ${plural(ref.ahead, 'commit')} ahead`);
      if (pending.length > REFS_SHOWN) lines.push(`  … and ${pending.length - REFS_SHOWN} more (--json lists them all; chant workspace wip push sends them)`);
    }
  }
  return `${lines.join('\n')}\n`;
}
