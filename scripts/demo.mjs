// npm run demo: the whole story on an embedded default, through the built `chant` bin. In a
// temporary folder: a bare remote, a box's checkout declaring a replicate policy, two agent turns
// saved, the list, a restore, a third turn, a push; then the box is lost and a fresh clone fetches,
// checks the branch out and restores. Each step in a line or two; `-- --json` adds every document.
// Cleaned up after. Needs only Node 20 and git: the fixture's own git calls bring their identity.
import { spawnSync } from 'node:child_process';
import { mkdirSync, mkdtempSync, readdirSync, readFileSync, realpathSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join, relative } from 'node:path';
import { fileURLToPath } from 'node:url';

const repo = join(dirname(fileURLToPath(import.meta.url)), '..');
// The bin `npm run build` made, wherever package.json says it is.
const bin = join(repo, JSON.parse(readFileSync(join(repo, 'package.json'), 'utf8')).bin.chant);
const verbose = process.argv.includes('--json');
const root = realpathSync(mkdtempSync(join(tmpdir(), 'chant-wip-demo-')));
const remote = join(root, 'remote.git');
const box = join(root, 'box');
const replacement = join(root, 'replacement');
const BRANCH = 'chant/work/W-001';

// A git the demo can rely on anywhere: no ambient repository, an identity for the fixture's
// commits (a fresh machine has none), and nothing from the user's config that signs or hooks.
const baseEnv = { ...process.env };
for (const key of Object.keys(baseEnv)) {
  if (/^GIT_(DIR|WORK_TREE|INDEX_FILE|OBJECT_DIRECTORY|COMMON_DIR|NAMESPACE)$/.test(key)) delete baseEnv[key];
}
const fixtureEnv = {
  ...baseEnv,
  GIT_AUTHOR_NAME: 'Demo', GIT_AUTHOR_EMAIL: 'demo@example.com',
  GIT_COMMITTER_NAME: 'Demo', GIT_COMMITTER_EMAIL: 'demo@example.com',
};

function git(cwd, ...args) {
  const result = spawnSync('git', ['-c', 'commit.gpgsign=false', '-c', 'core.hooksPath=/dev/null', ...args], { cwd, env: fixtureEnv, encoding: 'utf8' });
  if (result.status !== 0) throw new Error(`git ${args.join(' ')} failed: ${result.stderr.trim()}`);
  return result.stdout;
}

/** Runs `chant workspace wip ...` in `cwd` and returns its document (or, with `text`, its listing). */
function chant(cwd, args, { text = false } = {}) {
  const result = spawnSync(process.execPath, [bin, 'workspace', 'wip', ...args], { cwd, env: baseEnv, encoding: 'utf8' });
  if (result.error) throw result.error;
  if (text) {
    if (result.status !== 0) throw new Error(`chant workspace wip ${args.join(' ')} exited ${result.status}: ${result.stdout}${result.stderr}`);
    return result.stdout;
  }
  let doc;
  try {
    doc = JSON.parse(result.stdout);
  } catch {
    throw new Error(`chant workspace wip ${args.join(' ')} printed no document: ${result.stdout}${result.stderr}`);
  }
  // As chant printed it, each record on one line, which is what a host reads.
  if (verbose) process.stdout.write(result.stdout);
  if (result.status !== 0) throw new Error(`chant workspace wip ${args.join(' ')} refused: ${doc.error?.code}: ${doc.error?.message}`);
  return doc;
}

function write(dir, files) {
  for (const [path, content] of Object.entries(files)) {
    const full = join(dir, path);
    if (content === null) {
      rmSync(full, { force: true });
      continue;
    }
    mkdirSync(dirname(full), { recursive: true });
    writeFileSync(full, content);
  }
}

/** Every file of a working tree but `.git`, path to content, to compare two checkouts. */
function filesOf(dir, base = dir, out = {}) {
  for (const name of readdirSync(dir).sort()) {
    if (dir === base && name === '.git') continue;
    const full = join(dir, name);
    if (statSync(full).isDirectory()) filesOf(full, base, out);
    else out[relative(base, full)] = readFileSync(full, 'utf8');
  }
  return out;
}

const short = (oid) => oid.slice(0, 12);
const command = (line) => console.log(`\n$ ${line}`);
const say = (line) => console.log(`  ${line}`);

try {
  // The box: a checkout whose declaration replicates to origin; the host pushes every 10 minutes.
  git(root, 'init', '-q', '--bare', '-b', 'main', remote);
  git(root, 'init', '-q', '-b', 'main', box);
  const declaration = { members: [{ name: 'app', box: { replicate: { remote: 'origin', refs: ['work', 'kept', 'wip', 'ledger'], on: ['release'], every: '10m' } } }] };
  write(box, {
    'chant.workspace.json': `${JSON.stringify(declaration, null, 2)}\n`,
    '.gitignore': 'node_modules/\n*.log\n',
    'README.md': '# App\n',
    'src/app.ts': 'export const greeting = "hello";\n',
  });
  git(box, 'add', '-A');
  git(box, 'commit', '-q', '-m', 'initial');
  git(box, 'remote', 'add', 'origin', remote);
  git(box, 'push', '-q', 'origin', 'main');
  git(box, 'checkout', '-q', '-b', BRANCH);
  write(box, { 'src/app.ts': 'export const greeting = "hello";\nexport const target = "world";\n' });
  git(box, 'commit', '-q', '-a', '-m', 'W-001: name the target');
  console.log(`In ${root}:`);
  say(`box/         a checkout on ${BRANCH}; chant.workspace.json declares replicate: { remote: origin, on: [release], every: 10m }`);
  say('remote.git/  a bare repository, the box\'s origin');

  // Turn 1: the agent edits a tracked file and writes an untracked one.
  write(box, { 'src/app.ts': 'export const greeting = "hello, world";\n', 'notes/plan.md': '1. greet the world\n', 'debug.log': 'ignored, never kept\n' });
  command('chant workspace wip save --label turn:1 --by github:demo --json   # after the agent\'s first turn');
  const turn1 = chant(box, ['save', '--label', 'turn:1', '--by', 'github:demo', '--json']);
  say(`snapshot ${short(turn1.snapshot.commit)} on ${turn1.ref} (created ${turn1.created}); the index, HEAD and branch did not move`);

  // Turn 2 goes sideways: the plan is deleted and the code is worse.
  write(box, { 'src/app.ts': 'export const greeting = 42;\n', 'notes/plan.md': null });
  command('chant workspace wip save --label turn:2 --by github:demo --json   # after the second');
  const turn2 = chant(box, ['save', '--label', 'turn:2', '--by', 'github:demo', '--json']);
  say(`snapshot ${short(turn2.snapshot.commit)}, whose first parent is ${short(turn1.snapshot.commit)}`);

  command('chant workspace wip');
  if (verbose) chant(box, ['--json']);
  for (const line of chant(box, [], { text: true }).trimEnd().split('\n')) console.log(line === '' ? '' : `  ${line}`);

  command(`chant workspace wip restore ${short(turn1.snapshot.commit)} --by github:demo --json   # back to turn 1`);
  const restored = chant(box, ['restore', turn1.snapshot.commit, '--by', 'github:demo', '--json']);
  const checkpoint = restored.checkpoint.created
    ? `a new pre-restore checkpoint ${short(restored.checkpoint.snapshot.commit)} keeps turn 2`
    : `turn 2's snapshot ${short(restored.checkpoint.snapshot.commit)} already held the working tree, so it is the checkpoint`;
  say(`wrote or removed ${restored.paths.join(', ')}; ${checkpoint}: restoring it undoes this`);
  say(`git status --short: ${git(box, 'status', '--short').trim().split('\n').join(', ')} (everything restored reads as uncommitted)`);

  write(box, { 'src/app.ts': 'export const greeting = "hello, world!";\n', 'notes/plan.md': '1. greet the world\n2. with feeling\n' });
  command('chant workspace wip save --label turn:3 --by github:demo --json   # the next turn, from turn 1');
  const turn3 = chant(box, ['save', '--label', 'turn:3', '--by', 'github:demo', '--json']);
  say(`snapshot ${short(turn3.snapshot.commit)}`);

  command('chant workspace wip push --json   # what the host runs every 10m');
  const push = chant(box, ['push', '--json']);
  say(`pushed ${push.replication.pushed.map((entry) => entry.ref).join(', ')}; rejected ${push.replication.rejected.length}; never forced`);
  say(`recorded under refs/chant/replica/origin/, so the read knows without fetching: ${chant(box, [], { text: true }).trimEnd().split('\n').at(-1)}`);

  // The box is lost. Its replacement starts from a clone of the remote on its default branch.
  const kept = filesOf(box);
  rmSync(box, { recursive: true, force: true });
  git(root, 'clone', '-q', remote, replacement);
  console.log('\nThe box is gone. On its replacement, a fresh clone of remote.git on main:');

  command('chant workspace wip fetch --json');
  const fetch = chant(replacement, ['fetch', '--json']);
  say(fetch.refs.map((entry) => `${entry.ref}: ${entry.result}`).join('; ') + (fetch.failed === null ? '' : `; failed: ${fetch.failed}`));

  command(`git checkout ${BRANCH}`);
  git(replacement, 'checkout', '-q', BRANCH);
  say(`on ${BRANCH} at ${short(git(replacement, 'rev-parse', 'HEAD').trim())}, the branch fetch created`);

  command('chant workspace wip restore --json');
  const back = chant(replacement, ['restore', '--json']);
  say(`restored ${short(back.snapshot.commit)} (${back.snapshot.label}): ${back.paths.join(', ')}`);
  const now = filesOf(replacement);
  const same = sameButIgnored(kept, now);
  say(same ? `the replacement holds what the box held (${Object.keys(now).length} files); only the ignored debug.log was never kept` : 'the replacement does NOT hold what the box held');
  if (!same) process.exitCode = 1;
  console.log(`\nDone; ${root} is removed.${verbose ? '' : ' npm run demo -- --json prints every document in full.'}`);
} catch (error) {
  console.error(`\ndemo failed: ${error instanceof Error ? error.message : String(error)}`);
  process.exitCode = 1;
} finally {
  rmSync(root, { recursive: true, force: true });
}

/** Whether `after` holds every file of `before` but the ignored ones, byte for byte. */
function sameButIgnored(before, after) {
  const expected = Object.fromEntries(Object.entries(before).filter(([path]) => !path.endsWith('.log')));
  return JSON.stringify(expected) === JSON.stringify(after);
}
