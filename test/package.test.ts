import { git, makeRepo, NO_OPENSSL, p12Key, readJson, ROOT, tempDir } from './helpers.js';
import assert from 'node:assert/strict';
import { builtinModules } from 'node:module';
import { spawnSync } from 'node:child_process';
import type { SpawnSyncOptions } from 'node:child_process';
import { createHash } from 'node:crypto';
import { copyFileSync, existsSync, mkdirSync, readFileSync, symlinkSync, writeFileSync } from 'node:fs';
import { userInfo } from 'node:os';
import { dirname, join, posix } from 'node:path';
import { before, describe, it } from 'node:test';
import { publishedSchemas } from '../lib/documents/schemas.js';
import { validateDocument } from '../lib/documents/validate.js';

const pkg = readJson('package.json') as { name: string; version: string; bin: { chant: string } };

// Under npm test, npm hands its cache (filled by `npm ci`) and config down in npm_config_*
// variables; run directly, npm finds them from the user's home, which the helpers moved for git.
const npmEnv: NodeJS.ProcessEnv = process.env.npm_config_cache === undefined ? { ...process.env, HOME: userInfo().homedir } : process.env;

function run(command: string, args: readonly string[], options: SpawnSyncOptions = {}): { code: number | null; stdout: string; stderr: string } {
  const result = spawnSync(command, args, { encoding: 'utf8', timeout: 120_000, ...options });
  return { code: result.status, stdout: String(result.stdout), stderr: String(result.stderr) };
}

function npm(cwd: string, args: readonly string[]): string {
  const result = run('npm', args, { cwd, env: npmEnv });
  assert.equal(result.code, 0, `npm ${args.join(' ')} failed:\n${result.stdout}${result.stderr}`);
  return result.stdout;
}

// Studio's timeline through the SDK alone, the same source in each kind of project: three turns
// saved, the list with change counts, the diff of a turn, a plan and the partial restore it
// previews (a plan gone stale refused), and the undo. It imports nothing that runs git.
const TIMELINE = [
  "import { isWipError, WipStore } from 'chant-wip';",
  "import type { DiffResult, RestorePlan, RestoreResult, Snapshot } from 'chant-wip';",
  "import { existsSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';",
  "import { join } from 'node:path';",
  '',
  'async function timeline(cwd: string): Promise<void> {',
  '  const store = new WipStore({ cwd, policy: null });',
  "  const read = (path: string): string => readFileSync(join(cwd, path), 'utf8');",
  "  mkdirSync(join(cwd, 'src'), { recursive: true });",
  '  const turns: Array<[string, Record<string, string>]> = [',
  "    ['turn:1', { 'src/app.ts': 'one\\n', 'notes.md': 'a\\n' }],",
  "    ['turn:2', { 'src/app.ts': 'one\\ntwo\\n', 'src/util.ts': 'u\\n' }],",
  "    ['turn:3', { 'src/app.ts': 'three\\n', 'notes.md': 'a\\nb\\nc\\n' }],",
  '  ];',
  '  for (const [label, files] of turns) {',
  '    for (const [path, text] of Object.entries(files)) writeFileSync(join(cwd, path), text);',
  "    await store.save({ label, by: 'github:studio' });",
  '  }',
  "  const { branches } = await store.list({ branch: 'main', changes: true, limit: 10 });",
  '  const rows: Snapshot[] = branches[0]?.snapshots ?? [];',
  '  const [turn3, turn2, turn1] = rows as [Snapshot, Snapshot, Snapshot];',
  '  const diff: DiffResult = await store.diff({ from: turn2.commit, to: turn3.commit });',
  "  const plan: RestorePlan = await store.plan({ snapshot: turn1.commit, paths: ['src'] });",
  "  const partial: RestoreResult = await store.restore({ snapshot: turn1.commit, paths: ['src'], expect: plan.fingerprint, by: 'github:studio' });",
  "  const afterPartial = { app: read('src/app.ts'), util: existsSync(join(cwd, 'src/util.ts')), notes: read('notes.md') };",
  '  const undo: RestoreResult = await store.restore({ snapshot: partial.checkpoint.snapshot.commit });',
  "  const afterUndo = { app: read('src/app.ts'), notes: read('notes.md') };",
  "  const stalePlan = await store.plan({ snapshot: turn1.commit, paths: ['notes.md'] });",
  "  writeFileSync(join(cwd, 'notes.md'), 'moved since the plan\\n');",
  '  let stale: string | null = null;',
  "  try { await store.restore({ snapshot: turn1.commit, paths: ['notes.md'], expect: stalePlan.fingerprint }); } catch (error) { stale = isWipError(error) ? error.code : String(error); }",
  '  console.log(JSON.stringify({',
  '    rows: rows.map((snapshot) => ({ label: snapshot.label, commit: snapshot.commit, changes: snapshot.changes ?? null })),',
  '    diff: diff.paths.map((path) => [path.change, path.path, path.added, path.removed]),',
  '    plan: { write: plan.write, remove: plan.remove, only: plan.only, refusal: plan.refusal },',
  '    partial: { written: partial.written, removed: partial.removed, only: partial.only ?? null, checkpoint: partial.checkpoint.snapshot.commit },',
  '    afterPartial, undo: { written: undo.written, removed: undo.removed }, afterUndo, stale,',
  "    notes: read('notes.md'),",
  '  }));',
  '}',
  '',
  'timeline(process.argv[2] as string).catch((error: unknown) => { console.error(error); process.exitCode = 1; });',
  '',
].join('\n');

/** What the timeline printed, checked against the repository through plain git. */
function checkTimeline(repo: string, head: string, stdout: string): void {
  const answer = JSON.parse(stdout) as {
    rows: Array<{ label: string; commit: string; changes: { against: string; files: number; added: number; removed: number } | null }>;
    diff: unknown[]; plan: { write: string[]; remove: string[]; only: string[] | null; refusal: unknown };
    partial: { written: string[]; removed: string[]; only: string[] | null; checkpoint: string };
    afterPartial: { app: string; util: boolean; notes: string }; undo: { written: string[]; removed: string[] }; afterUndo: { app: string; notes: string };
    stale: string | null; notes: string;
  };
  const chain = git(repo, ['rev-list', '--first-parent', 'refs/chant/wip/main']).trim().split('\n');
  // Newest first: the undo's and the partial restore's checkpoints, the three turns, then the
  // commit the first was taken on.
  assert.equal(chain.at(-1), head);
  const turns = chain.slice(-4, -1);
  assert.deepEqual(answer.rows.map((row) => row.commit), turns, 'the list is the chain git walks');
  assert.deepEqual(answer.rows.map((row) => row.label), ['turn:3', 'turn:2', 'turn:1']);
  for (const row of answer.rows) {
    const against = git(repo, ['rev-parse', `${row.commit}^1`]).trim();
    const numstat = git(repo, ['diff', '--numstat', against, row.commit]).trim().split('\n').map((line) => line.split('\t'));
    assert.deepEqual(row.changes, {
      against, files: numstat.length,
      added: numstat.reduce((sum, [added]) => sum + Number(added), 0), removed: numstat.reduce((sum, [, removed]) => sum + Number(removed), 0),
    }, `the change counts of ${row.label} are git diff --numstat's`);
  }
  assert.deepEqual(answer.diff, [['modified', 'notes.md', 2, 0], ['modified', 'src/app.ts', 1, 2]]);
  assert.deepEqual(answer.plan, { write: ['src/app.ts'], remove: ['src/util.ts'], only: ['src'], refusal: null });
  assert.deepEqual([answer.partial.written, answer.partial.removed, answer.partial.only], [['src/app.ts'], ['src/util.ts'], ['src']]);
  assert.deepEqual(answer.afterPartial, { app: 'one\n', util: false, notes: 'a\nb\nc\n' }, 'the folder came back as turn 1 had it, the rest stayed as turn 3 left it');
  assert.equal(git(repo, ['show', `${answer.partial.checkpoint}:src/util.ts`]), 'u\n', 'the checkpoint holds the whole tree');
  assert.deepEqual(answer.afterUndo, { app: 'three\n', notes: 'a\nb\nc\n' }, 'the undo put turn 3 back');
  assert.deepEqual(answer.undo, { written: ['src/app.ts', 'src/util.ts'], removed: [] });
  assert.equal(answer.stale, 'wip-plan-stale', 'a restore refuses a plan the tree moved away from');
  assert.equal(answer.notes, 'moved since the plan\n', 'and writes nothing');
  assert.equal(git(repo, ['rev-parse', 'HEAD']).trim(), head, 'HEAD never moved');
}

/** A scratch repository for a timeline, and its HEAD. */
function timelineRepo(): { repo: string; head: string } {
  const repo = makeRepo();
  return { repo, head: git(repo, ['rev-parse', 'HEAD']).trim() };
}

// One pack and one install, shared by the checks below.
let files: string[] = [];
let project = '';

describe('the package as its users meet it', { timeout: 300_000 }, () => {
  before(() => {
    const out = tempDir('chant-pack-');
    // The build already ran (npm test builds first); prepack would build again.
    const [packed] = JSON.parse(npm(ROOT, ['pack', '--ignore-scripts', '--json', '--pack-destination', out])) as Array<{ filename: string; files: Array<{ path: string }> }>;
    assert.ok(packed);
    files = packed.files.map((file) => file.path).sort();
    project = tempDir('chant-consumer-');
    writeFileSync(join(project, 'package.json'), `${JSON.stringify({ name: 'consumer', private: true, type: 'module' }, null, 2)}\n`);
    npm(project, ['install', '--prefer-offline', '--no-audit', '--no-fund', '--loglevel=error', join(out, packed.filename)]);
  });

  it('packs dist, the schemas, the docs, the API reports, README.md, CHANGELOG.md, LICENSE and package.json, and nothing of the sources or tests', () => {
    for (const path of ['package.json', 'README.md', 'CHANGELOG.md', 'LICENSE', 'docs/cli.md', 'docs/sdk.md', 'etc/chant-wip.api.md', 'dist/lib/index.js', 'dist/lib/index.d.ts', 'dist/cjs/index.cjs', 'dist/cjs/index.d.cts', pkg.bin.chant.replace(/^\.\//, ''), ...publishedSchemas().map((schema) => schema.path)]) {
      assert.ok(files.includes(path), `the package holds ${path}`);
    }
    const stray = files.filter((path) => !['package.json', 'README.md', 'CHANGELOG.md', 'LICENSE'].includes(path) && !/^(dist\/lib|dist\/cjs|dist\/bin|schemas|docs)\/|^etc\/[a-z-]+\.api\.md$/.test(path));
    assert.deepEqual(stray, [], 'only dist, schemas, docs and the API reports beside the four files');
    assert.deepEqual(files.filter((path) => path.endsWith('.v8cache')), [], 'no V8 code cache: it differs from build to build');
    assert.deepEqual(files.filter((path) => /(^|\/)test\//.test(path) || path.endsWith('.map') || (path.endsWith('.ts') && !path.endsWith('.d.ts'))), [], 'no tests, sources or source maps');
  });

  it('keeps every relative link of README.md and the docs working from the package', () => {
    const broken: string[] = [];
    for (const page of files.filter((path) => path.endsWith('.md'))) {
      const text = readFileSync(join(ROOT, page), 'utf8');
      for (const [, target = ''] of text.matchAll(/\]\(([^)#\s]+)(?:#[^)]*)?\)/g)) {
        if (/^[a-z]+:/i.test(target)) continue;
        const resolved = posix.normalize(posix.join(posix.dirname(page), target)).replace(/\/$/, '');
        if (!files.some((path) => path === resolved || path.startsWith(`${resolved}/`))) broken.push(`${page} -> ${target}`);
      }
    }
    assert.deepEqual(broken, [], 'links to files the package does not hold');
  });

  it('lists as dependencies only what the SDK loads at run time; clipanion is bundled into the bin, jsonc-parser carried in dist', () => {
    const declared = Object.keys((readJson('package.json') as { dependencies: Record<string, string> }).dependencies).sort();
    const loaded = new Set<string>();
    for (const path of files.filter((file) => /^dist\/(lib|cjs)\/.*\.c?js$/.test(file))) {
      for (const [, imported, required, dynamic] of readFileSync(join(ROOT, path), 'utf8').matchAll(/\bfrom '([^'.][^']*)'|\brequire\("([^".][^"]*)"\)|\bimport\('([^'.][^']*)'\)/g)) {
        const name = imported ?? required ?? dynamic ?? '';
        if (!name.startsWith('node:') && !builtinModules.includes(name)) loaded.add(name.startsWith('@') ? name.split('/').slice(0, 2).join('/') : name.split('/')[0] as string);
      }
    }
    assert.deepEqual(declared, [...loaded].sort());
    assert.equal(existsSync(join(project, 'node_modules', 'clipanion')), false, 'clipanion is not installed for SDK users');
  });

  it('packs the same bytes from two builds', () => {
    // A copy of the sources, built twice: the build in the checkout is the other tests' to use.
    const copy = tempDir('chant-repro-');
    const tracked = run('git', ['ls-files', '-z', '--cached', '--others', '--exclude-standard'], { cwd: ROOT }).stdout.split('\0').filter((path) => path.length > 0 && existsSync(join(ROOT, path)));
    for (const path of tracked) {
      mkdirSync(dirname(join(copy, path)), { recursive: true });
      copyFileSync(join(ROOT, path), join(copy, path));
    }
    symlinkSync(join(ROOT, 'node_modules'), join(copy, 'node_modules'));
    const digests: string[] = [];
    for (const build of [1, 2]) {
      npm(copy, ['run', 'build', '--silent']);
      const out = tempDir(`chant-pack-${build}-`);
      const [packed] = JSON.parse(npm(copy, ['pack', '--ignore-scripts', '--json', '--pack-destination', out])) as Array<{ filename: string }>;
      digests.push(createHash('sha256').update(readFileSync(join(out, (packed as { filename: string }).filename))).digest('hex'));
    }
    assert.equal(digests[0], digests[1], 'two builds, two tarballs, the same bytes');
  });

  it('imports WipStore, Replicator and Policy by the package name, validateDocument from chant-wip/documents, resolves a schema through the exports map, and saves', () => {
    const repo = makeRepo();
    writeFileSync(join(repo, 'draft.md'), 'from the package\n');
    writeFileSync(join(project, 'check.mjs'), [
      "import { createRequire } from 'node:module';",
      "import { readFileSync } from 'node:fs';",
      "import { fileURLToPath } from 'node:url';",
      "import { Policy, Replicator, WipStore, WIP_READ_ID, readDocument } from 'chant-wip';",
      "import { validateDocument } from 'chant-wip/documents';",
      "const id = 'chant-wip/schemas/workspace/wip/v1/wip.schema.json';",
      'const required = createRequire(import.meta.url).resolve(id);',
      'const imported = fileURLToPath(import.meta.resolve(id));',
      "const schema = JSON.parse(readFileSync(required, 'utf8'));",
      'const cwd = process.argv[2];',
      "const saved = await new WipStore({ cwd, policy: null }).save({ label: 'turn:1' });",
      "const policy = Policy.from({ remote: 'origin', on: [] }, { box: 'app' });",
      'const state = await new Replicator({ cwd, policy }).state();',
      'const listed = await new WipStore({ cwd, policy: null }).list();',
      'console.log(JSON.stringify({',
      '  kinds: [typeof WipStore, typeof Replicator, typeof Policy], required, imported, schemaId: schema.$id, readId: WIP_READ_ID,',
      '  commit: saved.snapshot.commit, policy: policy.toJSON(), remoteConfigured: state.remoteConfigured,',
      '  problems: validateDocument(readDocument(listed)),',
      '}));',
      '',
    ].join('\n'));
    const result = run(process.execPath, ['check.mjs', repo], { cwd: project });
    assert.equal(result.code, 0, result.stderr);
    const answer = JSON.parse(result.stdout);
    assert.deepEqual(answer.kinds, ['function', 'function', 'function']);
    const installed = join(project, 'node_modules', 'chant-wip', 'schemas', 'workspace', 'wip', 'v1', 'wip.schema.json');
    assert.equal(answer.required, installed, 'createRequire().resolve goes through the exports map to the installed file');
    assert.equal(answer.imported, installed, 'and so does import.meta.resolve');
    assert.equal(answer.schemaId, answer.readId);
    assert.deepEqual(answer.policy, { box: 'app', remote: 'origin', refs: ['work', 'kept', 'wip', 'ledger'], on: [], every: null });
    assert.equal(answer.remoteConfigured, false);
    assert.deepEqual(answer.problems, []);
    assert.equal(git(repo, ['rev-parse', 'refs/chant/wip/main']).trim(), answer.commit, 'the installed SDK saved the snapshot');
    assert.equal(git(repo, ['show', `${answer.commit}:draft.md`]), 'from the package\n');
  });

  /** A checkout with a bare remote and a file holding a token-shaped string (never issued), to push through the secret gate. */
  function secretRepo(): { repo: string; remote: string } {
    const remote = join(tempDir('chant-pack-remote-'), 'remote.git');
    mkdirSync(remote, { recursive: true });
    git(remote, ['init', '-q', '--bare', '-b', 'main']);
    const repo = makeRepo();
    git(repo, ['remote', 'add', 'origin', remote]);
    writeFileSync(join(repo, '.env'), `GITHUB_TOKEN=${['ghp_', 'wWPw5k4aXcaT4fNP0UcnZwJUVFk6LO0pINUx'].join('')}\n`);
    return { repo, remote };
  }

  /** The lines of a consumer's script that push `cwd` through the gate and print the held-back findings. */
  const GATED_PUSH = [
    'async function gated(sdk, cwd) {',
    "  await new sdk.WipStore({ cwd, policy: null }).save({ label: 'turn:secret' });",
    "  const policy = sdk.Policy.from({ remote: 'origin', refs: ['wip'], on: [] }, { box: 'app' });",
    '  const pushed = await new sdk.Replicator({ cwd, policy }).push();',
    '  return (pushed.replication.heldBack ?? []).flatMap((held) => held.findings.map((finding) => [finding.path, finding.rule]));',
    '}',
  ];
  const TOKEN_FINDING = [['.env', '@secretlint/secretlint-rule-github:GITHUB_TOKEN']];

  it('requires the package from a CommonJS project, on any Node 20, and saves', () => {
    const cjs = join(project, 'cjs');
    mkdirSync(cjs, { recursive: true });
    writeFileSync(join(cjs, 'package.json'), `${JSON.stringify({ name: 'extension', private: true, type: 'commonjs' }, null, 2)}\n`);
    writeFileSync(join(cjs, 'check.js'), [
      "const { WipStore, isWipError, WIP_ERROR_CODES } = require('chant-wip');",
      "const resolved = require.resolve('chant-wip');",
      ...GATED_PUSH,
      'async function main() {',
      '  const store = new WipStore({ cwd: process.argv[2], policy: null });',
      "  const saved = await store.save({ label: 'turn:cjs' });",
      "  let refused = null;",
      "  try { await store.restore({ snapshot: 'no-such-name' }); } catch (error) { refused = isWipError(error) ? error.code : String(error); }",
      "  const held = await gated(require('chant-wip'), process.argv[3]);",
      '  console.log(JSON.stringify({ resolved, commit: saved.snapshot.commit, refused, codes: WIP_ERROR_CODES.length, held }));',
      '}',
      'main().catch((error) => { console.error(error); process.exitCode = 1; });',
      '',
    ].join('\n'));
    const repo = makeRepo();
    writeFileSync(join(repo, 'draft.md'), 'from CommonJS\n');
    // No require(esm) here: the require condition must be CommonJS itself, as Node 20 before 20.19 needs.
    const secret = secretRepo();
    const result = run(process.execPath, ['--no-experimental-require-module', 'check.js', repo, secret.repo], { cwd: cjs });
    assert.equal(result.code, 0, result.stderr);
    assert.doesNotMatch(result.stderr, /ExperimentalWarning/);
    const answer = JSON.parse(result.stdout);
    assert.equal(answer.resolved, join(project, 'node_modules', 'chant-wip', 'dist', 'cjs', 'index.cjs'));
    // The CommonJS SDK keeps secretlint in a file beside it, required on the first scan.
    assert.ok(files.includes('dist/cjs/secret-scanner.cjs'));
    assert.doesNotMatch(readFileSync(join(project, 'node_modules', 'chant-wip', 'dist', 'cjs', 'index.cjs'), 'utf8'), /secretlint-rule-preset-recommend/);
    assert.deepEqual(answer.held, TOKEN_FINDING, 'the gate scanned from CommonJS and held the token back');
    assert.equal(git(secret.remote, ['for-each-ref', 'refs/chant/wip']).trim(), '', 'nothing reached the remote');
    assert.equal(answer.refused, 'wip-snapshot-unknown', 'a refusal is a WipError there too');
    assert.equal(git(repo, ['rev-parse', 'refs/chant/wip/main']).trim(), answer.commit);
    assert.equal(git(repo, ['show', `${answer.commit}:draft.md`]), 'from CommonJS\n');
  });

  it('type-checks a CommonJS TypeScript consumer (module node16 and nodenext) against the require condition\'s declarations', () => {
    const cjs = join(project, 'cjs-ts');
    mkdirSync(cjs, { recursive: true });
    writeFileSync(join(cjs, 'package.json'), `${JSON.stringify({ name: 'extension-ts', private: true, type: 'commonjs' }, null, 2)}\n`);
    writeFileSync(join(cjs, 'extension.ts'), [
      "import { WipStore } from 'chant-wip';",
      "import type { SaveResult } from 'chant-wip';",
      'export async function turn(cwd: string): Promise<string> {',
      "  const result: SaveResult = await new WipStore({ cwd }).save({ label: 'turn:1' });",
      '  return result.snapshot.commit;',
      '}',
      // A wrong type is still caught: the declarations were found, not taken as any.
      '// @ts-expect-error a commit is a string',
      'export const wrong: SaveResult["snapshot"]["commit"] = 1;',
      '',
    ].join('\n'));
    const tsc = join(ROOT, 'node_modules', 'typescript', 'bin', 'tsc');
    for (const module of ['node16', 'nodenext']) {
      const result = run(process.execPath, [tsc, '--ignoreConfig', '--noEmit', '--strict', '--target', 'es2022', '--module', module, '--moduleResolution', module,
        '--typeRoots', join(ROOT, 'node_modules', '@types'), '--types', 'node', '--skipLibCheck', 'extension.ts'], { cwd: cjs });
      assert.equal(result.code, 0, `--module ${module}: ${result.stdout}${result.stderr}`);
    }
  });

  it('loads from a default esbuild bundle (--platform=node --format=cjs) of an import and of a require, run away from node_modules, and saves', () => {
    const source = join(project, 'bundled');
    mkdirSync(source, { recursive: true });
    writeFileSync(join(source, 'extension.ts'), [
      "import { WipStore } from 'chant-wip';",
      "const required = require('chant-wip') as typeof import('chant-wip');",
      ...GATED_PUSH.map((line) => line.replace('async function gated(sdk, cwd)', 'async function gated(sdk: any, cwd: string): Promise<unknown>').replace('(held) =>', '(held: any) =>').replace('(finding) =>', '(finding: any) =>')),
      'export async function activate(cwd: string, secret: string): Promise<void> {',
      "  const saved = await new WipStore({ cwd, policy: null }).save({ label: 'turn:bundled' });",
      "  const again = await new required.WipStore({ cwd, policy: null }).save({ label: 'turn:bundled' });",
      '  const held = await gated(required, secret);',
      '  console.log(JSON.stringify({ commit: saved.snapshot.commit, created: again.created, held }));',
      '}',
      'activate(process.argv[2] as string, process.argv[3] as string).catch((error) => { console.error(error); process.exitCode = 1; });',
      '',
    ].join('\n'));
    const out = join(tempDir('chant-bundled-'), 'extension.cjs');
    // esbuild's defaults for Node, as VS Code's guide has them: only these three options.
    const build = `require(${JSON.stringify(join(ROOT, 'node_modules', 'esbuild'))}).buildSync({ entryPoints: ['extension.ts'], bundle: true, platform: 'node', format: 'cjs', outfile: ${JSON.stringify(out)}, logLevel: 'warning' })`;
    const bundled = run(process.execPath, ['-e', build], { cwd: source });
    assert.equal(bundled.code, 0, bundled.stdout + bundled.stderr);
    const repo = makeRepo();
    writeFileSync(join(repo, 'draft.md'), 'from a bundle\n');
    const secret = secretRepo();
    const result = run(process.execPath, [out, repo, secret.repo], { cwd: dirname(out) });
    assert.equal(result.code, 0, result.stderr);
    const answer = JSON.parse(result.stdout);
    assert.equal(answer.created, false, 'both copies read the same snapshot');
    assert.deepEqual(answer.held, TOKEN_FINDING, 'the bundle holds the scanner, and the gate held the token back');
    assert.equal(git(repo, ['show', `${answer.commit}:draft.md`]), 'from a bundle\n');
  });

  it('type-checks a TypeScript consumer against the installed declarations', () => {
    writeFileSync(join(project, 'check.ts'), [
      "import { WipStore, isWipError } from 'chant-wip';",
      "import type { SaveResult, WipErrorCode } from 'chant-wip';",
      "export async function turn(cwd: string): Promise<string> {",
      '  try {',
      "    const result: SaveResult = await new WipStore({ cwd }).save({ label: 'turn:1' });",
      '    return result.snapshot.commit;',
      '  } catch (error) {',
      "    const code: WipErrorCode | null = isWipError(error) ? error.code : null;",
      '    return String(code);',
      '  }',
      '}',
      '',
    ].join('\n'));
    const tsc = join(ROOT, 'node_modules', 'typescript', 'bin', 'tsc');
    const result = run(process.execPath, [tsc, '--ignoreConfig', '--noEmit', '--strict', '--target', 'es2022', '--module', 'nodenext', '--moduleResolution', 'nodenext',
      '--typeRoots', join(ROOT, 'node_modules', '@types'), '--types', 'node', '--skipLibCheck', 'check.ts'], { cwd: project });
    assert.equal(result.code, 0, result.stdout + result.stderr);
  });

  describe('a Studio-like timeline through the SDK alone, with no git call of its own', () => {
    const tsc = join(ROOT, 'node_modules', 'typescript', 'bin', 'tsc');
    const strict = ['--ignoreConfig', '--strict', '--noUncheckedIndexedAccess', '--exactOptionalPropertyTypes', '--target', 'es2022', '--typeRoots', join(ROOT, 'node_modules', '@types'), '--types', 'node', '--skipLibCheck'];

    /** A project of its own under the install, with the timeline's source. */
    function timelineProject(name: string, type: 'module' | 'commonjs'): string {
      const dir = join(project, name);
      mkdirSync(dir, { recursive: true });
      writeFileSync(join(dir, 'package.json'), `${JSON.stringify({ name, private: true, type }, null, 2)}\n`);
      writeFileSync(join(dir, 'timeline.ts'), TIMELINE);
      return dir;
    }

    it('the timeline imports nothing that runs a process', () => {
      assert.doesNotMatch(TIMELINE, /child_process|spawn|exec|execa|simple-git/);
    });

    it('in a strict ESM TypeScript project (nodenext): list with change counts, diff, plan, partial restore, undo', () => {
      const dir = timelineProject('timeline-esm', 'module');
      const compiled = run(process.execPath, [tsc, ...strict, '--module', 'nodenext', '--moduleResolution', 'nodenext', '--outDir', 'out', 'timeline.ts'], { cwd: dir });
      assert.equal(compiled.code, 0, compiled.stdout + compiled.stderr);
      assert.match(readFileSync(join(dir, 'out', 'timeline.js'), 'utf8'), /^import \{ isWipError, WipStore \} from 'chant-wip';$/m, 'compiled to an ES module');
      const { repo, head } = timelineRepo();
      const result = run(process.execPath, [join(dir, 'out', 'timeline.js'), repo], { cwd: dir });
      assert.equal(result.code, 0, result.stderr);
      checkTimeline(repo, head, result.stdout);
    });

    it('in a CommonJS TypeScript project, as a VS Code extension is, on any Node 20', () => {
      const dir = timelineProject('timeline-cjs', 'commonjs');
      const compiled = run(process.execPath, [tsc, ...strict, '--module', 'nodenext', '--moduleResolution', 'nodenext', '--outDir', 'out', 'timeline.ts'], { cwd: dir });
      assert.equal(compiled.code, 0, compiled.stdout + compiled.stderr);
      assert.match(readFileSync(join(dir, 'out', 'timeline.js'), 'utf8'), /require\("chant-wip"\)/, 'compiled to CommonJS');
      const { repo, head } = timelineRepo();
      const result = run(process.execPath, ['--no-experimental-require-module', join(dir, 'out', 'timeline.js'), repo], { cwd: dir });
      assert.equal(result.code, 0, result.stderr);
      checkTimeline(repo, head, result.stdout);
    });

    it('in a default esbuild bundle (--platform=node --format=cjs), run away from node_modules', () => {
      const dir = timelineProject('timeline-bundle', 'commonjs');
      const out = join(tempDir('chant-timeline-bundle-'), 'extension.cjs');
      const build = `require(${JSON.stringify(join(ROOT, 'node_modules', 'esbuild'))}).buildSync({ entryPoints: ['timeline.ts'], bundle: true, platform: 'node', format: 'cjs', outfile: ${JSON.stringify(out)}, logLevel: 'warning' })`;
      const bundled = run(process.execPath, ['-e', build], { cwd: dir });
      assert.equal(bundled.code, 0, bundled.stdout + bundled.stderr);
      const { repo, head } = timelineRepo();
      const result = run(process.execPath, [out, repo], { cwd: dirname(out) });
      assert.equal(result.code, 0, result.stderr);
      checkTimeline(repo, head, result.stdout);
    });
  });

  it('runs the chant bin from node_modules/.bin: --version, and a save in a scratch repository', () => {
    const chant = join(project, 'node_modules', '.bin', 'chant');
    assert.ok(existsSync(chant), 'npm linked the bin');
    const version = run(chant, ['--version'], { cwd: project });
    assert.equal(version.code, 0, version.stderr);
    assert.equal(version.stdout, `${pkg.version}\n`);

    const repo = makeRepo();
    writeFileSync(join(repo, 'notes.md'), 'turn 1\n');
    const save = run(chant, ['workspace', 'wip', 'save', '--label', 'turn:1', '--by', 'github:alex', '--json'], { cwd: repo });
    assert.equal(save.code, 0, save.stdout + save.stderr);
    const doc = JSON.parse(save.stdout);
    assert.deepEqual(validateDocument(doc), []);
    assert.equal(doc.created, true);
    assert.equal(doc.chant, pkg.version);
    assert.equal(git(repo, ['rev-parse', 'refs/chant/wip/main']).trim(), doc.snapshot.commit);
    assert.equal(git(repo, ['show', `${doc.snapshot.commit}:notes.md`]), 'turn 1\n');
  });

  it('runs the secret gate from the installed bin: the scanner, a file of its own beside the CLI, is in the package and holds a secret back', () => {
    assert.ok(files.includes('dist/bin/secret-scanner.cjs'), 'the package holds the scanner the gate loads on demand');
    // node-forge, which the preset imports only to open a `.p12` file, is a file of its own beside
    // the scanner: a push that scans reads 57 KB, not 345.
    const installed = join(project, 'node_modules', 'chant-wip', 'dist', 'bin');
    const lazy = files.filter((path) => /^dist\/bin\/secret-scanner-[\w-]+\.cjs$/.test(path));
    assert.equal(lazy.length, 1, `one file of what the scanner requires on demand: ${lazy.join(', ')}`);
    assert.doesNotMatch(readFileSync(join(installed, 'secret-scanner.cjs'), 'utf8'), /privateKeyFromPem/);
    assert.match(readFileSync(join(project, 'node_modules', 'chant-wip', lazy[0] as string), 'utf8'), /privateKeyFromPem/);
    const chant = join(project, 'node_modules', '.bin', 'chant');
    const remote = join(tempDir('chant-pack-remote-'), 'remote.git');
    mkdirSync(remote, { recursive: true });
    git(remote, ['init', '-q', '--bare', '-b', 'main']);
    const repo = makeRepo({ 'README.md': 'hello\n', 'chant.workspace.json': `${JSON.stringify({ members: [{ name: 'app', box: { replicate: { remote: 'origin', refs: ['wip'], on: [] } } }] })}\n` });
    git(repo, ['remote', 'add', 'origin', remote]);
    // Shaped like a real token so the rule matches; never issued.
    writeFileSync(join(repo, '.env'), `GITHUB_TOKEN=${['ghp_', 'wWPw5k4aXcaT4fNP0UcnZwJUVFk6LO0pINUx'].join('')}\n`);
    // A GCP service account's key, which the rule opens through node-forge, the file beside the
    // scanner (where openssl can make one: the token alone is held back otherwise).
    if (NO_OPENSSL === false) writeFileSync(join(repo, 'service-account.p12'), p12Key());
    assert.equal(run(chant, ['workspace', 'wip', 'save'], { cwd: repo }).code, 0);
    const push = run(chant, ['workspace', 'wip', 'push'], { cwd: repo });
    assert.equal(push.code, 0, push.stdout + push.stderr);
    const doc = JSON.parse(push.stdout);
    assert.deepEqual(validateDocument(doc), []);
    assert.deepEqual(doc.replication.heldBack?.[0]?.findings.map((finding: { path: string; rule: string }) => [finding.path, finding.rule]), [
      ['.env', '@secretlint/secretlint-rule-github:GITHUB_TOKEN'],
      ...NO_OPENSSL === false ? [['service-account.p12', '@secretlint/secretlint-rule-gcp:PrivateKeyP12']] : [],
    ]);
    assert.equal(git(remote, ['for-each-ref', 'refs/chant/wip']).trim(), '', 'nothing reached the remote');
  });
});
