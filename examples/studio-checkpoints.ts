// Studio's checkpoints through the SDK: a snapshot after every agent turn, labelled with the
// turn; the list a checkpoint panel shows; a restore of the snapshot the user picks; and the
// undo of that restore, which is restoring the checkpoint the restore took first.
//
//   npx tsx examples/studio-checkpoints.ts [<checkout>]
//
// With no checkout it makes a scratch repository in a temporary folder and removes it after.
// Given one, it writes `studio-notes.md` there, as an agent's turns would.
import { spawnSync } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { isWipError, WipStore } from '../lib/index.js';
import type { Snapshot } from '../lib/index.js';

const NOTES = 'studio-notes.md';
const USER = 'github:alex';

/** A repository with one commit on main, made with plain git and an identity of its own. */
function scratchRepository(): string {
  const dir = mkdtempSync(join(tmpdir(), 'studio-checkpoints-'));
  const env = { ...process.env, GIT_AUTHOR_NAME: 'Studio', GIT_AUTHOR_EMAIL: 'studio@example.com', GIT_COMMITTER_NAME: 'Studio', GIT_COMMITTER_EMAIL: 'studio@example.com' };
  for (const args of [['init', '-q', '-b', 'main'], ['commit', '-q', '--allow-empty', '--no-verify', '--no-gpg-sign', '-m', 'initial']]) {
    const result = spawnSync('git', args, { cwd: dir, env, encoding: 'utf8' });
    if (result.status !== 0) throw new Error(`git ${args.join(' ')}: ${result.stderr}`);
  }
  return dir;
}

const describe = (snapshot: Snapshot) => `${snapshot.commit.slice(0, 12)} ${snapshot.label ?? '(no label)'}${snapshot.kind === 'pre-restore' ? ' [pre-restore]' : ''}`;

async function run(dir: string): Promise<void> {
  const store = new WipStore({ cwd: dir });

  // After each agent turn: one save, labelled with the turn. Saving twice with nothing changed
  // takes no new snapshot (created: false).
  const turns: Snapshot[] = [];
  for (const [turn, text] of [[1, 'First draft.\n'], [2, 'Second draft, which the user will not like.\n']] as const) {
    writeFileSync(join(dir, NOTES), text);
    const { snapshot, created } = await store.save({ label: `turn:${turn}`, by: USER });
    turns.push(snapshot);
    console.log(`turn ${turn}: saved ${describe(snapshot)} (created ${created})`);
  }

  // The checkpoint panel: the current branch's snapshots, newest first.
  const { checkout, branches } = await store.list({ branch: null });
  const mine = branches.find((entry) => entry.branch === checkout.branch);
  console.log(`${mine?.snapshots.length ?? 0} checkpoints on ${checkout.branch}: ${(mine?.snapshots ?? []).map(describe).join(', ')}`);

  // The user picks turn 1.
  const chosen = turns[0] as Snapshot;
  const restore = await store.restore({ snapshot: chosen.commit, by: USER });
  console.log(`restored ${describe(restore.snapshot)}: ${restore.paths.join(', ')} now says ${JSON.stringify(readFileSync(join(dir, NOTES), 'utf8'))}`);

  // Undo: restore the checkpoint the restore took of how things were.
  const undo = await store.restore({ snapshot: restore.checkpoint.snapshot.commit, by: USER });
  console.log(`undid it by restoring the checkpoint ${describe(undo.snapshot)}: ${NOTES} says ${JSON.stringify(readFileSync(join(dir, NOTES), 'utf8'))} again`);
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
