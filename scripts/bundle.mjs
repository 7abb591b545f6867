// Bundles the CLI into one file: loading some hundred ES modules costs more than the save itself.
import { chmod } from 'node:fs/promises';
import { build } from 'esbuild';

await build({
  entryPoints: ['cli/bin.ts'],
  outfile: 'dist/chant.mjs',
  bundle: true,
  platform: 'node',
  target: 'node20',
  format: 'esm',
  minifyWhitespace: false,
  legalComments: 'none',
  banner: {
    js: "#!/usr/bin/env node\nimport { createRequire as __chantCreateRequire } from 'node:module';\nconst require = __chantCreateRequire(import.meta.url);",
  },
  logLevel: 'warning',
});
await chmod('dist/chant.mjs', 0o755);
