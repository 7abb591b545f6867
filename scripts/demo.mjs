// npm run demo: the main job on an embedded default. A scratch repository in a temporary
// folder; save, edit, save, list, restore; each step's document shown briefly. Cleaned up after.
import { spawnSync } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';

const bin = join(dirname(fileURLToPath(import.meta.url)), '..', 'dist', 'bin', 'chant.cjs');
const dir = mkdtempSync(join(tmpdir(), 'chant-wip-demo-'));
const env = { ...process.env, GIT_AUTHOR_NAME: 'Demo', GIT_AUTHOR_EMAIL: 'demo@example.com', GIT_COMMITTER_NAME: 'Demo', GIT_COMMITTER_EMAIL: 'demo@example.com' };
const verbose = process.argv.includes('--json');

function git(...args) {
  const result = spawnSync('git', args, { cwd: dir, env, encoding: 'utf8' });
  if (result.status !== 0) throw new Error(`git ${args.join(' ')}: ${result.stderr}`);
  return result.stdout;
}

function chant(...args) {
  const result = spawnSync(process.execPath, [bin, 'workspace', 'wip', ...args], { cwd: dir, env, encoding: 'utf8' });
  const doc = JSON.parse(result.stdout);
  if (result.status !== 0) throw new Error(`chant workspace wip ${args.join(' ')}: ${result.stdout}`);
  if (verbose) console.log(JSON.stringify(doc, null, 2));
  return doc;
}

const short = (oid) => oid.slice(0, 12);
const step = (title, line) => console.log(`\n${title}\n  ${line}`);

try {
  git('init', '-q', '-b', 'main');
  writeFileSync(join(dir, 'notes.md'), '# Notes\n');
  writeFileSync(join(dir, '.gitignore'), 'node_modules/\n');
  git('add', '-A');
  git('commit', '-q', '-m', 'initial');
  console.log(`A scratch repository in ${dir}, on main.`);

  writeFileSync(join(dir, 'notes.md'), '# Notes\n\nTurn 1: the plan.\n');
  writeFileSync(join(dir, 'draft.txt'), 'an untracked draft\n');
  const first = chant('save', '--label', 'turn:1', '--by', 'github:demo', '--json');
  step('$ chant workspace wip save --label turn:1 --by github:demo', `created ${first.created}: snapshot ${short(first.snapshot.commit)} on ${first.ref} (kind ${first.snapshot.kind}, label ${first.snapshot.label})`);

  writeFileSync(join(dir, 'notes.md'), '# Notes\n\nTurn 2: the plan went sideways.\n');
  rmSync(join(dir, 'draft.txt'));
  const second = chant('save', '--label', 'turn:2', '--json');
  step('$ chant workspace wip save --label turn:2', `created ${second.created}: snapshot ${short(second.snapshot.commit)}, first parent ${short(first.snapshot.commit)}`);

  const again = chant('save', '--label', 'turn:2', '--json');
  step('$ chant workspace wip save --label turn:2   (nothing changed)', `created ${again.created}: the tip ${short(again.snapshot.commit)} already holds this tree`);

  const list = chant('--json');
  const snapshots = list.branches[0].snapshots;
  step('$ chant workspace wip --json', `${list.branches.length} branch, ${snapshots.length} snapshots, newest first: ${snapshots.map((s) => `${short(s.commit)} ${s.label}`).join(', ')}`);

  const restore = chant('restore', first.snapshot.commit, '--json');
  step(`$ chant workspace wip restore ${short(first.snapshot.commit)}`, `paths ${JSON.stringify(restore.paths)}; checkpoint ${short(restore.checkpoint.snapshot.commit)} (created ${restore.checkpoint.created}); headMoved ${restore.headMoved}`);
  console.log(`  notes.md now says: ${JSON.stringify(readFileSync(join(dir, 'notes.md'), 'utf8'))}`);
  console.log(`  git status --short: ${JSON.stringify(git('status', '--short'))}`);
  console.log(`  git log on main still shows only: ${git('log', '--format=%s', 'main').trim()}`);

  const undo = chant('restore', restore.checkpoint.snapshot.commit, '--json');
  step(`$ chant workspace wip restore ${short(restore.checkpoint.snapshot.commit)}   (undo)`, `paths ${JSON.stringify(undo.paths)}: back to turn 2`);
  console.log('\nDone. Run with --json to see every document in full.');
} finally {
  rmSync(dir, { recursive: true, force: true });
}
