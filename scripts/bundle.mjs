// Bundles the CLI: loading some hundred ES modules one by one costs more than a small save.
// The entry is tiny and loads the rest only when a command runs (`--version` never does).
import { chmod, rm } from 'node:fs/promises';
import { build } from 'esbuild';

await rm('dist/bin', { recursive: true, force: true });
await build({
  entryPoints: { chant: 'cli/bin.ts' },
  outdir: 'dist/bin',
  outExtension: { '.js': '.mjs' },
  bundle: true,
  splitting: true,
  chunkNames: 'chunk-[hash]',
  platform: 'node',
  // Prefer ES builds: jsonc-parser's default (UMD) build requires its own files at run time.
  mainFields: ['module', 'main'],
  target: 'node20',
  format: 'esm',
  legalComments: 'none',
  banner: {
    js: "import { createRequire as __chantCreateRequire } from 'node:module';\nconst require = __chantCreateRequire(import.meta.url);",
  },
  logLevel: 'warning',
});
await chmod('dist/bin/chant.mjs', 0o755);
