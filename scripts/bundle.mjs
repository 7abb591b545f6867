// Bundles the CLI: loading some hundred ES modules one by one costs more than a small save.
// dist/bin/chant.cjs is the tiny bin; dist/bin/main.cjs the CLI, loaded through a V8 code cache
// (dist/bin/main.cjs.v8cache) written here by one warm-up run.
import { spawnSync } from 'node:child_process';
import { chmod, readFile, rm } from 'node:fs/promises';
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

await rm('dist/bin', { recursive: true, force: true });
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
