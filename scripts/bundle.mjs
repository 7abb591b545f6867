// Bundles the CLI: loading some hundred ES modules one by one costs more than a small save.
// dist/bin/chant.cjs is the tiny bin; dist/bin/main.cjs the CLI, loaded through a V8 code cache
// (dist/bin/main.cjs.v8cache) written here by one warm-up run.
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
import { chmod, mkdir, readdir, readFile, rm, writeFile } from 'node:fs/promises';
import { dirname, join, relative, sep } from 'node:path';
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

// Each package entry, `chant-wip` and `chant-wip/documents`, as a CommonJS file, and the types of
// its require condition: the same declarations, through a file TypeScript reads as CommonJS (a
// consumer compiling with --module node16 and skipLibCheck, or nodenext, reads them).
await mkdir('dist/cjs', { recursive: true });
for (const [source, name, declarations] of [['lib/index.ts', 'index', '../lib/index.js'], ['lib/documents/index.ts', 'documents', '../lib/documents/index.js']]) {
  await build({ ...common, entryPoints: [source], outfile: `dist/cjs/${name}.cjs`, external: COMMONJS_DEPENDENCIES.flatMap((dependency) => [dependency, `${dependency}/*`]) });
  await writeFile(`dist/cjs/${name}.d.cts`, `export * from '${declarations}';\n`);
}
await build({ ...common, entryPoints: ['cli/main.ts'], outfile: 'dist/bin/main.cjs' });
const { version } = JSON.parse(await readFile('package.json', 'utf8'));
await build({ ...common, entryPoints: ['cli/bin.cts'], outfile: 'dist/bin/chant.cjs', define: { CHANT_VERSION: JSON.stringify(version) } });
await chmod('dist/bin/chant.cjs', 0o755);

// The warm-up: a read, which compiles what a run compiles, in whatever folder the build runs.
const warm = spawnSync(process.execPath, ['dist/bin/chant.cjs', 'workspace', 'wip', '--json'], {
  env: { ...process.env, CHANT_WIP_WRITE_CODE_CACHE: '1' },
  encoding: 'utf8',
});
if (warm.error) throw warm.error;

/** The .js files under a folder, recursively. */
async function jsFiles(dir) {
  const found = [];
  for (const entry of await readdir(dir, { withFileTypes: true })) {
    const path = join(dir, entry.name);
    if (entry.isDirectory()) found.push(...(await jsFiles(path)));
    else if (entry.name.endsWith('.js')) found.push(path);
  }
  return found;
}
