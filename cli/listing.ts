import type { ListResult } from '../lib/index.js';

const SHOWN = 10;

/** The read for people: the checkout, recent snapshots per branch, then where replication stands. */
export function formatListing(result: ListResult): string {
  const lines: string[] = [];
  const { branch, head } = result.checkout;
  lines.push(branch === null ? 'Not on a branch (detached HEAD or no commit yet).' : `On ${branch}${head === null ? ' (no commit yet)' : ` at ${head.slice(0, 12)}`}.`);
  if (result.branches.length === 0) lines.push('No snapshots yet: chant workspace wip save takes one.');
  for (const entry of result.branches) {
    const count = entry.snapshots.length;
    lines.push('', `${entry.branch}: ${count} snapshot${count === 1 ? '' : 's'} on ${entry.ref}`);
    for (const snapshot of entry.snapshots.slice(0, SHOWN)) {
      const when = snapshot.at.replace('T', ' ').replace(/\.\d+Z$/, 'Z');
      const extra = [snapshot.label, snapshot.by === null ? null : `by ${snapshot.by}`].filter((part) => part !== null).join('  ');
      lines.push(`  ${snapshot.commit.slice(0, 12)}  ${when}  ${snapshot.kind.padEnd(11)}  ${extra}`.trimEnd());
    }
    if (count > SHOWN) lines.push(`  … and ${count - SHOWN} older (--json lists them all)`);
  }
  lines.push('');
  const replication = result.replication;
  if (replication === null) {
    lines.push('Replication: no box declares replicate.');
  } else {
    const pending = replication.refs.filter((ref) => !ref.replicated);
    const where = `${replication.policy.remote}${replication.remoteConfigured ? '' : ' (no such git remote here)'}`;
    lines.push(replication.replicated
      ? `Replication: all ${replication.refs.length} refs are on ${where}.`
      : `Replication: ${pending.length} of ${replication.refs.length} refs not yet on ${where}:`);
    for (const ref of pending) lines.push(`  ${ref.ref}  ${ref.ahead} commit${ref.ahead === 1 ? '' : 's'} ahead`);
  }
  return `${lines.join('\n')}\n`;
}
