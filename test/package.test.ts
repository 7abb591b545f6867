import { git, makeRepo, readJson, ROOT, tempDir } from './helpers.js';
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

  it('requires the package from a CommonJS project, on any Node 20, and saves', () => {
    const cjs = join(project, 'cjs');
    mkdirSync(cjs, { recursive: true });
    writeFileSync(join(cjs, 'package.json'), `${JSON.stringify({ name: 'extension', private: true, type: 'commonjs' }, null, 2)}\n`);
    writeFileSync(join(cjs, 'check.js'), [
      "const { WipStore, isWipError, WIP_ERROR_CODES } = require('chant-wip');",
      "const resolved = require.resolve('chant-wip');",
      'async function main() {',
      '  const store = new WipStore({ cwd: process.argv[2], policy: null });',
      "  const saved = await store.save({ label: 'turn:cjs' });",
      "  let refused = null;",
      "  try { await store.restore({ snapshot: 'no-such-name' }); } catch (error) { refused = isWipError(error) ? error.code : String(error); }",
      '  console.log(JSON.stringify({ resolved, commit: saved.snapshot.commit, refused, codes: WIP_ERROR_CODES.length }));',
      '}',
      'main().catch((error) => { console.error(error); process.exitCode = 1; });',
      '',
    ].join('\n'));
    const repo = makeRepo();
    writeFileSync(join(repo, 'draft.md'), 'from CommonJS\n');
    // No require(esm) here: the require condition must be CommonJS itself, as Node 20 before 20.19 needs.
    const result = run(process.execPath, ['--no-experimental-require-module', 'check.js', repo], { cwd: cjs });
    assert.equal(result.code, 0, result.stderr);
    assert.doesNotMatch(result.stderr, /ExperimentalWarning/);
    const answer = JSON.parse(result.stdout);
    assert.equal(answer.resolved, join(project, 'node_modules', 'chant-wip', 'dist', 'cjs', 'index.cjs'));
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
      'export async function activate(cwd: string): Promise<void> {',
      "  const saved = await new WipStore({ cwd, policy: null }).save({ label: 'turn:bundled' });",
      "  const again = await new required.WipStore({ cwd, policy: null }).save({ label: 'turn:bundled' });",
      '  console.log(JSON.stringify({ commit: saved.snapshot.commit, created: again.created }));',
      '}',
      'activate(process.argv[2] as string).catch((error) => { console.error(error); process.exitCode = 1; });',
      '',
    ].join('\n'));
    const out = join(tempDir('chant-bundled-'), 'extension.cjs');
    // esbuild's defaults for Node, as VS Code's guide has them: only these three options.
    const build = `require(${JSON.stringify(join(ROOT, 'node_modules', 'esbuild'))}).buildSync({ entryPoints: ['extension.ts'], bundle: true, platform: 'node', format: 'cjs', outfile: ${JSON.stringify(out)}, logLevel: 'warning' })`;
    const bundled = run(process.execPath, ['-e', build], { cwd: source });
    assert.equal(bundled.code, 0, bundled.stdout + bundled.stderr);
    const repo = makeRepo();
    writeFileSync(join(repo, 'draft.md'), 'from a bundle\n');
    const result = run(process.execPath, [out, repo], { cwd: dirname(out) });
    assert.equal(result.code, 0, result.stderr);
    const answer = JSON.parse(result.stdout);
    assert.equal(answer.created, false, 'both copies read the same snapshot');
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
});
