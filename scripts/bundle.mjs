// Bundles the CLI: loading some hundred ES modules one by one costs more than a small save.
// dist/bin/chant.cjs is the tiny bin; dist/bin/main.cjs the CLI, loaded through a V8 code cache
// (dist/bin/main.cjs.<verb>.v8cache) written here by warm-up runs (a read, a save and a restore).
// secretlint, more than half of the CLI's code, is a file of its own, dist/bin/secret-scanner.cjs,
// which the secret gate requires (through the bin, with its own code cache) only when a push has
// files to scan: every other run reads, and every push with nothing new loads, the CLI without it.
//
// And makes the SDK load from every kind of project (docs/sdk.md, "Loading the package"):
// - dist/lib (tsc's ES modules) imports jsonc-parser's ES build, bundled into
//   dist/lib/vendor/jsonc-parser.js, rather than the package's `main`, a UMD build whose
//   `require('./impl/...')` a consumer's default esbuild bundle (`--platform=node`, which
//   prefers `main`) cannot see, and which then fails on load;
// - dist/cjs/index.cjs is the SDK as one CommonJS file, for `require('chant-wip')` on every
//   Node 20 (require of an ES module only came with 20.19), with dist/cjs/index.d.cts naming the
//   same types.
import { spawnSync } from 'node:child_process';
import nodeModule from 'node:module';
import vm from 'node:vm';
import { chmod, mkdir, mkdtemp, readdir, readFile, rm, utimes, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { basename, dirname, join, relative, sep } from 'node:path';
import { build } from 'esbuild';

const common = {
  bundle: true,
  platform: 'node',
  target: 'node20',
  format: 'cjs',
  // Prefer ES builds: jsonc-parser's default (UMD) build requires its own files at run time.
  mainFields: ['module', 'main'],
  legalComments: 'none',
  logLevel: 'warning',
};

// The packages a consumer's node_modules holds, left out of the CommonJS build; TypeBox and
// jsonc-parser are bundled into it, since they have no CommonJS build Node 20 can load.
const COMMONJS_DEPENDENCIES = ['ajv', 'ajv-formats'];

await rm('dist/bin', { recursive: true, force: true });
await rm('dist/cjs', { recursive: true, force: true });

await build({ ...common, format: 'esm', entryPoints: ['node_modules/jsonc-parser/lib/esm/main.js'], outfile: 'dist/lib/vendor/jsonc-parser.js',
  banner: { js: '// jsonc-parser (MIT License, Copyright (c) Microsoft Corporation), its ES build bundled into one module.' } });
for (const file of await jsFiles('dist/lib')) {
  const text = await readFile(file, 'utf8');
  if (!/from ['"]jsonc-parser['"]/.test(text)) continue;
  let vendored = relative(dirname(file), 'dist/lib/vendor/jsonc-parser.js').split(sep).join('/');
  if (!vendored.startsWith('.')) vendored = `./${vendored}`;
  await writeFile(file, text.replace(/from ['"]jsonc-parser['"]/g, `from '${vendored}'`));
}

// The secret gate's `import('./secret-scanner.js')` becomes a require of the file beside the
// bundle (a CommonJS require, which the bin answers, not an import(), which vm.Script cannot).
const scannerChunk = {
  name: 'secret-scanner-chunk',
  setup(plugin) {
    plugin.onResolve({ filter: /^\.\/secret-scanner\.js$/ }, (args) => (args.kind === 'dynamic-import' ? { path: 'secret-scanner', namespace: 'chunk' } : undefined));
    plugin.onResolve({ filter: /^\.\/secret-scanner\.cjs$/ }, () => ({ path: './secret-scanner.cjs', external: true }));
    plugin.onLoad({ filter: /.*/, namespace: 'chunk' }, () => ({ contents: "module.exports = require('./secret-scanner.cjs');", loader: 'js' }));
  },
};
// Whitespace and syntax minified, names kept (a fault's stack still names its functions): 571 KB
// to read and decode on every run instead of 789.
await build({ ...common, minifyWhitespace: true, minifySyntax: true, entryPoints: ['cli/main.ts'], outfile: 'dist/bin/main.cjs', plugins: [scannerChunk] });
// Each package entry, `chant-wip` and `chant-wip/documents`, as a CommonJS file, and the types of
// its require condition: the same declarations, through a file TypeScript reads as CommonJS (a
// consumer compiling with --module node16 and skipLibCheck, or nodenext, reads them). The SDK's
// copy requires the scanner from a file beside it too, so an extension that never pushes never
// parses secretlint (1 MB of the file before), and a consumer's bundle still finds it.
await mkdir('dist/cjs', { recursive: true });
for (const [source, name, declarations] of [['lib/index.ts', 'index', '../lib/index.js'], ['lib/documents/index.ts', 'documents', '../lib/documents/index.js']]) {
  await build({ ...common, entryPoints: [source], outfile: `dist/cjs/${name}.cjs`, plugins: [scannerChunk], external: COMMONJS_DEPENDENCIES.flatMap((dependency) => [dependency, `${dependency}/*`]) });
  await writeFile(`dist/cjs/${name}.d.cts`, `export * from '${declarations}';\n`);
}
// The scanner's own file, minified (half the bytes to read on a push that scans). Two of
// secretlint's dependencies only watch it run and are left out of this copy: its profiler (a
// performance mark per rule per file, each kept for the process's life, and an observer
// re-reading them) and its `debug` logging (which loads tty and net to pick colours). Without
// them, loading the scanner and a first scan of 10 small files took about 35 ms of CPU instead of
// 60 (measured through the bin's code cache, Node 20).
const scannerQuiet = {
  name: 'secret-scanner-quiet',
  setup(plugin) {
    plugin.onResolve({ filter: /^(@secretlint\/profiler|debug)$/ }, (args) => ({ path: args.path, namespace: 'quiet' }));
    plugin.onLoad({ filter: /.*/, namespace: 'quiet' }, (args) => ({
      contents: args.path === 'debug' ? 'export default function debug() { return () => {}; }' : 'export const secretLintProfiler = { mark() {} };',
      loader: 'js',
    }));
  },
};
// What secretlint's packages import only when a rule needs it (the recommended preset's
// node-forge, which secretlint-rule-gcp imports to open a `.p12` file: 288 KB of the scanner's
// 345) goes in a file of its own beside the scanner, required where that import was: a push
// that scans reads and compiles 57 KB (reading the 345 took about 5 ms of a gated push idle, and
// 15 to 20 under load).
const lazyChunks = new Map();
const scannerLazy = {
  name: 'secret-scanner-lazy',
  setup(plugin) {
    plugin.onResolve({ filter: /^\.\.?\// }, (args) => {
      if (args.kind !== 'dynamic-import' || !/[\\/]node_modules[\\/]@secretlint[\\/]/.test(args.importer)) return undefined;
      const source = join(args.resolveDir, args.path);
      const name = `secret-scanner-${basename(source).replace(/\.[cm]?js$/, '').replace(/[^\w-]/g, '-')}.cjs`;
      // Two sources of one file name would share a chunk, and one import would load the other's code.
      if (lazyChunks.has(name) && lazyChunks.get(name) !== source) throw new Error(`two lazy scanner chunks are both named ${name}: ${lazyChunks.get(name)} and ${source}`);
      lazyChunks.set(name, source);
      return { path: name, namespace: 'lazy' };
    });
    plugin.onResolve({ filter: /^\.\/secret-scanner-[\w-]+\.cjs$/ }, (args) => (args.kind === 'require-call' ? { path: args.path, external: true } : undefined));
    plugin.onLoad({ filter: /.*/, namespace: 'lazy' }, (args) => ({ contents: `module.exports = require('./${args.path}');`, loader: 'js' }));
  },
};
// The bin runs the scanner through vm.Script, which answers no import(): an `import('node:fs')` of
// a rule (the GCP rule's, opening a `.p12`) threw there, inside the rule's own try, and the rule
// found nothing. With dynamic imports unsupported, esbuild makes each a require.
const noImport = { supported: { 'dynamic-import': false } };
for (const folder of ['dist/bin', 'dist/cjs']) {
  await build({ ...common, ...noImport, minify: true, plugins: [scannerQuiet, scannerLazy], entryPoints: ['lib/replication/secret-scanner.ts'], outfile: `${folder}/secret-scanner.cjs` });
  for (const [name, source] of lazyChunks) await build({ ...common, ...noImport, minify: true, plugins: [scannerQuiet], entryPoints: [source], outfile: `${folder}/${name}` });
}
for (const file of await jsFiles('dist/bin', '.cjs')) {
  if (/\bimport\s*\(/.test(await readFile(file, 'utf8'))) throw new Error(`${file} holds an import(), which the bin's vm.Script cannot answer`);
}
for (const file of ['dist/bin/main.cjs', 'dist/cjs/index.cjs']) {
  const text = await readFile(file, 'utf8');
  if (/@secretlint\/|secretlint-rule-/.test(text.replace(/\/\/.*$/gm, ''))) throw new Error(`${file} holds secretlint: the secret gate must import it only from ./secret-scanner.js`);
}
const { version } = JSON.parse(await readFile('package.json', 'utf8'));
await build({ ...common, entryPoints: ['cli/bin.cts'], outfile: 'dist/bin/chant.cjs', define: { CHANT_VERSION: JSON.stringify(version) } });
await chmod('dist/bin/chant.cjs', 0o755);

// The warm-up: a read in whatever folder the build runs, then saves, reads and restores in a small
// repository of its own, each run adding what it compiled to the cache of its verb (the bin keeps
// one a verb). The saves take the paths an agent host's saves take (files modified, staged,
// deleted and new; the caches of a save before it; its document printed and its text), or an
// agent host's save would compile those from source on every run: about 5 to 9 ms of a CLI save
// at 1,000 files, side by side.
const bin = join(process.cwd(), 'dist/bin/chant.cjs');
const warmEnv = { ...process.env, CHANT_WIP_WRITE_CODE_CACHE: '1' };
const warm = (args, cwd) => {
  const run = spawnSync(process.execPath, [bin, ...args], { cwd, env: warmEnv, encoding: 'utf8' });
  if (run.error) throw run.error;
  if (run.status !== 0 && cwd !== process.cwd()) throw new Error(`the warm-up's chant ${args.join(' ')} failed: ${run.stdout}${run.stderr}`);
  return run;
};
warm(['workspace', 'wip', '--json'], process.cwd());
{
  const repo = await mkdtemp(join(tmpdir(), 'chant-wip-warm-'));
  // A cache only saves time: where the warm-up cannot run here (a git configured otherwise), the
  // build goes on, and the bin writes each verb's cache after its first run.
  try {
    const git = (...args) => {
      const run = spawnSync('git', args, { cwd: repo, encoding: 'utf8' });
      if (run.status !== 0) throw new Error(`git ${args.join(' ')}: ${run.stderr}`);
    };
    const write = (path, text) => writeFile(join(repo, path), text);
    git('init', '-q', '-b', 'main', '.');
    git('config', 'user.name', 'chant build');
    git('config', 'user.email', 'build@chant.invalid');
    await mkdir(join(repo, 'src/deep'), { recursive: true });
    const names = ['a', 'b', 'c', 'd', 'deep/e', 'deep/f'];
    // Written a minute before the index, as a checkout's files are (else each is racily clean).
    const before = new Date(Date.now() - 60_000);
    for (const name of names) {
      await write(`src/${name}.txt`, `${name}\n`);
      await utimes(join(repo, `src/${name}.txt`), before, before);
    }
    git('add', '-A');
    git('-c', 'commit.gpgsign=false', 'commit', '-q', '--no-verify', '-m', 'warm-up');
    await write('src/a.txt', 'a, changed\n');
    await write('new.txt', 'new\n');
    const first = JSON.parse(warm(['workspace', 'wip', 'save', '--label', 'warm-up 1', '--json'], repo).stdout).snapshot.commit;
    await write('src/b.txt', 'b, changed\n');
    git('add', 'src/b.txt');
    await write('src/deep/e.txt', 'e, changed\n');
    await rm(join(repo, 'src/c.txt'));
    warm(['workspace', 'wip', 'save', '--label', 'warm-up 2', '--json'], repo);
    await write('src/deep/f.txt', 'f, changed\n');
    warm(['workspace', 'wip', 'save', '--label', 'warm-up 3'], repo);
    warm(['workspace', 'wip', '--json'], repo);
    warm(['workspace', 'wip'], repo);
    await write('src/d.txt', 'd, changed\n');
    warm(['workspace', 'wip', 'restore', first, '--json'], repo);
    warm(['workspace', 'wip', 'restore', first], repo);
  } catch (error) {
    console.warn(`chant-wip build: the code caches' warm-up did not run (${error instanceof Error ? error.message : String(error)}); the bin writes them on first use`);
  } finally {
    await rm(repo, { recursive: true, force: true });
  }
}

// The scanner's cache, compiled as the bin compiles it and holding what one scan runs.
{
  const file = join(process.cwd(), 'dist/bin/secret-scanner.cjs');
  const script = new vm.Script(nodeModule.wrap(await readFile(file, 'utf8')), { filename: file });
  const loaded = { exports: {} };
  script.runInThisContext()(loaded.exports, nodeModule.createRequire(file), loaded, file, dirname(file));
  await loaded.exports.lint('config.js', 'export const region = "eu-west-1";\n');
  await writeFile(`${file}.v8cache`, script.createCachedData());
}

/** The files under a folder whose names end in `ext` (.js unless told), recursively. */
async function jsFiles(dir, ext = '.js') {
  const found = [];
  for (const entry of await readdir(dir, { withFileTypes: true })) {
    const path = join(dir, entry.name);
    if (entry.isDirectory()) found.push(...(await jsFiles(path, ext)));
    else if (entry.name.endsWith(ext)) found.push(path);
  }
  return found;
}
