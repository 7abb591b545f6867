// Studio's timeline through the SDK alone, no git call of its own: one row per agent turn with
// what the turn changed, the diff of a turn, the preview of a restore, the restore of the turn
// the user picks and its undo, one file back from an older turn and its undo, while a panel
// listening to the store refreshes itself.
//
//   npx tsx examples/timeline.ts [<checkout>]
//
// With no checkout it makes a scratch repository in a temporary folder and removes it after.
// Given one, it writes `timeline/` files there, as an agent's turns would.
import { spawnSync } from 'node:child_process';
import { mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { isWipError, WipStore } from '../lib/index.js';
import type { Snapshot } from '../lib/index.js';

const USER = 'github:alex';

/** A repository with one commit on main, made with plain git and an identity of its own. */
function scratchRepository(): string {
  const dir = mkdtempSync(join(tmpdir(), 'studio-timeline-'));
  const env = { ...process.env, GIT_AUTHOR_NAME: 'Studio', GIT_AUTHOR_EMAIL: 'studio@example.com', GIT_COMMITTER_NAME: 'Studio', GIT_COMMITTER_EMAIL: 'studio@example.com' };
  for (const args of [['init', '-q', '-b', 'main'], ['commit', '-q', '--allow-empty', '--no-verify', '--no-gpg-sign', '-m', 'initial']]) {
    const result = spawnSync('git', args, { cwd: dir, env, encoding: 'utf8' });
    if (result.status !== 0) throw new Error(`git ${args.join(' ')}: ${result.stderr}`);
  }
  return dir;
}

/** One row of the timeline: the turn, and what it changed against the one before. */
const row = (snapshot: Snapshot) => {
  const changes = snapshot.changes;
  const counts = changes === undefined ? '' : ` ${changes.files} file${changes.files === 1 ? '' : 's'} +${changes.added} -${changes.removed}`;
  return `${snapshot.commit.slice(0, 12)} ${snapshot.label ?? '(no label)'}${snapshot.kind === 'pre-restore' ? ' [pre-restore]' : ''}${counts}`;
};

async function run(dir: string): Promise<void> {
  const store = new WipStore({ cwd: dir, policy: null });
  const events: string[] = [];
  store.on('snapshot', ({ snapshot, created }) => events.push(`snapshot ${snapshot.label ?? ''}${created ? '' : ' (unchanged)'}`));
  store.on('restore', ({ snapshot }) => events.push(`restore ${snapshot.label ?? snapshot.commit.slice(0, 12)}`));

  // Three agent turns, one save each.
  mkdirSync(join(dir, 'timeline'), { recursive: true });
  const turns: Array<[string, Record<string, string>]> = [
    ['turn:1', { 'timeline/plan.md': 'step 1\n' }],
    ['turn:2', { 'timeline/plan.md': 'step 1\nstep 2\n', 'timeline/code.ts': 'export const answer = 41;\n' }],
    ['turn:3', { 'timeline/code.ts': 'export const answer = 42;\nexport const extra = true;\n' }],
  ];
  for (const [label, files] of turns) {
    for (const [path, text] of Object.entries(files)) writeFileSync(join(dir, path), text);
    await store.save({ label, by: USER });
  }

  // The timeline: the branch's snapshots, newest first, each with what it changed.
  const { checkout, branches } = await store.list({ changes: true, limit: 10 });
  const mine = branches.find((entry) => entry.branch === checkout.branch)?.snapshots ?? [];
  console.log(`timeline of ${checkout.branch}:`);
  for (const snapshot of mine) console.log(`  ${row(snapshot)}`);

  // What turn 3 changed, path by path.
  const [turn3, turn2, turn1] = mine as [Snapshot, Snapshot, Snapshot];
  const diff = await store.diff({ from: turn2.commit, to: turn3.commit });
  for (const change of diff.paths) console.log(`turn:3 ${change.change} ${change.path} +${change.added ?? '?'} -${change.removed ?? '?'}`);

  // The user picks turn 2: the preview says what the restore would write and remove, and its
  // fingerprint makes the restore refuse if the tree moves before the user confirms.
  const preview = await store.plan({ snapshot: turn2.commit });
  console.log(`restoring turn:2 writes ${preview.write.join(', ')}; removes ${preview.remove.join(', ') || 'nothing'}; ${preview.refusal === null ? 'nothing in the way' : preview.refusal.code}`);
  const restored = await store.restore({ snapshot: turn2.commit, by: USER, expect: preview.fingerprint });
  console.log(`restored turn:2: wrote ${(restored.written ?? []).join(', ')}; timeline/code.ts says ${JSON.stringify(readFileSync(join(dir, 'timeline/code.ts'), 'utf8'))}`);

  // Undo: restore the checkpoint the restore took first.
  await store.restore({ snapshot: restored.checkpoint.snapshot.commit, by: USER });
  console.log(`undone: timeline/code.ts says ${JSON.stringify(readFileSync(join(dir, 'timeline/code.ts'), 'utf8'))} again`);

  // One file back from turn 1, the rest left as turn 3 has it; its checkpoint undoes it too.
  const one = await store.restore({ snapshot: turn1.commit, paths: ['timeline/plan.md'], by: USER });
  console.log(`restored timeline/plan.md from turn:1: ${JSON.stringify(readFileSync(join(dir, 'timeline/plan.md'), 'utf8'))}; timeline/code.ts still ${JSON.stringify(readFileSync(join(dir, 'timeline/code.ts'), 'utf8'))}`);
  await store.restore({ snapshot: one.checkpoint.snapshot.commit, by: USER });
  console.log(`undone: timeline/plan.md says ${JSON.stringify(readFileSync(join(dir, 'timeline/plan.md'), 'utf8'))} again`);
  console.log(`events: ${events.join(', ')}`);
}

const given = process.argv[2];
const dir = given ?? scratchRepository();
try {
  await run(dir);
} catch (error) {
  // Every refusal carries a stable code a UI can branch on.
  if (!isWipError(error)) throw error;
  console.error(`refused: ${error.code}: ${error.message}`);
  process.exitCode = 1;
} finally {
  if (given === undefined) rmSync(dir, { recursive: true, force: true });
}
